/**
 * A stream function for apps whose LLM calls go through their own server: the server holds
 * the provider keys, the client holds a token for the server. Same API and wire protocol as
 * pi-agent-core 0.73.1's `streamProxy`, so either side can be pi's.
 *
 * Like every stream function here it returns at once, never throws and encodes every failure
 * (an unreachable or failing proxy, a malformed or cut-off stream, a stall, an abort) as a
 * final `error` event whose message keeps whatever content had arrived.
 */
import { shown } from "../agent-input.js";
import { streamOptionsProblem } from "./stream-option-check.js";
import { endOnThrow } from "./unexpected-throw.js";
import { emptyUsage } from "../types/content.js";
import type { AssistantMessage } from "../types/messages.js";
import type { Context, Model, SimpleStreamOptions } from "../types/model.js";
import { AssistantMessageEventStream } from "./event-stream.js";
import { statusLine } from "./http-error-text.js";
import { describeNonStreamBody, describeProxyAnswer, innermostReason } from "./proxy-errors.js";
import { ArgumentsTooDeepError } from "./partial-json.js";
import { parseProxyEvent, ProxyStreamError } from "./proxy-events.js";
import { ProxyMessageBuilder } from "./proxy-message.js";
import { limitReply, ReplyTooLargeError } from "./reply-size.js";
import { watchForStall } from "../util/stall-watch.js";

export type { ProxyAssistantMessageEvent } from "./proxy-events.js";

/**
 * The options that travel to the proxy server, which passes them on to the provider.
 *
 * @example
 * const sent: ProxySerializableStreamOptions = { maxTokens: 1024, temperature: 0.2 };
 */
export type ProxySerializableStreamOptions = Pick<
	SimpleStreamOptions,
	"temperature" | "maxTokens" | "reasoning" | "cacheRetention" | "sessionId" | "headers" | "metadata" | "transport" | "thinkingBudgets" | "maxRetryDelayMs"
>;

/**
 * Options of {@link streamProxy}: pi's, plus an optional stall timeout. Spreading a stream
 * function's options into it is safe: only the serialisable ones are sent.
 *
 * @example
 * const options: ProxyStreamOptions = { proxyUrl: "https://genai.example.com", authToken: token, reasoning: "low", timeoutMs: 120_000 };
 */
export interface ProxyStreamOptions extends ProxySerializableStreamOptions {
	/** Aborts the request to the proxy; the stream then ends with stopReason "aborted". */
	signal?: AbortSignal | undefined;
	/** Sent as `Authorization: Bearer <authToken>`. */
	authToken: string;
	/** The proxy server's base URL, e.g. "https://genai.example.com"; requests go to `<proxyUrl>/api/stream`. */
	proxyUrl: string;
	/**
	 * Longest silence from the proxy, in milliseconds, before the request is cancelled and the
	 * stream ends with an error (0 or unset: wait as long as it takes). Not sent to the server.
	 */
	timeoutMs?: number | undefined;
	/**
	 * The most bytes the proxy's answer may bring (default 256 MB; 0: no bound) before the
	 * request is cancelled and the stream ends with an error. Not sent to the server.
	 */
	maxReplyBytes?: number | undefined;
}

/** The message of every aborted call, as the other providers word it. */
const abortedMessage = "Request was aborted";

// The order pi writes them in, so both clients send the same bytes.
const serializableKeys = [
	"temperature",
	"maxTokens",
	"reasoning",
	"cacheRetention",
	"sessionId",
	"headers",
	"metadata",
	"transport",
	"thinkingBudgets",
	"maxRetryDelayMs",
] as const satisfies readonly (keyof ProxySerializableStreamOptions)[];

function serializableOptions(options: ProxyStreamOptions): Record<string, unknown> {
	// Only data crosses the wire: the signal and any callbacks or API key spread in from the
	// agent's options stay here.
	const sent: Record<string, unknown> = {};
	for (const key of serializableKeys) if (options[key] !== undefined) sent[key] = options[key];
	return sent;
}

/**
 * What is wrong with the options that say where and as whom to connect, or undefined. Each is
 * a string in the types, but they often come from the environment unchecked, and "undefined"
 * would be sent as the token.
 */
function proxySetupProblem(options: ProxyStreamOptions): string | undefined {
	if (typeof options !== "object" || options === null) return `options must be an object with proxyUrl and authToken, got ${shown(options)}`;
	const { proxyUrl, authToken } = options as { proxyUrl?: unknown; authToken?: unknown };
	// Its form is not checked: in a browser, a relative URL ("" or "/genai") is the page's own server.
	if (typeof proxyUrl !== "string") return `options.proxyUrl must be the proxy server's URL (e.g. "https://genai.example.com"), got ${shown(proxyUrl)}`;
	if (typeof authToken !== "string") return `options.authToken must be a string (sent as "Authorization: Bearer <authToken>"), got ${shown(authToken)}`;
	return undefined;
}

