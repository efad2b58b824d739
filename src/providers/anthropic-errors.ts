/**
 * Readable error messages for failed Anthropic calls.
 *
 * The SDK's own messages embed the raw JSON body (`400 {"type":"error","error":{...}}`).
 * People read these in chat transcripts and logs, and the compaction logic matches on them,
 * so they are rewritten to `<status> <error type>: <message>`, the shape Anthropic's error
 * documentation uses.
 */
import type { APIError } from "@anthropic-ai/sdk";
import type { AnthropicSdk } from "./anthropic-sdk.js";
import { htmlErrorPageMessage, looksLikeHtml, statusLine } from "./http-error-text.js";
import { describeNonStreamBody } from "./proxy-errors.js";
import { describeNonSdkError, rootCauseMessage } from "../util/describe-error.js";
import { nonEmptyText } from "../util/json-values.js";

/** The message of every aborted call, as in pi-ai. */
export const abortedMessage = "Request was aborted";
/** The message of a stream that stopped without `message_stop`. */
export const truncatedStreamMessage = "Anthropic stream ended before message_stop";

/**
 * The message for a reply that ended with `stop_reason: "refusal"`.
 *
 * @example
 * refusalMessage(); // 'The model refused to answer (stop_reason "refusal")'
 */
export function refusalMessage(): string {
	return 'The model refused to answer (stop_reason "refusal")';
}

/**
 * The message for a missing API key.
 *
 * @example
 * missingApiKeyMessage("anthropic"); // "No API key for provider anthropic: set ANTHROPIC_API_KEY or pass apiKey"
 */
export function missingApiKeyMessage(provider: string): string {
	return `No API key for provider ${provider}: set ${provider.toUpperCase()}_API_KEY or pass apiKey`;
}

/**
 * The message for a successful answer that was not an event stream: a web page or a JSON body
 * (a wrong `baseUrl`, a gateway's login page, a server that ignored `stream: true`), or no body
 * at all. `text` is the body (or its start), undefined when there was none.
 *
 * @example
 * notAnEventStreamMessage("https://gw.example.com", 200, "text/html", "<html><body><h1>Sign in</h1></body></html>");
 * // 'The server at https://gw.example.com answered 200 OK with an HTML page ("Sign in") instead of Anthropic\'s event stream (is the model\'s baseUrl right?)'
 */
export function notAnEventStreamMessage(baseUrl: string, status: number, contentType: string, text: string | undefined): string {
	const what =
		text === undefined ? "without a body" : text.trim() === "" ? "with an empty body" : `with ${describeNonStreamBody(contentType || "a body without a content type", text)}`;
	return `The server at ${baseUrl} answered ${statusLine(status)} ${what} instead of Anthropic's event stream (is the model's baseUrl right?)`;
}

interface ErrorBody {
	type?: unknown | undefined;
	message?: unknown | undefined;
}

/** Finds `{type, message}` in an error body, which is either the envelope or the inner object. */
function errorBodyOf(error: unknown): ErrorBody | undefined {
	if (error === null || typeof error !== "object") return undefined;
	const envelope = error as { error?: unknown };
	if (envelope.error !== null && typeof envelope.error === "object") return envelope.error as ErrorBody;
	return error as ErrorBody;
}

function describeApiError(error: APIError): string {
	const body = errorBodyOf(error.error);
	// The SDK passes the server's JSON through unchecked: an object there read as "[object Object]".
	const type = nonEmptyText(error.type) ?? nonEmptyText(body?.type);
	const message = nonEmptyText(error.apiMessage) ?? nonEmptyText(body?.message);
	const status = error.status;
	let detail: string;
	if (type && message) detail = `${type}: ${message}`;
	else if (message) detail = message;
	// A type alone (an error event whose data was some other event, "message_start") says little: said so.
	else if (type) detail = status ? type : `Anthropic's stream sent an error event without a message (type ${JSON.stringify(type)})`;
	else {
		// A body that is not JSON (a proxy's HTML page, say) ends up in the SDK's message after the status.
		const text = status ? error.message.replace(new RegExp(`^${status}\\s*`), "") : error.message;
		const contentType = error.headers?.get("content-type") ?? "";
		if (status && looksLikeHtml(contentType, text)) return htmlErrorPageMessage(status, text);
		detail = firstLine(text.replace(/\s+/g, " ")) || "status code (no body)";
		// Mid-stream (no status), what is left is the error event's data as it came ("null", "message_start").
		return status ? `${statusLine(status)}: ${detail}` : `Anthropic's stream sent an error event without a type or message: ${detail}`;
	}
	return status ? `${status} ${detail}` : detail;
}

function firstLine(text: string): string {
	const line = text.trim().split("\n")[0] ?? "";
	return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}


/**
 * Turns anything a call can fail with into a one-line, human-readable message.
 *
 * @example
 * describeAnthropicError(err, sdk); // "529 overloaded_error: Overloaded"
 * describeAnthropicError(midStreamError, sdk); // "overloaded_error: Overloaded"
 */
export function describeAnthropicError(error: unknown, sdk: AnthropicSdk | undefined): string {
	// Without the SDK (its import failed, or the call failed before it), no error is one of its classes.
	if (sdk) {
		if (error instanceof sdk.APIUserAbortError) return abortedMessage;
		if (error instanceof sdk.APIConnectionTimeoutError) return "Request timed out";
		if (error instanceof sdk.APIConnectionError) {
			const cause = rootCauseMessage(error.cause);
			return cause ? `Connection error: ${cause}` : "Connection error";
		}
		if (error instanceof sdk.APIError) return describeApiError(error);
	}
	return describeNonSdkError(error);
}
