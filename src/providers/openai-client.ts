/**
 * The `openai` SDK client for one call: loaded lazily, keyed, and wrapped so that retries
 * and error bodies behave the way this provider promises.
 *
 * Retries stay the SDK's own (429, 408, 409, 5xx and connection errors, with exponential
 * backoff and `retry-after` support). Two things are added through the client's `fetch`:
 * a cap on each retry wait (a longer wait is replaced by the cap through `retry-after-ms`,
 * which the SDK reads first), and a copy of the last error body, because the SDK keeps only
 * `body.error` of a JSON error and servers put their message elsewhere too.
 */
import type { OpenAI } from "openai";
import type { Model, StreamOptions } from "../types/model.js";
import { detectOpenAICompatibleServer, type ResolvedOpenAICompat } from "./openai-compat.js";
import { withReplyLimits } from "./reply-size.js";
import { sdkWillRetry } from "./sdk-retry.js";
import { requestTimeoutMs } from "./stream-option-check.js";
import { streamActivityOf } from "./stream-activity.js";
import { environment } from "../util/host.js";
import { isMissingPeer, loadOptionalPeer, missingPeerMessage, type OptionalPeerUse } from "../util/optional-peer.js";

/** The `openai` module, loaded on the first call so that importing agentchart does not load it. */
export type OpenAISdk = typeof import("openai");

/** Default cap on a single retry wait, as in pi-ai. */
export const defaultMaxRetryDelayMs = 60_000;
/** Sent when a local server needs no key: the SDK refuses to start without one, the server ignores it. */
export const placeholderApiKey = "no-key";

// The SDK's backoff without a server hint: 0.5 s doubling per retry, at most 8 s (before jitter).
const sdkInitialRetryDelayMs = 500;
const sdkMaxRetryDelayMs = 8_000;
/** Error pages larger than this are cut: only the start is ever shown. */
const maxErrorBodyBytes = 64 * 1024;

let sdkPromise: Promise<OpenAISdk> | undefined;
let missingSdkWarned = false;

/** Who needs `openai`, for the messages of a failed load. */
const openAIPeer: OptionalPeerUse = { feature: "streamOpenAICompletions (agentchart)", peer: "openai" };

/** The message when `openai` is not installed: it is an optional peer, so nothing installed it. */
export const missingOpenAISdkMessage = missingPeerMessage(openAIPeer);

/**
 * Loads the `openai` package once. A failed load is not cached, so installing the package
 * fixes the next call. When the package is missing, the rejection says to install it, and the
 * process gets a warning (printed on stderr) the first time: a stream function never throws, so
 * the cause would otherwise sit only in the failed reply's `errorMessage`.
 *
 * @example
 * const { OpenAI } = await loadOpenAISdk();
 */
export function loadOpenAISdk(): Promise<OpenAISdk> {
	sdkPromise ??= loadOptionalPeer(openAIPeer, () => import("openai"), ["OpenAI", "APIError", "APIConnectionError", "APIConnectionTimeoutError", "APIUserAbortError"]).catch((error: unknown) => {
		sdkPromise = undefined;
		if (isMissingPeer((error as Error).cause, "openai") && !missingSdkWarned && typeof process !== "undefined" && typeof process.emitWarning === "function") {
			missingSdkWarned = true;
			process.emitWarning(missingOpenAISdkMessage, { code: "AGENTCHART_OPENAI_MISSING" });
		}
		throw error;
	});
	return sdkPromise;
}

/** The body of the last HTTP error response of a call, as the server sent it. */
export interface CapturedErrorBody {
	status: number;
	contentType: string;
	text: string;
	/** The request that got this answer (`POST http://127.0.0.1:11434/v1/chat/completions`). */
	request?: string | undefined;
}

/** Records what the client's fetch saw, for error messages. */
export interface ErrorBodyRecorder {
	last?: CapturedErrorBody;
}

