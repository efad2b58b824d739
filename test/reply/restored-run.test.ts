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
