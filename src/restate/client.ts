/**
 * A typed client of agent sessions over Restate's HTTP ingress, with plain `fetch`: no Restate
 * package, any runtime with `fetch` (Node 18+, Deno, Bun, browsers behind a proxy). Also the
 * reader of an event hub's stream. Importable alone as `agentchart/restate/client`.
 */
import type { AgentSnapshot } from "../durable/snapshot.js";
import type { SessionEventEnvelope } from "./session-events.js";
import type { AbortResult, ApproveInput, PromptInput, QueuedInput, QueuedResult, RejectInput, RunResult, SessionState } from "./session-types.js";

// What the client's functions take and return, nameable from this entry: `agentchart/restate`
// also exports them, but its declarations need the Restate SDK, which a client does not install.
export type { AbortResult, ApproveInput, HeldMail, PromptInput, QueuedInput, QueuedMessage, QueuedResult, RejectInput, RunInProgress, RunResult, SessionState, SessionStatus } from "./session-types.js";
export type { SessionEvent, SessionEventEnvelope, SlimAssistantMessageEvent } from "./session-events.js";

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
 * Options of one call. A call given an option it does not take (a misspelt `idempotencyKye`,
 * which would let a retry run the call twice) rejects with a `TypeError` and sends nothing.
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

/** The options of every call. */
const CALL_OPTIONS = ["idempotencyKey", "signal"] as const satisfies readonly (keyof CallOptions)[];
/** What `approve` takes beside the id: the decision's one option and those of every call. */
const APPROVE_OPTIONS = ["arguments", ...CALL_OPTIONS] as const satisfies readonly (keyof (CallOptions & { arguments?: unknown }))[];

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
 * for (const pending of result.pendingApprovals) await session.approve(pending.callKey);
 */
