import { LONGEST_DELAY } from "../util/deadlines.js";
import type { McpServerOptions } from "./types.js";

/** Reconnection with every default filled in. */
export interface ReconnectSettings {
	initialDelayMs: number;
	maxDelayMs: number;
	maxAttempts: number;
}

/** The timing part of a server's options, resolved: what the connection statechart reads. */
export interface ConnectionSettings {
	connectTimeoutMs: number;
	/** `false`: a lost server is `failed` until `reconnect()`. */
	reconnect: ReconnectSettings | false;
}

/** Defaults of {@link ConnectionSettings}. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
export const DEFAULT_RECONNECT: ReconnectSettings = { initialDelayMs: 500, maxDelayMs: 30_000, maxAttempts: Number.POSITIVE_INFINITY };

function nonNegative(value: number | undefined, fallback: number, what: string): number {
	if (value === undefined) return fallback;
	// typeof first: "5000" >= 0 is true, and a string would then be added to Date.now().
	if (typeof value !== "number" || !(value >= 0)) {
		throw new TypeError(`MCP server options: ${what} must be a number of at least 0, got ${typeof value === "string" ? JSON.stringify(value) : String(value)}`);
	}
	return value;
}

/**
 * A server's timing options with defaults applied and values checked.
 *
 * @example
 * resolveConnectionSettings({ reconnect: { initialDelayMs: 100 } });
 * // { connectTimeoutMs: 30000, reconnect: { initialDelayMs: 100, maxDelayMs: 30000, maxAttempts: Infinity } }
 */
export function resolveConnectionSettings(options: McpServerOptions): ConnectionSettings {
	// Not a connection setting, but checked with them: set as each tool's `timeoutMs` and as the
	// SDK's request timeout, a negative number or a string would fail every call at once with
	// "Request timed out".
	nonNegative(options.toolTimeoutMs, 0, "toolTimeoutMs");
	const connectTimeoutMs = Math.min(nonNegative(options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS, "connectTimeoutMs") || DEFAULT_CONNECT_TIMEOUT_MS, LONGEST_DELAY);
	if (options.reconnect === false) return { connectTimeoutMs, reconnect: false };
	const given = options.reconnect ?? {};
	return {
		connectTimeoutMs,
		reconnect: {
			initialDelayMs: nonNegative(given.initialDelayMs, DEFAULT_RECONNECT.initialDelayMs, "reconnect.initialDelayMs"),
			maxDelayMs: nonNegative(given.maxDelayMs, DEFAULT_RECONNECT.maxDelayMs, "reconnect.maxDelayMs"),
			maxAttempts: nonNegative(given.maxAttempts, DEFAULT_RECONNECT.maxAttempts, "reconnect.maxAttempts"),
		},
	};
}

/**
 * How long to wait before reconnection attempt `attempt` (1 for the first): doubling from
 * `initialDelayMs`, capped at `maxDelayMs`. No jitter: one client per server, and tests
 * can then predict it.
 *
 * @example
 * backoffDelay({ initialDelayMs: 500, maxDelayMs: 30_000, maxAttempts: Infinity }, 3); // 2000
 */
export function backoffDelay(settings: ReconnectSettings, attempt: number): number {
	const exponent = Math.max(0, attempt - 1);
	return Math.min(settings.initialDelayMs * 2 ** exponent, settings.maxDelayMs, LONGEST_DELAY);
}
