/**
 * Readable error messages for failed calls to OpenAI-compatible servers.
 *
 * People read these in chat transcripts and logs, and overflow detection matches on them.
 * Servers disagree on where the message of an error body lives (`error.message`, a bare
 * `error` string, a top-level `message`, FastAPI's `detail`), and a proxy in front of a
 * server answers with an HTML page; every one of these becomes `<status> <what>: <message>`.
 */
import type { OpenAISdk, CapturedErrorBody } from "./openai-client.js";
import { excerpt, htmlErrorPageMessage, looksLikeHtml, statusLine } from "./http-error-text.js";
import { describeNonSdkError, rootCauseMessage } from "../util/describe-error.js";
import { asRecord } from "../util/json-values.js";

/** The message of every aborted call, as in pi-ai. */
export const abortedMessage = "Request was aborted";

/**
 * A failure detected while reading the stream (a malformed chunk, a stall, a cut-off
 * stream, an error sent mid-stream), whose message is already meant for people.
 *
 * @example
 * throw new OpenAIStreamError("The provider's stream stalled: nothing arrived for 60000 ms after event 3 (timeoutMs)");
 */
export class OpenAIStreamError extends Error {
	override name = "OpenAIStreamError";
}

/** What an error payload says, wherever the server put it. */
interface ErrorFields {
	label?: string;
	message?: string;
	upstream?: string;
}

function stringField(record: Record<string, unknown> | undefined, key: string): string | undefined {
	const value = record?.[key];
	return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

function readErrorFields(payload: unknown): ErrorFields {
	const envelope = asRecord(payload);
	const bareError = stringField(envelope, "error");
	if (bareError) return { message: bareError };
	const inner = asRecord(envelope?.["error"]) ?? envelope;
	const detail = inner?.["detail"];
	const message =
		stringField(inner, "message") ??
		(typeof detail === "string" ? detail : undefined) ??
		(Array.isArray(detail) && detail.length > 0 ? excerpt(JSON.stringify(detail)) : undefined);
	const type = stringField(inner, "type");
	const code = stringField(inner, "code");
	const label = type && code && type !== code ? `${type} (${code})` : (type ?? code);
	// OpenRouter puts the upstream provider's own error here.
	const metadata = asRecord(inner?.["metadata"]);
	const raw = metadata?.["raw"];
	const rawText = typeof raw === "string" ? raw : raw !== undefined ? JSON.stringify(raw) : undefined;
	const providerName = stringField(metadata, "provider_name");
	const upstream = rawText ? `${providerName ?? "upstream"}: ${excerpt(rawText)}` : undefined;
	return {
		...(label ? { label } : {}),
		...(message ? { message } : {}),
		...(upstream ? { upstream } : {}),
	};
}

function formatFields(fields: ErrorFields): string | undefined {
	if (!fields.message && !fields.label) return undefined;
	const head = fields.label && fields.message ? `${fields.label}: ${fields.message}` : (fields.message ?? fields.label ?? "");
	return fields.upstream ? `${head} (${fields.upstream})` : head;
}

function parseJson(text: string): unknown {
	try {
		return JSON.parse(text);
	} catch {
		return undefined;
	}
}

function looksLikeHtmlBody(body: CapturedErrorBody): boolean {
	return looksLikeHtml(body.contentType, body.text);
}

/**
 * The message for an HTTP error response, from its status and body.
 *
 * @example
 * describeHttpError(400, { status: 400, contentType: "application/json", text: '{"error":{"message":"bad","type":"invalid_request_error"}}' });
 * // "400 invalid_request_error: bad"
 * describeHttpError(502, { status: 502, contentType: "text/html", text: "<html><h1>502 Bad Gateway</h1>nginx</html>" });
 * // '502 Bad Gateway from a proxy or gateway in front of the server (an HTML page, not the API\'s JSON): "502 Bad Gateway nginx"'
 */
export function describeHttpError(status: number, body: CapturedErrorBody | undefined): string {
	const text = body?.text ?? "";
	if (text.trim() === "") return `${statusLine(status)}: the server sent no error message`;
	if (body && looksLikeHtmlBody(body)) return htmlErrorPageMessage(status, text);
	const json = parseJson(text);
	if (json !== undefined) {
		const fields = readErrorFields(json);
		const described = formatFields(fields);
		if (described) return fields.label ? `${status} ${described}` : `${statusLine(status)}: ${described}`;
	}
	return `${statusLine(status)}: ${excerpt(text)}`;
}

/**
 * The message for an error object a server sent inside its stream (`data: {"error": ...}`
 * or `event: error`).
 *
 * @example
 * describeStreamErrorPayload({ error: { message: "Overloaded", code: "overloaded" } }); // "overloaded: Overloaded"
 */
export function describeStreamErrorPayload(payload: unknown): string {
	return formatFields(readErrorFields(payload)) ?? `The provider sent an error in its stream: ${excerpt(JSON.stringify(payload) ?? "")}`;
}


/** What the describer needs to know about the call besides the error. */
export interface ErrorContext {
	baseUrl: string;
	/** The timeout the call ran with, if set. */
	timeoutMs?: number;
	/** The last HTTP error body the client's fetch saw. */
	lastErrorBody?: CapturedErrorBody;
}

/**
 * A 404 or 405 usually means the base URL is wrong (most often a missing `/v1`), and the
 * server's own message ("not found") does not say which URL it was asked for. A 404 that names
 * a model (Ollama's `model "x" not found`) is about the model, so it gets the URL only.
 */
function withRequestForWrongPath(message: string, status: number, request: string): string {
	if (status !== 404 && status !== 405) return message;
	const hint = /\bmodel\b/i.test(message) ? "" : ": is the base URL right? OpenAI-compatible servers usually serve the API under /v1";
	return `${message} (${request}${hint})`;
}

/** The SDK's default request timeout: 10 minutes. */
const sdkDefaultTimeoutMs = 600_000;

/**
 * Turns anything a call can fail with into a one-line, human-readable message.
 *
 * @example
 * describeOpenAIError(err, sdk, { baseUrl: "http://127.0.0.1:11434/v1" });
 * // "Connection error: connect ECONNREFUSED 127.0.0.1:11434 (is the server running at http://127.0.0.1:11434/v1?)"
 */
export function describeOpenAIError(error: unknown, sdk: OpenAISdk | undefined, context: ErrorContext): string {
	if (error instanceof OpenAIStreamError) return error.message;
	if (sdk) {
		if (error instanceof sdk.APIUserAbortError) return abortedMessage;
		if (error instanceof sdk.APIConnectionTimeoutError) {
			const limit = context.timeoutMs ?? sdkDefaultTimeoutMs;
			const source = context.timeoutMs === undefined ? "the SDK's default timeout" : "timeoutMs";
			return `Request timed out: no response from ${context.baseUrl} within ${limit} ms (${source})`;
		}
		if (error instanceof sdk.APIConnectionError) {
			const cause = rootCauseMessage(error.cause);
			const hint = cause?.includes("ECONNREFUSED") ? ` (is the server running at ${context.baseUrl}?)` : "";
			return `Connection error: ${cause ?? error.message}${hint}`;
		}
		if (error instanceof sdk.APIError && typeof error.status === "number") {
			const body = context.lastErrorBody?.status === error.status ? context.lastErrorBody : undefined;
			const described = describeHttpError(error.status, body ?? { status: error.status, contentType: "", text: error.message.replace(/^\d{3}\s*/, "") });
			return withRequestForWrongPath(described, error.status, body?.request ?? `POST ${context.baseUrl.replace(/\/+$/, "")}/chat/completions`);
		}
	}
	return describeNonSdkError(error);
}
