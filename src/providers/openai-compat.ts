/**
 * The ways OpenAI-compatible servers differ from OpenAI's own Chat Completions API, as
 * switches on `Model.compat`, and the defaults for servers we know by their base URL.
 *
 * The field names are a superset of pi-ai 0.73.1's `OpenAICompletionsCompat`, so a pi-ai
 * model entry (with its `compat`) works here unchanged. Facts about each server come from its
 * own documentation and from pi-ai's detection rules.
 */
import type { Model } from "../types/model.js";

/**
 * How a server wants reasoning ("thinking") requested.
 *
 * - `openai`: `reasoning_effort: "low" | "medium" | "high"` (OpenAI, Groq, Ollama, vLLM).
 * - `openrouter`: `reasoning: { effort }`, or `reasoning: { max_tokens }` when a budget is given.
 * - `deepseek`: `thinking: { type: "enabled" | "disabled" }` plus `reasoning_effort`.
 * - `qwen`: top-level `enable_thinking` (and `thinking_budget` when a budget is given), as DashScope.
 * - `qwen-chat-template`: `chat_template_kwargs: { enable_thinking, preserve_thinking: true }`, for Qwen 3 served by vLLM or SGLang.
 * - `zai`: top-level `enable_thinking`, as z.ai.
 *
 * @example
 * const thinkingFormat: OpenAIThinkingFormat = "qwen-chat-template";
 * const model = createOpenAICompatibleModel({ baseUrl: "http://127.0.0.1:8000/v1", id: "Qwen/Qwen3-8B", reasoning: true, compat: { thinkingFormat } });
 */
export type OpenAIThinkingFormat = "openai" | "openrouter" | "deepseek" | "qwen" | "qwen-chat-template" | "zai";

/**
 * How tool-call ids are rewritten when a transcript is sent back.
 *
 * - `keep`: as received.
 * - `openai`: letters, digits, `_` and `-` only, at most 40 characters (OpenAI rejects longer ids).
 * - `mistral`: exactly 9 letters and digits, as Mistral requires.
 *
 * @example
 * const toolCallIdFormat: OpenAIToolCallIdFormat = "mistral";
 * const model = createOpenAICompatibleModel({ baseUrl: "http://127.0.0.1:8000/v1", id: "mistral-small", compat: { toolCallIdFormat } });
 */
export type OpenAIToolCallIdFormat = "keep" | "openai" | "mistral";

/**
 * Switches for the differences between OpenAI-compatible servers, kept in `Model.compat`.
 * Every field is optional: unset fields take the defaults of the server the base URL points
 * to (see {@link openAICompatibleServers}).
 *
 * @example
 * const model = createOpenAICompatibleModel({
 *   baseUrl: "http://127.0.0.1:8000/v1",
 *   id: "Qwen/Qwen3-8B",
 *   reasoning: true,
 *   compat: { thinkingFormat: "qwen-chat-template", maxTokensField: "max_completion_tokens" },
 * });
 */
