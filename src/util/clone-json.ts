import { setOwnKey } from "./own-keys.js";

/**
 * A deep copy of tool arguments, the same as `structuredClone` gives for the data a model sends
 * (objects, arrays, strings, numbers, booleans, null) at a fraction of its cost: structuredClone
 * serializes and deserializes through V8's serializer, about a microsecond for a small object,
 * and every tool call's arguments are copied before they are validated. Anything else (a Date, a
 * Map, a class instance, a function, a nesting deeper than any model writes, which may be a
 * cycle) is left to structuredClone, so its results and errors stay structuredClone's.
 *
 * @example
 * const copy = cloneJson({ path: "a.txt", lines: [1, 2] }); // equal, shares nothing
 */
export function cloneJson<T>(value: T): T {
	if (typeof value !== "object" || value === null) return typeof value === "function" || typeof value === "symbol" ? structuredClone(value) : value;
	const copy = copyPlain(value, 0);
	return (copy === NOT_PLAIN ? structuredClone(value) : copy) as T;
}

/** Returned by {@link copyPlain} for data it does not copy itself. */
const NOT_PLAIN: unique symbol = Symbol("not plain JSON data");

/** Nesting beyond this is handed to structuredClone, which also copes with cycles. */
const MAX_DEPTH = 64;

function copyPlain(value: unknown, depth: number): unknown {
	if (value === null) return null;
	switch (typeof value) {
		case "string":
		case "number":
		case "boolean":
		case "undefined":
		case "bigint":
			return value;
		case "object":
			break;
		default:
			return NOT_PLAIN;
	}
	if (depth >= MAX_DEPTH) return NOT_PLAIN;
	const prototype: unknown = Object.getPrototypeOf(value);
	if (prototype === Array.prototype) {
		const array = value as unknown[];
		const copy: unknown[] = [];
		let present = 0;
		for (let index = 0; index < array.length; index++) {
			// A hole stays a hole, as structuredClone keeps it.
			if (!(index in array)) {
				copy.length = index + 1;
				continue;
			}
			const item = copyPlain(array[index], depth + 1);
			if (item === NOT_PLAIN) return NOT_PLAIN;
			copy[index] = item;
			present++;
		}
		// structuredClone keeps an array's own non-index properties too; model data has none.
		return Object.keys(array).length === present ? copy : NOT_PLAIN;
	}
	if (prototype !== Object.prototype && prototype !== null) return NOT_PLAIN;
	const object = value as Record<string, unknown>;
	const copy: Record<string, unknown> = {};
	for (const key of Object.keys(object)) {
		const item = copyPlain(object[key], depth + 1);
		if (item === NOT_PLAIN) return NOT_PLAIN;
		setOwnKey(copy, key, item);
	}
	return copy;
}
