/**
 * Wording shared by the providers' error messages: what a person reads in a transcript or a
 * log when a call failed for a reason outside the model (a proxy's error page, a cut body).
 */
import { nodeBuiltin } from "../util/host.js";

// The phrases of the statuses model APIs answer with, for where Node's table is missing (a page).
const COMMON_STATUS_PHRASES: Readonly<Record<number, string>> = {
	400: "Bad Request",
	401: "Unauthorized",
	403: "Forbidden",
	404: "Not Found",
	405: "Method Not Allowed",
	408: "Request Timeout",
	409: "Conflict",
	413: "Payload Too Large",
	422: "Unprocessable Entity",
	429: "Too Many Requests",
	500: "Internal Server Error",
	501: "Not Implemented",
	502: "Bad Gateway",
	503: "Service Unavailable",
	504: "Gateway Timeout",
};

/**
 * A status code with its reason phrase.
 *
 * @example
 * statusLine(502); // "502 Bad Gateway"
 */
export function statusLine(status: number): string {
	const phrase = status === 529 ? "Overloaded" : (nodeBuiltin("node:http")?.STATUS_CODES[status] ?? COMMON_STATUS_PHRASES[status]);
	return `${status} ${phrase ?? "Error"}`;
}

/**
 * Shortens text for a one-line message: whitespace collapsed, cut at `max` characters.
 *
 * @example
 * excerpt("a\n\n  b", 10); // "a b"
 */
export function excerpt(text: string, max = 200): string {
	const line = text.replace(/\s+/g, " ").trim();
	return line.length > max ? `${line.slice(0, max)}…` : line;
}

/**
 * True for an HTML page (by content type or by how the body starts).
 *
 * @example
 * looksLikeHtml("text/html; charset=utf-8", ""); // true
 */
export function looksLikeHtml(contentType: string, text: string): boolean {
	return /html/i.test(contentType) || /^\s*<(?:!doctype|html|head|body|\?xml|center|h1)/i.test(text);
}

/**
 * The visible text of an HTML page, shortened: what a person would read on it.
 *
 * @example
 * htmlText("<html><head><title>t</title></head><body><h1>502 Bad Gateway</h1></body></html>"); // "502 Bad Gateway"
 */
export function htmlText(html: string): string {
	const withoutHead = html.replace(/<(head|script|style)\b[\s\S]*?<\/\1>/gi, " ");
	const text = withoutHead.replace(/<[^>]*>/g, " ").replace(/&nbsp;/g, " ").replace(/&amp;/g, "&");
	const visible = excerpt(text, 160);
	if (visible) return visible;
	const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
	return title ? excerpt(title, 160) : "";
}

/**
 * The message for an HTTP error answered with an HTML page instead of the API's JSON: a
 * proxy, load balancer or gateway in front of the API answered.
 *
 * @example
 * htmlErrorPageMessage(502, "<html><h1>502 Bad Gateway</h1>nginx</html>");
 * // '502 Bad Gateway from a proxy or gateway in front of the server (an HTML page, not the API\'s JSON): "502 Bad Gateway nginx"'
 */
export function htmlErrorPageMessage(status: number, html: string): string {
	const page = htmlText(html);
	return `${statusLine(status)} from a proxy or gateway in front of the server (an HTML page, not the API's JSON)${page ? `: "${page}"` : ""}`;
}
