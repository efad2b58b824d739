/**
 * Tool calls: the batch of a reply, preflight, running calls through the batch actor
 * (`tools`), settling them, and the tool result messages and `turn_end` of the batch.
 */
import { ABORTED_BEFORE_RUN, approvalNeeded, approvedArguments, errorResult, prepareToolCall, rejectedText } from "../../tools/preflight.js";
import type { AgentEvent, AgentToolCall } from "../../types/agent.js";
import type { ToolCall } from "../../types/content.js";
import type { AssistantMessage, ToolResultMessage } from "../../types/messages.js";
import type { ToolBatchCommand, ToolBatchInput } from "../../actors/tool-batch-protocol.js";
import { toolBatchInput } from "../actor-inputs.js";
import { type Ctx, type EffectEnqueue, type Enqueue, appendMessages, batchOf, callByKey, emitBarrierNow, messageEvents, patchContext, patchRun, runOf, withBatch } from "../context.js";
import { callKeyFor, callKeyOf, callsNamed, createToolBatch, detachedArgs, findTool, newBatch, newCallEntry, patchBatch, patchCall, toolResultMessage, updateCall } from "../run-helpers.js";
import { completeStreamingBatch, lengthCutOffText, readyStreamingCalls } from "../streaming-tools.js";
import { type EffectRecord, interruptedText, toolEffectId, turnEffectPrefix } from "../../durable/journal.js";
import { LONGEST_DELAY } from "../../util/deadlines.js";
import type { ApprovalWait, FinalizedToolResult, ToolBatch, ToolCallEntry } from "../types.js";

/** The batch actor's id: one per batch, so there is one child for all of a reply's calls. */
export const TOOL_BATCH_ID = "tools";

/**
 * A call's `tool_execution_start`, marked `replayed` when the run's journal has the call already
 * (it started before a restart: a run a restore started again retells its start, whatever
 * comes of it now) or when the caller retells it (`retold`).
 */
function toolStartEvent(call: ToolCallEntry, context: Ctx, retold = false): AgentEvent {
	const event: AgentEvent = { type: "tool_execution_start", toolCallId: call.toolCall.id, toolName: call.toolCall.name, args: call.toolCall.arguments };
	if (retold || recordOf(context, call) !== undefined) event.replayed = true;
	return event;
}

/** What the run's journal has of the call (something: it started before a restart), if it keeps one. */
function recordOf(context: Ctx, call: ToolCallEntry): EffectRecord | undefined {
	const effect = effectOf(context, call);
	return effect === undefined ? undefined : context.config.journal?.lookup(effect);
}

/** Whether the run's journal holds the call's outcome (it ran before a restart). */
function outcomeInJournal(context: Ctx, call: ToolCallEntry): boolean {
	return recordOf(context, call)?.outcome?.kind === "tool";
}

/** What every approval event of a call carries: its id, the `callKey` a decision names it by, its tool. */
export function approvalEventOf(call: ToolCallEntry): { toolCallId: string; callKey: string; toolName: string } {
	return { toolCallId: call.toolCall.id, callKey: callKeyOf(call), toolName: call.toolCall.name };
}

/** A call's `tool_execution_end` with its outcome (`replayed`: the outcome is the journal's, retold). */
export function toolEndEvent(call: ToolCallEntry, outcome: FinalizedToolResult, replayed = false): AgentEvent {
	const event: AgentEvent = { type: "tool_execution_end", toolCallId: call.toolCall.id, toolName: call.toolCall.name, result: outcome.result, isError: outcome.isError };
	if (replayed) event.replayed = true;
	return event;
}

/**
 * Records a call's outcome and emits its `tool_execution_end` (and, in sequential batches,
 * its tool result message right away). Returns the context as it will be after the assign,
 * so callers settling several calls in one action can chain.
 */
export function settleCall(context: Ctx, call: ToolCallEntry, outcome: FinalizedToolResult, enqueue: Enqueue, replayed = false): Ctx {
	const run = runOf(context);
	const batch = batchOf(context);
	let nextBatch = updateCall(batch, call.key, { status: "settled", outcome });
	enqueue.emit(toolEndEvent(call, outcome, replayed));
	let newMessages = run.newMessages;
	let toolResults = run.toolResults;
	let messages = context.messages;
	if (batch.mode === "sequential") {
		const message = toolResultMessage(call.toolCall, outcome);
		messages = appendMessages(context, [message], enqueue);
		newMessages = [...newMessages, message];
		toolResults = [...toolResults, message];
		nextBatch = updateCall(nextBatch, call.key, { message });
		for (const event of messageEvents(message)) enqueue.emit(event);
	}
	const nextRun = patchRun(run, { batch: nextBatch, newMessages, toolResults });
	enqueue.assign({ run: nextRun });
	return patchContext(context, { messages, run: nextRun });
}

