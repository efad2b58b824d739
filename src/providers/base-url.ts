/**
 * A provider's base URL is checked before anything is sent. Without a scheme
 * (`127.0.0.1:18080/v1`) the URL parser reads the host as a scheme, or fails, and the call
 * would go wrong far from the cause ("No API key for provider ...", a hosted service assumed).
 */

/**
 * What is wrong with a base URL for an HTTP API, or undefined when it is an `http://` or
 * `https://` URL.
 *
 * @example
 * baseUrlProblem("127.0.0.1:18080/v1");
 * // 'the base URL "127.0.0.1:18080/v1" has no http:// or https:// scheme: use http://127.0.0.1:18080/v1'
 * baseUrlProblem("http://127.0.0.1:18080/v1"); // undefined
 */
export function baseUrlProblem(baseUrl: string): string | undefined {
	const trimmed = baseUrl.trim();
	if (trimmed === "") return "the base URL is empty: give the server's API root, e.g. http://127.0.0.1:11434/v1";
	let protocol: string | undefined;
	try {
		protocol = new URL(trimmed).protocol;
	} catch {
		protocol = undefined;
	}
	if (protocol === "http:" || protocol === "https:") return undefined;
	// "localhost:8080/v1" parses, with "localhost:" as its scheme; "127.0.0.1:8080/v1" does not parse.
	if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
		return `the base URL "${baseUrl}" has no http:// or https:// scheme: use http://${trimmed}`;
	}
	return `the base URL "${baseUrl}" is not an http:// or https:// URL`;
}
