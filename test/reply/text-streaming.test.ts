import { describe, expect, it, vi } from "vitest";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import type { PartialReply, ReplyPayload } from "../../src/reply/types.js";
import { FakeAgent } from "./helpers.js";

function textEndHarness(extra: Parameters<typeof subscribeReplies>[1] = {}) {
	const agent = new FakeAgent();
	const blocks: ReplyPayload[] = [];
	const partials: PartialReply[] = [];
	const replies = subscribeReplies(agent, {
		blockReplyBreak: "text_end",
		onBlockReply: (payload) => {
			blocks.push(payload);
		},
		onPartialReply: (partial) => {
			partials.push(partial);
		},
		...extra,
	});
	return { agent, blocks, partials, replies, texts: () => blocks.map((block) => block.text) };
}

describe("text accumulates monotonically per assistant message", () => {
	it("does not append a text_end whose content is a prefix of the streamed text (C1)", () => {
		const { agent, texts, replies } = textEndHarness();
		agent.messageStart();
		agent.delta("Hello world");
		agent.textEnd("Hello");
		expect(texts()).toEqual(["Hello world"]);
		expect(replies.assistantTexts).toEqual(["Hello world"]);
	});

	it("does not append a text_end whose content is contained in the streamed text (C2)", () => {
		const { agent, replies } = textEndHarness();
		agent.messageStart();
		agent.delta("Hello world");
		agent.textEnd("world");
		expect(replies.assistantTexts).toEqual(["Hello world"]);
	});

	it("appends only the new suffix of a text_end that extends the streamed text (C3)", () => {
		const { agent, replies } = textEndHarness();
		agent.messageStart();
		agent.delta("Hello");
		agent.textEnd("Hello world");
		expect(replies.assistantTexts).toEqual(["Hello world"]);
	});

	it("sends one reply when text_end repeats the full content (E1)", () => {
		const { agent, texts, replies } = textEndHarness();
		agent.messageStart();
		agent.delta("Good morning!");
		agent.textEnd("Good morning!");
		expect(texts()).toEqual(["Good morning!"]);
		expect(replies.assistantTexts).toEqual(["Good morning!"]);
	});

	it("does not re-chunk when text_end repeats chunked content (E2)", () => {
		const { agent, blocks } = textEndHarness({ blockReplyChunking: { minChars: 5, maxChars: 40, breakPreference: "newline" } });
		agent.messageStart();
		agent.delta("First line\nSecond line\nThird line\n");
		const sent = blocks.length;
		expect(sent).toBeGreaterThan(0);
		agent.textEnd("First line\nSecond line\nThird line\n");
		expect(blocks.map((block) => block.text).join("\n")).toBe("First line\nSecond line\nThird line");
		agent.messageEnd();
		expect(blocks.map((block) => block.text).join("\n")).toBe("First line\nSecond line\nThird line");
	});

	it("sends one reply for a repeated empty text_end (F1)", () => {
		const { agent, texts, replies } = textEndHarness();
		agent.messageStart();
		agent.delta("Hello block");
		agent.bareTextEnd();
		agent.bareTextEnd();
		expect(texts()).toEqual(["Hello block"]);
		expect(replies.assistantTexts).toEqual(["Hello block"]);
	});

	it("records a repeated message_end once, also without message_start (F2, F3)", () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent);
		agent.messageEnd("Hello world\n");
		agent.messageEnd("Hello world");
		expect(replies.assistantTexts).toEqual(["Hello world"]);
	});

	it("records the answer once when reasoning is on and message_end repeats (F4)", () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent, { reasoningMode: "on" });
		const content = [
			{ type: "thinking" as const, thinking: "Because" },
			{ type: "text" as const, text: "Hello world" },
		];
		agent.messageEnd(content);
		agent.messageEnd(content);
		expect(replies.assistantTexts).toEqual(["Hello world"]);
	});

	it("records a non-streaming message without onBlockReply (F5)", () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent, { blockReplyChunking: { minChars: 50, maxChars: 200 } });
		agent.messageStart();
		agent.messageEnd("Response from non-streaming model");
		expect(replies.assistantTexts).toEqual(["Response from non-streaming model"]);
	});

	it("sends at text_end and not again at message_end (G1)", () => {
		const { agent, texts, replies } = textEndHarness();
		agent.messageStart();
		agent.delta("Hello block");
		agent.bareTextEnd();
		agent.messageEnd("Hello block");
		expect(texts()).toEqual(["Hello block"]);
		expect(replies.assistantTexts).toEqual(["Hello block"]);
	});

	it("sends at message_end when the provider never sent text_end, and ignores a late text_end (G2)", () => {
		const { agent, texts, replies } = textEndHarness();
		agent.messageStart();
		agent.delta("Hello block");
		agent.messageEnd("Hello block");
		agent.textEnd("Hello block");
		expect(texts()).toEqual(["Hello block"]);
		expect(replies.assistantTexts).toEqual(["Hello block"]);
	});

	it("sends nothing for commentary text blocks and only the final answer (G4, G7, P2)", () => {
		const { agent, texts, partials, replies } = textEndHarness();
		const commentary = { textSignature: JSON.stringify({ v: 1, id: "m1", phase: "commentary" }) };
		agent.messageStart();
		agent.delta("Working...", 0, commentary);
		agent.textEnd(undefined, 0);
		expect(texts()).toEqual([]);
		expect(partials).toEqual([]);
		agent.delta("Done.", 1);
		agent.textEnd(undefined, 1);
		agent.messageEnd([
			{ type: "text", text: "Working...", ...commentary },
			{ type: "text", text: "Done." },
		]);
		expect(texts()).toEqual(["Done."]);
		expect(replies.assistantTexts).toEqual(["Done."]);
	});

	it("treats a text signature without a commentary phase as a normal answer (G3, G6)", () => {
		for (const signature of [{ v: 1, id: "m1" }, { v: 1, id: "m1", phase: "final_answer" }]) {
			const { agent, texts } = textEndHarness();
			agent.messageStart();
			agent.delta("Legacy answer", 0, { textSignature: JSON.stringify(signature) });
			agent.textEnd();
			expect(texts()).toEqual(["Legacy answer"]);
			agent.messageEnd();
			expect(texts()).toEqual(["Legacy answer"]);
		}
	});

	it("sends a block complete at text_end even when it ends in inline code or a fence", () => {
		const { agent, texts } = textEndHarness();
		agent.messageStart();
		agent.delta("Run `npm test`", 0);
		agent.textEnd(undefined, 0);
		expect(texts()).toEqual(["Run `npm test`"]);
		agent.delta("```sh\nnpm test\n```", 1);
		agent.textEnd(undefined, 1);
		expect(texts()).toEqual(["Run `npm test`", "```sh\nnpm test\n```"]);
		agent.messageEnd();
		expect(texts()).toHaveLength(2);
	});

	it("resets at message_start, so two messages with the same text both send (Q5)", () => {
		const { agent, texts } = textEndHarness();
		for (let round = 0; round < 2; round += 1) {
			agent.messageStart();
			agent.delta("OK");
			agent.bareTextEnd();
		}
		expect(texts()).toEqual(["OK", "OK"]);
	});

	it("separates two text blocks of one message instead of gluing them", () => {
		const { agent, partials } = textEndHarness();
		agent.messageStart();
		agent.delta("First.", 0);
		agent.delta("Second.", 1);
		expect(partials.at(-1)?.text).toBe("First.\n\nSecond.");
	});
});