/**
 * Settles calls in these statuses with an error result, announcing those never started; a call
 * that waited for approval gets its `approval_resolved` (aborted) first.
 */
export function settleOpenCalls(context: Ctx, text: string, statuses: ToolCallEntry["status"][], enqueue: Enqueue, answer: (call: ToolCallEntry) => FinalizedToolResult = () => errorResult(text)): Ctx {
	let working = context;
	for (const call of batchOf(context).calls) {
		if (!statuses.includes(call.status)) continue;
		if (call.status === "awaiting-approval") enqueue.emit({ type: "approval_resolved", ...approvalEventOf(call), decision: "aborted", reason: text });
		if (!call.started) enqueue.emit(toolStartEvent(call, context));
		// An outcome the journal has is retold (the call ran before a restart): its end says so.
		working = settleCall(working, patchCall(call, { started: true }), answer(call), enqueue, outcomeInJournal(context, call));
	}
	return working;
}

/** The answer to a call a restart interrupted in a run that was aborted before it: it is not run again. */
const INTERRUPTED_AFTER_ABORT = "Tool call was interrupted by a restart after the run was aborted; it was not run again";

/**
 * An aborted run answers the calls in these statuses without running them. A call that ran
 * before a restart (the run was stored aborted, or aborted before it took the call's end) keeps
 * the result its journal has, and one the journal says had started is answered as interrupted,
 * not as never run; the others get `text`. Only for calls this process has not run: a call
 * running here has its intent in the journal too.
 */
export function settleCallsOfAbortedRun(context: Ctx, text: string, statuses: ToolCallEntry["status"][], enqueue: Enqueue): Ctx {
	if (!context.config.journal) return settleOpenCalls(context, text, statuses, enqueue);
	return settleOpenCalls(context, text, statuses, enqueue, (call) => {
		const record = recordOf(context, call);
		const outcome = record?.outcome;
		if (outcome?.kind === "tool") return { result: outcome.result, isError: outcome.isError };
		return errorResult(record?.intent ? INTERRUPTED_AFTER_ABORT : text);
	});
}

/** Emits the tool result messages not yet emitted, in source order; returns the updated context. */
export function emitUnemittedToolResults(context: Ctx, enqueue: Enqueue): Ctx {
	const run = runOf(context);
	const batch = batchOf(context);
	// The turn's results in source order: those already emitted (sequential batches emit each as
	// it settles), and the ones emitted now. Every result of a turn answers a call of its batch.
	const results: ToolResultMessage[] = [];
	const added: ToolResultMessage[] = [];
	const calls = batch.calls.map((call) => {
		if (call.message || !call.outcome) {
			if (call.message) results.push(call.message);
			return call;
		}
		const message = toolResultMessage(call.toolCall, call.outcome);
		results.push(message);
		added.push(message);
		for (const event of messageEvents(message)) enqueue.emit(event);
		return patchCall(call, { message });
	});
	const messages = appendMessages(context, added, enqueue);
	const nextRun = patchRun(run, { newMessages: [...run.newMessages, ...added], toolResults: results, batch: patchBatch(batch, { calls }) });
	enqueue.assign({ run: nextRun });
	return patchContext(context, { messages, run: nextRun });
}

/**
 * Records the failed part of a split streaming reply after its committed part's tool results
 * (the turn ends with it: its stopReason and error are the turn's).
 */
export function recordPendingFailedReply(context: Ctx, enqueue: Enqueue): Ctx {
	const run = runOf(context);
	const failed = run.pendingFailedReply;
	if (!failed) return context;
	for (const event of messageEvents(failed)) enqueue.emit(event);
	const messages = appendMessages(context, [failed], enqueue);
	const nextRun = patchRun(run, { pendingFailedReply: undefined, newMessages: [...run.newMessages, failed], batch: patchBatch(batchOf(context), { assistant: failed }) });
	enqueue.assign({ run: nextRun });
	return patchContext(context, { messages, run: nextRun });
}

/** Tool result messages (source order), the failed part of a split reply, `turn_end`; the batch actor stops. */
export function endToolBatch(context: Ctx, enqueue: EffectEnqueue): void {
	const working = recordPendingFailedReply(emitUnemittedToolResults(context, enqueue), enqueue);
	const run = runOf(working);
	enqueue.assign({ run: patchRun(run, { turnEnded: true }) });
	enqueue.emit({ type: "turn_end", message: batchOf(working).assistant, toolResults: run.toolResults });
	if (run.batch?.actorStarted) enqueue.stopChild(TOOL_BATCH_ID);
}

