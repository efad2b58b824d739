/**
 * A provider's call handles its own failures inside one `try`; what runs before it (making the
 * reply from `model`, reading the options) can still throw when plain JavaScript passes no model
 * or no options. Without this the call's promise rejected with nobody to catch it and the stream
 * never ended: a consumer awaiting `result()` waited for ever.
 */
import { shown } from "../agent-input.js";
import type { Model } from "../types/model.js";
import { describeError } from "../util/describe-error.js";
import { createAssistantMessage } from "./assistant-message.js";
import type { AssistantMessageEventStream } from "./event-stream.js";

/**
 * Ends `stream` with an error event if `call` rejects (a stream already ended is left as it is),
 * saying what was wrong: `<provider>: model must be a model object, got undefined`.
 *
 * @example
 * endOnThrow(runAnthropicCall(model, context, options, stream), stream, model, "streamAnthropic");
 */
export function endOnThrow(call: Promise<void>, stream: AssistantMessageEventStream, model: unknown, provider: string): void {
	call.catch((error: unknown) => {
		const known = typeof model === "object" && model !== null;
		const errorMessage = known ? `${provider}: ${describeError(error)}` : `${provider}: model must be a model object, got ${shown(model)}`;
		// A reply carries its model's names; without a model it names none.
		const named = known ? (model as Model) : ({ api: "unknown", provider: "unknown", id: "unknown" } as Model);
		stream.push({ type: "error", reason: "error", error: createAssistantMessage(named, { stopReason: "error", errorMessage }) });
	});
}
