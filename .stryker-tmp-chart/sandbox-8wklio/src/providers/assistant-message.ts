// @ts-nocheck
import { emptyUsage } from "../types/content.js";
import type { AssistantMessage } from "../types/messages.js";
import type { Model } from "../types/model.js";

/**
 * A new, empty assistant message for a model: what providers stream into, and what the loop
 * uses for replies that never reached a model (errors, aborts).
 *
 * @example
 * const output = createAssistantMessage(model); // content [], stopReason "stop", zero usage
 * const failed = createAssistantMessage(model, { stopReason: "error", errorMessage: "boom" });
 */
export function createAssistantMessage(model: Model, fields: Partial<AssistantMessage> = {}): AssistantMessage {
	return {
		role: "assistant",
		content: [],
		api: model.api,
		provider: model.provider,
		model: model.id,
		usage: emptyUsage(),
		stopReason: "stop",
		timestamp: Date.now(),
		...fields,
	};
}
