/**
 * Reading and writing the machine's context, shared by the action modules: accessors that
 * state the machine's invariants, the enqueuer the actions use, and the small builders every
 * concern needs (a new run, the events of a transcript entry).
 */
import type { AgentEvent } from "../types/agent.js";
import type { AgentMessage, AssistantMessage } from "../types/messages.js";
import type { ToolBatchCommand } from "../actors/tool-batch-protocol.js";
import type { StreamProgress } from "../actors/stream-protocol.js";
import { RunAbort } from "../util/run-abort.js";
import { defaultModel, loopConfig } from "./defaults.js";
import type { AgentMachineContext, AgentMachineEmitted, AgentMachineInput, CheckpointEvent, AgentMachineOwnEvent, RunContext, RunOverrides, ToolBatch, ToolCallEntry } from "./types.js";

export type Ctx = AgentMachineContext;
export type Run = RunContext;

/**
 * The part of XState's action enqueuer the action bodies use. Actions only enqueue: context
 * patches, emitted events, and the few effects on children and delayed events.
 */
export interface Enqueue {
	assign(patch: Partial<Ctx>): void;
	emit(event: AgentMachineEmitted): void;
}

/** An enqueuer that also reaches children and delayed events. */
export interface EffectEnqueue extends Enqueue {
	cancel(id: string): void;
	stopChild(id: string): void;
	raise(event: AgentMachineOwnEvent, options: { delay: number; id: string }): void;
	sendTo(actor: string, event: ToolBatchCommand): void;
}

/**
 * Emits the next delivery barrier: what waits for the listeners goes on once `delivered` names
 * it (the `eventsDelivered` guard).
 *
 * @example
 * if (context.awaitDelivery) emitBarrierNow(context, enqueue);
 */
export function emitBarrierNow(context: Ctx, enqueue: Enqueue): void {
	const barrier = context.barrier + 1;
	enqueue.assign({ barrier });
	enqueue.emit({ type: "agentchart.barrier", barrier });
}

/**
 * The context a machine starts with, from its input (the chart's `context`; an idle agent is
 * persisted from it without starting a machine).
 *
 * @example
 * initialContext({ messages, config: { streamFn } }).steeringMode; // "one-at-a-time"
 */
export function initialContext(input: AgentMachineInput): Ctx {
	return {
		systemPrompt: input.systemPrompt ?? "",
		model: input.model ?? defaultModel(),
		thinkingLevel: input.thinkingLevel ?? "off",
		tools: input.tools ?? [],
		messages: input.messages ?? [],
		config: loopConfig(input.config),
		steeringQueue: input.steeringQueue ?? [],
		followUpQueue: input.followUpQueue ?? [],
		steeringMode: input.steeringMode ?? "one-at-a-time",
		followUpMode: input.followUpMode ?? "one-at-a-time",
		// No run yet, no compaction yet.
		run: undefined,
		awaitDelivery: input.awaitDelivery ?? false,
		barrier: 0,
		lastCompaction: undefined,
		commandSeq: 0,
		runs: input.runs ?? 0,
	};
}

/**
 * The event that says where the run may be stored (emitted when the machine's owner keeps it: the
 * `savesCheckpoints` guard).
 *
 * @example
 * enqueue.emit(checkpoint("turn-end"));
 */
export function checkpoint(at: CheckpointEvent["at"]): CheckpointEvent {
	return { type: "agentchart.checkpoint", at };
}

/**
 * The context with `patch` applied, as a new object (for actions that build a context to chain
 * further updates on).
 *
 * @example
 * const working = patchContext(context, { run: nextRun });
 */
export function patchContext(context: Ctx, patch: Partial<Ctx>): Ctx {
	return { ...context, ...patch };
}

/**
 * The run with `patch` applied, as a new object.
 *
 * @example
 * enqueue.assign({ run: patchRun(run, { turnEnded: true }) });
 */
export function patchRun(run: Run, patch: Partial<Run>): Run {
	return { ...run, ...patch };
}

/**
 * The context with its run's tool batch replaced, as new objects: for actions that settle or
 * record calls on it next (the batch of a run not in progress cannot be replaced).
 *
 * @example
 * working = withBatch(working, patchBatch(batchOf(working), { truncated: true }));
 */
export function withBatch(context: Ctx, batch: ToolBatch): Ctx {
	return patchContext(context, { run: patchRun(runOf(context), { batch }) });
}

