/**
 * Two tool calls of one reply with the same id. Models do send these (some local and
 * OpenAI-compatible servers number calls per reply, or reuse `call_0`); pi runs each call and
 * answers each (test/agent/differential.test.ts compares the parallel and sequential modes with
 * it). Here: what pi has no counterpart for (streaming tool execution, timeouts, cancelling
 * siblings, aborts) and where agentchart does better (`pendingToolCalls`).
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { callKeyFor, createToolBatch, entriesOfBlocks } from "../../src/machines/run-helpers.js";
import { AssistantMessageEventStream } from "../../src/providers/event-stream.js";
import { createScriptedModel, type ScriptedReply, text, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent, ToolExecutionMode } from "../../src/types/agent.js";
import { emptyUsage } from "../../src/types/content.js";
import type { AssistantMessage } from "../../src/types/messages.js";
import type { StreamFn } from "../../src/types/stream.js";
import { assistant, call, expectValidTranscript, expectWellFormedRun, makeTool, ok, sleep, textOf, whenAborted } from "./helpers.js";

/** `work` answers `did:<value>` after `ms` (default 1); "hang" waits for its signal; "fail" throws. */
const work = (extra: Parameters<typeof makeTool>[2] = {}) =>
	makeTool(
		"work",
		async (_id, params, signal) => {
			const value = String(params["value"]);
			if (value === "hang") {
				await whenAborted(signal);
				throw new Error("stopped");
			}
			await sleep(Number(params["ms"] ?? 1));
			if (value === "fail") throw new Error("broke");
			return ok(`did:${value}`);
		},
		extra,
	);

const sameId = (...args: Record<string, unknown>[]): ScriptedReply => ({ content: args.map((a) => toolCall("work", a, "dup")) });

function agentFor(replies: ScriptedReply[], toolExecution: ToolExecutionMode, options: { toolTimeoutMs?: number; tool?: ReturnType<typeof work> } = {}) {
	const scripted = createScriptedModel(replies, { chunkSize: 8 });
	const agent = new Agent({
		initialState: { model: scripted.model, tools: [options.tool ?? work()] },
		streamFn: scripted.streamFn,
		toolExecution,
		...(options.toolTimeoutMs !== undefined ? { toolTimeoutMs: options.toolTimeoutMs } : {}),
	});
	const events: AgentEvent[] = [];
	agent.subscribe((event) => {
		events.push(event);
	});
	return { agent, events, scripted };
}

const results = (agent: Agent) => agent.state.messages.filter((m) => m.role === "toolResult").map((m) => `${(m as { toolCallId: string }).toolCallId}:${textOf(m)}`);
const ends = (events: AgentEvent[]) => events.flatMap((e) => (e.type === "tool_execution_end" ? [textOf(e.result)] : []));

