import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ProgressNotificationSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { McpCallResult } from "./content.js";
import { errorMessage, isConnectionLoss } from "./errors.js";
import type { McpClientInfo, McpServerConfig, McpStdioServerConfig, McpToolInfo } from "./types.js";
import { exitReasonFromStderr } from "./stderr-summary.js";

/**
 * One MCP session: a transport (a child process, or an HTTP session) and the SDK client on
 * it, from handshake to close. A session is never reopened: after a loss the connection's
 * statechart retires it and opens a new one, so every piece of per-session state (the
 * process, the HTTP session id, the SDK's pending requests) goes away with it.
 */

/**
 * The longest timer Node supports. Requests get it as their SDK timeout: time limits are the
 * agent's (through the abort signal) and the statechart's, not the SDK's 60 s default,
 * which would cut long tool calls short.
 */
const NO_SDK_TIMEOUT_MS = 2_147_483_647;
/** How much of a server's stderr is kept for the message when it exits unexpectedly (a crash's stack included). */
const STDERR_TAIL_CHARS = 8000;
/** How long a final close waits for the server to end the HTTP session (DELETE). */
const TERMINATE_SESSION_MS = 1000;

/** What a session reports while it is watched. */
export interface SessionListener {
	/** The connection is gone (process exited, HTTP server unreachable, session unknown). */
	lost(reason: string): void;
	/** The server sent `notifications/tools/list_changed`. */
	toolsChanged(): void;
}

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

let nextSessionId = 1;

function isStdio(config: McpServerConfig): config is McpStdioServerConfig {
	return "command" in config;
}

function asRecord(value: unknown): Readonly<Record<string, unknown>> | undefined {
	return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * An MCP session over stdio or Streamable HTTP. Create it, `connect`, then list and call;
 * `close` ends it (and its process) and is safe to call any number of times.
 *
 * @example
 * const session = new McpSession("everything", { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] });
 * await session.connect(AbortSignal.timeout(30_000));
 * const tools = await session.listTools();
 * await session.close();
 */
export class McpSession {
	/** Tags the events of this session, so those of a retired one are recognised as stale. */
	readonly id = nextSessionId++;
	private readonly client: Client;
	private readonly transport: StdioClientTransport | StreamableHTTPClientTransport;
	private listener: SessionListener | undefined;
	/** Why the session was lost, once it was; reported to a listener that arrives later. */
	private lostReason: string | undefined;
	private toolsChangedPending = false;
	private closing: Promise<void> | undefined;
	private closedFully = false;
	private stderrTail = "";
	/** Progress listeners of the calls in flight, by the progress token each call sent. */
	private readonly progressRoutes = new Map<string, (progress: McpProgress) => void>();
	private progressTokens = 0;