/** The call's id in the run's journal, when the run keeps one. */
function effectOf(context: Ctx, call: ToolCallEntry): string | undefined {
	const run = context.run;
	return context.config.journal && run ? toolEffectId(run.id, run.turn, call.key) : undefined;
}

/**
 * Streaming mode with `beforeToolCall`, restored: the arguments of a call the journal has (it went
 * past its hook, or was answered, before the restart), or undefined. Such a call runs as a
 * prepared one and the journal answers it (run again only if replay-safe); asked again, a hook
 * that now refused would answer a call that had run, and its outcome would be journaled twice.
 */
function argsPastHook(context: Ctx, call: ToolCallEntry): { args: unknown } | undefined {
	const record = recordOf(context, call);
	if (record?.intent?.kind === "tool") return { args: record.intent.args };
	return record?.outcome?.kind === "tool" ? { args: call.toolCall.arguments } : undefined;
}

/**
 * The command that starts a streamed call with `beforeToolCall` (the hook's, then the tool's), or,
 * for a call the journal has, runs it as prepared (see {@link argsPastHook}); `args`: what the call
 * then has.
 */
function hookedStart(context: Ctx, call: ToolCallEntry): { command: ToolBatchCommand; args: unknown } {
	const past = argsPastHook(context, call);
	const effect = effectOf(context, call);
	if (past) return { command: { type: "execute", callKey: call.key, toolCall: call.toolCall, args: past.args, effect }, args: past.args };
	return { command: { type: "preflight-and-execute", callKey: call.key, toolCall: call.toolCall, effect }, args: undefined };
}

/** Runs a call with the arguments it has (and why they cannot run, restored with a changed tool). */
function executeCommand(context: Ctx, call: ToolCallEntry): ToolBatchCommand {
	return { type: "execute", callKey: call.key, toolCall: call.toolCall, args: call.args, effect: effectOf(context, call), argsProblem: call.argsProblem };
}

/**
 * The batch actor was restored from a snapshot taken while it ran calls: they go to a new batch
 * actor, which looks each up in the journal (run before the restart: its result; interrupted:
 * run again only if replay-safe). A call still being prepared is prepared again. In a run that
 * had been aborted, calls in flight are answered, not run again. Without a journal (a bare
 * machine restored from `getPersistedSnapshot()`) nothing says whether a running call took
 * effect: it runs again only if replay-safe, and is otherwise answered as interrupted, by the
 * same rule.
 */
export function redispatchInterruptedCalls(context: Ctx, enqueue: SpawningEnqueue): void {
	const run = runOf(context);
	const batch = run.batch;
	if (!batch?.actorStarted) return;
	enqueue.stopChild(TOOL_BATCH_ID);
	let working = withBatch(context, patchBatch(batch, { actorStarted: false }));
	if (run.aborted) {
		working = settleCallsOfAbortedRun(working, INTERRUPTED_AFTER_ABORT, ["preparing", "running"], enqueue);
		enqueue.assign({ run: working.run });
		return;
	}
	let next = batchOf(working);
	for (const call of next.calls) {
		if (call.status === "running" && !context.config.journal && findTool(context.tools, call.toolCall.name)?.replay !== "safe") {
			working = settleCall(withBatch(working, next), call, errorResult(interruptedText(call.toolCall.name, undefined)), enqueue);
			next = batchOf(working);
		} else if (call.status === "running") {
			// Runs again from the start: a give-up blames the tool again until it returns.
			if (call.returned) next = updateCall(next, call.key, { returned: undefined });
			next = withBatchActor(working, next, enqueue);
			// Streaming mode with a hook: a call sent to be prepared and run has no validated arguments yet.
			if (call.args === undefined && next.mode === "streaming" && context.config.beforeToolCall) {
				const start = hookedStart(working, call);
				if (start.args !== undefined) next = updateCall(next, call.key, { args: start.args });
				enqueue.sendTo(TOOL_BATCH_ID, start.command);
			} else enqueue.sendTo(TOOL_BATCH_ID, executeCommand(working, call));
		} else if (call.status === "preparing") {
			const decided = prepareToolCall(findTool(context.tools, call.toolCall.name), call.toolCall);
			if (decided.kind === "immediate") {
				working = settleCall(withBatch(working, next), call, decided.outcome, enqueue);
				next = batchOf(working);
				continue;
			}
			next = withBatchActor(working, next, enqueue);
			enqueue.sendTo(TOOL_BATCH_ID, { type: "preflight", callKey: call.key, toolCall: call.toolCall, args: decided.args });
		}
	}
	enqueue.assign({ run: patchRun(runOf(working), { batch: next }) });
}

