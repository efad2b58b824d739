/**
 * Cuts a growing text into block replies of a comfortable size.
 *
 * A block is at least `minChars` long (unless the text ends, or only a shorter chunk can keep a
 * code fence closed) and never longer than `maxChars`.
 * Cuts fall, in order of preference, on a paragraph break, a line break, a sentence end; only
 * when the buffer has reached `maxChars` (or the text ends) on a space, and as a last resort
 * anywhere. A cut never falls inside a fenced code block unless the block alone is too long:
 * then the chunk is closed with a fence line and the next one reopens it with the original
 * opening line, and both synthetic lines count against `maxChars`. A forced drain closes the fence
 * the text leaves open where it ends (a reply cut off mid-block): each chunk is a chat message of
 * its own, and an open fence would show the rest of the chat as code.
 *
 * A drain parses the buffer's code fences once and then slides a window of `maxChars` over the
 * text, so draining a long reply costs time in proportion to its length (re-reading the whole
 * rest after every chunk made it grow with the square of the length). The last chunk of a forced
 * drain, at most `maxChars` long, is read once more for a fence it leaves open.
 */
import { cleanChunk, findCut, GRAPHEME_LOOKAHEAD, windowEnd, type Cut, type CutKind, type CutWindow, type FollowingBreak } from "./chunk-cuts.js";
import { classifyFenceLine, closingFenceLine, parseFenceSpans, type FenceMarker, type FenceSpan } from "./fences.js";

export type { FollowingBreak } from "./chunk-cuts.js";

/**
 * Where a chunker prefers to cut.
 *
 * @example
 * const breakPreference: BreakPreference = "sentence"; // cut at the last sentence end in reach, else at a line break
 * const chunker = new BlockChunker({ maxChars: 800, breakPreference });
 */
export type BreakPreference = "paragraph" | "newline" | "sentence";

/**
 * Options of {@link BlockChunker}.
 *
 * @example
 * const chunking: BlockChunkingOptions = { minChars: 200, maxChars: 1500, breakPreference: "paragraph" };
 * subscribeReplies(agent, { blockReplyChunking: chunking, onBlockReply: (payload) => chat.send(payload.text ?? "") });
 */
export interface BlockChunkingOptions {
	/** Smallest block sent while the text is still streaming (default 800). */
	minChars?: number;
	/** Largest block ever sent, synthetic fence lines included (default 1200). */
	maxChars?: number;
	/** Preferred cut (default "paragraph"). */
	breakPreference?: BreakPreference;
	/** Emit every paragraph as soon as it is complete and long enough, not just the first one per drain. */
	flushOnParagraph?: boolean;
}

/**
 * One block cut from the buffer.
 *
 * @example
 * for (const chunk of chunker.drain({ force: false })) await chat.send(chunk.text); // a code fence cut in two is closed and reopened
 */
export interface BlockChunk {
	/** The block's text, trimmed at the end. */
	text: string;
	/**
	 * The fence line appended to close a code block: one that continues in the next chunk (then
	 * `reopenedFence` is set), or one the text left open where it ended (the last chunk of a forced drain).
	 */
	closedFence?: string;
	/** The opening fence line the next chunk starts with to reopen that code block. */
	reopenedFence?: string;
}

/**
 * Options of {@link BlockChunker.drain}.
 *
 * @example
 * chunker.append(delta);
 * const ready = chunker.drain({ force: false }); // only chunks that reached minChars
 * const rest = chunker.drain({ force: true } satisfies DrainOptions); // at the message's end: everything
 */
export interface DrainOptions {
	/** The text has ended (or must be delivered now): emit everything, even below `minChars`. */
	force: boolean;
	/**
	 * A line or paragraph break known to follow the buffered text although it was not appended
	 * (a streaming filter holds trailing whitespace back): the end of the buffer is then a
	 * boundary like any other, so a complete last line need not wait for more text.
	 */
	followedBy?: FollowingBreak | undefined;
}

const CUT_ORDER: Record<BreakPreference, CutKind[]> = {
	paragraph: ["paragraph", "newline", "sentence"],
	newline: ["paragraph", "newline"],
	sentence: ["sentence", "newline"],
};

