/**
 * Delivery of block replies to a channel: optional coalescing, then strictly serial sends, each
 * with a timeout. A send that times out is recorded as unconfirmed and the pipeline goes on with
 * the next one: buffered content is never dropped because one send hung (a known failure of the
 * reference, where a timeout aborted the whole pipeline and replies stopped mid-sentence).
 */
import { shown } from "../agent-input.js";
import { withoutNulls } from "../util/without-nulls.js";
import { LONGEST_DELAY } from "../util/deadlines.js";
import { createBlockReplyCoalescer, type BlockReplyCoalescer, type BlockReplyCoalescing } from "./block-reply-coalescer.js";
import type { MaybePromise, ReplyPayload } from "./types.js";

/**
 * The default per-send timeout, in milliseconds.
 *
 * @example
 * const pipeline = createBlockReplyPipeline({ onBlockReply: send, timeoutMs: 2 * DEFAULT_BLOCK_REPLY_TIMEOUT_MS });
 */
export const DEFAULT_BLOCK_REPLY_TIMEOUT_MS = 15_000;

/**
 * The dedupe key of a payload: trimmed text, media and reply target.
 *
 * @example
 * createBlockReplyPayloadKey({ text: "  hello  " }) === createBlockReplyPayloadKey({ text: "hello" }); // true
 */
export function createBlockReplyPayloadKey(payload: ReplyPayload): string {
	return JSON.stringify({ text: (payload.text ?? "").trim(), media: payload.mediaUrls ?? [], replyToId: payload.replyToId ?? null });
}

/**
 * The content key of a payload: like the payload key, without the reply target.
 *
 * @example
 * createBlockReplyContentKey({ text: "a", replyToId: "1" }) === createBlockReplyContentKey({ text: "a" }); // true
 */
export function createBlockReplyContentKey(payload: ReplyPayload): string {
	return JSON.stringify({ text: (payload.text ?? "").trim(), media: payload.mediaUrls ?? [] });
}

/**
 * What happened to the payloads handed to the channel.
 *
 * @example
 * const { confirmed, failed, timedOut }: BlockReplyDeliveryReport = pipeline.getDeliveryReport();
 * if (failed.length + timedOut.length > 0) console.warn(`${failed.length} failed, ${timedOut.length} timed out`);
 */
export interface BlockReplyDeliveryReport {
	/** Sends that completed. */
	confirmed: ReplyPayload[];
	/** Sends that threw or rejected. */
	failed: ReplyPayload[];
	/** Sends still unsettled when their timeout passed (they may complete later). */
	timedOut: ReplyPayload[];
}

/**
 * Options of {@link createBlockReplyPipeline}.
 *
 * @example
 * const options: BlockReplyPipelineOptions = { onBlockReply: (payload) => chat.send(payload.text ?? ""), timeoutMs: 10_000 };
 * const pipeline = createBlockReplyPipeline(options);
 */
export interface BlockReplyPipelineOptions {
	/** Sends one payload to the channel. */
	onBlockReply: (payload: ReplyPayload) => MaybePromise<void>;
	/**
	 * Per-send timeout in milliseconds (default 15 000); 0 or `Infinity` for none. A timeout longer
	 * than a timer can wait (about 24.8 days) is none too.
	 */
	timeoutMs?: number;
	/** Merge small blocks before sending. */
	coalescing?: BlockReplyCoalescing;
}

/**
 * The pipeline's handle.
 *
 * @example
 * const pipeline: BlockReplyPipeline = createBlockReplyPipeline({ onBlockReply: (payload) => chat.send(payload.text ?? "") });
 * pipeline.enqueue({ text: "Hello" });
 * await pipeline.flush({ force: true });
 */
export interface BlockReplyPipeline {
	/** Queues a payload; a payload with the same key as an earlier one is dropped. */
	enqueue(payload: ReplyPayload): void;
	/** Sends what the coalescer holds (all of it with `force`) and waits for every queued send. */
	flush(options?: { force?: boolean }): Promise<void>;
	/** Stops the idle timer; later payloads are ignored. */
	stop(): void;
	/** True when a payload with the same content was delivered (confirmed). */
	hasSentPayload(payload: ReplyPayload): boolean;
	/** True when at least one payload was delivered. */
	didStream(): boolean;
	/** Confirmed, failed and timed-out sends so far. */
	getDeliveryReport(): BlockReplyDeliveryReport;
}

/**
 * The per-send timeout to set, undefined for none. Node fires a timer of more than its longest
 * delay (and of `Infinity`) after 1 ms, which made every send time out at once.
 */
function sendTimeout(value: unknown): number | undefined {
	if (value === undefined) return DEFAULT_BLOCK_REPLY_TIMEOUT_MS;
	if (typeof value !== "number" || Number.isNaN(value) || value < 0) {
		throw new RangeError(`createBlockReplyPipeline: timeoutMs must be a number of milliseconds, at least 0 (0 or Infinity: no timeout), got ${typeof value === "number" ? String(value) : typeof value}`);
	}
	return value === 0 || value > LONGEST_DELAY ? undefined : value;
}

/**
 * Refuses coalescing sizes the coalescer would compare as they are: a NaN `maxChars` (a
 * `Number(process.env.X)` with the variable unset) merged everything into one block without
 * bound, a NaN `minChars` turned merging off, and a `maxChars` below `minChars` cannot be met.
 */
