/**
 * Text phases of OpenAI-Responses-style providers: "commentary" is narration between tool
 * calls that the user does not see; "final_answer" is the answer. A text block carries its
 * phase in its `textSignature` (JSON); a message may carry one for all its blocks in `phase`,
 * a field pi's type does not declare, so it is read defensively.
 */

// Every delta of a block carries the same signature: parse it once, not once per delta.
let lastSignature: string | undefined;
let lastSignaturePhase: string | undefined;

/** The phase of a text block, from the JSON in its `textSignature`. */
function signaturePhase(block: { textSignature?: string } | undefined): string | undefined {
	const signature = block?.textSignature;
	if (typeof signature !== "string" || !signature.startsWith("{")) return undefined;
	if (signature !== lastSignature) {
		lastSignature = signature;
		lastSignaturePhase = parsePhase(signature);
	}
	return lastSignaturePhase;
}

function parsePhase(signature: string): string | undefined {
	try {
		const parsed: unknown = JSON.parse(signature);
		if (typeof parsed !== "object" || parsed === null) return undefined;
		const phase = (parsed as { phase?: unknown }).phase;
		return typeof phase === "string" ? phase : undefined;
	} catch {
		return undefined;
	}
}

/** The phase a whole message declares, if any. */
function messagePhase(message: object | undefined): string | undefined {
	const phase = (message as { phase?: unknown } | undefined)?.phase;
	return typeof phase === "string" ? phase : undefined;
}

/**
 * True for text that carries a phase (its block's signature or its message's): only such a
 * provider narrates in commentary, so only its text can be replaced while it streams.
 *
 * @example
 * isPhasedText({ type: "text", text: "Done.", textSignature: '{"phase":"final_answer"}' }); // true
 * isPhasedText({ type: "text", text: "Done." }, { role: "assistant" });                    // false
 */
export function isPhasedText(block: { textSignature?: string } | undefined, message?: object): boolean {
	return (signaturePhase(block) ?? messagePhase(message)) !== undefined;
}

/**
 * True for text the provider marked as commentary. A block's own signature decides; a block
 * without a phase takes the message's.
 *
 * @example
 * const block = (text: string, textSignature?: string): TextContent => (textSignature === undefined ? { type: "text", text } : { type: "text", text, textSignature });
 * isCommentaryText(block("Working...", '{"v":1,"id":"m1","phase":"commentary"}')); // true
 * isCommentaryText(block("Need send."), { phase: "commentary" }); // true
 * isCommentaryText(block("Done.", '{"phase":"final_answer"}'), { phase: "commentary" }); // false
 */
export function isCommentaryText(block: { textSignature?: string } | undefined, message?: object): boolean {
	return (signaturePhase(block) ?? messagePhase(message)) === "commentary";
}

/**
 * True for a message that declares itself commentary as a whole: nothing of it reaches the
 * channel, its reasoning included.
 *
 * @example
 * isCommentaryMessage({ role: "assistant", phase: "commentary" }); // true
 */
export function isCommentaryMessage(message: object | undefined): boolean {
	return messagePhase(message) === "commentary";
}
