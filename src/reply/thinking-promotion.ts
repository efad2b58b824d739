/**
 * Reasoning a model writes inline (`<think>…</think>` and its spellings) is hidden from the
 * user as it streams. Once the message has ended, the stored message is rewritten to match: the
 * reasoning becomes a `thinking` block before the text, and the text keeps only what the user
 * saw. The transcript, and every later request built from it, then carries the reasoning as
 * reasoning, as OpenClaw does.
 *
 * The message is rewritten in place (its `content` is replaced): an `Agent` and its machine hold
 * that same object, so the rewrite is what they store and what the next request sends.
 */
import type { AssistantMessage, TextContent, ThinkingContent, ToolCall } from "../types/index.js";
import { stripReasoningTags } from "./reasoning-tags.js";

type AssistantBlock = TextContent | ThinkingContent | ToolCall;

// The content each rewritten message had before: a second subscriber (or any reader after the
// first) must read the text as the model wrote it, not the rewrite with its shifted block indices.
const writtenContent = new WeakMap<AssistantMessage, AssistantMessage["content"]>();

/**
 * The content of an assistant message as the model wrote it: from before
 * {@link promoteThinkingTags} rewrote it, if it did.
 *
 * @example
 * promoteThinkingTags(message);
 * contentAsWritten(message); // [{ type: "text", text: "<think>why</think>Answer" }]
 */
export function contentAsWritten(message: AssistantMessage): AssistantMessage["content"] {
	return writtenContent.get(message) ?? message.content;
}

/**
 * Moves inline reasoning of an assistant message into thinking blocks: each text block with
 * reasoning outside code becomes `{ thinking }` then `{ text }` (the text without the reasoning,
 * dropped when nothing else is left). `<final>` tags, reply directives and the block's other
 * fields stay. A message that already has a thinking block is left alone (its reasoning is the
 * provider's). Returns whether the message changed.
 *
 * @example
 * const message = createAssistantMessage(model, { content: [{ type: "text", text: "<think>why</think>Answer" }] });
 * promoteThinkingTags(message); // true
 * message.content; // [{ type: "thinking", thinking: "why" }, { type: "text", text: "Answer" }]
 */
export function promoteThinkingTags(message: AssistantMessage): boolean {
	if (message.content.some((block) => block.type === "thinking")) return false;
	let changed = false;
	const content: AssistantBlock[] = [];
	for (const block of message.content) {
		if (block.type !== "text") {
			content.push(block);
			continue;
		}
		const { visible, reasoning } = stripReasoningTags(block.text, { keepFinalTags: true });
		const thinking = reasoning.trim();
		if (thinking === "") {
			content.push(block);
			continue;
		}
		changed = true;
		content.push({ type: "thinking", thinking });
		// Trimmed like the text the user saw: the removed tags leave no whitespace behind.
		const text = visible.trim();
		if (text !== "") content.push({ ...block, text });
	}
	if (changed) {
		writtenContent.set(message, message.content);
		message.content = content;
	}
	return changed;
}
