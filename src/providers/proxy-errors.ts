/**
 * Readable messages for a proxy that answered something other than an event stream: its
 * error status and body (a JSON `error`, a gateway's HTML page, plain text), or the cause of a
 * failed connection.
 */
import { excerpt, htmlErrorPageMessage, htmlText, looksLikeHtml, statusLine } from "./http-error-text.js";
import { rootCauseMessage } from "../util/describe-error.js";

/**
 * The most specific reason in an error's `cause` chain: undici's "fetch failed" and
 * "terminated" say nothing alone.
 *
 * @example
 * innermostReason(new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8787"), { code: "ECONNREFUSED" }) }));
 * // "connect ECONNREFUSED 127.0.0.1:8787"
 */
export function innermostReason(error: unknown): string {
	return rootCauseMessage(error) ?? (error instanceof Error ? error.message || error.name : String(error));
}

function parseJsonOrUndefined(text: string): unknown {
	try {
		return JSON.parse(text);
	} catch {
		return undefined;
	}
}

function errorTextOf(body: unknown): string | undefined {
	if (body === null || typeof body !== "object") return undefined;
	const { error, message } = body as { error?: unknown; message?: unknown };
	if (typeof error === "string" && error !== "") return error;
	if (error !== null && typeof error === "object") {
		const inner = error as { type?: unknown; message?: unknown };
		if (typeof inner.message === "string") return typeof inner.type === "string" ? `${inner.type}: ${inner.message}` : inner.message;
	}
	return typeof message === "string" && message !== "" ? message : undefined;
}

/**
 * What an error status's body says, for the error message: the `error` of a JSON body, the
 * visible text of an HTML page, or the start of any other text.
 *
 * @example
 * describeProxyAnswer(401, "application/json", '{"error":"Invalid token"}'); // "401 Unauthorized: Invalid token"
 */
export function describeProxyAnswer(status: number, contentType: string, text: string): string {
	if (text.trim() === "") return `${statusLine(status)} (empty body)`;
	const fromJson = errorTextOf(parseJsonOrUndefined(text));
	if (fromJson) return `${statusLine(status)}: ${excerpt(fromJson, 500)}`;
	if (looksLikeHtml(contentType, text)) return htmlErrorPageMessage(status, text);
	return `${statusLine(status)}: ${excerpt(text)}`;
}

/**
 * What a successful answer that is not an event stream carries, for the error message.
 *
 * @example
 * describeNonStreamBody("text/html", "<html><body><h1>My App</h1></body></html>"); // 'an HTML page ("My App")'
 */
export function describeNonStreamBody(contentType: string, text: string): string {
	if (looksLikeHtml(contentType, text)) {
		const page = htmlText(text);
		return page ? `an HTML page ("${page}")` : "an HTML page";
	}
	const shown = errorTextOf(parseJsonOrUndefined(text)) ?? excerpt(text, 160);
	return shown ? `${contentType} (${shown})` : contentType;
}
