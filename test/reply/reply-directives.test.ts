import { describe, expect, it } from "vitest";
import { parseMediaLine } from "../../src/reply/media-lines.js";
import { parseReplyDirectives, ReplyDirectiveFilter } from "../../src/reply/reply-directives.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import type { PartialReply, ReplyPayload } from "../../src/reply/types.js";
import { FakeAgent } from "./helpers.js";

describe("ReplyDirectiveFilter (streaming)", () => {
	it("holds a directive alone and applies it to the next text (SD1)", () => {
		const filter = new ReplyDirectiveFilter();
		expect(filter.push("[[reply_to_current]]")).toBe("");
		expect(filter.push("Hello")).toBe("Hello");
		expect(filter.directives).toMatchObject({ replyToCurrent: true, replyToTag: true });
	});

	it("holds a directive split across deltas (SD2)", () => {
		const filter = new ReplyDirectiveFilter();
		expect(filter.push("[[reply_to_")).toBe("");
		expect(filter.push("current]] Yo")).toBe("Yo");
		expect(filter.directives.replyToCurrent).toBe(true);
	});

	it("keeps an explicit reply target for the rest of the message (SD3)", () => {
		const filter = new ReplyDirectiveFilter();
		filter.push("[[reply_to: abc-123]]");
		expect(filter.push("Hi")).toBe("Hi");
		filter.push(" test 2");
		expect(filter.directives).toMatchObject({ replyToId: "abc-123", replyToTag: true });
	});

	it("leaves no space where a directive began a later line, in any split (a block once started with one)", () => {
		const text = "Here is the plan.\n\n[[reply_to_current]] Done.\n[[audio_as_voice]]\tAnd more. [[reply_to: 7]] End.";
		const expected = "Here is the plan.\n\nDone.\nAnd more. End.";
		expect(parseReplyDirectives(text).text).toBe(expected);
		for (let size = 1; size <= 4; size += 1) {
			const filter = new ReplyDirectiveFilter();
			let out = "";
			for (let index = 0; index < text.length; index += size) out += filter.push(text.slice(index, index + size));
			expect(out + filter.finish(), `deltas of ${size}`).toBe(expected);
		}
	});

	it("starts clean for each message (SD4)", () => {
		const first = new ReplyDirectiveFilter();
		first.push("[[reply_to_current]] first");
		const second = new ReplyDirectiveFilter();
		second.push("second");
		expect(second.directives).toEqual({ replyToCurrent: false, replyToTag: false, audioAsVoice: false });
	});

	it("drops a NO_REPLY token glued to text (SD5) and keeps NO_REPLY: explanations (SD6)", () => {
		expect(parseReplyDirectives("NO_REPLYThe user is saying hello").text).toBe("The user is saying hello");
		expect(parseReplyDirectives("NO_REPLY: explanation").text).toBe("NO_REPLY: explanation");
	});

	it("marks an exact NO_REPLY as silent, case-insensitively", () => {
		expect(parseReplyDirectives("  no_reply \n")).toMatchObject({ text: "", isSilent: true });
		expect(parseReplyDirectives("No reply needed").isSilent).toBe(false);
	});

	it("accepts a directive missing its last bracket (#129154)", () => {
		expect(parseReplyDirectives("[[reply_to_current] Hello")).toMatchObject({ text: "Hello", replyToCurrent: true });
	});

	it("leaves unknown [[tags]] and directives inside fences alone", () => {
		expect(parseReplyDirectives("see [[wiki link]]").text).toBe("see [[wiki link]]");
		expect(parseReplyDirectives("```\n[[reply_to_current]]\n```").text).toBe("```\n[[reply_to_current]]\n```");
	});

	it("does not glue words around a removed directive", () => {
		expect(parseReplyDirectives("Hello [[audio_as_voice]] world").text).toBe("Hello world");
	});

	it("collapses runs of blank lines outside fences only", () => {
		expect(parseReplyDirectives("a\n\n\n\nb").text).toBe("a\n\nb");
		expect(parseReplyDirectives("```\na\n\n\n\nb\n```").text).toBe("```\na\n\n\n\nb\n```");
	});
});

