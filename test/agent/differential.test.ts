/**
 * Differential tests: the same scripted scenarios through pi-agent-core 0.73.1's Agent and
 * ours, with the same stream function, comparing normalised event sequences. Where
 * agentchart deliberately differs, the difference itself is asserted.
 */
import { Agent as PiAgent } from "@mariozechner/pi-agent-core";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel, type ScriptedReply, text, thinking, toolCall } from "../../src/providers/scripted.js";
import type { AgentToolResult, AgentToolUpdateCallback } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import type { Model } from "../../src/types/model.js";
import type { StreamFn } from "../../src/types/stream.js";
import {
	anySchema,
	assistant,
	deferred,
	describeEvent,
	ok,
	sleep,
	textOf,
	throwingStreamFn,
	type ToolExecute,
	user,
	whenAborted,
} from "./helpers.js";

type Impl = "pi" | "agentchart";

/** What both Agents share, as the scenarios use it. */
interface CommonAgent {
	prompt(input: string): Promise<void>;
	continue(): Promise<void>;
	steer(message: AgentMessage): void;
	followUp(message: AgentMessage): void;
	abort(): void;
	reset(): void;
	hasQueuedMessages(): boolean;
	subscribe(listener: (event: { type: string }, signal: AbortSignal) => Promise<void> | void): () => void;
	readonly state: { messages: AgentMessage[]; tools: unknown[] };
	beforeToolCall?: unknown | undefined;
	afterToolCall?: unknown | undefined;
	toolExecution: string;
	followUpMode: string;
	steeringMode: string;
}

interface PlainTool {
	name: string;
	label: string;
	description: string;
	parameters: object;
	execute: ToolExecute;
	executionMode?: "sequential" | "parallel" | undefined;
}

function tool(name: string, execute: ToolExecute, parameters: object = anySchema): PlainTool {
	return { name, label: name, description: name, parameters, execute };
}

const echo = () => tool("echo", async (_id, params) => ok(`echo:${String(params["value"])}`));

interface Scenario {
	replies: ScriptedReply[];
	messages?: AgentMessage[] | undefined;
	/** Extra constructor options (both Agents take them; pi ignores ours). */
	options?: Record<string, unknown> | undefined;
	streamFn?: StreamFn | undefined;
	configure?: ((agent: CommonAgent) => void) | undefined;
	drive?: ((agent: CommonAgent) => Promise<void>) | undefined;
}

interface Outcome {
	lines: string[];
	llmCalls: number;
	roles: string[];
	agent: CommonAgent;
	error?: string | undefined;
}

function createAgent(impl: Impl, model: Model, streamFn: StreamFn, scenario: Scenario): CommonAgent {
	const options = { initialState: { model, messages: scenario.messages ?? [] }, streamFn, ...scenario.options };
	if (impl === "pi") return new PiAgent(options as unknown as ConstructorParameters<typeof PiAgent>[0]) as unknown as CommonAgent;
	return new Agent(options as unknown as ConstructorParameters<typeof Agent>[0]) as unknown as CommonAgent;
}

async function run(impl: Impl, scenario: Scenario): Promise<Outcome> {
	const scripted = createScriptedModel(scenario.replies);
	const agent = createAgent(impl, scripted.model, scenario.streamFn ?? scripted.streamFn, scenario);
	const lines: string[] = [];
	agent.subscribe((event) => {
		lines.push(describeEvent(event, true));
	});
	scenario.configure?.(agent);
	let error: string | undefined;
	try {
		await (scenario.drive ? scenario.drive(agent) : agent.prompt("go"));
	} catch (e) {
		error = e instanceof Error ? e.message : String(e);
	}
	const roles = agent.state.messages.map((m) => (m.role === "assistant" ? `assistant(${m.stopReason})` : m.role));
	return { lines, llmCalls: scripted.calls.length, roles, agent, error };
}

async function both(scenario: () => Scenario): Promise<{ pi: Outcome; ours: Outcome }> {
	const pi = await run("pi", scenario());
	const ours = await run("agentchart", scenario());
	return { pi, ours };
}

