/**
 * pi 0.73.1's low-level loop API (`agentLoop`, `agentLoopContinue`, `runAgentLoop`,
 * `runAgentLoopContinue`): pi's documented behaviours (its own agent-loop tests, the loop
 * algorithm and event orders of ../shared/reference/pi-mono.md §1.3/§1.6), each asserted on
 * pi's real module and on ours with the same test body, so every expectation is one pi meets.
 * Then the event streams compared byte for byte, and the places where agentchart fixes pi.
 */
import * as piModule from "@mariozechner/pi-agent-core";
import { describe, expect, it } from "vitest";
import * as ours from "../../src/index.js";
import type { AgentContext, AgentEvent, AgentTool, ShouldStopAfterTurnContext } from "../../src/types/agent.js";
import type { AgentMessage, AssistantMessage } from "../../src/types/messages.js";
import type { Model } from "../../src/types/model.js";
import type { StreamFn } from "../../src/types/stream.js";
import { createScriptedModel, type ScriptedReply, text, thinking, toolCall } from "../../src/providers/scripted.js";
import { AssistantMessageEventStream } from "../../src/providers/event-stream.js";
import { assistant, deferred, doneOnlyStreamFn, echoTool, makeTool, ok, sleep, user, whenAborted } from "../agent/helpers.js";

/** The stream both `agentLoop`s return, as the tests use it. */
interface LoopStream extends AsyncIterable<AgentEvent> {
	result(): Promise<AgentMessage[]>;
}

/** The loop configuration as the tests pass it (pi's shape; ours is the same). */
type LoopConfig = ours.AgentLoopConfig;
type Sink = (event: AgentEvent) => Promise<void> | void;

/** The four functions, as both modules export them. */
interface LoopApi {
	agentLoop(prompts: AgentMessage[], context: AgentContext, config: LoopConfig, signal?: AbortSignal, streamFn?: StreamFn): LoopStream;
	agentLoopContinue(context: AgentContext, config: LoopConfig, signal?: AbortSignal, streamFn?: StreamFn): LoopStream;
	runAgentLoop(prompts: AgentMessage[], context: AgentContext, config: LoopConfig, emit: Sink, signal?: AbortSignal, streamFn?: StreamFn): Promise<AgentMessage[]>;
	runAgentLoopContinue(context: AgentContext, config: LoopConfig, emit: Sink, signal?: AbortSignal, streamFn?: StreamFn): Promise<AgentMessage[]>;
}

// pi's declarations name pi-ai's types, which are structurally ours; the module is the same API.
const pi = piModule as unknown as LoopApi;
const IMPLS: [string, LoopApi][] = [
	["pi-agent-core 0.73.1", pi],
	["agentchart", ours],
];

const LLM_ROLES = new Set(["user", "assistant", "toolResult"]);
const convertToLlm: LoopConfig["convertToLlm"] = (messages) => messages.filter((m) => LLM_ROLES.has(m.role)) as never;

function contextOf(messages: AgentMessage[] = [], tools: AgentTool<object, unknown>[] = []): AgentContext {
	return { systemPrompt: "You are terse.", messages, tools: tools as AgentContext["tools"] };
}

function configOf(model: Model, extra: Partial<LoopConfig> = {}): LoopConfig {
	return { model, convertToLlm, ...extra };
}

async function collect(stream: LoopStream): Promise<{ events: AgentEvent[]; result: AgentMessage[] }> {
	const events: AgentEvent[] = [];
	for await (const event of stream) events.push(event);
	return { events, result: await stream.result() };
}

const types = (events: readonly AgentEvent[]) => events.map((event) => event.type);
const roleList = (messages: readonly AgentMessage[]) => messages.map((message) => message.role);
const resultIds = (events: readonly AgentEvent[], type: "tool_execution_end" | "message_end") =>
	events.flatMap((event) => {
		if (event.type === "tool_execution_end" && type === "tool_execution_end") return [event.toolCallId];
		if (event.type === "message_end" && type === "message_end" && event.message.role === "toolResult") return [event.message.toolCallId];
		return [];
	});

