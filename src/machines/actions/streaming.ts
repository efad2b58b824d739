/**
 * One LLM call: a new attempt, the reply's start and its completion (which, for a streaming
 * reply that failed after some of its calls ran, is recorded in two parts).
 */
import { isContextOverflow } from "../../providers/overflow.js";
import type { AssistantMessage } from "../../types/messages.js";
import { OVERFLOW_RECOVERY_FAILED } from "../compaction-guards.js";
import { replyOfStartedCalls } from "../../actors/stream-actor.js";
import { withReasoning } from "../../durable/journal.js";
import { type Ctx, type EffectEnqueue, type Enqueue, appendMessages, newStreamProgress, patchContext, patchRun, runOf } from "../context.js";
import type { ToolCallEntry } from "../types.js";
import { TOOL_BATCH_ID, approvalEventOf, toolEndEvent, toolStartEvent } from "./tools.js";
import { detachedArgs, failedReply, toolCallsOf } from "../run-helpers.js";
import { splitFailedStreamingReply } from "../streaming-tools.js";

/** A new LLM call: earlier attempts' events become stale; the turn's reply and batch start empty. */
export function startAttempt(context: Ctx, enqueue: Enqueue): void {
	const run = runOf(context);
	enqueue.assign({
		run: patchRun(run, { attempt: run.attempt + 1, stream: newStreamProgress(), partial: undefined, assistant: undefined, batch: undefined, toolResults: [] }),
	});
}

/**
 * The call was in flight when the run was stored, and the run was restored: what had streamed is
 * dropped (never sent to the model), with the streaming batch of its tool calls (their batch actor
 * stopped), and the chart makes the call again (the journal answers it if it had ended). Listeners
 * of the restored agent never saw this reply, so nothing is emitted.
 */
export function discardInterruptedReply(context: Ctx, enqueue: EffectEnqueue): void {
	const run = runOf(context);
	if (run.batch?.actorStarted) enqueue.stopChild(TOOL_BATCH_ID);
	// The call is made again as the same effect (its attempt, which the next `streaming` counts up
	// to again): the journal then has its outcome if it ended before the restart.
	enqueue.assign({ run: patchRun(run, { attempt: run.attempt - 1, stream: newStreamProgress(), partial: undefined, batch: undefined }) });
}

/** A call of a streaming batch that ran (or runs), or had a person asked about it. */
export function callStarted(call: ToolCallEntry): boolean {
	return call.status === "running" || call.status === "settled" || call.status === "awaiting-approval";
}

/**
 * The call was in flight when a machine without a journal was stored, after calls of its reply
 * had started (streaming tool execution): the reply is closed with those calls, as the journal
 * closes it for an agent (see `startedDuring`), and the model is not asked again: a new reply
 * would bring new call ids and leave what the started calls did unanswered, or run them twice.
 * The calls keep where they were: a result stays, a call that ran is answered by the crash rules
 * when its batch says it was interrupted (`tools.interrupted`), a wait for approval goes on. As
 * the journal's replay does, each is announced anew to the restored machine's listeners, who
 * heard nothing of it: its start, the question it waits on, or its end.
 */
export function closeInterruptedReplyWithStartedCalls(context: Ctx, enqueue: Enqueue): void {
	const run = runOf(context);
	const calls = (run.batch?.calls ?? []).filter(callStarted);
	const batch = run.batch ? { ...run.batch, calls } : undefined;
	const closing = patchContext(context, { run: patchRun(run, { stream: newStreamProgress(), partial: undefined, batch }) });
	// The reasoning the reply had before its calls stays with them (a provider with signed thinking refuses the reply without it).
	const started = calls.map((call) => call.toolCall);
	// Retold, as a journal's replay is: the machine's listeners before the restart had heard it.
	completeAssistantMessage(closing, replyOfStartedCalls(context.model, run.partial ? withReasoning(run.partial.content, started) : started), true, enqueue);
	for (const call of calls) {
		enqueue.emit(toolStartEvent(call, closing, true));
		if (call.status === "awaiting-approval") {
			const args = detachedArgs(call.args ?? call.toolCall.arguments);
			enqueue.emit({ type: "approval_requested", ...approvalEventOf(call), args, reason: call.approval?.reason });
		} else if (call.status === "settled" && call.outcome) {
			enqueue.emit(toolEndEvent(call, call.outcome, true));
		}
	}
}

