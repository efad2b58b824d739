/**
 * Building the Messages API request body from a provider-neutral {@link Context}.
 *
 * The transcript is replayed the way the API expects it back: thinking with its signature,
 * redacted thinking as its opaque data, tool results grouped into one user turn. Messages
 * that the API would reject (failed turns, dangling tool calls, empty blocks) are repaired
 * or left out here, so a transcript that survived an error can always be continued.
 */
import type {
	Base64ImageSource,
	CacheControlEphemeral,
	ContentBlockParam,
	ImageBlockParam,
	MessageCreateParamsStreaming,
	MessageParam,
	TextBlockParam,
	ThinkingConfigParam,
	Tool as AnthropicTool,
	ToolResultBlockParam,
} from "@anthropic-ai/sdk/resources/messages";
import type { ImageContent, TextContent } from "../types/content.js";
import type { AssistantMessage, Message, ToolResultMessage } from "../types/messages.js";
import type { Context, Model, SimpleStreamOptions, ThinkingBudgets, ThinkingLevel, Tool } from "../types/model.js";
import { imageBase64, imageWithoutData } from "./image-data.js";
import { anthropicCompat } from "./models.js";
import { RequestToolCallIds } from "./tool-call-ids.js";
import { sanitizeJsonStrings, sanitizeText } from "../util/sanitize-text.js";
import { failedStop } from "../util/stop-reason.js";
import { asRecord } from "../util/json-values.js";

/** Default thinking budgets in tokens, per level, for models that take a budget. */
export const defaultThinkingBudgets: { [Level in keyof ThinkingBudgets]-?: number } = {
	minimal: 1024,
	low: 2048,
	medium: 8192,
	high: 16384,
};

/** The API rejects smaller budgets. */
const minimumThinkingBudget = 1024;
/** Without an explicit limit, replies are capped here even when the model allows more. */
const defaultMaxTokensCap = 32_000;

/** The parts of the request that depend on the reasoning level. */
export interface ThinkingSettings {
	maxTokens: number;
	thinking?: ThinkingConfigParam | undefined;
	effort?: "low" | "medium" | "high" | "xhigh" | "max" | undefined;
}

/**
 * Chooses `max_tokens` and the thinking configuration for a reasoning level.
 *
 * Budget models get `budget_tokens` from the level (or `thinkingBudgets`), with `max_tokens`
 * raised by the budget so the answer keeps its room, and never above the model's limit.
 * Adaptive models (Claude 4.6+) get an effort level instead. No level means no thinking.
 *
 * @example
 * thinkingSettings(getModel("anthropic", "claude-haiku-4-5"), { reasoning: "medium" });
 * // { maxTokens: 40192, thinking: { type: "enabled", budget_tokens: 8192, display: "summarized" } }
 */
export function thinkingSettings(
	model: Model,
	options: Pick<SimpleStreamOptions, "maxTokens" | "reasoning" | "thinkingBudgets"> = {},
): ThinkingSettings {
	// 0 is "no limit given", as pi-ai reads it: the API takes no max_tokens below 1 (a 400).
	const baseMaxTokens = options.maxTokens || Math.min(model.maxTokens, defaultMaxTokensCap);
	const level = options.reasoning;
	if (!level || !model.reasoning) return { maxTokens: baseMaxTokens };

	const compat = anthropicCompat(model);
	if (compat.thinking === "adaptive") {
		return {
			maxTokens: baseMaxTokens,
			thinking: { type: "adaptive", display: "summarized" },
			effort: mappedEffort(model, level) ?? adaptiveEffort(level, compat.xhighEffort),
		};
	}

	let budget = budgetFor(level, options.thinkingBudgets);
	const maxTokens = Math.min(baseMaxTokens + budget, model.maxTokens);
	// The API requires budget_tokens < max_tokens; keep some room for the answer itself.
	if (maxTokens <= budget) budget = Math.max(0, maxTokens - minimumThinkingBudget);
	if (budget < minimumThinkingBudget) return { maxTokens };
	return { maxTokens, thinking: { type: "enabled", budget_tokens: budget, display: "summarized" } };
}

function budgetFor(level: ThinkingLevel, overrides: ThinkingBudgets | undefined): number {
	// Budget models have no level above "high": xhigh spends the high budget.
	const key = level === "xhigh" ? "high" : level;
	return overrides?.[key] ?? defaultThinkingBudgets[key];
}

