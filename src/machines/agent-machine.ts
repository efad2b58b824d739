import { and, assign, emit, enqueueActions, not, or, setup } from "xstate";
import { preflightActor, toolActor } from "../actors/tool-actors.js";
import { compactionActor, type CompactionActorInput, type CompactionOutput } from "../actors/compaction-actor.js";
import { canRecoverFromOverflow, OVERFLOW_RECOVERY_FAILED } from "./compaction-guards.js";
import { isContextOverflow } from "../providers/overflow.js";
import { completeStreamingBatch, lengthCutOffText, readyStreamingCalls, splitFailedStreamingReply } from "./streaming-tools.js";
import { streamActor } from "../actors/stream-actor.js";
import type { AgentEvent } from "../types/agent.js";
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../types/messages.js";
import { defaultLoopConfig, defaultModel } from "./defaults.js";
import {
	abortedAssistantMessage,
	batchTerminates,
	createToolBatch,
	findTool,
	hookContext,
	streamOptionsFor,
	takeFromQueue,
	toolCallsOf,
	toolResultMessage,
	updateCall,
} from "./run-helpers.js";
import { errorResult, type PreflightOutcome } from "../actors/tool-actors.js";
import type {
	AgentMachineContext,
	AgentMachineEmitted,
	AgentMachineEvent,
	AgentMachineInput,
	AgentMachineOutput,
	FinalizedToolResult,
	RunContext,
	RunOverrides,
	ToolBatch,
	ToolCallEntry,
} from "./types.js";
import { tokensNeedCompaction } from "./compaction-guards.js";
import { describeError } from "../util/describe-error.js";

type Ctx = AgentMachineContext;
type Run = RunContext;

/** The run in progress; the machine only calls this in states under `running`. */
function runOf(context: Ctx): Run {
	if (!context.run) throw new Error("agentchart: no run in progress (machine invariant broken)");
	return context.run;
}

function batchOf(context: Ctx): ToolBatch {
	const batch = runOf(context).batch;
	if (!batch) throw new Error("agentchart: no tool batch in progress (machine invariant broken)");
	return batch;
}

function callById(context: Ctx, toolCallId: string): ToolCallEntry | undefined {
	return context.run?.batch?.calls.find((call) => call.toolCall.id === toolCallId);
}

/** The message events of a transcript entry that did not stream. */
function messageEvents(message: AgentMessage): AgentEvent[] {
	return [
		{ type: "message_start", message },
		{ type: "message_end", message },
	];
}

function applyOverrides(context: Ctx, overrides: RunOverrides): Partial<Ctx> {
	const patch: Partial<Ctx> = { ...overrides.state };
	if (overrides.config) patch.config = { ...context.config, ...overrides.config };
	if (overrides.steeringMode) patch.steeringMode = overrides.steeringMode;
	if (overrides.followUpMode) patch.followUpMode = overrides.followUpMode;
	return patch;
}

function newRun(skipInitialSteeringPoll: boolean): Run {
	return {
		controller: new AbortController(),
		aborted: false,
		newMessages: [],
		turn: 1,
		attempt: 0,
		skipInitialSteeringPoll,
		toolResults: [],
		turnEnded: false,
		overflowRetried: false,
	};
}

const ABORTED_BEFORE_RUN = "Tool call was aborted before it ran";
/**
 * The instruction of a resume turn after a reply cut off by the output token limit.
 *
 * @example
 * outputLimitResumeText(false); // "Your reply was cut off by the output token limit. ..."
 */
export function outputLimitResumeText(toolCallsCutOff: boolean): string {
	return toolCallsCutOff
		? "Your reply was cut off by the output token limit before its tool calls were complete, so they did not run. Issue them again, keeping each call's arguments short enough to fit (split large content across several calls)."
		: "Your reply was cut off by the output token limit. Continue exactly where it stopped, without repeating anything you already wrote.";
}

/** The id of the delayed `tools.abandon` of the current run, so it can be cancelled when the run ends. */
const ABANDON_TOOLS_ID = "tools.abandon";

