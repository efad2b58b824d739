import { McpConnection, type McpConnectionActor } from "./connection.js";
import { toolPrefixFor } from "./names.js";
import { McpToolCatalog, type CatalogResult, type CatalogSource } from "./tool-catalog.js";
import type { McpAgentTool } from "./tool-adapter.js";
import type { McpClientInfo, McpProblem, McpServerConfig, McpServerStatus } from "./types.js";
import { loadMcpSdk } from "./sdk.js";
import { shown, unknownKeys } from "../agent-input.js";

/**
 * Options of {@link connectMcpServers}.
 *
 * @example
 * const options: ConnectMcpServersOptions = {
 *   servers: { files: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."] } },
 *   clientInfo: { name: "my-app", version: "1.2.0" },
 *   onProblem: (problem) => log.warn(problem.message),
 * };
 */
export interface ConnectMcpServersOptions {
	/**
	 * The servers by name. The name is how status, problems and (by default) tool names
	 * refer to the server; the order is the order of their tools.
	 */
	servers: Readonly<Record<string, McpServerConfig>>;
	/** Who the client says it is in the MCP handshake (default `agentchart`). */
	clientInfo?: McpClientInfo | undefined;
	/**
	 * Called for each tool left out of `tools()` (broken schema, name taken, task-only), once
	 * per problem. Default: `console.warn` with the problem's message.
	 */
	onProblem?: ((problem: McpProblem) => void) | undefined;
	/**
	 * Gives up connecting: when it aborts before `connectMcpServers` resolved, every connection is
	 * closed and every server process it started has ended before the promise rejects with the
	 * signal's reason. Once connected, the signal is no longer read: `close()` ends the servers.
	 *
	 * @example
	 * const mcp = await connectMcpServers({ servers, signal: AbortSignal.timeout(10_000) });
	 */
	signal?: AbortSignal | undefined;
}

/**
 * Connected MCP servers: their tools as `AgentTool`s, their status, and `close()`.
 *
 * @example
 * const mcp = await connectMcpServers({ servers: { everything: { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] } } });
 * const agent = new Agent({ initialState: { tools: mcp.tools() } });
 * mcp.onToolsChanged((tools) => { agent.state.tools = tools; });
 * // ...
 * await mcp.close();
 */
export interface McpServers {
	/**
	 * The tools of every server, in `servers` order, named as configured (`<server>__<tool>`
	 * by default). A new array each call. A reconnecting server's tools stay listed, and
	 * fail at once when called.
	 *
	 * @example
	 * const agent = new Agent({ initialState: { tools: [...myTools, ...mcp.tools()] } });
	 */
	tools(): McpAgentTool[];
	/**
	 * Each server's connection status, in `servers` order.
	 *
	 * @example
	 * for (const { server, state, lastError } of mcp.status()) console.log(server, state, lastError ?? "");
	 */
	status(): McpServerStatus[];
	/**
	 * Why listed tools were left out of `tools()`, as of now.
	 *
	 * @example
	 * mcp.problems().filter((problem) => problem.kind === "invalid-schema").map((problem) => problem.tool);
	 */
	problems(): McpProblem[];
	/**
	 * Calls `listener` with the new `tools()` whenever it changes (a server's
	 * `notifications/tools/list_changed`, an optional server connecting late). Returns a
	 * function that removes the listener.
	 *
	 * @example
	 * const stop = mcp.onToolsChanged((tools) => { agent.state.tools = [...myTools, ...tools]; });
	 */
	onToolsChanged(listener: (tools: McpAgentTool[]) => void): () => void;
	/**
	 * Calls `listener` with a server's status whenever it changes. Returns a function that removes it.
	 *
	 * @example
	 * mcp.onStatusChange(({ server, state, lastError }) => console.log(`${server}: ${state}`, lastError ?? ""));
	 */
	onStatusChange(listener: (status: McpServerStatus) => void): () => void;
	/**
	 * Tries to connect a server now: one that is `failed`, or one waiting out a backoff delay.
	 *
	 * @example
	 * if (mcp.status().some(({ state }) => state === "failed")) mcp.reconnect("docs");
	 */
	reconnect(server: string): void;
	/**
	 * The actor of a server's connection statechart, to inspect or subscribe to.
	 *
	 * @example
	 * mcp.actorOf("everything")?.subscribe((snapshot) => console.log(snapshot.value));
	 */
	actorOf(server: string): McpConnectionActor | undefined;
	/**
	 * Closes every connection and ends every server process (for stdio, the server's whole
	 * process group on Linux and macOS); resolves when they have exited. Tool calls in flight
	 * fail at once, saying the application closed the server, and tools called afterwards fail
	 * at once too. Calling it again returns the same promise.
	 *
	 * @example
	 * process.on("SIGINT", () => void mcp.close().then(() => process.exit(130)));
	 */
	close(): Promise<void>;
	/**
	 * The same as `close()`.
	 *
	 * @example
	 * await mcp.dispose();
	 */
	dispose(): Promise<void>;
}

