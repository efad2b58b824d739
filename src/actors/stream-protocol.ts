// The stream actor's contract, free of XState types so the package's public declarations
// (which name these) never pull XState's generic machinery into a consumer's type-check.
import type { AgentEvent, AnyAgentTool, ConvertToLlm, GetApiKey, TransformContext } from "../types/agent.js";
import type { ToolCall } from "../types/content.js";
import type { AgentMessage, AssistantMessage } from "../types/messages.js";
import type { Model, SimpleStreamOptions } from "../types/model.js";
import type { StreamFn } from "../types/stream.js";
import type { RunAbortView } from "../util/run-abort.js";
import type { EffectJournal } from "../durable/journal.js";

/**
 * What the stream actor tells the machine: only what the machine decides on. Every other
 * stream event (the deltas, block starts and ends) goes straight to listeners through
 * `relay`, beside the chart: a transition per token would cost more than the token.
 *
 * @example
 * const ended = (event: StreamActorEvent) => event.type === "stream.done";
 */
export type StreamActorEvent =
	/**
	 * The reply began: its (live) partial message. `replayed`: a restored run's call that the
	 * journal answered (its reply retold, the model not asked).
	 */
	| { type: "stream.start"; attempt: number; partial: AssistantMessage; replayed?: true | undefined }
	/** Streaming tool execution: a tool call finished streaming and may start now. */
	| { type: "stream.toolcall"; attempt: number; toolCall: ToolCall; partial: AssistantMessage }
	/** The call ended (done, error, abort, stall, or a broken stream function): the final message. */
	| { type: "stream.done"; attempt: number; message: AssistantMessage; replayed?: true | undefined }
	/**
	 * The call was in flight when the run was stored, and the actor was restored from that
	 * snapshot: what had streamed is gone, and the chart makes the call again.
	 */
	| { type: "stream.interrupted"; attempt: number }
	/**
	 * A token delta for the machine to emit, when the call has no `relay` (the agent machine run
	 * by XState's interpreter, embedded without the facade).
	 */
	| { type: "stream.delta"; attempt: number; update: MessageUpdateEvent };

/**
 * What the current call's stream has produced so far, shared with the machine: the machine
 * reads it when it has to close a reply abruptly (dispose), since it sees no deltas itself.
 *
 * @example
 * const progress: StreamProgress = { partial: undefined };
 */
export interface StreamProgress {
	partial: AssistantMessage | undefined;
}

/**
 * Takes a token delta (`message_update`) to its listeners, beside the chart. A consumer that
 * paces the stream returns what `deliveryPending` would return right after (the delivery still
 * in progress, if any), saving the stream a second call per delta.
 *
 * @example
 * const sink: DeltaSink = (event) => console.log(event.assistantMessageEvent.type);
 */
export type DeltaSink = (event: MessageUpdateEvent) => PromiseLike<void> | undefined | void;

/**
 * A token delta as listeners receive it.
 *
 * @example
 * const onDelta = (event: MessageUpdateEvent) => console.log(event.assistantMessageEvent.type);
 */
export type MessageUpdateEvent = Extract<AgentEvent, { type: "message_update" }>;

/**
 * The part of the loop configuration one LLM call uses.
 *
 * @example
 * const describe = (config: StreamCallConfig) => `idle timeout ${config.streamIdleTimeoutMs} ms`;
 */
export interface StreamCallConfig {
	streamFn: StreamFn;
	convertToLlm: ConvertToLlm;
	transformContext?: TransformContext | undefined;
	getApiKey?: GetApiKey | undefined;
	abortGraceMs: number;
	streamIdleTimeoutMs: number;
	deliveryPending?: (() => PromiseLike<void> | undefined) | undefined;
	deltaSink?: DeltaSink | undefined;
}

/**
 * What one LLM call needs.
 *
 * @example
 * const describe = (input: StreamActorInput) => `${input.model.id}: ${input.messages.length} messages, attempt ${input.attempt}`;
 */
export interface StreamActorInput {
	attempt: number;
	model: Model;
	systemPrompt: string;
	messages: AgentMessage[];
	tools: AnyAgentTool[];
	config: StreamCallConfig;
	options: SimpleStreamOptions;
	/** The run's cancellation: the call's controller comes from it, and its abort starts the grace period. */
	abort: RunAbortView;
	/**
	 * Delivers a `message_update` to the machine's listeners (`actor.on`), beside the chart;
	 * without one, each delta goes to the machine as a `stream.delta` event, which it emits.
	 */
	relay: DeltaSink | undefined;
	/** Updated with every event; see {@link StreamProgress}. */
	progress: StreamProgress;
	/** Streaming tool execution: report each finished tool call (`stream.toolcall`). */
	announceToolCalls: boolean;
	/** The call's effect id and the run's journal, when the run keeps one (see `durable/journal.ts`). */
	effect: string | undefined;
	journal: EffectJournal | undefined;
	/**
	 * The run was aborted before this call: a run restored from a snapshot taken after its abort,
	 * closing the reply it was stored in. The journal's reply (or the calls of it that had
	 * started) closes it; otherwise it ends as aborted. Nothing is prepared or asked.
	 */
	afterAbort: boolean;
}

/**
 * What a stream actor's persisted snapshot keeps of its input: enough to say it was interrupted.
 *
 * @example
 * const marker: RestoredStreamInput = { restored: true, attempt: 2 };
 */
export interface RestoredStreamInput {
	restored: true;
	attempt: number;
}

/**
 * Whether a stored stream actor's input is the marker `streamActor` persists for the run's call
 * `attempt`: restored with another, the actor would start a new call, or report as a stale one.
 *
 * @example
 * isRestoredStreamInput({ restored: true, attempt: 2 }, 2); // true
 */
export function isRestoredStreamInput(input: unknown, attempt: number | undefined): input is RestoredStreamInput {
	const marker = input as Partial<RestoredStreamInput> | null | undefined;
	return typeof marker === "object" && marker !== null && marker.restored === true && marker.attempt === attempt;
}
