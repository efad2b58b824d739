/**
 * Property tests: the visible result must not depend on how the provider split the text into
 * deltas, chunks must respect their budget, no text may be delivered twice or lost, and every
 * block reply that opens a code fence closes it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BlockChunker } from "../../src/reply/block-chunker.js";
import { parseFenceSpans } from "../../src/reply/fences.js";
import { MessageAssembly } from "../../src/reply/message-assembly.js";
import { isSilentText } from "../../src/reply/reply-directives.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import type { PartialReply } from "../../src/reply/types.js";
import { FakeAgent, inventedFences, unclosedFences } from "./helpers.js";

const TOKENS = [
	"Hello",
	"world",
	"a",
	"No",
	" ",
	"  ",
	".",
	"!",
	"\n",
	"\n\n",
	"<",
	">",
	"th",
	"ink",
	"<think>",
	"</think>",
	"<thinking>",
	"</ thinking >",
	"<antthinking>",
	"</antthinking>",
	"<final>",
	"</final>",
	"`",
	"``",
	"```",
	"```js\n",
	"\n```\n",
	"~~~\n",
	"[",
	"[[",
	"]]",
	"[[reply_to_current]]",
	"[[reply_to: 42]]",
	"[[audio_as_voice]]",
	"MEDIA: https://x.test/a.png\n",
	"\nMEDIA:",
	"ME",
	"NO_REPLY",
	"NO_",
	"REPLY",
	":",
];

const textArbitrary = fc.array(fc.constantFrom(...TOKENS), { maxLength: 30 }).map((tokens) => tokens.join(""));

/** A text and a way to cut it into deltas. */
const splitArbitrary = textArbitrary.chain((text) =>
	fc
		.uniqueArray(fc.integer({ min: 1, max: Math.max(1, text.length - 1) }), { maxLength: Math.min(12, text.length) })
		.map((cuts) => {
			const points = [0, ...cuts.filter((cut) => cut < text.length).sort((a, b) => a - b), text.length];
			const pieces = points.slice(1).map((end, index) => text.slice(points[index], end));
			return { text, pieces: pieces.filter((piece) => piece !== "") };
		}),
);

function assemble(pieces: string[], enforceFinalTag: boolean) {
	const assembly = new MessageAssembly(1, { enforceFinalTag, chunking: undefined });
	const snapshots: string[] = [];
	let retracted = false;
	let reasoningEnds = 0;
	for (const piece of pieces) {
		assembly.ingestText(0, "delta", piece);
		retracted = assembly.takeRetracted() || retracted;
		reasoningEnds += assembly.takeReasoningEnds();
		snapshots.push(assembly.cleanText);
	}
	assembly.finish();
	retracted = assembly.takeRetracted() || retracted;
	reasoningEnds += assembly.takeReasoningEnds();
	return {
		reasoningEnds,
		clean: assembly.cleanText,
		reasoning: assembly.reasoningText,
		media: assembly.mediaUrls,
		directives: assembly.directives,
		silent: assembly.isSilent,
		snapshots,
		retracted,
	};
}

/**
 * Text without whitespace and without the lines a split may add: a split fence is closed with a
 * bare marker line and reopened with its opening line (info string included), which is not new
 * content. Those lines are dropped wherever they stand, in the blocks and in the source alike;
 * every other line counts, the pieces of a line cut mid-line included.
 */
/**
 * Text without the silent token: a block that is the token alone (the chunker cut it from the
 * text before it) is not sent, so where a token is in the text is not compared.
 */
function unsaid(text: string): string {
	return text.replace(/NO_REPLY/gi, "");
}