interface ServerEntry {
	connection: McpConnection;
	config: McpServerConfig;
	lastStatus: string;
	lastTools: unknown;
}

/** Every option of {@link ConnectMcpServersOptions} (the type makes the list whole). */
const CONNECT_OPTIONS = Object.keys({ servers: true, clientInfo: true, onProblem: true, signal: true } satisfies Record<keyof ConnectMcpServersOptions, true>);

/**
 * The options around the servers. One it does not take is refused: a misspelt `onProblems` would
 * leave problems to the default `console.warn`. (A server's own configuration may carry keys of
 * other tools' files, which are left alone.)
 */
function checkConnectOptions(options: ConnectMcpServersOptions): void {
	if (typeof options !== "object" || options === null) throw new TypeError(`connectMcpServers: options must be an object such as { servers: { name: { command, args } } }, got ${shown(options)}`);
	const unknown = unknownKeys(options, CONNECT_OPTIONS);
	if (unknown !== undefined) {
		// The shape of Claude Desktop's and Cursor's configuration files, passed whole.
		const hint = "mcpServers" in options ? `; a configuration file's "mcpServers" goes in as servers: connectMcpServers({ servers: file.mcpServers })` : "";
		throw new TypeError(`connectMcpServers: no option ${unknown} (its options: ${CONNECT_OPTIONS.join(", ")})${hint}`);
	}
	const servers: unknown = options.servers;
	if (typeof servers !== "object" || servers === null || Array.isArray(servers)) throw new TypeError(`connectMcpServers: servers must be an object of server configurations by name, got ${shown(servers)}`);
	if (options.onProblem !== undefined && typeof options.onProblem !== "function") throw new TypeError(`connectMcpServers: onProblem must be a function, got ${shown(options.onProblem)}`);
}

function assertServerConfig(name: string, config: McpServerConfig): void {
	if (name === "") throw new TypeError("connectMcpServers: a server name must not be empty");
	// A JSON file's `null` or a string where the configuration belongs: named, not "Cannot use 'in' operator".
	if (typeof config !== "object" || config === null || Array.isArray(config)) throw new TypeError(`connectMcpServers: server "${name}" must be a configuration object ({ command, args } or { url }), got ${shown(config)}`);
	const hasCommand = "command" in config && typeof config.command === "string" && config.command !== "";
	const hasUrl = "url" in config && config.url !== undefined && String(config.url) !== "";
	if (hasCommand === hasUrl) {
		throw new TypeError(`connectMcpServers: server "${name}" needs either a command (stdio) or a url (Streamable HTTP)`);
	}
	// Configurations are often read from JSON files, unchecked: a string here was spread into its
	// letters, one argument each, and a URL without its scheme failed later as "fetch failed (unknown scheme)".
	const args: unknown = "args" in config ? config.args : undefined;
	if (args !== undefined && (!Array.isArray(args) || args.some((arg) => typeof arg !== "string"))) {
		throw new TypeError(`connectMcpServers: server "${name}": args must be a list of strings, got ${shown(args)}`);
	}
	if (hasUrl && "url" in config) {
		const url = String(config.url);
		if (!/^https?:\/\//i.test(url.trim())) {
			// Suggested only for what reads as a host (with a port or a path): "not a url" is none.
			const hint = /^[\w.-]+(?::\d+)?(?:\/\S*)?$/.test(url.trim()) ? `: use http://${url.trim()}` : "";
			throw new TypeError(`connectMcpServers: server "${name}": url must be an http:// or https:// URL, got ${JSON.stringify(url)}${hint}`);
		}
	}
}