const NON_SPACE = /\S/g;

/**
 * The default chunk sizes, as in OpenClaw.
 *
 * @example
 * const chunker = new BlockChunker({ ...DEFAULT_BLOCK_CHUNKING, maxChars: 2000 }); // a channel with longer messages
 */
export const DEFAULT_BLOCK_CHUNKING = { minChars: 800, maxChars: 1200 } as const;

/**
 * Throws when chunking options cannot cut text: a size that is not a number, or is `NaN` (say
 * `Number(process.env.MAX_CHARS)` with the variable unset), would make every size comparison
 * false and the cutter loop for ever inside the agent's event; an unknown `breakPreference`
 * has no cut order. Values below 1 are not errors: sizes are clamped to at least 1.
 *
 * @example
 * checkChunkingOptions({ minChars: 200, maxChars: 1500 }); // fine
 * checkChunkingOptions({ maxChars: Number.NaN }); // RangeError: blockReplyChunking.maxChars is NaN ...
 */
export function checkChunkingOptions(options: BlockChunkingOptions): void {
	for (const field of ["minChars", "maxChars"] as const) {
		const value: unknown = options[field];
		if (value === undefined) continue;
		if (typeof value !== "number") throw new TypeError(`blockReplyChunking.${field} must be a number, got ${typeof value}`);
		if (Number.isNaN(value)) throw new RangeError(`blockReplyChunking.${field} is NaN; give a number of characters (at least 1)`);
	}
	const preference: unknown = options.breakPreference;
	if (preference !== undefined && !Object.hasOwn(CUT_ORDER, preference as string)) {
		throw new RangeError(`blockReplyChunking.breakPreference must be "paragraph", "newline" or "sentence", got ${JSON.stringify(preference)}`);
	}
}

/**
 * The text still to cut during one drain: `prefix` (a reopened fence line, or "") followed by
 * `text` from `pos`, with the fenced blocks of `text` parsed once.
 */
interface DrainState {
	text: string;
	pos: number;
	prefix: string;
	spans: FenceSpan[] | undefined;
	/** Index of the first span that may still overlap the rest (spans only ever fall behind). */
	firstSpan: number;
}

/**
 * A buffer that yields block-sized chunks.
 *
 * @example
 * const chunker = new BlockChunker({ minChars: 5, maxChars: 25 });
 * chunker.append("First block line\n\nSecond block line");
 * chunker.drain({ force: true }).map((chunk) => chunk.text);
 * // ["First block line", "Second block line"]
 */
export class BlockChunker {
	readonly minChars: number;
	readonly maxChars: number;
	readonly #order: CutKind[];
	readonly #flushOnParagraph: boolean;
	#buffer = "";
	#fenceParses = 0;

	/**
	 * @throws {TypeError} when `minChars` or `maxChars` is not a number.
	 * @throws {RangeError} when one is `NaN` (no size could ever be reached: the cutter would loop
	 * for ever), or `breakPreference` is not one of "paragraph", "newline", "sentence".
	 */
	constructor(options: BlockChunkingOptions = {}) {
		checkChunkingOptions(options);
		const minChars = Math.max(1, Math.floor(options.minChars ?? DEFAULT_BLOCK_CHUNKING.minChars));
		// A `maxChars` given is a channel's limit on a message: the least size gives way to it (as
		// OpenClaw's does); one left out makes room for a `minChars` above its default.
		if (options.maxChars === undefined) {
			this.minChars = minChars;
			this.maxChars = Math.max(minChars, DEFAULT_BLOCK_CHUNKING.maxChars);
		} else {
			this.maxChars = Math.max(1, Math.floor(options.maxChars));
			this.minChars = Math.min(minChars, this.maxChars);
		}
		this.#order = CUT_ORDER[options.breakPreference ?? "paragraph"];
		this.#flushOnParagraph = options.flushOnParagraph === true;
	}

	/** The text waiting to be emitted. */
	get bufferedText(): string {
		return this.#buffer;
	}

	/**
	 * How many times this chunker has parsed its buffer for code fences: at most once per drain
	 * that has to cut. A cost figure for benchmarks and tests.
	 */
	get fenceParses(): number {
		return this.#fenceParses;
	}

