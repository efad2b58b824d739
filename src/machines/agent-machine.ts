import { and, not, or } from "xstate";
import { compactionInput } from "./actions/compaction.js";
import { streamInput } from "./actor-inputs.js";
import { agentSetup } from "./agent-setup.js";
import { assertMachineInput } from "./command-check.js";
import { type Ctx, initialContext, runOf } from "./context.js";
import { hookContext } from "./run-helpers.js";
import { requireHydrated } from "../durable/snapshot.js";

/**
 * The agent loop as a statechart.
 *
 * Top level: `idle` (waiting for a prompt), `running` (a run: turns of one LLM call plus its
 * tool calls), `compacting` (a manual compaction) and `ended` (final, after `dispose`). Inside
 * `running`, a turn goes `before-call` → `streaming` → `after-stream` → (`tool-preparing` or
 * `tool-starting` ⇄ `tool-executing`, or `tool-draining` after an abort) → `turn-ended`, which
 * decides between another turn and `run-ending`.
 *
 * The chart receives what it decides on: a reply's start, each tool call that finished
 * streaming (streaming tool execution), the reply's end, the tool calls' outcomes. Token
 * deltas go from the stream actor straight to `actor.on(...)` listeners. States whose name is
 * a decision (`run-starting`, `before-call`, `after-stream`, `tool-starting`, `turn-ended`,
 * and `tool-preparing.announcing`) decide only after the consumer has acknowledged the events so far, when `awaitDelivery` is on;
 * so does a streamed tool call (announced, then started by the acknowledgement).
 *
 * @example
 * import { createActor } from "xstate";
 * const actor = createActor(agentMachine, { input: { model, tools, config: { streamFn } } }).start();
 * actor.on("*", (event) => console.log(event.type));
 * actor.send({ type: "prompt", messages: [{ role: "user", content: "hi", timestamp: Date.now() }] });
 */
