import { fromCallback } from "xstate";
import { emptyUsage } from "../types/content.js";
import type { AgentMessage, AssistantMessage } from "../types/messages.js";
import type { Context, Model, SimpleStreamOptions } from "../types/model.js";
import type { AssistantMessageEvent, AssistantMessageEventStreamLike } from "../types/stream.js";
import type { AgentLoopConfig, AgentMachineInternalEvent } from "../machines/types.js";
import type { AnyAgentTool } from "../types/agent.js";
import { describeError } from "../util/describe-error.js";
import { watchForStall } from "../util/stall-watch.js";

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
	const message = describeError(error);
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

/** Deltas relayed in one machine event at most; bounded so one event never carries a whole message. */
const MAX_DELTA_BATCH = 64;

function isDelta(event: AssistantMessageEvent): boolean {
	return event.type === "text_delta" || event.type === "thinking_delta" || event.type === "toolcall_delta";
}

/**
 * The stream actor: one LLM call. It prepares the context (`transformContext`,
 * `convertToLlm`, `getApiKey`), calls the stream function, and relays every provider event
 * to the machine tagged with its attempt number; it always ends with exactly one
 * `stream.done` carrying the final message, whatever the stream function does: throws, ends
 * without a terminal event, ignores an abort for longer than `abortGraceMs`, or goes silent
 * for `streamIdleTimeoutMs` (the call then ends as an error that says it stalled, keeping what
 * had streamed, and its request is cancelled).
 */
export const streamActor = fromCallback<AgentMachineInternalEvent, StreamActorInput>(({ input, sendBack }) => {
	let stopped = false;
	let lastPartial: AssistantMessage | undefined;
	const { attempt, config } = input;
	const runSignal = input.signal;
	// This call's own signal: aborted with the run, and by a stall (which must cancel the request).
	const call = new AbortController();
	const signal = call.signal;

	let graceTimer: ReturnType<typeof setTimeout> | undefined;
	// Deltas are relayed in batches: one machine transition per batch instead of per delta.
	let batch: AssistantMessageEvent[] = [];
	let flushHandle: ReturnType<typeof setImmediate> | undefined;

	const stall = watchForStall(config.streamIdleTimeoutMs, () => {
		const seconds = config.streamIdleTimeoutMs / 1000;
		finish(
			failedAssistantMessage(
				input.model,
				new Error(`The model's stream stalled: nothing arrived for ${seconds} s (streamIdleTimeoutMs); the request was cancelled`),
				false,
				lastPartial,
			),
		);
		call.abort(new Error("stream stalled"));
	});
	const onRunAbort = () => {
		call.abort(runSignal.reason);
		// A stream function that ignores the abort signal would hang the run; after a grace
		// period the message is closed with what had streamed.
		graceTimer = setTimeout(
			() => finish(failedAssistantMessage(input.model, new Error("Request was aborted"), true, lastPartial)),
			config.abortGraceMs,
		);
	};
	const release = () => {
		stopped = true;
		// A pending flush holds this actor (and the transcript it was given) until the event
		// loop reaches its check phase, which a stream paced by microtasks never lets it do.
		if (flushHandle !== undefined) clearImmediate(flushHandle);
		flushHandle = undefined;
		clearTimeout(graceTimer);
		stall.stop();
		runSignal.removeEventListener("abort", onRunAbort);
	};
	const flush = () => {
		if (flushHandle !== undefined) clearImmediate(flushHandle);
		flushHandle = undefined;
		if (stopped || batch.length === 0) return;
		const events = batch;
		batch = [];
		sendBack({ type: "stream.events", attempt, events });
	};
	const finish = (message: AssistantMessage) => {
		if (stopped) return;
		flush();
		release();
		sendBack({ type: "stream.done", attempt, message });
	};

	if (runSignal.aborted) onRunAbort();
	else runSignal.addEventListener("abort", onRunAbort, { once: true });

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
				const next = await iterator.next();
				if (stopped) return;
				if (next.done) break;
				const event = next.value;
				stall.touch();
				if (event.type === "done" || event.type === "error") {
					finish(await stream.result());
					return;
				}
				if ("partial" in event) lastPartial = event.partial;
				if (isDelta(event)) {
					batch.push(event);
					if (batch.length >= MAX_DELTA_BATCH) flush();
					else flushHandle ??= setImmediate(flush);
					continue;
				}
				flush();
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