export interface OpenAICompletionsCompat {
	/** The request field for the output limit. OpenAI's reasoning models reject `max_tokens`; many servers only know `max_tokens`. */
	maxTokensField?: "max_completion_tokens" | "max_tokens" | undefined;
	/**
	 * Send an output limit even when the call sets no `maxTokens` (the model's limit, at most
	 * 32000, as pi-ai does). Off for local servers: their real limit depends on how they were
	 * started, and vLLM rejects a request whose prompt plus limit exceeds its context length.
	 */
	sendDefaultMaxTokens?: boolean | undefined;
	/** Send `stream_options: { include_usage: true }`, so token usage arrives in the last chunk. */
	supportsUsageInStreaming?: boolean | undefined;
	/** Send `store: false` (OpenAI would otherwise keep the completion for 30 days). */
	supportsStore?: boolean | undefined;
	/** Send the system prompt with role `developer` to reasoning models (OpenAI); otherwise role `system`. */
	supportsDeveloperRole?: boolean | undefined;
	/** Send `reasoning_effort` (for the `openai` and `deepseek` thinking formats). */
	supportsReasoningEffort?: boolean | undefined;
	/** How reasoning is requested; see {@link OpenAIThinkingFormat}. */
	thinkingFormat?: OpenAIThinkingFormat | undefined;
	/**
	 * The delta fields read as reasoning text, in order of preference. Only the first non-empty
	 * one of a chunk is used, because some servers send the same text in two fields.
	 * Default: `["reasoning_content", "reasoning", "reasoning_text"]`.
	 */
	reasoningFields?: readonly string[] | undefined;
	/**
	 * Send this model's earlier reasoning back on its assistant messages, in the field it arrived
	 * in (llama.cpp needs it for gpt-oss, DeepSeek for tool calls in thinking mode). Groq rejects
	 * assistant messages with a reasoning field.
	 */
	sendReasoningBack?: boolean;
	/** Give every replayed assistant message a `reasoning_content` field, even an empty one (DeepSeek). */
	requiresReasoningContentOnAssistantMessages?: boolean | undefined;
	/** Send earlier reasoning back as plain text in the assistant message instead of a reasoning field. */
	requiresThinkingAsText?: boolean | undefined;
	/** Tool results carry the tool's `name`. */
	requiresToolResultName?: boolean | undefined;
	/** A user message may not follow tool results directly: insert a short assistant message between them. */
	requiresAssistantAfterToolResult?: boolean | undefined;
	/** Send `strict: false` in tool definitions. Servers that do not know the field may reject it. */
	supportsStrictMode?: boolean | undefined;
	/** How tool-call ids are rewritten for the server; see {@link OpenAIToolCallIdFormat}. */
	toolCallIdFormat?: OpenAIToolCallIdFormat | undefined;
	/** pi-ai's older name for `toolCallIdFormat: "mistral"`. */
	requiresMistralToolIds?: boolean | undefined;
	/**
	 * Fail without a request when no API key is found. Off for local servers, which ignore the
	 * key: a placeholder is sent because the SDK requires one.
	 */
	requiresApiKey?: boolean | undefined;
	/** Add Anthropic-style `cache_control` markers (OpenRouter in front of Claude models). */
	cacheControlFormat?: "anthropic" | undefined;
	/** The server keeps prompt caches longer on request (`prompt_cache_retention: "24h"`, or a 1 h `cache_control` TTL). */
	supportsLongCacheRetention?: boolean | undefined;
	/** Send `session_id`, `x-client-request-id` and `x-session-affinity` headers from the session id. */
	sendSessionAffinityHeaders?: boolean | undefined;
	/** OpenRouter provider routing, sent as the `provider` field when the base URL is OpenRouter's. */
	openRouterRouting?: Record<string, unknown> | undefined;
	/** Vercel AI Gateway routing, sent as `providerOptions.gateway` when the base URL is the gateway's. */
	vercelGatewayRouting?: { only?: string[]; order?: string[] };
	/** Send `tool_stream: true`, which z.ai needs to stream tool-call arguments. */
	zaiToolStream?: boolean | undefined;
}

/**
 * The compat switches of one call, every default filled in.
 *
 * @example
 * const compat: ResolvedOpenAICompat = resolveOpenAICompat(model);
 * console.log(compat.thinkingFormat, compat.maxTokensField, compat.supportsStore);
 */
export type ResolvedOpenAICompat = {
	[K in keyof Omit<OpenAICompletionsCompat, "requiresMistralToolIds" | "cacheControlFormat" | "openRouterRouting" | "vercelGatewayRouting">]-?: Exclude<OpenAICompletionsCompat[K], undefined>;
} &
	Pick<OpenAICompletionsCompat, "cacheControlFormat" | "openRouterRouting" | "vercelGatewayRouting">;

/**
 * A server we know by its base URL, and the switches it needs.
 *
 * @example
 * const server: OpenAICompatibleServer = detectOpenAICompatibleServer("http://127.0.0.1:11434/v1");
 * console.log(server.name, server.compat.thinkingFormat);
 */
export interface OpenAICompatibleServer {
	/** Used as `Model.provider` by {@link createOpenAICompatibleModel}, and for the key variable. */
	id: string;
	name: string;
	/** The usual base URL. */
	baseUrl: string;
	/** Host names (or their suffixes) that identify the server. */
	hosts?: readonly string[] | undefined;
	/** The server's default port, which identifies a local server on any host. */
	port?: number | undefined;
	/** The environment variable the key is read from when the call passes none. */
	apiKeyEnv?: string | undefined;
	compat: OpenAICompletionsCompat;
}

const defaultReasoningFields: readonly string[] = ["reasoning_content", "reasoning", "reasoning_text"];

/** What a server that follows OpenAI's API closely accepts. */
const openAIStyle: OpenAICompletionsCompat = {
	maxTokensField: "max_completion_tokens",
	sendDefaultMaxTokens: true,
	supportsStore: true,
	supportsDeveloperRole: true,
	supportsStrictMode: true,
};

/**
 * Local servers: a conservative subset every one of them accepts, no key, and no default
 * output limit (it is set when the server starts).
 */
const localServer: OpenAICompletionsCompat = {
	maxTokensField: "max_tokens",
	sendDefaultMaxTokens: false,
	supportsStore: false,
	supportsDeveloperRole: false,
	supportsStrictMode: false,
	requiresApiKey: false,
};

