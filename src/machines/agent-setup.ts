/**
 * The agent chart's vocabulary: its types, the actors it invokes, and the implementations of
 * the named guards and actions its transitions refer to. `agent-machine.ts` is the chart
 * itself (states and transitions); the bodies of the actions live in `actions/*` by concern,
 * the guards in `guards.ts`. Action bodies only enqueue (context patches, emitted events,
 * effects on children), so the chart stays a pure description of control flow.
 */
import { assign, enqueueActions, setup } from "xstate";
import { compactionActor } from "../actors/compaction-actor.js";
import type { CompactionOutput } from "../actors/compaction-protocol.js";
import { queuePollActor, stopCheckActor } from "../actors/loop-hooks-actors.js";
import { streamActor } from "../actors/stream-actor.js";
import { toolBatchActor } from "../actors/tool-batch-actor.js";
import { ABORTED_BEFORE_RUN, errorResult, timedOutText } from "../tools/preflight.js";
import type { AgentMessage } from "../types/messages.js";
import * as approvals from "./actions/approvals.js";
import * as compaction from "./actions/compaction.js";
import { closeRunAbruptly } from "./actions/close-run.js";
import * as runs from "./actions/run.js";
import * as streaming from "./actions/streaming.js";
import * as tools from "./actions/tools.js";
import { assertCommand } from "./command-check.js";
import { applyOverrides, callByKey, checkpoint, emitBarrierNow, patchRun, runOf } from "./context.js";
import { agentGuards } from "./guards.js";
import type { AgentMachineContext, AgentMachineEmitted, AgentMachineEvent, AgentMachineInput, AgentMachineOutput } from "./types.js";


/**
 * `setup()` of the agent chart: `agentSetup.createMachine(...)` in `agent-machine.ts` builds
 * the chart from these names.
 *
 * @example
 * import { agentSetup } from "./agent-setup.js";
 * const machine = agentSetup.createMachine({ initial: "idle", states: { idle: {} } });
 */