	/** True when some non-whitespace text waits. */
	hasBuffered(): boolean {
		return this.#buffer.trim() !== "";
	}

	/** Appends streamed text. */
	append(text: string): void {
		this.#buffer += text;
	}

	/**
	 * The text of a content block ended: closes the code fence it leaves open in the buffer, so the
	 * next block's text is not read as code (each block is Markdown of its own).
	 */
	closeOpenFence(): void {
		const closeLine = closingFenceLine(this.#buffer);
		if (closeLine === undefined) return;
		// After the code, before the break that separates the next block.
		const code = this.#buffer.trimEnd();
		this.#buffer = `${code}\n${closeLine}${this.#buffer.slice(code.length)}`;
	}

	/** Drops the buffer. */
	reset(): void {
		this.#buffer = "";
	}

	/**
	 * Emits the chunks that are ready. Without `force`, a drain emits at most one chunk below the
	 * `maxChars` pressure (the rest waits to grow into a fuller block), more with `flushOnParagraph`.
	 */
	drain(options: DrainOptions): BlockChunk[] {
		const chunks: BlockChunk[] = [];
		const { force } = options;
		const state: DrainState = { text: this.#buffer, pos: 0, prefix: "", spans: undefined, firstSpan: 0 };
		while (true) {
			// Blank lines that open the rest (a paragraph break that arrived with the next words) are
			// no chunk's text: counted against maxChars, they made the cuts depend on how the text was split.
			if (state.prefix === "") state.pos = afterBlankLines(state.text, state.pos);
			const length = state.prefix.length + state.text.length - state.pos;
			if (state.prefix === "" && isBlankFrom(state.text, state.pos)) {
				if (force) state.pos = state.text.length;
				break;
			}
			if (!force && length < this.minChars) break;
			if (!force && chunks.length > 0 && length < this.maxChars && !this.#flushOnParagraph) break;
			if (force && length <= this.maxChars) {
				const last = closedLastChunk(cleanChunk(rest(state)), this.maxChars);
				if (last) {
					chunks.push(last);
					state.text = "";
					state.pos = 0;
					state.prefix = "";
					break;
				}
				// With the fence closed it would be too long: cut it like a longer one.
			}
			const cut = findCut(this.#window(state, length, options), {
				minChars: this.minChars,
				maxChars: this.maxChars,
				order: this.#order,
				force,
			});
			if (!cut) break;
			const chunk: BlockChunk =
				cut.type === "fence" ? { text: cut.text, closedFence: cut.closeLine, reopenedFence: cut.reopenLine } : { text: cut.text };
			if (chunk.text !== "") chunks.push(chunk);
			this.#advance(state, cut);
		}
		this.#buffer = rest(state);
		return chunks;
	}

	#parse(text: string): FenceSpan[] {
		this.#fenceParses += 1;
		return parseFenceSpans(text);
	}

	/** The head of the rest a cut can fall in, with the fenced blocks that overlap it. */
	#window(state: DrainState, length: number, options: DrainOptions): CutWindow {
		const spans = (state.spans ??= this.#parse(state.text));
		const { text, pos, prefix } = state;
		const p = prefix.length;
		const charAt = (index: number): string | undefined => (index < p ? prefix[index] : text[pos + index - p]);
		const end = Math.min(length, windowEnd(charAt, length, Math.min(length, this.maxChars)) + GRAPHEME_LOOKAHEAD);
		const windowText = prefix.slice(0, end) + text.slice(pos, pos + Math.max(0, end - p));
		while (state.firstSpan < spans.length && (spans[state.firstSpan]?.end ?? 0) < pos) state.firstSpan += 1;
		const shifted: FenceSpan[] = [];
		for (let index = state.firstSpan; index < spans.length; index += 1) {
			const span = spans[index];
			if (!span || span.start >= pos + end - p) break;
			// A block that began before the rest is the one the prefix reopened: it starts at 0.
			shifted.push({ ...span, start: Math.max(0, span.start - pos + p), end: span.end - pos + p });
		}
		return { text: windowText, length, spans: shifted, followedBy: options.followedBy };
	}

	/** Moves past a cut; re-parses only when the rest would read differently on its own. */
	#advance(state: DrainState, cut: Cut): void {
		const p = state.prefix.length;
		const at = cut.type === "fence" ? cut.tailAt : cut.at;
		const reopen = cut.type === "fence" ? { line: `${cut.reopenLine}\n`, marker: cut.span.marker } : undefined;
		if (at < p) {
			// A cut inside the reopened fence line itself (never chosen today): no sliding, start over.
			const whole = rest(state);
			const from = cut.type === "plain" ? skipSeparators(whole, at, cut.skipSpaces) : at;
			this.#restart(state, (reopen?.line ?? "") + whole.slice(from));
			return;
		}
		let next = state.pos + at - p;
		if (cut.type === "plain") next = skipSeparators(state.text, next, cut.skipSpaces);
		if (this.#readsTheSame(state, next, reopen?.marker)) {
			state.pos = next;
			state.prefix = reopen?.line ?? "";
			return;
		}
		this.#restart(state, (reopen?.line ?? "") + state.text.slice(next));
	}