async function expectSame(scenario: () => Scenario): Promise<{ pi: Outcome; ours: Outcome }> {
	const result = await both(scenario);
	expect(result.ours.error).toBe(result.pi.error);
	expect(result.ours.lines).toEqual(result.pi.lines);
	expect(result.ours.llmCalls).toBe(result.pi.llmCalls);
	expect(result.ours.roles).toEqual(result.pi.roles);
	return result;
}

const twoCalls = (name: string, a: Record<string, unknown> = {}, b: Record<string, unknown> = {}): ScriptedReply => ({
	content: [toolCall(name, a, "t1"), toolCall(name, b, "t2")],
});

describe("pi 0.73.1 and agentchart emit the same events", () => {
	it("T1: a streamed thinking + text reply", async () => {
		const { ours } = await expectSame(() => ({ replies: [{ content: [thinking("let me think"), text("Hello there, world!")] }] }));
		expect(ours.lines).toContain("message_update:thinking_delta");
	});

	it("T2: parallel calls with a slow first tool that reports progress", async () => {
		await expectSame(() => ({
			replies: [twoCalls("work", { value: "slow" }, { value: "fast" }), { content: "done" }],
			configure: (agent) => {
				const fastEnded = deferred();
				agent.subscribe((event) => {
					if (event.type === "tool_execution_end" && (event as { toolCallId?: string }).toolCallId === "t2") fastEnded.resolve();
				});
				agent.state.tools = [
					tool("work", async (_id, params, _signal, onUpdate) => {
						if (params["value"] === "slow") {
							onUpdate?.(ok("halfway"));
							await fastEnded.promise;
						}
						return ok(`did:${String(params["value"])}`);
					}),
				];
			},
		}));
	});

	it("T2b: parallel calls where the first reports progress and returns at once: pi ends it after its update reached the listeners, so the second ends first", async () => {
		for (const slowListener of [false, true]) {
			const { ours } = await expectSame(() => ({
				replies: [twoCalls("work", { value: "progress" }, { value: "plain" }), { content: "done" }],
				configure: (agent) => {
					if (slowListener) agent.subscribe(async (event) => void (event.type === "tool_execution_update" && (await sleep(10))));
					agent.state.tools = [
						tool("work", async (_id, params, _signal, onUpdate) => {
							if (params["value"] === "progress") onUpdate?.(ok("halfway"));
							else if (slowListener) await sleep(2);
							return ok(`did:${String(params["value"])}`);
						}),
					];
				},
			}));
			expect(ours.lines.filter((line) => line.startsWith("tool_execution_end"))).toEqual(["tool_execution_end(t2:did:plain)", "tool_execution_end(t1:did:progress)"]);
		}
	});

	it("T3: sequential mode", async () => {
		await expectSame(() => ({
			replies: [twoCalls("echo", { value: "a" }, { value: "b" }), { content: "done" }],
			configure: (agent) => {
				agent.state.tools = [echo()];
				agent.toolExecution = "sequential";
			},
		}));
	});

	it("T4: a tool that does not exist", async () => {
		await expectSame(() => ({
			replies: [{ content: [toolCall("echo", { value: "a" }, "t1"), toolCall("nope", {}, "t2")] }, { content: "done" }],
			configure: (agent) => {
				agent.state.tools = [echo()];
			},
		}));
	});

	it("T5: argument validation with conversion and an invalid call", async () => {
		await expectSame(() => ({
			replies: [twoCalls("num", { n: "not-a-number" }, { n: "42" }), { content: "done" }],
			configure: (agent) => {
				agent.state.tools = [
					tool("num", async (_id, params) => ok(`n=${String(params["n"])} (${typeof params["n"]})`), {
						type: "object",
						properties: { n: { type: "number" } },
						required: ["n"],
					}),
				];
			},
		}));
	});

	it("T6: blocked calls", async () => {
		await expectSame(() => ({
			replies: [twoCalls("echo"), { content: "done" }],
			configure: (agent) => {
				agent.state.tools = [echo()];
				agent.beforeToolCall = async ({ toolCall }: { toolCall: { id: string } }) =>
					toolCall.id === "t1" ? { block: true, reason: "nope" } : { block: true };
			},
		}));
	});

	it("T7: a throwing tool", async () => {
		await expectSame(() => ({
			replies: [{ content: [toolCall("boom", {}, "t1")] }, { content: "done" }],
			configure: (agent) => {
				agent.state.tools = [
					tool("boom", async () => {
						throw new Error("boom");
					}),
				];
			},
		}));
	});

	it("T8: afterToolCall overrides, and a throwing afterToolCall", async () => {
		const { ours } = await expectSame(() => ({
			replies: [twoCalls("echo", { value: "a" }, { value: "b" }), { content: "done" }],
			configure: (agent) => {
				agent.state.tools = [echo()];
				agent.afterToolCall = async ({ toolCall }: { toolCall: { id: string } }) => {
					if (toolCall.id === "t2") throw new Error("after failed");
					return { content: [{ type: "text", text: "patched" }], isError: true };
				};
			},
		}));
		expect(ours.lines).toContain("tool_execution_end(t1,err:patched)");
		expect(ours.lines).toContain("tool_execution_end(t2,err:after failed)");
	});

	it("N7/N8: prepareArguments and args mutated in beforeToolCall", async () => {
		await expectSame(() => ({
			replies: [{ content: [toolCall("edit", { oldText: "a", newText: "b" }, "t1")] }, { content: "done" }],
			configure: (agent) => {
				const edit = tool("edit", async (_id, params) => ok(JSON.stringify(params)), {
					type: "object",
					properties: { edits: { type: "array" }, extra: { type: "string" } },
					required: ["edits"],
				});
				agent.state.tools = [
					{
						...edit,
						prepareArguments: (args: { oldText: string; newText: string }) => ({ edits: [{ oldText: args.oldText, newText: args.newText }] }),
					},
				];
				agent.beforeToolCall = async ({ args }: { args: Record<string, unknown> }) => {
					args["extra"] = 123;
					return undefined;
				};
			},
		}));
	});

	it("T11: a steer sent while tools run", async () => {
		await expectSame(() => ({
			replies: [{ content: [toolCall("steerer", {}, "t1"), toolCall("echo", { value: "b" }, "t2")] }, { content: "done" }],
			configure: (agent) => {
				agent.state.tools = [
					tool("steerer", async () => {
						agent.steer(user("STEER"));
						return ok("steered");
					}),
					echo(),
				];
			},
		}));
	});

	function queueOnFirstAssistant(agent: CommonAgent, queue: (agent: CommonAgent) => void) {
		let done = false;
		agent.subscribe((event) => {
			const message = (event as { message?: { role?: string } }).message;
			if (event.type === "message_start" && message?.role === "assistant" && !done) {
				done = true;
				queue(agent);
			}
		});
	}

	it("T11b: a steer queued while a text reply streams", async () => {
		await expectSame(() => ({
			replies: [{ content: "first" }, { content: "second" }],
			configure: (agent) => queueOnFirstAssistant(agent, (a) => a.steer(user("STEER"))),
		}));
	});

	it("T12: two follow-ups, one at a time", async () => {
		await expectSame(() => ({
			replies: [{ content: "a" }, { content: "b" }, { content: "c" }],
			configure: (agent) =>
				queueOnFirstAssistant(agent, (a) => {
					a.followUp(user("F1"));
					a.followUp(user("F2"));
				}),
		}));
	});

	it("T12b: two follow-ups in mode all, and steers in mode all", async () => {
		await expectSame(() => ({
			replies: [{ content: "a" }, { content: "b" }, { content: "c" }],
			configure: (agent) => {
				agent.followUpMode = "all";
				agent.steeringMode = "all";
				queueOnFirstAssistant(agent, (a) => {
					a.followUp(user("F1"));
					a.followUp(user("F2"));
					a.steer(user("S1"));
					a.steer(user("S2"));
				});
			},
		}));
	});

	it("T13a: continue() from a user tail", async () => {
		await expectSame(() => ({ replies: [{ content: "reply" }], messages: [user("earlier")], drive: (agent) => agent.continue() }));
	});

	it("T13b/T13d: continue() refusals", async () => {
		const tail = await expectSame(() => ({ replies: [], messages: [user("q"), assistant("a")], drive: (agent) => agent.continue() }));
		expect(tail.ours.error).toBe("Cannot continue from message role: assistant");
		const empty = await expectSame(() => ({ replies: [], drive: (agent) => agent.continue() }));
		expect(empty.ours.error).toBe("No messages to continue from");
	});

	it("T13c: continue() from an assistant tail with two queued steers, and with a follow-up", async () => {
		await expectSame(() => ({
			replies: [{ content: "r1" }, { content: "r2" }, { content: "r3" }],
			messages: [user("q"), assistant("a")],
			drive: async (agent) => {
				agent.steer(user("S1"));
				agent.steer(user("S2"));
				agent.followUp(user("F1"));
				await agent.continue();
			},
		}));
	});

	it("T14: a provider error (with a tool call in the failed message)", async () => {
		await expectSame(() => ({
			replies: [{ content: [toolCall("echo", {}, "t1")], stopReason: "error", errorMessage: "429 rate limited" }],
			configure: (agent) => {
				agent.state.tools = [echo()];
			},
		}));
	});

	it("T16/N19: terminate when every result says so, continue when only some do", async () => {
		const terminating = (flag: boolean): AgentToolResult<unknown> => ({ ...ok("r"), terminate: flag });
		const all = await expectSame(() => ({
			replies: [twoCalls("t"), { content: "never" }],
			configure: (agent) => {
				agent.state.tools = [tool("t", async () => terminating(true))];
			},
		}));
		expect(all.ours.llmCalls).toBe(1);
		const some = await expectSame(() => ({
			replies: [twoCalls("t"), { content: "done" }],
			configure: (agent) => {
				agent.state.tools = [tool("t", async (id) => terminating(id === "t1"))];
			},
		}));
		expect(some.ours.llmCalls).toBe(2);
	});

	it("N11: a tool with executionMode sequential", async () => {
		await expectSame(() => ({
			replies: [twoCalls("slow"), { content: "done" }],
			configure: (agent) => {
				agent.state.tools = [{ ...tool("slow", async (id) => ok(id)), executionMode: "sequential" }];
			},
		}));
	});

	it("T9: abort while a reply streams", async () => {
		await expectSame(() => ({
			replies: [{ content: "this is a long reply", delayMs: 25 }],
			configure: (agent) => {
				agent.subscribe((event) => {
					const sub = (event as { assistantMessageEvent?: { type?: string } }).assistantMessageEvent?.type;
					if (event.type === "message_update" && sub === "text_delta") agent.abort();
				});
			},
		}));
	});

	it("listeners of tool_execution_start settle before the call's preflight", async () => {
		const trace = async (impl: Impl) => {
			const log: string[] = [];
			await run(impl, {
				replies: [twoCalls("work"), { content: "done" }],
				configure: (agent) => {
					agent.state.tools = [
						tool("work", async (id) => {
							log.push(`exec:${id}`);
							return ok(id);
						}),
					];
					agent.beforeToolCall = async ({ toolCall }: { toolCall: { id: string } }) => {
						log.push(`before:${toolCall.id}`);
						return undefined;
					};
					agent.subscribe(async (event) => {
						if (event.type !== "tool_execution_start") return;
						await sleep(20);
						log.push(`settled:${(event as { toolCallId?: string }).toolCallId}`);
					});
				},
			});
			return log;
		};
		expect(await trace("agentchart")).toEqual(await trace("pi"));
	});

	describe("two calls of one reply with the same id (each runs and gets its own result)", () => {
		const sameId = (a: string, b: string): ScriptedReply => ({ content: [toolCall("work", { value: a }, "dup"), toolCall("work", { value: b }, "dup")] });
		// The slow call reports progress and waits for the fast one to end: a run that conflates
		// the two ends one execution for both, or gives both results the first one's text.
		const racing = (agent: CommonAgent) => {
			let fastEnded = () => {};
			const fastEnd = new Promise<void>((resolve) => (fastEnded = resolve));
			agent.subscribe((event) => {
				if (event.type === "tool_execution_end" && textOf((event as { result?: unknown }).result) === "did:fast") fastEnded();
			});
			agent.state.tools = [
				tool("work", async (_id, params, _signal, onUpdate) => {
					if (params["value"] === "slow") {
						onUpdate?.(ok("halfway"));
						await Promise.race([fastEnd, sleep(60)]);
					}
					return ok(`did:${String(params["value"])}`);
				}),
			];
		};

		it.each(["parallel", "sequential"])("%s", async (mode) => {
			const { ours } = await expectSame(() => ({
				replies: [sameId("slow", "fast"), { content: "done" }],
				configure: (agent) => {
					racing(agent);
					agent.toolExecution = mode;
				},
			}));
			expect(ours.lines.filter((line) => line.startsWith("tool_execution_end"))).toHaveLength(2);
			const results = ours.agent.state.messages.filter((m) => m.role === "toolResult").map(textOf);
			expect(results).toEqual(["did:slow", "did:fast"]);
		});

		it("parallel, asking beforeToolCall and afterToolCall about each", async () => {
			const { ours } = await expectSame(() => ({
				replies: [sameId("slow", "fast"), { content: "done" }],
				configure: (agent) => {
					racing(agent);
					agent.beforeToolCall = async () => undefined;
					agent.afterToolCall = async ({ result }: { result: AgentToolResult<unknown> }) => ({ content: [{ type: "text", text: `after ${textOf(result)}` }] });
				},
			}));
			const results = ours.agent.state.messages.filter((m) => m.role === "toolResult").map(textOf);
			expect(results).toEqual(["after did:slow", "after did:fast"]);
		});

		it("one blocked by beforeToolCall, the other runs", async () => {
			const { ours } = await expectSame(() => ({
				replies: [sameId("blocked", "fast"), { content: "done" }],
				configure: (agent) => {
					racing(agent);
					agent.beforeToolCall = async ({ args }: { args: { value?: string } }) => (args.value === "blocked" ? { block: true, reason: "no" } : undefined);
				},
			}));
			const results = ours.agent.state.messages.filter((m) => m.role === "toolResult").map(textOf);
			expect(results).toEqual(["no", "did:fast"]);
		});
	});
});

