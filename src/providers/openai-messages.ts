/**
 * Converting a provider-neutral transcript to Chat Completions messages.
 *
 * The transcript may come from another provider or from a run that failed halfway, and the
 * servers are strict about its shape: every `tool` message must answer a `tool_calls` entry of
 * the assistant message just before it, and every call must be answered. Failed turns,
 * unanswered calls and results without a call are repaired here, so any transcript can be
 * continued.
 */
import type {
	ChatCompletionAssistantMessageParam,
	ChatCompletionContentPart,
	ChatCompletionContentPartText,
	ChatCompletionMessageParam,
	ChatCompletionToolMessageParam,
} from "openai/resources/chat/completions";
import type { ImageContent, TextContent, ToolCall } from "../types/content.js";
import type { AssistantMessage, ToolResultMessage } from "../types/messages.js";
import type { Context, Model } from "../types/model.js";
import type { OpenAIToolCallIdFormat, ResolvedOpenAICompat } from "./openai-compat.js";
import { imageBase64, imageWithoutData } from "./image-data.js";
import { RequestToolCallIds } from "./tool-call-ids.js";
import { sanitizeJsonStrings, sanitizeText } from "../util/sanitize-text.js";
import { failedStop } from "../util/stop-reason.js";

/** An assistant message with the reasoning fields some servers want back. */
type AssistantWireMessage = ChatCompletionAssistantMessageParam & { [field: string]: unknown };

const imageOmitted = "(image omitted: this model does not accept images)";
const bridgeAfterToolResults = "I have processed the tool results.";

/** A short, stable hash, so a rewritten id is the same for a call and its result. */
function hashId(text: string): string {
	let a = 0x811c9dc5;
	let b = 0x01000193;
	for (let i = 0; i < text.length; i++) {
		const code = text.charCodeAt(i);
		a = Math.imul(a ^ code, 0x01000193);
		b = Math.imul(b ^ code, 0x5bd1e995);
	}
	return (a >>> 0).toString(36) + (b >>> 0).toString(36);
}

/**
 * Rewrites a tool-call id into the form a server accepts. Deterministic, and ids already in
 * that form are kept, so a call and its result always agree.
 *
 * @example
 * normalizeToolCallId("call_1|fc_9f8e+/=", "openai"); // "call_1"
 * normalizeToolCallId("call_1|fc_9f8e+/=", "keep"); // "call_1": a Responses API id is cleaned in every format
 * normalizeToolCallId("toolu_01A", "mistral"); // 9 letters and digits, always the same for this id
 */
export function normalizeToolCallId(id: string, format: OpenAIToolCallIdFormat): string {
	switch (format) {
		case "keep":
			// A Responses API id (an openai-codex or Copilot session moved to this server) is cleaned
			// whatever the format, as pi-ai does: its item part is hundreds of characters of base64.
			return id.includes("|") ? normalizeToolCallId(id, "openai") : id;
		case "openai": {
			// Responses API ids look like "<call_id>|<item id>"; the call id is the part that matters.
			const cleaned = (id.split("|")[0] ?? id).replace(/[^a-zA-Z0-9_-]/g, "_");
			if (cleaned.length === 0) return `call_${hashId(id)}`;
			return cleaned.length <= 40 ? cleaned : `${cleaned.slice(0, 26)}_${hashId(id).slice(0, 13)}`;
		}
		case "mistral":
			return /^[a-zA-Z0-9]{9}$/.test(id) ? id : `${hashId(id)}000000000`.slice(0, 9);
	}
}

/**
 * The n-th variant of an id taken already in the request (see {@link RequestToolCallIds}), in
 * the same form as {@link normalizeToolCallId}'s: a suffix within the length limit, or for
 * Mistral's nine characters another hash.
 *
 * @example
 * toolCallIdVariant("call_0", 2, "openai"); // "call_0_2"
 */
export function toolCallIdVariant(id: string, n: number, format: OpenAIToolCallIdFormat): string {
	const suffix = `_${n}`;
	switch (format) {
		case "keep":
			return `${normalizeToolCallId(id, format)}${suffix}`;
		case "openai":
			return normalizeToolCallId(id, format).slice(0, 40 - suffix.length) + suffix;
		case "mistral":
			return `${hashId(`${id}#${n}`)}000000000`.slice(0, 9);
	}
}

/**
 * A vector drawing (an MCP tool's SVG chart): no vision model reads one, OpenAI's API answers it
 * with a 400, and since the image stays in the transcript, every later request of the session
 * too. The other types are the server's to judge (OpenAI's takes PNG, JPEG, WebP and GIF; local
 * servers often more).
 */