/**
 * The agent loop as a statechart.
 *
 * Top level: `idle` (waiting for a prompt), `running` (a run: turns of one LLM call plus its
 * tool calls), `ended` (final, after `dispose`). Inside `running`, a turn goes
 * `before-call` → `streaming` → `after-stream` → (`tool-preparing` ⇄ `tool-executing`) →
 * `turn-ended`, which decides between another turn and `run-ending`. `compacting` sits before
 * an LLM call when the context is too large.
 *
 * AgentEvents are emitted (`actor.on("message_update", ...)`). States whose name describes a
 * decision (`run-starting`, `before-call`, `after-stream`, `turn-ended`) decide only after the
 * consumer has acknowledged the events so far, when `awaitDelivery` is on.
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
	actors: {
		streamActor,
		preflightActor,
		toolActor,
		compactionActor,
	},
	delays: {},
	guards: {
		eventsDelivered: ({ context }) => !context.awaitDelivery || context.deliveredBarrier >= context.barrier,
		runAborted: ({ context }) => context.run?.aborted === true,
		isCurrentAttempt: ({ context, event }) =>
			(event.type === "stream.event" || event.type === "stream.events" || event.type === "stream.done") &&
			event.attempt === context.run?.attempt,
		isStreamStart: ({ event }) => event.type === "stream.event" && event.event.type === "start",
		assistantStarted: ({ context }) => context.run?.partial !== undefined,
		assistantFailed: ({ context }) => {
			const stop = context.run?.assistant?.stopReason;
			return stop === "error" || stop === "aborted";
		},
		assistantHasToolCalls: ({ context }) => {
			const assistant = context.run?.assistant;
			return assistant !== undefined && toolCallsOf(assistant).length > 0;
		},
		toolsWantAnotherCall: ({ context }) => {
			const batch = context.run?.batch;
			return batch !== undefined && !batchTerminates(batch);
		},
		steeringQueued: ({ context }) => context.steeringQueue.length > 0,
		stoppedAtOutputLimit: ({ context }) => context.run?.assistant?.stopReason === "length",
		outputLimitRecoveryLeft: ({ context }) => {
			const recovery = context.config.outputLimitRecovery;
			return recovery !== undefined && (context.run?.outputLimitAttempts ?? 0) < recovery.maxAttempts;
		},
		followUpQueued: ({ context }) => context.followUpQueue.length > 0,
		batchTruncated: ({ context }) => context.run?.batch?.truncated === true && context.run.batch.mode !== "streaming",
		hasPreparedCallToRunNow: ({ context }) => {
			const batch = context.run?.batch;
			if (!batch) return false;
			const prepared = batch.calls.some((call) => call.status === "prepared");
			const queued = batch.calls.some((call) => call.status === "queued");
			return prepared && (batch.mode === "sequential" || !queued);
		},
		hasQueuedCall: ({ context }) => context.run?.batch?.calls.some((call) => call.status === "queued") === true,
		isRunningCall: ({ context, event }) => {
			if (event.type !== "tool.update" && event.type !== "tool.settled" && event.type !== "tool.timeout") return false;
			return callById(context, event.toolCallId)?.status === "running";
		},
		noCallRunning: ({ context }) => context.run?.batch?.calls.some((call) => call.status === "running") !== true,
		compactionNeeded: ({ context }) => tokensNeedCompaction(context),
		overflowRecoverable: ({ context }) => canRecoverFromOverflow(context),
		compactingForOverflow: ({ context }) => context.run?.compactionReason === "overflow",
		isStreamingToolMode: ({ context }) => context.config.toolExecution === "streaming",
		isToolCallEnd: ({ event }) => event.type === "stream.event" && event.event.type === "toolcall_end",
		hasStreamingBatch: ({ context }) => context.run?.batch?.mode === "streaming",
		streamingBatchHasWork: ({ context }) => {
			const batch = context.run?.batch;
			return batch?.mode === "streaming" && batch.calls.some((call) => call.status === "queued" || call.status === "running");
		},
		transcriptEndsWithAssistant: ({ context }) => {
			const last = context.messages[context.messages.length - 1] as { role?: string } | undefined;
			return last?.role === "assistant";
		},
		transcriptCanContinue: ({ context }) => {
			const last = context.messages[context.messages.length - 1] as { role?: string } | undefined;
			return last !== undefined && last.role !== "assistant";
		},
	},
	actions: {
		applyRunOverrides: assign(({ context, event }) => {
			if (event.type !== "prompt" && event.type !== "continue" && event.type !== "update") return {};
			return applyOverrides(context, event);
		}),

		emitBarrier: enqueueActions(({ context, enqueue }) => {
			if (!context.awaitDelivery) return;
			const barrier = context.barrier + 1;
			enqueue.assign({ barrier });
			enqueue.emit({ type: "agentchart.barrier", barrier });
		}),
		recordDelivery: assign(({ context, event }) =>
			event.type === "delivered" ? { deliveredBarrier: Math.max(context.deliveredBarrier, event.barrier) } : {},
		),

		// Queues
		enqueueSteering: assign(({ context, event }) =>
			event.type === "steer" ? { steeringQueue: [...context.steeringQueue, event.message] } : {},
		),
		enqueueFollowUp: assign(({ context, event }) =>
			event.type === "followUp" ? { followUpQueue: [...context.followUpQueue, event.message] } : {},
		),
		clearQueues: assign(({ event }) => {
			if (event.type === "reset") return { steeringQueue: [], followUpQueue: [] };
			if (event.type !== "queue.clear") return {};
			if (event.queue === "steering") return { steeringQueue: [] };
			if (event.queue === "followUp") return { followUpQueue: [] };
			return { steeringQueue: [], followUpQueue: [] };
		}),
		setQueueMode: assign(({ event }) => {
			if (event.type !== "queue.mode") return {};
			return event.queue === "steering" ? { steeringMode: event.mode } : { followUpMode: event.mode };
		}),
		resetTranscript: assign({ messages: () => [] }),

		// Run lifecycle
		startPromptRun: enqueueActions(({ context, event, enqueue }) => {
			if (event.type !== "prompt") return;
			startRun(context, event.messages, false, enqueue);
		}),
		startContinueRun: enqueueActions(({ context, enqueue }) => {
			startRun(context, [], false, enqueue);
		}),
		startRunFromSteering: enqueueActions(({ context, enqueue }) => {
			const { taken, rest } = takeFromQueue(context.steeringQueue, context.steeringMode);
			enqueue.assign({ steeringQueue: rest });
			startRun(context, taken, true, enqueue);
		}),
		startRunFromFollowUps: enqueueActions(({ context, enqueue }) => {
			const { taken, rest } = takeFromQueue(context.followUpQueue, context.followUpMode);
			enqueue.assign({ followUpQueue: rest });
			startRun(context, taken, false, enqueue);
		}),
		injectInitialSteering: enqueueActions(({ context, enqueue }) => {
			const run = runOf(context);
			if (run.skipInitialSteeringPoll) return;
			const { taken, rest } = takeFromQueue(context.steeringQueue, context.steeringMode);
			if (taken.length === 0) return;
			enqueue.assign({ steeringQueue: rest });
			injectMessages(context, taken, enqueue);
		}),
		startNextTurnWithSteering: enqueueActions(({ context, enqueue }) => {
			const { taken, rest } = takeFromQueue(context.steeringQueue, context.steeringMode);
			enqueue.assign({ steeringQueue: rest });
			startNextTurn(context, taken, enqueue);
		}),
		startOutputLimitRecoveryTurn: enqueueActions(({ context, enqueue }) => {
			const run = runOf(context);
			const { taken, rest } = takeFromQueue(context.steeringQueue, context.steeringMode);
			enqueue.assign({ steeringQueue: rest });
			const cutOffCalls = run.batch?.truncated === true;
			const resume: AgentMessage = { role: "user", content: [{ type: "text", text: outputLimitResumeText(cutOffCalls) }], timestamp: Date.now() };
			const next = { ...context, run: { ...run, outputLimitAttempts: (run.outputLimitAttempts ?? 0) + 1 } };
			enqueue.assign({ run: next.run });
			startNextTurn(next, [...taken, resume], enqueue);
		}),
		startNextTurnWithFollowUps: enqueueActions(({ context, enqueue }) => {
			const { taken, rest } = takeFromQueue(context.followUpQueue, context.followUpMode);
			enqueue.assign({ followUpQueue: rest });
			startNextTurn(context, taken, enqueue);
		}),
		abortRun: assign(({ context }) => {
			const run = context.run;
			if (!run || run.aborted) return {};
			run.controller.abort();
			return { run: { ...run, aborted: true } };
		}),
		recordListenerFailure: assign(({ context, event }) => {
			const run = context.run;
			if (!run || event.type !== "listener.error") return {};
			run.controller.abort();
			return { run: { ...run, aborted: true, failure: event.error } };
		}),
		closeTurnAsAborted: enqueueActions(({ context, enqueue }) => {
			const run = runOf(context);
			const message = abortedAssistantMessage(context, run.failure ?? "Request was aborted");
			enqueue.assign({
				messages: [...context.messages, message],
				run: { ...run, assistant: message, turnEnded: true, newMessages: [...run.newMessages, message] },
			});
			for (const event of messageEvents(message)) enqueue.emit(event);
			enqueue.emit({ type: "turn_end", message, toolResults: [] });
		}),
		startManualCompaction: assign(({ event }) => {
			const run = newRun(false);
			run.compactionReason = "manual";
			if (event.type === "compact") run.compactionInstructions = event.instructions;
			return { run };
		}),
		emitAgentEnd: emit(({ context }) => ({ type: "agent_end", messages: runOf(context).newMessages })),
		clearRun: enqueueActions(({ enqueue }) => {
			enqueue.cancel(ABANDON_TOOLS_ID);
			enqueue.assign({ run: undefined });
		}),
		scheduleToolAbandonment: enqueueActions(({ context, enqueue }) => {
			const grace = context.config.toolAbortGraceMs;
			const running = context.run?.batch?.calls.some((call) => call.status === "running") === true;
			if (grace <= 0 || !running) return;
			enqueue.cancel(ABANDON_TOOLS_ID);
			enqueue.raise({ type: "tools.abandon" }, { delay: grace, id: ABANDON_TOOLS_ID });
		}),
		abandonRunningCalls: enqueueActions(({ context, enqueue }) => {
			let working = context;
			const grace = context.config.toolAbortGraceMs;
			for (const call of context.run?.batch?.calls ?? []) {
				if (call.status !== "running") continue;
				// Stopping the actor is what makes its late result harmless: nothing of it arrives.
				stopToolCall(call, enqueue);
				const text = `Tool "${call.toolCall.name}" did not stop within ${grace} ms after the run was aborted; its result, if it comes, is ignored`;
				working = settleCall(working, call, errorResult(text), enqueue);
			}
		}),
		closeRunOnDispose: enqueueActions(({ context, enqueue }) => {
			enqueue.cancel(ABANDON_TOOLS_ID);
			if (!context.run) return;
			closeRunAbruptly(context, "Agent was disposed", enqueue);
		}),

		// Streaming
		startAttempt: assign(({ context }) => {
			const run = runOf(context);
			return { run: { ...run, attempt: run.attempt + 1, partial: undefined, assistant: undefined, batch: undefined, toolResults: [] } };
		}),
		beginAssistantMessage: enqueueActions(({ context, event, enqueue }) => {
			if (event.type !== "stream.event" || event.event.type !== "start") return;
			const partial = event.event.partial;
			enqueue.assign({ run: { ...runOf(context), partial } });
			enqueue.emit({ type: "message_start", message: { ...partial } });
		}),
		relayStreamDeltas: enqueueActions(({ context, event, enqueue }) => {
			if (event.type !== "stream.events") return;
			for (const update of event.events) {
				const partial = "partial" in update ? update.partial : runOf(context).partial;
				enqueue.emit({ type: "message_update", message: { ...partial } as AssistantMessage, assistantMessageEvent: update });
			}
		}),
		relayStreamEvent: emit(({ context, event }) => {
			if (event.type !== "stream.event") throw new Error("relayStreamEvent: unexpected event");
			const partial = "partial" in event.event ? event.event.partial : runOf(context).partial;
			return { type: "message_update", message: { ...partial } as AssistantMessage, assistantMessageEvent: event.event };
		}),
		completeAssistantMessage: enqueueActions(({ context, event, enqueue }) => {
			if (event.type !== "stream.done") return;
			const run = runOf(context);
			let message = event.message;
			// A listener that threw aborted this call: its error, not "Request was aborted", says why.
			if (run.failure !== undefined && message.stopReason === "aborted") message = { ...message, errorMessage: run.failure };
			if (run.overflowRetried && context.config.compaction?.enabled && isContextOverflow(message, context.model.contextWindow)) {
				message = { ...message, errorMessage: `${OVERFLOW_RECOVERY_FAILED} (${message.errorMessage ?? "context overflow"})` };
			}
			const split = message.stopReason === "error" || message.stopReason === "aborted" ? splitFailedStreamingReply(message, run.batch) : undefined;
			// A split reply ends here as its committed part; its failed part follows the tool results.
			const recorded = split?.committed ?? message;
			enqueue.assign({
				messages: [...context.messages, recorded],
				run: {
					...run,
					partial: undefined,
					assistant: message,
					pendingFailedReply: split?.failed,
					newMessages: [...run.newMessages, recorded],
					outputLimitAttempts: message.stopReason === "length" ? run.outputLimitAttempts : 0,
				},
			});
			if (!run.partial) enqueue.emit({ type: "message_start", message: { ...recorded } });
			enqueue.emit({ type: "message_end", message: recorded });
		}),
		emitTurnEndWithoutTools: enqueueActions(({ context, enqueue }) => {
			const run = runOf(context);
			if (!run.assistant) return;
			enqueue.assign({ run: { ...run, turnEnded: true } });
			enqueue.emit({ type: "turn_end", message: run.assistant, toolResults: [] });
		}),

		// Tools
		createBatch: assign(({ context }) => {
			const run = runOf(context);
			if (!run.assistant) return {};
			return { run: { ...run, batch: createToolBatch(run.assistant, context.tools, context.config.toolExecution) } };
		}),
		startPreflight: enqueueActions(({ context, enqueue }) => {
			const batch = batchOf(context);
			const next = batch.calls.find((call) => call.status === "queued");
			if (!next) return;
			enqueue.assign({
				run: { ...runOf(context), batch: updateCall(batch, next.toolCall.id, { status: "preparing", started: true }) },
			});
			enqueue.emit(toolStartEvent(next));
		}),
		recordPreflight: enqueueActions(({ context, event, enqueue }) => {
			const output = (event as { output?: PreflightOutcome }).output;
			const batch = batchOf(context);
			const call = batch.calls.find((entry) => entry.status === "preparing");
			if (!call || !output) return;
			if (output.kind === "prepared") {
				enqueue.assign({ run: { ...runOf(context), batch: updateCall(batch, call.toolCall.id, { status: "prepared", args: output.args }) } });
				return;
			}
			settleCall(context, call, output.outcome, enqueue);
		}),
		settleUnfinishedCallsAsAborted: enqueueActions(({ context, enqueue }) => {
			settleOpenCalls(context, ABORTED_BEFORE_RUN, ["queued", "preparing", "prepared"], enqueue);
		}),
		settleCallsCutOffByLength: enqueueActions(({ context, enqueue }) => {
			let working = context;
			for (const call of batchOf(context).calls) {
				if (call.status === "settled") continue;
				const text = `Tool call ${call.toolCall.name} was not executed: the assistant message was cut off by the output token limit (stopReason "length"), so its arguments may be incomplete.`;
				if (!call.started) enqueue.emit(toolStartEvent(call));
				working = settleCall(working, { ...call, started: true }, errorResult(text), enqueue);
			}
		}),
		startTools: enqueueActions(({ context, enqueue }) => {
			const run = runOf(context);
			// An aborted run starts nothing new; running calls finish with the aborted signal.
			if (run.aborted) return;
			let batch = batchOf(context);
			const streaming = batch.mode === "streaming";
			const candidates = streaming
				? readyStreamingCalls(batch, context.tools)
				: batch.calls.filter((call) => call.status === "prepared");
			for (const call of candidates) {
				if (batch.mode === "sequential" && batch.calls.some((c) => c.status === "running")) break;
				const tool = findTool(context.tools, call.toolCall.name);
				if (!tool && !streaming) continue;
				const controller = new AbortController();
				const signal = AbortSignal.any([run.controller.signal, controller.signal]);
				batch = updateCall(batch, call.toolCall.id, { status: "running", started: true, controller, startedAt: Date.now() });
				if (streaming) enqueue.emit(toolStartEvent(call));
				enqueue.spawnChild("toolActor", {
					id: `tool:${call.toolCall.id}`,
					input: {
						tool,
						toolCall: call.toolCall,
						args: call.args,
						assistantMessage: batch.assistant,
						context: hookContext(context),
						afterToolCall: context.config.afterToolCall,
						signal,
						preflight: streaming
							? {
									tool,
									toolCall: call.toolCall,
									assistantMessage: batch.assistant,
									context: hookContext(context),
									beforeToolCall: context.config.beforeToolCall,
								}
							: undefined,
					},
				});
				const timeoutMs = tool?.timeoutMs ?? context.config.toolTimeoutMs;
				if (timeoutMs > 0) {
					enqueue.raise(
						{ type: "tool.timeout", toolCallId: call.toolCall.id, timeoutMs },
						{ delay: timeoutMs, id: `timeout:${call.toolCall.id}` },
					);
				}
			}
			enqueue.assign({ run: { ...run, batch } });
		}),
		emitToolUpdate: emit(({ context, event }) => {
			if (event.type !== "tool.update") throw new Error("emitToolUpdate: unexpected event");
			const call = callById(context, event.toolCallId);
			return {
				type: "tool_execution_update",
				toolCallId: event.toolCallId,
				toolName: call?.toolCall.name ?? "",
				args: call?.toolCall.arguments,
				partialResult: event.partialResult,
			};
		}),
		settleRunningTool: enqueueActions(({ context, event, enqueue }) => {
			if (event.type !== "tool.settled" && event.type !== "tool.timeout") return;
			const call = callById(context, event.toolCallId);
			if (!call) return;
			const outcome =
				event.type === "tool.settled"
					? event.outcome
					: errorResult(`Tool "${call.toolCall.name}" timed out after ${event.timeoutMs} ms`);
			// A timed-out tool is told to stop; its late result is ignored.
			stopToolCall(call, enqueue);
			let working = settleCall(context, call, outcome, enqueue);
			const tool = findTool(context.tools, call.toolCall.name);
			if (outcome.isError && tool?.cancelSiblingsOnError) {
				for (const sibling of batchOf(working).calls) {
					if (sibling.status !== "running") continue;
					stopToolCall(sibling, enqueue);
					working = settleCall(working, sibling, errorResult(`Cancelled: sibling tool call ${call.toolCall.name} failed`), enqueue);
				}
			}
		}),
		addStreamedToolCall: assign(({ context, event }) => {
			if (event.type !== "stream.event" || event.event.type !== "toolcall_end") return {};
			const run = runOf(context);
			const toolCall = event.event.toolCall;
			const batch: ToolBatch = run.batch ?? { assistant: event.event.partial, mode: "streaming", calls: [], truncated: false };
			if (batch.calls.some((call) => call.toolCall.id === toolCall.id)) return {};
			const entry: ToolCallEntry = { toolCall, status: "queued", started: false, messageEmitted: false };
			return { run: { ...run, batch: { ...batch, calls: [...batch.calls, entry] } } };
		}),
		finishStreamingBatch: enqueueActions(({ context, enqueue }) => {
			const run = runOf(context);
			if (!run.assistant) return;
			const { batch, cutOff } = completeStreamingBatch(run.batch, run.assistant);
			let working: Ctx = { ...context, run: { ...run, batch: { ...batch, truncated: cutOff.length > 0 } } };
			enqueue.assign({ run: working.run });
			for (const call of cutOff) {
				enqueue.emit(toolStartEvent(call));
				working = settleCall(working, { ...call, started: true }, errorResult(lengthCutOffText(call.toolCall.name)), enqueue);
			}
		}),
		abortStreamingCalls: enqueueActions(({ context, enqueue }) => {
			const run = runOf(context);
			if (!run.batch || !run.assistant) return;
			const reason = `Tool call aborted: the assistant message ended with stopReason "${run.assistant.stopReason}"`;
			// Calls that never started are dropped: the failed message is never replayed to a provider.
			let working: Ctx = {
				...context,
				run: { ...run, batch: { ...run.batch, assistant: run.assistant, calls: run.batch.calls.filter((call) => call.status !== "queued") } },
			};
			enqueue.assign({ run: working.run });
			for (const call of batchOf(working).calls) {
				if (call.status !== "running") continue;
				stopToolCall(call, enqueue);
				working = settleCall(working, call, errorResult(reason), enqueue);
			}
		}),

		// Compaction
		setCompactionReason: assign(({ context, event }) => {
			const run = runOf(context);
			const reason = event.type === "compact" ? "manual" : run.assistant && run.turnEnded ? "overflow" : "threshold";
			return { run: { ...run, compactionReason: reason, compactedThisTurn: true, overflowRetried: run.overflowRetried || reason === "overflow" } };
		}),
		emitCompactionStart: emit(({ context }) => ({ type: "auto_compaction_start", reason: context.run?.compactionReason ?? "manual" })),
		applyCompaction: enqueueActions(({ context, event, enqueue }) => {
			const output = (event as { output?: CompactionOutput }).output;
			if (!output) return;
			const reason = context.run?.compactionReason ?? "manual";
			enqueue.assign({ messages: output.messages, lastCompaction: output.result });
			if (context.run) enqueue.assign({ run: { ...context.run, compactionReason: undefined } });
			enqueue.emit({ type: "auto_compaction_end", reason, result: output.result, aborted: false, willRetry: reason === "overflow" });
			enqueue.emit({ type: "agentchart.transcript", messages: output.messages });
		}),
		emitCompactionFailed: enqueueActions(({ context, event, enqueue }) => {
			const error = (event as { error?: unknown }).error;
			const reason = context.run?.compactionReason ?? "manual";
			const detail = describeError(error);
			const errorMessage = reason === "overflow" ? `Context overflow recovery failed: ${detail}` : `Compaction failed: ${detail}`;
			if (context.run) enqueue.assign({ run: { ...context.run, compactionReason: undefined } });
			enqueue.emit({ type: "auto_compaction_end", reason, aborted: false, willRetry: false, errorMessage });
		}),
		emitCompactionAborted: enqueueActions(({ context, enqueue }) => {
			const reason = context.run?.compactionReason ?? "manual";
			if (context.run) enqueue.assign({ run: { ...context.run, compactionReason: undefined } });
			enqueue.emit({ type: "auto_compaction_end", reason, aborted: true, willRetry: false });
		}),
		startRetryTurn: enqueueActions(({ context, enqueue }) => {
			const { taken, rest } = takeFromQueue(context.steeringQueue, context.steeringMode);
			enqueue.assign({ steeringQueue: rest });
			startNextTurn(context, taken, enqueue);
		}),
		emitRemainingToolResults: enqueueActions(({ context, enqueue }) => {
			const working = recordPendingFailedReply(emitUnemittedToolResults(context, enqueue), enqueue);
			const run = runOf(working);
			enqueue.assign({ run: { ...run, turnEnded: true } });
			enqueue.emit({ type: "turn_end", message: batchOf(working).assistant, toolResults: run.toolResults });
		}),
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
		steeringQueue: [],
		followUpQueue: [],
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
					{
						guard: and(["transcriptEndsWithAssistant", "steeringQueued"]),
						target: "running",
						actions: ["applyRunOverrides", "startRunFromSteering"],
					},
					{
						guard: and(["transcriptEndsWithAssistant", "followUpQueued"]),
						target: "running",
						actions: ["applyRunOverrides", "startRunFromFollowUps"],
					},
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
				onError: { target: "idle", actions: ["emitCompactionFailed", "clearRun"] },
			},
			on: {
				abort: { target: "idle", actions: ["abortRun", "emitCompactionAborted", "clearRun"] },
			},
		},
		running: {
			description: "A run: turns of one LLM call and its tool calls, until nothing is left to do.",
			initial: "run-starting",
			on: {
				abort: { actions: ["abortRun", "scheduleToolAbandonment"] },
				"listener.error": { actions: ["recordListenerFailure", "scheduleToolAbandonment"] },
				"tools.abandon": { actions: "abandonRunningCalls" },
				// Streaming tool execution: tool actors report while the reply still streams.
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
						{ guard: "eventsDelivered", target: "before-call", actions: "injectInitialSteering" },
					],
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
					description: "One LLM call streams its reply (the stream actor).",
					entry: "startAttempt",
					invoke: {
						id: "stream",
						src: "streamActor",
						input: ({ context }) => {
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
							};
						},
					},
					on: {
						"stream.event": [
							{ guard: and(["isCurrentAttempt", "isStreamStart"]), actions: "beginAssistantMessage" },
							{
								guard: and(["isCurrentAttempt", "assistantStarted", "isToolCallEnd", "isStreamingToolMode"]),
								actions: ["relayStreamEvent", "addStreamedToolCall", "startTools"],
							},
							{ guard: and(["isCurrentAttempt", "assistantStarted"]), actions: "relayStreamEvent" },
						],
						"stream.events": { guard: and(["isCurrentAttempt", "assistantStarted"]), actions: "relayStreamDeltas" },
						"stream.done": { guard: "isCurrentAttempt", target: "after-stream", actions: "completeAssistantMessage" },
					},
				},
				"after-stream": {
					description: "The reply is complete: a failed reply ends the run, tool calls run, otherwise the turn ends.",
					entry: "emitBarrier",
					always: [
						{
							guard: and(["eventsDelivered", "assistantFailed", "hasStreamingBatch"]),
							target: "run-ending",
							actions: ["abortStreamingCalls", "emitRemainingToolResults"],
						},
						{
							guard: and(["eventsDelivered", "assistantFailed", "overflowRecoverable", not("runAborted")]),
							target: "compacting",
							actions: ["emitTurnEndWithoutTools", "setCompactionReason"],
						},
						{ guard: and(["eventsDelivered", "assistantFailed"]), target: "run-ending", actions: "emitTurnEndWithoutTools" },
						{
							guard: and(["eventsDelivered", "assistantHasToolCalls", "isStreamingToolMode"]),
							target: "tool-dispatching",
							actions: "finishStreamingBatch",
						},
						{ guard: and(["eventsDelivered", "assistantHasToolCalls"]), target: "tool-dispatching", actions: "createBatch" },
						{ guard: "eventsDelivered", target: "turn-ended", actions: "emitTurnEndWithoutTools" },
					],
				},
				"tool-dispatching": {
					description: "Picks the next step of the tool batch.",
					always: [
						{ guard: and(["runAborted", "noCallRunning"]), target: "tool-batch-ending", actions: "settleUnfinishedCallsAsAborted" },
						// Aborted with streamed calls still running: wait for them (they see the signal).
						{ guard: "runAborted", target: "tool-executing" },
						{ guard: "batchTruncated", target: "tool-batch-ending", actions: "settleCallsCutOffByLength" },
						{ guard: "streamingBatchHasWork", target: "tool-executing" },
						{ guard: "hasStreamingBatch", target: "tool-batch-ending" },
						{ guard: "hasPreparedCallToRunNow", target: "tool-executing" },
						{ guard: "hasQueuedCall", target: "tool-preparing" },
						{ target: "tool-batch-ending" },
					],
				},
				"tool-preparing": {
					description: "Preflight of one call: lookup, argument validation, beforeToolCall.",
					initial: "announcing",
					on: {
						abort: { target: "tool-dispatching", actions: ["abortRun"] },
					},
					states: {
						announcing: {
							description: "tool_execution_start is out; preflight waits until its listeners settle.",
							entry: ["startPreflight", "emitBarrier"],
							always: { guard: "eventsDelivered", target: "checking" },
						},
						checking: {
							invoke: {
						id: "preflight",
						src: "preflightActor",
						input: ({ context }) => {
							const run = runOf(context);
							const batch = batchOf(context);
							const call = batch.calls.find((entry) => entry.status === "preparing");
							if (!call) throw new Error("agentchart: preflight without a call");
							return {
								tool: findTool(context.tools, call.toolCall.name),
								toolCall: call.toolCall,
								assistantMessage: batch.assistant,
								context: hookContext(context),
								beforeToolCall: context.config.beforeToolCall,
								signal: run.controller.signal,
							};
						},
						onDone: { target: "#agent.running.tool-dispatching", actions: "recordPreflight" },
							},
						},
					},
				},
				"tool-executing": {
					description: "Tool actors run; results are recorded as they settle.",
					entry: "startTools",
					always: { guard: "noCallRunning", target: "tool-dispatching" },
					on: {
						"tool.update": { guard: "isRunningCall", actions: "emitToolUpdate" },
						"tool.settled": { guard: "isRunningCall", actions: ["settleRunningTool", "startTools"] },
						"tool.timeout": { guard: "isRunningCall", actions: ["settleRunningTool", "startTools"] },
					},
				},
				"tool-batch-ending": {
					description: "Tool result messages in source order, then turn_end.",
					entry: "emitRemainingToolResults",
					always: { target: "turn-ended" },
				},
				"turn-ended": {
					description: "Decides: another turn (a resume after the output limit, tool results, steering, follow-ups) or the end of the run.",
					entry: "emitBarrier",
					always: [
						{ guard: and(["eventsDelivered", "runAborted"]), target: "run-ending" },
						{
							guard: and(["eventsDelivered", "stoppedAtOutputLimit", "outputLimitRecoveryLeft"]),
							target: "before-call",
							actions: "startOutputLimitRecoveryTurn",
						},
						{
							guard: and(["eventsDelivered", or(["toolsWantAnotherCall", "steeringQueued"])]),
							target: "before-call",
							actions: "startNextTurnWithSteering",
						},
						{ guard: and(["eventsDelivered", "followUpQueued"]), target: "before-call", actions: "startNextTurnWithFollowUps" },
						{ guard: "eventsDelivered", target: "run-ending" },
					],
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

// ---------------------------------------------------------------------------------------
// Action bodies shared by several named actions. They only enqueue: assign and emit.

/** The part of XState's action enqueuer these helpers use. */
interface Enqueue {
	assign(patch: Partial<Ctx>): void;
	emit(event: AgentMachineEmitted): void;
}

