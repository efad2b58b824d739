import type { StopReason, ToolCall } from "./content.js";
import type { AssistantMessage } from "./messages.js";
import type { Context, Model, SimpleStreamOptions } from "./model.js";

/**
 * The stream protocol of one LLM call (12 event types, as pi-ai 0.73.1).
 *
 * A stream emits `start` (with an empty partial message), then start/delta/end triples for
 * each content block, then exactly one terminal event: `done` or `error`. `contentIndex` is
 * the block's index in `partial.content`. `start` may be missing when a request fails before
 * any response arrives (an HTTP 401, say): then the stream is a bare `error`.
 *
 * @example
 * for await (const event of streamAnthropic(model, context)) {
 *   if (event.type === "text_delta") process.stdout.write(event.delta);
 *   if (event.type === "error") console.error(event.error.errorMessage);
 * }
 */
export type AssistantMessageEvent =
	| { type: "start"; partial: AssistantMessage }
	| { type: "text_start"; contentIndex: number; partial: AssistantMessage }
	| { type: "text_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
	| { type: "text_end"; contentIndex: number; content: string; partial: AssistantMessage }
	| { type: "thinking_start"; contentIndex: number; partial: AssistantMessage }
	| { type: "thinking_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
	| { type: "thinking_end"; contentIndex: number; content: string; partial: AssistantMessage }
	| { type: "toolcall_start"; contentIndex: number; partial: AssistantMessage }
	/** `delta` is a raw fragment of the arguments' JSON text. */
	| { type: "toolcall_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
	| { type: "toolcall_end"; contentIndex: number; toolCall: ToolCall; partial: AssistantMessage }
	| { type: "done"; reason: Extract<StopReason, "stop" | "length" | "toolUse">; message: AssistantMessage }
	| { type: "error"; reason: Extract<StopReason, "aborted" | "error">; error: AssistantMessage };

/**
 * What a stream function returns: an async iterable of events plus the final message.
 * pi-ai's `AssistantMessageEventStream` satisfies it, as does our {@link EventStream}.
 *
 * @example
 * const stream: AssistantMessageEventStreamLike = streamOpenAICompletions(model, context);
 * const reply = await stream.result();
 */
export interface AssistantMessageEventStreamLike extends AsyncIterable<AssistantMessageEvent> {
	/** Resolves with the final message (the payload of `done` or `error`). */
	result(): Promise<AssistantMessage>;
}

/**
 * Runs one LLM call and streams its reply.
 *
 * Contract: it does not throw and its result does not reject. Failures (HTTP errors, network
 * errors, aborts) are encoded in the stream as a final `error` event whose message has
 * stopReason "error" or "aborted" and an `errorMessage`. (The agent still survives a stream
 * function that breaks this contract: the run ends with an error message.)
 *
 * @example
 * import { streamSimple } from "@mariozechner/pi-ai";
 * const agent = new Agent({ streamFn: streamSimple }); // a pi-ai stream function plugs in as is
 */
export type StreamFn = (
	model: Model,
	context: Context,
	options?: SimpleStreamOptions,
) => AssistantMessageEventStreamLike | Promise<AssistantMessageEventStreamLike>;