/** The effort pi-ai's model entry maps the level to (`thinkingLevelMap`), when it names one. */
function mappedEffort(model: Model, level: ThinkingLevel): ThinkingSettings["effort"] {
	const mapped = model.thinkingLevelMap?.[level];
	return mapped === "low" || mapped === "medium" || mapped === "high" || mapped === "xhigh" || mapped === "max" ? mapped : undefined;
}

function adaptiveEffort(level: ThinkingLevel, xhigh: "high" | "xhigh" | "max"): ThinkingSettings["effort"] {
	switch (level) {
		case "minimal":
		case "low":
			return "low";
		case "medium":
			return "medium";
		case "high":
			return "high";
		case "xhigh":
			return xhigh;
	}
}

/**
 * Tool-call ids from other providers may contain characters Anthropic rejects. Mapping is
 * deterministic, so a call and its result always map to the same id.
 */
function normalizeToolCallId(id: string): string {
	const cleaned = id.replace(/[^a-zA-Z0-9_-]/g, "_");
	return cleaned.length > 0 ? cleaned.slice(0, 64) : "tool_call";
}

/** The n-th variant of an id taken already in the request: a suffix the 64-character limit cannot cut off. */
function toolCallIdVariant(id: string, n: number): string {
	const suffix = `_${n}`;
	return normalizeToolCallId(id).slice(0, 64 - suffix.length) + suffix;
}

/**
 * The only image formats the Messages API takes. Any other (an MCP tool's SVG chart, a BMP
 * screenshot) gets a 400 for the whole request, and since the image stays in the transcript,
 * for every request after it: such an image is replaced by a note instead.
 */
const acceptedImageTypes: ReadonlySet<string> = new Set<Base64ImageSource["media_type"]>(["image/jpeg", "image/png", "image/gif", "image/webp"]);

/** The API's spelling of a MIME type: lower case, and `image/jpeg` for the common `image/jpg`. */
function apiImageType(mimeType: string): string {
	const type = mimeType.trim().toLowerCase();
	return type === "image/jpg" ? "image/jpeg" : type;
}

/** The most base64 the API takes for one image ("image exceeds 5 MB maximum"). */
const maxImageBase64 = 5 * 1024 * 1024;

function imageBlock(data: string, mediaType: string): ImageBlockParam {
	return {
		type: "image",
		source: { type: "base64", media_type: mediaType as Base64ImageSource["media_type"], data },
	};
}

/** The block an accepted image type is sent as: the image, or a note for one the API would refuse. */
function imageOrNote(image: ImageContent, mediaType: string): TextBlockParam | ImageBlockParam {
	const data = imageBase64(image);
	if (data === "") return { type: "text", text: imageWithoutData };
	if (data.length > maxImageBase64) return { type: "text", text: `(image omitted: ${(data.length / 1024 / 1024).toFixed(1)} MB of base64, over the 5 MB Anthropic takes for one image)` };
	return imageBlock(data, mediaType);
}

function userContentBlocks(content: (TextContent | ImageContent)[], model: Model): (TextBlockParam | ImageBlockParam)[] {
	const acceptsImages = model.input.includes("image");
	const blocks: (TextBlockParam | ImageBlockParam)[] = [];
	for (const part of content) {
		if (part.type === "text") {
			if (part.text.trim() !== "") blocks.push({ type: "text", text: sanitizeText(part.text) });
		} else if (!acceptsImages) {
			blocks.push({ type: "text", text: "(image omitted: this model does not accept images)" });
		} else if (acceptedImageTypes.has(apiImageType(part.mimeType))) {
			blocks.push(imageOrNote(part, apiImageType(part.mimeType)));
		} else {
			blocks.push({ type: "text", text: `(image omitted: Anthropic does not accept ${sanitizeText(part.mimeType)} images, only JPEG, PNG, GIF and WebP)` });
		}
	}
	return blocks;
}

function sameModel(message: AssistantMessage, model: Model): boolean {
	return message.provider === model.provider && message.api === model.api && message.model === model.id;
}