/** An enqueuer that can also stop children and cancel delayed events. */
interface ChildEnqueue extends Enqueue {
	cancel(id: string): void;
	stopChild(id: string): void;
}

function startRun(context: Ctx, prompts: AgentMessage[], skipInitialSteeringPoll: boolean, enqueue: Enqueue): void {
	const run = newRun(skipInitialSteeringPoll);
	run.newMessages = [...prompts];
	enqueue.assign({ run, messages: [...context.messages, ...prompts] });
	enqueue.emit({ type: "agent_start" });
	enqueue.emit({ type: "turn_start" });
	for (const message of prompts) for (const event of messageEvents(message)) enqueue.emit(event);
}

function injectMessages(context: Ctx, messages: AgentMessage[], enqueue: Enqueue): void {
	const run = runOf(context);
	enqueue.assign({
		messages: [...context.messages, ...messages],
		run: { ...run, newMessages: [...run.newMessages, ...messages] },
	});
	for (const message of messages) for (const event of messageEvents(message)) enqueue.emit(event);
}

function startNextTurn(context: Ctx, messages: AgentMessage[], enqueue: Enqueue): void {
	const run = runOf(context);
	enqueue.assign({
		messages: [...context.messages, ...messages],
		run: {
			...run,
			turn: run.turn + 1,
			turnEnded: false,
			compactedThisTurn: false,
			assistant: undefined,
			batch: undefined,
			toolResults: [],
			newMessages: [...run.newMessages, ...messages],
		},
	});
	enqueue.emit({ type: "turn_start" });
	for (const message of messages) for (const event of messageEvents(message)) enqueue.emit(event);
}

