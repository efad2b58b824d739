/**
 * Replaces unpaired UTF-16 surrogates (half an emoji, from a cut string or a tool's bytes) with
 * U+FFFD: they make a request body invalid JSON for most model APIs, which refuse the whole
 * request.
 *
 * @example
 * sanitizeText("a\uD800b"); // "a\uFFFDb"
 */
export function sanitizeText(text: string): string {
	return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
}
