import { and, assign, enqueueActions, not, or, setup } from "xstate";
import { compactionActor } from "../actors/compaction-actor.js";
import type { CompactionOutput } from "../actors/compaction-protocol.js";
import { queuePollActor, stopCheckActor } from "../actors/loop-hooks-actors.js";
import { streamActor } from "../actors/stream-actor.js";
import { toolBatchActor } from "../actors/tool-batch-actor.js";
import { errorResult } from "../tools/preflight.js";
import type { AgentMessage } from "../types/messages.js";
import * as compaction from "./actions/compaction.js";
import { closeRunAbruptly } from "./actions/close-run.js";
import * as runs from "./actions/run.js";
import * as streaming from "./actions/streaming.js";
import * as tools from "./actions/tools.js";
import { type Ctx, applyOverrides, runOf } from "./context.js";
import { defaultLoopConfig, defaultModel } from "./defaults.js";
import { agentGuards } from "./guards.js";
import { emitterOf } from "./relay.js";
import { hookContext, streamOptionsFor } from "./run-helpers.js";
import type { AgentMachineContext, AgentMachineEmitted, AgentMachineEvent, AgentMachineInput, AgentMachineOutput } from "./types.js";

/** The id of the delayed `tools.abandon` of the current run, so it can be cancelled when the run ends. */
const ABANDON_TOOLS_ID = "tools.abandon";

/**
 * The agent loop as a statechart.
 *
 * Top level: `idle` (waiting for a prompt), `running` (a run: turns of one LLM call plus its
 * tool calls), `compacting` (a manual compaction) and `ended` (final, after `dispose`). Inside
 * `running`, a turn goes `before-call` → `streaming` → `after-stream` → (`tool-preparing` ⇄
 * `tool-executing`) → `turn-ended`, which decides between another turn and `run-ending`.
 *
 * The chart receives what it decides on: a reply's start, each tool call that finished
 * streaming (streaming tool execution), the reply's end, the tool calls' outcomes. Token
 * deltas go from the stream actor straight to `actor.on(...)` listeners. States whose name is
 * a decision (`run-starting`, `before-call`, `after-stream`, `turn-ended`) decide only after
 * the consumer has acknowledged the events so far, when `awaitDelivery` is on.
 *
 * @example
 * import { createActor } from "xstate";
 * const actor = createActor(agentMachine, { input: { model, tools, config: { streamFn } } }).start();
 * actor.on("*", (event) => console.log(event.type));
 * actor.send({ type: "prompt", messages: [{ role: "user", content: "hi", timestamp: Date.now() }] });
 */