function stopToolCall(call: ToolCallEntry, enqueue: ChildEnqueue): void {
	call.controller?.abort();
	enqueue.cancel(`timeout:${call.toolCall.id}`);
	enqueue.stopChild(`tool:${call.toolCall.id}`);
}

function compactionInput(context: Ctx): CompactionActorInput {
	const run = context.run;
	let messages = context.messages;
	// The overflowing reply is not part of what gets summarised; it is dropped if compaction succeeds.
	if (run?.compactionReason === "overflow" && run.assistant && messages[messages.length - 1] === run.assistant) {
		messages = messages.slice(0, -1);
	}
	return {
		messages,
		settings: context.config.compaction ?? { enabled: false },
		model: context.model,
		streamFn: context.config.streamFn,
		convertToLlm: context.config.convertToLlm,
		streamOptions: streamOptionsFor(context),
		instructions: run?.compactionInstructions,
		signal: run?.controller.signal,
	};
}

function toolStartEvent(call: ToolCallEntry): AgentEvent {
	return { type: "tool_execution_start", toolCallId: call.toolCall.id, toolName: call.toolCall.name, args: call.toolCall.arguments };
}

/**
 * Records a call's outcome and emits its `tool_execution_end` (and, in sequential batches,
 * its tool result message right away). Returns the context as it will be after the assign,
 * so callers settling several calls in one action can chain.
 */
