/**
 * Stream functions for the benchmarks. Every contender gets the same stream function, so the
 * stream's own cost is the same for all and cancels out in the ratios.
 *
 * The stream class is the bench's own ({@link BenchEventStream}), not the engine's or pi-ai's:
 * the engine in `src/` is what is measured and may change under the bench, neither contender
 * gets a stream it could special-case, and a child process that measures pi loads no
 * agentchart module (and the other way round). Only types come from `src/`.
 */
import type { AssistantMessage, Message } from "../../src/types/messages.js";
import type { Model } from "../../src/types/model.js";
import type { AssistantMessageEvent, AssistantMessageEventStreamLike, StreamFn } from "../../src/types/stream.js";

/**
 * The smallest correct assistant-message stream: events are queued as pushed, read with
 * `for await`, and `result()` resolves with the payload of the terminal `done` or `error`.
 * O(1) per event (an index into the queue, no `shift`).
 *
 * @example
 * const stream = new BenchEventStream();
 * stream.push({ type: "done", reason: "stop", message });
 * for await (const event of stream) console.log(event.type); // "done"
 */
export class BenchEventStream implements AssistantMessageEventStreamLike {
	private queue: AssistantMessageEvent[] = [];
	private head = 0;
	private waiter: ((result: IteratorResult<AssistantMessageEvent>) => void) | undefined;
	private finished = false;
	private readonly final: Promise<AssistantMessage>;
	private settle!: (message: AssistantMessage) => void;

	constructor() {
		this.final = new Promise((resolve) => {
			this.settle = resolve;
		});
	}

	/** Adds an event; `done` or `error` ends the stream. */
	push(event: AssistantMessageEvent): void {
		if (this.finished) return;
		if (event.type === "done" || event.type === "error") {
			this.finished = true;
			this.settle(event.type === "done" ? event.message : event.error);
		}
		const waiter = this.waiter;
		if (waiter) {
			this.waiter = undefined;
			waiter({ value: event, done: false });
		} else {
			this.queue.push(event);
		}
	}

	/** The final message. */
	result(): Promise<AssistantMessage> {
		return this.final;
	}

