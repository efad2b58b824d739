/**
 * The numbers a stream call takes (`timeoutMs`, `maxRetryDelayMs`, `maxRetries`,
 * `maxReplyBytes`) and its callbacks (`onPayload`, `onResponse`), checked where they enter: the
 * providers compare the numbers as given, so a string, NaN or a negative number would quietly
 * mean "no bound" or "no retry" (a `maxReplyBytes` of `"8mb"` bounded nothing), and a callback
 * that is not a function failed each request inside the provider. The Agent checks its fields
 * with it when a run starts; each built-in provider checks its options (and its context) before
 * it makes a request.
 */
import { LONGEST_DELAY } from "../util/deadlines.js";
import { shown } from "../agent-input.js";

/** Each setting, what it must be, and whether it must be whole. */
const STREAM_NUMBERS = [
	["timeoutMs", "a number of milliseconds, at least 0", false],
	["maxRetryDelayMs", "a number of milliseconds, at least 0", false],
	["maxRetries", "a whole number, at least 0", true],
	["maxReplyBytes", "a number of bytes, at least 0 (0: no bound)", false],
] as const;
const STREAM_CALLBACKS = ["onPayload", "onResponse"] as const;

/**
 * What is wrong with a stream call's numeric settings or callbacks, as
 * `<owner>.<field> must be ...`, or
 * undefined when nothing is (undefined itself means the default).
 *
 * @example
 * streamOptionsProblem({ maxReplyBytes: -1 }, "options"); // "options.maxReplyBytes must be a number of bytes, at least 0 (0: no bound), got -1"
 */
export function streamOptionsProblem(options: object, owner: string): string | undefined {
	const fields = options as Readonly<Record<string, unknown>>;
	for (const [key, expected, whole] of STREAM_NUMBERS) {
		const value = fields[key];
		if (value === undefined) continue;
		if (typeof value !== "number" || !(value >= 0) || (whole && !Number.isSafeInteger(value))) return `${owner}.${key} must be ${expected}, got ${shown(value)}`;
	}
	for (const key of STREAM_CALLBACKS) {
		const value = fields[key];
		// null is none, as undefined is: a provider calls a callback only when one is given.
		if (value != null && typeof value !== "function") return `${owner}.${key} must be a function, got ${shown(value)}`;
	}
	return undefined;
}

/**
 * What is wrong with a stream call's context, shallowly, or undefined when nothing is: a
 * `messages` that is not a list was sent as no messages at all (the OpenAI-compatible provider),
 * or failed with "content is not iterable" (Anthropic's). Each message's own shape is the
 * provider's to read, as pi-ai reads it.
 *
 * @example
 * streamContextProblem({ messages: "hi" }); // 'context.messages must be a list of messages, got "hi"'
 */
export function streamContextProblem(context: unknown): string | undefined {
	if (typeof context !== "object" || context === null) return `context must be an object ({ systemPrompt?, messages, tools? }), got ${shown(context)}`;
	const { systemPrompt, messages, tools } = context as Record<string, unknown>;
	if (!Array.isArray(messages)) return `context.messages must be a list of messages, got ${shown(messages)}`;
	const notMessage = messages.findIndex((message) => typeof message !== "object" || message === null || typeof (message as { role?: unknown }).role !== "string");
	if (notMessage >= 0) return `context.messages[${notMessage}] must be a message ({ role, content }), got ${shown(messages[notMessage])}`;
	if (systemPrompt != null && typeof systemPrompt !== "string") return `context.systemPrompt must be a text, got ${shown(systemPrompt)}`;
	if (tools != null && !Array.isArray(tools)) return `context.tools must be a list of tools, got ${shown(tools)}`;
	return undefined;
}

/**
 * The time limit given to a provider SDK (and to a stall watch) for `timeoutMs`, in whole
 * milliseconds: undefined keeps the SDK's default; 0 means no limit, as it does for the proxy,
 * `maxReplyBytes` and the agent's own timeouts (an SDK given 0 fails every request at once with
 * "Request timed out"); a limit beyond what a timer takes is capped there (an SDK's timer would
 * fire at once). A fraction is rounded up, so the limit is never shorter than asked: the
 * Anthropic SDK refuses one ("timeout must be an integer"), and `timeoutMs` computed from
 * seconds (`0.3 * 1000`) is rarely whole.
 *
 * @example
 * requestTimeoutMs(undefined); // undefined
 * requestTimeoutMs(0); // 2147483647
 * requestTimeoutMs(30_000); // 30000
 * requestTimeoutMs(2500.5); // 2501
 * requestTimeoutMs(3e9); // 2147483647
 */
export function requestTimeoutMs(timeoutMs: number | undefined): number | undefined {
	if (timeoutMs === undefined) return undefined;
	return timeoutMs <= 0 ? LONGEST_DELAY : Math.min(Math.ceil(timeoutMs), LONGEST_DELAY);
}