function content(text: string, source: string | string[]): string {
	const openers = new Set((typeof source === "string" ? [source] : source).flatMap((part) => parseFenceSpans(part)).map((span) => span.marker.openLine.trim()));
	return text
		.split("\n")
		.filter((line) => !/^\s*(`{3,}|~{3,})\s*$/.test(line) && !openers.has(line.trim()))
		.join("")
		.replace(/\s+/g, "");
}

// Fences as whole lines (a split adds only bare close/reopen markers), and fence markers inside
// a line, which a cut mid-line must not turn into a fence line ("see ```ts" cut after "see").
const MID_LINE_FENCES = ["see ```ts ", "x ~~~ ", "```ts `x` "];
const BLOCK_TOKENS = [...TOKENS.filter((token) => !/[`~]/.test(token)), "\n```\n", "\n~~~\n", "`", ...MID_LINE_FENCES];
const blockSplitArbitrary = fc
	.array(fc.constantFrom(...BLOCK_TOKENS), { maxLength: 30 })
	.map((tokens) => tokens.join(""))
	.chain((text) =>
		fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, text.length - 1) }), { maxLength: 12 }).map((cuts) => {
			const points = [0, ...cuts.filter((cut) => cut < text.length).sort((a, b) => a - b), text.length];
			return { text, pieces: points.slice(1).map((end, index) => text.slice(points[index], end)).filter((piece) => piece !== "") };
		}),
	);

describe("streaming filters are split-invariant", () => {
	it("gives the same visible text, reasoning, reasoning ends, media and directives for any split", () => {
		fc.assert(
			fc.property(splitArbitrary, fc.boolean(), ({ text, pieces }, enforceFinalTag) => {
				const whole = assemble([text], enforceFinalTag);
				const split = assemble(pieces, enforceFinalTag);
				expect(split.clean).toBe(whole.clean);
				expect(split.reasoning).toBe(whole.reasoning);
				expect(split.media).toEqual(whole.media);
				expect(split.directives).toEqual(whole.directives);
				expect(split.silent).toBe(whole.silent);
				// onReasoningEnd's count: two stray </think> in one delta ended one passage, a character at a time two (a probe's fuzzer).
				expect(split.reasoningEnds).toBe(whole.reasoningEnds);
			}),
			{ numRuns: 1500, examples: [[{ text: "abc</think>def</think>ghi", pieces: ["abc</think>d", "ef</think>ghi"] }, false]] },
		);
	});

	it("only ever grows the visible text (partials are prefixes of the final text) unless it retracts", () => {
		fc.assert(
			fc.property(splitArbitrary, ({ pieces }) => {
				const result = assemble(pieces, false);
				if (result.retracted) return;
				for (const snapshot of result.snapshots) expect(result.clean.startsWith(snapshot.trimEnd())).toBe(true);
			}),
			{ numRuns: 1000 },
		);
	});

	it("leaves no space at the start of a line where a directive or a tag was removed", () => {
		// The only spaces are those after a directive or a tag: none of them belongs to the text.
		const removable = ["[[reply_to_current]] ", "[[reply_to: 42]] ", "[[audio_as_voice]] ", "<think>x</think> ", "<final> ", "MEDIA: https://x.test/a.png\n"];
		const lineText = fc
			.array(fc.constantFrom("Hello", "world.", "\n", "\n\n", ...removable), { maxLength: 20 })
			.map((tokens) => tokens.join(""))
			.chain((text) =>
				fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, text.length - 1) }), { maxLength: 8 }).map((cuts) => {
					const points = [0, ...cuts.filter((cut) => cut < text.length).sort((a, b) => a - b), text.length];
					return points.slice(1).map((end, index) => text.slice(points[index], end)).filter((piece) => piece !== "");
				}),
			);
		fc.assert(
			fc.property(lineText, (pieces) => {
				for (const line of assemble(pieces, false).clean.split("\n")) expect(line).not.toMatch(/^[ \t]/);
			}),
			{ numRuns: 1000 },
		);
	});

	it("never shows anything of a silent answer while it streams", () => {
		fc.assert(
			fc.property(fc.constantFrom("NO_REPLY", "  NO_REPLY\n", "[[reply_to_current]]NO_REPLY", "no_reply"), fc.integer({ min: 1, max: 4 }), (text, size) => {
				const pieces = text.match(new RegExp(`[\\s\\S]{1,${size}}`, "g")) ?? [];
				const result = assemble(pieces, false);
				expect(result.silent).toBe(true);
				expect(result.snapshots.every((snapshot) => snapshot === "")).toBe(true);
			}),
		);
	});
});

describe("block replies deliver every visible character exactly once", () => {
	it("for any split and chunk budget", () => {
		fc.assert(
			fc.property(
				blockSplitArbitrary,
				fc.integer({ min: 1, max: 30 }),
				fc.integer({ min: 0, max: 60 }),
				fc.constantFrom("text_end" as const, "message_end" as const),
				({ text, pieces }, minChars, extra, mode) => {
					const maxChars = minChars + extra + 20;
					const agent = new FakeAgent();
					const blocks: string[] = [];
					subscribeReplies(agent, {
						blockReplyBreak: mode,
						blockReplyChunking: { minChars, maxChars },
						onBlockReply: (payload) => void blocks.push(payload.text ?? ""),
					});
					agent.messageStart();
					for (const piece of pieces) agent.delta(piece);
					agent.textEnd(text);
					agent.messageEnd();
					const expected = assemble([text], false);
					fc.pre(!expected.retracted);
					if (expected.silent) expect(blocks.join("")).toBe("");
					else expect(unsaid(content(blocks.join("\n"), expected.clean))).toBe(unsaid(content(expected.clean, expected.clean)));
					for (const block of blocks) expect(isSilentText(block)).toBe(false);
					for (const block of blocks) expect(block.length).toBeLessThanOrEqual(maxChars);
					for (const block of blocks) expect(unclosedFences(block, { maxChars })).toEqual([]);
					for (const block of blocks) expect(inventedFences(block, expected.clean, { maxChars })).toEqual([]);
				},
			),
			{ numRuns: 1000 },
		);
	});
});

describe("two subscriptions on one source", () => {
	it("deliver the same blocks, though the first rewrites the message's thinking tags before the second reads it", () => {
		fc.assert(
			fc.property(splitArbitrary, fc.constantFrom("text_end" as const, "message_end" as const), ({ text, pieces }, mode) => {
				const agent = new FakeAgent();
				const sent: string[][] = [[], []];
				for (const blocks of sent) {
					subscribeReplies(agent, {
						blockReplyBreak: mode,
						blockReplyChunking: { minChars: 5, maxChars: 40 },
						onBlockReply: (payload) => void blocks.push(payload.text ?? ""),
					});
				}
				agent.messageStart();
				for (const piece of pieces) agent.delta(piece);
				agent.textEnd(text);
				agent.messageEnd();
				expect(sent[1]).toEqual(sent[0]);
				const expected = assemble([text], false);
				// A fence whose opening line leaves less room than two characters of code and the closing
				// line cannot be split closed: a code line of markers ("``````js") is cut after at most two
				// of them, so that no piece closes the block (CI stress, seed -100193382).
				const allowance = { maxChars: 40, room: 2 };
				for (const block of sent[0] ?? []) expect(unclosedFences(block, allowance)).toEqual([]);
				// Blocks sent before an orphan </think> retracted the text come from a clean text that is gone.
				if (!expected.retracted) for (const block of sent[0] ?? []) expect(inventedFences(block, expected.clean, allowance)).toEqual([]);
			}),
			// CI, seed -419884517: an unclosed "[[" before reasoning that ran to the end was held back as a
			// possible directive past text_end, and the block sent then ended before it, in mid-line.
			// CI, seed 1494954721: a line longer than maxChars that starts with five backticks and has its
			// next backticks past maxChars has no cut that reads as no fence (helpers' hasSafeCut).
			{
				numRuns: 500,
				examples: [
					[{ text: "```[[```<thinking>", pieces: ["```[[```<thinking>"] }, "text_end"],
					[{ text: "`````HelloHello<thinking>Hello</ thinking >```", pieces: ["`````HelloHello<thinking>Hello</ thinking >```"] }, "text_end"],
					[{ text: "```MEDIA: https://x.test/a.png\n``````js\n", pieces: ["```MEDIA: https://x.test/a.png\n``````js\n"] }, "text_end"],
				],
			},
		);
	});
});

describe("messages with several text blocks", () => {
	it("deliver every visible character of every block exactly once", () => {
		fc.assert(
			fc.property(blockSplitArbitrary, blockSplitArbitrary, fc.integer({ min: 1, max: 30 }), (first, second, minChars) => {
				const maxChars = minChars + 40;
				const agent = new FakeAgent();
				const blocks: string[] = [];
				subscribeReplies(agent, {
					blockReplyChunking: { minChars, maxChars },
					onBlockReply: (payload) => void blocks.push(payload.text ?? ""),
				});
				agent.messageStart();
				for (const piece of first.pieces) agent.delta(piece, 0);
				agent.textEnd(first.text, 0);
				for (const piece of second.pieces) agent.delta(piece, 1);
				agent.textEnd(second.text, 1);
				agent.messageEnd();
				const expected = new MessageAssembly(1, { enforceFinalTag: false, chunking: undefined });
				expected.ingestText(0, "delta", first.text);
				expected.endTextBlock(0);
				expected.ingestText(1, "delta", second.text);
				expected.finish();
				// Text an orphan close retracts may already have been sent; that case is not exactly-once.
				fc.pre(!expected.takeRetracted());
				// Each text block is Markdown of its own: its fences are those it opens by itself.
				const sources = [first.text, second.text].map((text) => assemble([text], false).clean);
				if (expected.isSilent) expect(blocks.join("")).toBe("");
				else expect(unsaid(content(blocks.join("\n"), sources))).toBe(unsaid(content(expected.cleanText, sources)));
				for (const block of blocks) expect(isSilentText(block)).toBe(false);
				for (const block of blocks) expect(block.length).toBeLessThanOrEqual(maxChars);
				for (const block of blocks) expect(unclosedFences(block, { maxChars })).toEqual([]);
				for (const block of blocks) expect(inventedFences(block, sources, { maxChars })).toEqual([]);
			}),
			{ numRuns: 500 },
		);
	});
});

// Characters made of several code points: a ZWJ family (11 code units), flags, a skin tone, a
// combining accent, a keycap. A cut inside one shows two different glyphs.
const CLUSTERS = ["👨‍👩‍👧‍👦", "🇺🇸", "🇩🇪", "👍🏽", "e\u0301", "1️⃣"];
const LONGEST_CLUSTER = Math.max(...CLUSTERS.map((cluster) => cluster.length));
const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/**
 * The characters that a boundary between two chunks falls inside. One that a fence marker follows
 * on its line may be split: when it fills a chunk, the only other cut (after it) would start the
 * next chunk with the marker, a code block the model never wrote (see chunk-cuts.ts, hardCut).
 */
function splitCharacters(bodies: readonly string[], joined: string): string[] {
	const split: string[] = [];
	const segments = segmenter.segment(joined);
	let at = 0;
	for (const body of bodies.slice(0, -1)) {
		at += body.length;
		const cluster = segments.containing(at);
		if (!cluster || cluster.index === at) continue;
		// A fence line may be indented by up to three spaces (CI found " ~~~" after a ZWJ family).
		if (!/^ {0,3}(?:`{3}|~{3})/.test(joined.slice(cluster.index + cluster.segment.length))) split.push(cluster.segment);
	}
	return split;
}

describe("BlockChunker", () => {
	const chunkText = fc
		.array(fc.constantFrom("word", " ", "\n", "\n\n", ".", "```js\n", "\n```\n", "~~~\n", "x".repeat(25), "  indented", "😀", "🎉".repeat(9), ...CLUSTERS, ...MID_LINE_FENCES), { maxLength: 40 })
		.map((tokens) => tokens.join(""));

	it("never exceeds maxChars, never splits a surrogate pair or (when one fits) a user-perceived character, and loses nothing but synthetic fence lines", () => {
		fc.assert(
			fc.property(
				chunkText,
				fc.integer({ min: 1, max: 40 }),
				fc.integer({ min: 0, max: 80 }),
				fc.array(fc.integer({ min: 1, max: 50 }), { maxLength: 10 }),
				fc.constantFrom("paragraph" as const, "newline" as const, "sentence" as const),
				(text, minChars, extra, cuts, breakPreference) => {
					const maxChars = minChars + extra + 4;
					const chunker = new BlockChunker({ minChars, maxChars, breakPreference });
					const chunks = [];
					let rest = text;
					for (const cut of cuts) {
						chunker.append(rest.slice(0, cut));
						rest = rest.slice(cut);
						chunks.push(...chunker.drain({ force: false }));
					}
					chunker.append(rest);
					chunks.push(...chunker.drain({ force: true }));
					let joined = "";
					const bodies: string[] = [];
					let reopened: string | undefined;
					for (const chunk of chunks) {
						expect(chunk.text.length).toBeLessThanOrEqual(maxChars);
						// Blank lines that start the buffer count against the first chunk's budget. Between the fence
						// lines a code point must fit (2 units), not a whole character: one that does not fit is
						// split there, inside the block (the room of the longest character hid chunks that left it open).
						const room = 2 + text.length - text.trimStart().length;
						expect(unclosedFences(chunk.text, { maxChars, room })).toEqual([]);
						expect(inventedFences(chunk.text, text, { maxChars, room })).toEqual([]);
						expect(chunk.text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
						let body = chunk.text;
						if (reopened !== undefined && body.startsWith(reopened)) body = body.slice(reopened.length);
						if (chunk.closedFence !== undefined) body = body.slice(0, body.length - chunk.closedFence.length);
						reopened = chunk.reopenedFence;
						bodies.push(body);
						joined += body;
					}
					expect(joined.replace(/\s+/g, "")).toBe(text.replace(/\s+/g, ""));
					// Each character whole in one chunk: the chunks' characters are the text's.
					if (maxChars > LONGEST_CLUSTER) expect(splitCharacters(bodies, joined)).toEqual([]);
				},
			),
			// Stress runs, seeds -1884201381 and 220160152: under size pressure a cut after a family emoji
			// that fills the chunk, with "`" (or "~") arrived after it, was made at once; the next
			// characters made the rest the fence line "```js" (or "~~~").
			{
				numRuns: 1500,
				examples: [
					["```js\n👨‍👩‍👧‍👦 ~~~\n", 9, 4, [], "paragraph"],
					["👨‍👩‍👧‍👦```js\n", 5, 2, [12], "paragraph"],
					["👨‍👩‍👧‍👦wordword  indented```js\n👨‍👩‍👧‍👦~~~\n", 3, 4, [47], "paragraph"],
				],
			},
		);
	});
});

describe("the answer recorded without block replies (the final-reply path)", () => {
	it("is what block replies at message_end send, for any text blocks: tags, fences and directives read block by block", () => {
		fc.assert(
			fc.property(textArbitrary, textArbitrary, (first, second) => {
				const content = [
					{ type: "text" as const, text: first },
					{ type: "text" as const, text: second },
				];
				const recorded = new FakeAgent();
				const replies = subscribeReplies(recorded);
				recorded.messageStart();
				recorded.messageEnd(content);
				const sent = new FakeAgent();
				const blocks: string[] = [];
				subscribeReplies(sent, { blockReplyBreak: "message_end", onBlockReply: (payload) => void blocks.push(payload.text ?? "") });
				sent.messageStart();
				sent.messageEnd(content);
				const texts = blocks.filter((text) => text !== "");
				expect(replies.assistantTexts).toEqual(texts.length > 0 ? [texts.join("\n\n")] : []);
			}),
			// CI, seed 1481490416: a glued silent token's remains were recorded, not sent.
			{ numRuns: 1000, examples: [["NO_REPLYNO_REPLY", ""]] },
		);
	});
});

describe("partial replies", () => {
	it("end with every fence closed when the message ends (a live message may stay as the answer)", () => {
		fc.assert(
			fc.property(splitArbitrary, ({ pieces }) => {
				const agent = new FakeAgent();
				const partials: string[] = [];
				subscribeReplies(agent, { onPartialReply: (partial) => void partials.push(partial.text) });
				agent.messageStart();
				for (const piece of pieces) agent.delta(piece);
				// An abort or a provider error ends the message without text_end.
				agent.messageEnd();
				expect(unclosedFences(partials.at(-1) ?? "")).toEqual([]);
			}),
			{ numRuns: 1000 },
		);
	});
});

describe("partial replies, one after another", () => {
	it("each carries what its text adds to the one before (or replaces it, with no delta, only when a closing reasoning tag took shown text back): a live message built from the deltas shows the text", () => {
		fc.assert(
			fc.property(splitArbitrary, splitArbitrary, fc.boolean(), (first, second, ended) => {
				const agent = new FakeAgent();
				const partials: PartialReply[] = [];
				subscribeReplies(agent, { onPartialReply: (partial) => void partials.push(partial) });
				agent.messageStart();
				for (const piece of first.pieces) agent.delta(piece);
				// A block that ends (inside a fence, its closing line is added) and a second one after it.
				if (ended) agent.textEnd();
				for (const piece of second.pieces) agent.delta(piece, ended ? 1 : 0);
				agent.messageEnd();
				let live = "";
				for (const partial of partials) {
					if (partial.replace) {
						expect(partial.delta).toBe("");
						// Nothing else takes back what a live message showed (closing a fence at a block's
						// end comes after the blank lines shown already).
						expect(first.text + second.text).toMatch(/<[ \t]*\/[ \t]*(antthinking|thinking|thought|think|final)[ \t]*>/i);
						live = partial.text;
					} else {
						expect(partial.text).toBe(live + partial.delta);
						live += partial.delta;
					}
				}
			}),
			{ numRuns: 1000 },
		);
	});
});

describe("tool summaries", () => {
	it("are one line that opens no code fence, whatever the command", () => {
		const command = fc.array(fc.constantFrom("cat", "x", " ", "\n", "\r\n", "```", "`", "``", "~~~", "js", "EOF", "<<"), { minLength: 1, maxLength: 20 }).map((tokens) => tokens.join(""));
		fc.assert(
			fc.property(command, fc.constantFrom("markdown" as const, "plain" as const), (text, toolResultFormat) => {
				fc.pre(text.trim() !== "");
				const agent = new FakeAgent();
				const messages: string[] = [];
				subscribeReplies(agent, { verbose: "full", toolResultFormat, onToolResult: (payload) => void messages.push(payload.text ?? "") });
				agent.toolStart("exec", { command: text });
				agent.toolEnd("exec", { content: [{ type: "text", text: "ok" }] });
				expect(messages[0]).not.toMatch(/\n/);
				for (const message of messages) expect(unclosedFences(message)).toEqual([]);
				// The output's own fence is the only one.
				expect(parseFenceSpans(messages[1] ?? "")).toHaveLength(toolResultFormat === "markdown" ? 1 : 0);
			}),
			{ numRuns: 500 },
		);
	});
});