describe("partial replies", () => {
	it("streams cleaned text with deltas (A13)", () => {
		const { agent, partials } = textEndHarness();
		agent.messageStart();
		agent.delta("Hello");
		agent.delta(" world");
		expect(partials).toEqual([
			{ text: "Hello", delta: "Hello" },
			{ text: "Hello world", delta: " world" },
		]);
	});

	it("emits exactly one partial for a message that arrives whole (A14)", () => {
		const { agent, partials } = textEndHarness();
		agent.messageStart();
		agent.messageEnd("Hello world");
		expect(partials).toEqual([{ text: "Hello world", delta: "Hello world" }]);
	});

	it("does not emit again when message_end repeats (A15)", () => {
		const { agent, partials } = textEndHarness();
		agent.messageStart();
		agent.messageEnd("Hello world");
		agent.messageEnd("Hello world");
		expect(partials).toHaveLength(1);
	});

	it("emits a media-only partial for a MEDIA line alone (A17)", () => {
		const { agent, partials } = textEndHarness();
		agent.messageStart();
		agent.delta("MEDIA: https://example.com/a.png");
		agent.messageEnd();
		expect(partials).toEqual([{ text: "", delta: "", mediaUrls: ["https://example.com/a.png"] }]);
	});

	it("marks a snapshot replace: true when earlier visible text turns out to be reasoning", () => {
		const { agent, partials } = textEndHarness();
		agent.messageStart();
		agent.delta("Let me think about it. ");
		agent.delta("</think>The answer is 4.");
		expect(partials.at(-1)).toEqual({ text: "The answer is 4.", delta: "", replace: true });
	});

	it("closes a code fence the message leaves open after the blank line a partial showed, without taking the partial back", () => {
		const { agent, partials } = textEndHarness();
		agent.messageStart();
		agent.delta("```js\nlet a = 1;\n\n");
		expect(partials.at(-1)).toEqual({ text: "```js\nlet a = 1;\n\n", delta: "```js\nlet a = 1;\n\n" });
		// Cut off by the token limit: the message ends inside the fence.
		agent.messageEnd();
		expect(partials.at(-1)).toEqual({ text: "```js\nlet a = 1;\n\n```", delta: "```" });
		agent.messageStart();
		agent.delta("```js\nlet b = 2;");
		agent.messageEnd();
		// Nothing after the code was shown: the closing line follows it at once.
		expect(partials.at(-1)).toEqual({ text: "```js\nlet b = 2;\n```", delta: "\n```" });
	});

	it("shows only <final> text with enforceFinalTag (I1, I3)", () => {
		const { agent, partials } = textEndHarness({ enforceFinalTag: true });
		agent.messageStart();
		agent.delta("<final>Hi there</final>");
		expect(partials.at(-1)?.text).toBe("Hi there");
		agent.messageStart();
		const before = partials.length;
		agent.delta("</final>Oops no start");
		expect(partials).toHaveLength(before);
	});

	it("suppresses a message without <final> when enforceFinalTag is set (I2)", () => {
		const { agent, partials, blocks } = textEndHarness({ enforceFinalTag: true });
		agent.messageStart();
		agent.messageEnd("Hello world");
		expect(partials).toEqual([]);
		expect(blocks).toEqual([]);
	});

	it("passes plain text through without enforcement (I4) and sends it at message_end (I5)", () => {
		const { agent, partials } = textEndHarness();
		agent.messageStart();
		agent.delta("Hello world");
		expect(partials.at(-1)?.text).toBe("Hello world");
		const blocks: ReplyPayload[] = [];
		const other = new FakeAgent();
		subscribeReplies(other, { blockReplyBreak: "message_end", onBlockReply: (payload) => void blocks.push(payload) });
		other.messageStart();
		other.messageEnd("Hello block");
		expect(blocks.map((block) => block.text)).toEqual(["Hello block"]);
	});

	it("leaves tags inside inline code and fences alone, strips them elsewhere (T1–T3)", () => {
		const { agent, partials } = textEndHarness();
		agent.messageStart();
		agent.delta("The fix strips leaked `<thinking>` tags from messages.");
		expect(partials.at(-1)?.text).toContain("`<thinking>`");
		agent.messageStart();
		agent.delta("Example:\n  ````\n<thinking>code example</thinking>\n  ````\nDone.");
		expect(partials.at(-1)?.text).toContain("<thinking>code example</thinking>");
		agent.messageStart();
		agent.delta("Hello <thinking>internal thought</thinking> world");
		expect(partials.at(-1)?.text).toBe("Hello world");
	});

	it("shows no partials when reasoning is a separate block and there is no onBlockReply (K2)", () => {
		const agent = new FakeAgent();
		const onPartialReply = vi.fn();
		const replies = subscribeReplies(agent, { reasoningMode: "on", onPartialReply });
		agent.messageStart();
		agent.delta("Draft ");
		agent.delta("reply");
		agent.messageEnd([
			{ type: "thinking", thinking: "Because" },
			{ type: "text", text: "Final answer" },
		]);
		agent.textEnd("Draft reply");
		expect(onPartialReply).not.toHaveBeenCalled();
		expect(replies.assistantTexts).toEqual(["Final answer"]);
	});

	it("keeps assistantTexts to the final answer when reasoning is on without block replies (K1)", () => {
		const agent = new FakeAgent();
		const replies = subscribeReplies(agent, { reasoningMode: "on" });
		agent.messageStart();
		agent.delta("Final ");
		agent.delta("answer");
		agent.bareTextEnd();
		agent.messageEnd([
			{ type: "thinking", thinking: "Because" },
			{ type: "text", text: "Final answer" },
		]);
		expect(replies.assistantTexts).toEqual(["Final answer"]);
	});
});

