import { describe, expect, it, vi } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import type { ReplyPayload } from "../../src/reply/types.js";
import { FakeAgent, settle } from "./helpers.js";

function deferred(): { promise: Promise<void>; resolve: () => void } {
	let resolve = (): void => undefined;
	const promise = new Promise<void>((done) => {
		resolve = done;
	});
	return { promise, resolve };
}

describe("agent_end", () => {
	it("settles the compaction wait before a slow channel flush finishes (Y13, Y14)", async () => {
		const agent = new FakeAgent();
		const flush = deferred();
		const replies = subscribeReplies(agent, { onBlockReply: () => undefined, onBlockReplyFlush: () => flush.promise });
		agent.compactionEnd({ willRetry: true });
		let waited = false;
		void replies.waitForCompactionRetry().then(() => {
			waited = true;
		});
		const ending = agent.agentEnd();
		await settle();
		expect(waited).toBe(true);
		expect(ending).toBeInstanceOf(Promise);
		flush.resolve();
		await ending;
	});

	it("holds the agent until the channel flush completes (Y15)", async () => {
		const agent = new FakeAgent();
		const flush = deferred();
		const order: string[] = [];
		subscribeReplies(agent, {
			onBlockReply: () => undefined,
			onBlockReplyFlush: async () => {
				await flush.promise;
				order.push("flushed");
			},
		});
		const ending = agent.emit({ type: "agent_end", messages: [] }).then(() => order.push("agent continues"));
		await settle();
		expect(order).toEqual([]);
		flush.resolve();
		await ending;
		expect(order).toEqual(["flushed", "agent continues"]);
	});

	it("reports a failing flush and keeps handling events (Y17, Y18)", async () => {
		const agent = new FakeAgent();
		const errors: string[] = [];
		const blocks: ReplyPayload[] = [];
		subscribeReplies(agent, {
			onBlockReply: (payload) => void blocks.push(payload),
			onBlockReplyFlush: () => Promise.reject(new Error("flush failed")),
			onCallbackError: (_error, callback) => void errors.push(callback),
		});
		await agent.emit({ type: "agent_end", messages: [] });
		agent.messageStart();
		agent.delta("Still working");
		agent.bareTextEnd();
		await settle();
		expect(errors).toEqual(["onBlockReplyFlush"]);
		expect(blocks.map((block) => block.text)).toEqual(["Still working"]);
	});

	it("without onCallbackError, says a failing callback on console.error rather than dropping it", async () => {
		const said = vi.spyOn(console, "error").mockImplementation(() => undefined);
		try {
			const agent = new FakeAgent();
			subscribeReplies(agent, {
				onBlockReply: () => {
					throw new TypeError("channel.send is not a function");
				},
			});
			agent.messageStart();
			agent.delta("Hello");
			agent.textEnd();
			await agent.messageEnd();
			await settle();
			expect(said).toHaveBeenCalledWith(expect.stringContaining("onBlockReply failed"), expect.objectContaining({ message: "channel.send is not a function" }));
			said.mockClear();
			const reported: string[] = [];
			const other = new FakeAgent();
			subscribeReplies(other, { onBlockReply: () => Promise.reject(new Error("down")), onCallbackError: (_error, callback) => void reported.push(callback) });
			other.messageStart();
			other.delta("Hello");
			other.textEnd();
			await other.messageEnd();
			await settle();
			expect(reported).toEqual(["onBlockReply"]);
			expect(said).not.toHaveBeenCalled();
		} finally {
			said.mockRestore();
		}
	});

	it("survives a flush that throws synchronously (Y19)", async () => {
		const agent = new FakeAgent();
		const errors: string[] = [];
		const replies = subscribeReplies(agent, {
			onBlockReply: () => undefined,
			onBlockReplyFlush: () => {
				throw new Error("boom");
			},
			onCallbackError: (_error, callback) => void errors.push(callback),
		});
		agent.compactionEnd({ willRetry: true });
		await agent.emit({ type: "agent_end", messages: [] });
		expect(errors).toEqual(["onBlockReplyFlush"]);
		expect(replies.isCompacting()).toBe(false);
	});

	it("sends what the chunker still holds at agent_end", () => {
		const agent = new FakeAgent();
		const blocks: ReplyPayload[] = [];
		subscribeReplies(agent, {
			blockReplyChunking: { minChars: 100, maxChars: 200 },
			onBlockReply: (payload) => void blocks.push(payload),
		});
		agent.messageStart();
		agent.delta("A short answer");
		agent.agentEnd();
		expect(blocks.map((block) => block.text)).toEqual(["A short answer"]);
	});
});