describe("two tool calls with one id", () => {
	it("streaming mode: each starts as it streams, each gets its own result, in source order", async () => {
		const { agent, events } = agentFor([{ content: [toolCall("work", { value: "slow", ms: 30 }, "dup"), text("x".repeat(40)), toolCall("work", { value: "fast" }, "dup")] }, { content: "done" }], "streaming");
		await agent.prompt("go");
		expect(ends(events)).toEqual(["did:fast", "did:slow"]);
		expect(results(agent)).toEqual(["dup:did:slow", "dup:did:fast"]);
		expectWellFormedRun(events);
		expectValidTranscript(agent.state.messages);
	});

	it("streaming mode: a provider that ends one block twice runs its call once", async () => {
		let runs = 0;
		const tool = makeTool("work", async () => {
			runs++;
			return ok("did");
		});
		let call = 0;
		const streamFn: StreamFn = (model) => {
			const stream = new AssistantMessageEventStream();
			call++;
			const partial: AssistantMessage = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: emptyUsage(), stopReason: "toolUse", timestamp: 0 };
			queueMicrotask(() => {
				stream.push({ type: "start", partial });
				if (call === 1) {
					const block = { type: "toolCall" as const, id: "once", name: "work", arguments: {} };
					partial.content.push(block);
					stream.push({ type: "toolcall_start", contentIndex: 0, partial });
					stream.push({ type: "toolcall_end", contentIndex: 0, toolCall: block, partial });
					stream.push({ type: "toolcall_end", contentIndex: 0, toolCall: block, partial });
					stream.push({ type: "done", reason: "toolUse", message: partial });
				} else {
					partial.content.push({ type: "text", text: "ok" });
					partial.stopReason = "stop";
					stream.push({ type: "done", reason: "stop", message: partial });
				}
			});
			return stream;
		};
		const agent = new Agent({ initialState: { tools: [tool] }, streamFn, toolExecution: "streaming" });
		await agent.prompt("go");
		expect(runs).toBe(1);
		expect(results(agent)).toEqual(["once:did"]);
	});

	it.each<ToolExecutionMode>(["parallel", "streaming"])("%s: the call that times out gets the timeout, the other its result", async (mode) => {
		const { agent, events } = agentFor([sameId({ value: "hang" }, { value: "fast" }), { content: "done" }], mode, { toolTimeoutMs: 40 });
		await agent.prompt("go");
		expect(results(agent)).toEqual(['dup:Tool "work" timed out after 40 ms', "dup:did:fast"]);
		expectWellFormedRun(events);
	});

	it.each<ToolExecutionMode>(["parallel", "streaming"])("%s: a failing call cancels its running namesake (cancelSiblingsOnError)", async (mode) => {
		const { agent, events } = agentFor([sameId({ value: "fail" }, { value: "hang" }), { content: "done" }], mode, { tool: work({ cancelSiblingsOnError: true }) });
		await agent.prompt("go");
		expect(results(agent)).toEqual(["dup:broke", "dup:Cancelled: sibling tool call work failed"]);
		expectWellFormedRun(events);
	});

	it.each<ToolExecutionMode>(["parallel", "sequential", "streaming"])("%s: abort while both run closes both", async (mode) => {
		const { agent, events } = agentFor([sameId({ value: "hang" }, { value: "hang" }), { content: "done" }], mode);
		agent.subscribe((event) => {
			if (event.type === "tool_execution_start") setTimeout(() => agent.abort(), 5);
		});
		await agent.prompt("go");
		expect(results(agent)).toHaveLength(2);
		expectWellFormedRun(events);
		expectValidTranscript(agent.state.messages);
	});

	it("the id stays in pendingToolCalls until both calls ended (pi drops it at the first end)", async () => {
		const { agent } = agentFor([sameId({ value: "slow", ms: 30 }, { value: "fast" }), { content: "done" }], "parallel");
		const seen: string[] = [];
		agent.subscribe((event) => {
			if (event.type === "tool_execution_end") seen.push(`${textOf(event.result)} → pending ${[...agent.state.pendingToolCalls].join(",") || "none"}`);
		});
		await agent.prompt("go");
		expect(seen).toEqual(["did:fast → pending dup", "did:slow → pending none"]);
		expect(agent.state.pendingToolCalls.size).toBe(0);
	});

	it("the next request keeps the calls apart: the second call's id is made unique, its result answers it", async () => {
		const { agent, scripted } = agentFor([sameId({ value: "a" }, { value: "b" }), { content: "done" }], "parallel");
		await agent.prompt("go");
		// What the model is sent back: both calls, both results, in order (ids as the transcript has them).
		const second = scripted.calls[1]?.messages ?? [];
		expect(second.map((m) => (m.role === "toolResult" ? `${m.toolCallId}:${textOf(m)}` : m.role))).toEqual(["user", "assistant", "dup:did:a", "dup:did:b"]);
	});
});

describe("a call's key in its batch", () => {
	it("is its id, or id#n with the first n from 2 that no call of the batch holds", () => {
		const batch = createToolBatch(assistant([call("x", "work"), call("x#2", "work"), call("x", "work"), call("y", "work"), call("x", "work")]), [work()], "parallel", "r1.t1");
		expect(batch.calls.map((entry) => entry.key)).toEqual(["x", "x#2", "x#3", "y", "x#4"]);
		expect(callKeyFor([], "z")).toBe("z");
	});

	it("pairs the n-th block with an id with the n-th call with it", () => {
		const batch = createToolBatch(assistant([call("x", "work", { n: 1 }), call("y", "work"), call("x", "work", { n: 2 })]), [work()], "parallel", "r1.t1");
		const blocks = [call("x", "work", { n: 1 }), call("x", "work", { n: 2 }), call("x", "work", { n: 3 }), call("y", "work")];
		expect(entriesOfBlocks(blocks, batch.calls).map((entry) => entry?.key)).toEqual(["x", "x#2", undefined, "y"]);
	});
});