/** The reply began: `message_start` with a snapshot of its partial message. */
export function beginAssistantMessage(context: Ctx, partial: AssistantMessage, replayed: boolean, enqueue: Enqueue): void {
	enqueue.assign({ run: patchRun(runOf(context), { partial }) });
	enqueue.emit(replayed ? { type: "message_start", message: { ...partial }, replayed: true } : { type: "message_start", message: { ...partial } });
}

/**
 * The reply is complete (or failed): it joins the transcript, `message_end`. A listener that
 * aborted the call gives it its error; an overflow right after an overflow's retry says recovery failed; a
 * streaming reply that failed after calls started is cut in two (see `splitFailedStreamingReply`).
 */
export function completeAssistantMessage(context: Ctx, final: AssistantMessage, replayed: boolean, enqueue: Enqueue): void {
	const run = runOf(context);
	let message = final;
	// A listener that threw aborted this call: its error, not "Request was aborted", says why.
	if (run.failure !== undefined && message.stopReason === "aborted") message = { ...message, errorMessage: run.failure };
	// Cut off by the output limit before it said anything, with the window full: it could not fit.
	// With compaction on it is the overflow it is, failed, so that it is compacted away and the call
	// made again, as a provider's overflow error is; kept, it ended the run as an empty answer.
	if (message.stopReason === "length" && context.config.compaction?.enabled && message.usage.output === 0 && toolCallsOf(message).length === 0 && isContextOverflow(message, context.model.contextWindow)) {
		const input = message.usage.input + message.usage.cacheRead;
		message = { ...message, stopReason: "error", errorMessage: `The context window is full: the reply was cut off by the output limit before any output, with ${input} of the model's ${context.model.contextWindow} tokens taken by the input` };
	}
	// A reply that overflowed silently (stop, input over the window) still answered: it keeps its
	// answer unmarked. Only a reply that failed or ran out says recovery failed.
	if (run.overflowRetried && message.stopReason !== "stop" && context.config.compaction?.enabled && isContextOverflow(message, context.model.contextWindow)) {
		message = { ...message, errorMessage: `${OVERFLOW_RECOVERY_FAILED} (${message.errorMessage ?? "context overflow"})` };
	}
	const split = failedReply(message) ? splitFailedStreamingReply(message, run.batch) : undefined;
	// A split reply ends here as its committed part; its failed part follows the tool results.
	const recorded = split?.committed ?? message;
	appendMessages(context, [recorded], enqueue);
	enqueue.assign({
		run: patchRun(run, {
			partial: undefined,
			assistant: message,
			pendingFailedReply: split?.failed,
			newMessages: [...run.newMessages, recorded],
			outputLimitAttempts: message.stopReason === "length" ? run.outputLimitAttempts : 0,
			// A reply that did not fail is progress: a later overflow in the run is compacted and retried
			// again, as pi's coding agent does (only an overflow right after the retry ends the run).
			overflowRetried: message.stopReason === "error" && run.overflowRetried,
		}),
	});
	const retold = replayed ? ({ replayed: true } as const) : undefined;
	if (!run.partial) enqueue.emit({ type: "message_start", message: { ...recorded }, ...retold });
	enqueue.emit({ type: "message_end", message: recorded, ...retold });
}

/** A turn without tool calls ends with its reply. */
export function emitTurnEndWithoutTools(context: Ctx, enqueue: Enqueue): void {
	const run = runOf(context);
	// A turn ends once: a restored run that takes the decision after an overflowed reply again
	// (its compaction was interrupted) had already ended the turn before the restart.
	if (!run.assistant || run.turnEnded) return;
	enqueue.assign({ run: patchRun(run, { turnEnded: true }) });
	enqueue.emit({ type: "turn_end", message: run.assistant, toolResults: [] });
}
