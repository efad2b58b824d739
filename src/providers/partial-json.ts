/**
 * Tool-call arguments arrive as JSON text in fragments. While they stream, a UI wants the
 * best reading of what has arrived so far; at the end, the exact value.
 */
import { Allow, parse as parsePartial } from "partial-json";

type Arguments = Record<string, unknown>;

/**
 * The deepest nesting of tool-call arguments kept. JSON.parse reads any depth, but
 * JSON.stringify and structuredClone overflow the stack at a few thousand levels: a call
 * nested that deep would fail the tool's result and then every later request of the session,
 * which resends the transcript. No tool schema comes near this.
 */
export const MAX_ARGUMENT_DEPTH = 256;

/**
 * The arguments of a tool call nest deeper than {@link MAX_ARGUMENT_DEPTH}: the reply ends as an
 * error, and the call, with the reading it had before it got that deep, never runs.
 */
export class ArgumentsTooDeepError extends RangeError {
	constructor() {
		super(`The model's tool call arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels of objects and arrays; the call was not run`);
		this.name = "ArgumentsTooDeepError";
	}
}

/**
 * The deepest nesting of objects and arrays in JSON text (complete or not), counted without
 * parsing, so that no parser recurses on it. Brackets inside strings do not count.
 *
 * @example
 * nestingDepth('{"a":[1,{"b":"[["}]}'); // 3
 */
export function nestingDepth(json: string): number {
	let depth = 0;
	let deepest = 0;
	let inString = false;
	for (let index = 0; index < json.length; index++) {
		const code = json.charCodeAt(index);
		if (inString) {
			if (code === 0x5c) index++; // backslash: the next character is escaped
			else if (code === 0x22) inString = false;
		} else if (code === 0x22) inString = true;
		else if (code === 0x7b || code === 0x5b) {
			if (++depth > deepest) deepest = depth;
		} else if (code === 0x7d || code === 0x5d) depth--;
	}
	return deepest;
}

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
	if (json.trim() === "" || nestingDepth(json) > MAX_ARGUMENT_DEPTH) return fallback;
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

/** Up to this many characters, the arguments are read again on every fragment. */
const eagerReadChars = 2048;

/**
 * The arguments of one tool call while they stream: the JSON text so far and the best
 * reading of it, for `partial` (a UI's preview).
 *
 * Reading the whole text again on every fragment costs O(n²) over a call: a 100 KB file
 * written through a tool, in the 8-byte fragments models stream, took 13 s of CPU and
 * blocked the event loop for a second at a time. So past the first 2 KB the text is read
 * again only once it grew by an eighth since the last reading: linear work over the call,
 * and a preview that lags the text by at most an eighth. The final arguments are always
 * read from the whole text.
 *
 * @example
 * const args = new StreamingArguments();
 * args.append('{"path":"src/ma'); // { path: "src/ma" }
 * args.append('in.ts"}');         // { path: "src/main.ts" }
 * args.final();                   // { path: "src/main.ts" }
 */
export class StreamingArguments {
	#text = "";
	#readLength = 0;
	#reading: Arguments = {};

	/** The JSON text so far. */
	get json(): string {
		return this.#text;
	}

	/** Adds a fragment and returns the best reading so far. */
	append(fragment: string): Arguments {
		if (fragment === "") return this.#reading;
		this.#text += fragment;
		const length = this.#text.length;
		if (length <= eagerReadChars || length - this.#readLength >= this.#readLength / 8) {
			this.#readLength = length;
			this.#reading = parseStreamingArguments(this.#text, this.#reading);
		}
		return this.#reading;
	}

	/** Replaces the whole text (a server that sends the arguments complete, as an object) and returns its reading. */
	replace(text: string): Arguments {
		this.#text = text;
		this.#readLength = text.length;
		this.#reading = parseStreamingArguments(text, this.#reading);
		return this.#reading;
	}

	/** The final arguments: see {@link parseFinalArguments}. */
	final(): Arguments {
		return parseFinalArguments(this.#text);
	}

	/**
	 * The final arguments, and whether the text is complete JSON. Text that is not (empty text
	 * included: a call cut off before its arguments began) may be a call the output limit cut off:
	 * its stop reason comes after the call's block has ended, and such a call must not be
	 * announced as ended before it is known (a streaming tool starts at its end).
	 */
	finalReading(): { arguments: Arguments; complete: boolean } {
		return readFinalArguments(this.#text);
	}
}

/**
 * The final arguments and whether the text is complete JSON, from one parse. Empty text is not
 * complete: a call of a tool without arguments streams `{}` (OpenAI) or may stream nothing
 * (Anthropic), and a call the output limit cut off before its arguments began streams nothing
 * either.
 */
function readFinalArguments(json: string): { arguments: Arguments; complete: boolean } {
	if (json.trim() === "") return { arguments: {}, complete: false };
	if (nestingDepth(json) > MAX_ARGUMENT_DEPTH) throw new ArgumentsTooDeepError();
	let value: unknown;
	try {
		value = JSON.parse(json);
	} catch {
		return { arguments: parseStreamingArguments(json), complete: false };
	}
	return { arguments: asArguments(value) ?? {}, complete: true };
}

/**
 * The final arguments of a tool call: exactly `JSON.parse` of the complete text, `{}` for an
 * empty input. Text that is not valid JSON (a call cut off by the output limit) gets the
 * best partial reading instead, so the call is still inspectable. Throws
 * {@link ArgumentsTooDeepError} for text nested deeper than {@link MAX_ARGUMENT_DEPTH}.
 *
 * @example
 * parseFinalArguments('{"q":"caf\\u00e9"}'); // { q: "café" }
 * parseFinalArguments(""); // {}
 */
export function parseFinalArguments(json: string): Arguments {
	return readFinalArguments(json).arguments;
}
