/**
 * The append-only rule for streamed text.
 *
 * Deltas append. `text_start`/`text_end` (and `message_end`) may carry the block's full content,
 * and some providers resend everything there: only what extends the accumulated text is new.
 * Content that is a prefix of, or contained in, what we have adds nothing; content unrelated to
 * it (a provider that rewrote the block) is appended whole, since dropping it could lose the answer.
 */
// @ts-nocheck


/** Which streaming event carried the text. */
export type TextEventKind = "start" | "delta" | "end";

/**
 * The part of `incoming` that is new relative to `accumulated`.
 *
 * @example
 * newTextFrom("Hello", "delta", " world");       // " world"
 * newTextFrom("Hello world", "end", "Hello");    // ""
 * newTextFrom("Hello", "end", "Hello world");    // " world"
 */
export function newTextFrom(accumulated: string, kind: TextEventKind, incoming: string): string {
	if (kind === "delta" || incoming === "") return incoming;
	if (incoming.startsWith(accumulated)) return incoming.slice(accumulated.length);
	if (accumulated.includes(incoming)) return "";
	return incoming;
}
