import { inspect } from "node:util";

/**
 * A readable one-line description of anything that was thrown or rejected: an `Error`'s
 * message; a string as it is; any other value shown as it is (`{ code: 42 }`, not
 * `[object Object]`), because whoever reads it (the model, in a tool result) needs its content.
 *
 * @example
 * describeError(new Error("disk full")); // "disk full"
 * describeError({ code: "EPERM", path: "/etc" }); // "{ code: 'EPERM', path: '/etc' }"
 */
export function describeError(error: unknown): string {
	if (error instanceof Error) return error.message || error.name;
	if (typeof error === "string") return error;
	return inspect(error, { depth: 4, breakLength: Number.POSITIVE_INFINITY, maxStringLength: 2_000 });
}
