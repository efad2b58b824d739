/**
 * Reply directives: the inline control syntax a model uses to steer delivery.
 *
 * - `[[reply_to_current]]`, `[[reply_to:<id>]]`: thread the reply (sticky for the message).
 * - `[[audio_as_voice]]`: send audio media as a voice note.
 * - `MEDIA: <url-or-path>` at the start of a line, outside code fences: attach media.
 * - `NO_REPLY` as the whole answer: say nothing. A glued token (`NO_REPLYhello`) is dropped,
 *   `NO_REPLY: why` is kept as text.
 *
 * The filter also normalises whitespace outside code fences: no leading whitespace, no trailing
 * whitespace, at most one blank line in a row. Like the tag filter it holds back what it cannot
 * decide yet (an unclosed `[[`, a line that may be a `MEDIA:` line or a fence, a prefix of
 * `NO_REPLY`, trailing whitespace), so its output does not depend on how the text was split.
 */
import { classifyFenceLine, couldBecomeFenceLine, type FenceMarker } from "./fences.js";
import { parseMediaLine } from "./media-lines.js";

/**
 * The delivery directives found so far in a message.
 *
 * @example
 * const { replyToId, replyToCurrent, audioAsVoice }: ReplyDirectives = parseReplyDirectives("[[reply_to:msg-7]] On it.");
 */
export interface ReplyDirectives {
	replyToId?: string;
	replyToCurrent: boolean;
	replyToTag: boolean;
	audioAsVoice: boolean;
}

/**
 * The result of {@link parseReplyDirectives}.
 *
 * @example
 * const reply: ParsedReply = parseReplyDirectives(modelText);
 * if (!reply.isSilent) await chat.send(reply.text, { replyTo: reply.replyToId });
 */
export interface ParsedReply extends ReplyDirectives {
	text: string;
	mediaUrls: string[];
	/** The text was the silent token `NO_REPLY`. */
	isSilent: boolean;
}

