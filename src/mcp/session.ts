import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { McpCallOptions, McpProgress } from "./call-options.js";
import type { McpCallResult } from "./content.js";
import { errorMessage, isConnectionLoss, McpSessionClosedError } from "./errors.js";
import type { McpClientInfo, McpServerConfig, McpStdioServerConfig, McpToolInfo } from "./types.js";
import { exitReasonFromStderr } from "./stderr-summary.js";
import type { McpSdk } from "./sdk.js";
import { createStdioTransport, type StdioProcessTransport } from "./stdio-transport.js";

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

let nextSessionId = 1;

function isStdio(config: McpServerConfig): config is McpStdioServerConfig {
	return "command" in config;
}

function asRecord(value: unknown): Readonly<Record<string, unknown>> | undefined {
	return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * An MCP session over stdio or Streamable HTTP. Create it, `connect`, then list and call;
 * `close` ends it (and its process tree) and is safe to call any number of times, at any point,
 * before `connect` too.
 *
 * The SDK is passed in, loaded (`loadMcpSdk`): the session's constructor cannot wait for it.
 *
 * @example
 * const session = new McpSession("everything", { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] }, await loadMcpSdk());
 * await session.connect(AbortSignal.timeout(30_000));
 * const tools = await session.listTools();
 * await session.close();
 */
export class McpSession {
	/** Tags the events of this session, so those of a retired one are recognised as stale. */
	readonly id = nextSessionId++;
	private readonly client: Client;
	private readonly transport: StdioProcessTransport | StreamableHTTPClientTransport;
	/** The transport, when it is stdio. */
	private readonly stdio: StdioProcessTransport | undefined;
	private listener: SessionListener | undefined;
	/** Why the session was lost, once it was; reported to a listener that arrives later. */
	private lostReason: string | undefined;
	private toolsChangedPending = false;
	private closing: Promise<void> | undefined;
	/** Set before anything of the close runs: a transport may report its end synchronously from inside it. */
	private closeCalled = false;
	private closedFully = false;
	private stderrTail = "";
	/** Progress listeners of the calls in flight, by the progress token each call sent. */
	private readonly progressRoutes = new Map<string, (progress: McpProgress) => void>();
	private progressTokens = 0;
	/**
	 * One controller per request in flight (handshake, listing, call): `close()` aborts them, so
	 * their callers learn at once instead of when the server process has exited.
	 */
	private readonly requestsInFlight = new Set<AbortController>();

