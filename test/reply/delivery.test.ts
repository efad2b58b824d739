import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createBlockReplyCoalescer } from "../../src/reply/block-reply-coalescer.js";
import {
	createBlockReplyContentKey,
	createBlockReplyPayloadKey,
	createBlockReplyPipeline,
} from "../../src/reply/block-reply-pipeline.js";
import { filterFinalPayloads } from "../../src/reply/final-payloads.js";
import type { ReplyPayload } from "../../src/reply/types.js";

describe("payload keys (PL1–PL5)", () => {
	it("differ by reply target, text and media", () => {
		const keys = [
			{ text: "hi", replyToId: "post-1" },
			{ text: "hi", replyToId: "post-2" },
			{ text: "hi" },
			{ text: "other" },
			{ text: "hi", mediaUrls: ["a.png"] },
			{ text: "hi", mediaUrls: ["b.png"] },
		].map(createBlockReplyPayloadKey);
		expect(new Set(keys).size).toBe(keys.length);
	});

	it("ignore surrounding whitespace", () => {
		expect(createBlockReplyPayloadKey({ text: "  hello  " })).toBe(createBlockReplyPayloadKey({ text: "hello" }));
	});

	it("content keys ignore the reply target", () => {
		expect(createBlockReplyContentKey({ text: "x", replyToId: "1" })).toBe(createBlockReplyContentKey({ text: "x" }));
	});
});

describe("createBlockReplyPipeline", () => {
	it("delivers the same text to two reply targets, in order (PL6)", async () => {
		const sent: ReplyPayload[] = [];
		const pipeline = createBlockReplyPipeline({ onBlockReply: (payload) => void sent.push(payload), timeoutMs: 5000 });
		pipeline.enqueue({ text: "same", replyToId: "thread-root-1" });
		pipeline.enqueue({ text: "same" });
		await pipeline.flush({ force: true });
		expect(sent).toEqual([{ text: "same", replyToId: "thread-root-1" }, { text: "same" }]);
	});

	it("knows a sent payload regardless of its reply target (PL7)", async () => {
		const pipeline = createBlockReplyPipeline({ onBlockReply: () => undefined });
		pipeline.enqueue({ text: "hello", replyToId: "thread-root-1" });
		await pipeline.flush({ force: true });
		expect(pipeline.hasSentPayload({ text: "hello" })).toBe(true);
		expect(pipeline.hasSentPayload({ text: "hello", replyToId: "other-id" })).toBe(true);
		expect(pipeline.didStream()).toBe(true);
	});

	it("takes 0, Infinity and a timeout longer than a timer as none: slow sends go one at a time and are confirmed, none timed out", async () => {
		// Node fires a timer of Infinity or over 2**31 - 1 ms after 1 ms: every send timed out at once, and they overlapped.
		for (const timeoutMs of [0, Number.POSITIVE_INFINITY, 2 ** 31]) {
			let inFlight = 0;
			let most = 0;
			const pipeline = createBlockReplyPipeline({
				timeoutMs,
				onBlockReply: async () => {
					most = Math.max(most, ++inFlight);
					await new Promise((resolve) => setTimeout(resolve, 10));
					inFlight -= 1;
				},
			});
			for (const text of ["one", "two", "three"]) pipeline.enqueue({ text });
			await pipeline.flush({ force: true });
			expect({ timeoutMs, most, confirmed: pipeline.getDeliveryReport().confirmed.length, timedOut: pipeline.getDeliveryReport().timedOut.length }).toEqual({ timeoutMs, most: 1, confirmed: 3, timedOut: 0 });
		}
	});

	it("refuses a timeout that is not a number of milliseconds", () => {
		for (const timeoutMs of [Number.NaN, -1, "5000"]) {
			expect(() => createBlockReplyPipeline({ onBlockReply: () => undefined, timeoutMs: timeoutMs as number })).toThrow(/timeoutMs must be a number of milliseconds, at least 0/);
		}
	});

	it("drops a payload it already has", async () => {
		const sent: string[] = [];
		const pipeline = createBlockReplyPipeline({ onBlockReply: (payload) => void sent.push(payload.text ?? "") });
		pipeline.enqueue({ text: "once" });
		pipeline.enqueue({ text: " once " });
		await pipeline.flush();
		expect(sent).toEqual(["once"]);
	});

	it("sends serially", async () => {
		const events: string[] = [];
		const pipeline = createBlockReplyPipeline({
			onBlockReply: async (payload) => {
				events.push(`start ${payload.text}`);
				await new Promise((resolve) => setTimeout(resolve, payload.text === "a" ? 10 : 0));
				events.push(`end ${payload.text}`);
			},
		});
		pipeline.enqueue({ text: "a" });
		pipeline.enqueue({ text: "b" });
		await pipeline.flush();
		expect(events).toEqual(["start a", "end a", "start b", "end b"]);
	});

	it("goes on after a send times out, without losing later content (#34691)", async () => {
		const sent: string[] = [];
		const pipeline = createBlockReplyPipeline({
			timeoutMs: 10,
			onBlockReply: (payload) => {
				if (payload.text === "hangs") return new Promise<void>(() => undefined);
				sent.push(payload.text ?? "");
				return undefined;
			},
		});
		pipeline.enqueue({ text: "hangs" });
		pipeline.enqueue({ text: "after" });
		await pipeline.flush({ force: true });
		expect(sent).toEqual(["after"]);
		const report = pipeline.getDeliveryReport();
		expect(report.timedOut.map((payload) => payload.text)).toEqual(["hangs"]);
		expect(report.confirmed.map((payload) => payload.text)).toEqual(["after"]);
		expect(pipeline.hasSentPayload({ text: "hangs" })).toBe(false);
	});

	it("records failed sends and continues", async () => {
		const pipeline = createBlockReplyPipeline({
			onBlockReply: (payload) => (payload.text === "bad" ? Promise.reject(new Error("x")) : undefined),
		});
		pipeline.enqueue({ text: "bad" });
		pipeline.enqueue({ text: "good" });
		await pipeline.flush();
		expect(pipeline.getDeliveryReport().failed.map((payload) => payload.text)).toEqual(["bad"]);
		expect(pipeline.hasSentPayload({ text: "good" })).toBe(true);
	});

	it("coalesces through the pipeline and flushes on demand", async () => {
		const sent: string[] = [];
		const pipeline = createBlockReplyPipeline({
			onBlockReply: (payload) => void sent.push(payload.text ?? ""),
			coalescing: { minChars: 100, maxChars: 200, idleMs: 0, joiner: " " },
		});
		pipeline.enqueue({ text: "Hello" });
		pipeline.enqueue({ text: "world" });
		await pipeline.flush({ force: true });
		expect(sent).toEqual(["Hello world"]);
	});
});

