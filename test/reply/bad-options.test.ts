/**
 * Options of the reply layer that cannot work are refused where they are given (reply.md),
 * found accepted by probe AX (2026-12-07): a `blockReplyChunking` that is a text acted as the
 * defaults, `null` options failed with JavaScript's own errors, an `onBlockReply` that is not a
 * function failed at every delivery, and `createBlockReplyPipeline` took coalescing sizes that
 * are NaN or cannot be met, and no sender at all.
 */
import { describe, expect, it } from "vitest";
import { createBlockReplyPipeline } from "../../src/reply/block-reply-pipeline.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import type { SubscribeRepliesParams } from "../../src/reply/subscribe-replies-options.js";
import { FakeAgent } from "./helpers.js";

describe("subscribeReplies refuses what cannot work", () => {
	it.each<[unknown, string]>([
		[{ blockReplyChunking: "big" }, 'subscribeReplies: blockReplyChunking must be an object of block sizes ({ minChars, maxChars }), got "big"'],
		[{ onBlockReply: "x" }, 'subscribeReplies: onBlockReply must be a function, got "x"'],
		[{ onCallbackError: 5 }, "subscribeReplies: onCallbackError must be a function, got 5"],
		[{ classifyToolAction: {} }, "subscribeReplies: classifyToolAction must be a function, got {}"],
		[{ enforceFinalTag: "yes" }, 'subscribeReplies: enforceFinalTag must be true or false, got "yes"'],
		[{ messagingTools: "message" }, 'subscribeReplies: messagingTools must be a list of tool names or a function, got "message"'],
		[null, "subscribeReplies: the options must be an object, got null"],
	])("refuses %j with a TypeError naming the option", (params, message) => {
		expect(() => subscribeReplies(new FakeAgent(), params as SubscribeRepliesParams)).toThrow(new TypeError(message));
	});

	it("refuses a source that is none", () => {
		expect(() => subscribeReplies(undefined as never)).toThrow(new TypeError("subscribeReplies: the source must be an Agent or an agent machine actor, got undefined"));
	});

	it("takes null for an optional setting as none", async () => {
		const agent = new FakeAgent();
		const sent: string[] = [];
		// Every kind of option, the choices too (review, 2026-12-08: those were refused as unknown choices).
		const nulls = { blockReplyChunking: null, onPartialReply: null, blockReplyBreak: null, reasoningMode: null, verbose: null, toolResultFormat: null, enforceFinalTag: null, messagingTools: null } as unknown as SubscribeRepliesParams;
		const replies = subscribeReplies(agent, { ...nulls, onBlockReply: (payload) => void sent.push(payload.text ?? "") });
		agent.messageStart();
		agent.delta("Hello there.");
		agent.textEnd("Hello there.");
		agent.messageEnd();
		agent.agentEnd();
		await replies.waitForCompactionRetry();
		expect(sent).toEqual(["Hello there."]);
		// Within the chunking sizes and the pipeline's options too.
		expect(() => subscribeReplies(new FakeAgent(), { blockReplyChunking: { minChars: 1, maxChars: 10, breakPreference: null } as never })).not.toThrow();
		const pipeline = createBlockReplyPipeline({ onBlockReply: (payload) => void sent.push(`piped ${payload.text ?? ""}`), timeoutMs: null as never, coalescing: { minChars: 1, maxChars: 100, idleMs: 0, joiner: null as never } });
		pipeline.enqueue({ text: "a" });
		pipeline.enqueue({ text: "b" });
		await pipeline.flush({ force: true });
		expect(sent.slice(1)).toEqual(["piped a\n\nb"]);
	});
});

describe("createBlockReplyPipeline refuses what cannot work", () => {
	const send = () => undefined;
	it.each<[unknown, string, typeof TypeError | typeof RangeError]>([
		[{}, "createBlockReplyPipeline: onBlockReply must be a function that sends a payload, got undefined", TypeError],
		[{ onBlockReply: send, coalescing: { minChars: 10, maxChars: Number.NaN, idleMs: 0 } }, "createBlockReplyPipeline: coalescing.maxChars must be a number, at least 0, got NaN", RangeError],
		[{ onBlockReply: send, coalescing: { minChars: Number.NaN, maxChars: 100, idleMs: 0 } }, "createBlockReplyPipeline: coalescing.minChars must be a number, at least 0, got NaN", RangeError],
		[{ onBlockReply: send, coalescing: { minChars: 100, maxChars: 10, idleMs: 0 } }, "createBlockReplyPipeline: coalescing.maxChars (10) is below minChars (100): no block could be both", RangeError],
		[{ onBlockReply: send, coalescing: { minChars: 1, maxChars: 10, idleMs: Number.NaN } }, "createBlockReplyPipeline: coalescing.idleMs must be a number, at least 0, got NaN", RangeError],
		[{ onBlockReply: send, coalescing: "yes" }, 'createBlockReplyPipeline: coalescing must be an object ({ minChars, maxChars, idleMs }), got "yes"', TypeError],
	])("refuses %j", (options, message, kind) => {
		expect(() => createBlockReplyPipeline(options as never)).toThrow(new kind(message));
	});
});