/**
 * The run in progress; the machine only calls this in states under `running`.
 *
 * @example
 * runOf(context).turn; // 1
 */
export function runOf(context: Ctx): Run {
	if (!context.run) throw new Error("agentchart: no run in progress (machine invariant broken)");
	return context.run;
}

/**
 * The tool batch of the current turn; only called while one exists.
 *
 * @example
 * batchOf(context).calls.length;
 */
export function batchOf(context: Ctx): ToolBatch {
	const batch = runOf(context).batch;
	if (!batch) throw new Error("agentchart: no tool batch in progress (machine invariant broken)");
	return batch;
}

/**
 * A call of the current batch by its key (its id, unless an earlier call of the reply had it).
 *
 * @example
 * callByKey(context, "toolu_1")?.status; // "running"
 */
export function callByKey(context: Ctx, key: string): ToolCallEntry | undefined {
	return context.run?.batch?.calls.find((call) => call.key === key);
}

/**
 * The message events of a transcript entry that did not stream.
 *
 * @example
 * messageEvents(user); // [{ type: "message_start", message: user }, { type: "message_end", message: user }]
 */
export function messageEvents(message: AgentMessage): AgentEvent[] {
	return [
		{ type: "message_start", message },
		{ type: "message_end", message },
	];
}

/**
 * The context fields a `prompt`/`continue`/`update` sets before the run uses them.
 *
 * @example
 * applyOverrides(context, { config: { toolExecution: "sequential" } });
 */
export function applyOverrides(context: Ctx, overrides: RunOverrides): Partial<Ctx> {
	const patch: Partial<Ctx> = { ...overrides.state };
	if (overrides.config) patch.config = loopConfig(context.config, overrides.config);
	if (overrides.steeringMode) patch.steeringMode = overrides.steeringMode;
	if (overrides.followUpMode) patch.followUpMode = overrides.followUpMode;
	if (overrides.awaitDelivery !== undefined) patch.awaitDelivery = overrides.awaitDelivery;
	return patch;
}

/** A model call's progress, which the stream actor updates as it reads. */
class CallProgress implements StreamProgress {
	partial: AssistantMessage | undefined = undefined;

	/** Not data: a stored run's call in flight is made again when it is restored (JSON leaves it out). */
	toJSON(): undefined {
		return undefined;
	}
}

/**
 * A new model call's progress: nothing streamed yet.
 *
 * @example
 * enqueue.assign({ run: patchRun(run, { stream: newStreamProgress() }) });
 */
export function newStreamProgress(): StreamProgress {
	return new CallProgress();
}

/**
 * A fresh run.
 *
 * @example
 * const run = newRun("r1", false);
 */
export function newRun(id: string, skipInitialSteeringPoll: boolean): Run {
	const fresh: Run = {
		id,
		controller: new RunAbort(),
		aborted: false,
		abandonScheduled: false,
		failure: undefined,
		newMessages: [],
		turn: 1,
		attempt: 0,
		skipInitialSteeringPoll,
		stream: newStreamProgress(),
		partial: undefined,
		pendingFailedReply: undefined,
		assistant: undefined,
		batch: undefined,
		turnEnded: false,
		toolResults: [],
		overflowRetried: false,
		outputLimitAttempts: undefined,
		compactedThisTurn: undefined,
		compactionReason: undefined,
		compactedSinceCheckpoint: undefined,
		compactionInstructions: undefined,
		steeringPolled: undefined,
		followUpsPolled: undefined,
		stopAsked: undefined,
		stopRequested: undefined,
	};
	return fresh;
}

/**
 * The transcript with these messages appended, assigned. A new array: snapshots stay
 * immutable, so `machine.transition()` stays a pure function (model-based tests and replays
 * rely on it). That costs a copy of the transcript per message, the same order as the copies
 * every LLM call makes of it anyway (`convertToLlm`).
 *
 * @example
 * const messages = appendMessages(context, [message], enqueue);
 */
export function appendMessages(context: Ctx, messages: readonly AgentMessage[], enqueue: Enqueue): AgentMessage[] {
	if (messages.length === 0) return context.messages;
	// concat, not [...a, ...b]: V8 copies a packed array into concat's result in one go and
	// builds a two-spread literal element by element (2.3x slower for a 17k-message transcript).
	const next = context.messages.concat(messages);
	enqueue.assign({ messages: next });
	return next;
}
