import { fromCallback } from "xstate";
import { emptyUsage } from "../types/content.js";
import type { AgentMessage, AssistantMessage } from "../types/messages.js";
import type { Context, Model, SimpleStreamOptions } from "../types/model.js";
import type { AssistantMessageEvent, AssistantMessageEventStreamLike } from "../types/stream.js";
import type { AgentLoopConfig, AgentMachineInternalEvent } from "../machines/types.js";
import type { AnyAgentTool } from "../types/agent.js";

/** What one LLM call needs. */
export interface StreamActorInput {
	attempt: number;
	model: Model;
	systemPrompt: string;
	messages: AgentMessage[];
	tools: AnyAgentTool[];
	config: AgentLoopConfig;
	options: SimpleStreamOptions;
	signal: AbortSignal;
}

/**
 * An assistant message for a call that failed before or outside the provider (a throwing
 * `convertToLlm`, `streamFn`, ...), so the run still ends with the full lifecycle.
 *
 * @example
 * const message = failedAssistantMessage(model, new Error("boom"), false); // stopReason "error"
 */
export function failedAssistantMessage(
	model: Model,
	error: unknown,
	aborted: boolean,
	partial?: AssistantMessage,
): AssistantMessage {
	const message = error instanceof Error ? error.message : String(error);
	return {
		role: "assistant",
		content: partial ? [...partial.content] : [],
		api: partial?.api ?? model.api,
		provider: partial?.provider ?? model.provider,
		model: partial?.model ?? model.id,
		usage: partial ? { ...partial.usage } : emptyUsage(),
		stopReason: aborted ? "aborted" : "error",
		errorMessage: message,
		timestamp: partial?.timestamp ?? Date.now(),
	};
}

type Next = { kind: "event"; result: IteratorResult<AssistantMessageEvent> } | { kind: "abandoned" };

/**
 * The stream actor: one LLM call. It prepares the context (`transformContext`,
 * `convertToLlm`, `getApiKey`), calls the stream function, and relays every provider event
 * to the machine tagged with its attempt number; it always ends with exactly one
 * `stream.done` carrying the final message, whatever the stream function does (throws, ends
 * without a terminal event, or ignores an abort for longer than `abortGraceMs`).
 */
export const streamActor = fromCallback<AgentMachineInternalEvent, StreamActorInput>(({ input, sendBack }) => {
	let stopped = false;
	let lastPartial: AssistantMessage | undefined;
	const { attempt, config, signal } = input;

	const release = () => {
		stopped = true;
		clearTimeout(graceTimer);
		if (onAbort) signal.removeEventListener("abort", onAbort);
	};
	const finish = (message: AssistantMessage) => {
		if (stopped) return;
		release();
		sendBack({ type: "stream.done", attempt, message });
	};

	// A stream function that ignores the abort signal would hang the run; after a grace
	// period the message is closed with what had streamed.
	let graceTimer: ReturnType<typeof setTimeout> | undefined;
	let onAbort: (() => void) | undefined;
	const abandoned = new Promise<Next>((resolve) => {
		onAbort = () => {
			graceTimer = setTimeout(() => resolve({ kind: "abandoned" }), config.abortGraceMs);
		};
		if (signal.aborted) onAbort();
		else signal.addEventListener("abort", onAbort, { once: true });
	});

	const run = async () => {
		try {
			let messages = input.messages;
			if (config.transformContext) messages = await config.transformContext(messages, signal);
			const llmMessages = await config.convertToLlm(messages);
			const apiKey = (config.getApiKey ? await config.getApiKey(input.model.provider) : undefined) || input.options.apiKey;
			const context: Context = { systemPrompt: input.systemPrompt, messages: llmMessages, tools: input.tools };
			const options: SimpleStreamOptions = { ...input.options, signal };
			if (apiKey !== undefined) options.apiKey = apiKey;
			const stream: AssistantMessageEventStreamLike = await config.streamFn(input.model, context, options);
			const iterator = stream[Symbol.asyncIterator]();
			while (!stopped) {
				const next = await Promise.race([
					iterator.next().then((result): Next => ({ kind: "event", result })),
					abandoned,
				]);
				if (stopped) return;
				if (next.kind === "abandoned") {
					finish(failedAssistantMessage(input.model, new Error("Request was aborted"), true, lastPartial));
					return;
				}
				if (next.result.done) break;
				const event = next.result.value;
				if (event.type === "done" || event.type === "error") {
					finish(await stream.result());
					return;
				}
				if ("partial" in event) lastPartial = event.partial;
				sendBack({ type: "stream.event", attempt, event });
			}
			if (stopped) return;
			finish(
				failedAssistantMessage(
					input.model,
					new Error("Stream ended without a done or error event"),
					signal.aborted,
					lastPartial,
				),
			);
		} catch (error) {
			finish(failedAssistantMessage(input.model, error, signal.aborted, lastPartial));
		}
	};
	void run();
	return release;
});
