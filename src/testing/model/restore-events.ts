/**
 * What a restore does to the chart, as the events the restored machine is sent, in order: what
 * its restored children report, the restored agent's resumption and acknowledgements, and what the
 * journal answers. The walk's model takes them through the real chart (`agentMachine.transition`),
 * so a restore edge ends where a restored agent is.
 */
import type { AnyMachineSnapshot } from "xstate";
import { InterruptedByRestart } from "../../actors/compaction-protocol.js";
import { failedAssistantMessage, replyOfStartedCalls } from "../../actors/stream-actor.js";
import { findTool } from "../../machines/run-helpers.js";
import type { AgentMachineEvent, ToolCallEntry } from "../../machines/types.js";
import type { ToolOutcome } from "../../tools/preflight.js";
import { interruptedOutcome } from "./alphabet.js";
import { type JournaledCall, journaledCallsOfStreamingReply } from "./journaled-calls.js";
import { awaitsDelivery, inState } from "./projection.js";

/** One stage of a restore: the events it sends, given where the chart is by then. */
export type RestoreStage = (current: AnyMachineSnapshot) => AgentMachineEvent[];

/**
 * A reply streaming in streaming tool execution after some of its calls started (ran, or were
 * asked about), with a `beforeToolCall` hook: the restored batch asks the hook about every call
 * again before the journal answers it, which the model does not follow, so the walk does not
 * restore from here (test/durable covers it).
 */
export function replayAsksHookAgain(snapshot: AnyMachineSnapshot): boolean {
	const run = snapshot.context.run;
	if (snapshot.context.config.beforeToolCall === undefined || !run || !inState(snapshot, "running.streaming") || run.batch?.mode !== "streaming") return false;
	// A settled call may have run or been blocked by the hook: only calls still queued or announced,
	// or whose hook has not answered yet, are sure to have no journal entry.
	return run.batch.calls.some((call: ToolCallEntry) => call.status !== "queued" && call.status !== "announced" && !(call.status === "running" && call.args === undefined));
}

/**
 * The stream actor's replay of a reply that a restore closes with its started calls (their
 * journal entries name the model call they streamed from): its start, each call, its end, as
 * src/actors/stream-actor.ts sends them once the restored chart makes the model call again. In a
 * run stored after its abort, a reply none of whose calls started ends as aborted, unasked.
 */
function replayedReply(journaled: readonly JournaledCall[]): RestoreStage {
	return (current) => {
		const run = current.context.run;
		if (!run || !inState(current, "running.streaming")) return [];
		const attempt = run.attempt;
		if (journaled.length === 0) return run.aborted ? [{ type: "stream.done", attempt, message: failedAssistantMessage(current.context.model, new Error("Request was aborted"), true) }] : [];
		const message = replyOfStartedCalls(current.context.model, journaled.map(({ call }) => call.toolCall));
		return [
			{ type: "stream.start", attempt, partial: message },
			...journaled.map(({ call }): AgentMachineEvent => ({ type: "stream.toolcall", attempt, toolCall: call.toolCall, partial: message })),
			{ type: "stream.done", attempt, message },
		];
	};
}

/**
 * What follows `stream.interrupted` in a run aborted before it, at once: the call made again only
 * closes the reply from the journal (its started calls, or an aborted reply), asking nothing.
 */
export function closedAfterAbort(interrupted: AnyMachineSnapshot): RestoreStage {
	return interrupted.context.run?.aborted ? replayedReply(journaledCallsOfStreamingReply(interrupted)) : () => [];
}

/** The decisions the journal holds, which the restored agent sends again as each call is asked about. */
function replayedDecisions(journaled: readonly JournaledCall[]): RestoreStage {
	return (current) =>
		journaled.flatMap(({ call, decision, reason }): AgentMachineEvent[] => {
			const now = current.context.run?.batch?.calls.find((each: ToolCallEntry) => each.key === call.key);
			if (now?.status !== "awaiting-approval" || !decision) return [];
			return [decision === "approved" ? { type: "approve", toolCallId: call.key, args: call.args } : { type: "reject", toolCallId: call.key, reason: reason ?? "" }];
		});
}

