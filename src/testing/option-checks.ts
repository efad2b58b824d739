/**
 * The numeric options of `exploreAgent` and `fuzzAgent`, checked alike: a count or a duration
 * that would run nothing (0, or NaN from an unset `Number(process.env.RUNS)`) makes a test pass
 * without testing anything, so both refuse it with the same words.
 */

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
		throw new RangeError(`agentchart/testing: ${caller}'s ${name} must be ${rule.integer ? "an integer" : "a number"} of at least ${rule.min}, got ${value}`);
	}
}