// Listeners are a live set in pi: one added during an event's delivery receives that event, one
// removed before its turn does not, one removed and added again is a new entry and receives it
// again. agentchart delivers to a lone listener without iterating the set; these hold both paths
// (one listener, several) to pi's order.
describe("listeners subscribed and unsubscribed during delivery, as in pi", () => {
	type Listener = (event: { type: string }, signal: AbortSignal) => Promise<void> | void;
	type Script = (agent: CommonAgent, log: string[]) => void;
	const label = (event: { type: string }) =>
		event.type === "message_update" ? `update:${(event as unknown as { assistantMessageEvent: { type: string } }).assistantMessageEvent.type}` : event.type;

	async function logOf(impl: Impl, script: Script): Promise<string[]> {
		const scripted = createScriptedModel([{ content: [toolCall("echo", { value: 1 }, "t1")] }, { content: "done" }]);
		const agent = createAgent(impl, scripted.model, scripted.streamFn, { replies: [] });
		agent.state.tools = [echo()];
		const log: string[] = [];
		script(agent, log);
		await agent.prompt("go");
		return log;
	}

	const recorder = (name: string, log: string[], then?: (event: { type: string }) => Promise<void> | void): Listener => (event) => {
		log.push(`${name}:${label(event)}`);
		return then?.(event);
	};
	const once = (test: (event: { type: string }) => boolean, act: () => void) => {
		let done = false;
		return (event: { type: string }) => {
			if (done || !test(event)) return;
			done = true;
			act();
		};
	};
	const firstDelta = (event: { type: string }) => event.type === "message_update";

	const linesOf = (log: string[], who: string) => log.filter((line) => line.startsWith(`${who}:`)).map((line) => line.slice(who.length + 1));
	const scripts: Record<string, { script: Script; check: (log: string[]) => void }> = {
		"the only listener subscribes another": {
			script: (agent, log) => {
				agent.subscribe(recorder("a", log, once(firstDelta, () => agent.subscribe(recorder("b", log)))));
			},
			check: (log) => expect(linesOf(log, "b")[0]).toBe(linesOf(log, "a").find((line) => line.startsWith("update:"))),
		},
		"the only listener subscribes another, then awaits": {
			script: (agent, log) => {
				agent.subscribe(
					recorder("a", log, async (event) => {
						if (event.type === "turn_start") agent.subscribe(recorder("b", log));
						await sleep(0);
					}),
				);
			},
			check: (log) => expect(linesOf(log, "b")[0]).toBe("turn_start"),
		},
		"the only listener removes itself and adds itself again": {
			script: (agent, log) => {
				const a: Listener = recorder(
					"a",
					log,
					once(firstDelta, () => {
						unsubscribe();
						agent.subscribe(a);
					}),
				);
				const unsubscribe = agent.subscribe(a);
			},
			check: (log) => {
				const first = log.findIndex((line) => line.startsWith("a:update:"));
				expect(log[first + 1]).toBe(log[first]);
			},
		},
		"the only listener removes itself": {
			script: (agent, log) => {
				const unsubscribe = agent.subscribe(
					recorder("a", log, (event) => {
						if (event.type === "turn_start") unsubscribe();
					}),
				);
			},
			check: (log) => expect(log.at(-1)).toBe("a:turn_start"),
		},
		"the only listener adds another and removes it at once": {
			script: (agent, log) => {
				agent.subscribe(recorder("a", log, once(firstDelta, () => agent.subscribe(recorder("b", log))())));
			},
			check: (log) => expect(linesOf(log, "b")).toEqual([]),
		},
		"the first of two removes the second, then adds it back at turn_end": {
			script: (agent, log) => {
				const b = recorder("b", log);
				let unsubscribeB = () => {};
				agent.subscribe(
					recorder("a", log, (event) => {
						if (firstDelta(event)) unsubscribeB();
						if (event.type === "turn_end") unsubscribeB = agent.subscribe(b);
					}),
				);
				unsubscribeB = agent.subscribe(b);
			},
			check: (log) => {
				expect(linesOf(log, "b").some((line) => line.startsWith("update:"))).toBe(false);
				expect(linesOf(log, "b")).toContain("turn_end");
			},
		},
		"a lone listener left after the other removed itself adds a third": {
			script: (agent, log) => {
				const unsubscribeA = agent.subscribe(
					recorder("a", log, (event) => {
						if (event.type === "message_start") unsubscribeA();
					}),
				);
				agent.subscribe(recorder("b", log, once((event) => event.type === "turn_end", () => agent.subscribe(recorder("c", log)))));
			},
			check: (log) => expect(linesOf(log, "c")[0]).toBe("turn_end"),
		},
	};

	for (const [name, { script, check }] of Object.entries(scripts)) {
		it(name, async () => {
			const pi = await logOf("pi", script);
			check(pi);
			expect(await logOf("agentchart", script)).toEqual(pi);
		});
	}
});

