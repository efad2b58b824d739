/**
 * Where a block chunker cuts: the best boundary inside a window at the head of the text.
 *
 * Every decision looks at most `maxChars` (plus the rest of a paragraph break) into the text, so
 * one cut costs the same whether the text is one kilobyte or one megabyte. The caller keeps the
 * code-fence spans and slides the window; this module only picks the cut.
 */
import { classifyFenceLine, couldBecomeFenceLine, fenceAt, fenceCloseLine, type FenceMarker, type FenceSpan } from "./fences.js";

/** A kind of boundary, from the best to the worst. */
export type CutKind = "paragraph" | "newline" | "sentence" | "space";

/**
 * A break known to follow the text although it has not been appended yet (held back by a filter).
 *
 * @example
 * const followedBy: FollowingBreak = "paragraph"; // the text that comes next starts a new paragraph
 * const chunks = chunker.drain({ force: false, followedBy });
 */
export type FollowingBreak = "newline" | "paragraph";

/** The head of the remaining text that a cut can fall in. */
export interface CutWindow {
	/**
	 * The first `limit + 1` characters of the text (more when a paragraph break straddles that
	 * point), and up to {@link GRAPHEME_LOOKAHEAD} more: a cut must see the whole character it falls in.
	 */
	text: string;
	/** The length of the whole remaining text. */
	length: number;
	/** The fenced blocks that overlap the window, in window coordinates, in order. */
	spans: readonly FenceSpan[];
	/** A break that follows the whole text, if one is known. */
	followedBy: FollowingBreak | undefined;
}

/** The chunker's settings for one cut. */
export interface CutSettings {
	minChars: number;
	maxChars: number;
	/** Preferred boundaries, best first (space and hard cuts are the fallbacks after them). */
	order: readonly CutKind[];
	/** The text must go out now: any boundary will do, however short the chunk. */
	force: boolean;
}

/** A chunk cut at `at`; the rest starts there (after separating whitespace when `skipSpaces`, then blank lines). */
export interface PlainCut {
	type: "plain";
	text: string;
	at: number;
	skipSpaces: boolean;
}

/** A chunk cut at `at` in the middle of anything; the rest starts exactly there. */
export interface HardCut {
	type: "hard";
	text: string;
	at: number;
}

/** A chunk cut inside a fenced block: closed with `closeLine`; the rest reopens it with `reopenLine`. */
export interface FenceCut {
	type: "fence";
	text: string;
	closeLine: string;
	reopenLine: string;
	/** Where the rest of the fenced block continues. */
	tailAt: number;
	/** The fenced block that was split (window coordinates). */
	span: FenceSpan;
}

/** A cut, or where it leaves the rest. */
export type Cut = PlainCut | HardCut | FenceCut;