function sameTools(a: readonly McpAgentTool[], b: readonly McpAgentTool[]): boolean {
	return a.length === b.length && a.every((tool, index) => tool === b[index]);
}

function report(listener: () => void): void {
	try {
		listener();
	} catch (error) {
		console.error("agentchart/mcp: a listener threw", error);
	}
}

class ConnectedMcpServers implements McpServers {
	private readonly entries = new Map<string, ServerEntry>();
	private readonly catalog = new McpToolCatalog();
	private current: CatalogResult = { tools: [], problems: [], offered: new Map() };
	private readonly reported = new Set<string>();
	private readonly toolListeners = new Set<(tools: McpAgentTool[]) => void>();
	private readonly statusListeners = new Set<(status: McpServerStatus) => void>();
	private closing: Promise<void> | undefined;

	constructor(private readonly options: ConnectMcpServersOptions) {
		for (const [name, config] of Object.entries(options.servers)) {
			assertServerConfig(name, config);
			let connection: McpConnection;
			try {
				connection = new McpConnection(name, config, options.clientInfo);
			} catch (error) {
				// The settings' own message cannot say which server of several it is about.
				if (error instanceof TypeError) throw new TypeError(`connectMcpServers: server "${name}": ${error.message.replace(/^MCP server options: /, "")}`);
				throw error;
			}
			const entry: ServerEntry = { connection, config, lastStatus: "", lastTools: undefined };
			this.entries.set(name, entry);
			connection.subscribe(() => this.onConnectionChange(entry));
		}
	}

	async start(signal: AbortSignal | undefined): Promise<void> {
		// Nothing started yet, so nothing to end (an actor never started would not take `close`).
		signal?.throwIfAborted();
		for (const { connection } of this.entries.values()) connection.start();
		const connected = Promise.all([...this.entries.values()].map(({ connection }) => connection.firstOutcome()));
		if (signal) {
			let onAbort = (): void => {};
			const aborted = new Promise<"aborted">((resolve) => {
				onAbort = () => resolve("aborted");
				signal.addEventListener("abort", onAbort, { once: true });
			});
			try {
				if ((await Promise.race([connected, aborted])) === "aborted") {
					// The processes end before the caller hears of it: a caller that gave up may exit next.
					await this.close();
					throw signal.reason;
				}
			} finally {
				signal.removeEventListener("abort", onAbort);
			}
		} else await connected;
		const unreachable = [...this.entries.values()].filter(({ connection, config }) => !config.optional && connection.status().state !== "ready");
		if (unreachable.length > 0) {
			await this.close();
			const lines = unreachable.map(({ connection }) => {
				const status = connection.status();
				return `  - "${status.server}": ${status.lastError ?? status.state}`;
			});
			throw new Error(`connectMcpServers: could not connect to ${unreachable.length === 1 ? "an MCP server" : "MCP servers"}:\n${lines.join("\n")}`);
		}
		this.rebuild();
	}

	private onConnectionChange(entry: ServerEntry): void {
		// Rebuilt first, so the status reports the tools that are offered now.
		if (entry.connection.tools !== entry.lastTools) this.rebuild();
		const status = this.statusOf(entry.connection);
		const statusKey = JSON.stringify(status);
		if (statusKey !== entry.lastStatus) {
			entry.lastStatus = statusKey;
			for (const listener of this.statusListeners) report(() => listener(status));
		}
	}