	constructor(
		readonly server: string,
		config: McpServerConfig,
		private readonly sdk: McpSdk,
		clientInfo: McpClientInfo = { name: "agentchart", version: "0.1.0" },
	) {
		this.client = new sdk.Client(clientInfo, { capabilities: {} });
		if (isStdio(config)) this.transport = this.stdio = this.stdioTransport(config);
		else this.transport = this.httpTransport(config.url, config.headers);
		this.client.onclose = () => this.markLost(this.closedReason());
		this.client.onerror = (error) => {
			if (this.isConnectionLoss(error)) this.markLost(errorMessage(error));
		};
		// Replaces the SDK's own progress routing, which drops a call's last notification when
		// it arrives together with the result (notifications are handled a microtask later, and
		// the SDK forgets the call's handler as soon as the result is in). Here a call's route
		// lives until its caller has seen the result.
		this.client.setNotificationHandler(sdk.ProgressNotificationSchema, (notification) => {
			const { progressToken, progress, total, message } = notification.params;
			const route = this.progressRoutes.get(String(progressToken));
			if (!route) return;
			const update: McpProgress = { progress };
			if (total !== undefined) update.total = total;
			if (message !== undefined) update.message = message;
			route(update);
		});
		this.client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => {
			if (this.listener) this.listener.toolsChanged();
			else this.toolsChangedPending = true;
		});
	}

	private stdioTransport(config: McpStdioServerConfig): StdioProcessTransport {
		const forward = config.stderr ?? "inherit";
		return createStdioTransport(this.sdk, {
			command: config.command,
			args: config.args ?? [],
			env: config.env,
			cwd: config.cwd,
			// Always piped, so the tail can explain an unexpected exit; forwarded as configured.
			onStderr: (text) => {
				this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_CHARS);
				if (forward === "inherit") process.stderr.write(text);
				else if (typeof forward === "function") forward(text);
			},
		});
	}

	private httpTransport(url: string | URL, headers: Readonly<Record<string, string>> | undefined): StreamableHTTPClientTransport {
		return new this.sdk.StreamableHTTPClientTransport(new URL(url), headers ? { requestInit: { headers: { ...headers } } } : undefined);
	}

	/** True when an error of this session's SDK means the connection is gone (see `isConnectionLoss`). */
	isConnectionLoss(error: unknown): boolean {
		return isConnectionLoss(error, this.sdk);
	}

	/** The server process id (stdio), while it runs. */
	get pid(): number | undefined {
		return this.stdio?.pid ?? undefined;
	}

	/** True once `close()` has finished (the process, if any, has exited). */
	get isClosed(): boolean {
		return this.closedFully;
	}

	/** True once the session is closed or lost. */
	get isLost(): boolean {
		return this.lostReason !== undefined || this.closeCalled;
	}

	private closedReason(): string {
		if (!this.stdio) return "the server closed the connection";
		return exitReasonFromStderr(this.stderrTail);
	}

	private markLost(reason: string): void {
		if (this.lostReason !== undefined || this.closeCalled) return;
		this.lostReason = reason;
		this.listener?.lost(reason);
	}

	/**
	 * Why a request fails because of `close()`: the application closed the session, or (when
	 * the session was lost first, and the connection is retiring it) the loss.
	 */
	private closedError(): Error {
		if (this.lostReason === undefined) return new McpSessionClosedError(this.server);
		// What the SDK says for a lost connection, so that it is recognised as one.
		return new this.sdk.McpError(this.sdk.ErrorCode.ConnectionClosed, `Connection closed: ${this.lostReason}`);
	}

	/**
	 * Runs one request (or a sequence of them) under a signal of its own, which follows `signal`
	 * and which `close()` aborts with `closedError()`, thrown here in place of the SDK's error.
	 * Refuses at once on a closed session, so nothing is started after a close.
	 */
	private async request<T>(signal: AbortSignal | undefined, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
		if (this.closeCalled) throw this.closedError();
		const controller = new AbortController();
		const follow = () => controller.abort(signal?.reason);
		if (signal?.aborted) follow();
		else signal?.addEventListener("abort", follow, { once: true });
		this.requestsInFlight.add(controller);
		try {
			return await run(controller.signal);
		} catch (error) {
			// Aborted by close(), not by the caller: the SDK would wrap the reason in an McpError
			// that says "Request timed out".
			if (controller.signal.aborted && !signal?.aborted) throw controller.signal.reason;
			throw error;
		} finally {
			signal?.removeEventListener("abort", follow);
			this.requestsInFlight.delete(controller);
		}
	}

	/**
	 * Starts the process or opens the HTTP session and runs the MCP handshake. On failure or
	 * abort the session is closed (its process too) before this rejects. When `close()` is
	 * called meanwhile (or was before), it rejects at once with an `McpSessionClosedError`.
	 */
	async connect(signal: AbortSignal): Promise<void> {
		try {
			await this.request(signal, (requestSignal) => {
				requestSignal.throwIfAborted();
				return this.client.connect(this.transport, { signal: requestSignal, timeout: NO_SDK_TIMEOUT_MS });
			});
		} catch (error) {
			// Whoever called close() waits for the process; this caller need not.
			if (error instanceof McpSessionClosedError) throw error;
			await this.close();
			if (signal.aborted) throw new Error("connecting was cancelled", { cause: error });
			// "Connection closed" says less than why: a process that exited, with its stderr.
			throw this.lostReason !== undefined ? new Error(this.lostReason) : error;
		}
	}

	/** Every tool the server lists, following `nextCursor` through all pages. */
	listTools(signal?: AbortSignal): Promise<McpToolInfo[]> {
		return this.request(signal, (requestSignal) => this.listAllTools(requestSignal));
	}

	private async listAllTools(signal: AbortSignal): Promise<McpToolInfo[]> {
		const tools: McpToolInfo[] = [];
		let cursor: string | undefined;
		do {
			const page = await this.client.listTools(cursor === undefined ? {} : { cursor }, { signal, timeout: NO_SDK_TIMEOUT_MS });
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
			// The next page's request throws if the signal was aborted meanwhile: no partial list.
		} while (cursor !== undefined);
		return tools;
	}

	/**
	 * Calls a tool. Rejects with the SDK's error when the server answers with a JSON-RPC error,
	 * when the signal aborts (the server is sent `notifications/cancelled`), or when the
	 * connection is lost meanwhile; with an `McpSessionClosedError` at once when `close()` is
	 * called meanwhile (the server is sent `notifications/cancelled` too). A tool-level failure
	 * is a result with `isError`.
	 */
	async callTool(name: string, args: Readonly<Record<string, unknown>>, options: McpCallOptions = {}): Promise<McpCallResult> {
		const progressToken = options.onProgress ? `${this.id}:${++this.progressTokens}` : undefined;
		if (progressToken !== undefined && options.onProgress) this.progressRoutes.set(progressToken, options.onProgress);
		try {
			return await this.request(options.signal, (signal) =>
				this.client.callTool({ name, arguments: { ...args }, ...(progressToken !== undefined ? { _meta: { progressToken } } : {}) }, undefined, {
					signal,
					timeout: options.timeoutMs ? options.timeoutMs : NO_SDK_TIMEOUT_MS,
				}),
			);
		} catch (error) {
			if (this.isConnectionLoss(error)) this.markLost(errorMessage(error));
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
	 * Closes the session. Requests in flight fail at once with an `McpSessionClosedError`; then,
	 * for stdio, the server's stdin is closed, and SIGTERM and SIGKILL follow (each after 2 s) to
	 * its whole process group if it does not exit (on Windows, where the SDK's transport is used,
	 * to the process it started); for HTTP a live session is ended with a DELETE first.
	 * Resolves when the server's processes have exited. The same promise is returned every time.
	 */
	close(): Promise<void> {
		this.closeCalled = true;
		this.closing ??= this.closeNow();
		return this.closing;
	}

	private async closeNow(): Promise<void> {
		this.listener = undefined;
		for (const request of this.requestsInFlight) request.abort(this.closedError());
		const transport = this.transport;
		if (transport instanceof this.sdk.StreamableHTTPClientTransport && this.lostReason === undefined && transport.sessionId !== undefined) {
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