function settleCall(context: Ctx, call: ToolCallEntry, outcome: FinalizedToolResult, enqueue: Enqueue): Ctx {
	const run = runOf(context);
	const batch = batchOf(context);
	let nextBatch = updateCall(batch, call.toolCall.id, { status: "settled", outcome });
	enqueue.emit({
		type: "tool_execution_end",
		toolCallId: call.toolCall.id,
		toolName: call.toolCall.name,
		result: outcome.result,
		isError: outcome.isError,
	});
	let messages = context.messages;
	let newMessages = run.newMessages;
	let toolResults = run.toolResults;
	if (batch.mode === "sequential") {
		const message = toolResultMessage(call.toolCall, outcome);
		messages = [...messages, message];
		newMessages = [...newMessages, message];
		toolResults = [...toolResults, message];
		nextBatch = updateCall(nextBatch, call.toolCall.id, { messageEmitted: true });
		for (const event of messageEvents(message)) enqueue.emit(event);
	}
	const nextRun = { ...run, batch: nextBatch, newMessages, toolResults };
	enqueue.assign({ messages, run: nextRun });
	return { ...context, messages, run: nextRun };
}

function settleOpenCalls(context: Ctx, text: string, statuses: ToolCallEntry["status"][], enqueue: Enqueue): Ctx {
	let working = context;
	for (const call of batchOf(context).calls) {
		if (!statuses.includes(call.status)) continue;
		if (!call.started) enqueue.emit(toolStartEvent(call));
		working = settleCall(working, { ...call, started: true }, errorResult(text), enqueue);
	}
	return working;
}