/** Starts the batch actor for this batch unless it runs already; returns the batch as recorded. */
function withBatchActor(context: Ctx, batch: ToolBatch, enqueue: SpawningEnqueue): ToolBatch {
	if (batch.actorStarted) return batch;
	enqueue.spawnChild("toolBatchActor", { id: TOOL_BATCH_ID, input: toolBatchInput(context, batch) });
	return patchBatch(batch, { actorStarted: true });
}

/** The enqueuer of actions that may spawn the batch actor. */
export interface SpawningEnqueue extends EffectEnqueue {
	spawnChild(src: "toolBatchActor", options: { id: string; input: ToolBatchInput }): void;
}

/**
 * Preflight without a `beforeToolCall` hook, inside the action: announces the next queued call
 * (all of them in a parallel batch, in source order) and validates it. A call that fails
 * preflight is settled at once (its `tool_execution_end` right after its start, as pi); the
 * others become "prepared".
 */
export function prepareQueuedCalls(context: Ctx, enqueue: EffectEnqueue): void {
	const queuedCalls = batchOf(context).calls;
	const sequential = batchOf(context).mode === "sequential";
	let working = context;
	// The calls prepared so far, in one copy of the batch's list (written back before a settle,
	// which takes the batch as it is, and at the end): not a copy of the batch per call.
	let calls: ToolCallEntry[] | undefined;
	const writeBack = () => {
		if (!calls) return;
		working = withBatch(working, patchBatch(batchOf(working), { calls }));
		calls = undefined;
	};
	for (let index = 0; index < queuedCalls.length; index++) {
		const queued = queuedCalls[index] as ToolCallEntry;
		if (queued.status !== "queued") continue;
		enqueue.emit(toolStartEvent(queued, context));
		const decided = prepareToolCall(findTool(context.tools, queued.toolCall.name), queued.toolCall);
		if (decided.kind === "immediate") {
			writeBack();
			working = settleCall(working, patchCall(queued, { started: true }), decided.outcome, enqueue);
		} else {
			calls ??= batchOf(working).calls.slice();
			const wait = approvalWaitFor(context, queued, decided.args, undefined, enqueue);
			calls[index] = patchCall(queued, wait ? { status: "awaiting-approval", args: decided.args, started: true, approval: wait } : { status: "prepared", args: decided.args, started: true });
		}
		if (sequential) break;
	}
	writeBack();
	if (working !== context) enqueue.assign({ run: working.run });
}

/** With a `beforeToolCall` hook: the next queued call is announced (its listeners settle before the hook is asked). */
export function announceNextCall(context: Ctx, enqueue: Enqueue): void {
	const batch = batchOf(context);
	const next = batch.calls.find((call) => call.status === "queued");
	if (!next) return;
	enqueue.assign({ run: patchRun(runOf(context), { batch: updateCall(batch, next.key, { status: "preparing", started: true }) }) });
	enqueue.emit(toolStartEvent(next, context));
}

/** The announced call's synchronous preflight; if it passes, the batch actor asks `beforeToolCall`. */
export function preflightAnnouncedCall(context: Ctx, enqueue: SpawningEnqueue): void {
	const call = batchOf(context).calls.find((entry) => entry.status === "preparing");
	if (!call) return;
	const decided = prepareToolCall(findTool(context.tools, call.toolCall.name), call.toolCall);
	if (decided.kind === "immediate") {
		settleCall(context, call, decided.outcome, enqueue);
		return;
	}
	const batch = withBatchActor(context, batchOf(context), enqueue);
	enqueue.assign({ run: patchRun(runOf(context), { batch }) });
	enqueue.sendTo(TOOL_BATCH_ID, { type: "preflight", callKey: call.key, toolCall: call.toolCall, args: decided.args });
}

/**
 * `beforeToolCall` let the call run: it is prepared, with the arguments the hook may have
 * changed, or it waits for a person's approval first (the hook asked for it, or the tool does).
 */
export function recordPreparedCall(context: Ctx, key: string, args: unknown, asked: { reason?: string | undefined } | undefined, enqueue: EffectEnqueue): void {
	const call = callByKey(context, key);
	if (!call) return;
	const wait = approvalWaitFor(context, call, args, asked, enqueue);
	const patch: Partial<ToolCallEntry> = wait ? { status: "awaiting-approval", args, approval: wait } : { status: "prepared", args };
	enqueue.assign({ run: patchRun(runOf(context), { batch: updateCall(batchOf(context), key, patch) }) });
}

