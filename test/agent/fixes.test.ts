/**
 * Where pi 0.73.1 is wrong, agentchart follows the fixed behaviour (issue 2, fixes 1–9;
 * pi tests N6, N17, N18, N21, N22, B2, B6–B8, Q3) and adds dispose().
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Agent } from "../../src/agent.js";
import { AssistantMessageEventStream } from "../../src/providers/event-stream.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentToolUpdateCallback } from "../../src/types/agent.js";
import type { ToolResultMessage } from "../../src/types/messages.js";
import type { StreamFn } from "../../src/types/stream.js";
import {
	assistant,
	deferred,
	echoTool,
	expectIdle,
	expectValidTranscript,
	expectWellFormedRun,
	flush,
	makeTool,
	ok,
	record,
	roles,
	runsOf,
	sleep,
	textOf,
	throwingStreamFn,
	user,
	userTextsOf,
	waitForAbortStreamFn,
	whenAborted,
} from "./helpers.js";

function toolResults(agent: Agent): ToolResultMessage[] {
	return agent.state.messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => {
	unhandled.push(reason);
};
beforeEach(() => {
	unhandled.length = 0;
	process.on("unhandledRejection", onUnhandled);
});
afterEach(() => {
	process.off("unhandledRejection", onUnhandled);
});

describe("1. abort during tool execution", () => {
	it("records the batch's results, ends the run, and makes no further LLM call", async () => {
		const running = deferred();
		const sawAbort: boolean[] = [];
		const honours = makeTool("honours", async (_id, _p, signal) => {
			running.resolve();
			await whenAborted(signal);
			sawAbort.push(signal?.aborted === true);
			throw new Error("aborted!");
		});
		const ignores = makeTool("ignores", async (_id, _p, signal) => {
			await whenAborted(signal);
			sawAbort.push(signal?.aborted === true);
			return ok("finished anyway");
		});
		const scripted = createScriptedModel([{ content: [toolCall("honours", {}, "h"), toolCall("ignores", {}, "i")] }, { content: "never" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [honours, ignores] }, streamFn: scripted.streamFn });
		const rec = record(agent);
		const run = agent.prompt("go");
		await running.promise;
		agent.abort();
		await run;
		expect(sawAbort).toEqual([true, true]);
		expect(scripted.calls).toHaveLength(1);
		expect(rec.skeleton().slice(6)).toEqual([
			"tool_execution_start(h)",
			"tool_execution_start(i)",
			"tool_execution_end(h,err:aborted!)",
			"tool_execution_end(i)",
			"message_start:toolResult(h,err)",
			"message_end:toolResult(h,err)",
			"message_start:toolResult(i)",
			"message_end:toolResult(i)",
			"turn_end(toolResults=2)",
			"agent_end(messages=4)",
		]);
		expect(roles(agent.state.messages)).toEqual(["user", "assistant(toolUse)", "toolResult:h", "toolResult:i"]);
		expectWellFormedRun(rec.events);
		expectIdle(agent);
	});

	it("leaves steering and follow-up messages queued for the next run, which delivers each once", async () => {
		const running = deferred();
		let agentRef: Agent | undefined;
		const tool = makeTool("slow", async (_id, _p, signal) => {
			agentRef?.steer(user("STEER"));
			agentRef?.followUp(user("FOLLOW"));
			running.resolve();
			await whenAborted(signal);
			return ok("stopped");
		});
		const scripted = createScriptedModel([{ content: [toolCall("slow", {}, "t1")] }, { content: "a" }, { content: "b" }, { content: "c" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn });
		agentRef = agent;
		const run = agent.prompt("go");
		await running.promise;
		agent.abort();
		await run;
		expect(scripted.calls).toHaveLength(1);
		expect(agent.hasQueuedMessages()).toBe(true);
		expect(agent.state.messages.map(textOf)).not.toContain("STEER");

		agentRef = undefined;
		await agent.prompt("next");
		const texts = agent.state.messages.filter((m) => m.role === "user").map(textOf);
		expect(texts).toEqual(["go", "next", "STEER", "FOLLOW"]);
		expect(agent.hasQueuedMessages()).toBe(false);
		expect(userTextsOf(scripted.calls[1] ?? { messages: [] })).toEqual(["go", "next", "STEER"]);
	});

	it("sequential mode: the running call finishes, later calls get error results without running", async () => {
		const running = deferred();
		const executed: string[] = [];
		const tool = makeTool("slow", async (id, _p, signal) => {
			executed.push(id);
			running.resolve();
			await whenAborted(signal);
			return ok(`stopped ${id}`);
		});
		const scripted = createScriptedModel([{ content: [toolCall("slow", {}, "a"), toolCall("slow", {}, "b")] }]);
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [tool] },
			streamFn: scripted.streamFn,
			toolExecution: "sequential",
		});
		const rec = record(agent);
		const run = agent.prompt("go");
		await running.promise;
		agent.abort();
		await run;
		expect(executed).toEqual(["a"]);
		expect(toolResults(agent).map((r) => [r.toolCallId, r.isError])).toEqual([
			["a", false],
			["b", true],
		]);
		expect(scripted.calls).toHaveLength(1);
		expectWellFormedRun(rec.events);
		expectValidTranscript(agent.state.messages);
	});
});

describe("2. abort during preflight", () => {
	it("stops preflighting, executes nothing, and still gives every call an error result", async () => {
		const executed: string[] = [];
		const preflighted: string[] = [];
		const tool = makeTool("t", async (id) => {
			executed.push(id);
			return ok(id);
		});
		const scripted = createScriptedModel([{ content: [toolCall("t", {}, "a"), toolCall("t", {}, "b"), toolCall("t", {}, "c")] }, { content: "never" }]);
		let agentRef: Agent | undefined;
		// Read after the run: an assertion thrown inside the hook would become b's error result, which the test expects anyway.
		const abortedInHook: (boolean | undefined)[] = [];
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [tool] },
			streamFn: scripted.streamFn,
			beforeToolCall: async ({ toolCall }, signal) => {
				preflighted.push(toolCall.id);
				if (toolCall.id === "b") {
					agentRef?.abort();
					abortedInHook.push(signal?.aborted);
				}
				return undefined;
			},
		});
		agentRef = agent;
		const rec = record(agent);
		await agent.prompt("go");
		expect(abortedInHook).toEqual([true]);
		expect(preflighted).toEqual(["a", "b"]);
		expect(executed).toEqual([]);
		expect(toolResults(agent).map((r) => [r.toolCallId, r.isError])).toEqual([
			["a", true],
			["b", true],
			["c", true],
		]);
		expect(scripted.calls).toHaveLength(1);
		expectWellFormedRun(rec.events);
		expectValidTranscript(agent.state.messages);
		expectIdle(agent);
	});

	// In streaming mode the batch actor asks the hook and then runs the call itself: the hook's
	// "run it" after abort() must not run a tool that never checks its signal.
	it("streaming mode: a call the hook allows after abort() never executes", async () => {
		const executed: string[] = [];
		const tool = makeTool("t", async (id) => {
			executed.push(id);
			return ok(id);
		});
		const scripted = createScriptedModel([{ content: [toolCall("t", {}, "a")] }, { content: "never" }]);
		let agentRef: Agent | undefined;
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [tool] },
			streamFn: scripted.streamFn,
			toolExecution: "streaming",
			beforeToolCall: async () => {
				agentRef?.abort();
				await sleep(5);
				return undefined;
			},
		});
		agentRef = agent;
		const rec = record(agent);
		await agent.prompt("go");
		expect(executed).toEqual([]);
		expect(toolResults(agent).map((r) => [r.toolCallId, r.isError])).toEqual([["a", true]]);
		expect(scripted.calls).toHaveLength(1);
		expectWellFormedRun(rec.events);
		expectValidTranscript(agent.state.messages);
		expectIdle(agent);
	});
});

describe("3. a queued steer is never consumed by a run being aborted", () => {
	it("Q3: abort in the assistant message_end listener with a steer queued: the steer stays queued, no extra call", async () => {
		const scripted = createScriptedModel([{ content: "reply" }, { content: "second" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const rec = record(agent);
		const steer = user("STEER");
		let fired = false;
		agent.subscribe((event) => {
			if (event.type === "message_end" && event.message.role === "assistant" && !fired) {
				fired = true;
				agent.steer(steer);
				agent.abort();
			}
		});
		await agent.prompt("go");
		expect(rec.skeleton()).toEqual([
			"agent_start",
			"turn_start",
			"message_start:user(go)",
			"message_end:user(go)",
			"message_start:assistant",
			"message_end:assistant(stop)",
			"turn_end(toolResults=0)",
			"agent_end(messages=2)",
		]);
		expect(scripted.calls).toHaveLength(1);
		expect(agent.hasQueuedMessages()).toBe(true);
		await agent.prompt("again");
		const delivered = agent.state.messages.filter((m) => m === steer);
		expect(delivered).toHaveLength(1);
		expect(agent.hasQueuedMessages()).toBe(false);
	});
});

describe("3b. abort while the request is being prepared", () => {
	// The request is prepared (transformContext, convertToLlm, getApiKey) before it is sent; an
	// abort meanwhile must not send it, even through a stream function that ignores its signal.
	for (const step of ["transformContext", "convertToLlm", "getApiKey"] as const) {
		it(`abort() while ${step} runs: the model is not called, the reply ends aborted`, async () => {
			const scripted = createScriptedModel([{ content: "should not be asked" }]);
			let requests = 0;
			const deaf: StreamFn = (model, context, options) => {
				requests++;
				const { signal: _ignored, ...rest } = options ?? {};
				return scripted.streamFn(model, context, rest);
			};
			const entered = deferred();
			const gate = deferred();
			const hold = async () => {
				entered.resolve();
				await gate.promise;
			};
			const agent = new Agent({
				initialState: { model: scripted.model },
				streamFn: deaf,
				...(step === "transformContext" ? { transformContext: async (messages) => (await hold(), messages) } : {}),
				...(step === "convertToLlm" ? { convertToLlm: async (messages) => (await hold(), messages.filter((m) => m.role === "user")) } : {}),
				...(step === "getApiKey" ? { getApiKey: async () => (await hold(), "key") } : {}),
			});
			const rec = record(agent);
			const run = agent.prompt("go");
			await entered.promise;
			agent.abort();
			gate.resolve();
			await run;
			expect(requests).toBe(0);
			expect(rec.skeleton().slice(-4)).toEqual(["message_start:assistant", "message_end:assistant(aborted:Request was aborted)", "turn_end(toolResults=0)", "agent_end(messages=2)"]);
			expectWellFormedRun(rec.events);
			expectIdle(agent);
		});
	}
});

describe("4. a throwing streamFn, convertToLlm, transformContext or getApiKey", () => {
	const B2_EVENTS = [
		"agent_start",
		"turn_start",
		"message_start:user(go)",
		"message_end:user(go)",
		"message_start:assistant",
		"message_end:assistant(error:provider exploded)",
		"turn_end(toolResults=0)",
		"agent_end(messages=2)",
	];

	const cases: [string, (scriptedFn: StreamFn) => ConstructorParameters<typeof Agent>[0]][] = [
		["streamFn", () => ({ streamFn: throwingStreamFn("provider exploded") })],
		[
			"an async streamFn",
			() => ({
				streamFn: async () => {
					throw new Error("provider exploded");
				},
			}),
		],
		[
			"convertToLlm",
			(streamFn) => ({
				streamFn,
				convertToLlm: () => {
					throw new Error("provider exploded");
				},
			}),
		],
		[
			"transformContext",
			(streamFn) => ({
				streamFn,
				transformContext: async () => {
					throw new Error("provider exploded");
				},
			}),
		],
		[
			"getApiKey",
			(streamFn) => ({
				streamFn,
				getApiKey: () => {
					throw new Error("provider exploded");
				},
			}),
		],
	];

	for (const [name, options] of cases) {
		it(`B2: a throwing ${name} produces the full lifecycle with an error assistant message`, async () => {
			const scripted = createScriptedModel([{ content: "never" }]);
			const agent = new Agent(options(scripted.streamFn));
			const rec = record(agent);
			await agent.prompt("go");
			expect(rec.skeleton()).toEqual(B2_EVENTS);
			expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "error", errorMessage: "provider exploded" });
			expect(agent.state.errorMessage).toBe("provider exploded");
			expect(scripted.calls).toHaveLength(0);
			expectIdle(agent);
		});
	}

	it("a stream that ends without a terminal event ends the message with an error instead of hanging", async () => {
		const streamFn: StreamFn = () => {
			const stream = new AssistantMessageEventStream();
			queueMicrotask(() => stream.end());
			return stream;
		};
		const agent = new Agent({ streamFn });
		const rec = record(agent);
		await agent.prompt("go");
		expect(rec.types()).toEqual(["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end", "turn_end", "agent_end"]);
		expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "error" });
	});
});

describe("5. tool calls of a stopReason length message", () => {
	it("N6: are not executed; each gets an error result about the output token limit, and the loop goes on", async () => {
		const log: string[] = [];
		const scripted = createScriptedModel([
			{ content: [toolCall("echo", { value: "a" }, "t1"), toolCall("echo", { value: "b" }, "t2")], stopReason: "length" },
			{ content: "done" },
		]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [echoTool(log)] }, streamFn: scripted.streamFn });
		const rec = record(agent);
		await agent.prompt("go");
		expect(log).toEqual([]);
		const ends = rec.events.filter((e) => e.type === "tool_execution_end");
		expect(ends).toHaveLength(2);
		for (const end of ends) {
			expect(end.type === "tool_execution_end" && end.isError).toBe(true);
			expect(end.type === "tool_execution_end" && textOf(end.result)).toContain("output token limit");
		}
		expect(scripted.calls).toHaveLength(2);
		expect(roles(agent.state.messages)).toEqual(["user", "assistant(length)", "toolResult:t1", "toolResult:t2", "assistant(stop)"]);
		expectWellFormedRun(rec.events);
	});
});

describe("6. a tool update after its execution settled", () => {
	it("B6: is ignored after the run ended: no event, no rejection", async () => {
		let lateUpdate: AgentToolUpdateCallback<unknown> | undefined;
		const tool = makeTool("t", async (_id, _p, _signal, onUpdate) => {
			lateUpdate = onUpdate;
			onUpdate?.(ok("progress"));
			return ok("done");
		});
		const scripted = createScriptedModel([{ content: [toolCall("t", {}, "t1")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn });
		const rec = record(agent);
		await agent.prompt("go");
		const count = rec.events.length;
		expect(() => lateUpdate?.(ok("late"))).not.toThrow();
		await flush(5);
		expect(rec.events).toHaveLength(count);
		expect(rec.types().filter((t) => t === "tool_execution_update")).toHaveLength(1);
		expect(unhandled).toEqual([]);
	});

	it("B7: is ignored while a sibling tool is still running", async () => {
		let lateUpdate: AgentToolUpdateCallback<unknown> | undefined;
		const firstSettled = deferred();
		const lateSent = deferred();
		const quick = makeTool("quick", async (_id, _p, _signal, onUpdate) => {
			lateUpdate = onUpdate;
			return ok("quick");
		});
		const slow = makeTool("slow", async () => {
			await lateSent.promise;
			return ok("slow");
		});
		const scripted = createScriptedModel([{ content: [toolCall("quick", {}, "q"), toolCall("slow", {}, "s")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [quick, slow] }, streamFn: scripted.streamFn });
		const rec = record(agent);
		agent.subscribe((event) => {
			if (event.type === "tool_execution_end" && event.toolCallId === "q") firstSettled.resolve();
		});
		const run = agent.prompt("go");
		await firstSettled.promise;
		lateUpdate?.(ok("late"));
		await flush(3);
		lateSent.resolve();
		await run;
		expect(rec.types().filter((t) => t === "tool_execution_update")).toEqual([]);
		expect(unhandled).toEqual([]);
	});
});

describe("7. reset() during a run", () => {
	it("B8: throws pi's later message and leaves the transcript intact", async () => {
		const scripted = createScriptedModel([{ content: "answer" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		let thrown: unknown;
		agent.subscribe((event) => {
			if (event.type === "message_start" && event.message.role === "assistant") {
				try {
					agent.reset();
				} catch (error) {
					thrown = error;
				}
			}
		});
		await agent.prompt("question");
		expect(thrown).toBeInstanceOf(Error);
		expect((thrown as Error).message).toBe("Agent is already processing. Wait for completion before resetting.");
		expect(roles(agent.state.messages)).toEqual(["user", "assistant(stop)"]);
	});

	it("reset() when idle clears transcript, error and queues", async () => {
		const scripted = createScriptedModel([{ content: [], stopReason: "error", errorMessage: "x" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await agent.prompt("q");
		agent.steer(user("s"));
		agent.followUp(user("f"));
		agent.reset();
		expect(agent.state.messages).toEqual([]);
		expect(agent.state.errorMessage).toBeUndefined();
		expect(agent.hasQueuedMessages()).toBe(false);
		expectIdle(agent);
	});
});

describe("8. beforeToolCall may block and terminate", () => {
	it("N17: a blocked call with terminate stops the loop after its batch", async () => {
		let executed = false;
		const tool = makeTool("t", async () => {
			executed = true;
			return ok("ran");
		});
		const scripted = createScriptedModel([{ content: [toolCall("t", {}, "t1")] }, { content: "never" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [tool] },
			streamFn: scripted.streamFn,
			beforeToolCall: async () => ({ block: true, reason: "Blocked by policy", terminate: true }),
		});
		await agent.prompt("go");
		expect(executed).toBe(false);
		expect(scripted.calls).toHaveLength(1);
		expect(toolResults(agent)).toMatchObject([{ isError: true, content: [{ type: "text", text: "Blocked by policy" }] }]);
	});

	it("N18: a mixed batch (one blocked with terminate, one runs) continues", async () => {
		const executed: string[] = [];
		const tool = makeTool("t", async (_id, params) => {
			executed.push(String(params["value"]));
			return ok("ran");
		});
		const scripted = createScriptedModel([
			{ content: [toolCall("t", { value: "first" }, "t1"), toolCall("t", { value: "second" }, "t2")] },
			{ content: "done" },
		]);
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [tool] },
			streamFn: scripted.streamFn,
			beforeToolCall: async ({ toolCall }) => (toolCall.id === "t1" ? { block: true, terminate: true } : undefined),
		});
		await agent.prompt("go");
		expect(executed).toEqual(["second"]);
		expect(scripted.calls).toHaveLength(2);
	});
});

describe("9. tool timeouts", () => {
	it("N21: a tool running past toolTimeoutMs is aborted and gets `Tool \"<name>\" timed out after <n> ms`", async () => {
		const signalAborted = deferred<boolean>();
		const sleepy = makeTool("sleepy", async (_id, _p, signal) => {
			await whenAborted(signal);
			signalAborted.resolve(signal?.aborted === true);
			await sleep(30);
			return ok("too late");
		});
		const scripted = createScriptedModel([{ content: [toolCall("sleepy", {}, "t1")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [sleepy] }, streamFn: scripted.streamFn, toolTimeoutMs: 30 });
		const rec = record(agent);
		await agent.prompt("go");
		expect(await signalAborted.promise).toBe(true);
		expect(toolResults(agent)).toMatchObject([{ isError: true, content: [{ type: "text", text: 'Tool "sleepy" timed out after 30 ms' }] }]);
		expect(scripted.calls).toHaveLength(2);
		// The late result is dropped.
		const count = rec.events.length;
		await sleep(60);
		expect(rec.events).toHaveLength(count);
		expectIdle(agent);
	});

	it("afterToolCall is not asked about a timed-out call's late result (its answer would be dropped)", async () => {
		const asked: string[] = [];
		const finishedLate = deferred();
		const sleepy = makeTool("sleepy", async (_id, _p, signal) => {
			await whenAborted(signal);
			finishedLate.resolve();
			return ok("too late");
		});
		// A sibling still running keeps the batch alive when the timed-out call returns late.
		const steady = makeTool("steady", async () => (await sleep(80), ok("steady")), { timeoutMs: 0 });
		const scripted = createScriptedModel([{ content: [toolCall("sleepy", {}, "t1"), toolCall("steady", {}, "t2")] }, { content: "done" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [sleepy, steady] },
			streamFn: scripted.streamFn,
			toolTimeoutMs: 30,
			afterToolCall: async ({ toolCall: call }) => {
				asked.push(call.id);
				return { content: [{ type: "text", text: "rewritten" }], isError: false };
			},
		});
		await agent.prompt("go");
		await finishedLate.promise;
		await sleep(10);
		expect(asked).toEqual(["t2"]);
		expect(toolResults(agent).map((r) => [r.isError, textOf(r)])).toEqual([
			[true, 'Tool "sleepy" timed out after 30 ms'],
			[false, "rewritten"],
		]);
	});

	it("the time limit covers the tool, not a slow afterToolCall after it returned", async () => {
		const quick = makeTool("quick", async () => ok("quick"), { timeoutMs: 20 });
		const scripted = createScriptedModel([{ content: [toolCall("quick", {}, "t1")] }, { content: "done" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [quick] },
			streamFn: scripted.streamFn,
			afterToolCall: async () => {
				await sleep(60);
				return { content: [{ type: "text", text: "reviewed" }] };
			},
		});
		await agent.prompt("go");
		expect(toolResults(agent).map((r) => [r.isError, textOf(r)])).toEqual([[false, "reviewed"]]);
	});

	it("an afterToolCall that never answers is not bounded by the tool's time limit, but abort() still ends the run", async () => {
		const quick = makeTool("quick", async () => ok("quick"), { timeoutMs: 20 });
		const hookAsked = deferred();
		const scripted = createScriptedModel([{ content: [toolCall("quick", {}, "t1")] }, { content: "done" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [quick] },
			streamFn: scripted.streamFn,
			toolAbortGraceMs: 20,
			afterToolCall: () => {
				hookAsked.resolve();
				return new Promise(() => {}); // ignores its signal too
			},
		});
		const run = agent.prompt("go");
		await hookAsked.promise;
		await sleep(60); // past the tool's 20 ms: no timeout ends the call
		expect(agent.state.isStreaming).toBe(true);
		expect(agent.state.pendingToolCalls.has("t1")).toBe(true);
		agent.abort();
		await run;
		expect(agent.state.isStreaming).toBe(false);
		expect(toolResults(agent).map((r) => [r.toolCallId, r.isError])).toEqual([["t1", true]]);
	});

	it("N22: a per-tool timeoutMs overrides the agent's, and 0 disables the timer", async () => {
		const slowOk = (name: string, ms: number, extra: { timeoutMs?: number } = {}) =>
			makeTool(name, async () => {
				await sleep(ms);
				return ok(`${name} ok`);
			}, extra);
		const scripted = createScriptedModel([
			{
				content: [
					toolCall("short", {}, "a"), // tool timeout 30 beats the agent's 10 s
					toolCall("unlimited", {}, "b"), // tool timeout 0 disables the agent's 10 s
				],
			},
			{ content: "done" },
			{ content: [toolCall("plain", {}, "c")] }, // agent timeout 0 disables
			{ content: "done" },
		]);
		const agent = new Agent({
			initialState: {
				model: scripted.model,
				tools: [slowOk("short", 10_000, { timeoutMs: 30 }), slowOk("unlimited", 80, { timeoutMs: 0 }), slowOk("plain", 60)],
			},
			streamFn: scripted.streamFn,
			toolTimeoutMs: 10_000,
		});
		await agent.prompt("go");
		agent.toolTimeoutMs = 0;
		await agent.prompt("again");
		expect(toolResults(agent).map((r) => [r.toolCallId, r.isError, textOf(r)])).toEqual([
			["a", true, 'Tool "short" timed out after 30 ms'],
			["b", false, "unlimited ok"],
			["c", false, "plain ok"],
		]);
	});

	it("a timer shorter than the tool's run does not fire once the tool finished", async () => {
		const tool = makeTool("fast", async () => ok("fast"), { timeoutMs: 40 });
		const scripted = createScriptedModel([{ content: [toolCall("fast", {}, "t1")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn });
		const rec = record(agent);
		await agent.prompt("go");
		const count = rec.events.length;
		await sleep(80);
		expect(rec.events).toHaveLength(count);
		expect(toolResults(agent)[0]?.isError).toBe(false);
	});
});

describe("dispose()", () => {
	// A listener that never returns holds every later event; after dispose() the run settles
	// anyway once toolAbortGraceMs has passed (0: it waits, as before).
	const never = () => new Promise<void>(() => {});
	for (const grace of [40, 0] as const) {
		it(`with a listener that never returns, prompt() and waitForIdle() ${grace ? "settle after toolAbortGraceMs" : "wait when toolAbortGraceMs is 0"}`, async () => {
			const scripted = createScriptedModel([{ content: "answer" }]);
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, toolAbortGraceMs: grace });
			agent.subscribe((event) => (event.type === "turn_start" ? never() : undefined));
			const run = agent.prompt("go");
			await sleep(10);
			agent.dispose();
			const outcome = (promise: Promise<unknown>) => Promise.race([promise.then(() => "settled"), sleep(500).then(() => "waiting")]);
			expect(await outcome(run)).toBe(grace ? "settled" : "waiting");
			expect(await outcome(agent.waitForIdle())).toBe(grace ? "settled" : "waiting");
			expect(agent.state.isStreaming).toBe(!grace);
		});
	}

	// Found by a probe (2026-12-07): the grace's timer was unref'd, so a program with nothing else
	// alive ended with code 13 (an unsettled top-level await) instead of settling its prompt().
	it("a program awaiting the disposed run's prompt() ends with 0 once the grace settles it, with nothing else keeping it alive", () => {
		const program = fileURLToPath(new URL("./fixtures/dispose-hung-listener.ts", import.meta.url));
		const child = spawnSync(process.execPath, ["--import", "tsx", program], { encoding: "utf8", timeout: 30_000 });
		expect(child.signal, "the program did not end").toBeNull();
		expect(child.status, child.stderr).toBe(0);
		const { settledAfterMs } = JSON.parse(child.stdout) as { settledAfterMs: number };
		expect(settledAfterMs).toBeGreaterThanOrEqual(190);
	});

	it("on a loaded machine (the process stalled past toolAbortGraceMs), a disposed run still settles only once its last events reached a listener that keeps taking them", async () => {
		// The grace timer is wall-clock time: a stall longer than it (a busy machine) made it fire
		// while the listener, slow on every third event but never stuck, still had the run's end to
		// take, and prompt() resolved before agent_end reached it (a rare property-test failure).
		const stall = (ms: number) => {
			const end = Date.now() + ms;
			while (Date.now() < end);
		};
		const scripted = createScriptedModel([{ content: "a reply long enough to stream in several deltas" }], { chunkSize: 3 });
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, toolAbortGraceMs: 20 });
		const seen: string[] = [];
		agent.subscribe(async (event) => {
			seen.push(event.type);
			if (seen.length % 3 === 0) await sleep(1);
			if (seen.length === 4) {
				agent.dispose();
				stall(60);
			}
		});
		await agent.prompt("go");
		expect(seen.at(-1)).toBe("agent_end");
		await agent.waitForIdle();
		expect(seen.filter((type) => type === "agent_end")).toHaveLength(1);
	});

	it("with a listener that never returns, a manual compaction's compact() rejects after toolAbortGraceMs", async () => {
		const long = (label: string) => `${label} ${"x".repeat(400)}`;
		const scripted = createScriptedModel([]);
		const agent = new Agent({
			initialState: { model: scripted.model, messages: [user(long("u1")), assistant(long("a1")), user("u2")] },
			streamFn: scripted.streamFn,
			compaction: { enabled: true, keepRecentTokens: 1, summarize: async () => "summary" },
			toolAbortGraceMs: 40,
		});
		agent.subscribe((event) => (event.type === "auto_compaction_start" ? never() : undefined));
		const compacting = agent.compact();
		compacting.catch(() => {});
		await sleep(10);
		agent.dispose();
		await expect(Promise.race([compacting, sleep(500).then(() => "waiting")])).rejects.toThrow(/disposed/);
	});

	async function disposeDuringToolExecution() {
		const running = deferred();
		const toolSignal = deferred<boolean>();
		const tool = makeTool("slow", async (_id, _p, signal) => {
			running.resolve();
			await whenAborted(signal);
			toolSignal.resolve(signal?.aborted === true);
			return ok("stopped");
		});
		const scripted = createScriptedModel([{ content: [toolCall("slow", {}, "t1")] }, { content: "never" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn });
		const rec = record(agent);
		const run = agent.prompt("go");
		await running.promise;
		agent.dispose();
		await run;
		return { agent, rec, scripted, toolSawAbort: await toolSignal.promise };
	}

	it("aborts the run during tool execution, closes its events and ends the machine", async () => {
		const { agent, rec, scripted, toolSawAbort } = await disposeDuringToolExecution();
		expect(toolSawAbort).toBe(true);
		const snapshot = agent.actor.getSnapshot();
		expect(snapshot.status).toBe("done");
		expect(snapshot.value).toBe("ended");
		for (const child of Object.values(snapshot.children)) expect(child?.getSnapshot().status).not.toBe("active");
		expect(agent.state.isStreaming).toBe(false);
		expect(agent.state.pendingToolCalls.size).toBe(0);
		expectWellFormedRun(rec.events);
		expectValidTranscript(agent.state.messages);
		expect(toolResults(agent)).toMatchObject([{ toolCallId: "t1", isError: true }]);
		expect(scripted.calls).toHaveLength(1);
	});

	it("leaves no child actors behind when disposed during tool execution", async () => {
		const { agent } = await disposeDuringToolExecution();
		expect(Object.keys(agent.actor.getSnapshot().children)).toEqual([]);
	});

	it("dispose right after a tool-call reply completed still answers every tool call", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "x" }, "t1")] }, { content: "never" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [echoTool()] }, streamFn: scripted.streamFn });
		const rec = record(agent);
		agent.subscribe((event) => {
			if (event.type === "message_end" && event.message.role === "assistant") agent.dispose();
		});
		await agent.prompt("go");
		expectWellFormedRun(rec.events);
		expectValidTranscript(agent.state.messages);
		expect(toolResults(agent)).toMatchObject([{ toolCallId: "t1", isError: true }]);
	});

	it("later prompt, continue, steer and followUp fail with a clear error; abort and dispose are no-ops", async () => {
		const agent = new Agent({ streamFn: waitForAbortStreamFn().streamFn });
		agent.dispose();
		await expect(agent.prompt("x")).rejects.toThrow(/disposed/);
		await expect(agent.continue()).rejects.toThrow(/disposed/);
		expect(() => agent.steer(user("s"))).toThrow(/disposed/);
		expect(() => agent.followUp(user("f"))).toThrow(/disposed/);
		expect(() => agent.abort()).not.toThrow();
		expect(() => agent.dispose()).not.toThrow();
		await expect(agent.waitForIdle()).resolves.toBeUndefined();
		expect(agent.actor.getSnapshot().status).toBe("done");
	});

	// The queues and their modes stay the agent's after dispose(): clearing them and setting a mode
	// work and read back. They used to be sent to the ended machine, which dropped them with a
	// warning of XState's on the console, and reads came from its last context.
	const queuesAfterDispose = async (agent: Agent) => {
		const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
		try {
			agent.clearAllQueues();
			expect(agent.hasQueuedMessages()).toBe(false);
			agent.steeringMode = "all";
			agent.followUpMode = "all";
			expect([agent.steeringMode, agent.followUpMode]).toEqual(["all", "all"]);
			expect(warn).not.toHaveBeenCalled();
		} finally {
			warn.mockRestore();
		}
	};

	it("queues can be cleared and modes set after dispose() (agent.actor read)", async () => {
		const agent = new Agent({ streamFn: waitForAbortStreamFn().streamFn });
		expect(agent.actor.getSnapshot().value).toBe("idle");
		agent.steer(user("s"));
		agent.followUp(user("f"));
		agent.dispose();
		expect(agent.hasQueuedMessages()).toBe(true);
		await queuesAfterDispose(agent);
	});

	it("queues can be cleared and modes set after dispose(), while the disposed run still settles", async () => {
		const scripted = createScriptedModel([{ content: "answer" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, toolAbortGraceMs: 0 });
		const release = deferred();
		agent.subscribe((event) => (event.type === "turn_start" ? release.promise : undefined));
		const run = agent.prompt("go");
		await sleep(5);
		agent.steer(user("s"));
		agent.followUp(user("f"));
		agent.dispose();
		// Not read back before clearing: the first call after dispose() must not undo its own change.
		await queuesAfterDispose(agent);
		release.resolve();
		await run;
		// The run's end hands the queues back to the agent: what was cleared stays cleared.
		expect(agent.hasQueuedMessages()).toBe(false);
		expect(agent.steeringMode).toBe("all");
	});

	// agent_start is delivered while the machine is still taking a step: what the listener sends
	// waits in XState's mailbox, so `dispose` reaches the machine after everything sent before it
	// and would end it before anything sent after it.
	for (const clear of [true, false]) {
		it(`a listener that queues, disposes${clear ? " and clears the queues" : ""} inside a machine step: ${clear ? "the clear holds" : "the message stays queued"}`, async () => {
			const scripted = createScriptedModel([{ content: "answer" }]);
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
			const read: boolean[] = [];
			const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
			agent.subscribe((event) => {
				if (event.type !== "agent_start") return;
				agent.followUp(user("f"));
				agent.dispose();
				if (clear) agent.clearAllQueues();
				read.push(agent.hasQueuedMessages());
			});
			try {
				await agent.prompt("go");
				read.push(agent.hasQueuedMessages());
				expect(warn).not.toHaveBeenCalled();
			} finally {
				warn.mockRestore();
			}
			expect(read).toEqual([!clear, !clear]);
		});
	}

	it("while streaming: the partial reply is closed as aborted and prompt() resolves", async () => {
		const { streamFn, started } = waitForAbortStreamFn();
		const agent = new Agent({ streamFn });
		const rec = record(agent);
		const run = agent.prompt("x");
		await started;
		await flush(3);
		agent.dispose();
		await run;
		expectWellFormedRun(rec.events);
		expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "aborted" });
		expect(Object.keys(agent.actor.getSnapshot().children)).toEqual([]);
		expect(runsOf(rec.events)).toHaveLength(1);
	});
});