	constructor(
		readonly server: string,
		config: McpServerConfig,
		clientInfo: McpClientInfo = { name: "agentchart", version: "0.1.0" },
	) {
		this.client = new Client(clientInfo, { capabilities: {} });
		this.transport = isStdio(config) ? this.stdioTransport(config) : this.httpTransport(config.url, config.headers);
		this.client.onclose = () => this.markLost(this.closedReason());
		this.client.onerror = (error) => {
			if (isConnectionLoss(error)) this.markLost(errorMessage(error));
		};
		// Replaces the SDK's own progress routing, which drops a call's last notification when
		// it arrives together with the result (notifications are handled a microtask later, and
		// the SDK forgets the call's handler as soon as the result is in). Here a call's route
		// lives until its caller has seen the result.
		this.client.setNotificationHandler(ProgressNotificationSchema, (notification) => {
			const { progressToken, progress, total, message } = notification.params;
			const route = this.progressRoutes.get(String(progressToken));
			if (!route) return;
			const update: McpProgress = { progress };
			if (total !== undefined) update.total = total;
			if (message !== undefined) update.message = message;
			route(update);
		});
		this.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
			if (this.listener) this.listener.toolsChanged();
			else this.toolsChangedPending = true;
		});
	}

	private stdioTransport(config: McpStdioServerConfig): StdioClientTransport {
		const transport = new StdioClientTransport({
			command: config.command,
			args: [...(config.args ?? [])],
			...(config.env ? { env: { ...config.env } } : {}),
			...(config.cwd !== undefined ? { cwd: config.cwd } : {}),
			// Always piped, so the tail can explain an unexpected exit; forwarded as configured.
			stderr: "pipe",
		});
		const forward = config.stderr ?? "inherit";
		transport.stderr?.on("data", (chunk: Buffer | string) => {
			const text = chunk.toString();
			this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_CHARS);
			if (forward === "inherit") process.stderr.write(text);
			else if (typeof forward === "function") forward(text);
		});
		return transport;
	}

	private httpTransport(url: string | URL, headers: Readonly<Record<string, string>> | undefined): StreamableHTTPClientTransport {
		return new StreamableHTTPClientTransport(new URL(url), headers ? { requestInit: { headers: { ...headers } } } : undefined);
	}

	/** The server process id (stdio), while it runs. */
	get pid(): number | undefined {
		return this.transport instanceof StdioClientTransport ? (this.transport.pid ?? undefined) : undefined;
	}

	/** True once `close()` has finished (the process, if any, has exited). */
	get isClosed(): boolean {
		return this.closedFully;
	}

	/** True once the session is closed or lost. */
	get isLost(): boolean {
		return this.lostReason !== undefined || this.closing !== undefined;
	}

	private closedReason(): string {
		if (!(this.transport instanceof StdioClientTransport)) return "the server closed the connection";
		return exitReasonFromStderr(this.stderrTail);
	}

	private markLost(reason: string): void {
		if (this.lostReason !== undefined || this.closing) return;
		this.lostReason = reason;
		this.listener?.lost(reason);
	}

	/**
	 * Starts the process or opens the HTTP session and runs the MCP handshake. On failure or
	 * abort the session is closed (its process too) before this rejects.
	 */
	async connect(signal: AbortSignal): Promise<void> {
		try {
			signal.throwIfAborted();
			await this.client.connect(this.transport, { signal, timeout: NO_SDK_TIMEOUT_MS });
		} catch (error) {
			await this.close();
			if (signal.aborted) throw new Error("connecting was cancelled", { cause: error });
			// "Connection closed" says less than why: a process that exited, with its stderr.
			throw this.lostReason !== undefined ? new Error(this.lostReason) : error;
		}
	}

	/** Every tool the server lists, following `nextCursor` through all pages. */
	async listTools(signal?: AbortSignal): Promise<McpToolInfo[]> {
		const tools: McpToolInfo[] = [];
		let cursor: string | undefined;
		do {
			const page = await this.client.listTools(cursor === undefined ? {} : { cursor }, {
				...(signal ? { signal } : {}),
				timeout: NO_SDK_TIMEOUT_MS,
			});
			for (const tool of page.tools) {
				const info: McpToolInfo = { name: tool.name, inputSchema: tool.inputSchema };
				if (tool.title !== undefined) info.title = tool.title;
				if (tool.description !== undefined) info.description = tool.description;
				const outputSchema = asRecord(tool.outputSchema);
				if (outputSchema) info.outputSchema = outputSchema;
				const annotations = asRecord(tool.annotations);
				if (annotations) info.annotations = annotations;
				if (tool.execution?.taskSupport !== undefined) info.taskSupport = tool.execution.taskSupport;
				tools.push(info);
			}
			cursor = page.nextCursor;
		} while (cursor !== undefined && !signal?.aborted);
		return tools;
	}

	/**
	 * Calls a tool. Rejects with the SDK's error when the server answers with a JSON-RPC error,
	 * when the signal aborts (the server is sent `notifications/cancelled`), or when the
	 * connection is lost meanwhile; a tool-level failure is a result with `isError`.
	 */
	async callTool(name: string, args: Readonly<Record<string, unknown>>, options: McpCallOptions = {}): Promise<McpCallResult> {
		const progressToken = options.onProgress ? `${this.id}:${++this.progressTokens}` : undefined;
		if (progressToken !== undefined && options.onProgress) this.progressRoutes.set(progressToken, options.onProgress);
		try {
			return await this.client.callTool(
				{ name, arguments: { ...args }, ...(progressToken !== undefined ? { _meta: { progressToken } } : {}) },
				undefined,
				{
					...(options.signal ? { signal: options.signal } : {}),
					timeout: options.timeoutMs ? options.timeoutMs : NO_SDK_TIMEOUT_MS,
				},
			);
		} catch (error) {
			if (isConnectionLoss(error)) this.markLost(errorMessage(error));
			throw error;
		} finally {
			if (progressToken !== undefined) this.progressRoutes.delete(progressToken);
		}
	}

	/**
	 * Reports losses and tool list changes to `listener` until the returned function is
	 * called. A loss or change that happened before (between the handshake and now) is
	 * reported at once, so none falls between "connected" and "watched".
	 */
	watch(listener: SessionListener): () => void {
		this.listener = listener;
		if (this.lostReason !== undefined) listener.lost(this.lostReason);
		else if (this.toolsChangedPending) listener.toolsChanged();
		this.toolsChangedPending = false;
		return () => {
			if (this.listener === listener) this.listener = undefined;
		};
	}

	/**
	 * Closes the session: for stdio the SDK ends the server's stdin, then sends SIGTERM and
	 * SIGKILL if it does not exit; for HTTP a live session is ended with a DELETE first.
	 * Resolves when the process has exited. The same promise is returned every time.
	 */
	close(): Promise<void> {
		this.closing ??= this.closeNow();
		return this.closing;
	}

	private async closeNow(): Promise<void> {
		this.listener = undefined;
		const transport = this.transport;
		if (transport instanceof StreamableHTTPClientTransport && this.lostReason === undefined && transport.sessionId !== undefined) {
			let timer: ReturnType<typeof setTimeout> | undefined;
			await Promise.race([
				transport.terminateSession().catch(() => undefined),
				new Promise<void>((resolve) => {
					timer = setTimeout(resolve, TERMINATE_SESSION_MS);
				}),
			]);
			clearTimeout(timer);
		}
		try {
			await this.client.close();
		} catch {
			// Closing a transport that already failed can throw; the session is gone either way.
		}
		// Idempotent; reaches the process even if the client never took the transport over.
		await transport.close().catch(() => undefined);
		this.closedFully = true;
	}
}