/**
 * Whether the call waits for a person's decision before it runs (see `approvalNeeded`); if so,
 * `approval_requested` is emitted, and the wait gets its deadline when there is an approval
 * timeout.
 */
function approvalWaitFor(context: Ctx, call: ToolCallEntry, args: unknown, asked: { reason?: string | undefined } | undefined, enqueue: EffectEnqueue): ApprovalWait | undefined {
	const needed = approvalNeeded(findTool(context.tools, call.toolCall.name), args, asked);
	if (!needed) return undefined;
	const wait: ApprovalWait = { reason: needed.reason, deadline: approvalDeadline(context, call) };
	enqueue.emit({ type: "approval_requested", ...approvalEventOf(call), args: detachedArgs(args), reason: needed.reason });
	// Its deadline runs from when it was first asked, whatever the run does meanwhile (siblings running, the reply streaming).
	const first = firstApprovalDeadline(context);
	if (wait.deadline !== undefined && (first === undefined || wait.deadline < first)) scheduleApprovalTimeout(context, wait.deadline, enqueue);
	return wait;
}

/**
 * When a call asked about now stops waiting: `approvalTimeoutMs` from now, or, for a call asked
 * before a restart and asked again (a streaming reply closed again by the restored run), the
 * deadline it was asked with: a restart does not give the person a fresh timeout.
 */
function approvalDeadline(context: Ctx, call: ToolCallEntry): number | undefined {
	const run = runOf(context);
	const askedBefore = context.config.journal?.lookup(toolEffectId(run.id, run.turn, call.key))?.request?.deadline;
	if (askedBefore !== undefined) return askedBefore;
	const timeout = approvalTimeout(context);
	return timeout === undefined ? undefined : Date.now() + timeout;
}

/**
 * The run's approval timeout, if it has one. `Infinity` is none, as it reads back from a snapshot
 * (JSON writes it as null): a deadline of `Infinity` could not be stored.
 */
export function approvalTimeout(context: Ctx): number | undefined {
	const timeout = context.config.approvalTimeoutMs ?? 0;
	return timeout > 0 && timeout < Number.POSITIVE_INFINITY ? timeout : undefined;
}

/**
 * A call the batch actor held back for approval (streaming mode with `beforeToolCall`: the
 * actor prepares and runs in one go, and stops before running when the call needs approval).
 */
export function holdCallForApproval(context: Ctx, key: string, args: unknown, asked: { reason?: string | undefined } | undefined, enqueue: EffectEnqueue): void {
	recordPreparedCall(context, key, args, asked, enqueue);
}

/**
 * The call waiting for approval that a decision names (see `callsNamed`): none when
 * the name is ambiguous (a repeated id two of whose calls wait).
 */
export function awaitingCall(context: Ctx, toolCallId: string): ToolCallEntry | undefined {
	const calls = context.run?.batch?.calls;
	if (!calls) return undefined;
	const named = callsNamed(calls.filter((call) => call.status === "awaiting-approval"), toolCallId);
	return named.length === 1 ? named[0] : undefined;
}

/**
 * A person approved the call: it is prepared (with the arguments they gave, if any, validated
 * against the run's tool: the chart's `approvalFits` guard took only arguments that fit) and
 * runs when its turn comes.
 */
export function approveCall(context: Ctx, toolCallId: string, args: unknown, enqueue: Enqueue): void {
	const call = awaitingCall(context, toolCallId);
	if (!call) return;
	const finalArgs = args === undefined ? call.args : approvedArguments(findTool(context.tools, call.toolCall.name), call, args).args;
	enqueue.assign({ run: patchRun(runOf(context), { batch: updateCall(batchOf(context), call.key, { status: "prepared", args: finalArgs, approval: undefined, argsProblem: undefined }) }) });
	// A copy, as approval_requested's: a listener that edits it does not change what the call runs with.
	const resolved: Extract<AgentEvent, { type: "approval_resolved" }> = { type: "approval_resolved", ...approvalEventOf(call), decision: "approved", args: detachedArgs(finalArgs) };
	if (args !== undefined) resolved.argumentsGiven = true;
	enqueue.emit(resolved);
}

/** The call does not run: a person rejected it, its approval timed out, or the run was aborted while it waited. */
export function rejectCall(context: Ctx, call: ToolCallEntry, decision: "rejected" | "timed-out" | "aborted", reason: string | undefined, enqueue: Enqueue): Ctx {
	enqueue.emit({ type: "approval_resolved", ...approvalEventOf(call), decision, reason });
	return settleCall(context, patchCall(call, { approval: undefined }), errorResult(rejectedText(decision, reason)), enqueue);
}

