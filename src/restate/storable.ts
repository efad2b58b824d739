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

/** Bytes as people read them: "17.0 MiB", "512 KiB". */
export function formatBytes(bytes: number): string {
	if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
	return `${Math.ceil(bytes / 1024)} KiB`;
}

/**
 * A JSON serde (the SDK's default format) that journals `standIn(value, why)` for a value
 * `JSON.stringify` refuses, or whose JSON is over `maxBytes`; `why` says which ("it is not
 * JSON-serializable (...)", "its JSON is 17.0 MiB, over ..."). The stand-in must itself be
 * plain JSON, and small.
 *
 * @example
 * ctx.run("tool read 1", runTheTool, { serde: storableSerde((outcome, why) => ({ kind: "error", message: `not stored: ${why}` }), 8 * 1024 * 1024) });
 */
export function storableSerde<T>(standIn: (value: T, why: string) => T, maxBytes = DEFAULT_MAX_STEP_BYTES): Serde<T> {
	const encoder = new TextEncoder();
	const decoder = new TextDecoder();
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
			if (bytes.length <= maxBytes) return bytes;
			return encoder.encode(JSON.stringify(standIn(value, `its JSON is ${formatBytes(bytes.length)}, over the ${formatBytes(maxBytes)} a step may journal (maxStepBytes)`)));
		},
		deserialize(data: Uint8Array): T {
			return (data.length === 0 ? undefined : JSON.parse(decoder.decode(data))) as T;
		},
	};
}