describe("where agentchart fixes pi", () => {
	it("1. abort during tool execution: pi makes a doomed second LLM call; we stop after the batch", async () => {
		const { pi, ours } = await both(() => ({
			replies: [{ content: [toolCall("slow", {}, "t1")] }, { content: "never" }],
			configure: (agent) => {
				agent.state.tools = [
					tool("slow", async (_id, _p, signal) => {
						queueMicrotask(() => agent.abort());
						await whenAborted(signal);
						throw new Error("Tool aborted");
					}),
				];
			},
		}));
		expect(pi.llmCalls).toBe(2);
		expect(pi.roles).toEqual(["user", "assistant(toolUse)", "toolResult", "assistant(aborted)"]);
		expect(ours.llmCalls).toBe(1);
		expect(ours.roles).toEqual(["user", "assistant(toolUse)", "toolResult"]);
		// Identical up to the batch's turn_end.
		const batchEnd = ours.lines.indexOf("turn_end(toolResults=1)");
		expect(ours.lines.slice(0, batchEnd + 1)).toEqual(pi.lines.slice(0, batchEnd + 1));
		expect(ours.lines.slice(batchEnd + 1)).toEqual(["agent_end(messages=3)"]);
	});

	it("2. abort in the 2nd call's beforeToolCall: pi still executes both calls; we execute none", async () => {
		const scenario = (executed: string[]) => (): Scenario => ({
			replies: [twoCalls("t"), { content: "never" }],
			configure: (agent) => {
				agent.state.tools = [
					tool("t", async (id) => {
						executed.push(id);
						return ok(id);
					}),
				];
				agent.beforeToolCall = async ({ toolCall }: { toolCall: { id: string } }) => {
					if (toolCall.id === "t2") agent.abort();
					return undefined;
				};
			},
		});
		const piExecuted: string[] = [];
		const oursExecuted: string[] = [];
		const pi = await run("pi", scenario(piExecuted)());
		const ours = await run("agentchart", scenario(oursExecuted)());
		expect(piExecuted).toEqual(["t1", "t2"]);
		expect(oursExecuted).toEqual([]);
		expect(pi.roles).toEqual(["user", "assistant(toolUse)", "toolResult", "toolResult", "assistant(aborted)"]);
		expect(ours.roles).toEqual(["user", "assistant(toolUse)", "toolResult", "toolResult"]);
		expect(ours.agent.state.messages.filter((m) => m.role === "toolResult").every((m) => m.role === "toolResult" && m.isError)).toBe(true);
	});

	it("3. Q3: abort in the assistant message_end listener with a steer queued: pi consumes it, we keep it", async () => {
		const { pi, ours } = await both(() => ({
			replies: [{ content: "reply" }, { content: "never" }],
			configure: (agent) => {
				let fired = false;
				agent.subscribe((event) => {
					const message = (event as { message?: { role?: string } }).message;
					if (event.type === "message_end" && message?.role === "assistant" && !fired) {
						fired = true;
						agent.steer(user("STEER"));
						agent.abort();
					}
				});
			},
		}));
		expect(pi.roles).toEqual(["user", "assistant(stop)", "user", "assistant(aborted)"]);
		expect(pi.agent.hasQueuedMessages()).toBe(false);
		expect(ours.roles).toEqual(["user", "assistant(stop)"]);
		expect(ours.agent.hasQueuedMessages()).toBe(true);
		expect(ours.llmCalls).toBe(1);
	});

	it("4. B2: a throwing streamFn: pi skips the assistant message and turn_end; we emit the full lifecycle", async () => {
		const { pi, ours } = await both(() => ({ replies: [], streamFn: throwingStreamFn("provider exploded") }));
		const types = (lines: string[]) => lines.map((line) => line.split(/[:(]/)[0]);
		expect(types(pi.lines)).toEqual(["agent_start", "turn_start", "message_start", "message_end", "agent_end"]);
		expect(types(ours.lines)).toEqual([
			"agent_start",
			"turn_start",
			"message_start",
			"message_end",
			"message_start",
			"message_end",
			"turn_end",
			"agent_end",
		]);
		for (const outcome of [pi, ours]) {
			expect(outcome.agent.state.messages.at(-1)).toMatchObject({ stopReason: "error", errorMessage: "provider exploded" });
		}
	});

	it("5. N6: pi executes the tool calls of a length-truncated reply; we answer them with an error", async () => {
		const scenario = (executed: string[]) => (): Scenario => ({
			replies: [{ content: [toolCall("t", { value: "trunc" }, "t1")], stopReason: "length" }, { content: "done" }],
			configure: (agent) => {
				agent.state.tools = [
					tool("t", async () => {
						executed.push("t1");
						return ok("ran");
					}),
				];
			},
		});
		const piExecuted: string[] = [];
		const oursExecuted: string[] = [];
		const pi = await run("pi", scenario(piExecuted)());
		const ours = await run("agentchart", scenario(oursExecuted)());
		expect(piExecuted).toEqual(["t1"]);
		expect(oursExecuted).toEqual([]);
		expect(pi.lines).toContain("tool_execution_end(t1:ran)");
		expect(ours.lines.find((l) => l.startsWith("tool_execution_end(t1,err:"))).toContain("output token limit");
		expect(ours.roles).toEqual(pi.roles);
	});

	it("6. B7: a settled tool's late update while a sibling runs: pi emits a stray update, we drop it", async () => {
		const scenario = (): Scenario => ({
			replies: [{ content: [toolCall("quick", {}, "q"), toolCall("slow", {}, "s")] }, { content: "done" }],
			configure: (agent) => {
				let late: AgentToolUpdateCallback<unknown> | undefined;
				const lateSent = deferred();
				agent.subscribe((event) => {
					if (event.type === "tool_execution_end" && (event as { toolCallId?: string }).toolCallId === "q") {
						late?.(ok("late"));
						setTimeout(() => lateSent.resolve(), 20);
					}
				});
				agent.state.tools = [
					tool("quick", async (_id, _p, _signal, onUpdate) => {
						late = onUpdate;
						return ok("quick");
					}),
					tool("slow", async () => {
						await lateSent.promise;
						return ok("slow");
					}),
				];
			},
		});
		const { pi, ours } = await both(scenario);
		expect(pi.lines).toContain("tool_execution_update(q)");
		expect(ours.lines.filter((l) => l.startsWith("tool_execution_update"))).toEqual([]);
		expect(ours.lines).toEqual(pi.lines.filter((l) => l !== "tool_execution_update(q)"));
	});

	it("7. B8: reset() during a run: pi wipes the transcript mid-run; we throw and keep it", async () => {
		const scenario = (thrown: string[]) => (): Scenario => ({
			replies: [{ content: "answer" }],
			configure: (agent) => {
				agent.subscribe((event) => {
					const message = (event as { message?: { role?: string } }).message;
					if (event.type === "message_start" && message?.role === "assistant") {
						try {
							agent.reset();
						} catch (error) {
							thrown.push((error as Error).message);
						}
					}
				});
			},
		});
		const piThrown: string[] = [];
		const oursThrown: string[] = [];
		const pi = await run("pi", scenario(piThrown)());
		const ours = await run("agentchart", scenario(oursThrown)());
		expect(piThrown).toEqual([]);
		expect(pi.roles).toEqual(["assistant(stop)"]);
		expect(oursThrown).toEqual(["Agent is already processing. Wait for completion before resetting."]);
		expect(ours.roles).toEqual(["user", "assistant(stop)"]);
	});

	it("8. N17: beforeToolCall { block, terminate }: pi ignores terminate; we stop the loop", async () => {
		const { pi, ours } = await both(() => ({
			replies: [{ content: [toolCall("echo", {}, "t1")] }, { content: "done" }],
			configure: (agent) => {
				agent.state.tools = [echo()];
				agent.beforeToolCall = async () => ({ block: true, reason: "Blocked by policy", terminate: true });
			},
		}));
		expect(pi.llmCalls).toBe(2);
		expect(ours.llmCalls).toBe(1);
		expect(ours.lines).toEqual(pi.lines.slice(0, pi.lines.indexOf("turn_end(toolResults=1)") + 1).concat("agent_end(messages=3)"));
	});

	it("9. N21: toolTimeoutMs: pi waits for a slow tool; we time it out", async () => {
		const { pi, ours } = await both(() => ({
			replies: [{ content: [toolCall("sleepy", {}, "t1")] }, { content: "done" }],
			options: { toolTimeoutMs: 30 },
			configure: (agent) => {
				agent.state.tools = [
					tool("sleepy", async () => {
						await sleep(120);
						return ok("woke up");
					}),
				];
			},
		}));
		expect(pi.lines).toContain("tool_execution_end(t1:woke up)");
		expect(ours.lines).toContain('tool_execution_end(t1,err:Tool "sleepy" timed out after 30 ms)');
		expect(textOf(ours.agent.state.messages[2])).toBe('Tool "sleepy" timed out after 30 ms');
	});
});