export const agentMachine = agentSetup.createMachine({
	id: "agent",
	// A chart that never comes to rest is a bug: it fails loudly instead of hanging the process.
	options: { maxIterations: 10_000 },
	context: ({ input }) => {
		assertMachineInput(input);
		return initialContext(input ?? {});
	},
	output: ({ context }) => ({ messages: context.messages }),
	initial: "idle",
	on: {
		steer: { actions: "enqueueSteering" },
		followUp: { actions: "enqueueFollowUp" },
		"queue.clear": { actions: "clearQueues" },
		"queue.mode": { actions: "setQueueMode" },
		// Read where it matters: a decision state waiting for it takes its next step (eventsDelivered).
		delivered: {},
		"delivery.await": { actions: "awaitDeliveries" },
		dispose: { target: ".ended", actions: "closeRunOnDispose" },
		// A decision no state took (its call does not wait, or its deadline passed): said, not silently dropped.
		approve: { actions: "emitApprovalIgnored" },
		reject: { actions: "emitApprovalIgnored" },
	},
	states: {
		idle: {
			description: "Waiting for a prompt. Steering and follow-up messages queue up.",
			on: {
				prompt: { target: "running", actions: ["applyRunOverrides", "startPromptRun"] },
				continue: [
					{ guard: "transcriptCanContinue", target: "running", actions: ["applyRunOverrides", "startContinueRun"] },
					{ guard: and(["transcriptEndsWithAssistant", "steeringQueued"]), target: "running", actions: ["applyRunOverrides", "startRunFromSteering"] },
					{ guard: and(["transcriptEndsWithAssistant", "followUpQueued"]), target: "running", actions: ["applyRunOverrides", "startRunFromFollowUps"] },
				],
				update: { actions: "applyRunOverrides" },
				reset: { actions: ["resetTranscript", "clearQueues"] },
				compact: { target: "compacting", actions: "startManualCompaction" },
			},
		},
		compacting: {
			description: "A manual compaction (agent.compact()), outside any run.",
			entry: "emitCompactionStart",
			invoke: {
				id: "compaction",
				src: "compactionActor",
				input: ({ context }) => compactionInput(context),
				onDone: { target: "idle", actions: ["applyCompaction", "clearRun"] },
				onError: [
					// A restart interrupted it: it is made again, so that the restored agent's listeners
					// hear its start before its end (the first start went to the listeners before the restart).
					{ guard: "compactionInterrupted", target: "compacting", reenter: true },
					{ target: "idle", actions: ["emitCompactionFailed", "clearRun"] },
				],
			},
			on: { abort: { target: "idle", actions: ["abortRun", "emitCompactionAborted", "clearRun"] } },
		},
		running: {
			description: "A run: turns of one LLM call and its tool calls, until nothing is left to do.",
			initial: "run-starting",
			// A call's approval deadline runs from when it is asked, whatever else the run does meanwhile.
			exit: "cancelApprovalTimeout",
			on: {
				// A second abort, or a listener failing after the abort, changes nothing. Streamed calls
				// whose beforeToolCall has not let them through never ran: they are answered at once.
				abort: { guard: not("runAborted"), actions: ["settleCallsBeforeTheirHook", "abortRun"] },
				// A deadline passed while sibling calls run, or the reply still streams: the call is rejected there and then.
				"approval.timeout": { actions: ["rejectExpiredApprovals", "scheduleApprovalTimeout"] },
				// A restored run waits again, for what is left of each deadline (a call asked without one gets the restored timeout, from now).
				"agentchart.resumed": { actions: ["startDeadlinesOfRestoredWaits", "scheduleApprovalTimeout"] },
				"listener.error": { guard: not("runAborted"), actions: ["settleCallsBeforeTheirHook", "recordListenerFailure"] },
				"tools.abandon": { actions: "abandonRunningCalls" },
				// Streaming mode: calls announced while somebody watches start once the listeners have them.
				delivered: { guard: and(["eventsDelivered", "hasAnnouncedCall", not(or(["runAborted", "assistantFailed"]))]), actions: "startTools" },
				// A decision on a call waiting for approval is recorded wherever the run is; the states
				// where the call can start at once (or the wait ends) say so below.
				// Not after an abort: it rejects what waits (tool-dispatching settles them as aborted), and
				// a decision then is ignored as "aborted", a reject as an approve. Nor once the reply the
				// call came in failed (streaming mode): it never runs (abortStreamingCalls answers it).
				approve: { guard: and(["isAwaitingApproval", "approvalFits", not("runAborted"), not("assistantFailed")]), actions: "approveCall" },
				reject: { guard: and(["isAwaitingApproval", not("runAborted"), not("assistantFailed")]), actions: "rejectCall" },
				// Streaming mode with beforeToolCall: the batch actor held a call back for approval.
				"tool.approval": { guard: "isRunningCall", actions: "holdCallForApproval" },
				// Restored from a snapshot taken while tools ran: they go to a new batch actor.
				"tools.interrupted": { actions: "redispatchInterruptedCalls" },
				// Streaming tool execution: the batch reports while the reply still streams.
				"tool.update": { guard: "isRunningCall", actions: "emitToolUpdate" },
				// Streaming mode with beforeToolCall: the hook let the call through, and it runs from now on.
				"tool.executing": { guard: "isRunningCall", actions: "recordExecutingCall" },
				// Its afterToolCall hook is asked now: what a give-up after an abort names.
				"tool.returned": { guard: "isRunningCall", actions: "recordToolReturned" },
				// A settled call makes room for the next one, unless the run was aborted or the reply
				// failed (a streaming reply's queued calls then never start).
				"tool.settled": [
					{ guard: and(["isRunningCall", or(["runAborted", "assistantFailed"])]), actions: "settleRunningTool" },
					{ guard: "isRunningCall", actions: ["settleRunningTool", "startTools"] },
				],
				"tool.timeout": [
					{ guard: and(["isRunningCall", or(["runAborted", "assistantFailed"])]), actions: "settleRunningTool" },
					{ guard: "isRunningCall", actions: ["settleRunningTool", "startTools"] },
				],
			},
			states: {
				"run-starting": {
					description: "Prompt delivered; takes queued steering (once) before the first call.",
					entry: ["emitRunStartCheckpoint", "emitBarrier"],
					exit: "endStartWait",
					always: [
						{ guard: and(["eventsDelivered", "runAborted"]), target: "run-ending", actions: "closeTurnAsAborted" },
						{ guard: and(["eventsDelivered", "pollsSteeringAtStart"]), target: "polling-steering-at-start" },
						{ guard: and(["eventsDelivered", "startedFromSteering"]), target: "before-call" },
						{ guard: "eventsDelivered", target: "before-call", actions: "injectInitialSteering" },
					],
				},
				"polling-steering-at-start": {
					description: "pi's loop API: asks getSteeringMessages before the first call.",
					invoke: {
						id: "steeringPoll",
						src: "queuePollActor",
						input: ({ context }) => ({ poll: context.config.getSteeringMessages ?? (async () => []), hook: "getSteeringMessages" }),
						onDone: { target: "before-call", actions: ["queueInitialSteering", "injectInitialSteering"] },
						onError: { target: "run-ending", actions: ["recordHookFailure", "closeTurnAsAborted"] },
					},
					// A poll that never answers must not outlive an abort (or a failing listener).
					always: { guard: "runAborted", target: "run-ending", actions: "closeTurnAsAborted" },
				},
				"before-call": {
					description: "About to call the model: compacts first when the context is too large.",
					entry: "emitBarrier",
					always: [
						{ guard: and(["eventsDelivered", "runAborted"]), target: "run-ending", actions: "closeTurnAsAborted" },
						{ guard: and(["eventsDelivered", "compactionNeeded"]), target: "compacting", actions: "setCompactionReason" },
						{ guard: "eventsDelivered", target: "streaming" },
					],
				},
				compacting: {
					description: "Summarising older messages to make room: before a call (threshold) or after an overflow (then the call is retried once).",
					entry: "emitCompactionStart",
					invoke: {
						id: "compaction",
						src: "compactionActor",
						input: ({ context }) => compactionInput(context),
						onDone: [
							{ guard: "compactingForOverflow", target: "before-call", actions: ["applyCompaction", "startRetryTurn"] },
							{ target: "before-call", actions: "applyCompaction" },
						],
						onError: [
							// A restart interrupted it: the decision that led to it is taken again.
							{ guard: and(["compactionInterrupted", "compactingForOverflow"]), target: "after-stream", actions: "resumeInterruptedCompaction" },
							{ guard: "compactionInterrupted", target: "before-call", actions: "resumeInterruptedCompaction" },
							{ guard: "compactingForOverflow", target: "run-ending", actions: "emitCompactionFailed" },
							{ target: "before-call", actions: "emitCompactionFailed" },
						],
					},
					on: {
						abort: [
							{ guard: "compactingForOverflow", target: "run-ending", actions: ["abortRun", "emitCompactionAborted"] },
							{ target: "run-ending", actions: ["abortRun", "emitCompactionAborted", "closeTurnAsAborted"] },
						],
					},
				},
				streaming: {
					description: "One LLM call streams its reply (the stream actor); deltas go straight to listeners.",
					entry: "startAttempt",
					invoke: {
						id: "stream",
						src: "streamActor",
						input: ({ context, self }) => streamInput(context, self),
					},
					on: {
						"stream.start": { guard: "isCurrentAttempt", actions: "beginAssistantMessage" },
						// Only when nothing takes deltas beside the chart (this machine run directly by XState).
						"stream.delta": { guard: "isCurrentAttempt", actions: "emitDelta" },
						// After an abort the provider may still close calls: they are recorded, never started.
						"stream.toolcall": [
							{ guard: and(["isCurrentAttempt", "runAborted"]), actions: "addStreamedToolCall" },
							{ guard: "isCurrentAttempt", actions: ["addStreamedToolCall", "startTools"] },
						],
						"stream.done": { guard: "isCurrentAttempt", target: "after-stream", actions: "completeAssistantMessage" },
						approve: { guard: and(["isAwaitingApproval", "approvalFits", not("runAborted")]), actions: ["approveCall", "startTools"] },
						// Restored from a snapshot taken while the call streamed: what had streamed is dropped
						// and the call is made again (the journal keeps it from being made twice once it ended).
						"stream.interrupted": [
							// Stored after its abort: the call is made again only to close the reply from the journal
							// (the calls that had started, or the reply if it had ended), asking the model nothing.
							{ guard: and(["isCurrentAttempt", "runAborted"]), target: "streaming", reenter: true, actions: "discardInterruptedReply" },
							// A machine without a journal: its batch knows the calls that started; the reply is closed with them.
							{ guard: and(["isCurrentAttempt", "startedCallsWithoutJournal"]), target: "after-stream", actions: "closeInterruptedReplyWithStartedCalls" },
							{ guard: "isCurrentAttempt", target: "before-call", actions: "discardInterruptedReply" },
						],
						"tools.interrupted": {
							description:
								"The reply is made again, its streaming tool calls with it; without a journal it is closed with the calls that started, and their batch's interruption is taken after that (the stream actor, restored first, reports first).",
						},
					},
				},
				"after-stream": {
					description: "The reply is complete: a failed reply ends the run, tool calls run, otherwise the turn ends.",
					entry: "emitBarrier",
					always: [
						{ guard: and(["eventsDelivered", "assistantFailed", "hasStreamingBatch"]), target: "tool-batch-ending", actions: "abortStreamingCalls" },
						{
							guard: and(["eventsDelivered", "assistantFailed", "overflowRecoverable", not("runAborted")]),
							target: "compacting",
							actions: ["emitTurnEndWithoutTools", "setCompactionReason"],
						},
						{ guard: and(["eventsDelivered", "assistantFailed"]), target: "run-ending", actions: "emitTurnEndWithoutTools" },
						{ guard: and(["eventsDelivered", "assistantHasToolCalls", "isStreamingToolMode"]), target: "tool-dispatching", actions: "finishStreamingBatch" },
						{ guard: and(["eventsDelivered", "assistantHasToolCalls"]), target: "tool-dispatching", actions: "createBatch" },
						{ guard: "eventsDelivered", target: "turn-ended", actions: "emitTurnEndWithoutTools" },
					],
				},
				"tool-dispatching": {
					description: "Picks the next step of the tool batch.",
					always: [
						{ guard: and(["runAborted", "noCallRunning"]), target: "tool-batch-ending", actions: "settleUnfinishedCallsAsAborted" },
						{ guard: "runAborted", target: "tool-draining" },
						{ guard: "batchTruncated", target: "tool-batch-ending", actions: "settleCallsCutOffByLength" },
						{ guard: "streamingBatchHasWork", target: "tool-executing" },
						{ guard: and(["hasStreamingBatch", "hasCallAwaitingApproval"]), target: "awaiting-approval" },
						{ guard: "hasStreamingBatch", target: "tool-batch-ending" },
						{ guard: "hasPreparedCallToRunNow", target: "tool-executing" },
						{ guard: and(["approvalHoldsBatch", "noCallRunning"]), target: "awaiting-approval" },
						{ guard: and(["hasQueuedCall", "asksBeforeToolCall"]), target: "tool-preparing" },
						{ guard: "hasQueuedCall", target: "tool-starting", actions: "prepareQueuedCalls" },
						{ guard: "hasCallAwaitingApproval", target: "awaiting-approval" },
						{ target: "tool-batch-ending" },
					],
				},
				"tool-preparing": {
					description: "With a beforeToolCall hook: one call is announced, then the hook decides whether it runs.",
					initial: "announcing",
					on: { abort: { target: "tool-dispatching", actions: "abortRun" } },
					states: {
						announcing: {
							description: "tool_execution_start is out; the hook is asked once its listeners settle.",
							entry: ["announceNextCall", "emitBarrier"],
							always: { guard: "eventsDelivered", target: "checking", actions: "preflightAnnouncedCall" },
						},
						checking: {
							description: "Validation passed; beforeToolCall is asked (the batch actor).",
							always: { guard: "noCallPreparing", target: "#agent.running.tool-dispatching" },
							on: {
								"tool.prepared": { guard: "isPreparingCall", target: "#agent.running.tool-dispatching", actions: "recordPreparedCall" },
								"tool.settled": { guard: "isPreparingCall", target: "#agent.running.tool-dispatching", actions: "settleRefusedCall" },
							},
						},
					},
				},
				"tool-starting": {
					description: "Calls announced (tool_execution_start) and preflighted without a beforeToolCall hook; they run once listeners have taken the announcements.",
					entry: "emitBarrier",
					always: [
						{ guard: and(["eventsDelivered", "runAborted"]), target: "tool-dispatching" },
						{ guard: "eventsDelivered", target: "tool-executing" },
					],
				},
				"tool-executing": {
					description: "The batch actor runs calls; outcomes are recorded as they settle.",
					entry: "startTools",
					// A call announced while somebody watches is on its way too (the delivery starts it), unless the run was aborted.
					always: { guard: and(["noCallRunning", or(["runAborted", not(and(["awaitsDelivery", "hasAnnouncedCall"]))])]), target: "tool-dispatching" },
					on: { approve: { guard: and(["isAwaitingApproval", "approvalFits", not("runAborted")]), actions: ["approveCall", "startTools"] } },
				},
				"awaiting-approval": {
					description: "Tool calls wait for a person's decision (approve or reject); nothing else runs. The run can be stored and the process may exit.",
					entry: "emitApprovalCheckpoint",
					on: {
						approve: { guard: and(["isAwaitingApproval", "approvalFits"]), target: "tool-dispatching", actions: "approveCall" },
						reject: { guard: "isAwaitingApproval", target: "tool-dispatching", actions: "rejectCall" },
						"approval.timeout": { target: "tool-dispatching", actions: ["rejectExpiredApprovals", "scheduleApprovalTimeout"] },
					},
					// Aborted while calls wait: they are rejected as aborted (tool-dispatching settles them).
					always: { guard: "runAborted", target: "tool-dispatching" },
				},
				"tool-draining": {
					description: "Aborted with calls still running: nothing new starts; the running calls see the signal and settle (or are given up on).",
					always: { guard: "noCallRunning", target: "tool-dispatching" },
				},
				"tool-batch-ending": {
					description: "Tool result messages in source order, then turn_end.",
					entry: "endToolBatch",
					always: [{ guard: "assistantFailed", target: "run-ending" }, { target: "turn-ended" }],
				},
				"turn-ended": {
					description: "Decides: another turn (a resume after the output limit, tool results, steering, follow-ups) or the end of the run.",
					entry: ["emitTurnEndCheckpoint", "emitBarrier"],
					always: [
						{ guard: and(["eventsDelivered", "runAborted"]), target: "run-ending" },
						{ guard: and(["eventsDelivered", "asksWhetherToStop"]), target: "asking-whether-to-stop" },
						{ guard: and(["eventsDelivered", "stopRequested"]), target: "run-ending" },
						{ guard: and(["eventsDelivered", "stoppedAtOutputLimit", "outputLimitRecoveryLeft"]), target: "before-call", actions: "startOutputLimitRecoveryTurn" },
						{ guard: and(["eventsDelivered", "pollsSteering"]), target: "polling-steering" },
						{ guard: and(["eventsDelivered", or(["toolsWantAnotherCall", "steeringQueued"])]), target: "before-call", actions: "startNextTurnWithSteering" },
						{ guard: and(["eventsDelivered", "pollsFollowUps"]), target: "polling-follow-ups" },
						{ guard: and(["eventsDelivered", "followUpQueued"]), target: "before-call", actions: "startNextTurnWithFollowUps" },
						{ guard: "eventsDelivered", target: "run-ending" },
					],
				},
				"asking-whether-to-stop": {
					description: "pi's loop API: asks shouldStopAfterTurn; stopping leaves queued messages queued.",
					invoke: {
						id: "stopCheck",
						src: "stopCheckActor",
						input: ({ context }) => stopCheckInput(context),
						onDone: { target: "turn-ended", actions: "recordStopDecision" },
						onError: { target: "run-ending", actions: "recordHookFailure" },
					},
					always: { guard: "runAborted", target: "run-ending" },
				},
				"polling-steering": {
					description: "pi's loop API: asks getSteeringMessages after the turn.",
					invoke: {
						id: "steeringPoll",
						src: "queuePollActor",
						input: ({ context }) => ({ poll: context.config.getSteeringMessages ?? (async () => []), hook: "getSteeringMessages" }),
						onDone: { target: "turn-ended", actions: "queuePolledSteering" },
						onError: { target: "run-ending", actions: "recordHookFailure" },
					},
					always: { guard: "runAborted", target: "run-ending" },
				},
				"polling-follow-ups": {
					description: "pi's loop API: asks getFollowUpMessages when the run would otherwise end.",
					invoke: {
						id: "followUpPoll",
						src: "queuePollActor",
						input: ({ context }) => ({ poll: context.config.getFollowUpMessages ?? (async () => []), hook: "getFollowUpMessages" }),
						onDone: { target: "turn-ended", actions: "queuePolledFollowUps" },
						onError: { target: "run-ending", actions: "recordHookFailure" },
					},
					always: { guard: "runAborted", target: "run-ending" },
				},
				"run-ending": {
					description: "agent_end, then idle.",
					entry: ["emitAgentEnd", "emitRunEndCheckpoint"],
					always: { target: "#agent.idle", actions: "clearRun" },
				},
			},
		},
		ended: {
			description: "Disposed. Every child actor has stopped.",
			type: "final",
		},
	},
});

// A persisted snapshot keeps no functions: one restored without them is refused as it starts,
// naming the cure, rather than failing at its next step (see requireHydrated). At start, not at
// restore: XState starts only the children of a restored parent that are active, so a child
// whose restore threw would stay silent, while a start that throws fails the actor and reaches
// the parent's `onError`. A machine made with `provide` keeps the check.
function checkedAtStart(machine: typeof agentMachine): typeof agentMachine {
	const start = machine.start.bind(machine);
	machine.start = (snapshot) => start(requireHydrated(snapshot));
	const provide = machine.provide.bind(machine);
	machine.provide = (implementations) => checkedAtStart(provide(implementations));
	return machine;
}
checkedAtStart(agentMachine);

/** What `shouldStopAfterTurn` is asked with. */
function stopCheckInput(context: Ctx) {
	const run = runOf(context);
	const check = context.config.shouldStopAfterTurn ?? (() => false);
	const message = run.batch?.assistant ?? run.assistant;
	if (!message) throw new Error("agentchart: a turn ended without a reply (machine invariant broken)");
	return { check, turn: { message, toolResults: run.toolResults, context: hookContext(context), newMessages: run.newMessages } };
}
