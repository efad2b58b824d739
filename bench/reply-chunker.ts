/**
 * Benchmark: one forced drain of a long fenced reply through the block chunker (issue 15,
 * item 5). The chunker used to re-parse the code fences of the whole remaining buffer for every
 * chunk it cut, so a drain cost grew with the square of the reply's length; it now parses once
 * per drain and slides a `maxChars` window. Both run side by side in one process: the current
 * `BlockChunker` and `QuadraticBlockChunker`, a frozen copy of the chunker before the change.
 *
 * Run alone with `npx tsx bench/reply-chunker.ts` (`--quick` for a smoke run).
 */
import { fileURLToPath } from "node:url";
import { BlockChunker, type BlockChunk, type BlockChunkingOptions } from "../src/reply/block-chunker.js";
import { closesFence, makesFenceLine } from "../src/reply/chunk-cuts.js";
import { closingFenceLine, fenceAt, parseFenceSpans, type FenceSpan } from "../src/reply/fences.js";
import { subscribeReplies } from "../src/reply/index.js";
import { formatReasoningMessage } from "../src/reply/reasoning-format.js";
import type { PartialReply, ReasoningUpdate } from "../src/reply/types.js";
import type { AgentEvent } from "../src/types/agent.js";
import type { TextContent, ThinkingContent } from "../src/types/content.js";
import type { AssistantMessageEvent } from "../src/types/stream.js";
import { collectYoungGarbage, median } from "./lib/stats.js";
import { benchMessage, benchModel } from "./lib/streams.js";

// ---- the chunker before issue 15, frozen for comparison ----

type LegacyCutKind = "paragraph" | "newline" | "sentence" | "space";
type LegacyCut = { chunk: BlockChunk; rest: string };

const LEGACY_ORDER: Record<NonNullable<BlockChunkingOptions["breakPreference"]>, LegacyCutKind[]> = {
	paragraph: ["paragraph", "newline", "sentence"],
	newline: ["paragraph", "newline"],
	sentence: ["sentence", "newline"],
};

/**
 * The block chunker as it was before issue 15: every cut re-parses the fences of the whole
 * remaining buffer and rebuilds the rest as a new string. Same chunks, quadratic cost.
 *
 * @example
 * const legacy = new QuadraticBlockChunker({ minChars: 5, maxChars: 25 });
 * legacy.append("Intro\n\n```bash\nline1\n```");
 * legacy.drain({ force: true }).length; // 2
 * legacy.fenceParses; // 1
 */
export class QuadraticBlockChunker {
	readonly minChars: number;
	readonly maxChars: number;
	readonly #order: LegacyCutKind[];
	readonly #flushOnParagraph: boolean;
	#buffer = "";
	#fenceParses = 0;

	constructor(options: BlockChunkingOptions = {}) {
		// The sizes as the current chunker resolves them: what is compared is the cutting.
		const sizes = new BlockChunker(options);
		this.minChars = sizes.minChars;
		this.maxChars = sizes.maxChars;
		this.#order = LEGACY_ORDER[options.breakPreference ?? "paragraph"];
		this.#flushOnParagraph = options.flushOnParagraph === true;
	}

	get bufferedText(): string {
		return this.#buffer;
	}

	get fenceParses(): number {
		return this.#fenceParses;
	}

	append(text: string): void {
		this.#buffer += text;
	}