/** Hosted servers we know nothing about: only fields every server in this list accepts. */
const unknownHostedServer: OpenAICompletionsCompat = {
	maxTokensField: "max_tokens",
	sendDefaultMaxTokens: true,
	supportsStore: false,
	supportsDeveloperRole: false,
	supportsStrictMode: false,
	requiresApiKey: true,
};

/**
 * The servers whose defaults are built in, matched against the base URL's host (or, for
 * local servers, its port). The first match wins.
 *
 * @example
 * openAICompatibleServers.find((s) => s.id === "ollama")?.baseUrl; // "http://127.0.0.1:11434/v1"
 */
export const openAICompatibleServers: readonly OpenAICompatibleServer[] = Object.freeze([
	{
		id: "openai",
		name: "OpenAI",
		baseUrl: "https://api.openai.com/v1",
		hosts: ["api.openai.com"],
		apiKeyEnv: "OPENAI_API_KEY",
		compat: { ...openAIStyle, toolCallIdFormat: "openai", supportsLongCacheRetention: true },
	},
	{
		id: "openrouter",
		name: "OpenRouter",
		baseUrl: "https://openrouter.ai/api/v1",
		hosts: ["openrouter.ai"],
		apiKeyEnv: "OPENROUTER_API_KEY",
		compat: { ...unknownHostedServer, thinkingFormat: "openrouter" },
	},
	{
		id: "groq",
		name: "Groq",
		baseUrl: "https://api.groq.com/openai/v1",
		hosts: ["api.groq.com"],
		apiKeyEnv: "GROQ_API_KEY",
		compat: { ...unknownHostedServer, maxTokensField: "max_completion_tokens", sendReasoningBack: false },
	},
	{
		id: "deepseek",
		name: "DeepSeek",
		baseUrl: "https://api.deepseek.com/v1",
		hosts: ["api.deepseek.com"],
		apiKeyEnv: "DEEPSEEK_API_KEY",
		compat: { ...unknownHostedServer, thinkingFormat: "deepseek", requiresReasoningContentOnAssistantMessages: true },
	},
	{
		id: "xai",
		name: "xAI",
		baseUrl: "https://api.x.ai/v1",
		hosts: ["api.x.ai"],
		apiKeyEnv: "XAI_API_KEY",
		compat: { ...unknownHostedServer, maxTokensField: "max_completion_tokens", supportsReasoningEffort: false },
	},
	{
		id: "cerebras",
		name: "Cerebras",
		baseUrl: "https://api.cerebras.ai/v1",
		hosts: ["api.cerebras.ai"],
		apiKeyEnv: "CEREBRAS_API_KEY",
		compat: { ...unknownHostedServer, maxTokensField: "max_completion_tokens" },
	},
	{
		id: "ollama",
		name: "Ollama",
		baseUrl: "http://127.0.0.1:11434/v1",
		port: 11434,
		apiKeyEnv: "OLLAMA_API_KEY",
		compat: localServer,
	},
	{
		id: "lm-studio",
		name: "LM Studio",
		baseUrl: "http://127.0.0.1:1234/v1",
		port: 1234,
		apiKeyEnv: "LM_STUDIO_API_KEY",
		compat: localServer,
	},
	{
		id: "vllm",
		name: "vLLM",
		baseUrl: "http://127.0.0.1:8000/v1",
		port: 8000,
		apiKeyEnv: "VLLM_API_KEY",
		compat: localServer,
	},
	{
		id: "llama.cpp",
		name: "llama.cpp server",
		baseUrl: "http://127.0.0.1:8080/v1",
		port: 8080,
		apiKeyEnv: "LLAMA_CPP_API_KEY",
		compat: localServer,
	},
]);

/** Any other server on this machine or a private network. */
const otherLocalServer: OpenAICompatibleServer = {
	id: "local",
	name: "Local server",
	baseUrl: "http://127.0.0.1/v1",
	compat: localServer,
};

/** Any other hosted server. */
const otherHostedServer: OpenAICompatibleServer = {
	id: "openai-compatible",
	name: "OpenAI-compatible server",
	baseUrl: "",
	compat: unknownHostedServer,
};

function parseUrl(baseUrl: string): URL | undefined {
	try {
		return new URL(baseUrl);
	} catch {
		return undefined;
	}
}

/**
 * True for loopback, private-network and link-local hosts (and `.local` / `.internal`
 * names): servers someone runs themselves, which usually need no key.
 *
 * @example
 * isLocalBaseUrl("http://192.168.1.20:11434/v1"); // true
 * isLocalBaseUrl("https://api.groq.com/openai/v1"); // false
 */