describe("createBlockReplyCoalescer", () => {
	beforeEach(() => vi.useFakeTimers());
	afterEach(() => vi.useRealTimers());

	function collect(coalescing: Parameters<typeof createBlockReplyCoalescer>[0]["coalescing"]) {
		const flushed: ReplyPayload[] = [];
		const coalescer = createBlockReplyCoalescer({ coalescing, onFlush: (payload) => void flushed.push(payload) });
		return { flushed, coalescer };
	}

	it("merges texts until the idle gap (CO1)", () => {
		const { flushed, coalescer } = collect({ minChars: 1, maxChars: 200, idleMs: 100, joiner: " " });
		coalescer.enqueue({ text: "Hello" });
		coalescer.enqueue({ text: "world" });
		vi.advanceTimersByTime(100);
		expect(flushed.map((payload) => payload.text)).toEqual(["Hello world"]);
	});

	it("waits past the idle gap while below minChars (CO2)", () => {
		const { flushed, coalescer } = collect({ minChars: 10, maxChars: 200, idleMs: 50, joiner: " " });
		coalescer.enqueue({ text: "short" });
		vi.advanceTimersByTime(50);
		expect(flushed).toEqual([]);
		// Waiting for more text, not polling for it: a timer set again every idleMs kept the process up for ever.
		expect(vi.getTimerCount()).toBe(0);
		coalescer.enqueue({ text: "message" });
		vi.advanceTimersByTime(50);
		expect(flushed.map((payload) => payload.text)).toEqual(["short message"]);
	});

	it("joins paragraphs (CO3, CO4)", () => {
		const { flushed, coalescer } = collect({ minChars: 25, maxChars: 2000, idleMs: 50 });
		coalescer.enqueue({ text: "First paragraph" });
		coalescer.enqueue({ text: "Second paragraph" });
		vi.advanceTimersByTime(50);
		expect(flushed.map((payload) => payload.text)).toEqual(["First paragraph\n\nSecond paragraph"]);
	});

	it("flushes below minChars when forced (CO5)", () => {
		const { flushed, coalescer } = collect({ minChars: 100, maxChars: 2000, idleMs: 50 });
		coalescer.enqueue({ text: "a" });
		coalescer.enqueue({ text: "b" });
		coalescer.flush({ force: true });
		expect(flushed.map((payload) => payload.text)).toEqual(["a\n\nb"]);
	});

	it("never merges reasoning with visible text (CO6) and keeps the compaction flag (CO7)", () => {
		const { flushed, coalescer } = collect({ minChars: 1, maxChars: 2000, idleMs: 0 });
		coalescer.enqueue({ text: "Reasoning:\n_hidden_", isReasoning: true });
		coalescer.enqueue({ text: "Visible answer" });
		coalescer.enqueue({ text: "Compacting context...", isCompactionNotice: true });
		coalescer.flush({ force: true });
		expect(flushed).toEqual([
			{ text: "Reasoning:\n_hidden_", isReasoning: true },
			{ text: "Visible answer" },
			{ text: "Compacting context...", isCompactionNotice: true },
		]);
	});

	it("never merges different reply targets", () => {
		const { flushed, coalescer } = collect({ minChars: 1, maxChars: 2000, idleMs: 0 });
		coalescer.enqueue({ text: "to a", replyToId: "a" });
		coalescer.enqueue({ text: "to b", replyToId: "b" });
		coalescer.flush({ force: true });
		expect(flushed.map((payload) => payload.replyToId)).toEqual(["a", "b"]);
	});

	it("sends each payload alone with flushOnEnqueue (CO8)", () => {
		const { flushed, coalescer } = collect({ minChars: 1, maxChars: 30, idleMs: 100, flushOnEnqueue: true });
		coalescer.enqueue({ text: "x".repeat(20) });
		coalescer.enqueue({ text: "y".repeat(20) });
		expect(flushed).toHaveLength(2);
	});

	it("flushes text before passing media through (CO9)", () => {
		const { flushed, coalescer } = collect({ minChars: 1, maxChars: 200, idleMs: 100, joiner: " " });
		coalescer.enqueue({ text: "Hello" });
		coalescer.enqueue({ text: "world" });
		coalescer.enqueue({ mediaUrls: ["a.png"] });
		expect(flushed[0]?.text).toBe("Hello world");
		expect(flushed[1]?.mediaUrls).toEqual(["a.png"]);
	});

	it("never exceeds maxChars when merging", () => {
		const { flushed, coalescer } = collect({ minChars: 1, maxChars: 12, idleMs: 100, joiner: " " });
		coalescer.enqueue({ text: "hello" });
		coalescer.enqueue({ text: "wonderful" });
		coalescer.flush({ force: true });
		expect(flushed.map((payload) => payload.text)).toEqual(["hello", "wonderful"]);
	});
});

