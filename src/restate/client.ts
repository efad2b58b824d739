/**
 * A typed client of agent sessions over Restate's HTTP ingress, with plain `fetch`: no Restate
 * package, any runtime with `fetch` (Node 18+, Deno, Bun, browsers behind a proxy). Also the
 * reader of an event hub's stream. Importable alone as `agentchart/restate/client`.
 */
import type { AgentSnapshot } from "../durable/snapshot.js";
import type { SessionEventEnvelope } from "./session-events.js";
import type { AbortResult, ApproveInput, PromptInput, QueuedInput, QueuedResult, RejectInput, RunResult, SessionState } from "./session-types.js";

/**
 * Options of {@link createSessionClient}.
 *
 * @example
 * const options: SessionClientOptions = { ingressUrl: "http://localhost:8080", headers: { authorization: "Bearer …" } };
 * const client = createSessionClient(options);
 */
export interface SessionClientOptions {
	/** Restate's ingress, e.g. `http://127.0.0.1:8080`. */
	ingressUrl: string;
	/** The session object's name (default `"AgentSession"`, as `createAgentSessions`). */
	name?: string | undefined;
	/** Headers sent with every call (an API key of your gateway, say). */
	headers?: Record<string, string> | undefined;
	/** The `fetch` to use (default: the global one). */
	fetch?: typeof fetch | undefined;
}

/**
 * Options of one call.
 *
 * @example
 * const options: CallOptions = { idempotencyKey: "msg-1842", signal: AbortSignal.timeout(60_000) };
 * await session.prompt("What changed?", options);
 */
export interface CallOptions {
	/** Restate runs a call with the same key once and answers repeats with its result (a client's retry is safe). */
	idempotencyKey?: string | undefined;
	/** Cancels the HTTP request only: the call goes on in Restate (the same `idempotencyKey` again collects its result). */
	signal?: AbortSignal | undefined;
}

/** What `approve` takes beside the id: the decision's one option and those of every call. */
const APPROVE_OPTIONS: readonly string[] = ["arguments", "idempotencyKey", "signal"] satisfies (keyof (CallOptions & { arguments?: unknown }))[];

/** A value as an error shows it. The client loads nothing beside its own module (it runs in pages), so not agent-input's `shown`, which reaches for `node:util`. */
function shown(value: unknown): string {
	if (typeof value === "function") return "a function";
	return JSON.stringify(value) ?? String(value);
}

/** Every option of {@link SessionClientOptions} (the type makes the list whole). */
const CLIENT_OPTIONS = Object.keys({ ingressUrl: true, name: true, headers: true, fetch: true } satisfies Record<keyof SessionClientOptions, true>);

/**
 * Refuses options no call could go out with, when the client is made: an ingress without its
 * scheme (`localhost:8080`) used to fail every call later with fetch's bare "fetch failed".
 */
function checkClientOptions(options: SessionClientOptions): void {
	const problem = (field: string, why: string) => new TypeError(`agentchart/restate: createSessionClient(options): ${field} ${why}`);
	if (typeof options !== "object" || options === null) throw problem("options", `must be { ingressUrl, name?, headers?, fetch? }, got ${shown(options)}`);
	// Ignored, a misspelt `header` would send no authorization, and every call would fail as refused.
	const unknown = Object.keys(options).filter((key) => !CLIENT_OPTIONS.includes(key));
	if (unknown.length > 0) throw problem("options", `has no option ${unknown.map((key) => JSON.stringify(key)).join(", ")} (its options: ${CLIENT_OPTIONS.join(", ")})`);
	const url = typeof options.ingressUrl === "string" && URL.canParse(options.ingressUrl) ? new URL(options.ingressUrl) : undefined;
	if (url?.protocol !== "http:" && url?.protocol !== "https:") throw problem("ingressUrl", `must be the http(s) URL of Restate's ingress, such as "http://127.0.0.1:8080", got ${shown(options.ingressUrl)}`);
	if (options.name !== undefined && (typeof options.name !== "string" || options.name === "")) throw problem("name", `must be the session object's name (a non-empty text), got ${shown(options.name)}`);
	if (options.headers !== undefined && (typeof options.headers !== "object" || options.headers === null)) throw problem("headers", `must be an object of header names and values, got ${shown(options.headers)}`);
	if (options.fetch !== undefined && typeof options.fetch !== "function") throw problem("fetch", `must be a function, got ${shown(options.fetch)}`);
}

