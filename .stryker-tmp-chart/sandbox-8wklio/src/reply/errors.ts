/**
 * The error `waitForCompactionRetry()` rejects with after `unsubscribe()`. Its `name` is
 * "AbortError", so callers can treat it like any aborted operation.
 *
 * @example
 * await replies.waitForCompactionRetry().catch((error) => {
 *   if (error.name !== "AbortError") throw error;
 * });
 */
// @ts-nocheck

export class ReplySubscriptionAbortedError extends Error {
	override readonly name = "AbortError";

	constructor(message = "Unsubscribed during compaction wait") {
		super(message);
	}
}