function isVectorImage(mimeType: string): boolean {
	return mimeType.trim().toLowerCase().startsWith("image/svg");
}

function imagePart(image: ImageContent): ChatCompletionContentPart {
	const data = imageBase64(image);
	if (data === "") return { type: "text", text: imageWithoutData };
	if (isVectorImage(image.mimeType)) return { type: "text", text: `(image omitted: ${sanitizeText(image.mimeType)} is a vector drawing, which vision models do not read)` };
	return { type: "image_url", image_url: { url: `data:${image.mimeType};base64,${data}` } };
}

function userContent(content: string | (TextContent | ImageContent)[], model: Model): string | ChatCompletionContentPart[] {
	if (typeof content === "string") return sanitizeText(content);
	const acceptsImages = model.input.includes("image");
	const hasImages = acceptsImages && content.some((part) => part.type === "image");
	if (!hasImages) {
		// Text-only content goes as one string: some servers' chat templates only handle strings.
		return content.map((part) => (part.type === "text" ? sanitizeText(part.text) : imageOmitted)).join("\n");
	}
	return content.map((part) => (part.type === "text" ? { type: "text", text: sanitizeText(part.text) } : imagePart(part)));
}

function isFieldName(name: string): boolean {
	return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
}

function sameModel(message: AssistantMessage, model: Model): boolean {
	return message.provider === model.provider && message.api === model.api && message.model === model.id;
}

function assistantMessage(message: AssistantMessage, model: Model, compat: ResolvedOpenAICompat, ids: RequestToolCallIds<ToolCall>): AssistantWireMessage | undefined {
	const fromThisModel = sameModel(message, model);
	const textParts: string[] = [];
	const reasoningParts: string[] = [];
	let reasoningField: string | undefined;
	for (const part of message.content) {
		if (part.type === "text") {
			if (part.text.trim() !== "") textParts.push(sanitizeText(part.text));
		} else if (part.type === "thinking") {
			if (part.redacted || part.thinking.trim() === "") continue;
			if (!fromThisModel || compat.requiresThinkingAsText) {
				// Another model's reasoning means nothing to this one as reasoning; as text it is still context.
				textParts.push(sanitizeText(part.thinking));
			} else if (compat.sendReasoningBack && part.thinkingSignature && isFieldName(part.thinkingSignature)) {
				// The reader records which delta field the reasoning came in; it goes back in the same one.
				reasoningField ??= part.thinkingSignature;
				reasoningParts.push(sanitizeText(part.thinking));
			}
		}
	}
	const toolCalls = message.content.filter((part): part is ToolCall => part.type === "toolCall");
	const wire: AssistantWireMessage = { role: "assistant", content: textParts.length > 0 ? textParts.join("\n\n") : null };
	if (reasoningField) wire[reasoningField] = reasoningParts.join("\n");
	if (toolCalls.length > 0) {
		const wireIds = ids.calls(toolCalls);
		wire.tool_calls = toolCalls.map((call, index) => ({
			id: wireIds[index] as string,
			type: "function",
			function: { name: call.name, arguments: JSON.stringify(sanitizeJsonStrings(call.arguments ?? {})) },
		}));
		const details = fromThisModel ? toolCalls.flatMap((call) => parseReasoningDetail(call.thoughtSignature)) : [];
		if (details.length > 0) wire["reasoning_details"] = details;
	}
	if (compat.requiresReasoningContentOnAssistantMessages && model.reasoning && wire["reasoning_content"] === undefined) {
		wire["reasoning_content"] = "";
	}
	if (wire.content === null && toolCalls.length === 0) return undefined;
	return wire;
}

/** OpenRouter's encrypted reasoning travels on the tool call it belongs to, as JSON text. */
function parseReasoningDetail(signature: string | undefined): unknown[] {
	if (!signature) return [];
	try {
		const detail: unknown = JSON.parse(signature);
		return detail !== null && typeof detail === "object" ? [detail] : [];
	} catch {
		return [];
	}
}

function toolMessage(result: ToolResultMessage, wireId: string, model: Model, compat: ResolvedOpenAICompat): ChatCompletionToolMessageParam {
	const acceptsImages = model.input.includes("image");
	const texts = result.content.flatMap((part) => {
		if (part.type === "text") return [sanitizeText(part.text)];
		return acceptsImages ? [] : [imageOmitted];
	});
	const hasImages = result.content.some((part) => part.type === "image");
	let content = texts.join("\n");
	if (content === "") content = hasImages && acceptsImages ? "(see attached image)" : "(no output)";
	const message: ChatCompletionToolMessageParam & { name?: string } = {
		role: "tool",
		tool_call_id: wireId,
		content,
	};
	if (compat.requiresToolResultName) message.name = result.toolName;
	return message;
}

