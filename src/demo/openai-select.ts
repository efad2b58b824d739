/**
 * The demo's OpenAI-compatible choice: a model entry and a stream function for the server
 * given on the command line (`--provider openai-compatible --base-url ... --model ...`), such
 * as a local Ollama, vLLM, llama.cpp or LM Studio, or a hosted gateway.
 */
import { createOpenAICompatibleModel } from "../providers/openai-models.js";
import { streamOpenAICompletions } from "../providers/openai-completions.js";
import type { Model } from "../types/model.js";
import type { StreamFn } from "../types/stream.js";
import { DemoUsageError } from "./cli-args.js";

/** What the command line gives. */
export interface OpenAICompatibleDemoFlags {
	/** The server's API root, e.g. `http://127.0.0.1:11434/v1`. */
	baseUrl: string;
	/** The model name the server knows, e.g. `qwen3:8b`. */
	model: string;
	/** A key for hosted servers; local ones need none (the provider's `<PROVIDER>_API_KEY` variable works too). */
	apiKey?: string | undefined;
}

/** What the demo runs on. */
export interface OpenAICompatibleDemoChoice {
	model: Model;
	streamFn: StreamFn;
}

/**
 * Builds the model entry and stream function for the demo. Throws a usage error (printed with
 * the usage, exit status 2, as for any bad flag) for a base URL that is not an http(s) URL or an
 * empty model name.
 *
 * @example
 * const { model, streamFn } = selectOpenAICompatibleModel({ baseUrl: "http://127.0.0.1:11434/v1", model: "qwen3:8b" });
 * const agent = new Agent({ initialState: { model, systemPrompt: "Be brief.", tools: [] }, streamFn });
 */
export function selectOpenAICompatibleModel(flags: OpenAICompatibleDemoFlags): OpenAICompatibleDemoChoice {
	const baseUrl = flags.baseUrl.trim();
	let protocol: string;
	try {
		protocol = new URL(baseUrl).protocol;
	} catch {
		throw new DemoUsageError(`--base-url must be a URL such as http://127.0.0.1:11434/v1, got "${flags.baseUrl}"`);
	}
	if (protocol !== "http:" && protocol !== "https:") {
		throw new DemoUsageError(`--base-url must be an http or https URL, got "${flags.baseUrl}"`);
	}
	const id = flags.model.trim();
	if (id === "") throw new DemoUsageError("--model is required with --provider openai-compatible (the name the server knows)");

	const model = createOpenAICompatibleModel({ baseUrl, id });
	const apiKey = flags.apiKey?.trim();
	const streamFn: StreamFn = (callModel, context, options) =>
		streamOpenAICompletions(callModel, context, apiKey && !options?.apiKey ? { ...options, apiKey } : options);
	return { model, streamFn };
}