/**
 * What a restored chart goes through, in order: its restored children tell it what they were
 * doing (a stream call in flight, tool calls in flight), the restored agent says it resumed and
 * acknowledges the barrier the stored run waited at; a reply that had started calls is closed
 * with them (their decisions sent again; the barrier the replay reaches waits for its events to
 * reach the listeners); then an interrupted compaction fails as interrupted, and the journal
 * answers the calls running again: with their stored outcome, or (those in flight when the run
 * was stored) as interrupted when their tool may not run again.
 */
export function restoreEvents(snapshot: AnyMachineSnapshot, emittedSinceRestore: () => number): RestoreStage[] {
	const wasCompacting = inState(snapshot, "running.compacting") || inState(snapshot, "compacting");
	const journaled = journaledCallsOfStreamingReply(snapshot);
	const stored = new Map<string, ToolOutcome>();
	for (const { call, outcome } of journaled) if (outcome) stored.set(call.key, outcome);
	// Calls in flight when the run was stored have an intent in the journal; calls the restored run
	// starts afresh have none, and run.
	const inFlight = new Set<string>((snapshot.context.run?.batch?.calls ?? []).filter((call: ToolCallEntry) => call.status === "running" && call.args !== undefined).map((call: ToolCallEntry) => call.key));
	const replay = replayedReply(journaled);
	const answered = new Set<string>();
	const answeredByJournal: RestoreStage = (current) => {
		if (current.context.run?.aborted) return [];
		return (current.context.run?.batch?.calls ?? []).flatMap((call: ToolCallEntry): AgentMachineEvent[] => {
			if (call.status !== "running" || call.args === undefined || answered.has(call.key)) return [];
			const outcome = stored.get(call.key);
			if (outcome) {
				answered.add(call.key);
				return [{ type: "tool.settled", callKey: call.key, outcome }];
			}
			if (!inFlight.has(call.key) || findTool(current.context.tools, call.toolCall.name)?.replay === "safe") return [];
			answered.add(call.key);
			return [{ type: "tool.settled", callKey: call.key, outcome: interruptedOutcome(call.toolCall.name) }];
		});
	};
	// While no event is on its way to the restored agent's listeners, it acknowledges each barrier
	// as soon as the chart reaches it.
	const acknowledgedAtOnce: RestoreStage = (current) => (awaitsDelivery(current) && emittedSinceRestore() === 0 ? [{ type: "delivered", barrier: current.context.barrier }] : []);
	return [
		(current) => (inState(current, "running.streaming") && current.context.run ? [{ type: "stream.interrupted", attempt: current.context.run.attempt }] : []),
		(current) => (current.context.run?.batch?.actorStarted ? [{ type: "tools.interrupted" }] : []),
		() => [{ type: "agentchart.resumed" }],
		// The restored agent acknowledges the barrier the stored run waited at (not one its restored
		// children's reports led to: the events before that one go to the listeners first).
		() => [{ type: "delivered", barrier: snapshot.context.barrier }],
		// The chart's way back to the model call (its restored stream reported the call interrupted) passes barriers no event waits on.
		...Array.from({ length: 3 }, () => acknowledgedAtOnce),
		replay,
		replayedDecisions(journaled),
		...Array.from({ length: 6 }, () => acknowledgedAtOnce),
		() => (wasCompacting ? [{ type: "xstate.error.actor.compaction", error: new InterruptedByRestart() } as unknown as AgentMachineEvent] : []),
		// A call answered may start another (an approved one held back, the next in a sequential
		// batch), which the journal answers in turn.
		...Array.from({ length: 3 }, () => answeredByJournal),
	];
}
