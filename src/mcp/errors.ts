import type { McpSdk } from "./sdk.js";

/**
 * Which errors mean the connection to a server is gone, rather than one request failing.
 * stdio makes this easy (the process exits and the transport closes), but Streamable HTTP
 * has no connection to lose: a dead server shows up as a failed fetch or a broken event
 * stream, and a restarted one as a 404 for the old session id. The MCP SDK reports these as
 * plain errors, so they are recognised by their codes and, where it has no code, by message.
 */

const LOST_CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ENOTCONN", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);
const LOST_CONNECTION_MESSAGES = [
	"SSE stream disconnected",
	"Maximum reconnection attempts",
	"Failed to reconnect SSE stream",
	"fetch failed",
	"socket hang up",
	"other side closed",
	"Not connected",
];

/**
 * The message of anything thrown, with its cause's when that adds something: Node's fetch
 * says only "fetch failed", and the reason ("connect ECONNREFUSED 127.0.0.1:3000") is in
 * its cause.
 *
 * @example
 * errorMessage(new Error("boom")); // "boom"
 * errorMessage(new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED") })); // "fetch failed (connect ECONNREFUSED)"
 */
export function errorMessage(error: unknown): string {
	if (!(error instanceof Error)) return String(error);
	const cause = error.cause instanceof Error ? error.cause.message : undefined;
	return cause && !error.message.includes(cause) ? `${error.message} (${cause})` : error.message;
}

function codeOf(error: unknown): unknown {
	return typeof error === "object" && error !== null && "code" in error ? error.code : undefined;
}

/**
 * True when an error from the MCP SDK means the session is unusable and must be opened again.
 * `sdk` is the loaded SDK (see `loadMcpSdk`), whose error classes are recognised.
 *
 * @example
 * const sdk = await loadMcpSdk();
 * isConnectionLoss(new sdk.McpError(sdk.ErrorCode.ConnectionClosed, "Connection closed"), sdk); // true
 * isConnectionLoss(new sdk.McpError(sdk.ErrorCode.InvalidParams, "bad arguments"), sdk);          // false
 */
export function isConnectionLoss(error: unknown, sdk: Pick<McpSdk, "ErrorCode" | "McpError" | "StreamableHTTPError">): boolean {
	// -32000 is also in JSON-RPC's range for servers' own errors: only the SDK's own close counts.
	if (error instanceof sdk.McpError) return error.code === sdk.ErrorCode.ConnectionClosed && error.message.includes("Connection closed");
	// The server no longer knows the session id: it restarted, or expired the session.
	if (error instanceof sdk.StreamableHTTPError) return error.code === 404;
	for (let cause: unknown = error, depth = 0; cause !== undefined && cause !== null && depth < 4; depth++) {
		const code = codeOf(cause);
		if (typeof code === "string" && LOST_CONNECTION_CODES.has(code)) return true;
		const message = errorMessage(cause);
		if (LOST_CONNECTION_MESSAGES.some((fragment) => message.includes(fragment))) return true;
		cause = cause instanceof Error ? cause.cause : undefined;
	}
	return false;
}

/**
 * Why a request of a session failed when the application closed the session while it was in
 * flight (or before it was made). It is thrown at once, not once the server has exited: ending a
 * server that ignores the end of its input and SIGTERM takes seconds. Whether the server ran a
 * tool call it had received is unknown.
 *
 * @example
 * const call = session.callTool("slow", {});
 * void session.close();
 * await call.catch((error) => error instanceof McpSessionClosedError); // true
 */
export class McpSessionClosedError extends Error {
	override readonly name = "McpSessionClosedError";

	constructor(readonly server: string) {
		super(`the MCP session with server "${server}" was closed by the application (close() was called)`);
	}
}
