/**
 * Compaction inside the machine: why it runs, what the compaction actor gets, and what its
 * outcome does to the transcript and the run (`auto_compaction_start` / `auto_compaction_end`).
 */
import type { CompactionActorInput, CompactionOutput } from "../../actors/compaction-protocol.js";
import type { CompactionReason } from "../../types/agent.js";
import { describeError } from "../../util/describe-error.js";
import { type Ctx, type Enqueue, newRun, patchRun, runOf } from "../context.js";
import { streamOptionsFor } from "../run-helpers.js";
import { startNextTurn, takeQueued } from "./run.js";

/** What the compaction actor works on. The overflowing reply is not summarised: it is dropped if compaction succeeds. */
export function compactionInput(context: Ctx): CompactionActorInput {
	const run = context.run;
	let messages = context.messages;
	if (run?.compactionReason === "overflow" && run.assistant && messages[messages.length - 1] === run.assistant) messages = messages.slice(0, -1);
	return {
		messages,
		settings: context.config.compaction ?? { enabled: false },
		model: context.model,
		streamFn: context.config.streamFn,
		convertToLlm: context.config.convertToLlm,
		streamOptions: streamOptionsFor(context),
		getApiKey: context.config.getApiKey,
		instructions: run?.compactionInstructions,
		signal: run?.controller.signal,
		idleTimeoutMs: context.config.streamIdleTimeoutMs,
	};
}

/** A manual compaction is a run of its own (`agent.compact()`), with no turns. */
export function startManualCompaction(context: Ctx, instructions: string | undefined, enqueue: Enqueue): void {
	const runs = context.runs + 1;
	const run = newRun(`r${runs}`, false);
	run.compactionReason = "manual";
	run.compactionInstructions = instructions;
	enqueue.assign({ run, runs });
}

/** Threshold (before a call) or overflow (after a failed reply); at most once per turn. */
export function setCompactionReason(context: Ctx, enqueue: Enqueue): void {
	const run = runOf(context);
	const reason: CompactionReason = run.assistant && run.turnEnded ? "overflow" : "threshold";
	enqueue.assign({ run: patchRun(run, { compactionReason: reason, compactedThisTurn: true, compactedSinceCheckpoint: true, overflowRetried: run.overflowRetried || reason === "overflow" }) });
}

export function emitCompactionStart(context: Ctx, enqueue: Enqueue): void {
	enqueue.emit({ type: "auto_compaction_start", reason: context.run?.compactionReason ?? "manual" });
}

/**
 * The compacted transcript replaces the old one. The new transcript goes out before
 * `auto_compaction_end`, so that a consumer mirroring it (the Agent's `state.messages`) holds it
 * when the end reaches the listeners: one that saves the session or measures the context there
 * sees the compacted transcript, as the end's `result` describes it.
 */
export function applyCompaction(context: Ctx, output: CompactionOutput | undefined, enqueue: Enqueue): void {
	if (!output) return;
	const reason = context.run?.compactionReason ?? "manual";
	enqueue.assign({ messages: output.messages, lastCompaction: output.result });
	if (context.run) enqueue.assign({ run: patchRun(context.run, { compactionReason: undefined }) });
	enqueue.emit({ type: "agentchart.transcript", messages: output.messages, replaced: context.messages });
	enqueue.emit({ type: "auto_compaction_end", reason, result: output.result, aborted: false, willRetry: reason === "overflow" });
}

export function emitCompactionFailed(context: Ctx, error: unknown, enqueue: Enqueue): void {
	const reason = context.run?.compactionReason ?? "manual";
	const detail = describeError(error);
	const errorMessage = reason === "overflow" ? `Context overflow recovery failed: ${detail}` : `Compaction failed: ${detail}`;
	if (context.run) enqueue.assign({ run: patchRun(context.run, { compactionReason: undefined }) });
	enqueue.emit({ type: "auto_compaction_end", reason, aborted: false, willRetry: false, errorMessage });
}

export function emitCompactionAborted(context: Ctx, enqueue: Enqueue): void {
	const reason = context.run?.compactionReason ?? "manual";
	if (context.run) enqueue.assign({ run: patchRun(context.run, { compactionReason: undefined }) });
	enqueue.emit({ type: "auto_compaction_end", reason, aborted: true, willRetry: false });
}

/** After an overflow was compacted, the call is retried in a new turn (with queued steering, if any). */
export function startRetryTurn(context: Ctx, enqueue: Enqueue): void {
	startNextTurn(context, takeQueued(context, "steering", enqueue), enqueue);
}

/**
 * A compaction that a restart interrupted: the chart goes back to the decision that started it
 * (before the call, for a threshold; after the overflowed reply, for an overflow), as it was
 * then, and takes it again.
 */
export function resumeInterruptedCompaction(context: Ctx, enqueue: Enqueue): void {
	const run = runOf(context);
	const overflow = run.compactionReason === "overflow";
	// The overflowed turn stays ended: its turn_end went out before the restart.
	enqueue.assign({ run: patchRun(run, overflow ? { compactionReason: undefined, compactedThisTurn: false, overflowRetried: false } : { compactionReason: undefined, compactedThisTurn: false }) });
}