function missingResult(call: ToolCall): ToolResultMessage {
	return {
		role: "toolResult",
		toolCallId: call.id,
		toolName: call.name,
		content: [{ type: "text", text: "No result provided" }],
		isError: true,
		timestamp: 0,
	};
}

/**
 * Converts the system prompt and transcript to Chat Completions messages.
 *
 * - The system prompt goes first, as `developer` for reasoning models on servers that know
 *   the role, else `system`.
 * - Errored and aborted assistant messages are left out: they may end mid-block.
 * - A tool call without a result gets an error result ("No result provided"); a result
 *   whose call is not in the preceding assistant message is dropped.
 * - Reasoning from this model goes back in the field it arrived in; reasoning from another
 *   model is sent as text.
 * - Images in tool results follow the tool messages in a user message, since `tool` messages
 *   carry text only.
 * - Tool-call ids are made unique in the request, each result taking its call's id: see
 *   {@link RequestToolCallIds}.
 *
 * @example
 * convertOpenAIMessages(model, { systemPrompt: "Be brief.", messages: [{ role: "user", content: "hi", timestamp: 0 }] }, compat);
 * // [{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }]
 */
export function convertOpenAIMessages(model: Model, context: Context, compat: ResolvedOpenAICompat): ChatCompletionMessageParam[] {
	const out: ChatCompletionMessageParam[] = [];
	if (context.systemPrompt) {
		const role = model.reasoning && compat.supportsDeveloperRole ? "developer" : "system";
		out.push({ role, content: sanitizeText(context.systemPrompt) });
	}
	const format = compat.toolCallIdFormat;
	/** The calls of the last assistant message, and which of them have no result yet. */
	const ids = new RequestToolCallIds<ToolCall>((id) => normalizeToolCallId(id, format), (id, n) => toolCallIdVariant(id, n, format));
	let resultImages: ChatCompletionContentPart[] = [];
	let afterToolResults = false;

	const closeToolResults = () => {
		const unanswered = ids.close();
		for (const { call, wire } of unanswered) out.push(toolMessage(missingResult(call), wire, model, compat));
		if (unanswered.length > 0) afterToolResults = true;
		if (resultImages.length > 0) {
			if (compat.requiresAssistantAfterToolResult) out.push({ role: "assistant", content: bridgeAfterToolResults });
			out.push({ role: "user", content: [{ type: "text", text: "Attached image(s) from tool result:" }, ...resultImages] });
			resultImages = [];
			afterToolResults = false;
		}
	};

	for (const message of context.messages) {
		if (message.role === "toolResult") {
			const wireId = ids.answer(message.toolCallId);
			if (wireId === undefined) continue;
			out.push(toolMessage(message, wireId, model, compat));
			afterToolResults = true;
			if (model.input.includes("image")) {
				for (const part of message.content) if (part.type === "image") resultImages.push(imagePart(part));
			}
			continue;
		}
		closeToolResults();
		if (message.role === "user") {
			const content = userContent(message.content, model);
			if (content.length === 0) continue;
			if (afterToolResults && compat.requiresAssistantAfterToolResult) {
				out.push({ role: "assistant", content: bridgeAfterToolResults });
			}
			out.push({ role: "user", content });
			afterToolResults = false;
		} else if (message.role === "assistant") {
			if (failedStop(message.stopReason)) continue;
			const wire = assistantMessage(message, model, compat, ids);
			if (!wire) continue;
			out.push(wire);
			afterToolResults = false;
		}
	}
	closeToolResults();
	return out;
}

/**
 * The last text part of a message, made an array part if it was a string, so a cache marker
 * can be attached to it.
 *
 * @example
 * const message: ChatCompletionMessageParam = { role: "system", content: "sys" };
 * lastTextPart(message); // { type: "text", text: "sys" }, and message.content is now [that part]
 */
export function lastTextPart(message: ChatCompletionMessageParam): ChatCompletionContentPartText | undefined {
	const holder = message as { content?: unknown };
	if (typeof holder.content === "string") {
		if (holder.content === "") return undefined;
		const part: ChatCompletionContentPartText = { type: "text", text: holder.content };
		holder.content = [part];
		return part;
	}
	if (!Array.isArray(holder.content)) return undefined;
	for (let i = holder.content.length - 1; i >= 0; i--) {
		const part: unknown = holder.content[i];
		if (part !== null && typeof part === "object" && (part as { type?: unknown }).type === "text") {
			return part as ChatCompletionContentPartText;
		}
	}
	return undefined;
}
