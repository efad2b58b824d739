/**
 * Merges small block replies into fewer, fuller messages: text waits in a buffer until it is
 * long enough, too long to grow, or long enough and idle for `idleMs`. Payloads that must stay apart are never
 * merged: reasoning and compaction notices with visible text, different reply targets,
 * voice and non-voice. Payloads with media bypass the buffer (after flushing it, to keep order).
 */
import type { ReplyPayload } from "./types.js";

/**
 * Coalescing settings.
 *
 * @example
 * const coalescing: BlockReplyCoalescing = { minChars: 300, maxChars: 3000, idleMs: 1000, joiner: "\n\n" };
 * const pipeline = createBlockReplyPipeline({ onBlockReply: (payload) => chat.send(payload.text ?? ""), coalescing });
 */
export interface BlockReplyCoalescing {
	/** Buffered text below this waits (unless forced). */
	minChars: number;
	/** Text at or above this is sent at once; merging never goes beyond it. */
	maxChars: number;
	/**
	 * Send the buffer after this many milliseconds without new text, if it holds at least
	 * `minChars` (shorter text waits for more, or for a forced flush); 0 disables the timer.
	 */
	idleMs: number;
	/** Put between merged texts (default "\n\n"). */
	joiner?: string;
	/** Send every payload on its own, right away (flushing the buffer first). */
	flushOnEnqueue?: boolean;
}

/**
 * Options of {@link createBlockReplyCoalescer}.
 *
 * @example
 * const options: BlockReplyCoalescerOptions = { coalescing: { minChars: 200, maxChars: 2000, idleMs: 500 }, onFlush: (payload) => void chat.send(payload.text ?? "") };
 * const coalescer = createBlockReplyCoalescer(options);
 */
export interface BlockReplyCoalescerOptions {
	/** When buffered payloads are merged and sent (sizes and idle gap). */
	coalescing: BlockReplyCoalescing;
	/** Receives each merged payload. */
	onFlush: (payload: ReplyPayload) => void;
	/** When it returns true, buffered and new payloads are dropped. */
	shouldAbort?: () => boolean;
}

/**
 * The coalescer's handle.
 *
 * @example
 * const coalescer: BlockReplyCoalescer = createBlockReplyCoalescer({ coalescing: { minChars: 200, maxChars: 2000, idleMs: 500 }, onFlush: (payload) => void chat.send(payload.text ?? "") });
 * coalescer.enqueue({ text: "First part." });
 * coalescer.flush({ force: true });
 */
export interface BlockReplyCoalescer {
	enqueue(payload: ReplyPayload): void;
	/** Sends the buffer; without `force`, a buffer below `minChars` keeps waiting. */
	flush(options?: { force?: boolean }): void;
	hasBuffered(): boolean;
	/** Cancels the idle timer. */
	stop(): void;
}

function mergeKey(payload: ReplyPayload): string {
	return JSON.stringify([
		payload.replyToId ?? null,
		payload.replyToCurrent === true,
		payload.audioAsVoice === true,
		payload.isReasoning === true,
		payload.isCompactionNotice === true,
	]);
}

/**
 * Creates a coalescer.
 *
 * @example
 * const sent: string[] = [];
 * const coalescer = createBlockReplyCoalescer({
 *   coalescing: { minChars: 1, maxChars: 200, idleMs: 100, joiner: " " },
 *   onFlush: (payload) => sent.push(payload.text ?? ""),
 * });
 * coalescer.enqueue({ text: "Hello" });
 * coalescer.enqueue({ text: "world" });
 * // 100 ms later: sent = ["Hello world"]
 */
export function createBlockReplyCoalescer(options: BlockReplyCoalescerOptions): BlockReplyCoalescer {
	const { coalescing, onFlush } = options;
	const joiner = coalescing.joiner ?? "\n\n";
	let buffer: ReplyPayload | undefined;
	let timer: ReturnType<typeof setTimeout> | undefined;

	const aborted = (): boolean => options.shouldAbort?.() === true;

	const clearTimer = (): void => {
		if (timer !== undefined) clearTimeout(timer);
		timer = undefined;
	};

	const armTimer = (): void => {
		clearTimer();
		if (coalescing.idleMs > 0) timer = setTimeout(() => flush({ force: false }), coalescing.idleMs);
	};

	const flush = (flushOptions: { force?: boolean } = {}): void => {
		clearTimer();
		if (!buffer) return;
		if (aborted()) {
			buffer = undefined;
			return;
		}
		// Too short to send on its own: it waits for more text (which sets the timer again) or a
		// forced flush. Set again here, the timer fired every idleMs for ever and kept the process up.
		if (!flushOptions.force && (buffer.text ?? "").length < coalescing.minChars) return;
		const payload = buffer;
		buffer = undefined;
		onFlush(payload);
	};

	const enqueue = (payload: ReplyPayload): void => {
		if (aborted()) return;
		if ((payload.mediaUrls?.length ?? 0) > 0) {
			flush({ force: true });
			onFlush(payload);
			return;
		}
		const text = payload.text ?? "";
		if (text.trim() === "") return;
		if (coalescing.flushOnEnqueue) {
			flush({ force: true });
			onFlush(payload);
			return;
		}
		if (buffer && mergeKey(buffer) !== mergeKey(payload)) flush({ force: true });
		if (!buffer) {
			if (text.length >= coalescing.maxChars) {
				onFlush(payload);
				return;
			}
			buffer = { ...payload };
		} else {
			const merged = `${buffer.text ?? ""}${joiner}${text}`;
			if (merged.length > coalescing.maxChars) {
				flush({ force: true });
				if (text.length >= coalescing.maxChars) {
					onFlush(payload);
					return;
				}
				buffer = { ...payload };
			} else buffer = { ...buffer, text: merged };
		}
		if ((buffer.text ?? "").length >= coalescing.maxChars) flush({ force: true });
		else armTimer();
	};

	return { enqueue, flush, hasBuffered: () => buffer !== undefined, stop: clearTimer };
}
