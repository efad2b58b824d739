/**
 * Stream functions for the benchmarks. Every contender gets the same stream function, so
 * the stream's own cost is the same for all and cancels out in the ratios.
 */
import { createAssistantMessage } from "../../src/providers/assistant-message.js";
import { AssistantMessageEventStream } from "../../src/providers/event-stream.js";
import type { AssistantMessage } from "../../src/types/messages.js";
import type { Model } from "../../src/types/model.js";
import type { AssistantMessageEvent, StreamFn } from "../../src/types/stream.js";

/**
 * A model description for benchmark streams.
 *
 * @example
 * const model = benchModel();
 */
export function benchModel(): Model {
	return {
		id: "bench-1",
		name: "Benchmark model",
		api: "bench",
		provider: "bench",
		baseUrl: "",
		reasoning: false,
		input: ["text"],
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
		contextWindow: 1_000_000,
		maxTokens: 100_000,
	};
}

/**
 * The events of one text reply of `deltas` deltas of `deltaText` each: start, text_start,
 * the deltas, text_end, done. The partial is complete from the start: nothing is built while
 * streaming, so only the consumer's cost is measured.
 *
 * @example
 * const events = textReplyEvents(benchModel(), 1000); // 1004 events
 */
export function textReplyEvents(model: Model, deltas: number, deltaText = "tok "): AssistantMessageEvent[] {
	const text = deltaText.repeat(deltas);
	const message = createAssistantMessage(model, { content: [{ type: "text", text }] });
	const events: AssistantMessageEvent[] = new Array(deltas + 4);
	events[0] = { type: "start", partial: message };
	events[1] = { type: "text_start", contentIndex: 0, partial: message };
	for (let i = 0; i < deltas; i++) events[i + 2] = { type: "text_delta", contentIndex: 0, delta: deltaText, partial: message };
	events[deltas + 2] = { type: "text_end", contentIndex: 0, content: text, partial: message };
	events[deltas + 3] = { type: "done", reason: "stop", message };
	return events;
}

/**
 * A stream function that pushes pre-built events as fast as possible: all of them,
 * synchronously, into a fresh stream on each call. The consumer never waits for the
 * producer, so the measured time is the consumer's.
 *
 * @example
 * const streamFn = prebuiltStreamFn(textReplyEvents(model, 10_000));
 */
export function prebuiltStreamFn(events: readonly AssistantMessageEvent[]): StreamFn {
	return () => {
		const stream = new AssistantMessageEventStream();
		for (const event of events) stream.push(event);
		return stream;
	};
}

/**
 * A stream function that builds a fresh short text reply on every call (so agents do not
 * share message objects, which would understate memory per agent).
 *
 * @example
 * const streamFn = freshTextStreamFn(model, "Hello there, how can I help?", 4);
 */
export function freshTextStreamFn(model: Model, text: string, deltas: number): StreamFn {
	const size = Math.max(1, Math.ceil(text.length / deltas));
	return () => {
		const stream = new AssistantMessageEventStream();
		const pieces: string[] = [];
		for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
		const events = textReplyEvents(model, 0);
		const message = (events[0] as { partial: AssistantMessage }).partial;
		message.content = [{ type: "text", text }];
		stream.push({ type: "start", partial: message });
		stream.push({ type: "text_start", contentIndex: 0, partial: message });
		for (const delta of pieces) stream.push({ type: "text_delta", contentIndex: 0, delta, partial: message });
		stream.push({ type: "text_end", contentIndex: 0, content: text, partial: message });
		stream.push({ type: "done", reason: "stop", message });
		return stream;
	};
}
