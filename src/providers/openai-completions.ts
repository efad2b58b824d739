/**
 * The OpenAI-compatible provider: a stream function over the official `openai` SDK's
 * streaming Chat Completions, for OpenAI itself and for the servers that speak its protocol
 * (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, Groq, ...).
 *
 * It follows pi-ai's contract for its `openai-completions` API: it returns at once, never
 * throws, and encodes every failure (HTTP errors, a broken, stalled or truncated stream, an
 * abort) as a final `error` event whose message keeps whatever content and usage had arrived.
 * The SDK is loaded on the first call, so importing agentchart does not load it.
 */
import { streamContextProblem, streamOptionsProblem } from "./stream-option-check.js";
import type { AssistantMessage } from "../types/messages.js";
import type { Context, Model } from "../types/model.js";
import { createAssistantMessage } from "./assistant-message.js";
import { endOnThrow } from "./unexpected-throw.js";
import { baseUrlProblem } from "./base-url.js";
import { AssistantMessageEventStream } from "./event-stream.js";
import {
	createOpenAIClient,
	type ErrorBodyRecorder,
	loadOpenAISdk,
	missingOpenAIKeyMessage,
	type OpenAISdk,
	resolveOpenAIApiKey,
} from "./openai-client.js";
import { resolveOpenAICompat } from "./openai-compat.js";
import { abortedMessage, describeOpenAIError } from "./openai-errors.js";
import type { OpenAICompletionsOptions } from "./openai-options.js";
import { buildOpenAICompletionsRequest, type OpenAICompletionsRequest } from "./openai-request.js";
import { readResponseBody } from "./openai-response.js";
import { OpenAIChunkReader } from "./openai-stream-reader.js";
import { failedStop } from "../util/stop-reason.js";

function headersToRecord(headers: Headers): Record<string, string> {
	const record: Record<string, string> = {};
	headers.forEach((value, key) => {
		record[key] = value;
	});
	return record;
}

async function runOpenAICall(
	model: Model,
	context: Context,
	options: OpenAICompletionsOptions,
	stream: AssistantMessageEventStream,
): Promise<void> {
	const output: AssistantMessage = createAssistantMessage(model);
	const signal = options.signal;
	const recorder: ErrorBodyRecorder = {};
	let sdk: OpenAISdk | undefined;
	try {
		const problem = baseUrlProblem(model.baseUrl);
		if (problem) throw new Error(`Model ${model.id} (provider ${model.provider}): ${problem}`);
		const optionProblem = streamContextProblem(context) ?? streamOptionsProblem(options, "options");
		if (optionProblem) throw new TypeError(optionProblem);
		const compat = resolveOpenAICompat(model);
		const apiKey = resolveOpenAIApiKey(model, options, compat);
		if (!apiKey) throw new Error(missingOpenAIKeyMessage(model));
		sdk = await loadOpenAISdk();
		const client = createOpenAIClient(sdk, model, apiKey, options, compat, recorder);

		let body = buildOpenAICompletionsRequest(model, context, options, compat);
		const replacement = await options.onPayload?.(body, model);
		if (replacement !== undefined) body = { ...(replacement as OpenAICompletionsRequest), stream: true };

		const response = await client.chat.completions.create(body, signal ? { signal } : {}).asResponse();
		await options.onResponse?.({ status: response.status, headers: headersToRecord(response.headers) }, model);
		stream.push({ type: "start", partial: output });

		const reader = new OpenAIChunkReader(output, model, compat, stream);
		const lastEvent = await readResponseBody(response, reader, options.timeoutMs, signal);
		if (signal?.aborted) throw new Error(abortedMessage);
		const outcome = reader.finish(lastEvent);
		output.stopReason = outcome.stopReason;
		if (failedStop(outcome.stopReason)) {
			output.errorMessage = outcome.errorMessage ?? "The model stopped with an error";
			stream.push({ type: "error", reason: outcome.stopReason, error: output });
			return;
		}
		stream.push({ type: "done", reason: outcome.stopReason, message: output });
	} catch (error) {
		const aborted = signal?.aborted === true;
		output.stopReason = aborted ? "aborted" : "error";
		output.errorMessage = aborted
			? abortedMessage
			: describeOpenAIError(error, sdk, {
					baseUrl: model.baseUrl,
					...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
					...(recorder.last ? { lastErrorBody: recorder.last } : {}),
				});
		stream.push({ type: "error", reason: output.stopReason, error: output });
	}
}

/**
 * Streams one reply from an OpenAI-compatible Chat Completions server. Same signature and
 * contract as pi-ai's stream functions, so it plugs into an `Agent` as its `streamFn`; the
 * server's differences come from `model.compat` and the defaults for its base URL.
 *
 * Never throws: HTTP errors (400 context overflow, 401, 429 after retries, a proxy's HTML
 * 502), a malformed chunk, a stream that stalls (no bytes for `timeoutMs`) or ends early, and
 * an abort all end the stream with an `error` event carrying a readable `errorMessage` and
 * whatever content had arrived.
 *
 * @example
 * import { Agent, createOpenAICompatibleModel, streamOpenAICompletions } from "agentchart";
 *
 * const model = createOpenAICompatibleModel({ baseUrl: "http://127.0.0.1:11434/v1", id: "qwen3:8b" });
 * const agent = new Agent({ initialState: { model, systemPrompt: "Be brief.", tools: [] }, streamFn: streamOpenAICompletions });
 * await agent.prompt("Hello!");
 *
 * // Or on its own:
 * const stream = streamOpenAICompletions(model, { messages: [{ role: "user", content: "Hi", timestamp: Date.now() }] });
 * for await (const event of stream) if (event.type === "text_delta") process.stdout.write(event.delta);
 */
export function streamOpenAICompletions(
	model: Model,
	context: Context,
	options: OpenAICompletionsOptions = {},
): AssistantMessageEventStream {
	const stream = new AssistantMessageEventStream();
	endOnThrow(runOpenAICall(model, context, options, stream), stream, model, "streamOpenAICompletions");
	return stream;
}