function assistantContentBlocks(message: AssistantMessage, model: Model, ids: RequestToolCallIds): ContentBlockParam[] {
	// Signatures are only valid for the model that produced them.
	const signaturesValid = sameModel(message, model);
	const wireIds = ids.calls(message.content.filter((part) => part.type === "toolCall"));
	let call = 0;
	const blocks: ContentBlockParam[] = [];
	for (const part of message.content) {
		switch (part.type) {
			case "text":
				if (part.text.trim() !== "") blocks.push({ type: "text", text: sanitizeText(part.text) });
				break;
			case "thinking":
				if (part.redacted) {
					if (signaturesValid && part.thinkingSignature) {
						blocks.push({ type: "redacted_thinking", data: part.thinkingSignature });
					}
				} else if (part.thinking.trim() === "") {
					// An empty thinking block carries nothing the API would accept.
				} else if (signaturesValid && part.thinkingSignature) {
					blocks.push({ type: "thinking", thinking: sanitizeText(part.thinking), signature: part.thinkingSignature });
				} else {
					blocks.push({ type: "text", text: sanitizeText(part.thinking) });
				}
				break;
			case "toolCall":
				blocks.push({
					type: "tool_use",
					id: wireIds[call++] as string,
					name: part.name,
					input: sanitizeJsonStrings(part.arguments ?? {}),
				});
				break;
		}
	}
	return blocks;
}

function toolResultBlock(result: ToolResultMessage, wireId: string, model: Model): ToolResultBlockParam {
	const content = userContentBlocks(result.content, model);
	const onlyImages = content.length > 0 && !content.some((block) => block.type === "text");
	if (onlyImages) {
		content.unshift({ type: "text", text: "(see attached image)" });
	}
	return {
		type: "tool_result",
		tool_use_id: wireId,
		...(content.length > 0 ? { content } : {}),
		is_error: result.isError,
	};
}

function missingToolResult(wireId: string): ToolResultBlockParam {
	return {
		type: "tool_result",
		tool_use_id: wireId,
		content: [{ type: "text", text: "No result provided" }],
		is_error: true,
	};
}

/**
 * Converts the transcript to Messages API turns.
 *
 * - Errored and aborted assistant messages are skipped: they may be truncated mid-block.
 * - Consecutive tool results become one user turn of `tool_result` blocks.
 * - A tool call without a result gets a synthetic error result ("No result provided"),
 *   because the API rejects a `tool_use` that is not answered in the next turn; a result that
 *   answers no call of the turn before it is left out, as the API rejects that too.
 * - Empty text and thinking blocks are dropped; thinking without a signature (or from
 *   another model) is sent as plain text.
 * - Tool-call ids are made unique in the request (the API rejects repeated ones), each result
 *   taking its call's id: see {@link RequestToolCallIds}.
 *
 * @example
 * convertMessages([{ role: "user", content: "hi", timestamp: 0 }], model);
 * // [{ role: "user", content: [{ type: "text", text: "hi" }] }]
 */
export function convertMessages(messages: Message[], model: Model): MessageParam[] {
	const turns: MessageParam[] = [];
	// The request's tool-call ids, and the calls of the last assistant turn still waiting for results.
	const ids = new RequestToolCallIds(normalizeToolCallId, toolCallIdVariant);
	let toolResultTurn: ContentBlockParam[] | undefined;

	const closeToolResultTurn = () => {
		const blocks = toolResultTurn ?? [];
		for (const call of ids.close()) blocks.push(missingToolResult(call.wire));
		if (blocks.length > 0 && !toolResultTurn) turns.push({ role: "user", content: blocks });
		toolResultTurn = undefined;
	};

	for (const message of messages) {
		if (message.role === "toolResult") {
			// A result that answers no call of the reply before it (its reply failed and is left out,
			// a user message came between, or the call has its result already) is refused by the API,
			// and every later request of the session would carry it.
			const wireId = ids.answer(message.toolCallId);
			if (wireId === undefined) continue;
			if (!toolResultTurn) {
				toolResultTurn = [];
				turns.push({ role: "user", content: toolResultTurn });
			}
			toolResultTurn.push(toolResultBlock(message, wireId, model));
			continue;
		}
		closeToolResultTurn();
		if (message.role === "user") {
			const content =
				typeof message.content === "string"
					? userContentBlocks([{ type: "text", text: message.content }], model)
					: userContentBlocks(message.content, model);
			if (content.length > 0) turns.push({ role: "user", content });
		} else {
			if (failedStop(message.stopReason)) continue;
			const content = assistantContentBlocks(message, model, ids);
			if (content.length === 0) continue;
			turns.push({ role: "assistant", content });
		}
	}
	closeToolResultTurn();
	return turns;
}

/**
 * Converts tool definitions: the tool's parameter schema becomes `input_schema`.
 *
 * @example
 * convertTools([{ name: "echo", description: "Echo", parameters: Type.Object({ text: Type.String() }) }]);
 */
export function convertTools(tools: Tool[]): AnthropicTool[] {
	return tools.map((tool) => {
		// Round-trip through JSON to drop TypeBox's symbol-keyed metadata and any functions.
		const schema = JSON.parse(JSON.stringify(tool.parameters ?? {})) as Record<string, unknown>;
		return {
			name: tool.name,
			description: tool.description,
			input_schema: { ...withoutTopLevelAlternatives(schema), type: "object" } as AnthropicTool["input_schema"],
		};
	});
}