/** Rejects every call waiting for approval (the run was aborted while they waited). */
export function rejectAllApprovals(context: Ctx, decision: "timed-out" | "aborted", now: number, enqueue: Enqueue): void {
	let working = context;
	for (const call of context.run?.batch?.calls ?? []) {
		if (call.status !== "awaiting-approval") continue;
		if (decision === "timed-out" && (call.approval?.deadline === undefined || call.approval.deadline > now)) continue;
		working = rejectCall(working, call, decision, undefined, enqueue);
	}
}

/** The id of the delayed `approval.timeout` (one for the run: the first deadline's). */
export const APPROVAL_TIMEOUT_ID = "approval.timeout";

/**
 * Sets the run's approval timer to the first deadline of the calls waiting (and `asked`, the
 * deadline of a call asked about in this step, not in `context` yet); none when nothing waits
 * with a deadline. Deadlines all run for the same time from when a call was asked, so a call
 * asked now never comes before a timer set already, and its own deadline counts only when it is
 * the first.
 */
export function scheduleApprovalTimeout(context: Ctx, asked: number | undefined, enqueue: EffectEnqueue): void {
	const waiting = firstApprovalDeadline(context);
	const deadline = waiting === undefined ? asked : asked === undefined ? waiting : Math.min(waiting, asked);
	enqueue.cancel(APPROVAL_TIMEOUT_ID);
	// A timer longer than Node's longest fires at once; capped, it fires early and is set again.
	if (deadline !== undefined) enqueue.raise({ type: "approval.timeout" }, { delay: Math.min(LONGEST_DELAY, Math.max(0, deadline - Date.now())), id: APPROVAL_TIMEOUT_ID });
}

/** The first approval deadline of the batch, if a call waiting for approval has one. */
export function firstApprovalDeadline(context: Ctx): number | undefined {
	let first: number | undefined;
	for (const call of context.run?.batch?.calls ?? []) {
		const deadline = call.status === "awaiting-approval" ? call.approval?.deadline : undefined;
		if (deadline !== undefined && (first === undefined || deadline < first)) first = deadline;
	}
	return first;
}

/**
 * Starts what may run now: in a parallel batch every prepared call, in a sequential batch the
 * next one; in a streaming batch each queued call whose turn has come, announced and then
 * preflighted (at once without a hook, by the batch actor with one). While somebody watches the
 * run, a streaming call announced here waits for its listeners (`announced`, and a barrier): the
 * step that acknowledges the barrier starts it (`check("eventsDelivered")`: this step is one, or
 * nobody watches; asked only when a call waits). Whether anybody watches is the chart's
 * `awaitsDelivery` guard, as for `emitBarrier`.
 */