/**
 * A call that was sent without waiting for its result (`client.session(id).send.prompt(...)`).
 *
 * @example
 * const call: SentCall = await session.send.prompt("Write the report");
 * const result = await client.result(call); // later, or from another process
 */
export interface SentCall {
	invocationId: string;
}

/**
 * One session, as a client calls it.
 *
 * @example
 * const session: SessionHandle = client.session("user-42");
 * const result = await session.prompt("Delete the temp files");
 * for (const pending of result.pendingApprovals) await session.approve(pending.toolCallId);
 */
export interface SessionHandle {
	readonly sessionId: string;
	/** Runs the agent on `input`; resolves when the run ended or waits for approval. */
	prompt(input: PromptInput, options?: CallOptions): Promise<RunResult>;
	/** Approves a waiting call (optionally with other arguments); resolves when the run stops again. Rejects with a `TypeError`, sending nothing, for an option it does not take (`{ args }`). */
	approve(toolCallId: string, options?: CallOptions & { arguments?: unknown }): Promise<RunResult>;
	/** Rejects a waiting call; resolves when the run stops again. */
	reject(toolCallId: string, reason?: string, options?: CallOptions): Promise<RunResult>;
	/** Steers the run going on (delivered after its current turn), or starts one. */
	steer(input: QueuedInput, options?: CallOptions): Promise<QueuedResult>;
	/** Queues a message for when the run would end, or starts a run. */
	followUp(input: QueuedInput, options?: CallOptions): Promise<QueuedResult>;
	/** Aborts the run going on, the calls received before this one and not yet started, or the run waiting for approval. */
	abort(options?: CallOptions): Promise<AbortResult>;
	/** The stored snapshot (null for a session never run). */
	snapshot(options?: CallOptions): Promise<AgentSnapshot | null>;
	/** Transcript, status, queues and pending approvals, also while a run goes on. */
	state(options?: CallOptions): Promise<SessionState>;
	/** The same calls, sent without waiting: each resolves with the invocation id once Restate has it. */
	readonly send: {
		prompt(input: PromptInput, options?: CallOptions): Promise<SentCall>;
		approve(toolCallId: string, options?: CallOptions & { arguments?: unknown }): Promise<SentCall>;
		reject(toolCallId: string, reason?: string, options?: CallOptions): Promise<SentCall>;
	};
}

/**
 * A session client: `client.session(id)`, and the result of a sent call.
 *
 * @example
 * const client: SessionClient = createSessionClient({ ingressUrl: "http://localhost:8080" });
 * const result = await client.session("user-42").prompt("Hello");
 */
export interface SessionClient {
	session(sessionId: string): SessionHandle;
	/** Waits for the result of a call sent with `send` (Restate keeps it for the idempotency or journal retention). */
	result<T = RunResult>(call: SentCall, options?: Pick<CallOptions, "signal">): Promise<T>;
}

/**
 * A call that Restate answered with an error (a terminal error of the handler, or an ingress error).
 *
 * @example
 * try {
 *   await session.approve("toolu_01");
 * } catch (error) {
 *   if (error instanceof SessionCallError && error.status === 409) console.log("nothing waits for that approval");
 * }
 */
export class SessionCallError extends Error {
	constructor(
		message: string,
		/** The HTTP status (a handler's terminal error code, e.g. 409 for an approval that is not waiting). */
		readonly status: number,
	) {
		super(message);
		this.name = "SessionCallError";
	}
}