export const agentMachine = setup({
	types: {
		context: {} as AgentMachineContext,
		events: {} as AgentMachineEvent,
		input: {} as AgentMachineInput,
		emitted: {} as AgentMachineEmitted,
		output: {} as AgentMachineOutput,
	},
	actors: { streamActor, toolBatchActor, compactionActor, queuePollActor, stopCheckActor },
	guards: agentGuards,
	actions: {
		applyRunOverrides: assign(({ context, event }) =>
			event.type === "prompt" || event.type === "continue" || event.type === "update" ? applyOverrides(context, event) : {},
		),
		emitBarrier: enqueueActions(({ context, enqueue }) => {
			if (!context.awaitDelivery) return;
			const barrier = context.barrier + 1;
			enqueue.assign({ barrier });
			enqueue.emit({ type: "agentchart.barrier", barrier });
		}),
		recordDelivery: assign(({ context, event }) => (event.type === "delivered" ? { deliveredBarrier: Math.max(context.deliveredBarrier, event.barrier) } : {})),

		// Queues
		enqueueSteering: assign(({ context, event }) => (event.type === "steer" ? { steeringQueue: [...context.steeringQueue, event.message] } : {})),
		enqueueFollowUp: assign(({ context, event }) => (event.type === "followUp" ? { followUpQueue: [...context.followUpQueue, event.message] } : {})),
		clearQueues: assign(({ event }) => {
			if (event.type === "reset" || (event.type === "queue.clear" && event.queue === "all")) return { steeringQueue: [], followUpQueue: [] };
			if (event.type !== "queue.clear") return {};
			return event.queue === "steering" ? { steeringQueue: [] } : { followUpQueue: [] };
		}),
		setQueueMode: assign(({ event }) => {
			if (event.type !== "queue.mode") return {};
			return event.queue === "steering" ? { steeringMode: event.mode } : { followUpMode: event.mode };
		}),
		resetTranscript: assign({ messages: () => [] }),
		// The poll at the start belongs to no turn: the first turn still polls when it ends.
		queueInitialSteering: assign(({ context, event }) => ({
			steeringQueue: [...context.steeringQueue, ...((event as { output?: AgentMessage[] }).output ?? [])],
		})),
		queuePolledSteering: assign(({ context, event }) => ({
			steeringQueue: [...context.steeringQueue, ...((event as { output?: AgentMessage[] }).output ?? [])],
			run: { ...runOf(context), steeringPolled: true },
		})),
		queuePolledFollowUps: assign(({ context, event }) => ({
			followUpQueue: [...context.followUpQueue, ...((event as { output?: AgentMessage[] }).output ?? [])],
			run: { ...runOf(context), followUpsPolled: true },
		})),
		recordStopDecision: assign(({ context, event }) => ({ run: { ...runOf(context), stopAsked: true, stopRequested: (event as { output?: boolean }).output === true } })),
		recordHookFailure: assign(({ context, event }) => {
			const run = runOf(context);
			run.controller.abort();
			const error = (event as { error?: unknown }).error;
			return { run: { ...run, aborted: true, failure: error instanceof Error ? error.message : String(error) } };
		}),

		// Run lifecycle
		startPromptRun: enqueueActions(({ context, event, enqueue }) => {
			if (event.type === "prompt") runs.startRun(context, event.messages, false, enqueue);
		}),
		startContinueRun: enqueueActions(({ context, enqueue }) => runs.startRun(context, [], false, enqueue)),
		startRunFromSteering: enqueueActions(({ context, enqueue }) => runs.startRun(context, runs.takeQueued(context, "steering", enqueue), true, enqueue)),
		startRunFromFollowUps: enqueueActions(({ context, enqueue }) => runs.startRun(context, runs.takeQueued(context, "followUp", enqueue), false, enqueue)),
		injectInitialSteering: enqueueActions(({ context, enqueue }) => {
			if (runOf(context).skipInitialSteeringPoll) return;
			const taken = runs.takeQueued(context, "steering", enqueue);
			if (taken.length > 0) runs.injectMessages(context, taken, enqueue);
		}),
		startNextTurnWithSteering: enqueueActions(({ context, enqueue }) => runs.startNextTurn(context, runs.takeQueued(context, "steering", enqueue), enqueue)),
		startNextTurnWithFollowUps: enqueueActions(({ context, enqueue }) => runs.startNextTurn(context, runs.takeQueued(context, "followUp", enqueue), enqueue)),
		startOutputLimitRecoveryTurn: enqueueActions(({ context, enqueue }) => runs.startOutputLimitRecoveryTurn(context, enqueue)),
		abortRun: enqueueActions(({ context, enqueue }) => {
			const run = context.run;
			if (!run || run.aborted) return;
			run.controller.abort();
			enqueue.assign({ run: { ...run, aborted: true } });
			// Tools that ignore the abort are given up on after a grace period (tools.abandon).
			const grace = context.config.toolAbortGraceMs;
			if (grace > 0 && run.batch?.calls.some((call) => call.status === "running")) {
				enqueue.raise({ type: "tools.abandon" }, { delay: grace, id: ABANDON_TOOLS_ID });
			}
		}),
		recordListenerFailure: enqueueActions(({ context, event, enqueue }) => {
			const run = context.run;
			if (!run || event.type !== "listener.error" || run.aborted) return;
			run.controller.abort();
			enqueue.assign({ run: { ...run, aborted: true, failure: event.error } });
			const grace = context.config.toolAbortGraceMs;
			if (grace > 0 && run.batch?.calls.some((call) => call.status === "running")) {
				enqueue.raise({ type: "tools.abandon" }, { delay: grace, id: ABANDON_TOOLS_ID });
			}
		}),
		closeTurnAsAborted: enqueueActions(({ context, enqueue }) => runs.closeTurnAsAborted(context, enqueue)),
		emitAgentEnd: enqueueActions(({ context, enqueue }) => enqueue.emit({ type: "agent_end", messages: runOf(context).newMessages })),
		clearRun: enqueueActions(({ enqueue }) => {
			enqueue.cancel(ABANDON_TOOLS_ID);
			enqueue.assign({ run: undefined });
		}),
		closeRunOnDispose: enqueueActions(({ context, enqueue }) => {
			enqueue.cancel(ABANDON_TOOLS_ID);
			if (context.run) closeRunAbruptly(context, "Agent was disposed", enqueue);
		}),

		// Streaming
		startAttempt: enqueueActions(({ context, enqueue }) => streaming.startAttempt(context, enqueue)),
		beginAssistantMessage: enqueueActions(({ context, event, enqueue }) => {
			if (event.type === "stream.start") streaming.beginAssistantMessage(context, event.partial, enqueue);
		}),
		completeAssistantMessage: enqueueActions(({ context, event, enqueue }) => {
			if (event.type === "stream.done") streaming.completeAssistantMessage(context, event.message, enqueue);
		}),
		emitTurnEndWithoutTools: enqueueActions(({ context, enqueue }) => streaming.emitTurnEndWithoutTools(context, enqueue)),

		// Tools
		createBatch: enqueueActions(({ context, enqueue }) => {
			const run = runOf(context);
			if (run.assistant) enqueue.assign({ run: { ...run, batch: tools.createBatchFor(context, run.assistant) } });
		}),
		prepareQueuedCalls: enqueueActions(({ context, enqueue }) => tools.prepareQueuedCalls(context, enqueue)),
		announceNextCall: enqueueActions(({ context, enqueue }) => tools.announceNextCall(context, enqueue)),
		preflightAnnouncedCall: enqueueActions(({ context, enqueue }) => tools.preflightAnnouncedCall(context, enqueue)),
		recordPreparedCall: enqueueActions(({ context, event, enqueue }) => {
			if (event.type === "tool.prepared") tools.recordPreparedCall(context, event.toolCallId, event.args, enqueue);
		}),
		settleRefusedCall: enqueueActions(({ context, event, enqueue }) => {
			if (event.type !== "tool.settled") return;
			const call = context.run?.batch?.calls.find((entry) => entry.toolCall.id === event.toolCallId);
			if (call) tools.settleCall(context, call, event.outcome, enqueue);
		}),
		settleUnfinishedCallsAsAborted: enqueueActions(({ context, enqueue }) => {
			tools.settleOpenCalls(context, tools.ABORTED_BEFORE_RUN, ["queued", "preparing", "prepared"], enqueue);
		}),
		settleCallsCutOffByLength: enqueueActions(({ context, enqueue }) => tools.settleCallsCutOffByLength(context, enqueue)),
		startTools: enqueueActions(({ context, enqueue }) => tools.startTools(context, enqueue)),
		emitToolUpdate: enqueueActions(({ context, event, enqueue }) => {
			if (event.type !== "tool.update") return;
			const call = context.run?.batch?.calls.find((entry) => entry.toolCall.id === event.toolCallId);
			enqueue.emit({ type: "tool_execution_update", toolCallId: event.toolCallId, toolName: call?.toolCall.name ?? "", args: call?.toolCall.arguments, partialResult: event.partialResult });
		}),
		settleRunningTool: enqueueActions(({ context, event, enqueue }) => {
			if (event.type === "tool.settled") tools.settleRunningTool(context, event.toolCallId, event.outcome, false, enqueue);
			if (event.type === "tool.timeout") {
				const name = context.run?.batch?.calls.find((entry) => entry.toolCall.id === event.toolCallId)?.toolCall.name ?? "";
				tools.settleRunningTool(context, event.toolCallId, errorResult(`Tool "${name}" timed out after ${event.timeoutMs} ms`), true, enqueue);
			}
		}),
		abandonRunningCalls: enqueueActions(({ context, enqueue }) => tools.abandonRunningCalls(context, enqueue)),
		addStreamedToolCall: enqueueActions(({ context, event, enqueue }) => {
			if (event.type === "stream.toolcall") tools.addStreamedToolCall(context, event.toolCall, event.partial, enqueue);
		}),
		finishStreamingBatch: enqueueActions(({ context, enqueue }) => tools.finishStreamingBatch(context, enqueue)),
		abortStreamingCalls: enqueueActions(({ context, enqueue }) => tools.abortStreamingCalls(context, enqueue)),
		endToolBatch: enqueueActions(({ context, enqueue }) => tools.endToolBatch(context, enqueue)),

		// Compaction
		startManualCompaction: enqueueActions(({ event, enqueue }) => compaction.startManualCompaction(event.type === "compact" ? event.instructions : undefined, enqueue)),
		setCompactionReason: enqueueActions(({ context, enqueue }) => compaction.setCompactionReason(context, enqueue)),
		emitCompactionStart: enqueueActions(({ context, enqueue }) => compaction.emitCompactionStart(context, enqueue)),
		applyCompaction: enqueueActions(({ context, event, enqueue }) => compaction.applyCompaction(context, (event as { output?: CompactionOutput }).output, enqueue)),
		emitCompactionFailed: enqueueActions(({ context, event, enqueue }) => compaction.emitCompactionFailed(context, (event as { error?: unknown }).error, enqueue)),
		emitCompactionAborted: enqueueActions(({ context, enqueue }) => compaction.emitCompactionAborted(context, enqueue)),
		startRetryTurn: enqueueActions(({ context, enqueue }) => compaction.startRetryTurn(context, enqueue)),
	},
}).createMachine({
	id: "agent",
	context: ({ input }) => ({
		systemPrompt: input.systemPrompt ?? "",
		model: input.model ?? defaultModel(),
		thinkingLevel: input.thinkingLevel ?? "off",
		tools: input.tools ?? [],
		messages: input.messages ?? [],
		config: { ...defaultLoopConfig(), ...input.config },
		steeringQueue: input.steeringQueue ?? [],
		followUpQueue: input.followUpQueue ?? [],
		steeringMode: input.steeringMode ?? "one-at-a-time",
		followUpMode: input.followUpMode ?? "one-at-a-time",
		awaitDelivery: input.awaitDelivery ?? false,
		barrier: 0,
		deliveredBarrier: 0,
	}),
	output: ({ context }) => ({ messages: context.messages }),
	initial: "idle",
	on: {
		steer: { actions: "enqueueSteering" },
		followUp: { actions: "enqueueFollowUp" },
		"queue.clear": { actions: "clearQueues" },
		"queue.mode": { actions: "setQueueMode" },
		delivered: { actions: "recordDelivery" },
		dispose: { target: ".ended", actions: "closeRunOnDispose" },
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
				input: ({ context }) => compaction.compactionInput(context),
				onDone: { target: "idle", actions: ["applyCompaction", "clearRun"] },
				onError: { target: "idle", actions: ["emitCompactionFailed", "clearRun"] },
			},
			on: { abort: { target: "idle", actions: ["abortRun", "emitCompactionAborted", "clearRun"] } },
		},
		running: {
			description: "A run: turns of one LLM call and its tool calls, until nothing is left to do.",
			initial: "run-starting",
			on: {
				abort: { actions: "abortRun" },
				"listener.error": { actions: "recordListenerFailure" },
				"tools.abandon": { actions: "abandonRunningCalls" },
				// Streaming tool execution: the batch reports while the reply still streams.
				"tool.update": { guard: "isRunningCall", actions: "emitToolUpdate" },
				"tool.settled": { guard: "isRunningCall", actions: ["settleRunningTool", "startTools"] },
				"tool.timeout": { guard: "isRunningCall", actions: ["settleRunningTool", "startTools"] },
			},
			states: {
				"run-starting": {
					description: "Prompt delivered; takes queued steering (once) before the first call.",
					entry: "emitBarrier",
					always: [
						{ guard: and(["eventsDelivered", "runAborted"]), target: "run-ending", actions: "closeTurnAsAborted" },
						{ guard: and(["eventsDelivered", "pollsSteeringAtStart"]), target: "polling-steering-at-start" },
						{ guard: "eventsDelivered", target: "before-call", actions: "injectInitialSteering" },
					],
				},
				"polling-steering-at-start": {
					description: "pi's loop API: asks getSteeringMessages before the first call.",
					invoke: {
						id: "steeringPoll",
						src: "queuePollActor",
						input: ({ context }) => ({ poll: context.config.getSteeringMessages ?? (async () => []) }),
						onDone: { target: "before-call", actions: ["queueInitialSteering", "injectInitialSteering"] },
						onError: { target: "run-ending", actions: ["recordHookFailure", "closeTurnAsAborted"] },
					},
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
						input: ({ context }) => compaction.compactionInput(context),
						onDone: [
							{ guard: "compactingForOverflow", target: "before-call", actions: ["applyCompaction", "startRetryTurn"] },
							{ target: "before-call", actions: "applyCompaction" },
						],
						onError: [
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
						"stream.toolcall": { guard: "isCurrentAttempt", actions: ["addStreamedToolCall", "startTools"] },
						"stream.done": { guard: "isCurrentAttempt", target: "after-stream", actions: "completeAssistantMessage" },
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
						// Aborted with calls still running: wait for them (they see the signal).
						{ guard: "runAborted", target: "tool-executing" },
						{ guard: "batchTruncated", target: "tool-batch-ending", actions: "settleCallsCutOffByLength" },
						{ guard: "streamingBatchHasWork", target: "tool-executing" },
						{ guard: "hasStreamingBatch", target: "tool-batch-ending" },
						{ guard: "hasPreparedCallToRunNow", target: "tool-executing" },
						{ guard: and(["hasQueuedCall", "asksBeforeToolCall"]), target: "tool-preparing" },
						{ guard: "hasQueuedCall", target: "tool-executing", actions: "prepareQueuedCalls" },
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
				"tool-executing": {
					description: "The batch actor runs calls; outcomes are recorded as they settle.",
					entry: "startTools",
					always: { guard: "noCallRunning", target: "tool-dispatching" },
				},
				"tool-batch-ending": {
					description: "Tool result messages in source order, then turn_end.",
					entry: "endToolBatch",
					always: [{ guard: "assistantFailed", target: "run-ending" }, { target: "turn-ended" }],
				},
				"turn-ended": {
					description: "Decides: another turn (a resume after the output limit, tool results, steering, follow-ups) or the end of the run.",
					entry: "emitBarrier",
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
				},
				"polling-steering": {
					description: "pi's loop API: asks getSteeringMessages after the turn.",
					invoke: {
						id: "steeringPoll",
						src: "queuePollActor",
						input: ({ context }) => ({ poll: context.config.getSteeringMessages ?? (async () => []) }),
						onDone: { target: "turn-ended", actions: "queuePolledSteering" },
						onError: { target: "run-ending", actions: "recordHookFailure" },
					},
				},
				"polling-follow-ups": {
					description: "pi's loop API: asks getFollowUpMessages when the run would otherwise end.",
					invoke: {
						id: "followUpPoll",
						src: "queuePollActor",
						input: ({ context }) => ({ poll: context.config.getFollowUpMessages ?? (async () => []) }),
						onDone: { target: "turn-ended", actions: "queuePolledFollowUps" },
						onError: { target: "run-ending", actions: "recordHookFailure" },
					},
				},
				"run-ending": {
					description: "agent_end, then idle.",
					entry: "emitAgentEnd",
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

/** What the stream actor of the current call gets. */
function streamInput(context: Ctx, self: unknown) {
	const run = runOf(context);
	return {
		attempt: run.attempt,
		model: context.model,
		systemPrompt: context.systemPrompt,
		messages: context.messages,
		tools: context.tools,
		config: context.config,
		options: streamOptionsFor(context),
		signal: run.controller.signal,
		relay: context.config.deltaSink ?? emitterOf(self),
		progress: run.stream,
		announceToolCalls: context.config.toolExecution === "streaming",
	};
}

/** What `shouldStopAfterTurn` is asked with. */
function stopCheckInput(context: Ctx) {
	const run = runOf(context);
	const check = context.config.shouldStopAfterTurn ?? (() => false);
	const message = run.batch?.assistant ?? run.assistant;
	if (!message) throw new Error("agentchart: a turn ended without a reply (machine invariant broken)");
	return { check, turn: { message, toolResults: run.toolResults, context: hookContext(context), newMessages: run.newMessages } };
}
