/**
 * What users of `agentchart/mcp` configure and see. Plain structural types only: none of
 * them mentions XState's or the MCP SDK's types, whose declarations do not compile in a
 * strict consumer without `skipLibCheck` (see `types/actor-shapes.ts`).
 */

/**
 * Who the client says it is in the MCP handshake (`clientInfo`).
 *
 * @example
 * const clientInfo: McpClientInfo = { name: "my-app", version: "1.2.0" };
 */
export interface McpClientInfo {
	name: string;
	version: string;
}

/**
 * Options every server takes, whatever its transport.
 *
 * @example
 * const options: McpServerOptions = { toolPrefix: "gh_", excludeTools: ["delete_repository"], toolTimeoutMs: 60_000 };
 */
export interface McpServerOptions {
	/**
	 * What goes before each of this server's tool names, so two servers can offer a tool of
	 * the same name. Default: the server's key and two underscores (`everything__echo`).
	 * `false` (or `""`) keeps the server's own names; a clash with another server's tool is
	 * then reported and the later tool (in `servers` order) is left out.
	 */
	toolPrefix?: string | false | undefined;
	/** Only these tools (the server's own names) are offered; default all. */
	includeTools?: readonly string[] | undefined;
	/** These tools (the server's own names) are never offered. */
	excludeTools?: readonly string[] | undefined;
	/**
	 * Time limit of one tool call, in milliseconds. Set on each tool as `timeoutMs`, so the
	 * agent enforces it (overriding its `toolTimeoutMs`) by aborting the call, which cancels
	 * the MCP request. Default: the agent's tool timeout; outside an agent, no limit.
	 */
	toolTimeoutMs?: number | undefined;
	/** Time limit of the handshake and of each tool listing, in milliseconds (default 30000; 0 means the default). */
	connectTimeoutMs?: number | undefined;
	/**
	 * Reconnection after a lost connection or a failed attempt. `false`: a lost server stays
	 * `failed` until `reconnect()` is called.
	 */
	reconnect?: McpReconnectOptions | false | undefined;
	/**
	 * When true, a server whose first connection fails does not fail `connectMcpServers`:
	 * it keeps trying in the background and its tools appear when it connects
	 * (`onToolsChanged`). Default false: a misconfigured server is an error right away.
	 */
	optional?: boolean | undefined;
}

/**
 * A server started as a child process, spoken to over its stdin and stdout.
 *
 * @example
 * const files: McpStdioServerConfig = { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"], stderr: "ignore" };
 */
export interface McpStdioServerConfig extends McpServerOptions {
	/** The program to run, e.g. `"npx"` or `process.execPath`. */
	command: string;
	/** Its arguments, e.g. `["-y", "@modelcontextprotocol/server-everything"]`. */
	args?: readonly string[] | undefined;
	/**
	 * Environment of the server process: as the MCP SDK's stdio transport does, only a safe
	 * subset of the parent's (HOME, PATH, SHELL, TERM, USER, LOGNAME) plus these.
	 */
	env?: Readonly<Record<string, string>> | undefined;
	/** Working directory of the server process. */
	cwd?: string | undefined;
	/**
	 * Where the server's stderr goes: `"inherit"` (default, this process's stderr),
	 * `"ignore"`, or a function given each chunk. The last lines are kept either way and
	 * quoted when the process exits unexpectedly.
	 */
	stderr?: "inherit" | "ignore" | ((chunk: string) => void) | undefined;
}

/**
 * A remote server spoken to over MCP's Streamable HTTP transport.
 *
 * @example
 * const remote: McpHttpServerConfig = { url: "https://mcp.example.com/mcp", headers: { Authorization: `Bearer ${token}` } };
 */
export interface McpHttpServerConfig extends McpServerOptions {
	/** The MCP endpoint, e.g. `"https://example.com/mcp"`. */
	url: string | URL;
	/** Extra headers for every request (an `Authorization` header, say). */
	headers?: Readonly<Record<string, string>> | undefined;
}

