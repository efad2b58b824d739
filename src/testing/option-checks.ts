/**
 * The arguments of `exploreAgent` and `fuzzAgent`, checked alike: a count or a duration that
 * would run nothing (0, or NaN from an unset `Number(process.env.RUNS)`), or an option misspelt
 * and so ignored, makes a test pass without testing what it says, so both refuse it with the
 * same words.
 */
import { shown, unknownKeys } from "../agent-input.js";

/**
 * A count or duration the caller gave to `caller`: a number, at least `min`, an integer if
 * `integer`; undefined (the default) passes. Throws a TypeError for what is not a number, a
 * RangeError for the rest.
 *
 * @example
 * checkNumberOption("exploreAgent", "maxPaths", options.maxPaths, { min: 1, integer: true });
 * // RangeError: agentchart/testing: exploreAgent's maxPaths must be an integer of at least 1, got 0
 */
export function checkNumberOption(caller: "exploreAgent" | "fuzzAgent", name: string, value: number | undefined, rule: { min: number; integer: boolean }): void {
	if (value === undefined) return;
	if (typeof value !== "number") throw new TypeError(`agentchart/testing: ${caller}'s ${name} must be a number, got ${typeof value}`);
	// NaN (a `Number(process.env.RUNS)` unset) and 0 would run nothing and report no violation.
	if (!Number.isFinite(value) || value < rule.min || (rule.integer && !Number.isInteger(value))) {
		throw new RangeError(`agentchart/testing: ${caller}'s ${name} must be ${rule.integer ? "an integer" : "a finite number"} of at least ${rule.min}, got ${value}`);
	}
}

/**
 * The options object `caller` was given, checked against `known` (every option it takes). A
 * misspelt option (`{ run: 500 }` for `runs`, `{ convertToLLM }` for `convertToLlm`) is refused
 * rather than ignored: ignored, the defaults would run and the test would pass having tested less
 * than it says. `nothing` ends the message: what did not happen. Throws a TypeError.
 *
 * @example
 * refuseUnknownOptions("fuzzAgent", { run: 500 }, ["runs", "seed"], "nothing was run");
 * // TypeError: agentchart/testing: fuzzAgent has no option "run" (its options: runs, seed); nothing was run
 */
export function refuseUnknownOptions(caller: string, options: unknown, known: readonly string[], nothing: string): void {
	if (options === undefined) return;
	if (typeof options !== "object" || options === null || Array.isArray(options)) {
		throw new TypeError(`agentchart/testing: ${caller}'s options must be an object, got ${shown(options)}`);
	}
	const unknown = unknownKeys(options, known);
	if (unknown !== undefined) throw new TypeError(`agentchart/testing: ${caller} has no option ${unknown} (its options: ${known.join(", ")}); ${nothing}`);
}

/**
 * The factory and the options `caller` was given (see {@link refuseUnknownOptions}). Throws a
 * TypeError.
 *
 * @example
 * checkKitCall("fuzzAgent", agent, {}, ["runs", "seed"]);
 * // TypeError: agentchart/testing: fuzzAgent's first argument must be your factory, a function that builds … got an instance of Agent
 */
export function checkKitCall(caller: "exploreAgent" | "fuzzAgent", factory: unknown, options: unknown, known: readonly string[]): void {
	if (typeof factory !== "function") {
		// An agent passed for the factory is the likely slip: say what it was, not its fields.
		const maker = typeof factory === "object" && factory !== null ? (factory.constructor as { name?: string } | undefined)?.name : undefined;
		const got = maker === undefined ? shown(factory) : maker === "Object" ? "an object" : `an instance of ${maker}`;
		throw new TypeError(`agentchart/testing: ${caller}'s first argument must be your factory, a function that builds a new agent each time it is called, (kit) => new Agent(kit.options(yourOptions)); got ${got}`);
	}
	refuseUnknownOptions(caller, options, known, "nothing was run");
}

/** The kinds of value an option may hold, as an error names them. */
export type OptionKind = "boolean" | "string" | "function" | "list" | "true, false or \"everywhere\"";

function isKind(value: unknown, kind: OptionKind): boolean {
	switch (kind) {
		case "list":
			return Array.isArray(value);
		case 'true, false or "everywhere"':
			return typeof value === "boolean" || value === "everywhere";
		default:
			return typeof value === kind;
	}
}

/**
 * The options of `caller` that are not counts, each checked to be of its kind: a misspelt value
 * (`restores: "everwhere"`) read as truthy, or one of another type, would run the defaults or
 * fail deep inside the run with a message that names no option. Undefined passes. Throws a
 * TypeError.
 *
 * @example
 * checkOptionKinds("exploreAgent", { restores: "everwhere" }, { restores: 'true, false or "everywhere"' });
 * // TypeError: agentchart/testing: exploreAgent's restores must be true, false or "everywhere", got "everwhere"
 */
export function checkOptionKinds(caller: "exploreAgent" | "fuzzAgent", options: object, kinds: Readonly<Record<string, OptionKind>>): void {
	for (const [name, kind] of Object.entries(kinds)) {
		const value: unknown = (options as Record<string, unknown>)[name];
		if (value === undefined || isKind(value, kind)) continue;
		const article = kind === "list" ? "a list" : kind === "boolean" || kind === "string" || kind === "function" ? `a ${kind}` : kind;
		throw new TypeError(`agentchart/testing: ${caller}'s ${name} must be ${article}, got ${shown(value)}`);
	}
}
