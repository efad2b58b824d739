import { AssistantMessageEventStream } from "../providers/event-stream.js";
import { createAssistantMessage } from "../providers/assistant-message.js";
import type { Model } from "../types/model.js";
import type { StreamFn } from "../types/stream.js";
import { defaultConvertToLlm } from "./run-helpers.js";
import type { AgentLoopConfig } from "./types.js";

/**
 * The placeholder model of a new agent (pi uses the same "unknown" model).
 *
 * @example
 * defaultModel().id; // "unknown"
 */
export function defaultModel(): Model {
	return {
		id: "unknown",
		name: "unknown",
		api: "unknown",
		provider: "unknown",
		baseUrl: "",
		reasoning: false,
		input: [],
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
		contextWindow: 0,
		maxTokens: 0,
	};
}

/**
 * The stream function used when none is configured: an error reply that says what to do,
 * instead of a silent hang or a throw.
 *
 * @example
 * const agent = new Agent(); // no streamFn: the first prompt ends with this error
 */
export const missingStreamFn: StreamFn = (model) => {
	const stream = new AssistantMessageEventStream();
	stream.push({
		type: "error",
		reason: "error",
		error: createAssistantMessage(model, {
			stopReason: "error",
			errorMessage: `No stream function for model "${model.id}" (api "${model.api}"): pass streamFn (for example streamAnthropic or a pi-ai stream function) to the Agent.`,
		}),
	});
	return stream;
};

/**
 * The loop configuration defaults.
 *
 * @example
 * defaultLoopConfig().toolTimeoutMs; // 180000
 */
export function defaultLoopConfig(): AgentLoopConfig {
	return {
		streamFn: missingStreamFn,
		convertToLlm: defaultConvertToLlm,
		toolExecution: "parallel",
		toolTimeoutMs: 180_000,
		abortGraceMs: 2_000,
		streamIdleTimeoutMs: 120_000,
		toolAbortGraceMs: 5_000,
		streamOptions: {},
	};
}
