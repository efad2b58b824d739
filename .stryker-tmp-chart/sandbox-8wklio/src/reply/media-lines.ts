/**
 * `MEDIA:` lines: a model (or a tool) attaches media by writing `MEDIA: <url-or-path>` on a line
 * of its own. Only http(s) URLs, `file://` URLs and plain paths without `..` or `~` count; the
 * line is removed from the text either way, so a bad path never shows up as prose.
 */
// @ts-nocheck


const WRAPPERS = /^[`'"<(]+|[`'">),]+$/g;

/**
 * True for a media reference agentchart will pass on: an http(s) or file URL, or a path that
 * does not climb out of its directory.
 *
 * @example
 * isAcceptedMediaReference("https://example.com/a.png"); // true
 * isAcceptedMediaReference("../secret.png");             // false
 */
export function isAcceptedMediaReference(reference: string): boolean {
	if (/^https?:\/\/\S+$/i.test(reference)) return true;
	if (/^file:\/\/\S+$/i.test(reference)) return !reference.includes("..");
	if (reference.startsWith("~") || reference.includes("..")) return false;
	return /^(\.{0,1}\/)?[\w\-./]+\.[A-Za-z0-9]{1,8}$/.test(reference) || reference.startsWith("/");
}

/**
 * The media references of one `MEDIA:` line (several may share a line).
 *
 * @example
 * parseMediaLine("MEDIA: `https://x.test/a.png` /tmp/b.mp3"); // ["https://x.test/a.png", "/tmp/b.mp3"]
 */
export function parseMediaLine(line: string): string[] {
	const body = line.trim().replace(/^MEDIA:/, "");
	return body
		.split(/\s+/)
		.map((token) => token.replace(WRAPPERS, ""))
		.filter((token) => token !== "" && isAcceptedMediaReference(token));
}