	[Symbol.asyncIterator](): AsyncIterator<AssistantMessageEvent> {
		return {
			next: () => {
				if (this.head < this.queue.length) {
					const value = this.queue[this.head] as AssistantMessageEvent;
					this.head++;
					if (this.head === this.queue.length) {
						this.queue = [];
						this.head = 0;
					}
					return Promise.resolve({ value, done: false });
				}
				if (this.finished) return Promise.resolve({ value: undefined, done: true });
				return new Promise((resolve) => {
					this.waiter = resolve;
				});
			},
		};
	}
}

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
 * A complete assistant message for a model (what a provider's `done` carries).
 *
 * @example
 * const message = benchMessage(benchModel(), [{ type: "text", text: "hi" }], "stop");
 */
export function benchMessage(model: Model, content: AssistantMessage["content"], stopReason: AssistantMessage["stopReason"]): AssistantMessage {
	return {
		role: "assistant",
		content,
		api: model.api,
		provider: model.provider,
		model: model.id,
		usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
		stopReason,
		timestamp: Date.now(),
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
	const message = benchMessage(model, [{ type: "text", text }], "stop");
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
		const stream = new BenchEventStream();
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
		const stream = new BenchEventStream();
		pushMessage(stream, benchMessage(model, [{ type: "text", text }], "stop"), size);
		return stream;
	};
}

/**
 * Pushes a complete message into a stream as a provider streams it: `start`; per text block
 * `text_start`, deltas of `chunkSize` characters, `text_end`; per tool call `toolcall_start`,
 * its JSON arguments in deltas of `chunkSize`, `toolcall_end`; then `done` with the message's
 * stop reason. The partial is the complete message throughout (nothing is built while
 * streaming, so only the consumer's cost is measured).
 *
 * @example
 * const stream = new BenchEventStream();
 * pushMessage(stream, benchMessage(model, [{ type: "text", text: "Hello" }], "stop"), 4);
 */
export function pushMessage(stream: BenchEventStream, message: AssistantMessage, chunkSize: number): void {
	const size = Math.max(1, chunkSize);
	stream.push({ type: "start", partial: message });
	for (const [contentIndex, block] of message.content.entries()) {
		if (block.type === "text") {
			stream.push({ type: "text_start", contentIndex, partial: message });
			for (let i = 0; i < block.text.length; i += size) stream.push({ type: "text_delta", contentIndex, delta: block.text.slice(i, i + size), partial: message });
			stream.push({ type: "text_end", contentIndex, content: block.text, partial: message });
		} else if (block.type === "toolCall") {
			const json = JSON.stringify(block.arguments);
			stream.push({ type: "toolcall_start", contentIndex, partial: message });
			for (let i = 0; i < json.length; i += size) stream.push({ type: "toolcall_delta", contentIndex, delta: json.slice(i, i + size), partial: message });
			stream.push({ type: "toolcall_end", contentIndex, toolCall: block, partial: message });
		}
	}
	if (message.stopReason === "stop" || message.stopReason === "length" || message.stopReason === "toolUse") {
		stream.push({ type: "done", reason: message.stopReason, message });
	} else {
		stream.push({ type: "error", reason: message.stopReason, error: message });
	}
}

/** The shape of a tool-turn script. */
export interface ToolTurnScript {
	/** Tool turns per prompt: replies with tool calls before the final text reply. */
	turns: number;
	/** Tool calls per tool turn. */
	callsPerTurn: number;
	/** The tool every call names. */
	toolName: string;
	/** The text before the tool calls (default "Let me check."). */
	toolTurnText?: string;
	/** The final reply's text (default "done"). */
	finalText?: string;
	/** Characters per delta (default: each text and each call's arguments in one delta). */
	chunkSize?: number;
}

/**
 * A stream function for tool loops, built fresh on every call as a provider streams it: while
 * fewer than `turns` replies followed the last user message, a reply of text and
 * `callsPerTurn` tool calls (each `toolcall_start`, its argument deltas, `toolcall_end`, so the
 * streaming tool mode can start each call at its end), stop reason `toolUse`; then a final text
 * reply. By default every text and every call's arguments is one delta. Tool call ids are
 * unique per call, arguments `{ step }`.
 *
 * @example
 * // One prompt = one turn with 3 tool calls, then the final reply:
 * const streamFn = toolTurnStreamFn(benchModel(), { turns: 1, callsPerTurn: 3, toolName: "noop" });
 */
export function toolTurnStreamFn(model: Model, script: ToolTurnScript): StreamFn {
	let callCount = 0;
	return (_model, context) => {
		callCount++;
		const stream = new BenchEventStream();
		const chunkSize = script.chunkSize ?? Number.MAX_SAFE_INTEGER;
		if (assistantRepliesSinceLastUser(context.messages) >= script.turns) {
			pushMessage(stream, benchMessage(model, [{ type: "text", text: script.finalText ?? "done" }], "stop"), chunkSize);
			return stream;
		}
		const content: AssistantMessage["content"] = [{ type: "text", text: script.toolTurnText ?? "Let me check." }];
		for (let i = 0; i < script.callsPerTurn; i++) {
			content.push({ type: "toolCall", id: `call_${callCount}_${i}`, name: script.toolName, arguments: { step: i } });
		}
		pushMessage(stream, benchMessage(model, content, "toolUse"), chunkSize);
		return stream;
	};
}

function assistantRepliesSinceLastUser(messages: readonly Message[]): number {
	let replies = 0;
	for (let index = messages.length - 1; index >= 0; index--) {
		const role = messages[index]?.role;
		if (role === "user") break;
		if (role === "assistant") replies++;
	}
	return replies;
}