	drain(options: { force: boolean }): BlockChunk[] {
		const chunks: BlockChunk[] = [];
		const { force } = options;
		while (true) {
			// A rule added since, as the chunker has it: blank lines that open the buffer are no chunk's
			// text and do not count against maxChars.
			this.#buffer = this.#buffer.replace(/^(?:[ \t]*\r?\n)+/, "");
			const buffer = this.#buffer;
			if (buffer.trim() === "") {
				if (force) this.#buffer = "";
				break;
			}
			if (!force && buffer.length < this.minChars) break;
			if (!force && chunks.length > 0 && buffer.length < this.maxChars && !this.#flushOnParagraph) break;
			// Another rule added since (a forced last chunk closes the fence it leaves open, and is cut
			// like a longer one when the closing line does not fit), so that both still cut alike.
			const last = force && buffer.length <= this.maxChars ? legacyClosedLast(legacyClean(buffer), this.maxChars) : undefined;
			if (last) {
				chunks.push(last);
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

	#findCut(buffer: string, force: boolean): LegacyCut | undefined {
		this.#fenceParses += 1;
		const spans = parseFenceSpans(buffer);
		const limit = Math.min(buffer.length, this.maxChars);
		const shortest = force ? 1 : this.minChars;
		for (const kind of this.#order) {
			const at = legacyLastCut(kind, buffer, shortest, limit, spans, force);
			if (at !== undefined) return legacyPlainCut(buffer, at, kind);
		}
		// The one rule changed since (a cut under size pressure waits for the character after it,
		// which may belong to the last one), so that both still cut alike.
		if (!force && buffer.length <= this.maxChars) return undefined;
		const space = legacyLastCut("space", buffer, shortest, limit, spans, force);
		if (space !== undefined) return legacyPlainCut(buffer, space, "space");
		const span = fenceAt(spans, limit);
		if (span) {
			const fenceCut = this.#cutInsideFence(buffer, span, shortest, force);
			if (fenceCut) return fenceCut;
			if (span.start >= shortest && legacyClean(buffer.slice(0, span.start)) !== "") {
				return legacyPlainCut(buffer, span.start, "newline");
			}
			// Added since too: a fence cut, or a cut before the fence, below minChars rather than a
			// hard cut leaving the fence open.
			const shortFenceCut = this.#cutInsideFence(buffer, span, 1, force);
			if (shortFenceCut) return shortFenceCut;
			if (span.start > 0 && legacyClean(buffer.slice(0, span.start)) !== "") return legacyPlainCut(buffer, span.start, "newline");
		}
		// Added since, the same rule: a hard cut moves back in its line rather than make a fence line.
		let at = limit;
		if (makesFenceLine(buffer, at, false, force)) {
			const lineStart = buffer.lastIndexOf("\n", at - 1) + 1;
			let found = false;
			for (let earlier = at - 1; earlier > lineStart; earlier -= 1) {
				if (!makesFenceLine(buffer, earlier, false, force)) {
					at = earlier;
					found = true;
					break;
				}
			}
			// And since: when only a marker that may still come stands in the way, wait for it.
			if (!found && !makesFenceLine(buffer, at, false, true)) return undefined;
		}
		return { chunk: { text: legacyClean(buffer.slice(0, at)) }, rest: buffer.slice(at) };
	}

	#cutInsideFence(buffer: string, span: FenceSpan, shortest: number, force: boolean): LegacyCut | undefined {
		const { marker } = span;
		const closeLine = `${marker.indent}${marker.char.repeat(marker.length)}`;
		const reopenLine = marker.openLine;
		const contentStart = span.start + reopenLine.length + 1;
		const budget = this.maxChars - closeLine.length - 1;
		if (budget <= contentStart || budget < shortest) return undefined;
		const newline = buffer.lastIndexOf("\n", budget);
		let at = newline > contentStart ? newline : budget;
		// Added since: the same rule inside a fence, a piece of a code line never reads as a fence line.
		if (newline <= contentStart && makesFenceLine(buffer, at, false, force)) {
			const lineStart = Math.max(contentStart, buffer.lastIndexOf("\n", at - 1) + 1);
			let found = false;
			for (let earlier = at - 1; earlier > lineStart; earlier -= 1) {
				if (!makesFenceLine(buffer, earlier, false, force)) {
					at = earlier;
					found = true;
					break;
				}
			}
			// And since: when none is found, a cut whose pieces do not close the block.
			for (let candidate = at; !found && candidate > lineStart; candidate -= 1) {
				if (!closesFence(buffer, candidate, marker, force)) {
					at = candidate;
					found = true;
				}
			}
		}
		const head = buffer.slice(0, at);
		const tail = buffer.slice(newline > contentStart ? at + 1 : at);
		return {
			chunk: { text: `${legacyClean(head)}\n${closeLine}`, closedFence: closeLine, reopenedFence: reopenLine },
			rest: `${reopenLine}\n${tail}`,
		};
	}
}

function legacyClosedLast(text: string, maxChars: number): BlockChunk | undefined {
	const closeLine = closingFenceLine(text);
	if (closeLine === undefined) return { text };
	return text.length + 1 + closeLine.length <= maxChars ? { text: `${text}\n${closeLine}`, closedFence: closeLine } : undefined;
}

function legacyClean(text: string): string {
	return text.replace(/^(?:[ \t]*\r?\n)+/, "").trimEnd();
}

function legacyPlainCut(buffer: string, at: number, kind: LegacyCutKind): LegacyCut {
	const rest = buffer.slice(at);
	const skipped = kind === "sentence" || kind === "space" ? rest.replace(/^[ \t]+/, "") : rest;
	return { chunk: { text: legacyClean(buffer.slice(0, at)) }, rest: skipped.replace(/^(?:[ \t]*\r?\n)+/, "") };
}

function legacyLastCut(
	kind: LegacyCutKind,
	buffer: string,
	shortest: number,
	limit: number,
	spans: FenceSpan[],
	force: boolean,
): number | undefined {
	const pattern =
		kind === "paragraph" ? /\n[ \t]*\r?\n/g : kind === "newline" ? /\n/g : kind === "sentence" ? /[.!?]["')\]]*(?=\s)/g : /[ \t]/g;
	let best: number | undefined;
	for (const match of buffer.matchAll(pattern)) {
		const at = kind === "sentence" ? match.index + match[0].length : match.index;
		if (at > limit) break;
		if (at < shortest) continue;
		if (fenceAt(spans, at)) continue;
		if (legacyClean(buffer.slice(0, at)) === "") continue;
		// Added since: a cut inside a line never makes a fence line of a piece of it.
		if ((kind === "sentence" || kind === "space") && makesFenceLine(buffer, at, true, force)) continue;
		best = at;
	}
	return best;
}

// ---- the measurement ----

/** Options of {@link measureReplyChunker}. */
export interface ReplyChunkerOptions {
	/** Size of the fenced reply in characters (default 200 KB). */
	replyChars?: number;
	/** Chunk sizes (default OpenClaw's 800/1200). */
	chunking?: BlockChunkingOptions;
	/** Recorded drains per chunker (default 9). */
	repetitions?: number;
	/** Unrecorded drains per chunker first (default 2). */
	warmups?: number;
	/** The streamed reply measured beside the chunker (see {@link measureLongReply}). */
	longReply?: LongReplyOptions;
}

/** The figures of one chunker. */
export interface ChunkerFigures {
	/** Milliseconds per forced drain of the whole reply: median, fastest, slowest. */
	msPerDrain: { median: number; min: number; max: number };
	/** Fence parses during one drain. */
	fenceParses: number;
	/** Chunks one drain produced. */
	chunks: number;
}

/** The result of {@link measureReplyChunker}. */
export interface ReplyChunkerResult {
	replyChars: number;
	chunking: Required<Pick<BlockChunkingOptions, "minChars" | "maxChars">>;
	repetitions: number;
	current: ChunkerFigures;
	quadratic: ChunkerFigures;
	/** True when both produced the same chunks (a faster but different chunker would not count). */
	sameChunks: boolean;
	longReply: LongReplyResult;
}

/**
 * A fenced reply of about `chars` characters: a short intro, then one long TypeScript code
 * block of varied lines (the case where every chunk is cut inside the fence).
 *
 * @example
 * fencedReply(1000).startsWith("Here is the file:\n\n```ts\n"); // true
 */
export function fencedReply(chars: number): string {
	const lines: string[] = ["Here is the file:", "", "```ts"];
	let size = lines.join("\n").length;
	for (let index = 0; size < chars - 4; index += 1) {
		const line = index % 7 === 0 ? "" : `export const value${index} = computeSomething(${index}, "text with spaces"); // note ${index % 13}`;
		lines.push(line);
		size += line.length + 1;
	}
	lines.push("```");
	return lines.join("\n");
}

interface Drainable {
	append(text: string): void;
	drain(options: { force: boolean }): BlockChunk[];
	readonly fenceParses: number;
}

function drainOnce(make: () => Drainable, reply: string): { ms: number; parses: number; chunks: BlockChunk[] } {
	const chunker = make();
	chunker.append(reply);
	collectYoungGarbage();
	const start = performance.now();
	const chunks = chunker.drain({ force: true });
	const ms = performance.now() - start;
	return { ms, parses: chunker.fenceParses, chunks };
}

/**
 * Drains a long fenced reply with the current chunker and the pre-issue-15 one, interleaved,
 * and reports time per drain (median, min–max) and fence parses per drain.
 *
 * @example
 * const result = measureReplyChunker({ replyChars: 20_000, repetitions: 3 });
 * console.log(formatReplyChunker(result));
 */
export function measureReplyChunker(options: ReplyChunkerOptions = {}): ReplyChunkerResult {
	const replyChars = options.replyChars ?? 200_000;
	const minChars = options.chunking?.minChars ?? 800;
	const maxChars = options.chunking?.maxChars ?? 1200;
	const chunking = { ...options.chunking, minChars, maxChars };
	const repetitions = options.repetitions ?? 9;
	const warmups = options.warmups ?? 2;
	const reply = fencedReply(replyChars);
	const contenders = {
		current: (): Drainable => new BlockChunker(chunking),
		quadratic: (): Drainable => new QuadraticBlockChunker(chunking),
	};
	const samples = { current: [] as number[], quadratic: [] as number[] };
	const last: Record<keyof typeof contenders, { parses: number; chunks: BlockChunk[] }> = {
		current: { parses: 0, chunks: [] },
		quadratic: { parses: 0, chunks: [] },
	};
	const names = ["current", "quadratic"] as const;
	for (let round = 0; round < warmups + repetitions; round += 1) {
		// Alternate who goes first, so neither always runs right after the other's garbage.
		for (const name of round % 2 === 0 ? names : [...names].reverse()) {
			const run = drainOnce(contenders[name], reply);
			last[name] = { parses: run.parses, chunks: run.chunks };
			if (round >= warmups) samples[name].push(run.ms);
		}
	}
	const figures = (name: keyof typeof contenders): ChunkerFigures => ({
		msPerDrain: { median: median(samples[name]), min: Math.min(...samples[name]), max: Math.max(...samples[name]) },
		fenceParses: last[name].parses,
		chunks: last[name].chunks.length,
	});
	return {
		replyChars: reply.length,
		chunking: { minChars, maxChars },
		repetitions,
		current: figures("current"),
		quadratic: figures("quadratic"),
		sameChunks: JSON.stringify(last.current.chunks) === JSON.stringify(last.quadratic.chunks),
		longReply: measureLongReply(options.longReply),
	};
}

/** Options of {@link measureLongReply}. */
export interface LongReplyOptions {
	/** Deltas of the short and the long reply (default 5,000 and 40,000). */
	deltas?: readonly [number, number];
	/** Recorded replies of each length (default 5). */
	repetitions?: number;
}

/** What the reply layer is asked for while a reply streams: a partial reply per text delta, or the reasoning of a thinking block streamed per delta. */
export type LongReplyKind = "partial reply" | "streamed reasoning";
const LONG_REPLY_KINDS: readonly LongReplyKind[] = ["partial reply", "streamed reasoning"];

/** One kind's cost per delta, short and long. */
export interface LongReplyFigures {
	/** µs per delta (median, min, max) of each length. */
	usPerDelta: [{ median: number; min: number; max: number }, { median: number; min: number; max: number }];
	/** The long reply's cost per delta over the short one's (1: linear; reading the text so far on every delta grows it with the length). */
	growth: number;
}

/** What a streamed reply costs the reply layer per delta, short and long, for each kind. */
export interface LongReplyResult {
	deltas: readonly [number, number];
	byKind: Record<LongReplyKind, LongReplyFigures>;
	/** The largest growth of the kinds. */
	growth: number;
}

/**
 * Streams one assistant message of `deltas` one-word deltas (a paragraph every twelve) through
 * `subscribeReplies`, as a text block with an `onPartialReply` that keeps the last partial (a
 * channel that edits a live message), or as a thinking block with its reasoning streamed to an
 * `onReasoningStream` that keeps the last update: ms for the whole message.
 */
function streamReplyOnce(deltas: number, kind: LongReplyKind): number {
	const listeners = new Set<(event: AgentEvent) => unknown>();
	const source = {
		subscribe(listener: (event: AgentEvent) => unknown) {
			listeners.add(listener);
			return () => listeners.delete(listener);
		},
	};
	let last: PartialReply | ReasoningUpdate | undefined;
	const keep = (update: PartialReply | ReasoningUpdate) => void (last = update);
	const replies = subscribeReplies(source, kind === "partial reply" ? { onPartialReply: keep } : { reasoningMode: "stream", onReasoningStream: keep });
	const block: TextContent | ThinkingContent = kind === "partial reply" ? { type: "text", text: "" } : { type: "thinking", thinking: "" };
	const message = benchMessage(benchModel(), [block], "stop");
	const emit = (event: AgentEvent) => {
		for (const listener of listeners) listener(event);
	};
	const update = (assistantMessageEvent: AssistantMessageEvent) => emit({ type: "message_update", message, assistantMessageEvent });
	collectYoungGarbage();
	const start = performance.now();
	emit({ type: "message_start", message });
	update(block.type === "text" ? { type: "text_start", contentIndex: 0, partial: message } : { type: "thinking_start", contentIndex: 0, partial: message });
	for (let index = 0; index < deltas; index++) {
		const delta = index % 12 === 11 ? "word.\n\n" : "word ";
		if (block.type === "text") {
			block.text += delta;
			update({ type: "text_delta", contentIndex: 0, delta, partial: message });
		} else {
			block.thinking += delta;
			update({ type: "thinking_delta", contentIndex: 0, delta, partial: message });
		}
	}
	update(block.type === "text" ? { type: "text_end", contentIndex: 0, content: block.text, partial: message } : { type: "thinking_end", contentIndex: 0, content: block.thinking, partial: message });
	emit({ type: "message_end", message });
	const ms = performance.now() - start;
	replies.unsubscribe();
	const expected = block.type === "text" ? block.text.trimEnd().length : formatReasoningMessage(block.thinking).length;
	if (last?.text.length !== expected) throw new Error(`bench: the last ${kind} holds ${last?.text.length} characters of ${expected}`);
	return ms;
}

/**
 * What a long streamed reply costs the reply layer per delta, against a short one, side by side,
 * for a partial reply per delta and for streamed reasoning. Before this figure was added the reply
 * layer sliced the whole text streamed so far for every partial (a 40,000-delta reply took 3.5 s
 * against 0.3 s for 20,000); later it read the text's last character (8 s) and formatted all the
 * reasoning again (22 s) on every delta.
 *
 * @example
 * formatLongReply(measureLongReply({ deltas: [1_000, 8_000], repetitions: 1 }));
 */
export function measureLongReply(options: LongReplyOptions = {}): LongReplyResult {
	const deltas = options.deltas ?? [5_000, 40_000];
	const repetitions = options.repetitions ?? 5;
	const measure = (kind: LongReplyKind): LongReplyFigures => {
		const samples: [number[], number[]] = [[], []];
		for (let round = -1; round < repetitions; round++) {
			for (const which of round % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const)) {
				const ms = streamReplyOnce(deltas[which], kind);
				if (round >= 0) samples[which].push((ms * 1000) / deltas[which]);
			}
		}
		const summary = (values: number[]) => ({ median: median(values), min: Math.min(...values), max: Math.max(...values) });
		const usPerDelta: LongReplyFigures["usPerDelta"] = [summary(samples[0]), summary(samples[1])];
		return { usPerDelta, growth: usPerDelta[1].median / usPerDelta[0].median };
	};
	const byKind = { "partial reply": measure("partial reply"), "streamed reasoning": measure("streamed reasoning") };
	return { deltas, byKind, growth: Math.max(...LONG_REPLY_KINDS.map((kind) => byKind[kind].growth)) };
}

/**
 * The long-reply figures as a few lines of text.
 *
 * @example
 * formatLongReply(measureLongReply());
 */
export function formatLongReply(result: LongReplyResult): string {
	const row = (kind: LongReplyKind, index: 0 | 1) => {
		const { median: mid, min, max } = result.byKind[kind].usPerDelta[index];
		return `| ${kind} | ${result.deltas[index].toLocaleString("en-US")} | ${mid.toFixed(2)} | ${min.toFixed(2)}–${max.toFixed(2)} |`;
	};
	return [
		"A streamed reply through `subscribeReplies` (one-word deltas): a text block with a partial reply per delta, and a thinking block with its reasoning streamed per delta",
		"",
		"| asked for | deltas | µs per delta (median) | min–max |",
		"|---|---:|---:|---:|",
		...LONG_REPLY_KINDS.flatMap((kind) => [row(kind, 0), row(kind, 1)]),
		"",
		`Long over short, per delta (linear: about 1×): ${LONG_REPLY_KINDS.map((kind) => `${kind} ${result.byKind[kind].growth.toFixed(2)}×`).join(", ")}`,
	].join("\n");
}

/**
 * The result as a few lines of text.
 *
 * @example
 * formatReplyChunker(measureReplyChunker({ replyChars: 20_000, repetitions: 3 }));
 */
export function formatReplyChunker(result: ReplyChunkerResult): string {
	const row = (label: string, figures: ChunkerFigures): string => {
		const { median: mid, min, max } = figures.msPerDrain;
		return `| ${label} | ${mid.toFixed(2)} | ${min.toFixed(2)}–${max.toFixed(2)} | ${figures.fenceParses} | ${figures.chunks} |`;
	};
	const kb = (result.replyChars / 1000).toFixed(0);
	const speedup = result.quadratic.msPerDrain.median / result.current.msPerDrain.median;
	return [
		`Block chunker: one forced drain of a ${kb} KB fenced reply (chunks ${result.chunking.minChars}/${result.chunking.maxChars}, ${result.repetitions} repetitions)`,
		"",
		"| chunker | ms per drain (median) | min–max | fence parses | chunks |",
		"|---|---:|---:|---:|---:|",
		row("agentchart now (one parse, sliding window)", result.current),
		row("before issue 15 (re-parse per chunk)", result.quadratic),
		"",
		`${speedup.toFixed(1)}× faster; same chunks: ${result.sameChunks ? "yes" : "NO"}`,
		"",
		formatLongReply(result.longReply),
	].join("\n");
}

// Run only as the entry point (`npx tsx bench/reply-chunker.ts`), so `npm run bench` can import it.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
	const quick = process.argv.includes("--quick");
	console.log(formatReplyChunker(measureReplyChunker(quick ? { replyChars: 20_000, repetitions: 1, warmups: 0, longReply: { deltas: [1_000, 8_000], repetitions: 1 } } : {})));
}
