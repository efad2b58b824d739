/**
 * Reading and writing plain objects by their own keys only. A name that comes from outside (a
 * tool's name, a model id, a flag, a field of a stored snapshot) read as a property also finds
 * what every object inherits (`constructor`, `toString`), and `"__proto__"` written by assignment
 * sets the prototype instead of a key (see CONTRIBUTING.md, "Code").
 */

/**
 * The value `table` holds under `key` as its own property, or undefined: never one every object
 * inherits.
 *
 * @example
 * ownValue({ read: "📖" }, "constructor"); // undefined, where `table["constructor"]` is Object
 */
export function ownValue<V>(table: Readonly<Record<string, V>>, key: string): V | undefined {
	return Object.hasOwn(table, key) ? table[key] : undefined;
}

/**
 * Sets `key` of a plain object made as a copy as its own property, as JSON.parse and a spread
 * do: for "__proto__" (an own key of parsed JSON) an assignment would set the copy's prototype
 * instead, or do nothing.
 *
 * @example
 * setOwnKey(copy, "__proto__", 0); // Object.hasOwn(copy, "__proto__") === true
 */
export function setOwnKey(object: Record<string, unknown>, key: string, value: unknown): void {
	if (key === "__proto__") Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
	else object[key] = value;
}
