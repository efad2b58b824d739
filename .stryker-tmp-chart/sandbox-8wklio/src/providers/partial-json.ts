/**
 * Tool-call arguments arrive as JSON text in fragments. While they stream, a UI wants the
 * best reading of what has arrived so far; at the end, the exact value.
 */
// @ts-nocheck

import { Allow, parse as parsePartial } from "partial-json";

type Arguments = Record<string, unknown>;

function asArguments(value: unknown): Arguments | undefined {
	return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Arguments) : undefined;
}

/**
 * Best-effort reading of incomplete JSON arguments. Returns `fallback` (the previous reading)
 * when the text so far cannot be read as an object yet, e.g. a fragment that ends inside an
 * escape sequence.
 *
 * @example
 * parseStreamingArguments('{"path":"src/ma'); // { path: "src/ma" }
 * parseStreamingArguments('{"n":4', { n: 4 }); // { n: 4 }
 */
export function parseStreamingArguments(json: string, fallback: Arguments = {}): Arguments {
	if (json.trim() === "") return fallback;
	try {
		return asArguments(JSON.parse(json)) ?? fallback;
	} catch {
		// Not complete yet: fall through to the partial parser.
	}
	try {
		return asArguments(parsePartial(json, Allow.ALL)) ?? fallback;
	} catch {
		return fallback;
	}
}

/**
 * The final arguments of a tool call: exactly `JSON.parse` of the complete text, `{}` for an
 * empty input. Text that is not valid JSON (a call cut off by the output limit) gets the
 * best partial reading instead, so the call is still inspectable.
 *
 * @example
 * parseFinalArguments('{"q":"caf\\u00e9"}'); // { q: "café" }
 * parseFinalArguments(""); // {}
 */
export function parseFinalArguments(json: string): Arguments {
	if (json.trim() === "") return {};
	try {
		const value: unknown = JSON.parse(json);
		const args = asArguments(value);
		if (args) return args;
	} catch {
		return parseStreamingArguments(json);
	}
	return {};
}
