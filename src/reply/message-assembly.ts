/**
 * The reply state of one assistant message, from `message_start` (the only reset point) to
 * `message_end`: raw text per content block, the two streaming filters (reasoning tags, then
 * reply directives), the cleaned visible text, reasoning, media, and the block chunker.
 *
 * Data flows one way: raw text → tag filter → directive filter → clean text → chunker. The
 * chunker sees only visible text, so block sizes count what the user reads and a cut can never
 * fall inside a tag.
 */
import { BlockChunker, type BlockChunkingOptions } from "./block-chunker.js";
import { newTextFrom, type TextEventKind } from "./append-only-text.js";
import { CommentaryBlocks, type TextOrigin } from "./commentary.js";
import { isHighSurrogate } from "./chunk-cuts.js";
import { closingFenceLine } from "./fences.js";
import { StreamingReasoningFormat } from "./reasoning-format.js";
import { ReasoningTagFilter, type ReasoningTagOutput } from "./reasoning-tags.js";
import { ReplyDirectiveFilter, type ReplyDirectives } from "./reply-directives.js";

/** A block ready for delivery. */
export interface AssembledBlock {
	text: string;
	mediaUrls: string[];
	directives: ReplyDirectives;
}

/** Options of {@link MessageAssembly}. */
export interface MessageAssemblyOptions {
	enforceFinalTag: boolean;
	/** Chunk sizes; `undefined` sends each flush as one block, however long. */
	chunking: BlockChunkingOptions | undefined;
}

const UNLIMITED = Number.MAX_SAFE_INTEGER;
const BLOCK_SEPARATOR = "\n\n";

/** Whether a piece of text ends in the first half of a surrogate pair. */
const endsWithHighSurrogate = (text: string) => isHighSurrogate(text.charCodeAt(text.length - 1));

/**
 * One assistant message's reply state.
 *
 * @example
 * const message = new MessageAssembly(1, { enforceFinalTag: false, chunking: undefined });
 * message.ingestText(0, "delta", "Hello <think>hmm</think>world");
 * message.finish();
 * message.cleanText;                                  // "Hello world"
 * message.drainBlocks(true).map((block) => block.text); // ["Hello world"]
 */
export class MessageAssembly {
	/** 1-based position of this message in the subscription. */
	readonly index: number;
	/** Length of the clean text last shown as a partial reply. */
	partialLength = 0;
	lastPartialMediaCount = 0;
	/** `reasoningVersion` at the last reasoning stream update, and what was streamed then. */
	streamedReasoningVersion = 0;
	streamedReasoning = "";
	/** Grows whenever the formatted reasoning changes, so readers can skip unchanged states cheaply. */
	reasoningVersion = 0;
	/** Block replies delivered for this message (visible ones). */
	deliveredBlocks = 0;
	readonly #rawText = new Map<number, string>();
	readonly #thinking = new Map<number, string>();
	// The formatted native reasoning, and the thinking block it took text from last.
	#nativeFormat = new StreamingReasoningFormat();
	#nativeBlock = -1;
	#taggedFormat = new StreamingReasoningFormat();
	readonly #commentary = new CommentaryBlocks();
	// Native thinking blocks whose end was reported.
	readonly #endedThinking = new Set<number>();
	// Blocks that were streaming when the subscriber joined: their first deltas were missed (and a
	// partial message, read later, may be ahead of the events), so they are taken whole at their end.
	readonly #joinedMidBlock = new Set<number>();
	// A reasoning block (native or tagged) is open and its end not yet reported.
	#reasoningOpen = false;
	#reasoningEnds = 0;
	#tags: ReasoningTagFilter;
	readonly #enforceFinalTag: boolean;
	#directives = new ReplyDirectiveFilter();
	readonly #chunker: BlockChunker;
	#hasText = false;
	// The content block whose text was appended last.
	#lastTextBlock = -1;
	// The separator after the last text block was already fed (at its text_end).
	#separated = false;
	#cleanText = "";
	// The clean text after `partialLength` (what the next partial adds), kept as it grows: a slice of
	// the growing text would copy all of it on every delta (V8 flattens a concatenated string to slice it).
	#unshown = "";
	/** The separator after a fence a block's end closed, until text follows it (see `#closeCleanFence`). */
	#pendingSeparator = "";
	// The clean text ends in the first half of a surrogate pair. Kept as the text grows, because
	// reading the growing text's last character copies all of it on every delta (docs/performance.md).
	#endsInHighSurrogate = false;
	#taggedReasoning = "";
	// The tag filter let visible text through since the message began or an orphan close retracted it.
	#media: string[] = [];
	#unattachedMedia: string[] = [];
	#retracted = false;
	#ended = false;
	// Where the clean text of the current text block starts (for the fence it leaves open).
	#blockCleanStart = 0;
	#allRaw = "";
	// After a forced flush the next block starts fresh: whitespace that separated it from the
	// previous block is not part of it.
	#blockStart = true;

