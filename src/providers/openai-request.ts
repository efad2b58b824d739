/**
 * Building the streaming Chat Completions request body for one call: the converted
 * transcript plus the fields that differ between servers (output limit, usage reporting,
 * reasoning, caching), chosen by the resolved compat switches.
 */
import type {
	ChatCompletionCreateParamsStreaming,
	ChatCompletionFunctionTool,
	ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import type { Context, Model, SimpleStreamOptions, ThinkingLevel, Tool } from "../types/model.js";
import type { OpenAICompletionsOptions } from "./openai-options.js";
import { resolveOpenAICompat, type ResolvedOpenAICompat } from "./openai-compat.js";
import { convertOpenAIMessages, lastTextPart } from "./openai-messages.js";

/** The request body: the SDK's streaming params plus whatever fields a server needs beyond them. */
export type OpenAICompletionsRequest = ChatCompletionCreateParamsStreaming & { [field: string]: unknown };

export type { OpenAICompletionsOptions };

/** Without an explicit limit, replies are capped here even when the model allows more (as pi-ai). */
const defaultMaxTokensCap = 32_000;
const levelOrder: readonly ThinkingLevel[] = ["minimal", "low", "medium", "high", "xhigh"];

type CacheControl = { type: "ephemeral"; ttl?: "1h" };
type ReasoningEffort = Exclude<OpenAICompletionsRequest["reasoning_effort"], undefined>;

/**
 * The level a model supports closest to the requested one: the next higher supported level,
 * else the next lower. A level mapped to `null` is unsupported, and `xhigh` only exists when
 * the model maps it.
 */
function supportedLevel(model: Model, level: ThinkingLevel): ThinkingLevel | undefined {
	const map = model.thinkingLevelMap;
	const supported = (candidate: ThinkingLevel) =>
		map?.[candidate] !== null && (candidate !== "xhigh" || map?.[candidate] !== undefined);
	const start = levelOrder.indexOf(level);
	for (let i = start; i < levelOrder.length; i++) {
		const candidate = levelOrder[i];
		if (candidate && supported(candidate)) return candidate;
	}
	for (let i = start - 1; i >= 0; i--) {
		const candidate = levelOrder[i];
		if (candidate && supported(candidate)) return candidate;
	}
	return undefined;
}

function effortName(model: Model, level: ThinkingLevel): string {
	return model.thinkingLevelMap?.[level] ?? level;
}

/** An explicit budget for the level, if the caller gave one. */
function explicitBudget(options: SimpleStreamOptions, level: ThinkingLevel): number | undefined {
	return options.thinkingBudgets?.[level === "xhigh" ? "high" : level];
}

/** Sets the reasoning fields of the body, in the server's format. No level means reasoning off. */
function applyReasoning(
	body: OpenAICompletionsRequest,
	model: Model,
	options: OpenAICompletionsOptions,
	compat: ResolvedOpenAICompat,
): void {
	if (!model.reasoning) return;
	const requested = options.reasoning ?? options.reasoningEffort;
	const level = requested ? supportedLevel(model, requested) : undefined;
	const budget = level ? explicitBudget(options, level) : undefined;
	const offName = model.thinkingLevelMap?.off;
	switch (compat.thinkingFormat) {
		case "openai":
			if (!compat.supportsReasoningEffort) return;
			if (level) body.reasoning_effort = effortName(model, level) as ReasoningEffort;
			else if (typeof offName === "string") body.reasoning_effort = offName as ReasoningEffort;
			return;
		case "openrouter":
			if (level) body["reasoning"] = budget !== undefined ? { max_tokens: budget } : { effort: effortName(model, level) };
			else if (offName !== null) body["reasoning"] = { effort: offName ?? "none" };
			return;
		case "deepseek":
			body["thinking"] = { type: level ? "enabled" : "disabled" };
			if (level && compat.supportsReasoningEffort) {
				body.reasoning_effort = effortName(model, level) as ReasoningEffort;
			}
			return;
		case "qwen":
			body["enable_thinking"] = level !== undefined;
			if (budget !== undefined) body["thinking_budget"] = budget;
			return;
		case "qwen-chat-template":
			// preserve_thinking: the template keeps earlier turns' reasoning (pi-ai sends it too).
			body["chat_template_kwargs"] = { enable_thinking: level !== undefined, preserve_thinking: true };
			return;
		case "zai":
			body["enable_thinking"] = level !== undefined;
			return;
	}
}

/**
 * Converts tool definitions to Chat Completions function tools.
 *
 * @example
 * convertOpenAITools([{ name: "echo", description: "Echo", parameters: Type.Object({ text: Type.String() }) }], compat);
 * // [{ type: "function", function: { name: "echo", description: "Echo", parameters: { type: "object", ... } } }]
 */
export function convertOpenAITools(tools: Tool[], compat: Pick<ResolvedOpenAICompat, "supportsStrictMode">): ChatCompletionFunctionTool[] {
	return tools.map((tool) => ({
		type: "function",
		function: {
			name: tool.name,
			description: tool.description,
			// Round-trip through JSON to drop TypeBox's symbol-keyed metadata and any functions.
			parameters: JSON.parse(JSON.stringify(tool.parameters ?? {})) as Record<string, unknown>,
			...(compat.supportsStrictMode ? { strict: false } : {}),
		},
	}));
}

function setCacheControl(target: object | undefined, cacheControl: CacheControl): boolean {
	if (!target) return false;
	(target as { cache_control?: CacheControl }).cache_control = cacheControl;
	return true;
}

/** Marks the system prompt, the last tool and the last conversational text, as Anthropic caches by prefix. */
function applyAnthropicCacheControl(
	messages: ChatCompletionMessageParam[],
	tools: ChatCompletionFunctionTool[] | undefined,
	cacheControl: CacheControl,
): void {
	const instructions = messages.find((message) => message.role === "system" || message.role === "developer");
	if (instructions) setCacheControl(lastTextPart(instructions), cacheControl);
	setCacheControl(tools?.at(-1), cacheControl);
	for (let i = messages.length - 1; i >= 0; i--) {
		const message = messages[i];
		if (message && (message.role === "user" || message.role === "assistant")) {
			if (setCacheControl(lastTextPart(message), cacheControl)) return;
		}
	}
}

function isHost(baseUrl: string, host: string): boolean {
	try {
		const hostname = new URL(baseUrl).hostname.toLowerCase();
		return hostname === host || hostname.endsWith(`.${host}`);
	} catch {
		return false;
	}
}

/**
 * Builds the streaming Chat Completions request body for one call.
 *
 * @example
 * const body = buildOpenAICompletionsRequest(model, { systemPrompt: "Be brief.", messages }, { maxTokens: 1024 });
 * body.stream_options; // { include_usage: true }
 */
export function buildOpenAICompletionsRequest(
	model: Model,
	context: Context,
	options: OpenAICompletionsOptions = {},
	compat: ResolvedOpenAICompat = resolveOpenAICompat(model),
): OpenAICompletionsRequest {
	const messages = convertOpenAIMessages(model, context, compat);
	const body: OpenAICompletionsRequest = { model: model.id, messages, stream: true };
	if (compat.supportsUsageInStreaming) body.stream_options = { include_usage: true };
	if (compat.supportsStore) body.store = false;

	const defaultLimit = compat.sendDefaultMaxTokens && model.maxTokens > 0 ? Math.min(model.maxTokens, defaultMaxTokensCap) : undefined;
	// 0 is "no limit given", as pi-ai reads it: the API takes no limit below 1 (a 400).
	const maxTokens = options.maxTokens || defaultLimit;
	if (maxTokens !== undefined) {
		if (compat.maxTokensField === "max_tokens") body.max_tokens = maxTokens;
		else body.max_completion_tokens = maxTokens;
	}
	if (options.temperature !== undefined) body.temperature = options.temperature;

	const tools = context.tools && context.tools.length > 0 ? convertOpenAITools(context.tools, compat) : undefined;
	if (tools) {
		body.tools = tools;
		if (compat.zaiToolStream) body["tool_stream"] = true;
	}
	if (options.toolChoice !== undefined) body.tool_choice = options.toolChoice;
	applyReasoning(body, model, options, compat);

	const retention = options.cacheRetention ?? "short";
	const longRetention = retention === "long" && compat.supportsLongCacheRetention;
	if (compat.cacheControlFormat === "anthropic" && retention !== "none") {
		applyAnthropicCacheControl(messages, tools, longRetention ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" });
	} else {
		// OpenAI routes requests with the same key to the same cache; other servers only take it with long retention.
		const cacheKeyUseful = (isHost(model.baseUrl, "api.openai.com") && retention !== "none") || longRetention;
		if (cacheKeyUseful && options.sessionId) body.prompt_cache_key = options.sessionId;
		if (longRetention) body.prompt_cache_retention = "24h";
	}

	if (compat.openRouterRouting && isHost(model.baseUrl, "openrouter.ai")) body["provider"] = compat.openRouterRouting;
	const gateway = compat.vercelGatewayRouting;
	if (gateway && (gateway.only || gateway.order) && isHost(model.baseUrl, "ai-gateway.vercel.sh")) {
		body["providerOptions"] = { gateway: { ...(gateway.only ? { only: gateway.only } : {}), ...(gateway.order ? { order: gateway.order } : {}) } };
	}
	return body;
}