const ALTERNATIVES = ["anyOf", "oneOf", "allOf"] as const;

/**
 * The API refuses `anyOf`, `oneOf` and `allOf` at the top of a tool's input schema (a 400 on every
 * request that offers the tool; a TypeBox union of objects, or an MCP tool's union, makes one).
 * The model is shown one object with every property of the alternatives, required where all of
 * them require it; the arguments it sends are still validated against the tool's own schema.
 */
function withoutTopLevelAlternatives(schema: Record<string, unknown>): Record<string, unknown> {
	if (!ALTERNATIVES.some((key) => Array.isArray(schema[key]))) return schema;
	const rest: Record<string, unknown> = { ...schema };
	const properties: Record<string, unknown> = { ...asRecord(schema["properties"]) };
	const required = new Set(requiredOf(schema));
	for (const key of ALTERNATIVES) {
		delete rest[key];
		const parts = (Array.isArray(schema[key]) ? (schema[key] as unknown[]) : []).map((part) => asRecord(part) ?? {});
		for (const part of parts) Object.assign(properties, asRecord(part["properties"]));
		// All of allOf's requirements hold; of anyOf's and oneOf's, those every alternative has.
		const kept = key === "allOf" ? parts.flatMap(requiredOf) : requiredOf(parts[0] ?? {}).filter((name) => parts.every((part) => requiredOf(part).includes(name)));
		for (const name of kept) required.add(name);
	}
	return { ...rest, properties, ...(required.size > 0 ? { required: [...required] } : {}) };
}

function requiredOf(schema: Record<string, unknown>): string[] {
	const required = schema["required"];
	return Array.isArray(required) ? required.filter((name): name is string => typeof name === "string") : [];
}

function cacheControlFor(options: SimpleStreamOptions): CacheControlEphemeral | undefined {
	switch (options.cacheRetention ?? "short") {
		case "none":
			return undefined;
		case "long":
			return { type: "ephemeral", ttl: "1h" };
		default:
			return { type: "ephemeral" };
	}
}

/** Marks the last block of the last user turn, so the next call reads the whole prefix from cache. */
function cacheLastUserTurn(turns: MessageParam[], cacheControl: CacheControlEphemeral): void {
	for (let i = turns.length - 1; i >= 0; i--) {
		const turn = turns[i];
		if (turn?.role !== "user" || typeof turn.content === "string") continue;
		const last = turn.content[turn.content.length - 1];
		if (last && "type" in last && last.type !== "thinking" && last.type !== "redacted_thinking") {
			(last as { cache_control?: CacheControlEphemeral }).cache_control = cacheControl;
		}
		return;
	}
}

/** Beta header needed for thinking between tool calls on models that take a budget. */
export const interleavedThinkingBeta = "interleaved-thinking-2025-05-14";

/**
 * Builds the streaming Messages API request body for one call.
 *
 * @example
 * const body = buildAnthropicRequest(model, { systemPrompt: "Be brief.", messages }, { reasoning: "low" });
 * body.system; // [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }]
 */
export function buildAnthropicRequest(
	model: Model,
	context: Context,
	options: SimpleStreamOptions = {},
): MessageCreateParamsStreaming {
	const cacheControl = cacheControlFor(options);
	const settings = thinkingSettings(model, options);
	const messages = convertMessages(context.messages, model);
	if (cacheControl) cacheLastUserTurn(messages, cacheControl);

	const body: MessageCreateParamsStreaming = {
		model: model.id,
		max_tokens: settings.maxTokens,
		messages,
		stream: true,
	};
	if (context.systemPrompt) {
		body.system = [
			{ type: "text", text: sanitizeText(context.systemPrompt), ...(cacheControl ? { cache_control: cacheControl } : {}) },
		];
	}
	if (context.tools && context.tools.length > 0) body.tools = convertTools(context.tools);
	if (settings.thinking) body.thinking = settings.thinking;
	if (settings.effort) body.output_config = { effort: settings.effort };
	// options.temperature is deliberately not sent: API version 2026-10-21, which this SDK
	// speaks, rejects temperature/top_p/top_k with a 400 on every model, even at default values.
	const metadataUserId = options.metadata?.["user_id"];
	const userId = typeof metadataUserId === "string" ? metadataUserId : options.sessionId;
	if (userId) body.metadata = { user_id: userId };
	return body;
}