function streamEndpoint(proxyUrl: string): string {
	return `${proxyUrl.replace(/\/+$/, "")}/api/stream`;
}

/** Where a stream got to, for messages about where it failed. */
class Progress {
	headers = false;
	events = 0;

	get where(): string {
		if (!this.headers) return "before the response headers";
		return this.events === 0 ? "before the first event" : `after event ${this.events}`;
	}
}

/** Yields the payload of every non-empty `data:` line; other SSE fields and comments are skipped. */
async function* dataLines(reader: ReadableStreamDefaultReader<Uint8Array>, onBytes: () => void): AsyncGenerator<string> {
	const decoder = new TextDecoder();
	let buffer = "";
	const dataOf = (line: string): string | undefined => {
		if (!line.startsWith("data:")) return undefined;
		const data = line.slice(5).trim();
		return data === "" ? undefined : data;
	};
	while (true) {
		const { done, value } = await reader.read();
		if (done) break;
		onBytes();
		const text = decoder.decode(value, { stream: true });
		buffer += text;
		// A long event arrives in many chunks: split only when one brought a line end, so the
		// pending text is scanned once per line rather than once per chunk.
		if (!/[\r\n]/.test(text)) continue;
		// Each event is one line (its JSON has no raw newlines), so lines are dispatched as they
		// complete. A \r\n split across chunks leaves an empty line behind, which is skipped.
		const lines = buffer.split(/\r\n|\r|\n/);
		buffer = lines.pop() ?? "";
		for (const line of lines) {
			const data = dataOf(line);
			if (data !== undefined) yield data;
		}
	}
	// The last line may have no newline after it: it still counts.
	const data = dataOf(buffer + decoder.decode());
	if (data !== undefined) yield data;
}

/**
 * Reads what follows the terminal event for a moment, discarding it. The end of the body
 * usually comes right after; a body read to its end lets the connection be reused for the
 * next call, while cancelling it earlier tears the connection down.
 */
async function drainBriefly(reader: ReadableStreamDefaultReader<Uint8Array>, withinMs = 1_000, maxReads = 16): Promise<void> {
	let timer: ReturnType<typeof setTimeout> | undefined;
	const late = new Promise<"late">((resolve) => {
		timer = setTimeout(() => resolve("late"), withinMs);
	});
	try {
		for (let reads = 0; reads < maxReads; reads++) {
			const next = await Promise.race([reader.read(), late]);
			if (next === "late" || next.done) return;
		}
	} catch {
		// The body failed after the reply was complete: nothing left to report.
	} finally {
		clearTimeout(timer);
	}
}

async function readFailedAnswer(response: Response): Promise<string> {
	const text = await response.text().catch(() => "");
	return `Proxy error: ${describeProxyAnswer(response.status, response.headers.get("content-type") ?? "", text)}`;
}

