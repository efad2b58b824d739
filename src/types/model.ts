import type { TSchema } from "typebox";
import type { Message } from "./messages.js";

/**
 * Wire protocols with known names; any other string is allowed for custom providers.
 *
 * @example
 * const isAnthropic = (model: Model) => model.api === ("anthropic-messages" satisfies KnownApi);
 */
export type KnownApi =
	| "openai-completions"
	| "mistral-conversations"
	| "openai-responses"
	| "azure-openai-responses"
	| "openai-codex-responses"
	| "anthropic-messages"
	| "bedrock-converse-stream"
	| "google-generative-ai"
	| "google-vertex"
	| "scripted";
/**
 * The wire protocol a model speaks.
 *
 * @example
 * const model: Model<"openai-completions"> = createOpenAICompatibleModel({ baseUrl: "http://127.0.0.1:11434/v1", id: "qwen3:8b" });
 */
export type Api = KnownApi | (string & {});
/**
 * The provider that serves a model, e.g. "anthropic".
 *
 * @example
 * const key = process.env[`${model.provider.toUpperCase()}_API_KEY`];
 */
export type Provider = string;

/**
 * Reasoning effort requested from a reasoning model.
 *
 * @example
 * await streamAnthropic(model, context, { reasoning: "high" }).result();
 */
export type ThinkingLevel = "minimal" | "low" | "medium" | "high" | "xhigh";

/**
 * Token budgets per thinking level, overriding a provider's defaults.
 *
 * @example
 * const agent = new Agent({ thinkingBudgets: { low: 2048, medium: 8192, high: 24_576 } });
 */
export interface ThinkingBudgets {
	minimal?: number | undefined;
	low?: number | undefined;
	medium?: number | undefined;
	high?: number | undefined;
}

/**
 * How long a provider should keep the prompt cache.
 *
 * @example
 * streamAnthropic(model, context, { cacheRetention: "long" }); // a 1-hour prompt cache
 */
export type CacheRetention = "none" | "short" | "long";
/**
 * Transport preference for providers that support more than SSE.
 *
 * @example
 * const agent = new Agent({ transport: "sse" });
 */
export type Transport = "sse" | "websocket" | "websocket-cached" | "auto";

/**
 * HTTP status and headers of a provider response that was accepted (a 2xx), given to `onResponse`.
 *
 * @example
 * const agent = new Agent({ onResponse: (response: ProviderResponse) => console.log(response.status, response.headers["x-request-id"]) });
 */
export interface ProviderResponse {
	status: number;
	headers: Record<string, string>;
}

/**
 * A model and what it costs and supports.
 *
 * @example
 * const model: Model = { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: "https://gateway.example.com" };
 */
export interface Model<TApi extends Api = Api> {
	/** Id sent to the provider, e.g. "claude-sonnet-4-5". */
	id: string;
	/** Display name. */
	name: string;
	/** Wire protocol. */
	api: TApi;
	/** Provider name. */
	provider: Provider;
	/** API base URL. */
	baseUrl: string;
	/** Whether the model supports reasoning (thinking). */
	reasoning: boolean;
	/** Provider-specific names for thinking levels (`null`: unsupported). */
	thinkingLevelMap?: Partial<Record<"off" | ThinkingLevel, string | null>> | undefined;
	/** Accepted input kinds. */
	input: ("text" | "image")[];
	/** US dollars per million tokens. */
	cost: { input: number; output: number; cacheRead: number; cacheWrite: number };
	/** Maximum context size in tokens. */
	contextWindow: number;
	/** Maximum output tokens per reply. */
	maxTokens: number;
	/** Extra HTTP headers for every request. */
	headers?: Record<string, string> | undefined;
	/**
	 * Provider compatibility switches, e.g. `OpenAICompletionsCompat` for the OpenAI-compatible
	 * provider. Typed as loosely as any of pi-ai's per-API switch types, so pi-ai's model entries
	 * are agentchart models as they are.
	 */
	compat?: object | undefined;
}

/**
 * Options every stream function accepts.
 *
 * @example
 * streamAnthropic(model, context, { maxTokens: 1024, timeoutMs: 60_000, maxRetries: 2, signal: AbortSignal.timeout(120_000) });
 */