/**
 * A call that never got an answer: nothing listens at the URL, the name does not resolve, the
 * connection broke, or the answer was not a session's (a proxy's page). Whether the call ran is
 * unknown: send it again with the same `idempotencyKey` and Restate runs it at most once.
 *
 * @example
 * try {
 *   await session.prompt("Hello", { idempotencyKey: "msg-7" });
 * } catch (error) {
 *   if (error instanceof SessionUnreachableError) console.log(`retry later: ${error.url}`, error.cause);
 * }
 */
export class SessionUnreachableError extends Error {
	constructor(
		message: string,
		/** Where the call went (without the query). */
		readonly url: string,
		options?: { cause?: unknown },
	) {
		super(message, options);
		this.name = "SessionUnreachableError";
	}
}

/** What fetch's bare "fetch failed" hides: the system's reason (`connect ECONNREFUSED 127.0.0.1:8080`). */
function reasonOf(error: unknown): string {
	const cause = (error as { cause?: unknown } | undefined)?.cause;
	const described = (value: unknown): string | undefined => (value instanceof Error ? value.message : typeof value === "string" ? value : undefined);
	return described(cause) ?? described(error) ?? String(error);
}

/**
 * Sends one request; a failure to reach `url` is a {@link SessionUnreachableError} naming what
 * was called and where. An abort through the caller's own signal stays the `AbortError` it is.
 */
async function reach(doFetch: typeof fetch, url: string, init: RequestInit, what: string): Promise<Response> {
	try {
		return await doFetch(url, init);
	} catch (error) {
		if (init.signal?.aborted) throw error;
		const where = url.split("?")[0] ?? url;
		throw new SessionUnreachableError(`agentchart/restate: ${what}: could not reach ${where} (${reasonOf(error)}); whether it ran is unknown (send it again with the same idempotencyKey)`, where, { cause: error });
	}
}

async function answer<T>(response: Response, what: string): Promise<T> {
	const text = await response.text();
	if (!response.ok) {
		let message = text;
		try {
			message = (JSON.parse(text) as { message?: string }).message ?? text;
		} catch {
			// Not JSON: the text is the message.
		}
		throw new SessionCallError(message || `HTTP ${response.status}`, response.status);
	}
	if (text === "") return null as T;
	try {
		return JSON.parse(text) as T;
	} catch (error) {
		// A 200 that is not JSON came from something in front of Restate (a login page, a proxy).
		const where = response.url.split("?")[0] ?? response.url;
		throw new SessionUnreachableError(`agentchart/restate: ${what}: ${where || "the ingress"} answered ${response.status} with text that is not JSON, so not Restate's ingress: ${JSON.stringify(text.slice(0, 200))}`, where, { cause: error });
	}
}

/**
 * A client of the agent sessions behind Restate's ingress at `options.ingressUrl`.
 *
 * @example
 * const client = createSessionClient({ ingressUrl: "http://127.0.0.1:8080" });
 * const session = client.session("user-42");
 * let result = await session.prompt("Deploy the site");
 * while (result.status === "awaiting-approval") result = await session.approve(result.pendingApprovals[0]!.toolCallId);
 */