	/** A connection's status, counting the tools `tools()` offers from it. */
	private statusOf(connection: McpConnection): McpServerStatus {
		const status = connection.status();
		status.toolCount = this.current.offered.get(connection.server) ?? 0;
		return status;
	}

	private rebuild(): void {
		const sources: CatalogSource[] = [];
		for (const entry of this.entries.values()) {
			entry.lastTools = entry.connection.tools;
			const { config, connection } = entry;
			sources.push({
				caller: connection,
				prefix: toolPrefixFor(connection.server, config.toolPrefix),
				includeTools: config.includeTools,
				excludeTools: config.excludeTools,
				timeoutMs: config.toolTimeoutMs,
				tools: connection.tools,
			});
		}
		const previous = this.current.tools;
		this.current = this.catalog.build(sources);
		for (const problem of this.current.problems) {
			if (this.reported.has(problem.message)) continue;
			this.reported.add(problem.message);
			const onProblem = this.options.onProblem ?? ((found: McpProblem) => console.warn(`agentchart/mcp: ${found.message}`));
			report(() => onProblem(problem));
		}
		if (!sameTools(previous, this.current.tools)) {
			const tools = this.current.tools;
			for (const listener of this.toolListeners) report(() => listener([...tools]));
		}
	}

	tools(): McpAgentTool[] {
		return [...this.current.tools];
	}

	status(): McpServerStatus[] {
		return [...this.entries.values()].map(({ connection }) => this.statusOf(connection));
	}

	problems(): McpProblem[] {
		return [...this.current.problems];
	}

	onToolsChanged(listener: (tools: McpAgentTool[]) => void): () => void {
		this.toolListeners.add(listener);
		return () => this.toolListeners.delete(listener);
	}

	onStatusChange(listener: (status: McpServerStatus) => void): () => void {
		this.statusListeners.add(listener);
		return () => this.statusListeners.delete(listener);
	}

	reconnect(server: string): void {
		const entry = this.entries.get(server);
		if (!entry) throw new Error(`MCP server "${server}" is not configured`);
		entry.connection.reconnect();
	}

	actorOf(server: string): McpConnectionActor | undefined {
		return this.entries.get(server)?.connection.publicActor;
	}

	close(): Promise<void> {
		this.closing ??= Promise.all([...this.entries.values()].map(({ connection }) => connection.close())).then(() => undefined);
		return this.closing;
	}

	dispose(): Promise<void> {
		return this.close();
	}
}

/**
 * Connects to MCP servers (stdio child processes, or Streamable HTTP endpoints) and offers
 * their tools as `AgentTool`s. Resolves once every server is connected and its tools
 * listed; rejects, after closing the others, if a server that is not `optional` fails its
 * first attempt. Each connection then runs on its own: it reconnects with backoff when lost,
 * follows `notifications/tools/list_changed`, and ends with `close()`.
 *
 * @example
 * import { Agent } from "agentchart";
 * import { connectMcpServers } from "agentchart/mcp";
 *
 * const mcp = await connectMcpServers({
 *   servers: {
 *     everything: { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] },
 *     docs: { url: "https://example.com/mcp", headers: { Authorization: "Bearer …" }, optional: true },
 *   },
 * });
 * const agent = new Agent({ initialState: { tools: mcp.tools() } });
 * mcp.onToolsChanged((tools) => { agent.state.tools = tools; });
 * await agent.prompt("Add 2 and 3 with the everything__get-sum tool");
 * await mcp.close();
 */
export async function connectMcpServers(options: ConnectMcpServersOptions): Promise<McpServers> {
	checkConnectOptions(options);
	const signal: unknown = options.signal;
	if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError(`connectMcpServers: signal must be an AbortSignal, got ${shown(signal)}`);
	const servers = new ConnectedMcpServers(options);
	// Before any connection starts: without the SDK this rejects once, saying what to install,
	// rather than with one "could not connect" line per server and the reason lost in a string.
	await loadMcpSdk();
	await servers.start(signal);
	return servers;
}