export interface SessionHandle {
	readonly sessionId: string;
	/** Runs the agent on `input`; resolves when the run ended or waits for approval. */
	prompt(input: PromptInput, options?: CallOptions): Promise<RunResult>;
	/** Approves a waiting call (optionally with other arguments); resolves when the run stops again. Rejects with a `TypeError`, sending nothing, for an option it does not take (`{ args }`). */
	approve(toolCallId: string, options?: CallOptions & { arguments?: unknown }): Promise<RunResult>;
	/** Rejects a waiting call; resolves when the run stops again. Rejects with a `TypeError`, sending nothing, for an option it does not take (`{ idempotencyKye }`). */
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
	/** The session keyed `sessionId` (a non-empty string other than `"."` and `".."`, which a URL cannot carry; anything else throws a `TypeError`). */
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

/**
 * A call whose body Restate's ingress (or a proxy in front of it) refuses as too large: its
 * request size limit (`ingress.request-size-limit`, by default `networking.message-size-limit`,
 * 32 MiB). The call did not run, and the same body will be refused again: send less (keep large
 * data out of a prompt: a path or an id a tool can read). `status` is 413, as a session's own
 * refusal of an input that would take it over `maxSessionBytes`, which is a plain
 * {@link SessionCallError}.
 *
 * `answered` says whether the 413 itself was read. The ingress answers before it reads such a
 * body and closes the connection, so fetch often fails while it still sends the body (`write
 * EPIPE`) and never sees the answer. That failure, on a body of 1 MiB or more, is reported as
 * this error with `answered: false`: the call was not taken (Restate had not received its
 * body), and the message says how likely the size is the reason (a body under Restate's
 * default limit may have met a connection that broke for another reason; it may be sent again).
 *
 * @example
 * try {
 *   await session.prompt(hugeText);
 * } catch (error) {
 *   if (error instanceof SessionBodyTooLargeError) console.log(`${error.bytes} bytes is too much for one call`);
 * }
 */
export class SessionBodyTooLargeError extends SessionCallError {
	constructor(
		message: string,
		/** The size of the call's body (its JSON), in bytes. */
		readonly bytes: number,
		/** Whether Restate's (or a proxy's) 413 was read; false when the connection closed while the body was being sent. */
		readonly answered: boolean,
		options?: { cause?: unknown },
	) {
		super(message, 413);
		this.name = "SessionBodyTooLargeError";
		if (options?.cause !== undefined) this.cause = options.cause;
	}
}

/** Restate's default limit of an ingress request (`networking.message-size-limit`). */
const DEFAULT_INGRESS_LIMIT = 32 * 1024 * 1024;
/**
 * The smallest body whose connection closing mid-send is read as a size refusal: a smaller one
 * is written whole before the ingress could answer it, so its connection closed for another
 * reason (a restart, an idle connection dropped) and the call may simply be sent again.
 */
const LARGE_BODY = 1024 * 1024;

/** A size as the messages give it (the worker's own formatter is not loaded here: see `shown`). */
function sizeOf(bytes: number): string {
	if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
	return `${Math.ceil(bytes / 1024)} KiB`;
}

/** What a call sends (its `init.body`), in bytes. */
function bodyBytes(init: RequestInit): number {
	return typeof init.body === "string" ? new TextEncoder().encode(init.body).length : 0;
}

/** What fetch's bare "fetch failed" hides: the system's reason (`connect ECONNREFUSED 127.0.0.1:8080`). */
function reasonOf(error: unknown): string {
	const cause = (error as { cause?: unknown } | undefined)?.cause;
	const described = (value: unknown): string | undefined => (value instanceof Error ? value.message : typeof value === "string" ? value : undefined);
	return described(cause) ?? described(error) ?? String(error);
}

/** What a call that got no answer should do next. */
const RETRY_ADVICE = "whether it ran is unknown (send it again with the same idempotencyKey)";

/** Whether fetch failed while it was still writing the request (the peer had closed the connection). */
function failedWhileSending(error: unknown): boolean {
	const cause = (error as { cause?: { code?: unknown; syscall?: unknown } } | undefined)?.cause;
	return cause?.code === "EPIPE" || (cause?.code === "ECONNRESET" && cause.syscall === "write");
}

/**
 * Sends one request; a failure to reach `url` is a {@link SessionUnreachableError} naming what
 * was called and where, and `advice` on what to do next. An abort through the caller's own
 * signal stays the `AbortError` it is. A large body whose connection closed while it was sent
 * is a {@link SessionBodyTooLargeError}: sent again, it would fail again.
 */
async function reach(doFetch: typeof fetch, url: string, init: RequestInit, what: string, advice = RETRY_ADVICE): Promise<Response> {
	try {
		return await doFetch(url, init);
	} catch (error) {
		if (init.signal?.aborted) throw error;
		const where = url.split("?")[0] ?? url;
		const bytes = bodyBytes(init);
		// The ingress answers 413 to a body over its limit before reading it, and closes the
		// connection: fetch, still writing the body, fails with EPIPE and never reads the answer.
		// A body cut off was not taken (Restate needs all of it to make an invocation).
		if (bytes >= LARGE_BODY && failedWhileSending(error)) {
			const likely =
				bytes > DEFAULT_INGRESS_LIMIT
					? `at ${sizeOf(bytes)} it is over Restate's default limit of ${sizeOf(DEFAULT_INGRESS_LIMIT)}, and sending it again will fail the same way (unless that limit was raised)`
					: `at ${sizeOf(bytes)} it is under Restate's default limit of ${sizeOf(DEFAULT_INGRESS_LIMIT)}, so this is the reason only if your limit is lower; if it is not, the connection broke for another reason, and the call may be sent again`;
			throw new SessionBodyTooLargeError(
				`agentchart/restate: ${what}: the connection to ${where} closed while the call's body (${sizeOf(bytes)} of JSON) was being sent (${reasonOf(error)}), so the call was not taken. ` +
					`Restate's ingress does so when a body is over its request size limit (ingress.request-size-limit), answering 413 before it reads the body: ${likely}. Send less (large data belongs in a file or store a tool reads, not in the call)`,
				bytes,
				false,
				{ cause: error },
			);
		}
		throw new SessionUnreachableError(`agentchart/restate: ${what}: could not reach ${where} (${reasonOf(error)}); ${advice}`, where, { cause: error });
	}
}

async function answer<T>(response: Response, what: string, bytes: () => number): Promise<T> {
	const text = await response.text();
	if (!response.ok) {
		let message = text;
		try {
			message = (JSON.parse(text) as { message?: string }).message ?? text;
		} catch {
			// Not JSON: the text is the message.
		}
		// A session's own 413 (an input over maxSessionBytes) says so, from agentchart; any other
		// came from the ingress's size limit ("length limit exceeded") or a proxy's.
		if (response.status === 413 && !message.startsWith("agentchart")) {
			throw new SessionBodyTooLargeError(
				`agentchart/restate: ${what}: the call's body (${sizeOf(bytes())} of JSON) is over the request size limit of Restate's ingress (ingress.request-size-limit, ${sizeOf(DEFAULT_INGRESS_LIMIT)} by default) or of a proxy in front of it, which answered 413 (${JSON.stringify(message.slice(0, 200))}). ` +
					"The call did not run, and sending it again will fail the same way: send less (large data belongs in a file or store a tool reads, not in the call)",
				bytes(),
				true,
			);
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
 * while (result.status === "awaiting-approval") result = await session.approve(result.pendingApprovals[0]!.callKey);
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
		return answer<T>(await reach(doFetch, url, init, what), what, () => bodyBytes(init));
	};
	// A misspelt option is refused, not dropped: an approval whose `args` never left would run
	// the model's arguments, a rejection whose `idempotencyKye` never left may be decided twice.
	const checkOptions = (call: string, opts: object | undefined, known: readonly string[]): void => {
		const unknown = opts === undefined || opts === null ? [] : Object.keys(opts).filter((key) => !known.includes(key));
		if (unknown.length > 0) throw new TypeError(`agentchart/restate: ${call}: unknown option ${unknown.map((key) => JSON.stringify(key)).join(", ")} (the options are ${known.map((key) => `"${key}"`).join(", ")}); nothing was sent`);
	};
	const approveInput = (toolCallId: string, opts: (CallOptions & { arguments?: unknown }) | undefined): ApproveInput => {
		checkOptions(`approve(${JSON.stringify(toolCallId)}, options)`, opts, APPROVE_OPTIONS);
		return { toolCallId, arguments: opts?.arguments };
	};
	const callOptions = (call: string, opts: CallOptions | undefined): CallOptions | undefined => {
		checkOptions(call, opts, CALL_OPTIONS);
		return opts;
	};
	const rejectInput = (toolCallId: string, reason: string | undefined, opts: CallOptions | undefined): RejectInput => {
		checkOptions(`reject(${JSON.stringify(toolCallId)}, reason, options)`, opts, CALL_OPTIONS);
		return { toolCallId, reason };
	};
	return {
		session(sessionId) {
			// Put in the URL as it is, `undefined` or 123 would address a session keyed "undefined" or "123".
			if (typeof sessionId !== "string" || sessionId === "") throw new TypeError(`agentchart/restate: client.session(sessionId): sessionId must be the session's key, a non-empty string, got ${shown(sessionId)}`);
			// A URL reads "." and ".." (encoded or not) as steps in its path: such a key cannot be addressed.
			if (sessionId === "." || sessionId === "..") throw new TypeError(`agentchart/restate: client.session(sessionId): ${shown(sessionId)} cannot be a session's key: a URL takes it as a step in its path, so no call could reach it`);
			return {
				sessionId,
				prompt: async (input, opts) => call(sessionId, "prompt", input, callOptions("prompt(input, options)", opts), false),
				approve: async (toolCallId, opts) => call(sessionId, "approve", approveInput(toolCallId, opts), opts, false),
				reject: async (toolCallId, reason, opts) => call(sessionId, "reject", rejectInput(toolCallId, reason, opts), opts, false),
				steer: async (input, opts) => call(sessionId, "steer", input, callOptions("steer(input, options)", opts), false),
				followUp: async (input, opts) => call(sessionId, "followUp", input, callOptions("followUp(input, options)", opts), false),
				abort: async (opts) => call(sessionId, "abort", undefined, callOptions("abort(options)", opts), false),
				snapshot: async (opts) => call(sessionId, "snapshot", undefined, callOptions("snapshot(options)", opts), false),
				state: async (opts) => call(sessionId, "state", undefined, callOptions("state(options)", opts), false),
				send: {
					prompt: async (input, opts) => call(sessionId, "prompt", input, callOptions("send.prompt(input, options)", opts), true),
					approve: async (toolCallId, opts) => call(sessionId, "approve", approveInput(toolCallId, opts), opts, true),
					reject: async (toolCallId, reason, opts) => call(sessionId, "reject", rejectInput(toolCallId, reason, opts), opts, true),
				},
			};
		},
		async result<T>(sent: SentCall, opts?: Pick<CallOptions, "signal">): Promise<T> {
			const init: RequestInit = { method: "GET", headers: { ...options.headers } };
			if (opts?.signal) init.signal = opts.signal;
			const what = `result of invocation ${JSON.stringify(sent.invocationId)}`;
			return answer<T>(await reach(doFetch, `${base}/restate/invocation/${encodeURIComponent(sent.invocationId)}/attach`, init, what), what, () => 0);
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
		// A listener sent nothing: "whether it ran is unknown" would not apply.
		const advice = "is the event hub running there? Watch again once it is (events sent meanwhile are lost: a session's state has its transcript)";
		response = await reach(fetch, `${hubUrl.replace(/\/$/, "")}/events${query}`, signal ? { signal } : {}, `watchSession(${JSON.stringify(hubUrl)})`, advice);
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
				// Frames that came in one chunk with the one the signal was aborted at are not handed out.
				if (signal?.aborted) return;
				if (data) yield JSON.parse(data) as SessionEventEnvelope;
			}
		}
	} catch (error) {
		if (signal?.aborted) return;
		throw error;
	}
}
