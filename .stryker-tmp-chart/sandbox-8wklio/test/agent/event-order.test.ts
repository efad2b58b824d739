/**
 * Conformance with the event orders recorded from pi-agent-core 0.73.1 (reference §1.6,
 * traces T1–T20). Each expected list is the recorded trace, in the same notation.
 */
// @ts-nocheck

import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel, text, thinking, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import {
	assistant,
	collapse,
	deferred,
	doneOnlyStreamFn,
	echoTool,
	expectIdle,
	expectWellFormedRun,
	makeTool,
	ok,
	record,
	roles,
	textOf,
	user,
	userTextsOf,
	waitForAbortStreamFn,
} from "./helpers.js";

/** A tool whose "slow" call reports progress and finishes only after the other call ended. */
function slowAndFastTool(otherEnded: Promise<void>) {
	return makeTool("work", async (_id, params, _signal, onUpdate) => {
		if (params["value"] === "slow") {
			onUpdate?.(ok("halfway"));
			await otherEnded;
		}
		return ok(`did:${String(params["value"])}`);
	});
}

const TOOL_PROLOGUE = [
	"agent_start",
	"turn_start",
	"message_start:user(go)",
	"message_end:user(go)",
	"message_start:assistant",
	"message_end:assistant(toolUse)",
];
const FINAL_TURN = ["turn_start", "message_start:assistant", "message_end:assistant(stop)", "turn_end(toolResults=0)"];