function envName(provider: string): string {
	return `${provider.toUpperCase().replace(/[^A-Z0-9]+/g, "_")}_API_KEY`;
}

/**
 * The environment variables a model's key is looked up in, in order: the provider's own,
 * then the one of the known server its base URL points to.
 *
 * @example
 * apiKeyEnvNames({ provider: "my-gateway", baseUrl: "https://api.openai.com/v1" }); // ["MY_GATEWAY_API_KEY", "OPENAI_API_KEY"]
 */
export function apiKeyEnvNames(model: Pick<Model, "provider" | "baseUrl">): string[] {
	const names = [envName(model.provider)];
	const serverEnv = detectOpenAICompatibleServer(model.baseUrl).apiKeyEnv;
	if (serverEnv && !names.includes(serverEnv)) names.push(serverEnv);
	return names;
}

/**
 * The key for a call: the `apiKey` option, else the provider's environment variable
 * (`GROQ_API_KEY`, ...), else a placeholder for servers that need none. Undefined means
 * the call must fail for want of a key.
 *
 * @example
 * resolveOpenAIApiKey(ollamaModel, {}, compat); // "no-key"
 */
export function resolveOpenAIApiKey(
	model: Pick<Model, "provider" | "baseUrl">,
	options: Pick<StreamOptions, "apiKey">,
	compat: Pick<ResolvedOpenAICompat, "requiresApiKey">,
	env: Readonly<Record<string, string | undefined>> = environment(),
): string | undefined {
	if (options.apiKey) return options.apiKey;
	for (const name of apiKeyEnvNames(model)) {
		const value = env[name]?.trim();
		if (value) return value;
	}
	return compat.requiresApiKey ? undefined : placeholderApiKey;
}

/**
 * The message for a missing API key.
 *
 * @example
 * missingOpenAIKeyMessage(groqModel); // "No API key for provider groq: set GROQ_API_KEY or pass apiKey"
 */
export function missingOpenAIKeyMessage(model: Pick<Model, "provider" | "baseUrl">): string {
	return `No API key for provider ${model.provider}: set ${apiKeyEnvNames(model).join(" or ")} or pass apiKey`;
}

/** The longest wait the SDK takes from a server's hint; a longer one it ignores, for its own short backoff. */
const sdkLongestHintMs = 60_000;

/** The wait the server asked for, in milliseconds, read the way the SDK reads it (undefined: none it can use). */
function serverRequestedDelayMs(headers: Headers): number | undefined {
	let delay: number | undefined;
	const millis = Number.parseFloat(headers.get("retry-after-ms") ?? "");
	const retryAfter = headers.get("retry-after");
	if (!Number.isNaN(millis)) delay = millis;
	else if (retryAfter) {
		const seconds = Number.parseFloat(retryAfter);
		delay = Number.isNaN(seconds) ? Date.parse(retryAfter) - Date.now() : seconds * 1000;
	}
	return delay !== undefined && Number.isFinite(delay) && delay >= 0 ? delay : undefined;
}

async function readBounded(response: Response): Promise<string> {
	if (!response.body) return "";
	const reader = response.body.getReader();
	const decoder = new TextDecoder();
	let text = "";
	let bytes = 0;
	try {
		while (bytes < maxErrorBodyBytes) {
			const { done, value } = await reader.read();
			if (done) break;
			bytes += value.byteLength;
			text += decoder.decode(value, { stream: true });
		}
	} catch {
		// A body cut off while reading an error page: what arrived is still worth showing.
	} finally {
		void reader.cancel().catch(() => undefined);
	}
	return text + decoder.decode();
}

/**
 * A fetch for one call's client: records each error body, keeps every retry wait at or
 * below `maxRetryDelayMs` (0 disables the cap), bounds each line and the total size of a
 * streamed answer (`maxReplyBytes`, see {@link withReplyLimits}) and tells `activity` of each
 * attempt's request and answer.
 *
 * @example
 * new OpenAI({ apiKey, fetch: createCallFetch(1_000, {}) });
 */