describe.each(IMPLS)("%s: agentLoop", (_name, api) => {
	it("emits the run's lifecycle for a prompt and resolves with [prompt, reply] (pi L1)", async () => {
		const streamFn = doneOnlyStreamFn(() => assistant("Hi there!"));
		const { events, result } = await collect(api.agentLoop([user("Hello")], contextOf(), configOf(ours.defaultModel()), undefined, streamFn));
		expect(types(events)).toEqual(["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end", "turn_end", "agent_end"]);
		expect(roleList(result)).toEqual(["user", "assistant"]);
		const end = events.at(-1);
		expect(end?.type === "agent_end" && roleList(end.messages)).toEqual(["user", "assistant"]);
	});

	it("hands convertToLlm the transcript and sends only what it returns (pi L2)", async () => {
		const notification = { role: "notification", text: "ignore me", timestamp: 1 } as unknown as AgentMessage;
		let converted: unknown[] = [];
		const scripted = createScriptedModel([{ content: "ok" }]);
		await collect(
			api.agentLoop([user("Hello")], contextOf([notification]), configOf(scripted.model, {
				convertToLlm: (messages) => {
					const kept = messages.filter((m) => (m.role as string) !== "notification");
					converted = kept;
					return kept as never;
				},
			}), undefined, scripted.streamFn),
		);
		expect(converted).toHaveLength(1);
		expect(scripted.calls[0]?.messages).toHaveLength(1);
	});

	it("applies transformContext before convertToLlm (pi L3)", async () => {
		const old = [user("one"), assistant("two"), user("three"), assistant("four")];
		let transformed = 0;
		let convertedLength = -1;
		const scripted = createScriptedModel([{ content: "ok" }]);
		await collect(
			api.agentLoop([user("five")], contextOf(old), configOf(scripted.model, {
				transformContext: async (messages) => {
					transformed++;
					return messages.slice(-2);
				},
				convertToLlm: (messages) => {
					convertedLength = messages.length;
					return convertToLlm(messages);
				},
			}), undefined, scripted.streamFn),
		);
		expect(transformed).toBe(1);
		expect(convertedLength).toBe(2);
	});

	it("runs a tool call, feeds its result back and calls the model again (pi L4)", async () => {
		const executed: string[] = [];
		const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "hello" }, "tool-1")] }, { content: "done" }]);
		const { events, result } = await collect(
			api.agentLoop([user("echo hello")], contextOf([], [echoTool(executed)]), configOf(scripted.model), undefined, scripted.streamFn),
		);
		expect(executed).toEqual(["hello"]);
		const end = events.find((event) => event.type === "tool_execution_end");
		expect(end?.type === "tool_execution_end" && end.isError).toBe(false);
		expect(events.some((event) => event.type === "tool_execution_start")).toBe(true);
		expect(roleList(result)).toEqual(["user", "assistant", "toolResult", "assistant"]);
		expect(scripted.calls).toHaveLength(2);
	});

	it("runs calls in parallel: ends in completion order, results in source order (pi L5/N9)", async () => {
		const gate = deferred();
		let secondStartedBeforeFirstEnded = false;
		let firstDone = false;
		const slow = makeTool("slow", async () => {
			await Promise.race([gate.promise, sleep(200)]);
			firstDone = true;
			return ok("slow");
		});
		const fast = makeTool("fast", async () => {
			secondStartedBeforeFirstEnded = !firstDone;
			gate.resolve();
			return ok("fast");
		});
		const scripted = createScriptedModel([{ content: [toolCall("slow", {}, "tool-1"), toolCall("fast", {}, "tool-2")] }, { content: "done" }]);
		const { events } = await collect(api.agentLoop([user("go")], contextOf([], [slow, fast]), configOf(scripted.model), undefined, scripted.streamFn));
		expect(secondStartedBeforeFirstEnded).toBe(true);
		expect(resultIds(events, "tool_execution_end")).toEqual(["tool-2", "tool-1"]);
		expect(resultIds(events, "message_end")).toEqual(["tool-1", "tool-2"]);
		const turnEnd = events.find((event) => event.type === "turn_end");
		expect(turnEnd?.type === "turn_end" && turnEnd.toolResults.map((r) => r.toolCallId)).toEqual(["tool-1", "tool-2"]);
	});

	it("injects steering only after every call of the batch has run (pi N10)", async () => {
		const executed: string[] = [];
		let steered = false;
		const scripted = createScriptedModel([
			{ content: [toolCall("echo", { value: "first" }, "tool-1"), toolCall("echo", { value: "second" }, "tool-2")] },
			{ content: "done" },
		]);
		const { events } = await collect(
			api.agentLoop([user("go")], contextOf([], [echoTool(executed)]), configOf(scripted.model, {
				toolExecution: "sequential",
				getSteeringMessages: async () => {
					if (steered || executed.length === 0) return [];
					steered = true;
					return [user("interrupt")];
				},
			}), undefined, scripted.streamFn),
		);
		expect(executed).toEqual(["first", "second"]);
		const starts = events.flatMap((event) => (event.type === "message_start" ? [event.message.role === "user" ? `user:${(event.message.content as { text: string }[])[0]?.text}` : event.message.role] : []));
		expect(starts.indexOf("user:interrupt")).toBeGreaterThan(starts.lastIndexOf("toolResult"));
		expect(JSON.stringify(scripted.calls[1]?.messages)).toContain("interrupt");
	});

	it("runs a tool with executionMode sequential alone even in parallel mode (pi N11/N12)", async () => {
		const order: string[] = [];
		const slow = makeTool(
			"slow",
			async (_id, params) => {
				order.push(`start:${String(params["value"])}`);
				await sleep(10);
				order.push(`end:${String(params["value"])}`);
				return ok("slow");
			},
			{ executionMode: "sequential" },
		);
		const scripted = createScriptedModel([{ content: [toolCall("slow", { value: "a" }, "tool-1"), toolCall("slow", { value: "b" }, "tool-2")] }, { content: "done" }]);
		const { events } = await collect(api.agentLoop([user("go")], contextOf([], [slow]), configOf(scripted.model), undefined, scripted.streamFn));
		expect(order).toEqual(["start:a", "end:a", "start:b", "end:b"]);
		expect(resultIds(events, "message_end")).toEqual(["tool-1", "tool-2"]);
	});

	it("stops after the turn when shouldStopAfterTurn says so, leaving the queues unread (pi N15)", async () => {
		const executed: string[] = [];
		let steeringPolls = 0;
		let followUpPolls = 0;
		const seen: ShouldStopAfterTurnContext[] = [];
		const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "hello" }, "tool-1")] }, { content: "never" }]);
		const { events, result } = await collect(
			api.agentLoop([user("go")], contextOf([], [echoTool(executed)]), configOf(scripted.model, {
				getSteeringMessages: async () => {
					steeringPolls++;
					return [];
				},
				getFollowUpMessages: async () => {
					followUpPolls++;
					return [user("follow-up")];
				},
				shouldStopAfterTurn: (context) => {
					seen.push(context);
					return true;
				},
			}), undefined, doneOnlyFromScript(scripted)),
		);
		expect(scripted.calls).toHaveLength(1);
		expect(executed).toEqual(["hello"]);
		expect(steeringPolls).toBe(1);
		expect(followUpPolls).toBe(0);
		expect(seen[0]?.toolResults.map((r) => r.toolCallId)).toEqual(["tool-1"]);
		expect(roleList(seen[0]?.context.messages ?? [])).toEqual(["user", "assistant", "toolResult"]);
		expect(roleList(result)).toEqual(["user", "assistant", "toolResult"]);
		expect(types(events)).toEqual([
			"agent_start",
			"turn_start",
			"message_start",
			"message_end",
			"message_start",
			"message_end",
			"tool_execution_start",
			"tool_execution_end",
			"message_start",
			"message_end",
			"turn_end",
			"agent_end",
		]);
	});

	it("stops after the turn when shouldStopAfterTurn answers a truthy value that is not `true`, as pi's `if` does", async () => {
		// Plain-JS hooks return such values (a count, a reason string); pi tests the answer's truthiness.
		for (const answer of [1, "budget spent", {}]) {
			const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "hello" }, "tool-1")] }, { content: "never" }]);
			const stop = (() => answer) as unknown as LoopConfig["shouldStopAfterTurn"];
			const { result } = await collect(api.agentLoop([user("go")], contextOf([], [echoTool()]), configOf(scripted.model, { shouldStopAfterTurn: stop }), undefined, doneOnlyFromScript(scripted)));
			expect(scripted.calls, String(answer)).toHaveLength(1);
			expect(roleList(result)).toEqual(["user", "assistant", "toolResult"]);
		}
		for (const answer of [0, "", null]) {
			const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "hello" }, "tool-1")] }, { content: "done" }]);
			const stop = (() => answer) as unknown as LoopConfig["shouldStopAfterTurn"];
			await collect(api.agentLoop([user("go")], contextOf([], [echoTool()]), configOf(scripted.model, { shouldStopAfterTurn: stop }), undefined, doneOnlyFromScript(scripted)));
			expect(scripted.calls, String(answer)).toHaveLength(2);
		}
	});

	it("stops after a batch whose every result sets terminate (pi N16), not when only some do (pi N19)", async () => {
		const terminating = makeTool("stop", async () => ({ ...ok("stopped"), terminate: true }));
		const all = createScriptedModel([{ content: [toolCall("stop", {}, "tool-1")] }, { content: "never" }]);
		const one = await collect(api.agentLoop([user("go")], contextOf([], [terminating]), configOf(all.model), undefined, all.streamFn));
		expect(all.calls).toHaveLength(1);
		expect(roleList(one.result)).toEqual(["user", "assistant", "toolResult"]);
		expect(types(one.events).filter((type) => type === "turn_end")).toHaveLength(1);

		const mixed = createScriptedModel([{ content: [toolCall("stop", {}, "tool-1"), toolCall("echo", { value: "x" }, "tool-2")] }, { content: "after" }]);
		const two = await collect(api.agentLoop([user("go")], contextOf([], [terminating, echoTool()]), configOf(mixed.model), undefined, mixed.streamFn));
		expect(mixed.calls).toHaveLength(2);
		expect(roleList(two.result)).toEqual(["user", "assistant", "toolResult", "toolResult", "assistant"]);
	});

	it("lets afterToolCall mark the batch as terminating (pi N20)", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "x" }, "tool-1")] }, { content: "never" }]);
		await collect(
			api.agentLoop([user("go")], contextOf([], [echoTool()]), configOf(scripted.model, { afterToolCall: async () => ({ terminate: true }) }), undefined, scripted.streamFn),
		);
		expect(scripted.calls).toHaveLength(1);
	});

	it("executes beforeToolCall's mutated arguments without validating them again (pi N7)", async () => {
		const received: unknown[] = [];
		const tool = makeTool("echo", async (_id, params) => {
			received.push(params["value"]);
			return ok("ok");
		}, { parameters: { type: "object", properties: { value: { type: "string" } }, required: ["value"] } });
		const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "text" }, "tool-1")] }, { content: "done" }]);
		await collect(
			api.agentLoop([user("go")], contextOf([], [tool]), configOf(scripted.model, {
				beforeToolCall: async ({ args }) => {
					(args as { value: unknown }).value = 123;
					return undefined;
				},
			}), undefined, scripted.streamFn),
		);
		expect(received).toEqual([123]);
	});

	it("awaits its sink: a slow sink holds the loop back (backpressure)", async () => {
		const release = deferred();
		const streamFn = doneOnlyStreamFn(() => assistant("ok"));
		const seen: string[] = [];
		const done = api.runAgentLoop([user("go")], contextOf(), configOf(ours.defaultModel()), async (event) => {
			seen.push(event.type);
			if (event.type === "message_end" && event.message.role === "user") await release.promise;
		}, undefined, streamFn);
		await sleep(20);
		expect(streamFn.calls).toBe(0);
		expect(seen).toEqual(["agent_start", "turn_start", "message_start", "message_end"]);
		release.resolve();
		expect(roleList(await done)).toEqual(["user", "assistant"]);
		expect(streamFn.calls).toBe(1);
	});

	it("rejects with the sink's error when the sink throws", async () => {
		const streamFn = doneOnlyStreamFn(() => assistant("ok"));
		const run = api.runAgentLoop([user("go")], contextOf(), configOf(ours.defaultModel()), (event) => {
			if (event.type === "message_start" && event.message.role === "assistant") throw new Error("sink broke");
		}, undefined, streamFn);
		await expect(run).rejects.toThrow("sink broke");
	});

	it("ends with an aborted reply when its signal aborts while streaming", async () => {
		const controller = new AbortController();
		const scripted = createScriptedModel([{ content: "a long answer that keeps going", delayMs: 5 }], { chunkSize: 2 });
		const stream = api.agentLoop([user("go")], contextOf(), configOf(scripted.model), controller.signal, scripted.streamFn);
		const events: AgentEvent[] = [];
		for await (const event of stream) {
			events.push(event);
			if (event.type === "message_update") controller.abort();
		}
		const result = await stream.result();
		expect((result.at(-1) as AssistantMessage).stopReason).toBe("aborted");
		expect(types(events).slice(-2)).toEqual(["turn_end", "agent_end"]);
	});
});

