/**
 * Cuts a growing text into block replies of a comfortable size.
 *
 * A block is at least `minChars` long (unless the text ends) and never longer than `maxChars`.
 * Cuts fall, in order of preference, on a paragraph break, a line break, a sentence end; only
 * when the buffer has reached `maxChars` (or the text ends) on a space, and as a last resort
 * anywhere. A cut never falls inside a fenced code block unless the block alone is too long:
 * then the chunk is closed with a fence line and the next one reopens it with the original
 * opening line, and both synthetic lines count against `maxChars`.
 */
import { fenceAt, parseFenceSpans, type FenceSpan } from "./fences.js";

/** Where a chunker prefers to cut. */
export type BreakPreference = "paragraph" | "newline" | "sentence";

/** Options of {@link BlockChunker}. */
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

/** One block cut from the buffer. */
export interface BlockChunk {
	/** The block's text, trimmed at the end. */
	text: string;
	/** The fence line appended to close a code block that continues in the next chunk. */
	closedFence?: string;
	/** The opening fence line the next chunk starts with to reopen that code block. */
	reopenedFence?: string;
}

/** Options of {@link BlockChunker.drain}. */
export interface DrainOptions {
	/** The text has ended (or must be delivered now): emit everything, even below `minChars`. */
	force: boolean;
}

type CutKind = "paragraph" | "newline" | "sentence" | "space";

const CUT_ORDER: Record<BreakPreference, CutKind[]> = {
	paragraph: ["paragraph", "newline", "sentence"],
	newline: ["paragraph", "newline"],
	sentence: ["sentence", "newline"],
};

/** The default chunk sizes, as in OpenClaw. */
export const DEFAULT_BLOCK_CHUNKING = { minChars: 800, maxChars: 1200 } as const;

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

	constructor(options: BlockChunkingOptions = {}) {
		this.minChars = Math.max(1, Math.floor(options.minChars ?? DEFAULT_BLOCK_CHUNKING.minChars));
		this.maxChars = Math.max(this.minChars, Math.floor(options.maxChars ?? DEFAULT_BLOCK_CHUNKING.maxChars));
		this.#order = CUT_ORDER[options.breakPreference ?? "paragraph"];
		this.#flushOnParagraph = options.flushOnParagraph === true;
	}

	/** The text waiting to be emitted. */
	get bufferedText(): string {
		return this.#buffer;
	}

	/** True when some non-whitespace text waits. */
	hasBuffered(): boolean {
		return this.#buffer.trim() !== "";
	}

	/** Appends streamed text. */
	append(text: string): void {
		this.#buffer += text;
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
		while (true) {
			const buffer = this.#buffer;
			if (buffer.trim() === "") {
				if (force) this.#buffer = "";
				break;
			}
			if (!force && buffer.length < this.minChars) break;
			if (!force && chunks.length > 0 && buffer.length < this.maxChars && !this.#flushOnParagraph) break;
			if (force && buffer.length <= this.maxChars) {
				chunks.push({ text: cleanChunk(buffer) });
				this.#buffer = "";
				break;
			}
			const cut = this.#findCut(buffer, force);
			if (!cut) break;
			if (cut.chunk.text !== "") chunks.push(cut.chunk);
			this.#buffer = cut.rest;
		}
		return chunks;
	}

	#findCut(buffer: string, force: boolean): { chunk: BlockChunk; rest: string } | undefined {
		const spans = parseFenceSpans(buffer);
		const limit = Math.min(buffer.length, this.maxChars);
		const shortest = force ? 1 : this.minChars;
		for (const kind of this.#order) {
			const at = lastCut(kind, buffer, shortest, limit, spans);
			if (at !== undefined) return plainCut(buffer, at, kind);
		}
		// Only size pressure justifies a worse cut; otherwise wait for a better boundary.
		if (!force && buffer.length < this.maxChars) return undefined;
		const space = lastCut("space", buffer, shortest, limit, spans);
		if (space !== undefined) return plainCut(buffer, space, "space");
		const span = fenceAt(spans, limit);
		if (span) {
			const fenceCut = this.#cutInsideFence(buffer, span, shortest);
			if (fenceCut) return fenceCut;
			// Too little room to reopen the fence here: end the chunk before the fence instead.
			if (span.start >= shortest && cleanChunk(buffer.slice(0, span.start)) !== "") {
				return plainCut(buffer, span.start, "newline");
			}
		}
		return { chunk: { text: cleanChunk(buffer.slice(0, limit)) }, rest: buffer.slice(limit) };
	}

	#cutInsideFence(buffer: string, span: FenceSpan, shortest: number): { chunk: BlockChunk; rest: string } | undefined {
		const { marker } = span;
		const closeLine = `${marker.indent}${marker.char.repeat(marker.length)}`;
		const reopenLine = marker.openLine;
		const contentStart = span.start + reopenLine.length + 1;
		// The chunk gets "\n" + closeLine appended; the budget includes it.
		const budget = this.maxChars - closeLine.length - 1;
		if (budget <= contentStart || budget < shortest) return undefined;
		const newline = buffer.lastIndexOf("\n", budget);
		const at = newline > contentStart ? newline : budget;
		const head = buffer.slice(0, at);
		const tail = buffer.slice(newline > contentStart ? at + 1 : at);
		return {
			chunk: { text: `${cleanChunk(head)}\n${closeLine}`, closedFence: closeLine, reopenedFence: reopenLine },
			rest: `${reopenLine}\n${tail}`,
		};
	}
}

function cleanChunk(text: string): string {
	return text.replace(/^(?:[ \t]*\r?\n)+/, "").trimEnd();
}

function plainCut(buffer: string, at: number, kind: CutKind): { chunk: BlockChunk; rest: string } {
	const rest = buffer.slice(at);
	const skipped = kind === "sentence" || kind === "space" ? rest.replace(/^[ \t]+/, "") : rest;
	return { chunk: { text: cleanChunk(buffer.slice(0, at)) }, rest: skipped.replace(/^(?:[ \t]*\r?\n)+/, "") };
}

/** The last cut of a kind with `shortest <= at <= limit`, outside fenced blocks. */
function lastCut(kind: CutKind, buffer: string, shortest: number, limit: number, spans: FenceSpan[]): number | undefined {
	const pattern =
		kind === "paragraph" ? /\n[ \t]*\r?\n/g : kind === "newline" ? /\n/g : kind === "sentence" ? /[.!?]["')\]]*(?=\s)/g : /[ \t]/g;
	let best: number | undefined;
	for (const match of buffer.matchAll(pattern)) {
		const at = kind === "sentence" ? match.index + match[0].length : match.index;
		if (at > limit) break;
		if (at < shortest) continue;
		if (fenceAt(spans, at)) continue;
		if (cleanChunk(buffer.slice(0, at)) === "") continue;
		best = at;
	}
	return best;
}
