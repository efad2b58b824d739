/**
 * dispose() in the middle of a run, in each place it can find the run: whatever is open is
 * closed (the streaming reply keeps what streamed, started tool calls get results, the turn
 * and the run end), and the machine's transcript says the same as the events.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import type { ToolCall } from "../../src/types/content.js";
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../../src/types/messages.js";
import { assistant, deferred, expectValidTranscript, expectWellFormedRun, makeTool, manualStream, ok, record, sleep, textOf, user, whenAborted } from "../agent/helpers.js";

const DISPOSED = "Agent was disposed";

function toolResults(messages: readonly AgentMessage[]): [string, string][] {
	return messages.filter((message): message is ToolResultMessage => message.role === "toolResult").map((result) => [result.toolCallId, textOf(result)]);
}

function turnEnds(events: readonly AgentEvent[]): Extract<AgentEvent, { type: "turn_end" }>[] {
	return events.filter((event): event is Extract<AgentEvent, { type: "turn_end" }> => event.type === "turn_end");
}

describe("dispose() while a reply streams", () => {
	it("closes the reply as aborted with what had streamed, then the turn (no tool results) and the run", async () => {
		const hand = manualStream();
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model }, streamFn: hand.streamFn });
		const actor = agent.actor;
		const rec = record(agent);
		const streamed = deferred();
		agent.subscribe((event) => {
			if (event.type === "message_update") streamed.resolve();
		});
		const run = agent.prompt("go");
		await hand.opened;
		hand.start();
		hand.text("partial answer");
		await streamed.promise;
		agent.dispose();
		await run;
		expectWellFormedRun(rec.events);
		const reply = agent.state.messages.at(-1) as AssistantMessage;
		expect(reply).toMatchObject({ role: "assistant", stopReason: "aborted", errorMessage: DISPOSED });
		expect(textOf(reply)).toBe("partial answer");
		expect(turnEnds(rec.events).map((event) => event.toolResults)).toEqual([[]]);
		const end = rec.events.at(-1);
		expect(end?.type === "agent_end" ? end.messages.map((message) => message.role) : []).toEqual(["user", "assistant"]);
		expect(actor.getSnapshot().context.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
		expect(textOf(actor.getSnapshot().context.messages.at(-1))).toBe("partial answer");
	});

	it("streaming tool execution: the started call is answered, the call held back behind it never starts", async () => {
		const hand = manualStream();
		const exclusiveRunning = deferred();
		const exclusive = makeTool(
			"exclusive",
			async (_id, _params, signal) => {
				exclusiveRunning.resolve();
				await whenAborted(signal);
				return ok("stopped");
			},
			{ executionMode: "sequential" },
		);
		const other = makeTool("other", async () => ok("other"));
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model, tools: [exclusive, other] }, streamFn: hand.streamFn, toolExecution: "streaming" });
		const rec = record(agent);
		const run = agent.prompt("go");
		await hand.opened;
		hand.start();
		hand.toolCallEnd({ type: "toolCall", id: "e", name: "exclusive", arguments: {} });
		hand.toolCallEnd({ type: "toolCall", id: "o", name: "other", arguments: {} });
		await exclusiveRunning.promise;
		agent.dispose();
		await run;
		expectWellFormedRun(rec.events);
		expectValidTranscript(agent.state.messages);
		expect(rec.events.filter((event) => event.type === "tool_execution_start").map((event) => (event.type === "tool_execution_start" ? event.toolCallId : ""))).toEqual(["e"]);
		expect(toolResults(agent.state.messages)).toEqual([["e", DISPOSED]]);
		expect(turnEnds(rec.events).at(-1)?.toolResults.map((result) => (result as ToolResultMessage).toolCallId)).toEqual(["e"]);
	});
});

describe("dispose() after a reply completed, before the loop went on", () => {
	async function disposeAtMessageEnd(replies: Parameters<typeof createScriptedModel>[0], options: Partial<ConstructorParameters<typeof Agent>[0]> = {}) {
		const scripted = createScriptedModel(replies);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [makeTool("echo", async () => ok("echoed"))] }, streamFn: scripted.streamFn, ...options });
		const rec = record(agent);
		agent.subscribe(async (event) => {
			if (event.type === "message_end" && (event.message as { role?: string }).role === "assistant") {
				await sleep(1);
				agent.dispose();
			}
		});
		await agent.prompt("go");
		return { agent, rec, scripted };
	}

	it("a text reply: the turn and the run end with it", async () => {
		const { agent, rec } = await disposeAtMessageEnd([{ content: "complete" }, { content: "never" }]);
		expectWellFormedRun(rec.events);
		expect(agent.state.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
		expect(turnEnds(rec.events)).toHaveLength(1);
		expect(textOf(turnEnds(rec.events)[0]?.message)).toBe("complete");
		expect(turnEnds(rec.events)[0]?.toolResults).toEqual([]);
	});

	it("an aborted tool-call reply: its calls never run and get no results", async () => {
		const { agent, rec } = await disposeAtMessageEnd([{ content: [toolCall("echo", {}, "t1")], stopReason: "aborted" }, { content: "never" }]);
		expectWellFormedRun(rec.events);
		expect(toolResults(agent.state.messages)).toEqual([]);
		expect(rec.events.some((event) => event.type === "tool_execution_start")).toBe(false);
	});

	it("a tool-call reply: each call is answered as disposed, none runs", async () => {
		const { agent, rec, scripted } = await disposeAtMessageEnd([{ content: [toolCall("echo", {}, "t1"), toolCall("echo", {}, "t2")] }, { content: "never" }]);
		expectWellFormedRun(rec.events);
		expect(scripted.calls).toHaveLength(1);
		expect(toolResults(agent.state.messages)).toEqual([
			["t1", DISPOSED],
			["t2", DISPOSED],
		]);
	});

	it("a streaming reply that failed after a call started: that call is answered, the one never started is not", async () => {
		const hand = manualStream();
		const running = deferred();
		const exclusive = makeTool(
			"exclusive",
			async (_id, _params, signal) => {
				running.resolve();
				await whenAborted(signal);
				return ok("stopped");
			},
			{ executionMode: "sequential" },
		);
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model, tools: [exclusive, makeTool("other", async () => ok("o"))] }, streamFn: hand.streamFn, toolExecution: "streaming" });
		const rec = record(agent);
		let disposed = false;
		agent.subscribe(async (event) => {
			// The failed reply is recorded in two parts; the first (the started call) ends while the loop waits.
			if (event.type === "message_end" && (event.message as { role?: string }).role === "assistant" && !disposed) {
				disposed = true;
				await sleep(1);
				agent.dispose();
			}
		});
		const run = agent.prompt("go");
		await hand.opened;
		hand.start();
		const first: ToolCall = { type: "toolCall", id: "e", name: "exclusive", arguments: {} };
		const second: ToolCall = { type: "toolCall", id: "o", name: "other", arguments: {} };
		hand.toolCallEnd(first);
		hand.toolCallEnd(second);
		await running.promise;
		// The provider fails after both calls streamed; "other" is still held back behind "exclusive".
		hand.fail("provider failed");
		await run;
		expectWellFormedRun(rec.events);
		expectValidTranscript(agent.state.messages);
		expect(toolResults(agent.state.messages)).toEqual([["e", DISPOSED]]);
		expect(rec.events.some((event) => event.type === "tool_execution_start" && event.toolCallId === "o")).toBe(false);
	});
});

describe("dispose() while tools run", () => {
	it("sequential batch: the running call and the queued one are both answered", async () => {
		const running = deferred();
		const slow = makeTool("slow", async (_id, _params, signal) => {
			running.resolve();
			await whenAborted(signal);
			return ok("stopped");
		});
		const scripted = createScriptedModel([{ content: [toolCall("slow", {}, "t1"), toolCall("slow", {}, "t2")] }, { content: "never" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [slow] }, streamFn: scripted.streamFn, toolExecution: "sequential" });
		const rec = record(agent);
		const run = agent.prompt("go");
		await running.promise;
		agent.dispose();
		await run;
		expectWellFormedRun(rec.events);
		expect(toolResults(agent.state.messages)).toEqual([
			["t1", DISPOSED],
			["t2", DISPOSED],
		]);
	});

	it("a call waiting for beforeToolCall is answered as disposed", async () => {
		const asking = deferred();
		const scripted = createScriptedModel([{ content: [toolCall("echo", {}, "t1")] }, { content: "never" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [makeTool("echo", async () => ok("ran"))] },
			streamFn: scripted.streamFn,
			beforeToolCall: async (_context, signal) => {
				asking.resolve();
				await whenAborted(signal);
				return undefined;
			},
		});
		const rec = record(agent);
		const run = agent.prompt("go");
		await asking.promise;
		agent.dispose();
		await run;
		expectWellFormedRun(rec.events);
		expect(toolResults(agent.state.messages)).toEqual([["t1", DISPOSED]]);
	});
});

describe("dispose() while a parallel batch is being prepared", () => {
	it("a call already let through by beforeToolCall, waiting for its siblings, is answered as disposed and never runs", async () => {
		const ran: string[] = [];
		const scripted = createScriptedModel([{ content: [toolCall("echo", {}, "t1"), toolCall("echo", {}, "t2")] }, { content: "never" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [makeTool("echo", async (id) => (ran.push(id), ok("ran")))] },
			streamFn: scripted.streamFn,
			beforeToolCall: async () => undefined,
		});
		const rec = record(agent);
		agent.subscribe(async (event) => {
			// t1 is prepared (the hook let it through) while t2 is announced: parallel calls start together.
			if (event.type === "tool_execution_start" && event.toolCallId === "t2") {
				await sleep(1);
				agent.dispose();
			}
		});
		await agent.prompt("go");
		expectWellFormedRun(rec.events);
		expect(ran).toEqual([]);
		expect(toolResults(agent.state.messages)).toEqual([
			["t1", DISPOSED],
			["t2", DISPOSED],
		]);
	});
});

describe("dispose() during an automatic compaction", () => {
	it("ends it as aborted (no retry), then the turn and the run", async () => {
		const long = (label: string) => `${label} ${"x".repeat(400)}`;
		const summarizing = deferred();
		const scripted = createScriptedModel([{ content: "never" }], { model: { contextWindow: 300 } });
		const agent = new Agent({
			initialState: { model: scripted.model, messages: [user(long("u1")), assistant(long("a1")), user(long("u2")), assistant(long("a2"))] },
			streamFn: scripted.streamFn,
			compaction: {
				enabled: true,
				keepRecentTokens: 1,
				reserveTokens: 100,
				summarize: async ({ signal }) => {
					summarizing.resolve();
					await Promise.race([whenAborted(signal), sleep(500)]);
					return "summary";
				},
			},
		});
		const rec = record(agent);
		const run = agent.prompt("go");
		await summarizing.promise;
		agent.dispose();
		await run;
		expectWellFormedRun(rec.events.filter((event) => !event.type.startsWith("auto_compaction")));
		expect(scripted.calls).toHaveLength(0);
		const end = rec.events.find((event) => event.type === "auto_compaction_end");
		expect(end).toMatchObject({ reason: "threshold", aborted: true, willRetry: false });
		expect(agent.state.messages.some((message) => (message.role as string) === "compactionSummary")).toBe(false);
	});
});
