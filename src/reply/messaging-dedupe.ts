/**
 * Messaging-tool dedupe: when the model sends a message itself through a messaging tool and
 * then repeats that text as its answer, the channel must not show it twice.
 *
 * Texts are compared after normalisation (lowercase, emoji removed, whitespace folded) and count
 * as duplicates when one contains the other, but only from 10 characters up: short texts ("OK",
 * "Done") match too much by accident.
 */

/** Shortest normalised text that takes part in duplicate checks. */
export const MIN_DUPLICATE_TEXT_LENGTH = 10;
/** How many sent texts are remembered. */
export const MAX_REMEMBERED_SENDS = 200;

const EMOJI = /[\p{Emoji_Presentation}\p{Extended_Pictographic}\u{FE0F}\u{200D}]/gu;

/**
 * Normalises a text for duplicate comparison.
 *
 * @example
 * normalizeTextForComparison("  Hello 👋   WORLD  🌍  "); // "hello world"
 */
export function normalizeTextForComparison(text: string): string {
	return text.toLowerCase().replace(EMOJI, "").replace(/\s+/g, " ").trim();
}

/**
 * True when a normalised text duplicates one of the normalised sent texts (either contains the other).
 *
 * @example
 * isDuplicateOfSent("hello, this is a test message!", ["this is a test message!"]); // true
 */
export function isDuplicateOfSent(normalized: string, sentNormalized: readonly string[]): boolean {
	if (normalized.length < MIN_DUPLICATE_TEXT_LENGTH) return false;
	return sentNormalized.some(
		(sent) => sent.length >= MIN_DUPLICATE_TEXT_LENGTH && (normalized.includes(sent) || sent.includes(normalized)),
	);
}

/**
 * True when `text` duplicates one of the raw `sentTexts`.
 *
 * @example
 * isMessagingToolDuplicate("Hello! 👋 This is a test message!", ["Hello! This is a test message!"]); // true
 * isMessagingToolDuplicate("short", ["short"]); // false: below the length floor
 */
export function isMessagingToolDuplicate(text: string, sentTexts: readonly string[]): boolean {
	return isDuplicateOfSent(normalizeTextForComparison(text), sentTexts.map(normalizeTextForComparison));
}

/**
 * What `text` says beyond what was sent: its paragraphs that duplicate no sent text, or "" when
 * it is a duplicate through and through. An answer that quotes the message it sent and then asks
 * a question keeps the question; checked whole, it was dropped with it.
 *
 * @example
 * textBeyondSent('I posted: "Deployed to production."\n\nAnything else?', ["deployed to production."]); // "Anything else?"
 */
export function textBeyondSent(text: string, sentNormalized: readonly string[]): string {
	if (!isDuplicateOfSent(normalizeTextForComparison(text), sentNormalized)) return text;
	const paragraphs = text.split(/\n[ \t]*\n/);
	if (paragraphs.length === 1) return "";
	const kept = paragraphs.filter((paragraph) => paragraph.trim() !== "" && !isDuplicateOfSent(normalizeTextForComparison(paragraph), sentNormalized));
	// A sent text of several paragraphs, repeated whole, leaves no paragraph of its own.
	return kept.length === paragraphs.filter((paragraph) => paragraph.trim() !== "").length ? "" : kept.join("\n\n");
}

/**
 * The texts and targets messaging tools have sent, in two stages: a call's text is pending from
 * its start, committed when it succeeds and discarded when it fails. Only committed texts
 * suppress block replies: suppressing on a send that then fails would leave the user with no
 * answer at all.
 *
 * @example
 * const log = new MessagingSendLog();
 * log.begin("call-1", { text: "Deployed to production." });
 * log.settle("call-1", true);
 * log.isDuplicate("deployed to production."); // true
 */
export class MessagingSendLog<TTarget = unknown> {
	readonly #pending = new Map<string, { text?: string; target?: TTarget }>();
	#texts: string[] = [];
	#normalized: string[] = [];
	#targets: TTarget[] = [];

	/** Records what a call is about to send. */
	begin(callId: string, send: { text?: string; target?: TTarget }): void {
		this.#pending.set(callId, send);
	}

	/** Commits (on success) or discards (on failure) what a call sent. */
	settle(callId: string, succeeded: boolean): void {
		const send = this.#pending.get(callId);
		this.#pending.delete(callId);
		if (!send || !succeeded) return;
		if (send.text !== undefined && send.text.trim() !== "") {
			this.#texts.push(send.text);
			this.#normalized.push(normalizeTextForComparison(send.text));
		}
		if (send.target !== undefined) this.#targets.push(send.target);
		this.#trim();
	}

	/** True when the text duplicates a committed send. */
	isDuplicate(text: string): boolean {
		return isDuplicateOfSent(normalizeTextForComparison(text), this.#normalized);
	}

	/** What the text says beyond the committed sends (see {@link textBeyondSent}). */
	beyondSent(text: string): string {
		return textBeyondSent(text, this.#normalized);
	}

	/** Committed texts, oldest first (a copy). */
	get texts(): string[] {
		return [...this.#texts];
	}

	/** Committed targets, oldest first (a copy). */
	get targets(): TTarget[] {
		return [...this.#targets];
	}

	/** Forgets everything (a compaction retry replays the run). */
	clear(): void {
		this.#pending.clear();
		this.#texts = [];
		this.#normalized = [];
		this.#targets = [];
	}

	#trim(): void {
		// Oldest first out: the latest sends are the ones an answer is likely to repeat.
		if (this.#texts.length > MAX_REMEMBERED_SENDS) {
			this.#texts = this.#texts.slice(-MAX_REMEMBERED_SENDS);
			this.#normalized = this.#normalized.slice(-MAX_REMEMBERED_SENDS);
		}
		if (this.#targets.length > MAX_REMEMBERED_SENDS) this.#targets = this.#targets.slice(-MAX_REMEMBERED_SENDS);
	}
}
