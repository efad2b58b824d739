/**
 * A bound on the whole body of one streamed reply. The line bound (line-limit.ts) stops one
 * endless line; a server that streams small deltas without end (text, thinking or tool-call
 * arguments, each line short) grew the reply in memory until the host process died of heap
 * exhaustion. No real reply comes near the default: 128k output tokens, each its own event, are
 * about 40 MB on the wire.
 */
import { limitLineLength } from "./line-limit.js";

/** The default of `maxReplyBytes`: the most bytes one reply's body may bring before its request is cancelled. */
export const DEFAULT_MAX_REPLY_BYTES = 256 * 1024 * 1024;

/**
 * The body of a reply passed `maxReplyBytes`: the stream ends with this error, which the
 * provider reports as the reply's `errorMessage` (what had streamed is kept).
 */
export class ReplyTooLargeError extends RangeError {
	constructor(maxBytes: number) {
		super(`The server's reply passed ${describeBytes(maxBytes)} (maxReplyBytes) without ending; the request was cancelled`);
		this.name = "ReplyTooLargeError";
	}
}

function describeBytes(bytes: number): string {
	const megabytes = bytes / (1024 * 1024);
	return Number.isInteger(megabytes) ? `${megabytes} MB` : `${bytes} bytes`;
}

/** How much of a body's start {@link BodyMeter.start} keeps: enough to tell a page or a JSON body from events. */
export const BODY_START_CHARS = 2_048;

/** Counts the bytes a body brought, for messages that say what arrived (keep-alive pings, say). */
export interface BodyMeter {
	bytes: number;
	/**
	 * When set (to ""), the body's first {@link BODY_START_CHARS} characters are kept here: a body
	 * that held no event (an HTML page sent as an event stream, say) is then said for what it was.
	 */
	start?: string | undefined;
}

/**
 * The limits every streamed reply gets: its lines (see {@link limitLineLength}) and its total
 * size. `maxReplyBytes` 0 lifts the size bound, not the line bound.
 */
export interface ReplyLimits {
	/** Default {@link DEFAULT_MAX_REPLY_BYTES}; 0: no bound. */
	maxReplyBytes?: number | undefined;
	/** Counts the body's bytes as they pass. */
	meter?: BodyMeter | undefined;
}

/**
 * The body, passed through unchanged until it has brought more than `maxReplyBytes`; then the
 * stream errors with {@link ReplyTooLargeError} and the source (the connection) is cancelled.
 * Each line is bounded too.
 *
 * @example
 * const body = limitReply(response.body, { maxReplyBytes: 64 * 1024 * 1024 });
 */
export function limitReply(body: ReadableStream<Uint8Array>, limits: ReplyLimits = {}): ReadableStream<Uint8Array> {
	const maxBytes = limits.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
	const meter = limits.meter ?? { bytes: 0 };
	const decoder = new TextDecoder();
	const lines = limitLineLength(body);
	return lines.pipeThrough(
		new TransformStream<Uint8Array, Uint8Array>({
			transform(chunk, controller) {
				if (meter.start !== undefined && meter.start.length < BODY_START_CHARS) {
					meter.start += decoder.decode(chunk.subarray(0, BODY_START_CHARS), { stream: true });
				}
				meter.bytes += chunk.length;
				if (maxBytes > 0 && meter.bytes > maxBytes) return controller.error(new ReplyTooLargeError(maxBytes));
				controller.enqueue(chunk);
			},
		}),
	);
}

/**
 * The response with its body bounded by {@link limitReply}; error responses and bodiless ones
 * are returned as they are.
 *
 * @example
 * const response = withReplyLimits(await fetch(url, init), { maxReplyBytes: options.maxReplyBytes });
 */
export function withReplyLimits(response: Response, limits: ReplyLimits = {}): Response {
	if (!response.ok || response.body === null) return response;
	return new Response(limitReply(response.body, limits), { status: response.status, statusText: response.statusText, headers: response.headers });
}
