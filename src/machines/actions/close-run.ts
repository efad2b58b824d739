/**
 * Dispose in the middle of a run: closes whatever is open (the streaming message, started
 * tool calls, the turn) so every start event has its end and the transcript stays valid for
 * a provider.
 */
import type { AssistantMessage, ToolResultMessage } from "../../types/messages.js";
import { type Ctx, type EffectEnqueue, appendMessages, batchOf, patchContext, patchRun, runOf, withBatch } from "../context.js";
import { abortedAssistantMessage, createToolBatch, failedReply, patchBatch, toolCallsOf } from "../run-helpers.js";
import { splitFailedStreamingReply } from "../streaming-tools.js";
import { turnEffectPrefix } from "../../durable/journal.js";
import { TOOL_BATCH_ID, emitUnemittedToolResults, recordPendingFailedReply, settleOpenCalls } from "./tools.js";

/** The reply that was streaming when the run was cut off, as a message (the stream's latest partial, aborted). */
function cutOffReply(context: Ctx, reason: string, enqueue: EffectEnqueue): { message: AssistantMessage; recorded: AssistantMessage; pending: AssistantMessage | undefined } {
	const run = runOf(context);
	const partial = run.stream.partial ?? run.partial;
	const message: AssistantMessage = partial
		? { ...partial, content: [...partial.content], stopReason: "aborted", errorMessage: reason }
		: abortedAssistantMessage(context, reason);
	// Streamed calls that already ran keep their place in the transcript.
	const split = splitFailedStreamingReply(message, run.batch);
	const recorded = split?.committed ?? message;
	if (!run.partial) enqueue.emit({ type: "message_start", message: { ...recorded } });
	enqueue.emit({ type: "message_end", message: recorded });
	return { message, recorded, pending: split?.failed };
}

/**
 * Closes the run as `dispose` finds it: a manual compaction ends aborted; a streaming reply
 * ends aborted with what had streamed; started tool calls get error results; the turn and the
 * run end (`turn_end`, `agent_end`).
 *
 * @example
 * closeRunAbruptly(context, "Agent was disposed", enqueue);
 */
export function closeRunAbruptly(context: Ctx, reason: string, enqueue: EffectEnqueue): void {
	let run = runOf(context);
	run.controller.abort();
	if (run.batch?.actorStarted) enqueue.stopChild(TOOL_BATCH_ID);
	// A tool-call reply that completed just before dispose still gets answers for its calls.
	if (!run.turnEnded && run.assistant && !run.batch && !failedReply(run.assistant) && toolCallsOf(run.assistant).length > 0) {
		run = patchRun(run, { batch: createToolBatch(run.assistant, context.tools, context.config.toolExecution, turnEffectPrefix(run.id, run.turn)) });
		context = patchContext(context, { run });
	}
	if (run.compactionReason) {
		enqueue.emit({ type: "auto_compaction_end", reason: run.compactionReason, aborted: true, willRetry: false });
		if (run.compactionReason === "manual") {
			enqueue.assign({ run: undefined });
			return;
		}
	}
	let working = context;
	if (!run.turnEnded) {
		if (!run.assistant) {
			const { message, recorded, pending } = cutOffReply(context, reason, enqueue);
			working = patchContext(working, { messages: appendMessages(working, [recorded], enqueue), run: patchRun(run, { partial: undefined, assistant: message, pendingFailedReply: pending, newMessages: [...run.newMessages, recorded] }) });
			let toolResults: ToolResultMessage[] = [];
			let turnMessage = message;
			if (run.batch) {
				// Streamed tool calls that already started are answered; the rest never start.
				const started = run.batch.calls.filter((call) => call.status !== "queued");
				working = withBatch(working, patchBatch(run.batch, { assistant: message, calls: started }));
				working = settleOpenCalls(working, reason, ["announced", "preparing", "prepared", "awaiting-approval", "running"], enqueue);
				working = recordPendingFailedReply(emitUnemittedToolResults(working, enqueue), enqueue);
				toolResults = runOf(working).toolResults;
				turnMessage = batchOf(working).assistant;
			}
			enqueue.emit({ type: "turn_end", message: turnMessage, toolResults });
		} else if (run.batch) {
			if (failedReply(run.assistant)) {
				// As after a failed reply: calls that never started never will (the reply is not replayed).
				const started = run.batch.calls.filter((call) => call.status !== "queued");
				working = withBatch(working, patchBatch(run.batch, { assistant: run.assistant, calls: started }));
			}
			working = settleOpenCalls(working, reason, ["queued", "announced", "preparing", "prepared", "awaiting-approval", "running"], enqueue);
			working = recordPendingFailedReply(emitUnemittedToolResults(working, enqueue), enqueue);
			enqueue.emit({ type: "turn_end", message: batchOf(working).assistant, toolResults: runOf(working).toolResults });
		} else {
			enqueue.emit({ type: "turn_end", message: run.assistant, toolResults: [] });
		}
	}
	enqueue.assign({ messages: working.messages, run: working.run });
	enqueue.emit({ type: "agent_end", messages: runOf(working).newMessages });
}
