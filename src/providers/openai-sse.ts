/**
 * Server-sent events from a streaming Chat Completions response body.
 *
 * The SDK has its own decoder, but it reports a malformed chunk without saying which one,
 * cannot tell a stream that ended with `[DONE]` from one cut short, and never times out once
 * the headers have arrived. Reading the body here fixes all three; the request itself (auth,
 * retries, the timeout until the headers, HTTP errors) stays the SDK's.
 */
import { OpenAIStreamError } from "./openai-errors.js";

/** One dispatched event: its `event:` name, if any, and its `data:` lines joined by newlines. */
export interface ServerSentEvent {
	event?: string;
	data: string;
}

export interface ServerSentEventOptions {
	/** Ends the read at once when aborted. */
	signal?: AbortSignal;
	/** The longest wait for the next bytes before the stream counts as stalled. */
	idleTimeoutMs: number;
	/** Where the limit came from, for the message (default "timeoutMs"). */
	idleTimeoutSource?: string;
	/**
	 * Counts the characters scanned for line ends: what reading a body costs, each character about
	 * once however the body is split (`test/providers/probe-large-tool-arguments.test.ts`).
	 */
	counters?: { scanned: number } | undefined;
}

class StallError extends OpenAIStreamError {}

function readWithin(
	reader: ReadableStreamDefaultReader<Uint8Array>,
	idleTimeoutMs: number,
	signal: AbortSignal | undefined,
): Promise<ReadableStreamReadResult<Uint8Array>> {
	return new Promise((resolve, reject) => {
		const cleanup = () => {
			clearTimeout(timer);
			signal?.removeEventListener("abort", onAbort);
		};
		const onAbort = () => {
			cleanup();
			reject(signal?.reason ?? new Error("aborted"));
		};
		const timer = setTimeout(() => {
			cleanup();
			reject(new StallError(""));
		}, idleTimeoutMs);
		if (signal?.aborted) return onAbort();
		signal?.addEventListener("abort", onAbort, { once: true });
		reader.read().then(
			(result) => {
				cleanup();
				resolve(result);
			},
			(error: unknown) => {
				cleanup();
				reject(error);
			},
		);
	});
}

/**
 * Yields the events of an SSE body as they complete. Lines may end in `\n`, `\r\n` or `\r`
 * and may be split anywhere across network chunks, including inside a multi-byte character.
 * Comments (`: keep-alive`) are skipped but still count as signs of life. Throws an
 * {@link OpenAIStreamError} when nothing arrives for `idleTimeoutMs`.
 *
 * @example
 * for await (const { data } of readServerSentEvents(response.body, { idleTimeoutMs: 60_000 })) {
 *   if (data === "[DONE]") break;
 * }
 */
export async function* readServerSentEvents(
	body: ReadableStream<Uint8Array>,
	options: ServerSentEventOptions,
): AsyncGenerator<ServerSentEvent> {
	const reader = body.getReader();
	const decoder = new TextDecoder();
	let buffer = "";
	let dataLines: string[] = [];
	let eventName: string | undefined;
	let dispatched = 0;
	/** The buffer ends with a \r that may be the first half of a \r\n split across chunks. */
	let heldCarriageReturn = false;

	const takeEvent = (): ServerSentEvent | undefined => {
		const event = dataLines.length > 0 ? { ...(eventName ? { event: eventName } : {}), data: dataLines.join("\n") } : undefined;
		dataLines = [];
		eventName = undefined;
		if (event) dispatched++;
		return event;
	};

	const processLine = (line: string): ServerSentEvent | undefined => {
		if (line === "") return takeEvent();
		if (line.startsWith(":")) return undefined;
		const colon = line.indexOf(":");
		const field = colon === -1 ? line : line.slice(0, colon);
		let value = colon === -1 ? "" : line.slice(colon + 1);
		if (value.startsWith(" ")) value = value.slice(1);
		if (field === "data") dataLines.push(value);
		else if (field === "event") eventName = value;
		return undefined;
	};

	try {
		while (true) {
			let result: ReadableStreamReadResult<Uint8Array>;
			try {
				result = await readWithin(reader, options.idleTimeoutMs, options.signal);
			} catch (error) {
				if (error instanceof StallError) {
					const after = dispatched === 0 ? "before the first event" : `after event ${dispatched}`;
					throw new OpenAIStreamError(
						`The provider's stream stalled: nothing arrived for ${options.idleTimeoutMs} ms ${after} (${options.idleTimeoutSource ?? "timeoutMs"})`,
					);
				}
				throw error;
			}
			if (result.done) break;
			const text = decoder.decode(result.value, { stream: true });
			buffer += text;
			// A long event (a tool call's arguments sent whole) arrives in many chunks: scan only
			// when one brought a line end or completes a held-back \r, so the pending text is
			// scanned once per line rather than once per chunk (rescanning made a 4 MB event take
			// 6 s). Looking at the buffer itself would flatten it, which costs as much as a scan.
			if (!heldCarriageReturn && !/[\r\n]/.test(text)) continue;
			heldCarriageReturn = false;
			let start = 0;
			let i = 0;
			for (; i < buffer.length; i++) {
				const char = buffer[i];
				if (char !== "\n" && char !== "\r") continue;
				// A \r at the very end may be the first half of \r\n: wait for the next bytes.
				if (char === "\r" && i === buffer.length - 1) {
					heldCarriageReturn = true;
					break;
				}
				const event = processLine(buffer.slice(start, i));
				if (char === "\r" && buffer[i + 1] === "\n") i++;
				start = i + 1;
				if (event) yield event;
			}
			if (options.counters) options.counters.scanned += Math.min(i + 1, buffer.length);
			buffer = buffer.slice(start);
		}
		buffer += decoder.decode();
		for (const line of buffer.split(/\r\n|\r|\n/)) {
			const event = processLine(line);
			if (event) yield event;
		}
		// Some servers omit the blank line after the last event.
		const last = takeEvent();
		if (last) yield last;
	} finally {
		void reader.cancel().catch(() => undefined);
	}
}
