/**
 * Separates model reasoning written inline (`<think>…</think>` and its spellings) and the
 * `<final>` wrapper from the visible answer, as the text streams.
 *
 * The filter is a scanner that only decides what it can decide: a tag literal cut between two
 * deltas ("<thi" | "nk>"), a backtick run that may grow, or a line that may become a code fence
 * is held back until the next delta resolves it (or `finish()` ends the text). That makes the
 * output independent of how the text was split into deltas, which the property tests check.
 */
import { classifyFenceLine, couldBecomeFenceLine, type FenceMarker } from "./fences.js";

/**
 * Options of {@link ReasoningTagFilter}.
 *
 * @example
 * const options: ReasoningTagOptions = { enforceFinalTag: true }; // show only what is inside <final>
 * const filter = new ReasoningTagFilter(options);
 */
export interface ReasoningTagOptions {
	/** Show only text inside `<final>…</final>`; text outside it (or without it) is dropped. */
	enforceFinalTag?: boolean;
	/** Leave `<final>` tags in the visible text (for a transcript, where they steer the model). */
	keepFinalTags?: boolean;
}

/**
 * What one `push` or `finish` produced.
 *
 * @example
 * const filter = new ReasoningTagFilter();
 * const { visible, reasoning }: ReasoningTagOutput = filter.push("<think>plan</think>Hello");
 */
export interface ReasoningTagOutput {
	/** New visible text. */
	visible: string;
	/** New reasoning text (inside thinking tags). */
	reasoning: string;
	/**
	 * An orphan closing tag (`</think>` without an opening one) showed that everything visible so
	 * far (since the text began or the last orphan close) was reasoning: discard it; `visible` holds
	 * only what came after, and `reasoning` has the discarded text, earlier pieces' included, where
	 * the tag stands.
	 */
	retracted: boolean;
	/** The visible text of this piece that a retraction discarded (earlier pieces' text was discarded too). */
	discarded: string;
	/** How many thinking blocks opened by a tag were closed in this piece. */
	reasoningEnds: number;
	/** How many orphan closing tags of this piece retracted text that had been shown: each ends a passage of reasoning. */
	retractionEnds: number;
}

const TAG_NAMES = ["antthinking", "thinking", "thought", "think", "final"] as const;
// Whitespace inside a tag is bounded so that "could this still become a tag?" has a bounded answer.
const TAG_AT = /<[ \t]{0,4}(\/?)[ \t]{0,4}(antthinking|thinking|thought|think|final)[ \t]{0,4}>/iy;
const TAG_PREFIX = /^<[ \t]{0,4}\/?[ \t]{0,4}([a-z]*)([ \t]{0,4})$/i;
const PLAIN_RUN = /[^`<\n]+/y;
/**
 * A closing fence with a closing reasoning or final tag right after it (`` ```</final> ``): not a closing
 * line to CommonMark, but how models that answer in `<final>` end a code block. Read as code, the
 * tag and all the reasoning after it were shown.
 */
const FENCE_THEN_TAG = /^(`{3,}|~{3,})[ \t]*(?=<[ \t]{0,4}\/[ \t]{0,4}(?:antthinking|thinking|thought|think|final)[ \t]{0,4}>)/i;
/** The start of a line that may still become one (held back until it is decided). */
const FENCE_THEN_TAG_PREFIX = /^(`{3,}|~{3,})[ \t]*<([ \t]{0,4}\/[ \t]{0,4}[a-z]*[ \t]{0,4})?$/i;

function couldBecomeTag(rest: string): boolean {
	const match = TAG_PREFIX.exec(rest);
	if (!match) return false;
	const name = (match[1] ?? "").toLowerCase();
	const closedName = (match[2] ?? "").length > 0;
	return TAG_NAMES.some((tag) => (closedName ? tag === name : tag.startsWith(name)));
}

function isSpace(char: string | undefined): boolean {
	return char === " " || char === "\t" || char === "\n" || char === "\r";
}

type Destination = "visible" | "reasoning" | "dropped";

/**
 * A streaming filter that strips reasoning and `<final>` tags, leaving tags inside inline code
 * and fenced blocks alone.
 *
 * @example
 * const filter = new ReasoningTagFilter();
 * filter.push("Hello <thi").visible;      // "Hello "
 * filter.push("nk>secret</think>world");  // { visible: "world", reasoning: "secret", reasoningEnds: 1, ... }
 */
export class ReasoningTagFilter {
	readonly #enforceFinal: boolean;
	readonly #keepFinalTags: boolean;
	#pending = "";
	#finished = false;
	#inThinking = false;
	#inFinal = false;
	#fence: FenceMarker | null = null;
	#inlineTicks = 0;
	#atLineStart = true;
	#lineIndent = 0;
	#lineBlank = true;
	#lineChecked = false;
	#lastVisible = "";
	#afterRemoval = false;
	// Visible text since the text began or an orphan close: reasoning, if another orphan close comes.
	#visibleSinceRetraction = "";
	// The end of all reasoning so far, and whether a new reasoning segment (a thinking tag opened,
	// or text an orphan close retracted) must be set apart from it: "plan A" and "plan B" of two
	// tags are two paragraphs, not "plan Aplan B".
	#reasoningTail = "";
	#newSegment = false;
	// Per-call outputs.
	#visible = "";
	#reasoning = "";
	#retracted = false;
	#discarded = "";
	#reasoningEnds = 0;
	#retractionEnds = 0;