/**
 * One server: stdio when it has a `command`, Streamable HTTP when it has a `url`.
 *
 * @example
 * const servers: Record<string, McpServerConfig> = { local: { command: "my-mcp-server" }, remote: { url: "http://127.0.0.1:3001/mcp" } };
 */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/**
 * How a lost server is retried: the n-th attempt waits `initialDelayMs * 2^(n-1)`, at most
 * `maxDelayMs`, and after `maxAttempts` failed attempts in a row the server is `failed`. An attempt
 * whose server is lost within 10 seconds of being ready counts as failed (a server that crashes
 * at its first request is not restarted at the first delay for ever).
 *
 * @example
 * const reconnect: McpReconnectOptions = { initialDelayMs: 1000, maxDelayMs: 60_000, maxAttempts: 20 };
 */
export interface McpReconnectOptions {
	/** Delay before the first attempt, in milliseconds (default 500). */
	initialDelayMs?: number | undefined;
	/** Longest delay between attempts, in milliseconds (default 30000). */
	maxDelayMs?: number | undefined;
	/** Attempts in a row before giving up (default `Infinity`: keep trying). */
	maxAttempts?: number | undefined;
}

/**
 * Where a server connection is (the top-level states of its statechart):
 * - `connecting`: starting the process or opening the HTTP session, handshake, first listing;
 * - `ready`: connected; calls go through;
 * - `reconnecting`: the connection was lost or an attempt failed; waiting out the backoff;
 * - `failed`: gave up (reconnection off or attempts used up); `reconnect()` starts over;
 * - `closing`, `closed`: after `close()`.
 *
 * Calls on a server that is not `ready` fail at once with an error result.
 *
 * @example
 * const usable = (state: McpConnectionState) => state === "ready";
 */
export type McpConnectionState = "connecting" | "ready" | "reconnecting" | "failed" | "closing" | "closed";

/**
 * A server's connection status, as `status()` and `onStatusChange` report it.
 *
 * @example
 * // { server: "everything", state: "ready", refreshingTools: false, attempts: 0, toolCount: 12, listedToolCount: 13, pid: 4242 }
 * const [status] = mcp.status();
 */
export interface McpServerStatus {
	/** The server's key in `servers`. */
	server: string;
	state: McpConnectionState;
	/** True while the tool list is being fetched again after `notifications/tools/list_changed`. */
	refreshingTools: boolean;
	/** Reconnection attempts since the server was last ready for 10 seconds. */
	attempts: number;
	/** Why the last attempt failed or the connection was lost. */
	lastError?: string | undefined;
	/** How many of the server's tools `tools()` offers (after filters, schema checks and name clashes). */
	toolCount: number;
	/** How many tools the server lists; those not offered are in `problems()` or filtered out by `includeTools`/`excludeTools`. */
	listedToolCount: number;
	/** The server process id, for a connected stdio server. */
	pid?: number | undefined;
}

/**
 * A tool as the server lists it (`tools/list`), the fields agentchart reads.
 *
 * @example
 * const info: McpToolInfo = { name: "get-sum", inputSchema: { type: "object", properties: { a: { type: "number" } } } };
 */
export interface McpToolInfo {
	/** The server's own name for the tool. */
	name: string;
	title?: string | undefined;
	description?: string | undefined;
	/** The JSON Schema of the tool's arguments. */
	inputSchema: Readonly<Record<string, unknown>>;
	/** The JSON Schema of `structuredContent`, when the tool declares one. */
	outputSchema?: Readonly<Record<string, unknown>> | undefined;
	/** Hints such as `readOnlyHint`, `destructiveHint`, `title`. */
	annotations?: Readonly<Record<string, unknown>> | undefined;
	/** `"required"` for tools that only run as MCP tasks (not supported here). */
	taskSupport?: "forbidden" | "optional" | "required" | undefined;
}