export function createSessionClient(options: SessionClientOptions): SessionClient {
	checkClientOptions(options);
	const base = options.ingressUrl.replace(/\/$/, "");
	const name = options.name ?? "AgentSession";
	const doFetch = options.fetch ?? fetch;
	const call = async <T>(sessionId: string, handler: string, input: unknown, call: CallOptions | undefined, send: boolean): Promise<T> => {
		const headers: Record<string, string> = { "content-type": "application/json", ...options.headers };
		if (call?.idempotencyKey) headers["idempotency-key"] = call.idempotencyKey;
		const url = `${base}/${encodeURIComponent(name)}/${encodeURIComponent(sessionId)}/${handler}${send ? "/send" : ""}`;
		const init: RequestInit = { method: "POST", headers, body: input === undefined ? "" : JSON.stringify(input) };
		if (call?.signal) init.signal = call.signal;
		const what = `${handler}${send ? " (send)" : ""} on session ${JSON.stringify(sessionId)}`;
		return answer<T>(await reach(doFetch, url, init, what), what);
	};
	// A misspelt option is refused, not dropped: an approval whose `args` never left would run the model's arguments.
	const approveInput = (toolCallId: string, opts: (CallOptions & { arguments?: unknown }) | undefined): ApproveInput => {
		const unknown = opts === undefined || opts === null ? [] : Object.keys(opts).filter((key) => !APPROVE_OPTIONS.includes(key));
		if (unknown.length > 0) throw new TypeError(`agentchart/restate: approve(${JSON.stringify(toolCallId)}, options): unknown option ${unknown.map((key) => JSON.stringify(key)).join(", ")} (the options are ${APPROVE_OPTIONS.map((key) => `"${key}"`).join(", ")}); nothing was sent`);
		return { toolCallId, arguments: opts?.arguments };
	};
	return {
		session(sessionId) {
			return {
				sessionId,
				prompt: (input, opts) => call(sessionId, "prompt", input, opts, false),
				approve: async (toolCallId, opts) => call(sessionId, "approve", approveInput(toolCallId, opts), opts, false),
				reject: (toolCallId, reason, opts) => call(sessionId, "reject", { toolCallId, reason } satisfies RejectInput, opts, false),
				steer: (input, opts) => call(sessionId, "steer", input, opts, false),
				followUp: (input, opts) => call(sessionId, "followUp", input, opts, false),
				abort: (opts) => call(sessionId, "abort", undefined, opts, false),
				snapshot: (opts) => call(sessionId, "snapshot", undefined, opts, false),
				state: (opts) => call(sessionId, "state", undefined, opts, false),
				send: {
					prompt: (input, opts) => call(sessionId, "prompt", input, opts, true),
					approve: async (toolCallId, opts) => call(sessionId, "approve", approveInput(toolCallId, opts), opts, true),
					reject: (toolCallId, reason, opts) => call(sessionId, "reject", { toolCallId, reason } satisfies RejectInput, opts, true),
				},
			};
		},
		async result<T>(sent: SentCall, opts?: Pick<CallOptions, "signal">): Promise<T> {
			const init: RequestInit = { method: "GET", headers: { ...options.headers } };
			if (opts?.signal) init.signal = opts.signal;
			const what = `result of invocation ${JSON.stringify(sent.invocationId)}`;
			return answer<T>(await reach(doFetch, `${base}/restate/invocation/${encodeURIComponent(sent.invocationId)}/attach`, init, what), what);
		},
	};
}

/**
 * The live events of one session (or of all, without `sessionId`) from an event hub
 * (`createEventHub`), as an async iterable that ends when `signal` aborts or the hub closes.
 *
 * @example
 * const controller = new AbortController();
 * for await (const { event } of watchSession("http://127.0.0.1:9900", "user-42", controller.signal)) {
 *   if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") process.stdout.write(event.assistantMessageEvent.delta);
 * }
 */
export async function* watchSession(hubUrl: string, sessionId: string | undefined, signal?: AbortSignal): AsyncGenerator<SessionEventEnvelope> {
	const query = sessionId === undefined ? "" : `?session=${encodeURIComponent(sessionId)}`;
	let response: Response;
	try {
		response = await reach(fetch, `${hubUrl.replace(/\/$/, "")}/events${query}`, signal ? { signal } : {}, `watchSession(${JSON.stringify(hubUrl)})`);
	} catch (error) {
		if (signal?.aborted) return;
		throw error;
	}
	if (!response.ok || !response.body) throw new SessionCallError(`the event hub answered ${response.status}`, response.status);
	const decoder = new TextDecoder();
	let buffered = "";
	try {
		for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
			buffered += decoder.decode(chunk, { stream: true });
			let end = buffered.indexOf("\n\n");
			while (end >= 0) {
				const frame = buffered.slice(0, end);
				buffered = buffered.slice(end + 2);
				end = buffered.indexOf("\n\n");
				const data = frame
					.split("\n")
					.filter((line) => line.startsWith("data: "))
					.map((line) => line.slice(6))
					.join("\n");
				if (data) yield JSON.parse(data) as SessionEventEnvelope;
			}
		}
	} catch (error) {
		if (signal?.aborted) return;
		throw error;
	}
}