export interface StreamOptions {
	/**
	 * Sampling temperature: sent by `streamOpenAICompletions` when set (with reasoning too); not sent
	 * by `streamAnthropic` (the API version it speaks refuses it on every model); pi-ai's providers
	 * decide for themselves.
	 */
	temperature?: number | undefined;
	/** Maximum output tokens. */
	maxTokens?: number | undefined;
	/** Aborts the request; the stream then ends with stopReason "aborted". */
	signal?: AbortSignal | undefined;
	/** API key; providers fall back to their environment variable. */
	apiKey?: string | undefined;
	/** Transport preference. */
	transport?: Transport | undefined;
	/** Prompt cache retention ("none" disables caching). */
	cacheRetention?: CacheRetention | undefined;
	/** Session id, used by providers for caching or request metadata. */
	sessionId?: string | undefined;
	/** Inspect the request body; return a replacement to send instead. */
	onPayload?: ((payload: unknown, model: Model) => unknown | undefined | Promise<unknown | undefined>) | undefined;
	/** Called with the HTTP status and headers of an accepted (2xx) response once they arrive; an error response ends the call without it, as in pi-ai. */
	onResponse?: ((response: ProviderResponse, model: Model) => void | Promise<void>) | undefined;
	/** Extra HTTP headers. */
	headers?: Record<string, string> | undefined;
	/** Request timeout in milliseconds. */
	timeoutMs?: number | undefined;
	/** Retries for transient failures (429, 529, 5xx, connection errors). */
	maxRetries?: number | undefined;
	/** Cap on a single retry delay, in milliseconds. */
	maxRetryDelayMs?: number | undefined;
	/**
	 * The most bytes one streamed reply may bring (default 256 MB; 0: no bound). A server that
	 * streams past it gets its request cancelled and the reply ends as an error that says so,
	 * keeping what had streamed. Honoured by `streamAnthropic`, `streamOpenAICompletions` and
	 * `streamProxy` (not sent to the proxy).
	 *
	 * @example
	 * streamAnthropic(model, context, { maxReplyBytes: 64 * 1024 * 1024 });
	 */
	maxReplyBytes?: number | undefined;
	/** Provider request metadata. */
	metadata?: Record<string, unknown> | undefined;
}

/**
 * Stream options plus a provider-neutral reasoning level, as pi-ai's `streamSimple` takes.
 *
 * @example
 * const options: SimpleStreamOptions = { reasoning: "medium", maxTokens: 4096 };
 * await streamOpenAICompletions(model, context, options).result();
 */
export interface SimpleStreamOptions extends StreamOptions {
	/** Reasoning effort; undefined means thinking off. */
	reasoning?: ThinkingLevel | undefined;
	/** Token budgets per level. */
	thinkingBudgets?: ThinkingBudgets | undefined;
}

/**
 * A tool's parameter schema: a JSON Schema object. Schemas built with the `typebox` 1.x
 * package (as pi 0.73.1's tools are) give their tools typed arguments; a plain JSON Schema
 * written `as const` does too.
 *
 * @example
 * const parameters: ToolParameters = Type.Object({ query: Type.String() });
 */
export type ToolParameters = TSchema;

/**
 * A tool as the model sees it: a name, a description and a parameter schema.
 *
 * @example
 * const search: Tool = { name: "search", description: "Search the notes", parameters: Type.Object({ query: Type.String() }) };
 */
export interface Tool<TParameters extends ToolParameters = ToolParameters> {
	/** Name the model calls it by. */
	name: string;
	/** What it does, for the model. */
	description: string;
	/** Its arguments, as a JSON Schema. */
	parameters: TParameters;
}

/**
 * What one LLM call sees: the system prompt, the messages and the tools.
 *
 * @example
 * const context: Context = { systemPrompt: "Be brief.", messages: [{ role: "user", content: "Hi", timestamp: Date.now() }] };
 * const reply = await streamAnthropic(getModel("anthropic", "claude-haiku-4-5"), context).result();
 */
export interface Context {
	systemPrompt?: string | undefined;
	messages: Message[];
	tools?: Tool[] | undefined;
}
