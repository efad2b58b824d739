/**
 * Commentary in one assistant message: text an OpenAI-Responses-style provider marks as narration
 * the user does not see, which can turn out to be the answer, or be replaced by it. What each text
 * event of a block means is decided here; `MessageAssembly` does what the decision says.
 */
import { newTextFrom, type TextEventKind } from "./append-only-text.js";

/**
 * How long the text a block streamed may be and still be told replaced (a commentary the provider
 * overwrote with the answer): narration between tool calls is a sentence or two.
 */
const REPLACEABLE_CHARS = 4_000;

/** Where a text event came from. */
export interface TextOrigin {
	/** The provider marked the text as commentary: narration the user does not see. */
	commentary?: boolean;
	/** The block's whole text as the provider reports it now (the partial message's block). */
	blockText?: string | undefined;
}

/**
 * What a text event means for the visible text:
 * - `skip`: it is commentary, or text the provider threw away: nothing is shown;
 * - `whole`: the block began as commentary and turned out to be the answer: `text` (its whole
 *   text so far) is the block's first visible text;
 * - `restart`: what the block streamed was replaced: the visible text starts over, from `text`
 *   when the replacement starts with it;
 * - `append`: ordinary text, appended under the append-only rule.
 */
export type CommentaryDecision = { act: "skip" } | { act: "whole"; text: string } | { act: "restart"; text: string | undefined } | { act: "append" };

const SKIP: CommentaryDecision = { act: "skip" };
const APPEND: CommentaryDecision = { act: "append" };

/**
 * The commentary of one message's text blocks.
 *
 * @example
 * const commentary = new CommentaryBlocks();
 * commentary.decide(0, "delta", "Let me check.", { commentary: true }, undefined, false); // { act: "skip" }
 * commentary.decide(0, "delta", " Done.", { blockText: "Let me check. Done." }, undefined, false); // { act: "whole", text: "Let me check. Done." }
 */
export class CommentaryBlocks {
	// Blocks some of whose text was commentary, with what they streamed as commentary (by their own events).
	readonly #blocks = new Map<number, string>();

	/**
	 * What the text event `kind`/`text` of block `contentIndex` means. `accumulated`: the block's
	 * visible raw text so far (undefined: none yet); `onlyTextBlock`: the block is the message's
	 * only text block so far, the one whose restart is the message's (the text of earlier blocks
	 * went through the filters already and stays: a known limit, docs/reply.md).
	 */
	decide(contentIndex: number, kind: TextEventKind, text: string, origin: TextOrigin, accumulated: string | undefined, onlyTextBlock: boolean): CommentaryDecision {
		const commentary = this.#blocks.get(contentIndex);
		if (origin.commentary) {
			this.#blocks.set(contentIndex, (commentary ?? "") + newTextFrom(commentary ?? "", kind, text));
			return SKIP;
		}
		if (accumulated === undefined && commentary !== undefined) {
			// None of the commentary was shown, so the block starts over from its whole text; its new
			// part alone would lose the beginning, and the full content at text_end would then be
			// appended to that part.
			const whole = kind === "delta" ? wholeAtFlip(commentary, text, origin.blockText) : text;
			if (whole === undefined) {
				// Replaced since this delta: it belonged to the text the provider threw away.
				this.#blocks.set(contentIndex, commentary + text);
				return SKIP;
			}
			if (whole !== "") {
				this.#blocks.delete(contentIndex);
				return { act: "whole", text: whole };
			}
		}
		if (accumulated === undefined && commentary === undefined && kind === "delta" && isReplacedDelta(text, origin.blockText)) {
			// Read late, the block already holds other text: this first delta was replaced (a
			// commentary whose phase the replacement overwrote before this listener got to it).
			this.#blocks.set(contentIndex, text);
			return SKIP;
		}
		if (accumulated !== undefined && kind === "delta" && onlyTextBlock && replacedSoFar(accumulated, text, origin.blockText)) {
			// The block no longer starts with what it streamed: the provider replaced that text (a
			// commentary whose phase the replacement overwrote before this listener read it, and
			// whose text the replacement starts with, so its first delta looked like the answer).
			// What it streamed was never the answer: start over, from this delta when the
			// replacement starts with it.
			const replacementStarts = origin.blockText?.startsWith(text) === true;
			this.#blocks.set(contentIndex, replacementStarts ? accumulated : accumulated + text);
			return { act: "restart", text: replacementStarts ? text : undefined };
		}
		return APPEND;
	}
}

/**
 * True when a delta shows that the block's text so far was replaced: the block, read now, does
 * not start with it (a listener that lags reads the block ahead, never behind).
 */
function replacedSoFar(accumulated: string, delta: string, blockText: string | undefined): boolean {
	// Checked while the text is short enough to be a commentary's narration: comparing it reads (and
	// copies) the text streamed so far, which for every delta of a long answer would be quadratic.
	if (blockText === undefined || delta === "" || accumulated.length > REPLACEABLE_CHARS) return false;
	return !blockText.startsWith(accumulated + delta);
}

/**
 * A block's whole text at the delta that showed it to be the answer, or `undefined` when that
 * delta's text is gone from the block already. The block's text in the partial message tells an
 * extension of the commentary from a replacement, but it is read when the event is handled, and a
 * listener that lags behind the stream sees later deltas (and a later phase) there too: only the
 * part the events so far account for is taken (the rest comes as deltas). When the block starts
 * with neither the extended commentary nor this delta, the provider replaced the text after this
 * delta (the phase read was the replacement's): the delta was not the answer, whose text follows.
 */
function wholeAtFlip(commentary: string, delta: string, blockText: string | undefined): string | undefined {
	const extended = commentary + delta;
	if (blockText === undefined || blockText.startsWith(extended)) return extended;
	// The provider replaced the commentary: the block now starts with this delta.
	if (blockText.startsWith(delta)) return delta;
	return undefined;
}

/** True when the block's text, read after a block's first delta, no longer starts with it. */
function isReplacedDelta(delta: string, blockText: string | undefined): boolean {
	return blockText !== undefined && delta !== "" && !blockText.startsWith(delta);
}
