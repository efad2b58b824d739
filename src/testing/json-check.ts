/**
 * Whether a value is plain JSON, as everything an agent holds must be: `agent.snapshot()` is
 * JSON (a store writes it, `Agent.restore` reads it back), so a tool result whose details hold a
 * BigInt makes the snapshot throw, and one that holds a Date or a Set comes back, after a
 * restore, as something else than your code put there.
 */
import { describeError } from "../util/describe-error.js";
import { propertyStep } from "../util/json-writable.js";

function keyPath(at: string, key: string): string {
	return `${at}${propertyStep(key)}`;
}

/** What JSON makes of an object that is not a plain object or array, or undefined for one it keeps as it is. */
function lostObject(value: object): string | undefined {
	if (value instanceof Date) return "a Date (JSON writes it as a string, which a restored agent reads back)";
	if (value instanceof Map || value instanceof Set || value instanceof WeakMap || value instanceof WeakSet) return `a ${value.constructor.name} (JSON writes it as {}: its entries are lost)`;
	if (value instanceof Error) return `an ${value.constructor.name} (JSON writes it as {}: its message is lost)`;
	if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return `a ${value.constructor.name} (JSON writes it as an object of indices, or {})`;
	// An object that says how it is written (toJSON) chose its JSON: not ours to judge.
	if (typeof (value as { toJSON?: unknown }).toJSON === "function") return undefined;
	const prototype = Object.getPrototypeOf(value) as object | null;
	if (prototype === null || prototype === Object.prototype || Array.isArray(value)) return undefined;
	const name = (prototype as { constructor?: { name?: string } }).constructor?.name || "class instance";
	return `a ${name} (JSON keeps only its own fields: a restored agent reads a plain object, without its methods)`;
}

/**
 * Where `value` is not plain JSON, each as `path is what (what JSON makes of it)`, at most
 * `limit` of them; empty when JSON writes it and reads it back as it is (`undefined` fields,
 * which JSON leaves out, are not counted: nothing reads them back differently).
 *
 * @example
 * jsonProblems({ details: { total: 10n, at: new Date(0) } }, "result", 3);
 * // ["result.details.total is a BigInt (JSON.stringify throws on it)", "result.details.at is a Date (…)"]
 */
export function jsonProblems(value: unknown, at: string, limit = 3): string[] {
	const found: string[] = [];
	const ancestors: object[] = [];
	const visit = (each: unknown, path: string): void => {
		if (found.length >= limit) return;
		switch (typeof each) {
			case "bigint":
				found.push(`${path} is a BigInt (JSON.stringify throws on it)`);
				return;
			case "function":
			case "symbol":
				found.push(`${path} is a ${typeof each} (JSON leaves it out)`);
				return;
			case "number":
				if (!Number.isFinite(each)) found.push(`${path} is ${each} (JSON writes it as null)`);
				return;
			case "object":
				break;
			default:
				return;
		}
		if (each === null) return;
		if (ancestors.includes(each)) {
			found.push(`${path} refers back to an object that contains it (JSON.stringify throws on a cycle)`);
			return;
		}
		const lost = lostObject(each);
		if (lost) {
			found.push(`${path} is ${lost}`);
			return;
		}
		ancestors.push(each);
		if (Array.isArray(each)) each.forEach((item, index) => visit(item, `${path}[${index}]`));
		else for (const [key, field] of Object.entries(each)) visit(field, keyPath(path, key));
		ancestors.pop();
	};
	visit(value, at);
	return found;
}

/**
 * `snapshot` as JSON text, or why it cannot be written (the `snapshot` rule's message, naming
 * where the value JSON refuses sits): what a store would do with it, for the walk and the fuzzer.
 *
 * @example
 * const written = writtenSnapshot(agent.snapshot());
 * if ("unwritable" in written) report(violation("snapshot", written.unwritable));
 */
export function writtenSnapshot(snapshot: unknown): { json: string } | { unwritable: string } {
	try {
		return { json: JSON.stringify(snapshot) };
	} catch (error) {
		return { unwritable: `agent.snapshot() cannot be written as JSON (${describeError(error)}): ${jsonProblems(snapshot, "snapshot").join("; ")}` };
	}
}
