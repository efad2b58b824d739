/**
 * Reading a Chat Completions response body into the chunk reader: the event stream servers
 * normally send, or the single JSON completion some send although a stream was asked for.
 * Whatever breaks the format (a chunk that is not JSON, an error object in place of a chunk)
 * ends the read with a message that says what arrived and where.
 */
import { excerpt, htmlText } from "./http-error-text.js";
import { describeStreamErrorPayload, OpenAIStreamError } from "./openai-errors.js";
import { readServerSentEvents } from "./openai-sse.js";
import { requestTimeoutMs } from "./stream-option-check.js";
import type { OpenAIChunkReader } from "./openai-stream-reader.js";
import { asRecord } from "../util/json-values.js";

/** The SDK's default request timeout, used as the stall limit too when `timeoutMs` is not set. */
const defaultTimeoutMs = 600_000;

type Json = Record<string, unknown>;

/** Parses one `data:` payload; anything but a JSON object is a malformed chunk. */
function parseChunk(data: string, eventNumber: number): Json {
	let value: unknown;
	try {
		value = JSON.parse(data);
	} catch {
		throw new OpenAIStreamError(`Malformed chunk in the provider's stream (event ${eventNumber}): not valid JSON: ${excerpt(data, 120)}`);
	}
	if (value === null || typeof value !== "object" || Array.isArray(value)) {
		throw new OpenAIStreamError(`Malformed chunk in the provider's stream (event ${eventNumber}): expected a JSON object, got ${excerpt(data, 120)}`);
	}
	return value as Json;
}

function carriesError(chunk: Json): boolean {
	const error = chunk["error"];
	return error !== undefined && error !== null && error !== false;
}

/**
 * Feeds an SSE body to the reader until `[DONE]` or the end of the body, and returns the
 * number of the last event. `timeoutMs` also bounds the silence between bytes.
 */
async function readEventStream(
	body: ReadableStream<Uint8Array>,
	reader: OpenAIChunkReader,
	timeoutMs: number | undefined,
	signal: AbortSignal | undefined,
): Promise<number> {
	let eventNumber = 0;
	const events = readServerSentEvents(body, {
		idleTimeoutMs: requestTimeoutMs(timeoutMs) ?? defaultTimeoutMs,
		idleTimeoutSource: timeoutMs !== undefined ? "timeoutMs" : "the default timeoutMs",
		...(signal ? { signal } : {}),
	});
	for await (const event of events) {
		eventNumber++;
		if (event.data === "[DONE]") {
			reader.sawDone = true;
			break;
		}
		const chunk = parseChunk(event.data, eventNumber);
		if (event.event === "error" || carriesError(chunk)) throw new OpenAIStreamError(describeStreamErrorPayload(chunk));
		reader.handle(chunk);
	}
	return eventNumber;
}

/**
 * Some servers and proxies ignore `stream: true` and answer with one JSON completion: its
 * message is read as a single delta, so the reply still arrives, in one piece.
 */
async function readJsonCompletion(response: Response, reader: OpenAIChunkReader, contentType: string): Promise<void> {
	const text = await response.text();
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch {
		throw new OpenAIStreamError(`The provider answered with ${contentType} instead of an event stream: ${excerpt(text, 120)}`);
	}
	const completion = asRecord(value) ?? {};
	if (carriesError(completion)) throw new OpenAIStreamError(describeStreamErrorPayload(completion));
	const choices = Array.isArray(completion["choices"]) ? (completion["choices"] as unknown[]).map(asRecord) : [];
	if (choices.length === 0) {
		throw new OpenAIStreamError(`The provider answered with ${contentType} without choices: ${excerpt(text, 120)}`);
	}
	reader.handle({
		...completion,
		choices: choices.map((choice) => {
			const message = asRecord(choice?.["message"]) ?? {};
			const toolCalls = message["tool_calls"];
			// Complete tool calls carry no index; their position tells them apart.
			const indexed = Array.isArray(toolCalls) ? toolCalls.map((call: unknown, index) => ({ index, ...asRecord(call) })) : undefined;
			return {
				index: choice?.["index"],
				delta: { ...message, ...(indexed ? { tool_calls: indexed } : {}) },
				finish_reason: choice?.["finish_reason"],
			};
		}),
	});
	reader.sawDone = true;
}

/**
 * Reads a successful response into the reader, whatever form it came in, and returns the
 * number of the last event read (for messages about where a stream ended).
 *
 * @example
 * const lastEvent = await readResponseBody(response, reader, options.timeoutMs, options.signal);
 * const outcome = reader.finish(lastEvent);
 */
export async function readResponseBody(
	response: Response,
	reader: OpenAIChunkReader,
	timeoutMs: number | undefined,
	signal: AbortSignal | undefined,
): Promise<number> {
	const contentType = response.headers.get("content-type") ?? "";
	if (/json/i.test(contentType)) {
		await readJsonCompletion(response, reader, contentType);
		return 1;
	}
	if (/html/i.test(contentType)) {
		const page = htmlText(await response.text());
		throw new OpenAIStreamError(`The provider answered with an HTML page instead of an event stream (a proxy or login page?): "${page}"`);
	}
	if (!response.body) throw new OpenAIStreamError("The provider answered without a response body");
	return readEventStream(response.body, reader, timeoutMs, signal);
}