/** Emits the tool result messages not yet emitted, in source order; returns the updated context. */
function emitUnemittedToolResults(context: Ctx, enqueue: Enqueue): Ctx {
	const run = runOf(context);
	const batch = batchOf(context);
	const results = [...run.toolResults];
	const messages = [...context.messages];
	const newMessages = [...run.newMessages];
	const calls = batch.calls.map((call) => {
		if (call.messageEmitted || !call.outcome) return call;
		const message = toolResultMessage(call.toolCall, call.outcome);
		results.push(message);
		messages.push(message);
		newMessages.push(message);
		for (const event of messageEvents(message)) enqueue.emit(event);
		return { ...call, messageEmitted: true };
	});
	const order = new Map(batch.calls.map((call, index) => [call.toolCall.id, index]));
	results.sort((a, b) => (order.get(a.toolCallId) ?? 0) - (order.get(b.toolCallId) ?? 0));
	const next = { ...context, messages, run: { ...run, newMessages, toolResults: results, batch: { ...batch, calls } } };
	enqueue.assign({ messages: next.messages, run: next.run });
	return next;
}

/**
 * Records the failed part of a split streaming reply after its committed part's tool results
 * (the turn ends with it: its stopReason and error are the turn's).
 */
function recordPendingFailedReply(context: Ctx, enqueue: Enqueue): Ctx {
	const run = runOf(context);
	const failed = run.pendingFailedReply;
	if (!failed) return context;
	for (const event of messageEvents(failed)) enqueue.emit(event);
	const next: Ctx = {
		...context,
		messages: [...context.messages, failed],
		run: { ...run, pendingFailedReply: undefined, newMessages: [...run.newMessages, failed], batch: { ...batchOf(context), assistant: failed } },
	};
	enqueue.assign({ messages: next.messages, run: next.run });
	return next;
}

