/**
 * The options of one MCP tool call, apart from the session that makes it: the public
 * declarations (the tools, the connection) name them, and must not reach the session's, which
 * name the SDK's types (an optional peer, whose declarations need DOM types).
 */

/** A progress notification for a call. */
export interface McpProgress {
	progress: number;
	total?: number | undefined;
	message?: string | undefined;
}

/** Options of one `tools/call`. */
export interface McpCallOptions {
	/** Cancels the request (`notifications/cancelled` is sent to the server). */
	signal?: AbortSignal | undefined;
	/** Time limit in milliseconds; none when undefined or 0. */
	timeoutMs?: number | undefined;
	/** Asks the server for progress notifications and receives them. */
	onProgress?: ((progress: McpProgress) => void) | undefined;
}
