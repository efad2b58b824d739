/**
 * What `createAgentInspector` takes, checked when the inspector is made: a limit that is not a
 * number used to reach the ring buffer as is (the error named its internals), and one that made
 * no sense (`stringLength: -3`, `depth: -1`, `budget: "5"`) was taken, cutting every string of
 * every record to nothing without a word. A misspelt option (`capacty`) was ignored.
 */
import { shown } from "../agent-input.js";
import type { AgentInspectorOptions } from "./inspector.js";
import type { PreviewLimits } from "./summarize.js";

const OPTIONS: readonly string[] = ["capacity", "historySize", "historyBytes", "now", "schedule", "payload"] satisfies (keyof AgentInspectorOptions)[];
const LIMITS: readonly string[] = ["depth", "stringLength", "arrayItems", "objectKeys", "budget", "characters"] satisfies (keyof PreviewLimits)[];

function problem(path: string, why: string, got: unknown): TypeError {
	return new TypeError(`createAgentInspector(options): ${path} ${why}, got ${shown(got)}`);
}

function unknownKeys(value: object, known: readonly string[], path: string): void {
	const unknown = Object.keys(value).filter((key) => !known.includes(key));
	if (unknown.length > 0) throw new TypeError(`createAgentInspector(options): unknown ${path} ${unknown.map((key) => JSON.stringify(key)).join(", ")} (known: ${known.join(", ")})`);
}

/**
 * Throws a `TypeError` naming the option for anything the inspector could not work with.
 *
 * @example
 * checkInspectorOptions({ capacity: 1_000, payload: { stringLength: 20_000 } }); // fine
 * checkInspectorOptions({ capacity: "1000" }); // TypeError: createAgentInspector(options): capacity must be a whole number of at least 1, got "1000"
 */
export function checkInspectorOptions(options: unknown): asserts options is AgentInspectorOptions {
	if (options === undefined) return;
	if (typeof options !== "object" || options === null || Array.isArray(options)) throw problem("options", "must be an object of options", options);
	unknownKeys(options, OPTIONS, "option");
	const given = options as Record<string, unknown>;
	for (const name of ["capacity", "historySize"]) {
		const value = given[name];
		if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 1)) throw problem(name, "must be a whole number of at least 1", value);
	}
	const bytes = given["historyBytes"];
	if (bytes !== undefined && !(typeof bytes === "number" && bytes > 0 && !Number.isNaN(bytes))) throw problem("historyBytes", "must be a number of bytes above 0", bytes);
	for (const name of ["now", "schedule"]) {
		const value = given[name];
		if (value !== undefined && typeof value !== "function") throw problem(name, "must be a function", value);
	}
	const payload = given["payload"];
	if (payload === undefined) return;
	if (typeof payload !== "object" || payload === null || Array.isArray(payload)) throw problem("payload", "must be an object of preview limits", payload);
	unknownKeys(payload, LIMITS, "payload limit");
	for (const [name, value] of Object.entries(payload)) {
		// Infinity keeps everything: a whole tool result, however long.
		if (value !== undefined && !((Number.isInteger(value) && value >= 0) || value === Number.POSITIVE_INFINITY)) throw problem(`payload.${name}`, "must be a whole number of at least 0 (or Infinity)", value);
	}
}
