/**
 * Whether `JSON.stringify` can write a value, without writing it: what a store must be able to
 * do with every journal entry and snapshot. Only what makes it throw counts (a `BigInt`, a cycle,
 * a `toJSON` or a getter that throws); what it writes lossily (a `Date`, a `Map`, a function) is
 * written, as the file store would write it.
 */
import { describeError } from "./describe-error.js";

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const INDEX = /^(0|[1-9]\d*)$/;

/**
 * A property's name as a step of a path, as JavaScript would write it: `.name`, `["odd key"]`.
 *
 * @example
 * `result${propertyStep("details")}${propertyStep("odd key")}`; // 'result.details["odd key"]'
 */
export function propertyStep(name: string): string {
	return IDENTIFIER.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
}

/** A key met by the walk as a step of its path: a typed array's index as `[3]`, else {@link propertyStep}. */
function keyStep(name: string): string {
	return INDEX.test(name) ? `[${name}]` : propertyStep(name);
}

/**
 * Why `JSON.stringify(value)` would throw, naming where from `at` ("result.details.total is a
 * BigInt"), or undefined when it writes it. Walks the value as `JSON.stringify` does (calling
 * `toJSON`), so a `BigInt` whose prototype has a `toJSON` is writable, as it is there.
 *
 * @example
 * unwritableJson({ details: { total: 10n } }, "result"); // "result.details.total is a BigInt"
 * unwritableJson({ at: new Date(0) }, "result"); // undefined: JSON writes a Date (as text)
 */
export function unwritableJson(value: unknown, at: string): string | undefined {
	try {
		const where = visit(value, "", []);
		return where === undefined ? undefined : `${at}${where}`;
	} catch (error) {
		return `${at} could not be read for JSON: ${describeError(error)}`;
	}
}

/** The path below `value` and what is wrong there, or undefined. `key`: the one `toJSON` is called with. */
function visit(value: unknown, key: string | number, ancestors: object[]): string | undefined {
	if ((typeof value === "object" && value !== null) || typeof value === "bigint") {
		const toJSON = (value as { toJSON?: unknown }).toJSON;
		if (typeof toJSON === "function") value = (toJSON as (key: string) => unknown).call(value, String(key));
	}
	// A boxed BigInt is unboxed by JSON, then refused as the BigInt is.
	if (typeof value === "bigint" || value instanceof BigInt) return " is a BigInt";
	if (typeof value !== "object" || value === null) return undefined;
	if (ancestors.includes(value)) return " is a cycle (it contains itself)";
	ancestors.push(value);
	if (Array.isArray(value)) {
		for (let index = 0; index < value.length; index++) {
			const below = visit(value[index], index, ancestors);
			if (below !== undefined) return `[${index}]${below}`;
		}
	} else {
		const object = value as Record<string, unknown>;
		for (const name of Object.keys(object)) {
			const below = visit(object[name], name, ancestors);
			if (below !== undefined) return `${keyStep(name)}${below}`;
		}
	}
	ancestors.pop();
	return undefined;
}