	constructor(options: ReasoningTagOptions = {}) {
		this.#enforceFinal = options.enforceFinalTag === true;
		this.#keepFinalTags = options.keepFinalTags === true;
	}

	/** True while the text is inside a thinking tag. */
	get inReasoning(): boolean {
		return this.#inThinking;
	}

	/** Feeds the next piece of raw text. */
	push(chunk: string): ReasoningTagOutput {
		if (this.#finished) return emptyOutput();
		this.#pending += chunk;
		this.#scan(false);
		return this.#takeOutput();
	}

	/**
	 * A content block of the text ended (its separator was pushed): code does not go on into the
	 * next block, each block is Markdown of its own (as a block reply, and as thinking-tag
	 * promotion reads it). Reasoning does go on: an open thinking tag stays open.
	 */
	endBlock(): void {
		this.#fence = null;
		this.#inlineTicks = 0;
	}

	/** Ends the text: releases anything held back. Later pushes are ignored. */
	finish(): ReasoningTagOutput {
		if (this.#finished) return emptyOutput();
		this.#scan(true);
		this.#finished = true;
		return this.#takeOutput();
	}

	#takeOutput(): ReasoningTagOutput {
		const output = {
			visible: this.#visible,
			reasoning: this.#reasoning,
			retracted: this.#retracted,
			discarded: this.#discarded,
			reasoningEnds: this.#reasoningEnds,
			retractionEnds: this.#retractionEnds,
		};
		this.#visible = "";
		this.#reasoning = "";
		this.#retracted = false;
		this.#discarded = "";
		this.#reasoningEnds = 0;
		this.#retractionEnds = 0;
		return output;
	}

	#destination(): Destination {
		if (this.#inThinking) return "reasoning";
		if (this.#enforceFinal && !this.#inFinal) return "dropped";
		return "visible";
	}

	#emit(text: string): void {
		if (text === "") return;
		const destination = this.#destination();
		if (destination === "reasoning") this.#addReasoning(text);
		if (destination !== "visible") return;
		let out = text;
		if (this.#afterRemoval) {
			// A removed tag must not leave a double space, nor glue two words together.
			if (this.#lastVisible === "" || isSpace(this.#lastVisible)) out = out.replace(/^[ \t]+/, "");
			else if (!isSpace(out[0])) out = ` ${out}`;
			if (out === "") return;
			this.#afterRemoval = false;
		}
		this.#visible += out;
		this.#visibleSinceRetraction += out;
		this.#lastVisible = out[out.length - 1] ?? this.#lastVisible;
	}

	/** Adds reasoning text, a new segment set apart from earlier reasoning as a paragraph. */
	#addReasoning(text: string): void {
		let out = text;
		if (this.#newSegment) {
			// Whitespace that opens a segment would only widen the gap; held until text comes.
			out = out.replace(/^\s+/, "");
			if (out === "") return;
			this.#newSegment = false;
			const tail = this.#reasoningTail;
			if (tail !== "") out = (tail.endsWith("\n\n") ? "" : tail.endsWith("\n") ? "\n" : "\n\n") + out;
		}
		if (out === "") return;
		this.#reasoning += out;
		this.#reasoningTail = (this.#reasoningTail + out).slice(-2);
	}

	#newLine(): void {
		if (this.#lineBlank) this.#inlineTicks = 0; // a blank line ends a paragraph, and any inline code in it
		this.#atLineStart = true;
		this.#lineIndent = 0;
		this.#lineBlank = true;
		this.#lineChecked = false;
	}

	#scan(final: boolean): void {
		const text = this.#pending;
		let index = 0;
		while (index < text.length) {
			const char = text[index] ?? "";
			if (this.#atLineStart && char === " " && this.#lineIndent < 3) {
				this.#emit(char);
				this.#lineIndent += 1;
				index += 1;
				continue;
			}
			if (this.#atLineStart && !this.#lineChecked && (char === "`" || char === "~")) {
				const newline = text.indexOf("\n", index);
				const lineEnd = newline === -1 ? text.length : newline;
				const line = text.slice(index, lineEnd);
				if (newline === -1 && !final && couldBecomeFenceLine(line, this.#fence)) break;
				if (newline === -1 && !final && FENCE_THEN_TAG_PREFIX.test(line)) break;
				const glued = FENCE_THEN_TAG.exec(line);
				const run = glued?.[1] ?? "";
				// It closes the open fence, or (the fence opened after a tag, mid-line, where this filter
				// does not see one) it opens none; either way the tag after it is read as any other.
				if (glued && (!this.#fence || (run[0] === this.#fence.char && run.length >= this.#fence.length))) {
					this.#fence = null;
					this.#inlineTicks = 0;
					this.#lineBlank = false;
					this.#emit(run);
					index += glued?.[0].length ?? 0;
					this.#lineChecked = true;
					this.#atLineStart = false;
					continue;
				}
				const kind = classifyFenceLine(line, this.#fence);
				if (kind.kind !== "none") {
					this.#fence = kind.kind === "open" ? kind.marker : null;
					this.#inlineTicks = 0;
					this.#lineBlank = false;
					this.#emit(newline === -1 ? line : `${line}\n`);
					index = newline === -1 ? text.length : newline + 1;
					if (newline !== -1) this.#newLine();
					continue;
				}
				this.#lineChecked = true;
			}
			this.#atLineStart = false;
			if (this.#fence) {
				// Inside a fenced block everything up to the end of the line is code.
				const newline = text.indexOf("\n", index);
				if (newline === -1) {
					this.#emit(text.slice(index));
					this.#lineBlank = false;
					index = text.length;
				} else {
					this.#emit(text.slice(index, newline + 1));
					index = newline + 1;
					this.#newLine();
					this.#lineBlank = true;
				}
				continue;
			}
			if (char === "\n") {
				this.#emit(char);
				index += 1;
				this.#newLine();
				continue;
			}
			if (char === "`") {
				let end = index;
				while (text[end] === "`") end += 1;
				if (end === text.length && !final) break; // the run may still grow
				const run = end - index;
				if (this.#inlineTicks === 0) this.#inlineTicks = run;
				else if (this.#inlineTicks === run) this.#inlineTicks = 0;
				this.#lineBlank = false;
				this.#emit(text.slice(index, end));
				index = end;
				continue;
			}
			if (char === "<" && this.#inlineTicks === 0) {
				TAG_AT.lastIndex = index;
				const match = TAG_AT.exec(text);
				if (match) {
					this.#applyTag(match[1] === "/", (match[2] ?? "").toLowerCase(), match[0]);
					this.#lineBlank = false;
					index += match[0].length;
					continue;
				}
				if (!final && couldBecomeTag(text.slice(index))) break;
			}
			PLAIN_RUN.lastIndex = index + 1;
			const run = PLAIN_RUN.exec(text);
			const end = run ? index + 1 + run[0].length : index + 1;
			const segment = text.slice(index, end);
			if (/[^ \t\r]/.test(segment)) this.#lineBlank = false;
			this.#emit(segment);
			index = end;
		}
		this.#pending = text.slice(index);
	}

	#applyTag(closing: boolean, name: string, literal: string): void {
		if (name === "final") {
			this.#inFinal = !closing;
			if (this.#keepFinalTags) this.#emit(literal);
			else this.#afterRemoval = true;
			return;
		}
		if (!closing) {
			if (!this.#inThinking) {
				this.#afterRemoval = true;
				this.#newSegment = true;
			}
			this.#inThinking = true;
			return;
		}
		if (this.#inThinking) {
			this.#inThinking = false;
			this.#afterRemoval = true;
			this.#reasoningEnds += 1;
			return;
		}
		// An orphan close: the model reasoned without an opening tag, so all visible text
		// before this point was reasoning (a known leak, fixed here by retracting it).
		this.#retracted = true;
		// Counted per tag, not per piece: two in one delta end two passages, as they do a character at a time.
		if (this.#visibleSinceRetraction.trim() !== "") this.#retractionEnds += 1;
		this.#discarded += this.#visible;
		this.#newSegment = true;
		this.#addReasoning(this.#visibleSinceRetraction);
		this.#visibleSinceRetraction = "";
		this.#visible = "";
		this.#lastVisible = "";
		this.#afterRemoval = true;
	}
}

function emptyOutput(): ReasoningTagOutput {
	return { visible: "", reasoning: "", retracted: false, discarded: "", reasoningEnds: 0, retractionEnds: 0 };
}

/**
 * Strips reasoning and `<final>` tags from a complete text. Text before an orphan closing tag
 * counts as reasoning.
 *
 * @example
 * stripReasoningTags("Hello <think>secret</think>world");
 * // { visible: "Hello world", reasoning: "secret" }
 * stripReasoningTags("Use `<think>` tags"); // visible unchanged: the tag is inline code
 * stripReasoningTags("Let me see. </think>4"); // { visible: "4", reasoning: "Let me see. " }
 */
export function stripReasoningTags(text: string, options: ReasoningTagOptions = {}): { visible: string; reasoning: string } {
	const filter = new ReasoningTagFilter(options);
	const first = filter.push(text);
	const last = filter.finish();
	const visible = last.retracted ? last.visible : first.visible + last.visible;
	return { visible, reasoning: first.reasoning + last.reasoning };
}