describe.each(IMPLS)("%s: agentLoopContinue", (_name, api) => {
	it("throws synchronously on an empty context (pi L7/N23)", () => {
		const streamFn = doneOnlyStreamFn(() => assistant("never"));
		expect(() => api.agentLoopContinue(contextOf(), configOf(ours.defaultModel()), undefined, streamFn)).toThrow("Cannot continue: no messages in context");
		expect(streamFn.calls).toBe(0);
	});

	it("throws synchronously when the last message is an assistant reply", () => {
		const streamFn = doneOnlyStreamFn(() => assistant("never"));
		expect(() => api.agentLoopContinue(contextOf([user("hi"), assistant("hello")]), configOf(ours.defaultModel()), undefined, streamFn)).toThrow(
			"Cannot continue from message role: assistant",
		);
	});

	it("rejects (runAgentLoopContinue) with the same messages", async () => {
		await expect(api.runAgentLoopContinue(contextOf(), configOf(ours.defaultModel()), () => {})).rejects.toThrow("Cannot continue: no messages in context");
		await expect(api.runAgentLoopContinue(contextOf([assistant("x")]), configOf(ours.defaultModel()), () => {})).rejects.toThrow(
			"Cannot continue from message role: assistant",
		);
	});

	it("continues without user message events; agent_end and the result hold only the new messages (pi L8/N24)", async () => {
		const streamFn = doneOnlyStreamFn(() => assistant("Response"));
		const { events, result } = await collect(api.agentLoopContinue(contextOf([user("Hello")]), configOf(ours.defaultModel()), undefined, streamFn));
		expect(roleList(result)).toEqual(["assistant"]);
		expect(events.filter((event) => event.type === "message_end")).toHaveLength(1);
		const end = events.at(-1);
		expect(end?.type === "agent_end" && roleList(end.messages)).toEqual(["assistant"]);
		expect(types(events)).toEqual(["agent_start", "turn_start", "message_start", "message_end", "turn_end", "agent_end"]);
	});

	it("allows a custom message last; converting it is the caller's business (pi L9/N25)", async () => {
		const custom = { role: "custom", text: "hook says hi", timestamp: 1 } as unknown as AgentMessage;
		const scripted = createScriptedModel([{ content: "ok" }]);
		const { result } = await collect(
			api.agentLoopContinue(contextOf([custom]), configOf(scripted.model, {
				convertToLlm: (messages) => messages.map((m) => ((m.role as string) === "custom" ? user((m as unknown as { text: string }).text) : m)) as never,
			}), undefined, scripted.streamFn),
		);
		expect(roleList(result)).toEqual(["assistant"]);
		expect(JSON.stringify(scripted.calls[0]?.messages)).toContain("hook says hi");
	});

	it("polls steering at the start and injects it before the first reply", async () => {
		let polls = 0;
		const scripted = createScriptedModel([{ content: "ok" }]);
		const { events } = await collect(
			api.agentLoopContinue(contextOf([user("Hello")]), configOf(scripted.model, {
				getSteeringMessages: async () => (polls++ === 0 ? [user("steer")] : []),
			}), undefined, scripted.streamFn),
		);
		expect(JSON.stringify(scripted.calls[0]?.messages)).toContain("steer");
		expect(events.slice(0, 4).map((event) => (event.type === "message_start" ? `start:${event.message.role}` : event.type))).toEqual([
			"agent_start",
			"turn_start",
			"start:user",
			"message_end",
		]);
	});
});

