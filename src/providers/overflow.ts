/**
 * Recognising a context overflow, so the agent can compact and retry instead of failing.
 *
 * Providers report overflow in three ways: an error whose message says so (Anthropic: 400
 * "prompt is too long", 413 "request_too_large"; each OpenAI-compatible server in its own
 * words), a successful reply whose reported input is larger than the window (some gateways
 * truncate silently), or a reply cut off by the length limit with no output because the input
 * filled the window.
 */
import type { AssistantMessage } from "../types/messages.js";

const overflowPatterns: readonly RegExp[] = [
	/prompt is too long/i, // Anthropic 400 invalid_request_error
	/request_too_large/i, // Anthropic 413 type
	/request exceeds the maximum allowed number of bytes/i, // Anthropic 413 message
	/\b413\b.*too large/i,
	/model_context_window_exceeded/i,
	/exceeds the context window/i,
	/maximum context length is \d+ tokens/i,
	/exceeds the limit of \d+/i, // GitHub Copilot
	/context window exceeds limit/i, // MiniMax
	/exceeded model token limit/i, // Kimi
	/^4(?:00|13)\s*(?:status code)?\s*\(no body\)/i, // Cerebras: 400 or 413 with no body, as pi-ai words it
	/^4(?:00|13) [^:]*: (?:status code \(no body\)|the server sent no error message)$/i, // the same, as our providers word it
	/context[_ ]length[_ ]exceeded/i,
	/context window (?:exceeded|is full)/i,
	/too many tokens/i,
	/token limit exceeded/i,
	/input is too long for requested model/i,
	// OpenAI-compatible servers (see the OpenAI-compatible provider's tests for the bodies).
	/exceeds the available context size/i, // llama.cpp server
	/exceed_context_size_error/i, // llama.cpp server error type
	/greater than the context length/i, // LM Studio
	/prompt too long; exceeded (?:max )?context length/i, // Ollama
	/reduce the length of the messages/i, // Groq
	/maximum prompt length is \d+/i, // xAI
	/is longer than the maximum model length/i, // vLLM, decoder prompt
	/exceeds the model'?s maximum context length/i, // SGLang
	/too large for model with \d+ maximum context length/i, // Mistral
	/input token count.*exceeds the maximum/i, // Gemini's OpenAI endpoint
];

// Rate limits also talk about "tokens" ("too many tokens per minute"): never mistake them for overflow.
const exclusionPatterns: readonly RegExp[] = [
	/rate[_ ]limit/i,
	/too many requests/i,
	/per (?:minute|second|hour|day)/i,
	/^(?:Throttling error|Service unavailable):/i,
];

/**
 * The patterns {@link isContextOverflow} matches, for tests and diagnostics.
 *
 * @example
 * getOverflowPatterns().some((p) => p.test("prompt is too long")); // true
 */
export function getOverflowPatterns(): readonly RegExp[] {
	return overflowPatterns;
}

/**
 * True when an assistant message shows that the context no longer fits the model: an
 * overflow error from the provider, or (when `contextWindow` is given) a reply that ended
 * normally with more input than the window holds (input and cache reads), or one cut off by the
 * output limit with no output at 99 % of it, as pi-ai judges it.
 *
 * @example
 * const result = await streamAnthropic(model, context).result();
 * if (isContextOverflow(result, model.contextWindow)) await compactAndRetry();
 */
export function isContextOverflow(message: AssistantMessage, contextWindow?: number): boolean {
	if (message.stopReason === "error") {
		const text = message.errorMessage ?? "";
		if (exclusionPatterns.some((pattern) => pattern.test(text))) return false;
		return overflowPatterns.some((pattern) => pattern.test(text));
	}
	if (contextWindow === undefined || contextWindow <= 0) return false;
	const contextTokens = message.usage.input + message.usage.cacheRead;
	if (message.stopReason === "stop" && contextTokens > contextWindow) return true;
	// A reply cut off before it said anything, with the window (nearly) full, could not fit.
	return message.stopReason === "length" && message.usage.output === 0 && contextTokens >= 0.99 * contextWindow;
}
