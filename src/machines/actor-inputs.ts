/**
 * What the run's actors start with: the stream actor (one model call) and the tool batch actor
 * (the calls of one reply).
 */
import type { DeltaSink, StreamActorInput, StreamCallConfig, StreamProgress } from "../actors/stream-protocol.js";
import type { ToolBatchInput } from "../actors/tool-batch-protocol.js";
import type { AfterToolCallHook, AgentContext, AnyAgentTool, BeforeToolCallHook } from "../types/agent.js";
import type { AgentMessage, AssistantMessage } from "../types/messages.js";
import type { Model, SimpleStreamOptions } from "../types/model.js";
import type { RunAbortView } from "../util/run-abort.js";
import { type Ctx, runOf } from "./context.js";
import { emitterOf } from "./emitters.js";
import { type EffectJournal, modelEffectId } from "../durable/journal.js";
import { hookContext, streamOptionsFor } from "./run-helpers.js";
import type { ToolBatch } from "./types.js";

class StreamCallInput implements StreamActorInput {
	constructor(
		readonly attempt: number,
		readonly model: Model,
		readonly systemPrompt: string,
		readonly messages: AgentMessage[],
		readonly tools: AnyAgentTool[],
		readonly config: StreamCallConfig,
		readonly options: SimpleStreamOptions,
		readonly abort: RunAbortView,
		readonly relay: DeltaSink | undefined,
		readonly progress: StreamProgress,
		readonly announceToolCalls: boolean,
		readonly effect: string | undefined,
		readonly journal: EffectJournal | undefined,
		readonly afterAbort: boolean,
	) {}
}

class ToolBatchRunInput implements ToolBatchInput {
	constructor(
		readonly tools: AnyAgentTool[],
		readonly assistantMessage: AssistantMessage,
		readonly context: AgentContext,
		readonly beforeToolCall: BeforeToolCallHook | undefined,
		readonly afterToolCall: AfterToolCallHook | undefined,
		readonly abort: RunAbortView,
		readonly timeoutMs: number,
		readonly journal: EffectJournal | undefined,
		readonly streamedFrom: string | undefined,
		readonly deliveryPending: (() => PromiseLike<void> | undefined) | undefined,
	) {}
}

/**
 * What the stream actor of the run's current call gets.
 *
 * @example
 * invoke: { src: "streamActor", input: ({ context, self }) => streamInput(context, self) }
 */
export function streamInput(context: Ctx, self: unknown): StreamActorInput {
	const run = runOf(context);
	const config = context.config;
	return new StreamCallInput(
		run.attempt,
		context.model,
		context.systemPrompt,
		context.messages,
		context.tools,
		config,
		streamOptionsFor(context),
		run.controller,
		config.deltaSink ?? (emitterOf(self as { getSnapshot(): unknown }) as DeltaSink | undefined),
		run.stream,
		config.toolExecution === "streaming",
		config.journal ? modelEffectId(run.id, run.attempt) : undefined,
		config.journal,
		run.aborted === true,
	);
}

/**
 * What the batch actor of a reply's tool calls is spawned with.
 *
 * @example
 * enqueue.spawnChild("toolBatchActor", { id: TOOL_BATCH_ID, input: toolBatchInput(context, batch) });
 */
export function toolBatchInput(context: Ctx, batch: ToolBatch): ToolBatchInput {
	const config = context.config;
	const run = runOf(context);
	// A streaming batch's calls start while their reply streams: their intents name the model call.
	const streamedFrom = config.journal && batch.mode === "streaming" ? modelEffectId(run.id, run.attempt) : undefined;
	return new ToolBatchRunInput(context.tools, batch.assistant, hookContext(context), config.beforeToolCall, config.afterToolCall, run.controller, config.toolTimeoutMs, config.journal, streamedFrom, config.deliveryPending);
}