/** The script's replies through pi's `done`-only mock shape (no start, no deltas). */
function doneOnlyFromScript(scripted: ReturnType<typeof createScriptedModel>): StreamFn {
	return async (model, context, options) => {
		const source = await scripted.streamFn(model, context, options);
		const final = await source.result();
		const stream = new AssistantMessageEventStream();
		queueMicrotask(() => stream.push({ type: "done", reason: final.stopReason as "stop", message: final }));
		return stream;
	};
}

/**
 * Every event's JSON with timestamps and durations zeroed: a JSON client prints exactly this.
 * Taken inside the sink, when the event is delivered, as such a client would.
 */
async function jsonLines(api: LoopApi, replies: ScriptedReply[], extra: Partial<LoopConfig> = {}, tools: AgentTool<object, unknown>[] = []): Promise<string[]> {
	const scripted = createScriptedModel(replies, { chunkSize: 3 });
	const lines: string[] = [];
	await api.runAgentLoop([{ ...user("go"), timestamp: 0 }], contextOf([], tools), configOf(scripted.model, extra), (event) => {
		lines.push(JSON.stringify(event).replace(/"timestamp":\d+/g, '"timestamp":0'));
	}, undefined, scripted.streamFn);
	return lines;
}

describe("the same events as pi's loop, byte for byte", () => {
	const replies = (): ScriptedReply[] => [
		{ content: [thinking("Let me look.", "sig"), text("Checking two things."), toolCall("echo", { value: "a" }, "tool-1"), toolCall("echo", { value: "b" }, "tool-2")] },
		{ content: [text("Both came back.")] },
	];

	it.each(["parallel", "sequential"] as const)("for thinking, text and two tool calls (%s)", async (toolExecution) => {
		const expected = await jsonLines(pi, replies(), { toolExecution }, [echoTool()]);
		const actual = await jsonLines(ours, replies(), { toolExecution }, [echoTool()]);
		expect(actual.length).toBeGreaterThan(30);
		expect(actual).toEqual(expected);
	});

	it("for a tool error, a missing tool and a blocked call", async () => {
		const failing = makeTool("fail", async () => {
			throw new Error("disk full");
		});
		const script = (): ScriptedReply[] => [
			{ content: [toolCall("fail", {}, "tool-1"), toolCall("nope", {}, "tool-2"), toolCall("echo", { value: "blocked" }, "tool-3")] },
			{ content: "ok" },
		];
		const extra: Partial<LoopConfig> = { beforeToolCall: async ({ toolCall: c }) => (c.id === "tool-3" ? { block: true, reason: "Blocked by policy" } : undefined) };
		expect(await jsonLines(ours, script(), extra, [failing, echoTool()])).toEqual(await jsonLines(pi, script(), extra, [failing, echoTool()]));
	});

	it("for an error reply", async () => {
		const script = (): ScriptedReply[] => [{ content: "partial", stopReason: "error", errorMessage: "overloaded" }];
		expect(await jsonLines(ours, script())).toEqual(await jsonLines(pi, script()));
	});

	it("with steering and a follow-up", async () => {
		const queues = () => {
			let steer = [user("steer")];
			let follow = [user("follow")];
			return {
				getSteeringMessages: async () => [steer, (steer = [])][0] ?? [],
				getFollowUpMessages: async () => [follow, (follow = [])][0] ?? [],
			};
		};
		const script = (): ScriptedReply[] => [{ content: "one" }, { content: "two" }];
		const normalise = (lines: string[]) => lines.map((line) => line.replace(/"timestamp":\d+/g, '"timestamp":0'));
		const zeroQueues = () => {
			const q = queues();
			return {
				getSteeringMessages: async () => (await q.getSteeringMessages()).map((m) => ({ ...m, timestamp: 0 })),
				getFollowUpMessages: async () => (await q.getFollowUpMessages()).map((m) => ({ ...m, timestamp: 0 })),
			};
		};
		expect(normalise(await jsonLines(ours, script(), zeroQueues()))).toEqual(normalise(await jsonLines(pi, script(), zeroQueues())));
	});
});