	constructor(index: number, options: MessageAssemblyOptions) {
		this.index = index;
		this.#enforceFinalTag = options.enforceFinalTag;
		this.#tags = new ReasoningTagFilter({ enforceFinalTag: options.enforceFinalTag });
		this.#chunker = new BlockChunker(options.chunking ?? { minChars: UNLIMITED, maxChars: UNLIMITED });
	}

	/** True after `finish()`; later text events for this message are ignored. */
	get ended(): boolean {
		return this.#ended;
	}

	/** The cleaned visible text so far. */
	get cleanText(): string {
		return this.#cleanText;
	}

	/** All media found in the message so far. */
	get mediaUrls(): string[] {
		return [...this.#media];
	}

	/** How many media were found so far (cheaper than copying `mediaUrls`). */
	get mediaCount(): number {
		return this.#media.length;
	}

	/** Reply directives seen so far. */
	get directives(): ReplyDirectives {
		return this.#directives.directives;
	}

	/** The message's reasoning: native thinking blocks if any, else text inside thinking tags. */
	get reasoningText(): string {
		const native = [...this.#thinking.entries()]
			.sort(([a], [b]) => a - b)
			.map(([, text]) => text.trim())
			.filter((text) => text !== "")
			.join("\n\n");
		return native !== "" ? native : this.#taggedReasoning.trim();
	}

	/**
	 * `formatReasoningMessage(reasoningText)`, kept up to date as the reasoning streams.
	 *
	 * @example
	 * onReasoningStream({ text: message.formattedReasoning }); // "Reasoning:\n_..._"
	 */
	get formattedReasoning(): string {
		const native = this.#nativeFormat.text;
		return native !== "" ? native : this.#taggedFormat.text;
	}

	/** True when the whole answer was the silent token (known after `finish()`). */
	get isSilent(): boolean {
		return this.#directives.isSilent;
	}

	/** True while the answer so far is the silent token alone: media found with it goes nowhere. */
	get silentSoFar(): boolean {
		return this.#directives.silentSoFar;
	}

	/** How many reasoning blocks (native or tagged) ended since the last call. */
	takeReasoningEnds(): number {
		const ends = this.#reasoningEnds;
		this.#reasoningEnds = 0;
		return ends;
	}

	/**
	 * The clean text added since the last partial reply, which now shows it all (`partialLength` is
	 * the clean text's length). After a retraction the partial replaces what was shown: the text
	 * added since is part of that, and this is read only to start afresh.
	 *
	 * @example
	 * onPartialReply({ text: message.cleanText, delta: message.takeUnshown() });
	 */
	takeUnshown(): string {
		const unshown = this.#unshown;
		this.#unshown = "";
		this.partialLength = this.#cleanText.length;
		return unshown;
	}

	/**
	 * The clean text ends in the first half of a surrogate pair while the message streams: a partial
	 * reply waits for the second half. A provider may split an emoji between two deltas; shown
	 * alone, the half is a broken character (a channel's API may refuse the edit).
	 *
	 * @example
	 * message.ingestText(0, "delta", "Hi \ud83d");
	 * message.waitsForSecondHalf; // true: the emoji's second half is still to come
	 */
	get waitsForSecondHalf(): boolean {
		return !this.#ended && this.#endsInHighSurrogate;
	}

	/** True (once) when an orphan closing tag retracted the visible text since the last call. */
	takeRetracted(): boolean {
		const retracted = this.#retracted;
		this.#retracted = false;
		return retracted;
	}

	/**
	 * The subscriber joined while this block streamed: its deltas are ignored, and its full content
	 * comes at its end (`text_end`, `thinking_end` or `message_end`).
	 */
	joinMidBlock(contentIndex: number): void {
		this.#joinedMidBlock.add(contentIndex);
	}

	/** Adds text of a content block under the append-only rule; commentary is left out. */
	ingestText(contentIndex: number, kind: TextEventKind, text: string, origin: TextOrigin = {}): void {
		if (this.#ended || this.#waitsForEnd(contentIndex, kind)) return;
		const accumulated = this.#rawText.get(contentIndex);
		const onlyTextBlock = this.#rawText.size === 1 && accumulated !== undefined;
		const decision = this.#commentary.decide(contentIndex, kind, text, origin, accumulated, onlyTextBlock);
		if (decision.act === "skip") return;
		if (decision.act !== "append") {
			// The block's visible text starts here: after the commentary it began as, or over, after a replacement.
			if (decision.act === "restart") this.#restartVisibleText();
			if (decision.text !== undefined) this.#appendRaw(contentIndex, undefined, decision.text);
			return;
		}
		// Full content for a block never streamed under that index, but already streamed: skip it.
		if (accumulated === undefined && kind !== "delta" && text !== "" && this.#allRaw.includes(text)) return;
		this.#appendRaw(contentIndex, accumulated, newTextFrom(accumulated ?? "", kind, text));
	}

	#appendRaw(contentIndex: number, accumulated: string | undefined, chunk: string): void {
		if (chunk === "") return;
		this.#rawText.set(contentIndex, (accumulated ?? "") + chunk);
		this.#lastTextBlock = contentIndex;
		this.#allRaw += chunk;
		// Separate text blocks like paragraphs, so "Done.First" never glues two blocks together.
		const separator = accumulated === undefined && this.#hasText && !this.#separated ? BLOCK_SEPARATOR : "";
		this.#hasText = true;
		this.#separated = false;
		this.#feed(separator + chunk);
	}

	/** Forgets the visible text so far, as an orphan closing tag does; blocks sent stay sent. */
	#restartVisibleText(): void {
		this.#rawText.clear();
		this.#lastTextBlock = -1;
		this.#allRaw = "";
		this.#hasText = false;
		this.#separated = false;
		this.#tags = new ReasoningTagFilter({ enforceFinalTag: this.#enforceFinalTag });
		if (this.#taggedReasoning !== "") {
			this.#taggedReasoning = "";
			this.#taggedFormat = new StreamingReasoningFormat();
			this.reasoningVersion += 1;
		}
		this.#resetVisible();
	}

	/**
	 * A text block ended. Its end is a paragraph boundary, so the separator is fed now: that
	 * resolves what the filters held back at the block's end (a closing backtick or fence, a
	 * `MEDIA:` line, a lone `<`), and the block can be sent complete at `text_end`.
	 */
	endTextBlock(contentIndex: number): void {
		// Only the block whose text came last can end here: the separator goes after its text.
		if (this.#ended || this.#separated || contentIndex !== this.#lastTextBlock) return;
		this.#separated = true;
		this.#feed(BLOCK_SEPARATOR);
		this.#appendClean(this.#directives.endBlock());
		this.#closeCleanFence(BLOCK_SEPARATOR);
		// A fence the block left open ends with it: reasoning tags in the next block are not code.
		this.#tags.endBlock();
		this.#chunker.closeOpenFence();
	}

	/**
	 * Adds native reasoning of a thinking block under the append-only rule. Its "end" ends the
	 * block (once), unless the block never had any text.
	 */
	ingestThinking(contentIndex: number, kind: TextEventKind, text: string): void {
		if (this.#ended || this.#waitsForEnd(contentIndex, kind)) return;
		const accumulated = this.#thinking.get(contentIndex) ?? "";
		const added = newTextFrom(accumulated, kind, text);
		if (added !== "") {
			this.#thinking.set(contentIndex, accumulated + added);
			if (this.#formatThinking(contentIndex, added)) this.reasoningVersion += 1;
			if (kind !== "end") this.#reasoningOpen = true;
		}
		if (kind === "end" && accumulated + added !== "" && !this.#endedThinking.has(contentIndex)) {
			this.#endedThinking.add(contentIndex);
			this.#endReasoning();
		}
	}

	/**
	 * Ends the message: releases held-back text, ends reasoning still open. Idempotent. `cut`: the
	 * model was cut off (aborted, or its stream failed): a `MEDIA:` line it was still writing attaches nothing.
	 */
	finish(cut = false): void {
		if (this.#ended) return;
		this.#ended = true;
		const wasInside = this.#tags.inReasoning;
		this.#takeFilterOutput(this.#tags.finish(), wasInside);
		this.#appendClean(this.#directives.finish(cut));
		this.#closeCleanFence();
		if (this.#reasoningOpen) this.#endReasoning();
	}

	/**
	 * A text block (or the message) ended inside a code fence: the clean text gets the fence's
	 * closing line after the code, as the block sent then does, so a partial reply (a live message
	 * the channel edits, which stays as the answer after an abort) ends closed too, and the next
	 * block's text is not shown as code. Whitespace after the code is dropped, but for what a
	 * partial showed already: the closing line comes after that, and the partial only grows (a
	 * live message taken back for a blank line would flicker, and an append-only reader could not).
	 */
	#closeCleanFence(separator = ""): void {
		const closeLine = closingFenceLine(this.#cleanText.slice(this.#blockCleanStart));
		if (closeLine !== undefined) {
			const shown = this.partialLength;
			// After a retraction the next partial replaces what was shown: nothing of it has to stay.
			const code = this.#cleanText.slice(0, Math.max(this.#cleanText.trimEnd().length, this.#retracted ? 0 : shown));
			this.#cleanText = `${code}${code.endsWith("\n") ? "" : "\n"}${closeLine}`;
			this.#endsInHighSurrogate = endsWithHighSurrogate(closeLine);
			this.#unshown = this.#cleanText.slice(shown);
			// Shown once text follows: after the message's last block it would be a trailing blank line.
			this.#pendingSeparator = separator;
		}
		this.#blockCleanStart = this.#cleanText.length;
	}

	/**
	 * Blocks ready to send. Media found since the last block rides on the next one; with `force`,
	 * media without any text left to carry it comes as a media-only block.
	 */
	drainBlocks(force: boolean): AssembledBlock[] {
		const directives = this.#directives.directives;
		if (force) this.#blockStart = true;
		// A line break the directive filter holds back still ends the line before it.
		const followedBy = force ? undefined : this.#directives.heldBreak;
		const blocks: AssembledBlock[] = this.#chunker.drain({ force, followedBy }).map((chunk) => ({
			text: chunk.text,
			mediaUrls: [],
			directives,
		}));
		const first = blocks[0];
		if (this.#unattachedMedia.length > 0 && (first || force)) {
			const carrier = first ?? { text: "", mediaUrls: [], directives };
			carrier.mediaUrls = this.#unattachedMedia;
			this.#unattachedMedia = [];
			if (!first) blocks.push(carrier);
		}
		return blocks;
	}

	#waitsForEnd(contentIndex: number, kind: TextEventKind): boolean {
		if (!this.#joinedMidBlock.has(contentIndex)) return false;
		if (kind !== "end") return true;
		this.#joinedMidBlock.delete(contentIndex);
		return false;
	}

	#feed(raw: string): void {
		const wasInside = this.#tags.inReasoning;
		this.#takeFilterOutput(this.#tags.push(raw), wasInside);
	}

	/** Adds native reasoning to its formatted text; true when that changed. */
	#formatThinking(contentIndex: number, added: string): boolean {
		if (contentIndex < this.#nativeBlock) {
			// An earlier block grew after a later one had begun: formatted again, in block order.
			this.#nativeFormat = new StreamingReasoningFormat();
			for (const [, text] of [...this.#thinking.entries()].sort(([a], [b]) => a - b)) {
				this.#nativeFormat.endBlock();
				this.#nativeFormat.append(text);
			}
			return true;
		}
		if (contentIndex > this.#nativeBlock) {
			this.#nativeFormat.endBlock();
			this.#nativeBlock = contentIndex;
		}
		return this.#nativeFormat.append(added);
	}

	#endReasoning(): void {
		this.#reasoningOpen = false;
		this.#reasoningEnds += 1;
	}

	#takeFilterOutput(output: ReasoningTagOutput, wasInside: boolean): void {
		if (output.reasoning !== "") {
			this.#taggedReasoning += output.reasoning;
			if (this.#taggedFormat.append(output.reasoning)) this.reasoningVersion += 1;
		}
		// The text an orphan closing tag retracts (now in `reasoning`) was reasoning written
		// without its opening tag: the tag ends it, as a closing tag ends any reasoning.
		this.#reasoningEnds += output.retractionEnds;
		if (output.reasoningEnds > 0) {
			// The first close may end a block whose end was already reported (a native thinking_end
			// that arrived while the tag was open): one reasoning stream, one end.
			const reported = wasInside && !this.#reasoningOpen ? 1 : 0;
			this.#reasoningEnds += output.reasoningEnds - reported;
			this.#reasoningOpen = this.#tags.inReasoning;
		} else if (!wasInside && this.#tags.inReasoning) {
			this.#reasoningOpen = true;
		}
		// What was shown was reasoning after all: restart the visible text (sent blocks stay sent).
		if (output.retracted) this.#resetVisible();
		this.#appendClean(this.#directives.push(output.visible));
	}

	/** Drops the visible text, and the directives and media it carried. */
	#resetVisible(): void {
		this.#retracted = true;
		this.#directives = new ReplyDirectiveFilter();
		this.#cleanText = "";
		this.#pendingSeparator = "";
		this.#endsInHighSurrogate = false;
		this.#unshown = "";
		this.#blockCleanStart = 0;
		this.#media = [];
		this.#unattachedMedia = [];
		this.#chunker.reset();
		this.#blockStart = true;
	}

	#appendClean(clean: string): void {
		const media = this.#directives.takeMediaUrls();
		if (media.length > 0) {
			this.#media.push(...media);
			this.#unattachedMedia.push(...media);
		}
		if (clean === "") return;
		const shown = this.#pendingSeparator + clean;
		this.#pendingSeparator = "";
		this.#cleanText += shown;
		this.#endsInHighSurrogate = endsWithHighSurrogate(shown);
		this.#unshown += shown;
		const blockText = this.#blockStart ? clean.replace(/^\s+/, "") : clean;
		if (blockText === "") return;
		this.#blockStart = false;
		this.#chunker.append(blockText);
	}
}