describe("filterFinalPayloads", () => {
	it("drops a final covered by streamed fragments (#70921)", () => {
		expect(filterFinalPayloads([{ text: "para1\n\npara2" }], { sentPayloads: [{ text: "para1" }, { text: "para2" }] })).toEqual([]);
	});

	it("drops a final with the content key of a sent block, whatever its reply target (PA13)", () => {
		expect(filterFinalPayloads([{ text: "response" }], { sentPayloads: [{ text: "response", replyToId: "post-1" }] })).toEqual([]);
	});

	it("drops finals the pipeline confirmed, but keeps what timed out", async () => {
		const pipeline = createBlockReplyPipeline({
			timeoutMs: 5,
			onBlockReply: (payload) => (payload.text === "slow" ? new Promise<void>(() => undefined) : undefined),
		});
		pipeline.enqueue({ text: "fast" });
		pipeline.enqueue({ text: "slow" });
		await pipeline.flush();
		expect(filterFinalPayloads([{ text: "fast" }, { text: "slow" }], { pipeline })).toEqual([{ text: "slow" }]);
	});

	it("removes media already sent and keeps new text (PA1, PA2, PA5)", () => {
		expect(
			filterFinalPayloads([{ text: "hello", mediaUrls: ["file:///tmp/photo.jpg"] }], {
				messagingToolSentMediaUrls: ["file:///tmp/photo.jpg"],
			}),
		).toEqual([{ text: "hello" }]);
		expect(filterFinalPayloads([{ text: "hello", mediaUrls: ["b.jpg"] }], { messagingToolSentMediaUrls: ["a.jpg"] })).toEqual([
			{ text: "hello", mediaUrls: ["b.jpg"] },
		]);
		expect(
			filterFinalPayloads([{ text: "This is the answer.", mediaUrls: ["a.jpg"] }], {
				messagingToolSentTexts: ["This is the answer."],
				messagingToolSentMediaUrls: ["a.jpg"],
			}),
		).toEqual([]);
	});

	it("drops a silent final even when it carries media (PA12)", () => {
		for (const text of ["NO_REPLY", "  no_reply\n", "[[reply_to_current]] NO_REPLY"]) {
			expect(filterFinalPayloads([{ text, mediaUrls: ["/tmp/photo.jpg"] }], {})).toEqual([]);
		}
		expect(filterFinalPayloads([{ text: "NO_REPLY" }, { text: "Real answer" }], {})).toEqual([{ text: "Real answer" }]);
	});

	it("keeps a final that only explains a silence (NO_REPLY: …)", () => {
		expect(filterFinalPayloads([{ text: "NO_REPLY: nothing to add" }], {})).toEqual([{ text: "NO_REPLY: nothing to add" }]);
	});

	it("keeps new content", () => {
		expect(filterFinalPayloads([{ text: "brand new" }], { sentPayloads: [{ text: "old" }] })).toEqual([{ text: "brand new" }]);
	});
});
