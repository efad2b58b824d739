/**
 * The small streaming differences from OpenClaw (issue 15, item 8): each is either matched or
 * pinned here as a deliberate choice, with the reason docs/openclaw-differences.md gives.
 */
import { describe, expect, it } from "vitest";
import { createBlockReplyPipeline } from "../../src/reply/block-reply-pipeline.js";
import { filterFinalPayloads } from "../../src/reply/final-payloads.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import type { PartialReply, ReplyPayload } from "../../src/reply/types.js";
import { FakeAgent } from "./helpers.js";

function harness(extra: Parameters<typeof subscribeReplies>[1] = {}) {
	const agent = new FakeAgent();
	const blocks: ReplyPayload[] = [];
	const partials: PartialReply[] = [];
	subscribeReplies(agent, {
		onBlockReply: (payload) => void blocks.push(payload),
		onPartialReply: (partial) => void partials.push(partial),
		...extra,
	});
	return { agent, blocks, partials, texts: () => blocks.map((block) => block.text) };
}

describe("matched: a complete last line is a boundary", () => {
	it("sends all complete lines on the delta that completes them, not the last one at text_end (E2)", () => {
		const { agent, texts } = harness({ blockReplyChunking: { minChars: 5, maxChars: 40, breakPreference: "newline" } });
		agent.messageStart();
		agent.delta("First line\nSecond line\nThird line\n");
		expect(texts()).toEqual(["First line\nSecond line\nThird line"]);
		agent.textEnd("First line\nSecond line\nThird line\n");
		agent.messageEnd();
		expect(texts()).toEqual(["First line\nSecond line\nThird line"]);
	});

	it("sends complete paragraphs as one block on their delta", () => {
		const { agent, texts } = harness({ blockReplyChunking: { minChars: 5, maxChars: 40 } });
		agent.messageStart();
		agent.delta("Para one.\n\nPara two.\n\n");
		expect(texts()).toEqual(["Para one.\n\nPara two."]);
		agent.delta("Para three.");
		agent.textEnd();
		expect(texts()).toEqual(["Para one.\n\nPara two.", "Para three."]);
	});

	it("still waits while the last line is unfinished", () => {
		const { agent, texts } = harness({ blockReplyChunking: { minChars: 5, maxChars: 40, breakPreference: "newline" } });
		agent.messageStart();
		agent.delta("First line\nSecond li");
		expect(texts()).toEqual(["First line"]);
		agent.delta("ne\n");
		expect(texts()).toEqual(["First line", "Second line"]);
	});
});

describe("deliberate: nothing undecided is shown or sent", () => {
	it("sends a trailing [[ with its text as one block, where OpenClaw sends 'Hello' then '[[' (U2)", () => {
		const { agent, texts, partials } = harness({ blockReplyChunking: { minChars: 1, maxChars: 50, breakPreference: "newline" } });
		agent.messageStart();
		agent.delta("Hello [[");
		expect(partials.at(-1)?.text).toBe("Hello");
		agent.bareTextEnd();
		agent.messageEnd();
		expect(texts()).toEqual(["Hello [["]);
	});

	it("never shows a MEDIA: prefix as partial text, where OpenClaw shows it and then replaces it (A16)", () => {
		const { agent, partials } = harness();
		agent.messageStart();
		agent.delta("MEDIA:");
		agent.delta(" https://example.com/a.png\nCaption");
		expect(partials.every((partial) => !partial.text.includes("MEDIA") && partial.replace === undefined)).toBe(true);
		expect(partials.at(-1)).toEqual({ text: "Caption", delta: "Caption", mediaUrls: ["https://example.com/a.png"] });
	});

	it("announces a MEDIA: line's media when the line ends, so a URL split across deltas is never cut (A17)", () => {
		const { agent, partials, blocks } = harness();
		agent.messageStart();
		agent.delta("MEDIA: https://example.com/a");
		agent.delta(".png");
		expect(partials).toEqual([]);
		agent.bareTextEnd();
		expect(partials).toEqual([{ text: "", delta: "", mediaUrls: ["https://example.com/a.png"] }]);
		expect(blocks).toEqual([{ mediaUrls: ["https://example.com/a.png"] }]);
	});

	it("announces the media on the delta that ends the line", () => {
		const { agent, partials } = harness();
		agent.messageStart();
		agent.delta("MEDIA: https://example.com/a.png\n");
		expect(partials).toEqual([{ text: "", delta: "", mediaUrls: ["https://example.com/a.png"] }]);
	});
});

describe("deliberate: final payloads are filtered by what was delivered", () => {
	it("keeps a final whose content no block delivered although the pipeline streamed, where OpenClaw drops every final (PA11)", async () => {
		const pipeline = createBlockReplyPipeline({
			onBlockReply: (payload) => (payload.text === "Second part." ? Promise.reject(new Error("send failed")) : undefined),
		});
		pipeline.enqueue({ text: "First part." });
		pipeline.enqueue({ text: "Second part." });
		await pipeline.flush({ force: true });
		expect(pipeline.didStream()).toBe(true);
		expect(filterFinalPayloads([{ text: "First part." }, { text: "Second part." }], { pipeline })).toEqual([{ text: "Second part." }]);
	});
});

describe("deliberate: a compaction retry forgets only the reply that overflowed", () => {
	it("keeps the earlier turns' texts, tool metas and messaging-tool sends", () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		agent.messageStart();
		agent.messageEnd("Sending it.");
		agent.toolStart("message", { action: "send", to: "#ops", message: "Deployed version 2." }, "m1");
		agent.toolEnd("message", { content: [] }, false, "m1");
		agent.messageStart();
		agent.messageEnd("Half an answer that overflowed");
		agent.compactionStart();
		agent.compactionEnd({ willRetry: true, result: true });
		expect(replies.assistantTexts).toEqual(["Sending it."]);
		expect(replies.toolMetas.map((meta) => meta.toolName)).toEqual(["message"]);
		expect(replies.getMessagingToolSentTexts()).toEqual(["Deployed version 2."]);
	});
});

describe("deliberate: a reply cut off inside a code fence is sent with the fence closed", () => {
	it("closes the fence in the block flushed when the message ends inside it (OpenClaw sends it open)", () => {
		const { agent, texts } = harness();
		agent.messageStart();
		agent.delta("Here:\n\n```ts\nconst a = 1;\nco");
		agent.messageEnd(undefined, { stopReason: "aborted" });
		expect(texts()).toEqual(["Here:\n\n```ts\nconst a = 1;\nco\n```"]);
	});
});
