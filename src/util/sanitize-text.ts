const LONE_SURROGATE = "[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]";
const loneSurrogates = new RegExp(LONE_SURROGATE, "g");
/** Without the global flag: `test` keeps no position between calls. */
const loneSurrogate = new RegExp(LONE_SURROGATE);

/**
 * Replaces unpaired UTF-16 surrogates (half an emoji, from a cut string or a tool's bytes) with
 * U+FFFD: they make a request body invalid JSON for most model APIs, which refuse the whole
 * request.
 *
 * @example
 * sanitizeText("a\uD800b"); // "a\uFFFDb"
 */
export function sanitizeText(text: string): string {
	return text.replace(loneSurrogates, "\uFFFD");
}

/**
 * JSON data (a tool call's arguments) with {@link sanitizeText} applied to every string and key:
 * JSON.stringify writes an unpaired surrogate as a `\uD800` escape, which the APIs refuse as
 * they refuse the raw character. Returns the value itself when it has none, a copy otherwise.
 *
 * @example
 * sanitizeJsonStrings({ path: "a\uD800.txt", n: 1 }); // { path: "a\uFFFD.txt", n: 1 }
 */
export function sanitizeJsonStrings<T>(value: T): T {
	if (typeof value === "string") return (loneSurrogate.test(value) ? sanitizeText(value) : value) as T;
	if (typeof value !== "object" || value === null) return value;
	if (Array.isArray(value)) {
		let copy: unknown[] | undefined;
		for (let index = 0; index < value.length; index++) {
			const item: unknown = value[index];
			const clean = sanitizeJsonStrings(item);
			if (clean !== item) (copy ??= value.slice())[index] = clean;
		}
		return (copy ?? value) as T;
	}
	let copy: Record<string, unknown> | undefined;
	const object = value as Record<string, unknown>;
	const keys = Object.keys(object);
	for (const key of keys) {
		const clean = sanitizeJsonStrings(object[key]);
		if (clean !== object[key] || loneSurrogate.test(key)) {
			copy = {};
			break;
		}
	}
	if (!copy) return value;
	for (const key of keys) {
		// defineProperty: a "__proto__" key (an own key after JSON.parse) stays a key, not the copy's prototype.
		Object.defineProperty(copy, sanitizeText(key), { value: sanitizeJsonStrings(object[key]), writable: true, enumerable: true, configurable: true });
	}
	return copy as T;
}