describe("an unclosed [[ at the end of a text block", () => {
	it.each([
		["before reasoning that runs to the end", ["```[[```<thinking>"], ["```[[```"]],
		["split before the reasoning", ["see [[rep", "ly_to_<think>plan"], ["see [[reply_to_"]],
		["when the reasoning closed before the block ended (its separator settles it)", ["a [[<think>x</think>"], ["a [["]],
	])("is text: the block sent at text_end holds its whole line (%s)", (_, pieces, expected) => {
		const agent = new FakeAgent();
		const blocks: string[] = [];
		subscribeReplies(agent, { blockReplyBreak: "text_end", onBlockReply: (payload) => void blocks.push(payload.text ?? "") });
		agent.messageStart();
		for (const piece of pieces) agent.delta(piece);
		agent.textEnd(pieces.join(""));
		// Before, the [[ was held back as a possible directive until here, and sent as a block of its own.
		expect(blocks).toEqual(expected);
		agent.messageEnd();
		expect(blocks).toEqual(expected);
	});
});

describe("MEDIA lines", () => {
	it("extracts media at line starts only (AC7, AC21, AC24)", () => {
		expect(parseReplyDirectives("Here is the image\nMEDIA:/tmp/output.jpg\nDone")).toMatchObject({
			text: "Here is the image\nDone",
			mediaUrls: ["/tmp/output.jpg"],
		});
		expect(parseReplyDirectives('Use MEDIA: "https://x.test/voice.ogg" here').mediaUrls).toEqual([]);
		expect(parseReplyDirectives("  MEDIA:/tmp/indented.png").mediaUrls).toEqual(["/tmp/indented.png"]);
	});

	it("unwraps backticks and takes several references per line (AC12, AC26)", () => {
		expect(parseMediaLine("MEDIA: `/tmp/screenshot.png`")).toEqual(["/tmp/screenshot.png"]);
		expect(parseMediaLine("MEDIA: https://x.test/a.png /tmp/b.mp3")).toEqual(["https://x.test/a.png", "/tmp/b.mp3"]);
	});

	it("strips but does not accept paths that climb out or use ~", () => {
		expect(parseReplyDirectives("ok\nMEDIA: ../../etc/passwd")).toMatchObject({ text: "ok", mediaUrls: [] });
		expect(parseMediaLine("MEDIA: ~/secret.png")).toEqual([]);
	});
});

describe("a MEDIA line the model was cut off in", () => {
	const streamed = ["Here it is.\n", "MEDIA: https://x.test/pi", "c"];
	const send = (stopReason: "aborted" | "error" | "stop") => {
		const agent = new FakeAgent();
		const blocks: ReplyPayload[] = [];
		const partials: PartialReply[] = [];
		subscribeReplies(agent, { onBlockReply: (payload) => void blocks.push(payload), onPartialReply: (partial) => void partials.push(partial) });
		agent.messageStart();
		for (const piece of streamed) agent.delta(piece);
		agent.messageEnd(undefined, { stopReason });
		return { blocks, partials };
	};

	it.each(["aborted", "error"] as const)("(%s) attaches nothing: the URL may be half of one, and a channel would post a broken link", (stopReason) => {
		const { blocks, partials } = send(stopReason);
		// Before, the cut URL was attached to the last block and partial.
		expect(blocks.flatMap((block) => block.mediaUrls ?? [])).toEqual([]);
		expect(partials.flatMap((partial) => partial.mediaUrls ?? [])).toEqual([]);
		expect(blocks.map((block) => block.text)).toEqual(["Here it is."]);
	});

	it("is whole when the message ended as the model meant it to (no newline needed)", () => {
		expect(send("stop").blocks.flatMap((block) => block.mediaUrls ?? [])).toEqual(["https://x.test/pic"]);
	});
});
