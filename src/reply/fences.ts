/**
 * Markdown fenced code blocks (``` and ~~~), as CommonMark defines them: an opening line of
 * three or more backticks or tildes indented by at most three spaces, closed by a line of the
 * same character, at least as long, followed by nothing but whitespace.
 */

/** An open fence: its marker character and length, and the opening line for reopening it. */
export interface FenceMarker {
	char: "`" | "~";
	length: number;
	/** Indentation before the marker. */
	indent: string;
	/** The full opening line without its newline, e.g. "```ts". */
	openLine: string;
}

/** A fenced block inside a text. `end` is the index just after the closing marker line's text. */
export interface FenceSpan {
	start: number;
	/** Exclusive end; for an unclosed fence the text length. */
	end: number;
	closed: boolean;
	marker: FenceMarker;
}

const FENCE_LINE = /^( {0,3})(`{3,}|~{3,})(.*)$/;

/**
 * Classifies one complete line (without its newline) against the currently open fence.
 *
 * @example
 * classifyFenceLine("```ts", null);               // { kind: "open", marker: { char: "`", length: 3, ... } }
 * classifyFenceLine("```", openMarker);           // { kind: "close" }
 * classifyFenceLine("``` not a close", openMarker); // { kind: "none" }
 */
export function classifyFenceLine(
	line: string,
	open: FenceMarker | null,
): { kind: "open"; marker: FenceMarker } | { kind: "close" } | { kind: "none" } {
	const match = FENCE_LINE.exec(line.endsWith("\r") ? line.slice(0, -1) : line);
	if (!match) return { kind: "none" };
	const indent = match[1] ?? "";
	const run = match[2] ?? "";
	const rest = match[3] ?? "";
	const char = run[0] === "~" ? "~" : "`";
	if (open) {
		// CommonMark: only whitespace may follow a closing fence (a line like "``` text" is content).
		const closes = char === open.char && run.length >= open.length && /^[ \t]*$/.test(rest);
		return closes ? { kind: "close" } : { kind: "none" };
	}
	// A backtick fence's info string may not contain backticks (that is inline code instead).
	if (char === "`" && rest.includes("`")) return { kind: "none" };
	return { kind: "open", marker: { char, length: run.length, indent, openLine: line.replace(/\r$/, "") } };
}

/**
 * True when `partial`, the beginning of a line whose end has not arrived yet, could still turn
 * out to be a fence line. Streaming filters hold such a line back until it is complete.
 *
 * @example
 * couldBecomeFenceLine("``", null);     // true: a third backtick may follow
 * couldBecomeFenceLine("``x", null);    // false
 */
export function couldBecomeFenceLine(partial: string, open: FenceMarker | null): boolean {
	const match = /^( {0,3})(`+|~+)(.*)$/.exec(partial);
	if (!match) return /^ {0,3}$/.test(partial);
	const run = match[2] ?? "";
	const rest = match[3] ?? "";
	if (run.length < 3) return rest === "";
	if (open) return /^[ \t\r]*$/.test(rest);
	return !(run[0] === "`" && rest.includes("`"));
}

/**
 * Finds the fenced blocks of a text in one pass.
 *
 * @example
 * parseFenceSpans("a\n```js\nx\n```\nb"); // [{ start: 2, end: 14, closed: true, marker: {...} }]
 */
export function parseFenceSpans(text: string): FenceSpan[] {
	const spans: FenceSpan[] = [];
	let open: { start: number; marker: FenceMarker } | null = null;
	let lineStart = 0;
	while (lineStart <= text.length) {
		const newline = text.indexOf("\n", lineStart);
		const lineEnd = newline === -1 ? text.length : newline;
		const line = text.slice(lineStart, lineEnd);
		const kind = classifyFenceLine(line, open?.marker ?? null);
		if (kind.kind === "open") open = { start: lineStart, marker: kind.marker };
		else if (kind.kind === "close" && open) {
			spans.push({ start: open.start, end: lineEnd, closed: true, marker: open.marker });
			open = null;
		}
		if (newline === -1) break;
		lineStart = newline + 1;
	}
	if (open) spans.push({ start: open.start, end: text.length, closed: false, marker: open.marker });
	return spans;
}

/**
 * The line that closes a fence: its marker, as long as the opening one, at the same indentation.
 *
 * @example
 * fenceCloseLine({ char: "`", length: 4, indent: "", openLine: "````md" }); // "````"
 */
export function fenceCloseLine(marker: FenceMarker): string {
	return `${marker.indent}${marker.char.repeat(marker.length)}`;
}

/**
 * The line that closes the fence a text leaves open at its end, or `undefined` when every fence
 * it opens is closed. A block reply is a chat message of its own: a fence left open there (the
 * model was cut off, or its text ended inside a code block) turns the rest of the conversation
 * into code in the chat client. One pass over the lines, no spans built.
 *
 * @example
 * closingFenceLine("Run:\n\n```sh\nnpm t"); // "```"
 * closingFenceLine("```sh\nnpm t\n```");     // undefined
 */
export function closingFenceLine(text: string): string | undefined {
	let open: FenceMarker | null = null;
	let lineStart = 0;
	while (lineStart <= text.length) {
		const newline = text.indexOf("\n", lineStart);
		const lineEnd = newline === -1 ? text.length : newline;
		const kind = classifyFenceLine(text.slice(lineStart, lineEnd), open);
		if (kind.kind === "open") open = kind.marker;
		else if (kind.kind === "close") open = null;
		if (newline === -1) break;
		lineStart = newline + 1;
	}
	return open ? fenceCloseLine(open) : undefined;
}

/**
 * The text with the fence it leaves open at its end closed (see {@link closingFenceLine}),
 * otherwise unchanged.
 *
 * @example
 * withOpenFenceClosed("```sh\nnpm t"); // "```sh\nnpm t\n```"
 */
export function withOpenFenceClosed(text: string): string {
	const closeLine = closingFenceLine(text);
	return closeLine === undefined ? text : `${text}\n${closeLine}`;
}

/**
 * The fence that contains a break at `index` (a cut between `index - 1` and `index`), if any.
 * A cut at the very end of an unclosed fence is inside it: the fence is still open there.
 *
 * @example
 * fenceAt(parseFenceSpans("```\nabc\n```"), 5); // the span: cutting there splits the block
 */
export function fenceAt(spans: readonly FenceSpan[], index: number): FenceSpan | undefined {
	for (const span of spans) {
		if (index > span.start && (index < span.end || (!span.closed && index <= span.end))) return span;
	}
	return undefined;
}
