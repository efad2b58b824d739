import { LONGEST_DELAY } from "../util/deadlines.js";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { McpCallOptions, McpProgress } from "./call-options.js";
import type { McpCallResult } from "./content.js";
import { errorMessage, isConnectionLoss, McpSessionClosedError } from "./errors.js";
import type { McpClientInfo, McpServerConfig, McpStdioServerConfig, McpToolInfo } from "./types.js";
import { exitReasonFromStderr } from "./stderr-summary.js";
import { excerpt, htmlText, looksLikeHtml, statusLine } from "../providers/http-error-text.js";
import { readableSchemaError } from "./invalid-response.js";
import type { McpSdk } from "./sdk.js";
import { createStdioTransport, type StdioProcessTransport } from "./stdio-transport.js";
import { asRecord } from "../util/json-values.js";
import { answerWatchingFetch } from "./unanswered-requests.js";

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
const NO_SDK_TIMEOUT_MS = LONGEST_DELAY;
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

/**
 * One entry of a `tools/list` answer, read defensively. An entry without a name cannot be
 * called or reported, and is skipped; an input schema that is not an object is kept as it is,
 * so that the catalog's schema check leaves the tool out and says why.
 */
function toolInfo(entry: unknown): McpToolInfo | undefined {
	const tool = asRecord(entry);
	const name = tool?.["name"];
	if (!tool || typeof name !== "string" || name === "") return undefined;
	// Cast, not checked: a schema that is not an object reaches `toolSchemaIssues` as it came, to be reported.
	const info: McpToolInfo = { name, inputSchema: tool["inputSchema"] as McpToolInfo["inputSchema"] };
	const title = tool["title"];
	if (typeof title === "string") info.title = title;
	const description = tool["description"];
	if (typeof description === "string") info.description = description;
	const outputSchema = asRecord(tool["outputSchema"]);
	if (outputSchema) info.outputSchema = outputSchema;
	const annotations = asRecord(tool["annotations"]);
	if (annotations) info.annotations = annotations;
	const taskSupport = asRecord(tool["execution"])?.["taskSupport"];
	if (taskSupport === "forbidden" || taskSupport === "optional" || taskSupport === "required") info.taskSupport = taskSupport;
	return info;
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
	/** The endpoint of an HTTP server, without query or credentials: named in its HTTP errors. */
	private readonly url: string | undefined;

	constructor(
		readonly server: string,
		config: McpServerConfig,
		private readonly sdk: McpSdk,
		clientInfo: McpClientInfo = { name: "agentchart", version: "0.1.0" },
	) {
		this.client = new sdk.Client(clientInfo, { capabilities: {} });
		if (isStdio(config)) this.transport = this.stdio = this.stdioTransport(config);
		else {
			// Origin and path only: a key in the query string or the userinfo must not reach a log.
			const url = new URL(config.url);
			this.url = `${url.origin}${url.pathname}`;
			this.transport = this.httpTransport(config.url, config.headers);
		}
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
		const fetch = answerWatchingFetch((id, why) => this.unanswered(id, why));
		return new this.sdk.StreamableHTTPClientTransport(new URL(url), { ...(headers ? { requestInit: { headers: { ...headers } } } : {}), fetch });
	}

	/**
	 * A request the server will not answer (see unanswered-requests.ts): the SDK waits for an
	 * answer by the request's id, so this one, an error, says why none will come.
	 */
	private unanswered(id: string | number, why: string): void {
		const message = `the server ${why}; whether a tool it was asked to call ran is unknown`;
		this.transport.onmessage?.({ jsonrpc: "2.0", id, error: { code: this.sdk.ErrorCode.InternalError, message } });
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
		// The transport ended the server itself: its stderr would only say it was killed.
		return this.stdio.failure ?? exitReasonFromStderr(this.stderrTail);
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
			// "Connection closed" says less than why: a process that exited, with its stderr. Only
			// then: the SDK closes the transport itself when the handshake fails, which marks the
			// session lost too, and that generic reason must not hide the error (a 401 for a bad
			// token, a proxy's 502 page).
			if (error instanceof this.sdk.StreamableHTTPError) throw this.readableError(error);
			if (this.lostReason !== undefined && this.isConnectionLoss(error)) throw new Error(this.lostReason);
			throw error;
		}
	}

	/**
	 * An HTTP status the server answered a request with, as a person reads it (`401
	 * Unauthorized from http://…: {"error":"invalid_token"}`, or a gateway's HTML page by its
	 * visible text) rather than the SDK's `Streamable HTTP error: Error POSTing to endpoint: <body>`.
	 */
	private readableError(error: InstanceType<McpSdk["StreamableHTTPError"]>): Error {
		if (typeof error.code !== "number" || error.code < 400) return error;
		const prefix = "Error POSTing to endpoint: ";
		const at = error.message.indexOf(prefix);
		const body = at === -1 ? "" : error.message.slice(at + prefix.length);
		// No `cause`: `errorMessage` would quote the SDK's message, body and all, a second time.
		const status = `${statusLine(error.code)}${this.url ? ` from ${this.url}` : ""}`;
		if (looksLikeHtml("", body)) return new Error(`${status}: an HTML page, not MCP's JSON (a proxy or gateway in front of the server?): "${htmlText(body)}"`);
		return new Error(`${status}${body ? `: ${excerpt(body, 500)}` : ""}`);
	}

	/**
	 * Every tool the server lists, following `nextCursor` through all pages. Each page is a
	 * request of its own (the SDK leaves an abort listener on a request's signal for good, so one
	 * signal for all pages would collect one listener a page), and a cursor the server sent before
	 * ends the listing with an error rather than looping until the time limit.
	 */
	async listTools(signal?: AbortSignal): Promise<McpToolInfo[]> {
		const tools: McpToolInfo[] = [];
		const cursors = new Set<string>();
		let cursor: string | undefined;
		do {
			const params = cursor === undefined ? {} : { cursor };
			// The SDK's ResultSchema, not ListToolsResultSchema: one malformed tool (an input schema
			// whose type is not "object", an output schema Ajv cannot compile) would otherwise fail
			// the whole listing, and with it the connection. Each entry is read here instead, and a
			// tool with a bad schema is left out and reported by the catalog.
			const page = await this.request(signal, (requestSignal) =>
				this.client.request({ method: "tools/list", params }, this.sdk.ResultSchema, { signal: requestSignal, timeout: NO_SDK_TIMEOUT_MS }),
			);
			const listed = page["tools"];
			if (!Array.isArray(listed)) throw new Error(`the server's tools/list answer has no list of tools (tools: ${excerpt(JSON.stringify(listed) ?? "undefined", 80)})`);
			for (const entry of listed) {
				const info = toolInfo(entry);
				if (info) tools.push(info);
			}
			const next = page["nextCursor"];
			cursor = typeof next === "string" ? next : undefined;
			if (cursor !== undefined) {
				if (cursors.has(cursor)) throw new Error(`the server's tool listing does not end: it sent the cursor ${JSON.stringify(cursor)} a second time`);
				cursors.add(cursor);
			}
			// The next page's request throws if the signal was aborted meanwhile: no partial list.
		} while (cursor !== undefined);
		return tools;
	}

	/**
	 * Calls a tool. Rejects with the SDK's error when the server answers with a JSON-RPC error
	 * (or with an answer that is not valid JSON-RPC: see invalid-response.ts),
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
				// A plain request with the SDK's ResultSchema, not client.callTool(): its result schema
				// rejects a whole result for one content block of a kind it does not know (or an image
				// without data), with a page of Zod issues as the message, and its output-schema check
				// turns a result with usable content into an error. `mapCallToolResult` reads the
				// result defensively instead.
				this.client.request(
					{ method: "tools/call", params: { name, arguments: { ...args }, ...(progressToken !== undefined ? { _meta: { progressToken } } : {}) } },
					this.sdk.ResultSchema,
					// Capped: a longer timer fires at once.
					{ signal, timeout: options.timeoutMs ? Math.min(options.timeoutMs, NO_SDK_TIMEOUT_MS) : NO_SDK_TIMEOUT_MS },
				),
			);
		} catch (error) {
			if (this.isConnectionLoss(error)) {
				this.markLost(errorMessage(error));
				throw error;
			}
			// The model reads this as the tool's error: a gateway's HTML page, not kilobytes of markup.
			throw error instanceof this.sdk.StreamableHTTPError ? this.readableError(error) : readableSchemaError(error);
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
