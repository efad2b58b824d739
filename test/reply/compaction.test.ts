import { describe, expect, it } from "vitest";
import { createActor, emit, setup } from "xstate";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import type { AgentEvent } from "../../src/types/index.js";
import { assistantMessage, FakeAgent, usage } from "./helpers.js";

function watch(promise: Promise<void>): { state: () => "pending" | "resolved" | "rejected"; error: () => unknown } {
	let state: "pending" | "resolved" | "rejected" = "pending";
	let error: unknown;
	promise.then(
		() => {
			state = "resolved";
		},
		(reason: unknown) => {
			state = "rejected";
			error = reason;
		},
	);
	return { state: () => state, error: () => error };
}

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

describe("compaction", () => {
	it("clears the run's texts on a retry and waits for agent_end (N2)", async () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		agent.messageEnd("oops");
		expect(replies.assistantTexts).toHaveLength(1);
		agent.compactionEnd({ willRetry: true });
		expect(replies.isCompacting()).toBe(true);
		expect(replies.assistantTexts).toHaveLength(0);
		const wait = watch(replies.waitForCompactionRetry());
		await tick();
		expect(wait.state()).toBe("pending");
		agent.agentEnd();
		await tick();
		expect(wait.state()).toBe("resolved");
	});

	it("on a real Agent, forgets only the reply that overflowed: earlier turns' tools and sends stay (a retried answer repeated a sent message)", async () => {
		const sentByTool = "Deployed version 2 to production.";
		const scripted = createScriptedModel(
			[
				{ content: [{ type: "text", text: "Sending it." }, { type: "toolCall", name: "message", arguments: { action: "send", to: "#ops", message: sentByTool } }] },
				{ content: [], stopReason: "error", errorMessage: "prompt is too long: 2000 tokens > 1000 maximum" },
				// The retried call: the model repeats what its tool already sent.
				{ content: sentByTool },
			],
			{ model: { contextWindow: 1000 } },
		);
		const message = {
			name: "message",
			label: "Message",
			description: "Sends a message",
			parameters: { type: "object" as const, properties: {} },
			execute: async () => ({ content: [{ type: "text" as const, text: "sent" }], details: {} }),
		};
		const history = [
			{ role: "user" as const, content: "x ".repeat(600), timestamp: 0 },
			{ ...assistantMessage("y ".repeat(600)), usage: usage(10, 10) },
		];
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [message], messages: history },
			streamFn: scripted.streamFn,
			compaction: { enabled: true, reserveTokens: 100, keepRecentTokens: 50, summarize: async () => "## Goal\nsummary" },
		});
		const blocks: string[] = [];
		const replies = subscribeReplies(agent, { onBlockReply: (payload) => void blocks.push(payload.text ?? "") });
		const compactions: AgentEvent[] = [];
		agent.subscribe((event) => {
			if (event.type === "auto_compaction_end") compactions.push(event);
		});
		await agent.prompt("Deploy and tell #ops");
		await replies.waitForCompactionRetry();
		expect(compactions).toMatchObject([{ reason: "overflow", willRetry: true }]);
		expect(blocks).toEqual(["Sending it."]);
		expect(replies.getMessagingToolSentTexts()).toEqual([sentByTool]);
		expect(replies.toolMetas.map((meta) => meta.toolName)).toEqual(["message"]);
		expect(replies.assistantTexts).toEqual(["Sending it."]);
		replies.unsubscribe();
	});

	it("resolves when a compaction without retry ends (N3)", async () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		agent.compactionStart();
		expect(replies.isCompacting()).toBe(true);
		expect(replies.isCompactionInFlight()).toBe(true);
		const wait = watch(replies.waitForCompactionRetry());
		await tick();
		expect(wait.state()).toBe("pending");
		agent.compactionEnd({ willRetry: false });
		await tick();
		expect(wait.state()).toBe("resolved");
		expect(replies.isCompacting()).toBe(false);
	});

	it("needs one agent_end per announced retry (R1)", async () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		agent.compactionEnd({ willRetry: true });
		agent.compactionEnd({ willRetry: true });
		const wait = watch(replies.waitForCompactionRetry());
		agent.agentEnd();
		await tick();
		expect(wait.state()).toBe("pending");
		agent.agentEnd();
		await tick();
		expect(wait.state()).toBe("resolved");
	});

	it("counts compactions that produced a result, retry or not (R2, R3)", () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		agent.compactionStart();
		expect(replies.getCompactionCount()).toBe(0);
		agent.compactionEnd({ willRetry: true, result: true });
		expect(replies.getCompactionCount()).toBe(1);
		agent.compactionEnd({ willRetry: false, result: true });
		expect(replies.getCompactionCount()).toBe(2);
		agent.compactionEnd({ result: false });
		agent.compactionEnd({ result: true, aborted: true });
		expect(replies.getCompactionCount()).toBe(2);
	});

	it("rejects waits with AbortError and aborts the in-flight compaction on unsubscribe (R5)", async () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		agent.compactionStart();
		const wait = watch(replies.waitForCompactionRetry());
		replies.unsubscribe();
		await tick();
		expect(wait.state()).toBe("rejected");
		expect(wait.error()).toMatchObject({ name: "AbortError" });
		await expect(replies.waitForCompactionRetry()).rejects.toMatchObject({ name: "AbortError" });
		expect(agent.aborts).toBe(1);
		replies.unsubscribe();
		expect(agent.aborts).toBe(1);
		expect(agent.listenerCount).toBe(0);
	});

	it("does not abort the agent on unsubscribe when no compaction runs", () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		replies.unsubscribe();
		expect(agent.aborts).toBe(0);
	});

	it("rejects a wait when unsubscribing while a retry is pending", async () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		agent.compactionEnd({ willRetry: true });
		const wait = watch(replies.waitForCompactionRetry());
		replies.unsubscribe();
		agent.agentEnd();
		await tick();
		expect(wait.state()).toBe("rejected");
	});

	it("still waits for a compaction that starts right after the call", async () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		const wait = watch(replies.waitForCompactionRetry());
		agent.compactionStart();
		await tick();
		expect(wait.state()).toBe("pending");
		agent.compactionEnd();
		await tick();
		expect(wait.state()).toBe("resolved");
	});

	it("resolves at once when nothing is compacting", async () => {
		const replies = subscribeReplies(new FakeAgent());
		await expect(replies.waitForCompactionRetry()).resolves.toBeUndefined();
	});
});