export function isLocalBaseUrl(baseUrl: string): boolean {
	const host = parseUrl(baseUrl)?.hostname.replace(/^\[|\]$/g, "").toLowerCase();
	if (!host) return false;
	if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".local") || host.endsWith(".internal")) return true;
	if (host.includes(":")) return host === "::1" || /^f[cd][0-9a-f]{0,2}:/.test(host) || host.startsWith("fe80:");
	const octets = host.split(".").map(Number);
	if (octets.length !== 4 || octets.some((n) => !Number.isInteger(n))) return false;
	const [a = -1, b = -1] = octets;
	return a === 127 || a === 10 || (a === 192 && b === 168) || (a === 172 && b >= 16 && b <= 31) || (a === 169 && b === 254);
}

function effectivePort(url: URL): number {
	if (url.port) return Number(url.port);
	return url.protocol === "https:" ? 443 : 80;
}

/**
 * The known server a base URL points to: by host for hosted services, by a server's default
 * port (on any host: a vLLM behind a name on :8000 is found too), else a generic local or hosted
 * entry.
 *
 * @example
 * detectOpenAICompatibleServer("http://localhost:11434/v1").id; // "ollama"
 * detectOpenAICompatibleServer("https://llm.example.com/v1").id; // "openai-compatible"
 */
export function detectOpenAICompatibleServer(baseUrl: string): OpenAICompatibleServer {
	const url = parseUrl(baseUrl);
	if (url) {
		const host = url.hostname.toLowerCase();
		const port = effectivePort(url);
		for (const server of openAICompatibleServers) {
			if (server.hosts?.some((known) => host === known || host.endsWith(`.${known}`))) return server;
			if (server.port !== undefined && server.port === port) return server;
		}
	}
	return isLocalBaseUrl(baseUrl) ? otherLocalServer : otherHostedServer;
}

const baseline: ResolvedOpenAICompat = {
	maxTokensField: "max_completion_tokens",
	sendDefaultMaxTokens: true,
	supportsUsageInStreaming: true,
	supportsStore: false,
	supportsDeveloperRole: false,
	supportsReasoningEffort: true,
	thinkingFormat: "openai",
	reasoningFields: defaultReasoningFields,
	sendReasoningBack: true,
	requiresReasoningContentOnAssistantMessages: false,
	requiresThinkingAsText: false,
	requiresToolResultName: false,
	requiresAssistantAfterToolResult: false,
	supportsStrictMode: false,
	toolCallIdFormat: "keep",
	requiresApiKey: true,
	supportsLongCacheRetention: false,
	sendSessionAffinityHeaders: false,
	zaiToolStream: false,
};

function definedFields<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
	return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as {
		[K in keyof T]?: Exclude<T[K], undefined>;
	};
}

/**
 * The known server a model is for: the one its `provider` names (`openai`, `groq`, `ollama`,
 * ...), as pi-ai takes the provider before the URL; otherwise the one its base URL points to.
 */
function serverForModel(model: Pick<Model, "baseUrl" | "provider">): OpenAICompatibleServer {
	return openAICompatibleServers.find((server) => server.id === model.provider) ?? detectOpenAICompatibleServer(model.baseUrl);
}

/**
 * The switches for a call: the model's own `compat`, over the defaults of its server, over
 * OpenAI's behaviour. The server is the one the model's `provider` names, else the one its base
 * URL points to: a model whose provider is `"openai"` gets OpenAI's request form (`developer`
 * role, `max_completion_tokens`, `store: false`) wherever it is served, as pi-ai sends it. A
 * hosted provider's model served from a local address needs no key, as local servers don't.
 * Claude models on OpenRouter get Anthropic cache markers.
 *
 * @example
 * resolveOpenAICompat(createOpenAICompatibleModel({ baseUrl: "http://127.0.0.1:11434/v1", id: "qwen3" })).maxTokensField;
 * // "max_tokens"
 */
export function resolveOpenAICompat(model: Pick<Model, "baseUrl" | "id" | "compat"> & Partial<Pick<Model, "provider">>): ResolvedOpenAICompat {
	const server = model.provider === undefined ? detectOpenAICompatibleServer(model.baseUrl) : serverForModel({ baseUrl: model.baseUrl, provider: model.provider });
	const own = definedFields((model.compat ?? {}) as OpenAICompletionsCompat);
	const { requiresMistralToolIds, ...switches } = own;
	const keyless = server.port === undefined && isLocalBaseUrl(model.baseUrl) ? { requiresApiKey: false } : {};
	const resolved: ResolvedOpenAICompat = { ...baseline, ...definedFields(server.compat), ...keyless, ...switches };
	if (requiresMistralToolIds && switches.toolCallIdFormat === undefined) resolved.toolCallIdFormat = "mistral";
	if (server.id === "openrouter" && model.id.startsWith("anthropic/") && own.cacheControlFormat === undefined) {
		resolved.cacheControlFormat = "anthropic";
	}
	return resolved;
}