const SILENT_TOKEN = "NO_REPLY";
const MEDIA_PREFIX = "MEDIA:";
const DIRECTIVE_AT = /\[\[([^\]\n]{0,60})\](\]?)/y;
const DIRECTIVE_PREFIX = /^\[\[[^\]\n]{0,60}$/;
const REPLY_TO_CURRENT = /^\s*reply_to_current\s*$/i;
const REPLY_TO_ID = /^\s*reply_to\s*:\s*([^\]\n]*?)\s*$/i;
const AUDIO_AS_VOICE = /^\s*audio_as_voice\s*$/i;
const PLAIN_RUN = /[^\s[]+/y;

function isWhitespace(char: string): boolean {
	return char === " " || char === "\t" || char === "\n" || char === "\r";
}

/**
 * A streaming filter for reply directives over visible (already tag-stripped) text.
 *
 * @example
 * const filter = new ReplyDirectiveFilter();
 * filter.push("[[reply_to_");        // "" (held back)
 * filter.push("current]] Hello");    // "Hello"
 * filter.directives.replyToCurrent;  // true
 */
export class ReplyDirectiveFilter {
	#pending = "";
	#finished = false;
	#started = false;
	#heldSpace = "";
	#removalGap = false;
	#silentChecked = false;
	#silent = false;
	#fence: FenceMarker | null = null;
	#atLineStart = true;
	#lineIndent = 0;
	#lineChecked = false;
	// Nothing of the current line was output yet; and a directive that began it was removed, so
	// the spaces after it would only indent the line's text.
	#lineEmpty = true;
	#afterLineStartDirective = false;
	#out = "";
	#media: string[] = [];
	/** The text ended where the model was cut off (see `finish`). */
	#cut = false;
	#directives: ReplyDirectives = { replyToCurrent: false, replyToTag: false, audioAsVoice: false };

	/** The directives seen so far (sticky for the rest of the text). */
	get directives(): ReplyDirectives {
		return { ...this.#directives };
	}

	/**
	 * The line or paragraph break held back after the last text (trailing whitespace waits until
	 * more text shows whether it is trailing): the last line is complete even though its break
	 * has not been output.
	 */
	get heldBreak(): "newline" | "paragraph" | undefined {
		if (!this.#started || this.#finished) return undefined;
		const newlines = this.#heldSpace.split("\n").length - 1;
		return newlines >= 2 ? "paragraph" : newlines === 1 ? "newline" : undefined;
	}

	/** True after `finish()` when the whole text was the silent token. */
	get isSilent(): boolean {
		return this.#finished && this.#silent && !this.#started;
	}

	/** True when the text so far is the silent token and nothing else (a `MEDIA:` line aside). */
	get silentSoFar(): boolean {
		return this.#silent && !this.#started;
	}

	/** Feeds visible text; returns the cleaned text that is now certain. */
	push(chunk: string): string {
		if (this.#finished) return "";
		this.#pending += chunk;
		this.#scan(false);
		return this.#take();
	}

	/**
	 * A content block of the text ended: a fence it left open ends with it, and an unclosed `[[` it
	 * ended with is text (returned, with what else that makes certain). Its separator, pushed before,
	 * has settled that already unless the text ended inside reasoning (the separator went there): a
	 * directive does not span blocks either way, and the block sent at its end must hold the line.
	 */
	endBlock(): string {
		this.#fence = null;
		this.#scan(false, true);
		return this.#take();
	}

	/**
	 * Ends the text, releasing held-back input (trailing whitespace is dropped). `cut`: the text
	 * stopped where the model was cut off (an abort, a failed stream): a `MEDIA:` line it was still
	 * writing may hold half a URL, and attaches nothing.
	 */
	finish(cut = false): string {
		if (this.#finished) return "";
		this.#cut = cut;
		this.#scan(true);
		this.#finished = true;
		return this.#take();
	}

	/** Media URLs found since the last call. */
	takeMediaUrls(): string[] {
		const media = this.#media;
		this.#media = [];
		return media;
	}

	#take(): string {
		const out = this.#out;
		this.#out = "";
		return out;
	}

	#separator(): string {
		if (!this.#started) return "";
		const held = this.#heldSpace;
		const newlines = held.split("\n").length - 1;
		if (newlines >= 2) return `\n\n${held.slice(held.lastIndexOf("\n") + 1)}`;
		if (newlines === 1) return held;
		if (this.#removalGap) return " ";
		return held;
	}

	#emit(text: string): void {
		if (text === "") return;
		this.#out += this.#separator() + text;
		this.#heldSpace = "";
		this.#removalGap = false;
		this.#started = true;
		this.#lineEmpty = false;
		this.#afterLineStartDirective = false;
	}

	#startLine(): void {
		this.#atLineStart = true;
		this.#lineIndent = 0;
		this.#lineChecked = false;
		this.#lineEmpty = true;
		this.#afterLineStartDirective = false;
	}

	#applyDirective(body: string): boolean {
		if (REPLY_TO_CURRENT.test(body)) {
			this.#directives.replyToCurrent = true;
			this.#directives.replyToTag = true;
			return true;
		}
		const replyToId = REPLY_TO_ID.exec(body)?.[1] ?? "";
		if (replyToId !== "") {
			this.#directives.replyToId = replyToId;
			this.#directives.replyToTag = true;
			return true;
		}
		if (AUDIO_AS_VOICE.test(body)) {
			this.#directives.audioAsVoice = true;
			return true;
		}
		return false;
	}

	/** `blockEnded`: decides an unclosed `[[` as `final` does (see {@link ReplyDirectiveFilter.endBlock}). */
	#scan(final: boolean, blockEnded = false): void {
		const text = this.#pending;
		const directiveFinal = final || blockEnded;
		let index = 0;
		while (index < text.length) {
			const char = text[index] ?? "";
			const newline = text.indexOf("\n", index);
			const lineEnd = newline === -1 ? text.length : newline;
			if (this.#fence) {
				// Inside a fence: verbatim, line by line; only a closing line ends it.
				const line = text.slice(index, lineEnd);
				if (this.#atLineStart) {
					if (newline === -1 && !directiveFinal && couldBecomeFenceLine(line, this.#fence)) break;
					if (classifyFenceLine(line, this.#fence).kind === "close") {
						this.#fence = null;
						this.#emit(line);
						if (newline !== -1) this.#heldSpace += "\n";
						index = newline === -1 ? text.length : newline + 1;
						if (newline !== -1) this.#startLine();
						else this.#atLineStart = false;
						continue;
					}
				}
				this.#emit(newline === -1 ? line : `${line}\n`);
				index = newline === -1 ? text.length : newline + 1;
				if (newline !== -1) this.#startLine();
				else this.#atLineStart = false;
				continue;
			}
			if (isWhitespace(char)) {
				if (this.#started && !(this.#afterLineStartDirective && char !== "\n")) this.#heldSpace += char;
				if (char === "\n") this.#startLine();
				else if (this.#atLineStart) this.#lineIndent += 1;
				index += 1;
				continue;
			}
			if (this.#atLineStart && !this.#lineChecked) {
				const line = text.slice(index, lineEnd);
				if ((char === "`" || char === "~") && this.#lineIndent <= 3) {
					if (newline === -1 && !directiveFinal && couldBecomeFenceLine(line, null)) break;
					const kind = classifyFenceLine(line, null);
					if (kind.kind === "open") {
						this.#fence = kind.marker;
						this.#emit(newline === -1 ? line : `${line}\n`);
						index = newline === -1 ? text.length : newline + 1;
						if (newline !== -1) this.#startLine();
						else this.#atLineStart = false;
						continue;
					}
				}
				if (line.startsWith(MEDIA_PREFIX)) {
					if (newline === -1 && !final) break;
					if (newline !== -1 || !this.#cut) this.#media.push(...parseMediaLine(line));
					// Drop the line with its indentation and newline, keeping the break before it.
					this.#heldSpace = this.#heldSpace.slice(0, this.#heldSpace.lastIndexOf("\n") + 1);
					index = newline === -1 ? text.length : newline + 1;
					this.#startLine();
					continue;
				}
				if (newline === -1 && !final && MEDIA_PREFIX.startsWith(line)) break;
				this.#lineChecked = true;
			}
			this.#atLineStart = false;
			if (!this.#started && !this.#silentChecked && char !== "[") {
				const head = text.slice(index, index + SILENT_TOKEN.length + 1);
				const upper = head.slice(0, SILENT_TOKEN.length).toUpperCase();
				if (upper === SILENT_TOKEN) {
					const next = head[SILENT_TOKEN.length];
					if (next === undefined && !final) break;
					this.#silentChecked = true;
					if (next !== ":" && next !== "_") {
						// The token alone is a silent answer; followed by text, the token is dropped.
						this.#silent = true;
						index += SILENT_TOKEN.length;
						continue;
					}
				} else if (SILENT_TOKEN.startsWith(upper) && upper.length === text.length - index) {
					if (!final) break;
					this.#silentChecked = true;
					// Cut off inside what may have been the silent token: none of it is shown.
					if (this.#cut) {
						index = text.length;
						continue;
					}
				} else this.#silentChecked = true;
			}
			if (char === "[") {
				if (index + 1 === text.length && !directiveFinal) break;
				if (text[index + 1] === "[") {
					DIRECTIVE_AT.lastIndex = index;
					const match = DIRECTIVE_AT.exec(text);
					if (match) {
						const complete = match[2] === "]";
						if (!complete && index + match[0].length === text.length && !directiveFinal) break;
						// Cut off inside a directive: it was never finished, so it neither applies nor shows.
						if (!complete && index + match[0].length === text.length && this.#cut) {
							index = text.length;
							continue;
						}
						if (this.#applyDirective(match[1] ?? "")) {
							this.#removalGap = this.#started;
							if (this.#lineEmpty) {
								this.#afterLineStartDirective = true;
								// What follows it starts the line as the user sees it (the directive is taken out):
								// a fence opened there is a fence, and a `MEDIA:` there is a media line.
								this.#atLineStart = true;
								this.#lineChecked = false;
							}
							index += match[0].length;
							continue;
						}
					} else if (DIRECTIVE_PREFIX.test(text.slice(index))) {
						if (!directiveFinal) break;
						if (this.#cut) {
							index = text.length;
							continue;
						}
					}
				}
				this.#emit("[");
				index += 1;
				continue;
			}
			PLAIN_RUN.lastIndex = index;
			const run = PLAIN_RUN.exec(text);
			const end = run ? index + run[0].length : index + 1;
			this.#emit(text.slice(index, end));
			index = end;
		}
		this.#pending = text.slice(index);
	}
}

/**
 * Whether a text is the silent token alone (`NO_REPLY`, any case, with whitespace around): a
 * block the chunker cut from the end of an answer, which says nothing to the channel.
 *
 * @example
 * isSilentText("\n\nNO_REPLY"); // true
 * isSilentText("NO_REPLY: nothing to add"); // false
 */
export function isSilentText(text: string): boolean {
	return text.trim().toUpperCase() === SILENT_TOKEN;
}

/**
 * Parses the directives of a complete text.
 *
 * @example
 * parseReplyDirectives("[[reply_to: 42]] Done.\nMEDIA: https://x.test/a.png");
 * // { text: "Done.", replyToId: "42", replyToTag: true, mediaUrls: ["https://x.test/a.png"], ... }
 * parseReplyDirectives("NO_REPLY").isSilent; // true
 */
export function parseReplyDirectives(text: string): ParsedReply {
	const filter = new ReplyDirectiveFilter();
	const cleaned = filter.push(text) + filter.finish();
	return { text: cleaned, mediaUrls: filter.takeMediaUrls(), isSilent: filter.isSilent, ...filter.directives };
}
