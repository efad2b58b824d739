/**
 * A bound on one line of a server's event stream. Every SSE reader (the SDKs' and ours) keeps
 * the text of a line until its end arrives: a broken or hostile server that sends one endless
 * line (a tool call's arguments that never end, a proxy that strips newlines) made the reply's
 * memory grow until the host process died of heap exhaustion, with no error to show. No event
 * of a real API comes near the bound: a model's whole reply is at most a few MB.
 */

/** The longest line, in bytes, a stream may send before its request is cancelled with an error. */
export const MAX_STREAM_LINE_BYTES = 16 * 1024 * 1024;

/**
 * A line of the stream was longer than {@link MAX_STREAM_LINE_BYTES}: the stream ends with this
 * error, which the provider reports as the reply's `errorMessage`.
 */
export class StreamLineTooLongError extends RangeError {
	constructor(maxBytes: number) {
		super(
			`The server sent a line of more than ${Math.round(maxBytes / (1024 * 1024))} MB without a line end (not an event stream a model API sends); the request was cancelled`,
		);
		this.name = "StreamLineTooLongError";
	}
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * The body, passed through unchanged as long as no line is longer than `maxBytes`; a longer
 * line errors the stream with {@link StreamLineTooLongError} and cancels the source (the
 * connection). Costs a native search of each chunk for its first and last line end.
 *
 * @example
 * const body = limitLineLength(response.body);
 * const limited = new Response(body, response); // read as usual (withReplyLimits in reply-size.ts does this)
 */
export function limitLineLength(body: ReadableStream<Uint8Array>, maxBytes = MAX_STREAM_LINE_BYTES): ReadableStream<Uint8Array> {
	let lineBytes = 0;
	return body.pipeThrough(
		new TransformStream<Uint8Array, Uint8Array>({
			transform(chunk, controller) {
				const lastEnd = Math.max(chunk.lastIndexOf(LF), chunk.lastIndexOf(CR));
				if (lastEnd === -1) lineBytes += chunk.length;
				else {
					// The line pending from earlier chunks ends at this chunk's first line end.
					const lf = chunk.indexOf(LF);
					const cr = chunk.indexOf(CR);
					const firstEnd = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
					if (lineBytes + firstEnd > maxBytes) return controller.error(new StreamLineTooLongError(maxBytes));
					lineBytes = chunk.length - 1 - lastEnd;
				}
				if (lineBytes > maxBytes) return controller.error(new StreamLineTooLongError(maxBytes));
				controller.enqueue(chunk);
			},
		}),
	);
}
