/**
 * Checks for values read from JSON that arrived from outside (a provider's stream, an error body,
 * an MCP server's answer, options a caller wrote): it parses to anything, so each field is checked
 * before it is used, and one that is not what was expected is skipped instead of thrown on.
 */

/**
 * Whether a value is a plain JSON object: `typeof` says "object" for `null` and for an array as
 * well, and neither has the named fields a reader goes on to look for.
 *
 * @example
 * isRecord({ type: "text" }); // true
 * isRecord([{ type: "text" }]); // false
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The value as an object to read fields from, or undefined for anything else, so that a missing
 * or malformed part chains on with `?.` and `??` instead of a check at every step.
 *
 * @example
 * asRecord(chunk["usage"])?.["prompt_tokens"]; // undefined when usage is null, a number or absent
 */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
	return isRecord(value) ? value : undefined;
}

/**
 * A non-empty text the server sent, or undefined for anything else: SDKs pass the server's JSON
 * through unchecked, in stream events as in error bodies, and an empty id, model or delta is as
 * good as none.
 *
 * @example
 * nonEmptyText("overloaded_error"); // "overloaded_error"
 * nonEmptyText({ code: 7 }); // undefined
 */
export function nonEmptyText(value: unknown): string | undefined {
	return typeof value === "string" && value !== "" ? value : undefined;
}