describe("usage totals", () => {
	it("counts each assistant message once, even when message_end repeats", () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		expect(replies.getUsageTotals()).toBeUndefined();
		agent.messageStart();
		const message = assistantMessage("Hello", { usage: usage(10, 5) });
		agent.emitRaw({ type: "message_end", message });
		agent.emitRaw({ type: "message_end", message });
		agent.messageStart();
		agent.messageEnd("Again", { usage: usage(1, 2) });
		expect(replies.getUsageTotals()).toEqual({ input: 11, output: 7, cacheRead: 0, cacheWrite: 0, total: 18 });
	});

	it("keeps usage across compaction retries", () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		agent.messageStart();
		agent.messageEnd("Hello", { usage: usage(10, 5) });
		agent.compactionEnd({ willRetry: true });
		expect(replies.getUsageTotals()?.total).toBe(15);
	});
});

describe("a bare agent-machine actor as the source", () => {
	const emitter = setup({
		types: {} as { context: { aborts: number }; events: { type: "push"; event: AgentEvent | { type: "agentchart.internal" } } | { type: "abort" } },
	}).createMachine({
		context: { aborts: 0 },
		on: {
			push: { actions: emit(({ event }) => event.event) },
			abort: { actions: ({ context }) => void (context.aborts += 1) },
		},
	});

	it("reads emitted AgentEvents, ignores internal ones, and aborts with send({ type: 'abort' })", async () => {
		const actor = createActor(emitter).start();
		const texts: string[] = [];
		const replies = subscribeReplies(actor, { onBlockReply: (payload) => void texts.push(payload.text ?? "") });
		const message = assistantMessage([]);
		actor.send({ type: "push", event: { type: "agentchart.internal" } });
		actor.send({ type: "push", event: { type: "message_start", message } });
		actor.send({ type: "push", event: { type: "message_end", message: assistantMessage("From the actor") } });
		expect(texts).toEqual(["From the actor"]);
		actor.send({ type: "push", event: { type: "auto_compaction_start", reason: "threshold" } });
		replies.unsubscribe();
		expect(actor.getSnapshot().context.aborts).toBe(1);
		actor.send({ type: "push", event: { type: "message_start", message } });
		actor.send({ type: "push", event: { type: "message_end", message: assistantMessage("After unsubscribe") } });
		expect(texts).toEqual(["From the actor"]);
	});
});