describe("reply directives", () => {
	it("applies [[reply_to_current]] to the block and strips it (U1)", () => {
		const { agent, blocks } = textEndHarness({ blockReplyChunking: { minChars: 1, maxChars: 50, breakPreference: "newline" } });
		agent.messageStart();
		agent.delta("[[reply_to_current]]\nHello");
		agent.bareTextEnd();
		agent.messageEnd();
		expect(blocks).toEqual([{ text: "Hello", replyToCurrent: true, replyToTag: true }]);
	});

	it("never shows a reply_to tag split across deltas in partials (U3)", () => {
		const { agent, partials, blocks } = textEndHarness();
		agent.messageStart();
		agent.delta("[[reply_to:1897");
		agent.delta("]] Hello");
		agent.delta(" world");
		agent.bareTextEnd();
		expect(partials.at(-1)?.text).toBe("Hello world");
		expect(partials.some((partial) => partial.text.includes("[[reply_to"))).toBe(false);
		expect(blocks).toEqual([{ text: "Hello world", replyToId: "1897", replyToTag: true }]);
	});

	it("never leaks streamed prefixes of NO_REPLY and sends nothing for a silent answer", () => {
		const { agent, partials, blocks, replies } = textEndHarness();
		agent.messageStart();
		for (const piece of ["N", "O", "_RE", "PLY"]) agent.delta(piece);
		agent.bareTextEnd();
		agent.messageEnd();
		expect(partials).toEqual([]);
		expect(blocks).toEqual([]);
		expect(replies.assistantTexts).toEqual([]);
	});

	it("releases a held N when the answer turns out to be something else", () => {
		const { agent, partials } = textEndHarness();
		agent.messageStart();
		agent.delta("N");
		expect(partials).toEqual([]);
		agent.delta("ope, it is 4.");
		expect(partials.at(-1)?.text).toBe("Nope, it is 4.");
	});

	it("attaches media from a MEDIA: line to the block and sets voice from [[audio_as_voice]]", () => {
		const { agent, blocks } = textEndHarness();
		agent.messageStart();
		agent.delta("Here it is.\nMEDIA: /tmp/song.mp3\n[[audio_as_voice]]");
		agent.bareTextEnd();
		agent.messageEnd();
		expect(blocks).toEqual([{ text: "Here it is.", mediaUrls: ["/tmp/song.mp3"], audioAsVoice: true }]);
	});

	it("keeps a MEDIA: line inside a code fence as code", () => {
		const { agent, blocks } = textEndHarness();
		agent.messageStart();
		agent.delta("```\nMEDIA: /tmp/x.png\n```");
		agent.messageEnd();
		expect(blocks).toEqual([{ text: "```\nMEDIA: /tmp/x.png\n```" }]);
	});
});
