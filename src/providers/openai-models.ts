/**
 * Model entries for OpenAI-compatible servers. There is no catalogue: local servers run
 * whatever model someone pulled, so an entry is built from a base URL and a model id.
 */
import { shown, unknownKeys } from "../agent-input.js";
import type { Model, ThinkingLevel } from "../types/model.js";
import { baseUrlProblem } from "./base-url.js";
import { detectOpenAICompatibleServer, type OpenAICompletionsCompat } from "./openai-compat.js";

/**
 * What {@link createOpenAICompatibleModel} needs; everything but `baseUrl` and `id` has a default.
 *
 * @example
 * const options: OpenAICompatibleModelOptions = { baseUrl: "http://127.0.0.1:11434/v1", id: "qwen3:8b", reasoning: true, contextWindow: 32_768 };
 * const model = createOpenAICompatibleModel(options);
 */
export interface OpenAICompatibleModelOptions {
	/** The server's API root, including `/v1` (e.g. `http://127.0.0.1:11434/v1`). */
	baseUrl: string;
	/** The model name the server knows, sent as `model`. */
	id: string;
	/** Display name. Default: the id. */
	name?: string | undefined;
	/** Provider name. Default: the detected server (`ollama`, `openrouter`, ..., by host, or by its default port on any host), `local` for any other loopback, private or `.local` host, else `openai-compatible`. */
	provider?: string | undefined;
	/** Whether the model reasons, so reasoning levels are requested. Default: false. */
	reasoning?: boolean | undefined;
	/** Server-specific names per reasoning level (`null`: the level is not supported). */
	thinkingLevelMap?: Partial<Record<"off" | ThinkingLevel, string | null>> | undefined;
	/** Default: text only. */
	input?: ("text" | "image")[] | undefined;
	/** Context size in tokens. Default: 128000. Set it to what the server was started with. */
	contextWindow?: number | undefined;
	/** Output limit in tokens. Default: 16384. */
	maxTokens?: number | undefined;
	/** US dollars per million tokens. Default: free (a local server). */
	cost?: Partial<Model["cost"]> | undefined;
	/** Extra HTTP headers for every request. */
	headers?: Record<string, string> | undefined;
	/** Switches over the detected server's defaults. */
	compat?: OpenAICompletionsCompat | undefined;
}

/** Every option of {@link OpenAICompatibleModelOptions} (the type makes the list whole). */
const MODEL_OPTIONS = Object.keys({
	baseUrl: true,
	id: true,
	name: true,
	provider: true,
	reasoning: true,
	thinkingLevelMap: true,
	input: true,
	contextWindow: true,
	maxTokens: true,
	cost: true,
	headers: true,
	compat: true,
} satisfies Record<keyof OpenAICompatibleModelOptions, true>);

/**
 * What every model needs, and no option it does not take: a misspelt `contextwindow` would leave
 * 128000 where the server was started with less, and compaction would come too late. `baseURL`
 * (the OpenAI SDK's spelling) gets a hint.
 */
function checkModelOptions(options: OpenAICompatibleModelOptions): void {
	const problem = (why: string) => new TypeError(`createOpenAICompatibleModel: ${why}`);
	if (typeof options !== "object" || options === null) throw problem(`options must be an object such as { baseUrl: "http://127.0.0.1:11434/v1", id: "qwen3:8b" }, got ${shown(options)}`);
	const unknown = unknownKeys(options, MODEL_OPTIONS);
	if (unknown !== undefined) throw problem(`no option ${unknown} (its options: ${MODEL_OPTIONS.join(", ")})${"baseURL" in options ? '; the base URL is spelt "baseUrl" here' : ""}`);
	if (typeof options.baseUrl !== "string") throw problem(`baseUrl must be the server's API root, e.g. http://127.0.0.1:11434/v1, got ${shown(options.baseUrl)}`);
	if (typeof options.id !== "string" || options.id === "") throw problem(`id must be the model name the server knows (a non-empty text), got ${shown(options.id)}`);
}

const defaultContextWindow = 128_000;
const defaultMaxTokens = 16_384;

/**
 * Builds a model entry for any OpenAI-compatible server. The server's defaults are found from
 * the base URL when the model is used (see `resolveOpenAICompat`); `compat` overrides them.
 * Giving `maxTokens` explicitly also makes it the limit sent by default. Throws a `TypeError`
 * for a base URL that is not an `http://` or `https://` URL.
 *
 * @example
 * import { Agent, createOpenAICompatibleModel, streamOpenAICompletions } from "agentchart";
 *
 * const model = createOpenAICompatibleModel({ baseUrl: "http://127.0.0.1:11434/v1", id: "qwen3:8b", contextWindow: 32_768 });
 * const agent = new Agent({ initialState: { model, systemPrompt: "Be brief.", tools: [] }, streamFn: streamOpenAICompletions });
 */
export function createOpenAICompatibleModel(options: OpenAICompatibleModelOptions): Model<"openai-completions"> {
	checkModelOptions(options);
	const problem = baseUrlProblem(options.baseUrl);
	if (problem) throw new TypeError(`createOpenAICompatibleModel: ${problem}`);
	const baseUrl = options.baseUrl.trim().replace(/\/+$/, "");
	const server = detectOpenAICompatibleServer(baseUrl);
	const compat: OpenAICompletionsCompat = {
		...(options.maxTokens !== undefined ? { sendDefaultMaxTokens: true } : {}),
		...options.compat,
	};
	return {
		id: options.id,
		name: options.name ?? options.id,
		api: "openai-completions",
		provider: options.provider ?? server.id,
		baseUrl,
		reasoning: options.reasoning ?? false,
		...(options.thinkingLevelMap ? { thinkingLevelMap: { ...options.thinkingLevelMap } } : {}),
		input: options.input ? [...options.input] : ["text"],
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...options.cost },
		contextWindow: options.contextWindow ?? defaultContextWindow,
		maxTokens: options.maxTokens ?? defaultMaxTokens,
		...(options.headers ? { headers: { ...options.headers } } : {}),
		...(Object.keys(compat).length > 0 ? { compat: { ...compat } } : {}),
	};
}
