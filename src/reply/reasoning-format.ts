/**
 * How reasoning looks in a chat channel: a "Reasoning:" header and each line in underscores
 * (italics that survive channels, such as Telegram, where emphasis cannot span lines).
 */

/**
 * Formats reasoning text for a channel; "" when there is none.
 *
 * @example
 * formatReasoningMessage("Because it helps\n\nand it is short");
 * // "Reasoning:\n_Because it helps_\n\n_and it is short_"
 */
export function formatReasoningMessage(reasoning: string): string {
	const trimmed = reasoning.trim();
	if (trimmed === "") return "";
	const lines = trimmed.split("\n").map((line) => (line.trim() === "" ? "" : `_${line.trim()}_`));
	return `Reasoning:\n${lines.join("\n")}`;
}

/**
 * {@link formatReasoningMessage} of reasoning that streams, kept up to date piece by piece: each
 * piece costs its own length, not the length of all the reasoning before it (formatting the whole
 * text again on every delta made a 40,000-delta reasoning stream take seconds). Blocks of native
 * reasoning are separated as `MessageAssembly` joins them: each trimmed, one blank line between.
 *
 * @example
 * const format = new StreamingReasoningFormat();
 * format.append("Because it helps\n");
 * format.append("\nand it is short");
 * format.text; // "Reasoning:\n_Because it helps_\n\n_and it is short_"
 */
export class StreamingReasoningFormat {
	/** The formatted lines from the first line with text up to the last complete line with text. */
	#committed = "";
	/** Blank complete lines after `#committed`. */
	#blankLines = 0;
	/** A block ended after `#committed`: the next line with text comes after exactly one blank line. */
	#blockEnded = false;
	/** The incomplete last line, without its leading and trailing whitespace. */
	#line = "";
	/** Whitespace after `#line`: inside the line if more text follows, dropped otherwise. */
	#lineTrail = "";

	/**
	 * Adds reasoning text; true when the formatted text changed (whitespace and line ends change
	 * it only once text follows them).
	 */
	append(piece: string): boolean {
		let changed = false;
		let start = 0;
		for (let end = piece.indexOf("\n"); end !== -1; end = piece.indexOf("\n", start)) {
			changed = this.#addToLine(piece.slice(start, end)) || changed;
			this.#endLine();
			start = end + 1;
		}
		return this.#addToLine(start === 0 ? piece : piece.slice(start)) || changed;
	}

	/** Ends a block of native reasoning: its trailing blank lines are dropped, and the next block's text follows after one blank line. */
	endBlock(): void {
		this.#endLine();
		this.#blankLines = 0;
		this.#blockEnded = this.#committed !== "";
	}

	/** The formatted reasoning so far; "" when there is none. */
	get text(): string {
		const line = this.#line === "" ? "" : `_${this.#line}_`;
		const body = line === "" ? this.#committed : this.#committed === "" ? line : `${this.#committed}${this.#separator()}${line}`;
		return body === "" ? "" : `Reasoning:\n${body}`;
	}

	#separator(): string {
		return "\n".repeat((this.#blockEnded ? 1 : this.#blankLines) + 1);
	}

	#addToLine(segment: string): boolean {
		const text = segment.trimEnd();
		if (text === "") {
			if (this.#line !== "") this.#lineTrail += segment;
			return false;
		}
		this.#line = this.#line === "" ? text.trimStart() : `${this.#line}${this.#lineTrail}${text}`;
		this.#lineTrail = segment.slice(text.length);
		return true;
	}

	#endLine(): void {
		if (this.#line === "") {
			if (this.#committed !== "") this.#blankLines += 1;
			return;
		}
		const line = `_${this.#line}_`;
		this.#committed = this.#committed === "" ? line : `${this.#committed}${this.#separator()}${line}`;
		this.#blankLines = 0;
		this.#blockEnded = false;
		this.#line = "";
		this.#lineTrail = "";
	}
}