export const agentSetup = setup({
	types: {
		context: {} as AgentMachineContext,
		events: {} as AgentMachineEvent,
		// Every field is optional, so is the input: `createActor(agentMachine)`, and a restore from a snapshot, need none.
		input: {} as AgentMachineInput | undefined,
		emitted: {} as AgentMachineEmitted,
		output: {} as AgentMachineOutput,
	},
	actors: { streamActor, toolBatchActor, compactionActor, queuePollActor, stopCheckActor },
	guards: agentGuards,
	actions: {
		applyRunOverrides: assign(({ context, event }) => {
			if (event.type !== "prompt" && event.type !== "continue" && event.type !== "update") return {};
			assertCommand(event);
			return applyOverrides(context, event);
		}),
		awaitDeliveries: assign({ awaitDelivery: true }),
		// A run that waited only at its start decides without waiting from here on.
		endStartWait: assign(({ context }) => (context.awaitDelivery === "start" ? { awaitDelivery: false } : {})),
		emitBarrier: enqueueActions(({ context, enqueue, check }) => {
			if (check("awaitsDelivery")) emitBarrierNow(context, enqueue);
		}),

		// Queues
		enqueueSteering: assign(({ context, event }) => {
			if (event.type !== "steer") return {};
			assertCommand(event);
			return { steeringQueue: [...context.steeringQueue, event.message], commandSeq: event.seq ?? context.commandSeq };
		}),
		enqueueFollowUp: assign(({ context, event }) => {
			if (event.type !== "followUp") return {};
			assertCommand(event);
			return { followUpQueue: [...context.followUpQueue, event.message], commandSeq: event.seq ?? context.commandSeq };
		}),
		clearQueues: assign(({ context, event }) => {
			if (event.type === "reset") return { steeringQueue: [], followUpQueue: [] };
			if (event.type !== "queue.clear") return {};
			assertCommand(event);
			const commandSeq = event.seq ?? context.commandSeq;
			if (event.queue === "all") return { steeringQueue: [], followUpQueue: [], commandSeq };
			return event.queue === "steering" ? { steeringQueue: [], commandSeq } : { followUpQueue: [], commandSeq };
		}),
		setQueueMode: assign(({ context, event }) => {
			if (event.type !== "queue.mode") return {};
			assertCommand(event);
			const commandSeq = event.seq ?? context.commandSeq;
			return event.queue === "steering" ? { steeringMode: event.mode, commandSeq } : { followUpMode: event.mode, commandSeq };
		}),
		resetTranscript: assign({ messages: () => [] }),
		// The poll at the start belongs to no turn: the first turn still polls when it ends.
		queueInitialSteering: assign(({ context, event }) => ({
			steeringQueue: [...context.steeringQueue, ...((event as { output?: AgentMessage[] }).output ?? [])],
		})),
		queuePolledSteering: assign(({ context, event }) => ({
			steeringQueue: [...context.steeringQueue, ...((event as { output?: AgentMessage[] }).output ?? [])],
			run: patchRun(runOf(context), { steeringPolled: true }),
		})),
		queuePolledFollowUps: assign(({ context, event }) => ({
			followUpQueue: [...context.followUpQueue, ...((event as { output?: AgentMessage[] }).output ?? [])],
			run: patchRun(runOf(context), { followUpsPolled: true }),
		})),
		recordStopDecision: assign(({ context, event }) => ({ run: patchRun(runOf(context), { stopAsked: true, stopRequested: (event as { output?: boolean }).output === true }) })),
		recordHookFailure: assign(({ context, event }) => {
			const run = runOf(context);
			run.controller.abort();
			const error = (event as { error?: unknown }).error;
			return { run: patchRun(run, { aborted: true, failure: error instanceof Error ? error.message : String(error) }) };
		}),

		// Run lifecycle
		startPromptRun: enqueueActions(({ context, event, enqueue }) => {
			if (event.type === "prompt") runs.startRun(context, event.messages, false, enqueue);
		}),
		startContinueRun: enqueueActions(({ context, enqueue }) => runs.startRun(context, [], false, enqueue)),
		startRunFromSteering: enqueueActions(({ context, enqueue }) => runs.startRun(context, runs.takeQueued(context, "steering", enqueue), true, enqueue)),
		startRunFromFollowUps: enqueueActions(({ context, enqueue }) => runs.startRun(context, runs.takeQueued(context, "followUp", enqueue), false, enqueue)),
		injectInitialSteering: enqueueActions(({ context, enqueue }) => {
			const taken = runs.takeQueued(context, "steering", enqueue);
			if (taken.length > 0) runs.injectMessages(context, taken, enqueue);
		}),
		startNextTurnWithSteering: enqueueActions(({ context, enqueue }) => runs.startNextTurn(context, runs.takeQueued(context, "steering", enqueue), enqueue)),
		startNextTurnWithFollowUps: enqueueActions(({ context, enqueue }) => runs.startNextTurn(context, runs.takeQueued(context, "followUp", enqueue), enqueue)),
		startOutputLimitRecoveryTurn: enqueueActions(({ context, enqueue }) => runs.startOutputLimitRecoveryTurn(context, enqueue)),
		// The chart calls these only on a run not aborted yet (the runAborted guard).
		abortRun: enqueueActions(({ context, enqueue }) => runs.abortRun(context, undefined, enqueue)),
		recordListenerFailure: enqueueActions(({ context, event, enqueue }) => runs.abortRun(context, event.type === "listener.error" ? event.error : undefined, enqueue)),
		closeTurnAsAborted: enqueueActions(({ context, enqueue }) => runs.closeTurnAsAborted(context, enqueue)),
		emitAgentEnd: enqueueActions(({ context, enqueue }) => enqueue.emit({ type: "agent_end", messages: runOf(context).newMessages })),
		clearRun: enqueueActions(({ context, enqueue }) => runs.clearRun(context, enqueue)),
		closeRunOnDispose: enqueueActions(({ context, enqueue }) => {
			if (context.run?.abandonScheduled) enqueue.cancel(runs.ABANDON_TOOLS_ID);
			if (context.run) closeRunAbruptly(context, "Agent was disposed", enqueue);
		}),

		// Streaming
		startAttempt: enqueueActions(({ context, enqueue }) => streaming.startAttempt(context, enqueue)),
		beginAssistantMessage: enqueueActions(({ context, event, enqueue }) => {
			if (event.type === "stream.start") streaming.beginAssistantMessage(context, event.partial, event.replayed === true, enqueue);
		}),
		emitDelta: enqueueActions(({ event, enqueue }) => {
			if (event.type === "stream.delta") enqueue.emit(event.update);
		}),
		completeAssistantMessage: enqueueActions(({ context, event, enqueue }) => {
			if (event.type === "stream.done") streaming.completeAssistantMessage(context, event.message, event.replayed === true, enqueue);
		}),
		emitTurnEndWithoutTools: enqueueActions(({ context, enqueue }) => streaming.emitTurnEndWithoutTools(context, enqueue)),
		discardInterruptedReply: enqueueActions(({ context, enqueue }) => streaming.discardInterruptedReply(context, enqueue)),
		closeInterruptedReplyWithStartedCalls: enqueueActions(({ context, enqueue }) => streaming.closeInterruptedReplyWithStartedCalls(context, enqueue)),
		redispatchInterruptedCalls: enqueueActions(({ context, enqueue }) => tools.redispatchInterruptedCalls(context, enqueue)),
		resumeInterruptedCompaction: enqueueActions(({ context, enqueue }) => compaction.resumeInterruptedCompaction(context, enqueue)),

		// Tools
		createBatch: enqueueActions(({ context, enqueue }) => {
			const run = runOf(context);
			if (run.assistant) enqueue.assign({ run: patchRun(run, { batch: tools.createBatchFor(context, run.assistant) }) });
		}),
		prepareQueuedCalls: enqueueActions(({ context, enqueue }) => tools.prepareQueuedCalls(context, enqueue)),
		announceNextCall: enqueueActions(({ context, enqueue }) => tools.announceNextCall(context, enqueue)),
		preflightAnnouncedCall: enqueueActions(({ context, enqueue }) => tools.preflightAnnouncedCall(context, enqueue)),
		recordPreparedCall: enqueueActions(({ context, event, enqueue }) => {
			if (event.type === "tool.prepared") tools.recordPreparedCall(context, event.callKey, event.args, event.approval, enqueue);
		}),
		holdCallForApproval: enqueueActions(({ context, event, enqueue }) => {
			if (event.type === "tool.approval") tools.holdCallForApproval(context, event.callKey, event.args, event.approval, enqueue);
		}),

		// Approvals
		approveCall: enqueueActions(({ context, event, enqueue }) => {
			if (event.type !== "approve") return;
			assertCommand(event);
			tools.approveCall(context, event.toolCallId, event.args, enqueue);
		}),
		rejectCall: enqueueActions(({ context, event, enqueue }) => {
			if (event.type !== "reject") return;
			assertCommand(event);
			const call = tools.awaitingCall(context, event.toolCallId);
			if (call) tools.rejectCall(context, call, "rejected", event.reason, enqueue);
		}),
		// A machine run without the Agent has nobody to throw to: it says why it took no decision.
		emitApprovalIgnored: enqueueActions(({ context, event, enqueue }) => {
			if (event.type === "approve" || event.type === "reject") enqueue.emit(approvals.ignoredDecision(context, event));
		}),
		startDeadlinesOfRestoredWaits: enqueueActions(({ context, enqueue }) => approvals.startDeadlinesOfRestoredWaits(context, enqueue)),
		rejectExpiredApprovals: enqueueActions(({ context, enqueue }) => tools.rejectAllApprovals(context, "timed-out", Date.now(), enqueue)),
		// The chart keeps each wait's deadline in its context: a restored run waits only what is left.
		scheduleApprovalTimeout: enqueueActions(({ context, enqueue }) => tools.scheduleApprovalTimeout(context, undefined, enqueue)),
		// Without an approval timeout no timer was set: a run's end then asks nothing of the clock.
		cancelApprovalTimeout: enqueueActions(({ context, enqueue }) => {
			if ((context.config.approvalTimeoutMs ?? 0) > 0) enqueue.cancel(tools.APPROVAL_TIMEOUT_ID);
		}),
		emitRunStartCheckpoint: enqueueActions(({ enqueue, check }) => {
			if (check("savesCheckpoints")) enqueue.emit(checkpoint("run-start"));
		}),
		emitTurnEndCheckpoint: enqueueActions(({ context, enqueue, check }) => {
			if (!check("turnOutgrewJournal")) return;
			if (check("savesCheckpoints")) enqueue.emit(checkpoint("turn-end"));
			if (context.run?.compactedSinceCheckpoint) enqueue.assign({ run: patchRun(context.run, { compactedSinceCheckpoint: false }) });
		}),
		emitApprovalCheckpoint: enqueueActions(({ enqueue, check }) => {
			if (check("savesCheckpoints")) enqueue.emit(checkpoint("approval"));
		}),
		emitRunEndCheckpoint: enqueueActions(({ enqueue, check }) => {
			if (check("savesCheckpoints")) enqueue.emit(checkpoint("run-end"));
		}),
		settleRefusedCall: enqueueActions(({ context, event, enqueue }) => {
			if (event.type !== "tool.settled") return;
			const call = callByKey(context, event.callKey);
			if (call) tools.settleCall(context, call, event.outcome, enqueue);
		}),
		settleUnfinishedCallsAsAborted: enqueueActions(({ context, enqueue }) => {
			tools.settleCallsOfAbortedRun(context, ABORTED_BEFORE_RUN, ["queued", "announced", "preparing", "prepared", "awaiting-approval"], enqueue);
		}),
		settleCallsCutOffByLength: enqueueActions(({ context, enqueue }) => tools.settleCallsCutOffByLength(context, enqueue)),
		startTools: enqueueActions(({ context, enqueue, check }) => tools.startTools(context, enqueue, check)),
		emitToolUpdate: enqueueActions(({ context, event, enqueue }) => {
			if (event.type !== "tool.update") return;
			// The guard let only a running call's update through: the call is there.
			const call = callByKey(context, event.callKey);
			if (call) enqueue.emit({ type: "tool_execution_update", toolCallId: call.toolCall.id, toolName: call.toolCall.name, args: call.toolCall.arguments, partialResult: event.partialResult });
		}),
		settleRunningTool: enqueueActions(({ context, event, enqueue }) => {
			if (event.type === "tool.settled") tools.settleRunningTool(context, event.callKey, event.outcome, false, enqueue, event.journaled === true);
			if (event.type === "tool.timeout") {
				const name = callByKey(context, event.callKey)?.toolCall.name ?? "";
				tools.settleRunningTool(context, event.callKey, errorResult(timedOutText(name, event.timeoutMs)), true, enqueue);
			}
		}),
		recordExecutingCall: enqueueActions(({ context, event, enqueue }) => {
			if (event.type === "tool.executing") tools.recordExecutingCall(context, event.callKey, event.args, enqueue);
		}),
		settleCallsBeforeTheirHook: enqueueActions(({ context, enqueue }) => tools.settleCallsBeforeTheirHook(context, enqueue)),
		recordToolReturned: enqueueActions(({ context, event, enqueue }) => {
			if (event.type === "tool.returned") tools.recordToolReturned(context, event.callKey, enqueue);
		}),
		abandonRunningCalls: enqueueActions(({ context, enqueue }) => tools.abandonRunningCalls(context, enqueue)),
		addStreamedToolCall: enqueueActions(({ context, event, enqueue }) => {
			if (event.type === "stream.toolcall") tools.addStreamedToolCall(context, event.toolCall, event.partial, enqueue);
		}),
		finishStreamingBatch: enqueueActions(({ context, enqueue }) => tools.finishStreamingBatch(context, enqueue)),
		abortStreamingCalls: enqueueActions(({ context, enqueue }) => tools.abortStreamingCalls(context, enqueue)),
		endToolBatch: enqueueActions(({ context, enqueue }) => tools.endToolBatch(context, enqueue)),

		// Compaction
		startManualCompaction: enqueueActions(({ context, event, enqueue }) => compaction.startManualCompaction(context, event.type === "compact" ? event.instructions : undefined, enqueue)),
		setCompactionReason: enqueueActions(({ context, enqueue }) => compaction.setCompactionReason(context, enqueue)),
		emitCompactionStart: enqueueActions(({ context, enqueue }) => compaction.emitCompactionStart(context, enqueue)),
		applyCompaction: enqueueActions(({ context, event, enqueue }) => compaction.applyCompaction(context, (event as { output?: CompactionOutput }).output, enqueue)),
		emitCompactionFailed: enqueueActions(({ context, event, enqueue }) => compaction.emitCompactionFailed(context, (event as { error?: unknown }).error, enqueue)),
		emitCompactionAborted: enqueueActions(({ context, enqueue }) => compaction.emitCompactionAborted(context, enqueue)),
		startRetryTurn: enqueueActions(({ context, enqueue }) => compaction.startRetryTurn(context, enqueue)),
	},
});