export function startTools(context: Ctx, enqueue: SpawningEnqueue, check: (guard: "eventsDelivered" | "awaitsDelivery") => boolean): void {
	const run = runOf(context);
	// The chart never asks once the run was aborted or the reply failed (tool-draining, and the
	// guarded tool.settled, tool.timeout, stream.toolcall and delivered transitions).
	if (!run.batch) return;
	let batch = run.batch;
	let working: Ctx = context;
	if (batch.mode === "streaming") {
		// Approved calls (held back for approval, now prepared) run at once.
		for (const call of batch.calls) {
			if (call.status !== "prepared") continue;
			batch = withBatchActor(working, batch, enqueue);
			batch = updateCall(batch, call.key, { status: "running" });
			enqueue.sendTo(TOOL_BATCH_ID, executeCommand(working, call));
		}
		const dispatch = (call: ToolCallEntry) => {
			if (context.config.beforeToolCall) {
				batch = withBatchActor(working, batch, enqueue);
				const start = hookedStart(working, call);
				batch = updateCall(batch, call.key, start.args === undefined ? { status: "running", started: true } : { status: "running", started: true, args: start.args });
				enqueue.sendTo(TOOL_BATCH_ID, start.command);
				return;
			}
			const decided = prepareToolCall(findTool(context.tools, call.toolCall.name), call.toolCall);
			if (decided.kind === "immediate") {
				working = settleCall(withBatch(working, batch), patchCall(call, { started: true }), decided.outcome, enqueue);
				batch = batchOf(working);
				return;
			}
			const wait = approvalWaitFor(working, call, decided.args, undefined, enqueue);
			if (wait) {
				batch = updateCall(batch, call.key, { status: "awaiting-approval", started: true, args: decided.args, approval: wait });
				return;
			}
			batch = withBatchActor(working, batch, enqueue);
			batch = updateCall(batch, call.key, { status: "running", started: true, args: decided.args });
			enqueue.sendTo(TOOL_BATCH_ID, { type: "execute", callKey: call.key, toolCall: call.toolCall, args: decided.args, effect: effectOf(working, call) });
		};
		// Announced before this step, and the listeners have their starts now.
		if (batch.calls.some((call) => call.status === "announced") && check("eventsDelivered")) for (const call of batch.calls) if (call.status === "announced") dispatch(call);
		let announced = false;
		const waits = check("awaitsDelivery");
		for (const call of readyStreamingCalls(batch, context.tools)) {
			enqueue.emit(toolStartEvent(call, context));
			if (!waits) dispatch(call);
			else {
				batch = updateCall(batch, call.key, { status: "announced", started: true });
				announced = true;
			}
		}
		if (announced) emitBarrierNow(context, enqueue);
	} else {
		// One copy of the list for all the calls started here, not a copy of the batch per call.
		let calls: ToolCallEntry[] | undefined;
		const sequential = batch.mode === "sequential";
		for (let index = 0; index < batch.calls.length; index++) {
			const call = batch.calls[index] as ToolCallEntry;
			if (call.status !== "prepared") continue;
			if (sequential && (calls ?? batch.calls).some((other) => other.status === "running")) break;
			batch = withBatchActor(working, batch, enqueue);
			(calls ??= batch.calls.slice())[index] = patchCall(call, { status: "running" });
			enqueue.sendTo(TOOL_BATCH_ID, executeCommand(working, call));
		}
		if (calls) batch = patchBatch(batch, { calls });
	}
	// Nothing started (a parallel batch's calls started together): the run stays as it is.
	if (working !== context || batch !== run.batch) enqueue.assign({ run: patchRun(runOf(working), { batch }) });
}

/** A running call settled, or timed out (then it is told to stop and its late result ignored). */
export function settleRunningTool(context: Ctx, key: string, outcome: FinalizedToolResult, stopIt: boolean, enqueue: EffectEnqueue, replayed = false): void {
	const call = callByKey(context, key);
	if (!call) return;
	if (stopIt) enqueue.sendTo(TOOL_BATCH_ID, { type: "cancel", callKey: key });
	let working = settleCall(context, call, outcome, enqueue, replayed);
	if (outcome.isError && findTool(context.tools, call.toolCall.name)?.cancelSiblingsOnError) {
		for (const sibling of batchOf(working).calls) {
			if (sibling.status !== "running") continue;
			enqueue.sendTo(TOOL_BATCH_ID, { type: "cancel", callKey: sibling.key });
			working = settleCall(working, sibling, errorResult(`Cancelled: sibling tool call ${call.toolCall.name} failed`), enqueue);
		}
	}
}

/**
 * Streaming mode with `beforeToolCall`: the hook let a running call through, with these
 * arguments. A call with its arguments counts as executing: an abort now waits for the tool (up to
 * the abort grace), and a restore runs it as a prepared call, which the journal answers.
 */
export function recordExecutingCall(context: Ctx, key: string, args: unknown, enqueue: Enqueue): void {
	const run = runOf(context);
	enqueue.assign({ run: patchRun(run, { batch: updateCall(batchOf(context), key, { args }) }) });
}

/**
 * At an abort, the calls of a streaming batch whose `beforeToolCall` has not answered yet (running
 * without arguments) never ran: they are answered as aborted before they ran, as a parallel or
 * sequential batch answers a call still being prepared, instead of waiting out the abort grace
 * and then blaming the tool. The hook's late answer is ignored.
 */
export function settleCallsBeforeTheirHook(context: Ctx, enqueue: EffectEnqueue): void {
	const batch = context.run?.batch;
	if (batch?.mode !== "streaming") return;
	let working = context;
	for (const call of batch.calls) {
		if (call.status !== "running" || call.args !== undefined) continue;
		enqueue.sendTo(TOOL_BATCH_ID, { type: "cancel", callKey: call.key });
		working = settleCall(working, call, errorResult(ABORTED_BEFORE_RUN), enqueue);
	}
}

/** A running call's tool returned; its `afterToolCall` hook is asked now. */
export function recordToolReturned(context: Ctx, key: string, enqueue: Enqueue): void {
	const run = runOf(context);
	enqueue.assign({ run: patchRun(run, { batch: updateCall(batchOf(context), key, { returned: true }) }) });
}