describe("ordering", () => {
	it("queues later events behind a pending flush, in order", async () => {
		const agent = new FakeAgent();
		const flush = deferred();
		const seen: string[] = [];
		const replies = subscribeReplies(agent, {
			verbose: "on",
			onBlockReply: (payload) => void seen.push(`block:${payload.text}`),
			onBlockReplyFlush: () => flush.promise,
			onToolResult: (payload) => void seen.push(`tool:${payload.text}`),
		});
		agent.messageStart();
		agent.delta("Narration.");
		agent.toolStart("read", { path: "/a" }, "r1");
		agent.toolEnd("read", { content: [] }, false, "r1");
		agent.messageStart();
		agent.delta("After the tool.");
		agent.bareTextEnd();
		expect(seen).toEqual(["block:Narration."]);
		expect(replies.toolMetas).toEqual([]);
		flush.resolve();
		await settle();
		expect(seen).toEqual(["block:Narration.", "tool:📖 Read: `/a`", "block:After the tool."]);
		expect(replies.toolMetas).toEqual([{ toolName: "read", meta: "/a" }]);
	});

	it("hands block replies over one at a time, so a slow send is not overtaken (the next one was sent meanwhile)", async () => {
		const agent = new FakeAgent();
		const first = deferred();
		const calls: string[] = [];
		const posted: string[] = [];
		subscribeReplies(agent, {
			blockReplyChunking: { minChars: 5, maxChars: 30 },
			onBlockReply: async (payload) => {
				calls.push(payload.text ?? "");
				if (calls.length === 1) await first.promise;
				posted.push(payload.text ?? "");
			},
		});
		agent.messageStart();
		agent.delta("First paragraph.\n\nSecond paragraph.\n\nThird paragraph.");
		agent.textEnd();
		const ended = agent.messageEnd();
		await settle();
		expect(calls).toEqual(["First paragraph."]);
		first.resolve();
		await ended;
		await settle();
		expect(calls).toEqual(["First paragraph.", "Second paragraph.", "Third paragraph."]);
		expect(posted).toEqual(calls);
	});

	it("signals each assistant message start, and ignores user and tool-result messages", () => {
		const agent = new FakeAgent();
		const onAssistantMessageStart = vi.fn();
		const blocks: ReplyPayload[] = [];
		subscribeReplies(agent, { onAssistantMessageStart, onBlockReply: (payload) => void blocks.push(payload) });
		agent.emitRaw({ type: "message_start", message: { role: "user", content: "hi", timestamp: 0 } });
		agent.emitRaw({ type: "message_end", message: { role: "user", content: "hi", timestamp: 0 } });
		agent.messageStart();
		agent.messageStart();
		expect(onAssistantMessageStart).toHaveBeenCalledTimes(2);
		expect(blocks).toEqual([]);
	});

	it("sends media alone when a message is only a MEDIA line", () => {
		const agent = new FakeAgent();
		const blocks: ReplyPayload[] = [];
		subscribeReplies(agent, { onBlockReply: (payload) => void blocks.push(payload) });
		agent.messageStart();
		agent.delta("MEDIA: /tmp/reply.opus\n[[audio_as_voice]]");
		agent.messageEnd();
		expect(blocks).toEqual([{ mediaUrls: ["/tmp/reply.opus"], audioAsVoice: true }]);
	});

	it("stops delivering after unsubscribe", () => {
		const agent = new FakeAgent();
		const blocks: ReplyPayload[] = [];
		const replies = subscribeReplies(agent, { onBlockReply: (payload) => void blocks.push(payload) });
		replies.unsubscribe();
		agent.messageStart();
		agent.messageEnd("ignored");
		expect(blocks).toEqual([]);
		expect(agent.listenerCount).toBe(0);
	});

	it("lets an Agent go at unsubscribe() when a channel send never settles (it held the run for ever)", async () => {
		const scripted = createScriptedModel([
			{ content: [{ type: "text", text: "Let me look." }, { type: "toolCall", name: "look", arguments: {} }] },
			{ content: "Done." },
		]);
		const look = {
			name: "look",
			label: "Look",
			description: "Looks",
			parameters: { type: "object" as const, properties: {} },
			execute: async () => ({ content: [{ type: "text" as const, text: "seen" }], details: {} }),
		};
		const agent = new Agent({ initialState: { model: scripted.model, tools: [look] }, streamFn: scripted.streamFn });
		// A channel whose API never answers: the flush before the tool waits for this send.
		const replies = subscribeReplies(agent, { onBlockReply: () => new Promise<void>(() => undefined) });
		let ended = false;
		const run = agent.prompt("Look around").then(() => {
			ended = true;
		});
		try {
			await settle();
			expect(ended).toBe(false);
			replies.unsubscribe();
			// Without the fix this never resolves (the test's timeout fails it).
			await run;
			expect(ended).toBe(true);
			expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", content: [{ type: "text", text: "Done." }] });
		} finally {
			if (!ended) agent.dispose();
		}
	});
});