const PATTERNS: Record<CutKind, RegExp> = {
	paragraph: /\n[ \t]*\r?\n/g,
	newline: /\n/g,
	sentence: /[.!?]["')\]]*(?=\s)/g,
	space: /[ \t]/g,
};

const SUFFIX: Record<FollowingBreak, string> = { newline: "\n", paragraph: "\n\n" };

/**
 * A chunk's text: without the blank lines that start it and the whitespace that ends it.
 *
 * @example
 * cleanChunk("\n\nHello  \n"); // "Hello"
 */
export function cleanChunk(text: string): string {
	return text.replace(/^(?:[ \t]*\r?\n)+/, "").trimEnd();
}

/**
 * How far past `limit` a window must reach so that a paragraph break starting at or before
 * `limit` is seen whole: past a run of spaces, a carriage return and a newline.
 *
 * @example
 * const text = "ab\n   \ncd";
 * windowEnd((index) => text[index], text.length, 2); // 7: the break "\n   \n" starting at 2 ends there
 */
export function windowEnd(charAt: (index: number) => string | undefined, length: number, limit: number): number {
	let end = Math.min(length, limit + 1);
	while (end < length && (charAt(end) === " " || charAt(end) === "\t")) end += 1;
	if (end < length && charAt(end) === "\r") end += 1;
	if (end < length && charAt(end) === "\n") end += 1;
	return end;
}

/**
 * Picks the cut for a chunk of at most `maxChars`: the last boundary of the best kind past the
 * shortest allowed chunk and outside fenced blocks; a space or a hard cut only under `maxChars`
 * pressure (or when forced); inside a fenced block only when nothing else fits, closing and
 * reopening it. `undefined`: wait for more text.
 *
 * @example
 * const text = "First paragraph.\n\nSecond";
 * findCut({ text, length: text.length, spans: [], followedBy: undefined }, { minChars: 5, maxChars: 100, order: ["paragraph"], force: false });
 * // { type: "plain", text: "First paragraph.", at: 16, skipSpaces: false }
 */
export function findCut(window: CutWindow, settings: CutSettings): Cut | undefined {
	const { force, maxChars } = settings;
	const limit = Math.min(window.length, maxChars);
	const shortest = force ? 1 : settings.minChars;
	const reachesEnd = window.text.length >= window.length;
	const text = reachesEnd && window.followedBy ? window.text + SUFFIX[window.followedBy] : window.text;
	// Only a forced drain of the whole rest knows that nothing follows the text.
	const textEnds = force && reachesEnd;
	const firstVisible = text.search(/\S/);
	const blankBefore = (at: number): boolean => firstVisible === -1 || at <= firstVisible;
	const lastCut = (kind: CutKind): number | undefined => {
		const candidates: number[] = [];
		for (const match of text.matchAll(PATTERNS[kind])) {
			const at = kind === "sentence" ? match.index + match[0].length : match.index;
			if (at > limit) break;
			if (at < shortest || fenceAt(window.spans, at) || blankBefore(at)) continue;
			candidates.push(at);
		}
		// The fence-line check reads the cut's whole line: asked of the last candidates only (the
		// last one nearly always passes), not of every space of a long line.
		const checksFence = kind === "sentence" || kind === "space";
		for (let index = candidates.length - 1; index >= 0; index--) {
			const at = candidates[index] as number;
			if (!checksFence || !makesFenceLine(text, at, true, textEnds)) return at;
		}
		return undefined;
	};
	const plain = (at: number, kind: CutKind): PlainCut => ({
		type: "plain",
		text: cleanChunk(text.slice(0, at)),
		at,
		skipSpaces: kind === "sentence" || kind === "space",
	});
	for (const kind of settings.order) {
		const at = lastCut(kind);
		if (at !== undefined) return plain(at, kind);
	}
	// Only size pressure justifies a worse cut; otherwise wait for a better boundary. At exactly
	// maxChars it waits for one more character too: the last one may still grow (a ZWJ sequence,
	// a flag's second half, a combining accent), and a cut there would split it.
	if (!force && window.length <= maxChars) return undefined;
	const space = lastCut("space");
	if (space !== undefined) return plain(space, "space");
	const span = fenceAt(window.spans, limit);
	if (span) {
		const fenceCut = cutInsideFence(text, span, shortest, maxChars, textEnds);
		if (fenceCut) return fenceCut;
		// Too little room to reopen the fence here: end the chunk before the fence instead.
		if (span.start >= shortest && !blankBefore(span.start)) return plain(span.start, "newline");
		// A chunk below minChars that closes the fence, or ends before it, beats a hard cut that
		// leaves it open (the rest of the chat shown as code): only an opening line too long to
		// close within maxChars leaves no choice.
		const shortFenceCut = cutInsideFence(text, span, 1, maxChars, textEnds);
		if (shortFenceCut) return shortFenceCut;
		if (span.start > 0 && !blankBefore(span.start)) return plain(span.start, "newline");
	}
	const at = hardCut(text, limit, textEnds);
	if (at === undefined) return undefined;
	return { type: "hard", text: cleanChunk(text.slice(0, at)), at };
}

/**
 * A hard cut at or before `limit` (and after `from`), on a whole character, that turns no part of
 * the line it falls in into a fence line; between the code points of a character only when a
 * marker surely follows it; when every cut in the line would make one, the cut at `limit` stands.
 * `undefined` (outside a fenced block only): wait for the characters that decide whether a marker follows.
 */
function hardCut(text: string, limit: number, textEnds: boolean, from = 0, open: FenceMarker | null = null): number | undefined {
	const at = wholeGraphemeCut(text, limit);
	if (!makesFenceLine(text, at, false, textEnds)) return at;
	const lineStart = Math.max(from, text.lastIndexOf("\n", at - 1) + 1);
	for (let earlier = at - 1; earlier > lineStart; earlier -= 1) {
		if (startsCharacter(text, earlier) && !makesFenceLine(text, earlier, false, textEnds)) return earlier;
	}
	// No whole character ends in time (one that fills the chunk, then a fence marker): splitting
	// it between code points beats opening a code block the model never wrote. Not for a marker
	// that may only still come ("👨‍👩‍👧‍👦" then "`" so far): the next characters decide, so the
	// chunk waits for them (a cut before "`" made the fence line "```js" once "``js" came). Inside
	// a fenced block such a piece is code unless it closes the block (below).
	if (!makesFenceLine(text, at, false, true)) return open ? at : undefined;
	for (let earlier = at - 1; earlier > lineStart; earlier -= 1) {
		if (wholeCharacterCut(text, earlier) === earlier && !makesFenceLine(text, earlier, false, textEnds)) return earlier;
	}
	// Inside a fenced block (`open`) a piece that reads as a fence line is code, unless it closes
	// the block: a cut that keeps the block open beats the one at the limit ("``````js" cut after
	// five backticks ends the block there, and the rest of the chunk is shown as text).
	if (open) {
		for (let candidate = at; candidate > lineStart; candidate -= 1) {
			if (startsCharacter(text, candidate) && !closesFence(text, candidate, open, textEnds)) return candidate;
		}
	}
	return at;
}

/**
 * True when a cut at `at`, inside a line of a fenced block whose marker is `open`, makes a piece
 * that closes the block: the head, before the chunk's synthetic closing line, or the rest, after
 * the reopened opening line. The rest is read from its first characters alone, as in
 * {@link makesFenceLine}: a close, or what may still become one.
 *
 * @example
 * closesFence("```\n``````js", 9, { char: "`", length: 3, indent: "", openLine: "```" }, true); // true: "`````" closes it
 * closesFence("```\n``````js", 6, { char: "`", length: 3, indent: "", openLine: "```" }, true); // false: "``", then "````js"
 */
export function closesFence(text: string, at: number, open: FenceMarker, textEnds: boolean): boolean {
	const lineStart = text.lastIndexOf("\n", at - 1) + 1;
	if (classifyFenceLine(text.slice(lineStart, at), open).kind === "close") return true;
	const ahead = text.slice(at, at + 6);
	const newline = ahead.indexOf("\n");
	if (newline !== -1) return classifyFenceLine(ahead.slice(0, newline), open).kind === "close";
	if (textEnds && at + ahead.length >= text.length) return classifyFenceLine(ahead, open).kind === "close";
	return couldBecomeFenceLine(ahead, open);
}

/**
 * Whether a user-perceived character starts at `at`. Not `wholeGraphemeCut(text, at) === at`:
 * that one splits a cluster that starts the text (a cut before it would leave nothing), which
 * is right at the size limit but not when a cut is only moved back to spare a fence line.
 */
function startsCharacter(text: string, at: number): boolean {
	if (!graphemes) return wholeCharacterCut(text, at) === at;
	return graphemes.segment(text.slice(0, at + GRAPHEME_LOOKAHEAD)).containing(at)?.index === at;
}

const FENCE_RUN = /^ {0,3}(?:`{3}|~{3})/;

/**
 * True when a cut at `at`, inside a line, makes a fence line of a piece of it: the head, which
 * ends its chunk ("```ts" of "```ts `x`", whose info string has a backtick, so the whole line is
 * no fence), or the rest, which starts the next one ("```ts" of "see ```ts", after the spaces the
 * cut drops when `skipSpaces`). Either opens a code block the model never wrote, and the chat
 * client shows what follows as code. The rest counts from its first characters alone, whatever
 * the end of its line (not seen yet, maybe), so the answer does not depend on how much text has
 * arrived; unless `textEnds`, a rest that has not arrived yet may still become one. Outside fenced blocks the whole line is no fence line (a real one is inside its block);
 * inside one, a piece that reads as a fence line would close the block early.
 *
 * @example
 * makesFenceLine("Some words then ```ts and more", 15, true, true); // true: the rest would open a fence
 * makesFenceLine("Some words then ```ts and more", 10, true, true); // false
 * makesFenceLine("Some words then ", 15, true, false);              // true: "```" may come next
 */
export function makesFenceLine(text: string, at: number, skipSpaces: boolean, textEnds: boolean): boolean {
	const lineStart = text.lastIndexOf("\n", at - 1) + 1;
	if (at <= lineStart || at >= text.length || text[at] === "\n") return false;
	const head = text.slice(lineStart, at).trimEnd();
	if (FENCE_RUN.test(head) && classifyFenceLine(head, null).kind === "open") return true;
	let from = at;
	if (skipSpaces) while (text[from] === " " || text[from] === "\t") from += 1;
	const rest = text.slice(from, from + 6);
	if (FENCE_RUN.test(rest)) return true;
	// What has arrived of the rest may still grow into a marker run.
	return !textEnds && from + rest.length >= text.length && /^ {0,3}(?:`{0,2}|~{0,2})$/.test(rest);
}

// Undefined only on a runtime built without Intl; cuts then fall between code points.
const graphemes = typeof Intl.Segmenter === "function" ? new Intl.Segmenter(undefined, { granularity: "grapheme" }) : undefined;

/** How many code units past a cut a window shows, so the character at the cut is seen whole. */
export const GRAPHEME_LOOKAHEAD = 32;

/**
 * Moves a cut at `at` to the start of the user-perceived character (grapheme cluster) it falls
 * in: a family emoji joined by ZWJ, a flag (two regional indicators), a letter with combining
 * accents, a keycap. Cut inside one, each chunk shows a different glyph (👨‍👩 and ‍👧‍👦, 🇺 and 🇸,
 * an accent on nothing). When the cluster starts the chunk (`maxChars` smaller than one
 * cluster), the cut falls between its code points, as {@link wholeCharacterCut} places it.
 *
 * @example
 * wholeGraphemeCut("ab👨‍👩‍👧", 5); // 2: before the family, not after its second person
 */
export function wholeGraphemeCut(text: string, at: number): number {
	if (graphemes && at > 0 && at < text.length) {
		// The character at the cut decides whether the cluster before it goes on. When only its
		// first half has arrived it is not known yet: cut before that cluster instead.
		const probe = isHighSurrogate(text.charCodeAt(at)) && at + 1 === text.length ? at - 1 : at;
		// Segmented from the chunk's start: regional indicators pair up counting from the first.
		const cluster = graphemes.segment(text.slice(0, probe + GRAPHEME_LOOKAHEAD)).containing(probe);
		// "\r\n" is one cluster too, but a cut in a line break loses nothing: it is trimmed either way.
		if (cluster && cluster.index > 0 && cluster.segment !== "\r\n") return cluster.index;
	}
	return wholeCharacterCut(text, at);
}

/**
 * Moves a cut at `at` off the middle of a surrogate pair (an emoji, a CJK extension character),
 * or off a pair's first half that ends the text so far: each half alone is not text, and a
 * channel shows it as "\uFFFD" or rejects the message. The cut moves back a code unit, or forward
 * past the pair when the chunk would otherwise be empty (`maxChars` 1: one whole character is
 * the smallest chunk there is).
 *
 * @example
 * wholeCharacterCut("a😀b", 2); // 1: before the emoji, not between its halves
 */
export function wholeCharacterCut(text: string, at: number): number {
	if (at <= 0 || at > text.length || !isHighSurrogate(text.charCodeAt(at - 1))) return at;
	// At the end of the text so far, a pair's first half waits for its second (a delta may end
	// between them); inside it, a first half not followed by a second is not a pair to keep.
	if (at < text.length && !isLowSurrogate(text.charCodeAt(at))) return at;
	if (at - 1 > 0) return at - 1;
	return at < text.length ? at + 1 : at;
}

/**
 * Whether a UTF-16 code unit is the first half of a surrogate pair (an emoji's, for one).
 *
 * @example
 * isHighSurrogate("👋".charCodeAt(0)); // true
 */
export function isHighSurrogate(code: number): boolean {
	return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
	return code >= 0xdc00 && code <= 0xdfff;
}

function cutInsideFence(text: string, span: FenceSpan, shortest: number, maxChars: number, textEnds: boolean): FenceCut | undefined {
	const { marker } = span;
	const closeLine = fenceCloseLine(marker);
	const reopenLine = marker.openLine;
	const contentStart = span.start + reopenLine.length + 1;
	// The chunk gets "\n" + closeLine appended; the budget includes it.
	const budget = maxChars - closeLine.length - 1;
	if (budget <= contentStart || budget < shortest) return undefined;
	const newline = text.lastIndexOf("\n", budget);
	// Mid-line, a piece of a code line must not read as a fence line either: the rest as the
	// reopened block's closing line, the head as one just before the synthetic close.
	// Inside a fenced block hardCut always cuts.
	let at = newline > contentStart ? newline : (hardCut(text, budget, textEnds, contentStart, marker) ?? budget);
	// No whole character fits between the fence lines (a family emoji, a letter under a pile of
	// accents, a small maxChars): it is split between its code points, inside the block. Cut
	// anywhere else, the chunk would end with the block open and the rest of the chat show as code.
	if (at <= contentStart) {
		const split = wholeCharacterCut(text, budget);
		if (split > contentStart && !closesFence(text, split, marker, textEnds)) at = split;
	}
	// Not even a code point fits after the reopened fence: a chunk here would hold nothing but the
	// fence, and the next one would start the same way, for ever.
	if (at <= contentStart) return undefined;
	return {
		type: "fence",
		text: `${cleanChunk(text.slice(0, at))}\n${closeLine}`,
		closeLine,
		reopenLine,
		tailAt: newline > contentStart ? at + 1 : at,
		span,
	};
}
