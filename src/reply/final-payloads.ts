/**
 * Final-payload filtering: after a run, the channel may still want to send the final answer
 * (for instance when block streaming was off, or failed). Nothing the block replies already
 * delivered, and nothing a messaging tool already sent, may be sent again.
 *
 * Coverage is by content, not by exact key: blocks "para1" and "para2" cover the final
 * "para1\n\npara2" (exact keys alone miss that and deliver the answer twice). A silent final
 * (`NO_REPLY`) is dropped whole, media included: the model chose to say nothing.
 */
import { createBlockReplyContentKey, type BlockReplyPipeline } from "./block-reply-pipeline.js";
import { normalizeTextForComparison, textBeyondSent } from "./messaging-dedupe.js";
import { parseReplyDirectives } from "./reply-directives.js";
import type { ReplyPayload } from "./types.js";

/**
 * What was already delivered.
 *
 * @example
 * const delivered: DeliveredContent = { pipeline, messagingToolSentTexts: replies.getMessagingToolSentTexts() };
 * for (const payload of filterFinalPayloads(finals, delivered)) await chat.send(payload.text ?? "");
 */
export interface DeliveredContent {
	/** The block-reply pipeline of the run (its confirmed sends count). */
	pipeline?: Pick<BlockReplyPipeline, "getDeliveryReport">;
	/** Payloads sent without a pipeline. */
	sentPayloads?: readonly ReplyPayload[];
	/** Texts messaging tools sent successfully. */
	messagingToolSentTexts?: readonly string[];
	/** Media messaging tools sent successfully. */
	messagingToolSentMediaUrls?: readonly string[];
}

function foldWhitespace(text: string): string {
	return text.replace(/\s+/g, " ").trim();
}

/**
 * True when `folded` occurs in `sentText` as whole words (both whitespace-folded): a final "No"
 * is not covered by a block that said "Now checking…", which a plain substring test took as
 * delivered, and the answer was never sent.
 */
function coversWords(sentText: string, folded: string): boolean {
	return ` ${sentText} `.includes(` ${folded} `);
}

/**
 * True when the answer was delivered: as a whole, or paragraph by paragraph. Blocks are sent in
 * the answer's order but not always next to each other (a reasoning block between two, with
 * `reasoningMode: "on"`), and a pipeline sends a repeated block once (its content key).
 */
function answerDelivered(sentText: string, text: string, folded: string): boolean {
	if (coversWords(sentText, folded)) return true;
	const paragraphs = text.split(/\n\s*\n/).map(foldWhitespace).filter((paragraph) => paragraph !== "");
	return paragraphs.length > 1 && paragraphs.every((paragraph) => coversWords(sentText, paragraph));
}

/**
 * Removes from `finals` whatever was already delivered: a payload whose text is covered by the
 * delivered texts loses its text, media already sent is removed, and a payload left with
 * neither is dropped. A silent payload (`NO_REPLY`) is dropped with its media.
 *
 * @example
 * filterFinalPayloads([{ text: "para1\n\npara2" }], { sentPayloads: [{ text: "para1" }, { text: "para2" }] }); // []
 * filterFinalPayloads([{ text: "NO_REPLY", mediaUrls: ["/tmp/a.png"] }], {}); // []
 */
export function filterFinalPayloads(finals: readonly ReplyPayload[], delivered: DeliveredContent): ReplyPayload[] {
	const sent = [...(delivered.pipeline?.getDeliveryReport().confirmed ?? []), ...(delivered.sentPayloads ?? [])];
	// Reasoning shown to the user is not the answer: it covers none of it.
	const answers = sent.filter((payload) => payload.isReasoning !== true);
	const sentKeys = new Set(answers.map(createBlockReplyContentKey));
	const sentText = foldWhitespace(answers.map((payload) => payload.text ?? "").join(" "));
	const sentMedia = new Set([...sent.flatMap((payload) => payload.mediaUrls ?? []), ...(delivered.messagingToolSentMediaUrls ?? [])]);
	const toolTexts = (delivered.messagingToolSentTexts ?? []).map(normalizeTextForComparison);
	const result: ReplyPayload[] = [];
	for (const payload of finals) {
		const text = payload.text ?? "";
		if (text !== "" && parseReplyDirectives(text).isSilent) continue;
		if (sentKeys.has(createBlockReplyContentKey(payload))) continue;
		// What a messaging tool sent is not sent again; what the answer says beyond it is.
		const rest = text === "" ? "" : textBeyondSent(text, toolTexts);
		const folded = foldWhitespace(rest);
		const textCovered = folded === "" || (sentText !== "" && answerDelivered(sentText, rest, folded));
		const media = (payload.mediaUrls ?? []).filter((url) => !sentMedia.has(url));
		if (textCovered && media.length === 0) continue;
		const kept: ReplyPayload = { ...payload };
		if (textCovered) delete kept.text;
		else if (rest !== text) kept.text = rest;
		if (media.length > 0) kept.mediaUrls = media;
		else delete kept.mediaUrls;
		result.push(kept);
	}
	return result;
}
