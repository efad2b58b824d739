/**
 * A reply layer on an agent loaded after a crash (probe AX, 2026-12-07): the run the load starts
 * again retells its journaled turns from `agent_start`, and the reply layer sent them to the
 * channel again: the narration, tool summaries and tool output the first process had posted.
 * Retold events now say so (`replayed`), and the reply layer records them (`assistantTexts`, the
 * tools' bookkeeping) without sending them again; what is new after the restart is sent.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel, text, toolCall } from "../../src/providers/scripted.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import type { AgentListener } from "../../src/facade/delivery.js";
import type { AgentEvent } from "../../src/types/agent.js";
import { deferred, makeTool, ok } from "../agent/helpers.js";

/** Listeners given to a load reach a reply layer through this relay (it exists before the agent). */
function relay() {
	const listeners = new Set<AgentListener>();
	return {
		source: { subscribe: (listener: AgentListener) => (listeners.add(listener), () => void listeners.delete(listener)) },
		listener: (async (event, signal) => {
			for (const each of listeners) await each(event, signal);
		}) as AgentListener,
	};
}

function channelOn(source: Parameters<typeof subscribeReplies>[0], verbose: "on" | "full") {
	const posted: string[] = [];
	const replies = subscribeReplies(source, { verbose, onBlockReply: (payload) => void posted.push(payload.text ?? ""), onToolResult: (payload) => void posted.push(`tool: ${payload.text ?? ""}`) });
	return { posted, replies };
}

describe("a reply layer on a run a load starts again", () => {
	for (const verbose of ["on", "full"] as const) {
		it(`sends only what is new after the restart, and records the rest (verbose ${verbose})`, async () => {
			const store = createMemoryStore();
			const look = makeTool("look", async () => ok("seen"));
			const held = deferred<void>();
			const waiting = deferred<void>();
			// Runs until the test lets it go: the first process dies in it.
			const wait = makeTool("wait", async () => (waiting.resolve(), await held.promise, ok("waited")));
			const tools = [look, wait];
			const first = createScriptedModel([
				{ content: [text("Turn one narration."), toolCall("look", {}, "c1")] },
				{ content: [text("Turn two narration."), toolCall("wait", {}, "c2")] },
			]);
			const a = relay();
			const before = channelOn(a.source, verbose);
			const agent = new Agent({ initialState: { model: first.model, tools }, streamFn: first.streamFn, store, sessionId: "s", listeners: [a.listener] });
			void agent.prompt("go");
			// The first process dies while "wait" runs.
			await waiting.promise;
			await agent.saved();
			expect(before.posted.filter((each) => !each.startsWith("tool:"))).toEqual(["Turn one narration.", "Turn two narration."]);

			const b = relay();
			const after = channelOn(b.source, verbose);
			const events: AgentEvent[] = [];
			const again = createScriptedModel([{ content: "Done after the restart." }]);
			const loaded = await Agent.load({ initialState: { tools }, streamFn: again.streamFn, store, sessionId: "s", listeners: [b.listener, (event) => void events.push(event)] });
			await loaded.waitForIdle();
			await after.replies.waitForCompactionRetry();
			// Retold: the two replies and the call that ran; new: the interrupted call's answer, and the reply after it.
			const retold = events.filter((event) => "replayed" in event && event.replayed).map((event) => event.type);
			expect(retold).toEqual(["message_start", "message_end", "tool_execution_start", "tool_execution_end", "message_start", "message_end", "tool_execution_start"]);
			const interrupted = verbose === "full" ? [expect.stringMatching(/^tool: .*interrupted by a restart/s)] : [];
			expect(after.posted).toEqual([...interrupted, "Done after the restart."]);
			expect(after.replies.assistantTexts).toEqual(["Turn one narration.", "Turn two narration.", "Done after the restart."]);
			expect(after.replies.toolMetas.map((meta) => meta.toolName)).toEqual(["look", "wait"]);
			held.resolve();
		});
	}
});

// Review (2026-12-08): in streaming tool execution with a beforeToolCall hook, a restored run asked
// the hook again about a call the journal had (its outcome, or its intent) before it looked the
// call up: a hook that now refused answered a call that had run, and appended a second outcome;
// and a call the hook had blocked was retold with its end unmarked, so the channel posted it again.
describe("a restored run in streaming tool execution with a beforeToolCall hook", () => {
	it("does not ask the hook again about a call the journal has, and retells a blocked call marked", async () => {
		const store = createMemoryStore();
		const held = deferred<void>();
		const waiting = deferred<void>();
		const wait = makeTool("wait", async () => (waiting.resolve(), await held.promise, ok("waited")));
		const tools = [wait];
		const asked: string[] = [];
		const beforeToolCall = async ({ toolCall: call }: { toolCall: { id: string } }) => {
			asked.push(call.id);
			return call.id === "c0" ? { block: true, reason: "not this one" } : undefined;
		};
		const first = createScriptedModel([{ content: [text("Turn one."), toolCall("wait", {}, "c0")] }, { content: [text("Turn two."), toolCall("wait", {}, "c2")] }]);
		const agent = new Agent({ initialState: { model: first.model, tools }, streamFn: first.streamFn, store, sessionId: "s", toolExecution: "streaming", beforeToolCall });
		void agent.prompt("go");
		await waiting.promise;
		await agent.saved();
		expect(asked).toEqual(["c0", "c2"]);
		asked.length = 0;

		const b = relay();
		const after = channelOn(b.source, "full");
		const events: AgentEvent[] = [];
		const again = createScriptedModel([{ content: "Done." }]);
		const loaded = await Agent.load({ initialState: { tools }, streamFn: again.streamFn, store, sessionId: "s", toolExecution: "streaming", beforeToolCall, listeners: [b.listener, (event) => void events.push(event)] });
		await loaded.waitForIdle();
		await after.replies.waitForCompactionRetry();
		expect(asked).toEqual([]);
		const tools_ = events.flatMap((event) => (event.type === "tool_execution_start" || event.type === "tool_execution_end" ? [`${event.type === "tool_execution_start" ? "start" : "end"} ${event.toolCallId}${event.replayed ? " retold" : ""}`] : []));
		expect(tools_).toEqual(["start c0 retold", "end c0 retold", "start c2 retold", "end c2"]);
		expect(after.posted).toEqual([expect.stringMatching(/^tool: .*interrupted by a restart/s), "Done."]);
		held.resolve();
	});
});