async function runProxyCall(model: Model, context: Context, options: ProxyStreamOptions, stream: AssistantMessageEventStream): Promise<void> {
	// pi's proxy starts its message with `stopReason` second: a transcript stored as JSON is then pi's byte for byte.
	const message: AssistantMessage = { role: "assistant", stopReason: "stop", content: [], api: model.api, provider: model.provider, model: model.id, usage: emptyUsage(), timestamp: Date.now() };
	// Checked before anything else: a proxyUrl left undefined (an unset environment variable) threw
	// here, outside the try, and the rejection went unhandled (the process died; result() never settled).
	const setupProblem = proxySetupProblem(options);
	const url = setupProblem === undefined ? streamEndpoint(options.proxyUrl) : "";
	// Without options (plain JavaScript) the stream still ends, with the setup problem.
	const { signal, timeoutMs = 0 } = typeof options === "object" && options !== null ? options : ({} as Partial<ProxyStreamOptions>);
	// The request's own signal: the caller's abort, or a proxy that went silent (timeoutMs).
	const request = new AbortController();
	const onAbort = () => request.abort(signal?.reason);
	let stalled = false;
	const stall = watchForStall(timeoutMs, () => {
		stalled = true;
		request.abort(new ProxyStreamError("stalled"));
	});
	const progress = new Progress();
	let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
	try {
		if (signal?.aborted) throw new ProxyStreamError(abortedMessage);
		const optionProblem = setupProblem ?? streamOptionsProblem(options, "options");
		// Said as it is: no request was made.
		if (optionProblem) throw new ProxyStreamError(optionProblem);
		signal?.addEventListener("abort", onAbort, { once: true });

		let response: Response;
		try {
			response = await fetch(url, {
				method: "POST",
				headers: { Authorization: `Bearer ${options.authToken}`, "Content-Type": "application/json" },
				body: JSON.stringify({ model, context, options: serializableOptions(options) }),
				signal: request.signal,
			});
		} catch (error) {
			throw new ProxyStreamError(`The request to the proxy at ${url} failed: ${innermostReason(error)}`);
		}
		progress.headers = true;
		stall.touch();
		if (!response.ok) throw new ProxyStreamError(await readFailedAnswer(response));
		const contentType = response.headers.get("content-type") ?? "";
		// A wrong proxyUrl often lands on a web app that answers every path with its HTML page;
		// without this check the client would wait for events that never come.
		if (/html|application\/json/i.test(contentType)) {
			const text = await response.text().catch(() => "");
			throw new ProxyStreamError(`The proxy at ${url} answered ${statusLine(response.status)} with ${describeNonStreamBody(contentType, text)}, not an event stream (is proxyUrl right?)`);
		}
		if (!response.body) throw new ProxyStreamError(`The proxy at ${url} answered ${statusLine(response.status)} without a body`);

		reader = limitReply(response.body, { maxReplyBytes: options.maxReplyBytes }).getReader();
		const builder = new ProxyMessageBuilder(message);
		try {
			for await (const data of dataLines(reader, stall.touch)) {
				if (request.signal.aborted) break;
				const eventNumber = progress.events + 1;
				const proxyEvent = parseProxyEvent(data, eventNumber);
				progress.events = eventNumber;
				if (proxyEvent === undefined) continue;
				const event = builder.apply(proxyEvent, eventNumber);
				stream.push(event);
				if (event.type === "done" || event.type === "error") {
					// Anything after the terminal event must not change the message the caller now holds.
					await drainBriefly(reader);
					return;
				}
			}
		} catch (error) {
			// What the server sent, not the connection, is at fault: its message says so alone.
			if (error instanceof ArgumentsTooDeepError || error instanceof ReplyTooLargeError) throw new ProxyStreamError(error.message);
			if (error instanceof ProxyStreamError || request.signal.aborted) throw error;
			throw new ProxyStreamError(`The proxy stream broke off ${progress.where}: ${innermostReason(error)}`);
		}
		if (request.signal.aborted) throw new ProxyStreamError(abortedMessage);
		throw new ProxyStreamError(
			`The proxy stream ended without a "done" or "error" event (${progress.where}): the server closed it before the reply was complete`,
		);
	} catch (error) {
		const aborted = signal?.aborted === true;
		message.stopReason = aborted ? "aborted" : "error";
		message.errorMessage = aborted
			? abortedMessage
			: stalled
				? `The proxy stream stalled: nothing arrived for ${timeoutMs} ms ${progress.where} (timeoutMs); the request was cancelled`
				: error instanceof ProxyStreamError
					? error.message
					: `Proxy request failed: ${innermostReason(error)}`;
		stream.push({ type: "error", reason: message.stopReason, error: message });
	} finally {
		stall.stop();
		signal?.removeEventListener("abort", onAbort);
		// Stopping early (a malformed event, a server that keeps talking) must still free the connection.
		void reader?.cancel().catch(() => undefined);
	}
}

/**
 * Streams one reply through a proxy server instead of calling the provider directly: POSTs
 * `{ model, context, options }` to `<proxyUrl>/api/stream` with `Authorization: Bearer
 * <authToken>`, reads the server's event stream (each `data:` line one event, its `partial`
 * stripped) and rebuilds the message, emitting the same events a provider would. The same
 * API and wire protocol as pi-agent-core 0.73.1's `streamProxy`.
 *
 * Never throws: an unreachable proxy, an error status (its JSON `error`, text or HTML page
 * shown readably), a malformed event (named by its number), a stream that ends without
 * `done` or `error`, a stall (`timeoutMs`) and an abort (stopReason "aborted") all end the
 * stream with an `error` event, so `result()` always settles.
 *
 * @example
 * import { Agent, getModel, streamProxy } from "agentchart";
 *
 * const agent = new Agent({
 *   initialState: { model: getModel("anthropic", "claude-haiku-4-5"), systemPrompt: "Be brief.", tools: [] },
 *   streamFn: (model, context, options) =>
 *     streamProxy(model, context, { ...options, proxyUrl: "https://genai.example.com", authToken: "user-session-token" }),
 * });
 * await agent.prompt("Hello!");
 */
export function streamProxy(model: Model, context: Context, options: ProxyStreamOptions): AssistantMessageEventStream {
	const stream = new AssistantMessageEventStream();
	endOnThrow(runProxyCall(model, context, options, stream), stream, model, "streamProxy");
	return stream;
}