describe("where agentchart's loop fixes pi's", () => {
	it("ends a run whose stream closes without done or error (pi's loop never settles)", async () => {
		const streamFn: StreamFn = () => {
			const stream = new AssistantMessageEventStream();
			queueMicrotask(() => {
				stream.push({ type: "start", partial: assistant([], "stop") });
				stream.end();
			});
			return stream;
		};
		const { result } = await collect(ours.agentLoop([user("go")], contextOf(), configOf(ours.defaultModel()), undefined, streamFn));
		expect((result.at(-1) as AssistantMessage).stopReason).toBe("error");
	});

	it("ends the stream (and does not leave an unhandled rejection) when the sink-less loop fails", async () => {
		const { events, result } = await collect(
			ours.agentLoop([user("go")], contextOf(), configOf(ours.defaultModel(), { convertToLlm: () => { throw new Error("convert broke"); } }), undefined, doneOnlyStreamFn(() => assistant("x"))),
		);
		expect(types(events).at(-1)).toBe("agent_end");
		expect((result.at(-1) as AssistantMessage).errorMessage).toContain("convert broke");
	});

	it("makes no further model call after an abort during a tool (pi calls the model again with the aborted signal)", async () => {
		const controller = new AbortController();
		const scripted = createScriptedModel([{ content: [toolCall("wait", {}, "tool-1")] }, { content: "never" }]);
		const wait = makeTool("wait", async (_id, _params, signal) => {
			queueMicrotask(() => controller.abort());
			await whenAborted(signal);
			throw new Error("aborted");
		});
		const { result } = await collect(ours.agentLoop([user("go")], contextOf([], [wait]), configOf(scripted.model), controller.signal, scripted.streamFn));
		expect(scripted.calls).toHaveLength(1);
		expect(roleList(result)).toEqual(["user", "assistant", "toolResult"]);
	});

	// pi awaits each hook whatever happens; a hook that never answers then holds the run after
	// the abort too. Here the run ends on the abort, and the hook's late answer is ignored.
	const hanging = new Promise<never>(() => {});
	const hangingHooks: [string, Partial<LoopConfig>, string[]][] = [
		["getSteeringMessages (before the first call)", { getSteeringMessages: () => hanging }, ["user", "assistant"]],
		["shouldStopAfterTurn", { shouldStopAfterTurn: () => hanging }, ["user", "assistant"]],
		["getFollowUpMessages", { getFollowUpMessages: () => hanging }, ["user", "assistant"]],
	];
	for (const [hook, extra, roles] of hangingHooks) {
		it(`ends on abort while ${hook} never answers`, async () => {
			const controller = new AbortController();
			const scripted = createScriptedModel([{ content: "answer" }, { content: "never" }]);
			const run = ours.runAgentLoop([user("go")], contextOf(), configOf(scripted.model, extra), () => {}, controller.signal, scripted.streamFn);
			await sleep(20);
			controller.abort();
			const outcome = await Promise.race([run.then(() => "ended"), sleep(1000).then(() => "still waiting")]);
			expect(outcome).toBe("ended");
			const result = await run;
			expect(roleList(result)).toEqual(roles);
			expect((result.at(-1) as AssistantMessage).stopReason).toBe(hook.startsWith("getSteeringMessages") ? "aborted" : "stop");
		});
	}
});
