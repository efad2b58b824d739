import { nodeBuiltin } from "./host.js";

/**
 * A readable one-line description of anything that was thrown or rejected: an `Error`'s
 * message; a string as it is; any other value shown as it is (`{ code: 42 }`, not
 * `[object Object]`), because whoever reads it (the model, in a tool result) needs its content.
 *
 * @example
 * describeError(new Error("disk full")); // "disk full"
 * describeError({ code: "EPERM", path: "/etc" }); // "{ code: 'EPERM', path: '/etc' }"
 */
export function describeError(error: unknown): string {
	if (error instanceof Error) return error.message || error.name;
	if (typeof error === "string") return error;
	const util = nodeBuiltin("node:util");
	if (util) return util.inspect(error, { depth: 4, breakLength: Number.POSITIVE_INFINITY, maxStringLength: 2_000 });
	return showWithoutNode(error);
}

/** Outside Node (a page) there is no `inspect`: JSON shows a plain value's content, `String` the rest. */
function showWithoutNode(value: unknown): string {
	try {
		const json = JSON.stringify(value);
		if (json !== undefined && json !== "{}") return json.length > 2_000 ? `${json.slice(0, 2_000)}…` : json;
	} catch {
		// A cycle or a BigInt: fall through to String.
	}
	return String(value);
}

/**
 * Walks an error's `cause` chain for the most specific low-level reason, with its code when the
 * message does not already say it (a fetch failure's "other side closed", ECONNRESET).
 *
 * @example
 * rootCauseMessage(new TypeError("fetch failed", { cause: Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }) })); // "read ECONNRESET"
 */
export function rootCauseMessage(error: unknown): string | undefined {
	let current: unknown = error;
	let found: string | undefined;
	const seen = new Set<unknown>();
	while (current !== null && typeof current === "object" && !seen.has(current)) {
		seen.add(current);
		const { cause, code, message } = current as { cause?: unknown; code?: unknown; message?: unknown };
		if (typeof message === "string" && message !== "") {
			found = typeof code === "string" && !message.includes(code) ? `${message} (${code})` : message;
		}
		current = cause;
	}
	return found;
}

/**
 * What a provider reports for an error that is none of its SDK's classes (a fetch or a body
 * read failing under it): the message, except that undici's bare "terminated" for a body cut off
 * mid-stream says that, with the cause that tells why.
 *
 * @example
 * describeNonSdkError(new TypeError("terminated", { cause: new Error("other side closed") })); // "Connection lost while streaming: other side closed"
 * describeNonSdkError(new Error("boom")); // "boom"
 */
export function describeNonSdkError(error: unknown): string {
	if (!(error instanceof Error)) return String(error);
	if (error.message !== "terminated") return error.message || error.name;
	const cause = rootCauseMessage(error.cause);
	return `Connection lost while streaming${cause && cause !== "terminated" ? `: ${cause}` : ""}`;
}