	/**
	 * True when the rest from `next` (after the reopened fence line, if any) has the fenced blocks
	 * of the parsed text, shifted: it starts at a line start outside any block, or mid-line on a
	 * line that cannot be a fence line, or inside the reopened block on a line that does not close it.
	 */
	#readsTheSame(state: DrainState, next: number, reopened: FenceMarker | undefined): boolean {
		const { text } = state;
		const atLineStart = next === 0 || text[next - 1] === "\n";
		if (reopened) return atLineStart || classifyFenceLine(firstLine(text, next), reopened).kind === "none";
		const spans = state.spans ?? [];
		for (let index = state.firstSpan; index < spans.length; index += 1) {
			const span = spans[index];
			if (!span || span.start >= next) break;
			if (next < span.end || (!span.closed && next <= span.end)) return false;
		}
		return atLineStart || classifyFenceLine(firstLine(text, next), null).kind === "none";
	}

	#restart(state: DrainState, text: string): void {
		state.text = text;
		state.pos = 0;
		state.prefix = "";
		state.spans = this.#parse(text);
		state.firstSpan = 0;
	}
}

/**
 * The last chunk of a forced drain, with the code fence it leaves open closed, as a fence cut
 * closes one (the text ended there, so nothing reopens it); `undefined` when the closing line
 * would take it past `maxChars`.
 */
function closedLastChunk(text: string, maxChars: number): BlockChunk | undefined {
	const closeLine = closingFenceLine(text);
	if (closeLine === undefined) return { text };
	const closed = `${text}\n${closeLine}`;
	return closed.length <= maxChars ? { text: closed, closedFence: closeLine } : undefined;
}

function rest(state: DrainState): string {
	return state.prefix + state.text.slice(state.pos);
}

const BLANK_LINES = /(?:[ \t]*\r?\n)+/y;

/** Where the text from `pos` goes on after the blank lines it starts with (as `cleanChunk` drops them). */
function afterBlankLines(text: string, pos: number): number {
	BLANK_LINES.lastIndex = pos;
	return BLANK_LINES.test(text) ? BLANK_LINES.lastIndex : pos;
}

function isBlankFrom(text: string, pos: number): boolean {
	NON_SPACE.lastIndex = pos;
	return NON_SPACE.exec(text) === null;
}

function firstLine(text: string, from: number): string {
	const newline = text.indexOf("\n", from);
	return text.slice(from, newline === -1 ? text.length : newline);
}

/** Skips the whitespace that separated a chunk from the rest: spaces (after a sentence or a space), then blank lines. */
function skipSeparators(text: string, from: number, skipSpaces: boolean): number {
	let index = from;
	if (skipSpaces) while (text[index] === " " || text[index] === "\t") index += 1;
	while (true) {
		let probe = index;
		while (text[probe] === " " || text[probe] === "\t") probe += 1;
		if (text[probe] === "\r") probe += 1;
		if (text[probe] !== "\n") return index;
		index = probe + 1;
	}
}