export function createCallFetch(
	maxRetryDelayMs: number,
	recorder: ErrorBodyRecorder,
	baseFetch: typeof fetch = fetch,
	maxReplyBytes?: number,
	activity?: () => void,
): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
	let attempts = 0;
	return async (input, init) => {
		const retryCount = attempts++;
		// Each attempt's request and answer are signs of life for the stall watches (see stream-activity.ts).
		activity?.();
		const response = await baseFetch(input, init);
		activity?.();
		if (response.ok) return withReplyLimits(response, { maxReplyBytes });
		const text = await readBounded(response);
		const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
		const method = init?.method ?? (input instanceof Request ? input.method : "GET");
		recorder.last = { status: response.status, contentType: response.headers.get("content-type") ?? "", text, request: `${method} ${url}` };
		const headers = new Headers(response.headers);
		headers.delete("content-length");
		headers.delete("content-encoding");
		if (sdkWillRetry(response)) {
			const requested = serverRequestedDelayMs(response.headers);
			if (requested !== undefined && requested > sdkLongestHintMs) {
				// The SDK would retry after its short backoff, at a server that asked for more than a
				// minute: the wait asked for, capped, and at most the minute the SDK takes.
				headers.set("retry-after-ms", String(Math.min(maxRetryDelayMs > 0 ? maxRetryDelayMs : requested, sdkLongestHintMs)));
			} else if (maxRetryDelayMs > 0) {
				const planned = requested ?? Math.min(sdkInitialRetryDelayMs * 2 ** retryCount, sdkMaxRetryDelayMs);
				if (planned > maxRetryDelayMs) headers.set("retry-after-ms", String(maxRetryDelayMs));
			}
		}
		return new Response(text, { status: response.status, statusText: response.statusText, headers });
	};
}

function isOpenAIHost(baseUrl: string): boolean {
	return detectOpenAICompatibleServer(baseUrl).id === "openai";
}

/**
 * Creates the SDK client for one call: key, base URL, timeout, retries and headers.
 *
 * @example
 * const recorder: ErrorBodyRecorder = {};
 * const client = createOpenAIClient(await loadOpenAISdk(), model, "sk-...", { maxRetries: 1 }, compat, recorder);
 */
export function createOpenAIClient(
	sdk: OpenAISdk,
	model: Model,
	apiKey: string,
	options: StreamOptions,
	compat: Pick<ResolvedOpenAICompat, "sendSessionAffinityHeaders">,
	recorder: ErrorBodyRecorder,
): OpenAI {
	const headers: Record<string, string> = { ...model.headers };
	if (compat.sendSessionAffinityHeaders && options.sessionId && options.cacheRetention !== "none") {
		headers["session_id"] = options.sessionId;
		headers["x-client-request-id"] = options.sessionId;
		headers["x-session-affinity"] = options.sessionId;
	}
	Object.assign(headers, options.headers);
	const openAIHost = isOpenAIHost(model.baseUrl);
	return new sdk.OpenAI({
		apiKey,
		baseURL: model.baseUrl,
		// The SDK would read OPENAI_ORG_ID / OPENAI_PROJECT_ID and send them to any server; only OpenAI wants them.
		...(openAIHost ? {} : { organization: null, project: null, adminAPIKey: null }),
		...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
		...(options.timeoutMs !== undefined ? { timeout: requestTimeoutMs(options.timeoutMs) } : {}),
		defaultHeaders: headers,
		fetch: createCallFetch(options.maxRetryDelayMs ?? defaultMaxRetryDelayMs, recorder, fetch, options.maxReplyBytes, streamActivityOf(options)),
		// The key belongs to whoever configured the model; a browser app talking to a local server has none to leak.
		dangerouslyAllowBrowser: true,
	});
}