function checkCoalescing(coalescing: unknown): void {
	if (typeof coalescing !== "object" || coalescing === null || Array.isArray(coalescing)) throw new TypeError(`createBlockReplyPipeline: coalescing must be an object ({ minChars, maxChars, idleMs }), got ${shown(coalescing)}`);
	const fields = coalescing as Record<string, unknown>;
	for (const field of ["minChars", "maxChars", "idleMs"]) {
		const value = fields[field];
		// No idleMs is no idle timer, as 0 is (what a coalescing without one always did).
		if (field === "idleMs" && value === undefined) continue;
		if (typeof value !== "number" || !(value >= 0)) throw new RangeError(`createBlockReplyPipeline: coalescing.${field} must be a number, at least 0, got ${shown(value)}`);
	}
	if ((fields["maxChars"] as number) < (fields["minChars"] as number)) throw new RangeError(`createBlockReplyPipeline: coalescing.maxChars (${String(fields["maxChars"])}) is below minChars (${String(fields["minChars"])}): no block could be both`);
	if (fields["joiner"] !== undefined && typeof fields["joiner"] !== "string") throw new TypeError(`createBlockReplyPipeline: coalescing.joiner must be a text, got ${shown(fields["joiner"])}`);
}

/**
 * Creates a delivery pipeline.
 *
 * @example
 * const pipeline = createBlockReplyPipeline({
 *   onBlockReply: (payload) => slack.postMessage({ text: payload.text }),
 *   coalescing: { minChars: 200, maxChars: 1500, idleMs: 1000 },
 * });
 * const replies = subscribeReplies(agent, {
 *   onBlockReply: (payload) => pipeline.enqueue(payload),
 *   onBlockReplyFlush: () => pipeline.flush({ force: true }),
 * });
 */
export function createBlockReplyPipeline(given: BlockReplyPipelineOptions): BlockReplyPipeline {
	if (typeof given !== "object" || given === null) throw new TypeError(`createBlockReplyPipeline: the options must be an object, got ${shown(given)}`);
	// null is none for an optional setting, as leaving it out (the default timeout, no coalescing, the default joiner).
	let options = withoutNulls(given);
	if (typeof options.coalescing === "object" && options.coalescing !== null) options = { ...options, coalescing: withoutNulls(options.coalescing) };
	// Without a sender every payload was marked failed, one by one, and nothing said why.
	if (typeof options.onBlockReply !== "function") throw new TypeError(`createBlockReplyPipeline: onBlockReply must be a function that sends a payload, got ${shown(options.onBlockReply)}`);
	const timeoutMs = sendTimeout(options.timeoutMs);
	if (options.coalescing != null) checkCoalescing(options.coalescing);
	const seenKeys = new Set<string>();
	const confirmedContent = new Set<string>();
	const report: BlockReplyDeliveryReport = { confirmed: [], failed: [], timedOut: [] };
	let chain: Promise<void> = Promise.resolve();
	let stopped = false;

	const confirm = (payload: ReplyPayload): void => {
		report.confirmed.push(payload);
		confirmedContent.add(createBlockReplyContentKey(payload));
	};

	const sendOne = async (payload: ReplyPayload): Promise<void> => {
		let timer: ReturnType<typeof setTimeout> | undefined;
		let timedOut = false;
		const send = Promise.resolve()
			.then(() => options.onBlockReply(payload))
			.then(
				() => {
					// A late completion still counts: the user did get it.
					if (timedOut) report.timedOut.splice(report.timedOut.indexOf(payload), 1);
					confirm(payload);
				},
				() => {
					if (timedOut) report.timedOut.splice(report.timedOut.indexOf(payload), 1);
					report.failed.push(payload);
				},
			);
		if (timeoutMs === undefined) {
			await send;
			return;
		}
		const timeout = new Promise<void>((resolve) => {
			timer = setTimeout(() => {
				timedOut = true;
				report.timedOut.push(payload);
				resolve();
			}, timeoutMs);
		});
		await Promise.race([send, timeout]);
		if (timer !== undefined) clearTimeout(timer);
	};

	const send = (payload: ReplyPayload): void => {
		chain = chain.then(() => sendOne(payload));
	};

	const coalescer: BlockReplyCoalescer | undefined = options.coalescing
		? createBlockReplyCoalescer({ coalescing: options.coalescing, onFlush: send })
		: undefined;

	return {
		enqueue(payload) {
			if (stopped) return;
			const key = createBlockReplyPayloadKey(payload);
			if (seenKeys.has(key)) return;
			seenKeys.add(key);
			if (coalescer) coalescer.enqueue(payload);
			else send(payload);
		},
		async flush(flushOptions = {}) {
			coalescer?.flush(flushOptions);
			// Sends queued while waiting are awaited too.
			let current: Promise<void>;
			do {
				current = chain;
				await current;
			} while (current !== chain);
		},
		stop() {
			stopped = true;
			coalescer?.stop();
		},
		hasSentPayload: (payload) => confirmedContent.has(createBlockReplyContentKey(payload)),
		didStream: () => report.confirmed.length > 0,
		getDeliveryReport: () => ({
			confirmed: [...report.confirmed],
			failed: [...report.failed],
			timedOut: [...report.timedOut],
		}),
	};
}
