/**
 * What a step journals must be JSON (Restate's journal stores it serialized). A value that is
 * not (a `BigInt`, a cycle) fails the serialization after the step's closure returned, outside
 * anything it could catch: Restate then retries the attempt, which finds no outcome journaled,
 * so a tool that is not replay-safe is answered as interrupted by a restart that never happened,
 * and a replay-safe one runs again at every retry, for ever.
 *
 * The serde here journals a stand-in instead, built from the value and the serialization's error.
 * The handler reads a step's value back from the journal (the first execution as well as a
 * replay: the SDK deserializes what it journaled), so every execution sees the stand-in, and
 * the step is never retried for it.
 */
import type { Serde } from "@restatedev/restate-sdk";

/**
 * A JSON serde (the SDK's default format) that journals `standIn(value, error)` for a value
 * `JSON.stringify` refuses. The stand-in must itself be plain JSON.
 *
 * @example
 * ctx.run("tool read 1", runTheTool, { serde: storableSerde((outcome, error) => ({ kind: "error", message: String(error) })) });
 */
export function storableSerde<T>(standIn: (value: T, error: unknown) => T): Serde<T> {
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
				text = JSON.stringify(standIn(value, error));
			}
			return encoder.encode(text);
		},
		deserialize(data: Uint8Array): T {
			return (data.length === 0 ? undefined : JSON.parse(decoder.decode(data))) as T;
		},
	};
}