/**
 * Dispose mid-run: closes whatever is open (the streaming message, started tool calls, the
 * turn) so every start event has its end and the transcript stays valid for a provider.
 */
function closeRunAbruptly(context: Ctx, reason: string, enqueue: ChildEnqueue): void {
	let run = runOf(context);
	run.controller.abort();
	// Stop tool actors now, so the final snapshot lists no children.
	for (const call of run.batch?.calls ?? []) {
		if (call.status === "running") stopToolCall(call, enqueue);
	}
	// A tool-call reply that completed just before dispose still gets answers for its calls.
	if (!run.turnEnded && run.assistant && !run.batch && run.assistant.stopReason !== "error" && run.assistant.stopReason !== "aborted" && toolCallsOf(run.assistant).length > 0) {
		run = { ...run, batch: createToolBatch(run.assistant, context.tools, context.config.toolExecution) };
		context = { ...context, run };
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
			let message: AssistantMessage;
			if (run.partial) {
				message = { ...run.partial, content: [...run.partial.content], stopReason: "aborted", errorMessage: reason };
			} else {
				message = abortedAssistantMessage(context, reason);
			}
			// Streamed calls that already ran keep their place in the transcript (see splitFailedStreamingReply).
			const split = splitFailedStreamingReply(message, run.batch);
			const recorded = split?.committed ?? message;
			if (!run.partial) enqueue.emit({ type: "message_start", message: { ...recorded } });
			enqueue.emit({ type: "message_end", message: recorded });
			working = {
				...working,
				messages: [...working.messages, recorded],
				run: { ...run, partial: undefined, assistant: message, pendingFailedReply: split?.failed, newMessages: [...run.newMessages, recorded] },
			};
			let toolResults: ToolResultMessage[] = [];
			let turnMessage = message;
			if (run.batch) {
				// Streamed tool calls that already started are answered; the rest never start.
				const started = run.batch.calls.filter((call) => call.status !== "queued");
				working = { ...working, run: { ...runOf(working), batch: { ...run.batch, assistant: message, calls: started } } };
				working = settleOpenCalls(working, reason, ["preparing", "prepared", "running"], enqueue);
				working = recordPendingFailedReply(emitUnemittedToolResults(working, enqueue), enqueue);
				toolResults = runOf(working).toolResults;
				turnMessage = batchOf(working).assistant;
			}
			enqueue.emit({ type: "turn_end", message: turnMessage, toolResults });
		} else if (run.batch) {
			const replyFailed = run.assistant.stopReason === "error" || run.assistant.stopReason === "aborted";
			if (replyFailed) {
				// As after a failed reply: calls that never started never will (the reply is not replayed).
				const started = run.batch.calls.filter((call) => call.status !== "queued");
				working = { ...working, run: { ...run, batch: { ...run.batch, assistant: run.assistant, calls: started } } };
			}
			working = settleOpenCalls(working, reason, ["queued", "preparing", "prepared", "running"], enqueue);
			working = recordPendingFailedReply(emitUnemittedToolResults(working, enqueue), enqueue);
			enqueue.emit({ type: "turn_end", message: batchOf(working).assistant, toolResults: runOf(working).toolResults });
		} else {
			enqueue.emit({ type: "turn_end", message: run.assistant, toolResults: [] });
		}
	}
	enqueue.assign({ messages: working.messages, run: working.run });
	enqueue.emit({ type: "agent_end", messages: runOf(working).newMessages });
}
