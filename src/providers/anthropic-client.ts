/**
 * The SDK client for one call, configured from the model and the stream options.
 *
 * Retries stay the SDK's own (429, 529 and other 5xx, 408, 409, connection errors, with
 * exponential backoff and `retry-after` support). The one addition is a cap on how long a
 * single retry waits, applied as middleware: for a response the SDK is about to retry, a
 * wait longer than the cap is replaced by the cap through the `retry-after-ms` header,
 * which the SDK reads before anything else.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type { Middleware } from "@anthropic-ai/sdk";
import type { AnthropicSdk } from "./anthropic-sdk.js";
import type { Model, StreamOptions } from "../types/model.js";
import { type BodyMeter, withReplyLimits } from "./reply-size.js";
import { sdkWillRetry } from "./sdk-retry.js";
import { streamActivityOf } from "./stream-activity.js";
import { requestTimeoutMs } from "./stream-option-check.js";

/** Default cap on a single retry wait, as in pi-ai. */
export const defaultMaxRetryDelayMs = 60_000;

// The SDK's backoff without a server hint: 0.5 s doubling per retry, at most 8 s (before jitter).
const sdkInitialRetryDelayMs = 500;
const sdkMaxRetryDelayMs = 8_000;

/** The wait the server asked for, in milliseconds, read the way the SDK reads it. */
function serverRequestedDelayMs(headers: Headers): number | undefined {
	const millis = Number.parseFloat(headers.get("retry-after-ms") ?? "");
	if (millis > 0) return millis;
	const retryAfter = headers.get("retry-after");
	if (!retryAfter) return undefined;
	const seconds = Number.parseFloat(retryAfter);
	const delay = Number.isNaN(seconds) ? Date.parse(retryAfter) - Date.now() : seconds * 1000;
	return delay > 0 ? delay : undefined;
}

/**
 * Middleware that keeps every retry wait at or below `capMs`.
 *
 * @example
 * new Anthropic({ middleware: [capRetryDelay(1_000)] });
 */
export function capRetryDelay(capMs: number): Middleware {
	return async (request, next) => {
		const response = await next(request);
		if (response.ok || !sdkWillRetry(response)) return response;
		const retryCount = Number.parseInt(request.headers.get("x-stainless-retry-count") ?? "0", 10) || 0;
		const planned =
			serverRequestedDelayMs(response.headers) ??
			Math.min(sdkInitialRetryDelayMs * 2 ** retryCount, sdkMaxRetryDelayMs);
		if (planned <= capMs) return response;
		const headers = new Headers(response.headers);
		// The SDK ignores a zero wait and falls back to its backoff, so the floor is 1 ms.
		headers.set("retry-after-ms", String(Math.max(1, capMs)));
		return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
	};
}

/** Tells the stall watches of each attempt's request and answer (see `stream-activity.ts`). */
function reportActivity(activity: () => void): Middleware {
	return async (request, next) => {
		activity();
		const response = await next(request);
		activity();
		return response;
	};
}

/** Bounds each line and the total size of a streamed answer (see {@link withReplyLimits}). */
function limitStreamedReply(maxReplyBytes: number | undefined, meter: BodyMeter | undefined): Middleware {
	return async (request, next) => withReplyLimits(await next(request), { maxReplyBytes, meter });
}

/**
 * Creates the SDK client for one call: key, base URL, timeout, retries, headers and the bounds
 * on a streamed answer; `meter` counts the answer's bytes (keep-alive pings too).
 *
 * @example
 * const client = createAnthropicClient(await loadAnthropicSdk(), model, "sk-ant-...", { maxRetries: 1, timeoutMs: 30_000 });
 */
export function createAnthropicClient(sdk: AnthropicSdk, model: Model, apiKey: string, options: StreamOptions = {}, meter?: BodyMeter): Anthropic {
	const maxRetryDelayMs = options.maxRetryDelayMs ?? defaultMaxRetryDelayMs;
	const limitReply = limitStreamedReply(options.maxReplyBytes, meter);
	const activity = streamActivityOf(options);
	const middleware: Middleware[] = activity ? [reportActivity(activity), limitReply] : [limitReply];
	if (maxRetryDelayMs > 0) middleware.push(capRetryDelay(maxRetryDelayMs));
	return new sdk.default({
		apiKey,
		baseURL: model.baseUrl,
		...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
		...(options.timeoutMs !== undefined ? { timeout: requestTimeoutMs(options.timeoutMs) } : {}),
		defaultHeaders: { ...model.headers, ...options.headers },
		// 0 disables the cap, as in pi-ai.
		middleware,
		// As pi-ai does: the key belongs to whoever configured the model, and a web app that calls the
		// API from the page (or a local server) has decided that; the SDK would refuse every call there.
		dangerouslyAllowBrowser: true,
	});
}