describe("event order (pi 0.73.1 traces)", () => {
	it("T1: a plain reply streams thinking and text between the assistant's message_start and message_end", async () => {
		const scripted = createScriptedModel([{ content: [thinking("hmm"), text("Hello world!")] }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const rec = record(agent);
		await agent.prompt("hi");
		expect(collapse(rec.lines())).toEqual([
			"agent_start",
			"turn_start",
			"message_start:user(hi)",
			"message_end:user(hi)",
			"message_start:assistant",
			"message_update:thinking_start",
			"message_update:thinking_delta",
			"message_update:thinking_end",
			"message_update:text_start",
			"message_update:text_delta x3",
			"message_update:text_end",
			"message_end:assistant(stop)",
			"turn_end(toolResults=0)",
			"agent_end(messages=2)",
		]);
		expect(roles(agent.state.messages)).toEqual(["user", "assistant(stop)"]);
		expectIdle(agent);
	});

	it("T1 (done-only mock): a stream without start gets message_start right before message_end and no updates", async () => {
		const streamFn = doneOnlyStreamFn(() => assistant("Hi there!"));
		const agent = new Agent({ streamFn });
		const rec = record(agent);
		await agent.prompt("hi");
		expect(rec.lines()).toEqual([
			"agent_start",
			"turn_start",
			"message_start:user(hi)",
			"message_end:user(hi)",
			"message_start:assistant",
			"message_end:assistant(stop)",
			"turn_end(toolResults=0)",
			"agent_end(messages=2)",
		]);
	});

	it("T2: parallel calls preflight in order, end in completion order, and record results in source order", async () => {
		const t2Ended = deferred();
		const scripted = createScriptedModel([
			{ content: [toolCall("work", { value: "slow" }, "t1"), toolCall("work", { value: "fast" }, "t2")] },
			{ content: "done" },
		]);
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [slowAndFastTool(t2Ended.promise)] },
			streamFn: scripted.streamFn,
		});
		const rec = record(agent);
		agent.subscribe((event) => {
			if (event.type === "tool_execution_end" && event.toolCallId === "t2") t2Ended.resolve();
		});
		await agent.prompt("go");
		expect(rec.skeleton()).toEqual([
			...TOOL_PROLOGUE,
			"tool_execution_start(t1)",
			"tool_execution_start(t2)",
			"tool_execution_update(t1)",
			"tool_execution_end(t2)",
			"tool_execution_end(t1)",
			"message_start:toolResult(t1)",
			"message_end:toolResult(t1)",
			"message_start:toolResult(t2)",
			"message_end:toolResult(t2)",
			"turn_end(toolResults=2)",
			...FINAL_TURN,
			"agent_end(messages=5)",
		]);
		const turnEnd = rec.events.find((event) => event.type === "turn_end");
		expect(turnEnd?.type === "turn_end" && turnEnd.toolResults.map((result) => result.toolCallId)).toEqual(["t1", "t2"]);
		expect(roles(agent.state.messages)).toEqual(["user", "assistant(toolUse)", "toolResult:t1", "toolResult:t2", "assistant(stop)"]);
		expectWellFormedRun(rec.events);
		expectIdle(agent);
	});

	it("T3: sequential mode runs each call to its tool result message before starting the next", async () => {
		const log: string[] = [];
		const scripted = createScriptedModel([
			{ content: [toolCall("echo", { value: "a" }, "t1"), toolCall("echo", { value: "b" }, "t2")] },
			{ content: "done" },
		]);
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [echoTool(log)] },
			streamFn: scripted.streamFn,
			toolExecution: "sequential",
		});
		const rec = record(agent);
		await agent.prompt("go");
		expect(rec.skeleton()).toEqual([
			...TOOL_PROLOGUE,
			"tool_execution_start(t1)",
			"tool_execution_end(t1)",
			"message_start:toolResult(t1)",
			"message_end:toolResult(t1)",
			"tool_execution_start(t2)",
			"tool_execution_end(t2)",
			"message_start:toolResult(t2)",
			"message_end:toolResult(t2)",
			"turn_end(toolResults=2)",
			...FINAL_TURN,
			"agent_end(messages=5)",
		]);
		expect(log).toEqual(["a", "b"]);
	});

	it("T4: an unknown tool gets `Tool <name> not found` during preflight, before the other call ends", async () => {
		const scripted = createScriptedModel([
			{ content: [toolCall("echo", { value: "a" }, "t1"), toolCall("nope", {}, "t2")] },
			{ content: "done" },
		]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [echoTool()] }, streamFn: scripted.streamFn });
		const rec = record(agent);
		await agent.prompt("go");
		expect(rec.skeleton()).toEqual([
			...TOOL_PROLOGUE,
			"tool_execution_start(t1)",
			"tool_execution_start(t2)",
			"tool_execution_end(t2,err:Tool nope not found)",
			"tool_execution_end(t1)",
			"message_start:toolResult(t1)",
			"message_end:toolResult(t1)",
			"message_start:toolResult(t2,err)",
			"message_end:toolResult(t2,err)",
			"turn_end(toolResults=2)",
			...FINAL_TURN,
			"agent_end(messages=5)",
		]);
	});

	it("T5: a call with invalid arguments ends during preflight; a convertible one runs with converted arguments", async () => {
		const received: unknown[] = [];
		const num = makeTool(
			"num",
			async (_id, params) => {
				received.push(params["n"]);
				return ok(`n=${String(params["n"])} (${typeof params["n"]})`);
			},
			{ parameters: { type: "object", properties: { n: { type: "number" } }, required: ["n"] } },
		);
		const scripted = createScriptedModel([
			{ content: [toolCall("num", { n: "not-a-number" }, "t1"), toolCall("num", { n: "42" }, "t2")] },
			{ content: "done" },
		]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [num] }, streamFn: scripted.streamFn });
		const rec = record(agent);
		await agent.prompt("go");
		const validation =
			'Validation failed for tool "num":\n  - n: must be number\n\nReceived arguments:\n{\n  "n": "not-a-number"\n}';
		expect(rec.skeleton()).toEqual([
			...TOOL_PROLOGUE,
			"tool_execution_start(t1)",
			`tool_execution_end(t1,err:${validation})`,
			"tool_execution_start(t2)",
			"tool_execution_end(t2)",
			"message_start:toolResult(t1,err)",
			"message_end:toolResult(t1,err)",
			"message_start:toolResult(t2)",
			"message_end:toolResult(t2)",
			"turn_end(toolResults=2)",
			...FINAL_TURN,
			"agent_end(messages=5)",
		]);
		expect(received).toEqual([42]);
		expect(agent.state.messages.filter((m) => m.role === "toolResult").map(textOf)).toEqual([validation, "n=42 (number)"]);
	});

	it("T6: blocked calls end right after their start, with the reason or `Tool execution was blocked`", async () => {
		let executed = false;
		let afterCalls = 0;
		const tool = makeTool("echo", async () => {
			executed = true;
			return ok("ran");
		});
		const scripted = createScriptedModel([
			{ content: [toolCall("echo", {}, "t1"), toolCall("echo", {}, "t2")] },
			{ content: "done" },
		]);
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [tool] },
			streamFn: scripted.streamFn,
			beforeToolCall: async ({ toolCall }) => (toolCall.id === "t1" ? { block: true, reason: "nope" } : { block: true }),
			afterToolCall: async () => {
				afterCalls++;
				return undefined;
			},
		});
		const rec = record(agent);
		await agent.prompt("go");
		expect(rec.skeleton()).toEqual([
			...TOOL_PROLOGUE,
			"tool_execution_start(t1)",
			"tool_execution_end(t1,err:nope)",
			"tool_execution_start(t2)",
			"tool_execution_end(t2,err:Tool execution was blocked)",
			"message_start:toolResult(t1,err)",
			"message_end:toolResult(t1,err)",
			"message_start:toolResult(t2,err)",
			"message_end:toolResult(t2,err)",
			"turn_end(toolResults=2)",
			...FINAL_TURN,
			"agent_end(messages=5)",
		]);
		expect(executed).toBe(false);
		expect(afterCalls).toBe(0);
	});

	it("T7: a throwing tool becomes an error result with its message and empty details, and the loop goes on", async () => {
		const tool = makeTool("boom", async () => {
			throw new Error("boom");
		});
		const scripted = createScriptedModel([{ content: [toolCall("boom", {}, "t1")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn });
		const rec = record(agent);
		await agent.prompt("go");
		expect(rec.skeleton()).toEqual([
			...TOOL_PROLOGUE,
			"tool_execution_start(t1)",
			"tool_execution_end(t1,err:boom)",
			"message_start:toolResult(t1,err)",
			"message_end:toolResult(t1,err)",
			"turn_end(toolResults=1)",
			...FINAL_TURN,
			"agent_end(messages=4)",
		]);
		const result = agent.state.messages[2];
		expect(result).toMatchObject({ role: "toolResult", isError: true, content: [{ type: "text", text: "boom" }], details: {} });
	});

	it("T9: aborting while a reply streams keeps its partial text and ends it with stopReason aborted", async () => {
		const scripted = createScriptedModel([{ content: "this is a long reply", delayMs: 25 }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const rec = record(agent);
		agent.subscribe((event) => {
			if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") agent.abort();
		});
		await agent.prompt("hi");
		expect(collapse(rec.lines())).toEqual([
			"agent_start",
			"turn_start",
			"message_start:user(hi)",
			"message_end:user(hi)",
			"message_start:assistant",
			"message_update:text_start",
			"message_update:text_delta",
			"message_end:assistant(aborted:Request was aborted)",
			"turn_end(toolResults=0)",
			"agent_end(messages=2)",
		]);
		const last = agent.state.messages[1];
		expect(last?.role === "assistant" && last.content).toEqual([{ type: "text", text: "this" }]);
		expect(agent.state.errorMessage).toBe("Request was aborted");
		expect(scripted.calls).toHaveLength(1);
		expectIdle(agent);
	});

	it("T11: a steer sent while tools run waits for the whole batch and opens the next turn", async () => {
		const scripted = createScriptedModel([
			{ content: [toolCall("steerer", {}, "t1"), toolCall("echo", { value: "b" }, "t2")] },
			{ content: "done" },
		]);
		let agentRef: Agent | undefined;
		const steerer = makeTool("steerer", async () => {
			agentRef?.steer(user("STEER"));
			return ok("steered");
		});
		const agent = new Agent({ initialState: { model: scripted.model, tools: [steerer, echoTool()] }, streamFn: scripted.streamFn });
		agentRef = agent;
		const rec = record(agent);
		await agent.prompt("go");
		expect(rec.skeleton()).toEqual([
			...TOOL_PROLOGUE,
			"tool_execution_start(t1)",
			"tool_execution_start(t2)",
			"tool_execution_end(t1)",
			"tool_execution_end(t2)",
			"message_start:toolResult(t1)",
			"message_end:toolResult(t1)",
			"message_start:toolResult(t2)",
			"message_end:toolResult(t2)",
			"turn_end(toolResults=2)",
			"turn_start",
			"message_start:user(STEER)",
			"message_end:user(STEER)",
			"message_start:assistant",
			"message_end:assistant(stop)",
			"turn_end(toolResults=0)",
			"agent_end(messages=6)",
		]);
		expect(scripted.calls).toHaveLength(2);
		expect(userTextsOf(scripted.calls[1] ?? { messages: [] })).toContain("STEER");
	});

	it("T11b: a steer queued while a text reply streams starts another turn instead of ending the run", async () => {
		const scripted = createScriptedModel([{ content: "first" }, { content: "second" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const rec = record(agent);
		let steered = false;
		agent.subscribe((event) => {
			if (event.type === "message_start" && event.message.role === "assistant" && !steered) {
				steered = true;
				agent.steer(user("STEER"));
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
			"turn_start",
			"message_start:user(STEER)",
			"message_end:user(STEER)",
			"message_start:assistant",
			"message_end:assistant(stop)",
			"turn_end(toolResults=0)",
			"agent_end(messages=4)",
		]);
		expect(scripted.calls).toHaveLength(2);
	});

	it("T12: follow-ups (one-at-a-time) run one per turn when the agent would stop", async () => {
		const scripted = createScriptedModel([{ content: "a" }, { content: "b" }, { content: "c" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const rec = record(agent);
		let queued = false;
		agent.subscribe((event) => {
			if (event.type === "message_start" && event.message.role === "assistant" && !queued) {
				queued = true;
				agent.followUp(user("F1"));
				agent.followUp(user("F2"));
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
			"turn_start",
			"message_start:user(F1)",
			"message_end:user(F1)",
			"message_start:assistant",
			"message_end:assistant(stop)",
			"turn_end(toolResults=0)",
			"turn_start",
			"message_start:user(F2)",
			"message_end:user(F2)",
			"message_start:assistant",
			"message_end:assistant(stop)",
			"turn_end(toolResults=0)",
			"agent_end(messages=6)",
		]);
		expect(scripted.calls).toHaveLength(3);
		expect(agent.hasQueuedMessages()).toBe(false);
	});

	it("T12b: follow-ups in mode all are injected together in one turn", async () => {
		const scripted = createScriptedModel([{ content: "a" }, { content: "b" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, followUpMode: "all" });
		const rec = record(agent);
		let queued = false;
		agent.subscribe((event) => {
			if (event.type === "message_start" && event.message.role === "assistant" && !queued) {
				queued = true;
				agent.followUp(user("F1"));
				agent.followUp(user("F2"));
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
			"turn_start",
			"message_start:user(F1)",
			"message_end:user(F1)",
			"message_start:user(F2)",
			"message_end:user(F2)",
			"message_start:assistant",
			"message_end:assistant(stop)",
			"turn_end(toolResults=0)",
			"agent_end(messages=5)",
		]);
		expect(scripted.calls).toHaveLength(2);
	});

	it("T13a: continue() from a user tail emits no events for the existing transcript", async () => {
		const scripted = createScriptedModel([{ content: "reply" }]);
		const agent = new Agent({ initialState: { model: scripted.model, messages: [user("earlier")] }, streamFn: scripted.streamFn });
		const rec = record(agent);
		await agent.continue();
		expect(rec.skeleton()).toEqual([
			"agent_start",
			"turn_start",
			"message_start:assistant",
			"message_end:assistant(stop)",
			"turn_end(toolResults=0)",
			"agent_end(messages=1)",
		]);
		expect(roles(agent.state.messages)).toEqual(["user", "assistant(stop)"]);
	});

	it("T13b: continue() from an assistant tail with nothing queued rejects and emits nothing", async () => {
		const scripted = createScriptedModel([{ content: "never" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, messages: [user("q"), assistant("a")] },
			streamFn: scripted.streamFn,
		});
		const rec = record(agent);
		await expect(agent.continue()).rejects.toThrow("Cannot continue from message role: assistant");
		expect(rec.events).toEqual([]);
		expect(scripted.calls).toHaveLength(0);
		expectIdle(agent);
	});

	it("T13c: continue() from an assistant tail runs queued steers one per turn, the first as the prompt", async () => {
		const scripted = createScriptedModel([{ content: "r1" }, { content: "r2" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, messages: [user("q"), assistant("a")] },
			streamFn: scripted.streamFn,
		});
		agent.steer(user("S1"));
		agent.steer(user("S2"));
		const rec = record(agent);
		await agent.continue();
		expect(rec.skeleton()).toEqual([
			"agent_start",
			"turn_start",
			"message_start:user(S1)",
			"message_end:user(S1)",
			"message_start:assistant",
			"message_end:assistant(stop)",
			"turn_end(toolResults=0)",
			"turn_start",
			"message_start:user(S2)",
			"message_end:user(S2)",
			"message_start:assistant",
			"message_end:assistant(stop)",
			"turn_end(toolResults=0)",
			"agent_end(messages=4)",
		]);
		expect(agent.state.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant"]);
		expect(scripted.calls).toHaveLength(2);
	});

	it("T13d: continue() on an empty transcript rejects with `No messages to continue from`", async () => {
		const agent = new Agent({ streamFn: createScriptedModel([]).streamFn });
		await expect(agent.continue()).rejects.toThrow("No messages to continue from");
		expectIdle(agent);
	});

	it("T14: a provider error ends the run after turn_end, ignoring tool calls in the failed message", async () => {
		let executed = false;
		const tool = makeTool("echo", async () => {
			executed = true;
			return ok("ran");
		});
		const scripted = createScriptedModel([
			{ content: [toolCall("echo", {}, "t1")], stopReason: "error", errorMessage: "429 rate limited" },
		]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn });
		const rec = record(agent);
		await agent.prompt("go");
		expect(rec.skeleton()).toEqual([
			"agent_start",
			"turn_start",
			"message_start:user(go)",
			"message_end:user(go)",
			"message_start:assistant",
			"message_end:assistant(error:429 rate limited)",
			"turn_end(toolResults=0)",
			"agent_end(messages=2)",
		]);
		expect(executed).toBe(false);
		expect(agent.state.errorMessage).toBe("429 rate limited");
		expect(roles(agent.state.messages)).toEqual(["user", "assistant(error)"]);
	});

	it("T14b: an error without a preceding start synthesises message_start right before message_end", async () => {
		const streamFn = doneOnlyStreamFn(() => assistant([], "error", "401"));
		const agent = new Agent({ streamFn });
		const rec = record(agent);
		await agent.prompt("go");
		expect(rec.lines()).toEqual([
			"agent_start",
			"turn_start",
			"message_start:user(go)",
			"message_end:user(go)",
			"message_start:assistant",
			"message_end:assistant(error:401)",
			"turn_end(toolResults=0)",
			"agent_end(messages=2)",
		]);
		expect(agent.state.errorMessage).toBe("401");
	});

	it("T16: when every result in the batch terminates, the run ends after turn_end with no further LLM call", async () => {
		const tool = makeTool("finish", async () => ({ ...ok("bye"), terminate: true }));
		const scripted = createScriptedModel([{ content: [toolCall("finish", {}, "t1")] }, { content: "never" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn });
		const rec = record(agent);
		await agent.prompt("go");
		expect(rec.skeleton()).toEqual([
			...TOOL_PROLOGUE,
			"tool_execution_start(t1)",
			"tool_execution_end(t1)",
			"message_start:toolResult(t1)",
			"message_end:toolResult(t1)",
			"turn_end(toolResults=1)",
			"agent_end(messages=3)",
		]);
		expect(scripted.calls).toHaveLength(1);
		const result = agent.state.messages[2];
		expect(result && "terminate" in result).toBe(false);
	});

	it("T20: prompt() while a run is active rejects with pi's message and starts nothing", async () => {
		const { streamFn } = waitForAbortStreamFn();
		const agent = new Agent({ streamFn });
		const streaming = deferred();
		agent.subscribe((event) => {
			if (event.type === "message_start" && event.message.role === "assistant") streaming.resolve();
		});
		const running = agent.prompt("first");
		await streaming.promise;
		const events: AgentEvent[] = [];
		agent.subscribe((event) => {
			events.push(event);
		});
		expect(agent.state.isStreaming).toBe(true);
		await expect(agent.prompt("second")).rejects.toThrow(
			"Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.",
		);
		// Listeners are a live set, as in pi: one added while message_start is being delivered
		// receives it too (recorded from pi 0.73.1). The refused prompt itself adds nothing.
		expect(events.map((event) => event.type)).toEqual(["message_start"]);
		agent.abort();
		await running;
		expectIdle(agent);
	});

	it("message_start carries a copy of the partial while message_end carries the final message itself", async () => {
		const scripted = createScriptedModel([{ content: "hello" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const rec = record(agent);
		await agent.prompt("hi");
		const start = rec.events.find((e) => e.type === "message_start" && e.message.role === "assistant");
		const end = rec.events.find((e) => e.type === "message_end" && e.message.role === "assistant");
		expect(end?.type === "message_end" && end.message).toBe(agent.state.messages[1]);
		expect(start?.type === "message_start" && start.message).not.toBe(agent.state.messages[1]);
	});
});
