/**
 * What a step journals must be JSON (Restate's journal stores it serialized). A value that is
 * not (a `BigInt`, a cycle) fails the serialization after the step's closure returned, outside
 * anything it could catch: Restate then retries the attempt, which finds no outcome journaled,
 * so a tool that is not replay-safe is answered as interrupted by a restart that never happened,
 * and a replay-safe one runs again at every retry, for ever.
 *
 * A value that is JSON but larger than restate-server takes in one message fails the same way,
 * later: the server refuses the entry, Restate retries the invocation for ever, and every later
 * call of the session waits behind it.
 *
 * The serde here journals a stand-in instead, built from the value and why it could not be
 * stored. The handler reads a step's value back from the journal (the first execution as well as
 * a replay: the SDK deserializes what it journaled), so every execution sees the stand-in, and
 * the step is never retried for it.
 */
import type { Serde } from "@restatedev/restate-sdk";
import { describeError } from "../util/describe-error.js";

/** The default of `maxStepBytes` (see `AgentSessionsOptions`): a quarter of restate-server's default message size limit. */
export const DEFAULT_MAX_STEP_BYTES = 8 * 1024 * 1024;

/**
 * The default of `maxSessionBytes` (see `AgentSessionsOptions`): under the 16 MiB at which a
 * session's further calls were measured to hang with restate-server's default 32 MiB limit.
 */
export const DEFAULT_MAX_SESSION_BYTES = 12 * 1024 * 1024;

/**
 * What one handler call counts against a session's `maxSessionBytes`: `used` starts at the
 * stored session's size and its input's, and grows by each step's journaled outcome (a tool
 * result, a model reply: what the transcript keeps).
 */
export interface SessionBudget {
	readonly max: number;
	used: number;
}

/**
 * The SDK's JSON serde for reading a state value, telling `onRead` the value's size in bytes
 * (what the store holds: measured without serializing it again).
 *
 * @example
 * const stored = await ctx.get<AgentSnapshot>("snapshot", measuringSerde((bytes) => (storedBytes = bytes)));
 */
export function measuringSerde<T>(onRead: (bytes: number) => void): Serde<T> {
	return {
		contentType: "application/json",
		serialize: (value: T) => (value === undefined ? new Uint8Array(0) : new TextEncoder().encode(JSON.stringify(value))),
		deserialize(data: Uint8Array): T {
			onRead(data.length);
			return readJson<T>(data);
		},
	};
}

/** What the SDK's JSON serde reads back: empty bytes are `undefined`. */
function readJson<T>(data: Uint8Array): T {
	return (data.length === 0 ? undefined : JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("utf8"))) as T;
}

/**
 * JSON's size in bytes, as a step or a state value would store it (undefined: nothing).
 *
 * @example
 * jsonBytes("héllo"); // 8
 */
export function jsonBytes(value: unknown): number {
	return value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value));
}

/**
 * Bytes as people read them: "17.0 MiB", "512 KiB".
 *
 * @example
 * formatBytes(3 * 1024 * 1024); // "3.0 MiB"
 */
export function formatBytes(bytes: number): string {
	if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
	return `${Math.ceil(bytes / 1024)} KiB`;
}

/**
 * A JSON serde (the SDK's default format) that journals `standIn(value, why)` for a value
 * `JSON.stringify` refuses, or whose JSON is over `maxBytes`, or over what `budget` has left;
 * `why` says which ("it is not JSON-serializable (...)", "its JSON is 17.0 MiB, over ...").
 * The stand-in must itself be plain JSON, and small. What is journaled counts against `budget`
 * as it is read back (the first execution reads it back too, and a replay only reads it), so
 * every execution counts each step once.
 *
 * @example
 * ctx.run("tool read 1", runTheTool, { serde: storableSerde((outcome, why) => ({ kind: "error", message: `not stored: ${why}` }), 8 * 1024 * 1024) });
 */
export function storableSerde<T>(standIn: (value: T, why: string) => T, maxBytes = DEFAULT_MAX_STEP_BYTES, budget?: SessionBudget): Serde<T> {
	const encoder = new TextEncoder();
	return {
		contentType: "application/json",
		serialize(value: T): Uint8Array {
			if (value === undefined) return new Uint8Array(0);
			let text: string;
			try {
				text = JSON.stringify(value);
			} catch (error) {
				return encoder.encode(JSON.stringify(standIn(value, `it is not JSON-serializable (${describeError(error)})`)));
			}
			const bytes = encoder.encode(text);
			if (bytes.length > maxBytes) return encoder.encode(JSON.stringify(standIn(value, `its JSON is ${formatBytes(bytes.length)}, over the ${formatBytes(maxBytes)} a step may journal (maxStepBytes)`)));
			const left = budget ? budget.max - budget.used : Number.POSITIVE_INFINITY;
			if (bytes.length > left) {
				const what = `its JSON is ${formatBytes(bytes.length)}, over the ${formatBytes(Math.max(0, left))} the session has left of its ${formatBytes(budget?.max ?? 0)} (maxSessionBytes)`;
				return encoder.encode(JSON.stringify(standIn(value, what)));
			}
			return bytes;
		},
		deserialize(data: Uint8Array): T {
			if (budget) budget.used += data.length;
			return readJson<T>(data);
		},
	};
}