/**
 * A tool's annotations as its server lists them (MCP `ToolAnnotations`): hints about what the
 * tool does, for the application to decide on, e.g., `replay` and `needsApproval`. They are the
 * server's word, not checked: trust them as much as the server. A hint the server leaves out (or
 * sends as something other than a boolean) is absent here; MCP's defaults for an absent hint are
 * `readOnlyHint: false`, `destructiveHint: true`, `idempotentHint: false`, `openWorldHint: true`.
 *
 * @example
 * const annotations: McpToolAnnotations = { title: "Read file", readOnlyHint: true, openWorldHint: false };
 */
export interface McpToolAnnotations {
	/** A human-readable title. */
	readonly title?: string;
	/** The tool does not change its environment. */
	readonly readOnlyHint?: boolean;
	/** The tool may destroy or overwrite (meaningful when not read-only). */
	readonly destructiveHint?: boolean;
	/** Calling it again with the same arguments has no further effect (meaningful when not read-only). */
	readonly idempotentHint?: boolean;
	/** The tool reaches an open world (the web, say), not a closed domain (a local store). */
	readonly openWorldHint?: boolean;
}

/**
 * Why a listed tool was left out of `tools()`.
 *
 * @example
 * // { kind: "invalid-schema", server: "faults", tool: "broken", issues: ['properties.n.type: "nubmer" is not a JSON Schema type'], message: "..." }
 * const [problem] = mcp.problems();
 */
export type McpProblem =
	| {
			kind: "invalid-schema";
			server: string;
			/** The server's name for the tool. */
			tool: string;
			/** One line per problem, from `toolSchemaIssues`. */
			issues: string[];
			message: string;
	  }
	| {
			kind: "name-collision";
			server: string;
			tool: string;
			/** The agent-facing name both tools would have had. */
			name: string;
			/** The server whose tool kept the name. */
			keptFrom: string;
			message: string;
	  }
	| { kind: "task-required"; server: string; tool: string; message: string };

/**
 * `details` of an MCP tool's result: what the model does not see but an application may
 * want (structured output, resources, audio).
 *
 * @example
 * agent.subscribe((event) => {
 *   const details = event.type === "tool_execution_end" ? (event.result as { details?: McpToolDetails }).details : undefined;
 *   if (details?.kind === "result") console.log(details.structuredContent, details.resources);
 * });
 */
export interface McpToolResultDetails {
	kind: "result";
	/** The server's key in `servers`. */
	server: string;
	/** The server's name for the tool. */
	tool: string;
	/** The result's `structuredContent`, when the tool returned one. */
	structuredContent?: Readonly<Record<string, unknown>> | undefined;
	/** Resources the result linked to or embedded, in order. */
	resources: McpResourceReference[];
	/** Audio clips of the result (models here take text and images only). */
	audio: { data: string; mimeType: string }[];
	/** The result's `_meta`, when present. */
	meta?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * A resource in a tool result: a `resource_link`, or an embedded `resource`.
 *
 * @example
 * const link: McpResourceReference = { kind: "link", uri: "file:///big.csv", name: "big.csv", mimeType: "text/csv" };
 */
export interface McpResourceReference {
	kind: "link" | "embedded";
	uri: string;
	name?: string | undefined;
	mimeType?: string | undefined;
	/** Text of an embedded text resource. */
	text?: string | undefined;
	/** Base64 data of an embedded binary resource. */
	blob?: string | undefined;
}

/**
 * `details` of a progress update (`notifications/progress` relayed to `onUpdate`).
 *
 * @example
 * const update: McpToolProgressDetails = { kind: "progress", server: "everything", tool: "trigger-long-running-operation", progress: 2, total: 5 };
 */
export interface McpToolProgressDetails {
	kind: "progress";
	server: string;
	tool: string;
	progress: number;
	total?: number | undefined;
	message?: string | undefined;
}

/**
 * What an MCP tool's `details` can be: a final result, or a progress update.
 *
 * @example
 * const isProgress = (details: McpToolDetails) => details.kind === "progress";
 */
export type McpToolDetails = McpToolResultDetails | McpToolProgressDetails;