/**
 * The answer of a call given up on after an abort: it names what did not finish, the tool or,
 * once the tool had returned, its `afterToolCall` hook (a slow hook must not blame the tool).
 */
function abandonedText(call: ToolCallEntry, graceMs: number): string {
	const name = call.toolCall.name;
	if (call.returned) return `Tool "${name}" returned, but its afterToolCall hook did not finish within ${graceMs} ms after the run was aborted; the call's result, if the hook ever returns, is ignored`;
	return `Tool "${name}" did not stop within ${graceMs} ms after the run was aborted; its result, if it comes, is ignored`;
}

/** After the abort grace: calls still running are given up on (told to stop; a late result is ignored). */
export function abandonRunningCalls(context: Ctx, enqueue: EffectEnqueue): void {
	let working = context;
	const grace = context.config.toolAbortGraceMs;
	for (const call of context.run?.batch?.calls ?? []) {
		if (call.status !== "running") continue;
		enqueue.sendTo(TOOL_BATCH_ID, { type: "cancel", callKey: call.key });
		working = settleCall(working, call, errorResult(abandonedText(call, grace)), enqueue);
	}
}

/** Calls of a message cut off by the output token limit do not run: each gets that error. */
export function settleCallsCutOffByLength(context: Ctx, enqueue: Enqueue): void {
	let working = context;
	for (const call of batchOf(context).calls) {
		if (call.status === "settled") continue;
		if (!call.started) enqueue.emit(toolStartEvent(call, context));
		working = settleCall(working, patchCall(call, { started: true }), errorResult(lengthCutOffText(call.toolCall.name)), enqueue);
	}
}

/**
 * Streaming tool execution: a call finished streaming; it joins the batch (and may start now).
 * Each `stream.toolcall` is a call of its own (the stream actor reports a block once), even one
 * that repeats an earlier call's id.
 */
export function addStreamedToolCall(context: Ctx, toolCall: ToolCall, partial: AssistantMessage, enqueue: Enqueue): void {
	const run = runOf(context);
	const batch: ToolBatch = run.batch ?? newBatch(partial, "streaming", [], turnEffectPrefix(run.id, run.turn));
	const entry = newCallEntry(toolCall as AgentToolCall, callKeyFor(batch.calls, toolCall.id));
	enqueue.assign({ run: patchRun(run, { batch: patchBatch(batch, { calls: [...batch.calls, entry] }) }) });
}

/** Streaming mode, the reply complete: the batch takes its final content; calls cut off by "length" get that error. */
export function finishStreamingBatch(context: Ctx, enqueue: Enqueue): void {
	const run = runOf(context);
	if (!run.assistant) return;
	const { batch, cutOff } = completeStreamingBatch(run.batch, run.assistant, turnEffectPrefix(run.id, run.turn));
	let working = withBatch(context, patchBatch(batch, { truncated: cutOff.length > 0 }));
	enqueue.assign({ run: working.run });
	for (const call of cutOff) {
		enqueue.emit(toolStartEvent(call, context));
		working = settleCall(working, patchCall(call, { started: true }), errorResult(lengthCutOffText(call.toolCall.name)), enqueue);
	}
}

/**
 * Streaming mode, the reply failed: calls never started never will; running ones are stopped with
 * an error, and those waiting for approval (or approved, not yet running) are answered with it.
 */
export function abortStreamingCalls(context: Ctx, enqueue: EffectEnqueue): void {
	const run = runOf(context);
	if (!run.batch || !run.assistant) return;
	const reason = `Tool call aborted: the assistant message ended with stopReason "${run.assistant.stopReason}"`;
	let working = withBatch(context, patchBatch(run.batch, { assistant: run.assistant, calls: run.batch.calls.filter((call) => call.status !== "queued") }));
	enqueue.assign({ run: working.run });
	for (const call of batchOf(working).calls) {
		if (call.status !== "running") continue;
		enqueue.sendTo(TOOL_BATCH_ID, { type: "cancel", callKey: call.key });
		working = settleCall(working, call, errorResult(reason), enqueue);
	}
	// Started calls that wait for their listeners or for approval (or were approved and wait their turn) never run now: they are answered too.
	settleOpenCalls(working, reason, ["announced", "prepared", "awaiting-approval"], enqueue);
}

export { toolStartEvent };

/** The batch of a completed reply (parallel or sequential; a "sequential" tool makes the whole batch sequential). */
export function createBatchFor(context: Ctx, assistant: AssistantMessage): ToolBatch {
	const run = runOf(context);
	return createToolBatch(assistant, context.tools, context.config.toolExecution, turnEffectPrefix(run.id, run.turn));
}
