/**
 * The machine's guards, by name. Each reads the context (and the event) and decides one
 * thing; the chart combines them with `and`/`or`/`not`, so its labels read as sentences.
 */
import type { AgentMessage } from "../types/messages.js";
import { canRecoverFromOverflow, tokensNeedCompaction } from "./compaction-guards.js";
import { type Ctx, callByKey } from "./context.js";
import { batchTerminates, findTool, replyFailed, toolCallsOf } from "./run-helpers.js";
import type { AgentMachineEvent } from "./types.js";
import { isInterruptedByRestart } from "../actors/compaction-protocol.js";
import { decidedCall } from "./actions/approvals.js";
import { callStarted } from "./actions/streaming.js";
import { readyStreamingCalls } from "./streaming-tools.js";
import { approvedArguments } from "../tools/preflight.js";

type GuardArgs = { context: Ctx; event: AgentMachineEvent };

function lastRole(messages: AgentMessage[]): string | undefined {
	return (messages[messages.length - 1] as { role?: string } | undefined)?.role;
}

function callStatus(args: GuardArgs, key: string): string | undefined {
	return callByKey(args.context, key)?.status;
}

/** The agent machine's guards. */
export const agentGuards = {
	/**
	 * The consumer took every event so far: asked in a decision state, which emitted its barrier on
	 * entry and waits for its acknowledgement (`delivered`, the step that brings it to this guard).
	 */
	eventsDelivered: ({ context, event }: GuardArgs) => !context.awaitDelivery || (event.type === "delivered" && event.barrier >= context.barrier),
	/** The machine's owner acknowledges deliveries (a facade with listeners to wait for): a decision state emits a barrier. */
	awaitsDelivery: ({ context }: GuardArgs) => context.awaitDelivery !== false,
	/** The machine's owner stores the run (`config.checkpoints`): the chart says where it may be stored. */
	savesCheckpoints: ({ context }: GuardArgs) => context.config.checkpoints === true,
	/**
	 * The turn did what the journal does not carry (a compaction, a listener's failure): its end is
	 * a checkpoint. The journal carries a turn's model call and tool calls.
	 */
	turnOutgrewJournal: ({ context }: GuardArgs) => {
		const run = context.run;
		return run !== undefined && (run.compactedSinceCheckpoint === true || run.failure !== undefined);
	},
	runAborted: ({ context }: GuardArgs) => context.run?.aborted === true,
	isCurrentAttempt: ({ context, event }: GuardArgs) =>
		(event.type === "stream.start" || event.type === "stream.toolcall" || event.type === "stream.done" || event.type === "stream.delta" || event.type === "stream.interrupted") &&
		event.attempt === context.run?.attempt,
	/** The compaction actor was restored from a snapshot taken while it ran: it is made again. */
	compactionInterrupted: ({ event }: GuardArgs) => isInterruptedByRestart((event as { error?: unknown }).error),
	assistantFailed: ({ context }: GuardArgs) => replyFailed(context.run),
	assistantHasToolCalls: ({ context }: GuardArgs) => {
		const assistant = context.run?.assistant;
		return assistant !== undefined && toolCallsOf(assistant).length > 0;
	},
	toolsWantAnotherCall: ({ context }: GuardArgs) => {
		const batch = context.run?.batch;
		return batch !== undefined && !batchTerminates(batch);
	},
	steeringQueued: ({ context }: GuardArgs) => context.steeringQueue.length > 0,
	followUpQueued: ({ context }: GuardArgs) => context.followUpQueue.length > 0,
	stoppedAtOutputLimit: ({ context }: GuardArgs) => context.run?.assistant?.stopReason === "length",
	outputLimitRecoveryLeft: ({ context }: GuardArgs) => {
		const recovery = context.config.outputLimitRecovery;
		// null is none, as undefined is (pi's loose reading of a missing setting).
		return recovery != null && (context.run?.outputLimitAttempts ?? 0) < recovery.maxAttempts;
	},
	batchTruncated: ({ context }: GuardArgs) => context.run?.batch?.truncated === true && context.run.batch.mode !== "streaming",
	hasPreparedCallToRunNow: ({ context }: GuardArgs) => {
		const batch = context.run?.batch;
		if (!batch) return false;
		const prepared = batch.calls.some((call) => call.status === "prepared");
		const queued = batch.calls.some((call) => call.status === "queued");
		return prepared && (batch.mode === "sequential" || !queued);
	},
	hasQueuedCall: ({ context }: GuardArgs) => context.run?.batch?.calls.some((call) => call.status === "queued") === true,
	asksBeforeToolCall: ({ context }: GuardArgs) => context.config.beforeToolCall !== undefined,
	isRunningCall: (args: GuardArgs) => {
		const { event } = args;
		if (event.type !== "tool.update" && event.type !== "tool.executing" && event.type !== "tool.returned" && event.type !== "tool.settled" && event.type !== "tool.timeout" && event.type !== "tool.approval") return false;
		return callStatus(args, event.callKey) === "running";
	},
	/** A decision (`approve`, `reject`) names a call that waits for one, and came before the call's deadline. */
	isAwaitingApproval: ({ context, event }: GuardArgs) => (event.type === "approve" || event.type === "reject") && decidedCall(context, event) !== undefined,
	/**
	 * An `approve` the call can run with: its `args` fit the run's tool, or it has none and the
	 * call's own still fit (not so after a restore with a tool whose schema changed).
	 */
	approvalFits: ({ context, event }: GuardArgs) => {
		if (event.type !== "approve") return false;
		const call = decidedCall(context, event);
		return call !== undefined && approvedArguments(findTool(context.tools, call.toolCall.name), call, event.args).problem === undefined;
	},
	hasCallAwaitingApproval: ({ context }: GuardArgs) => context.run?.batch?.calls.some((call) => call.status === "awaiting-approval") === true,
	/** A sequential batch: a call waiting for approval holds back the calls after it. */
	approvalHoldsBatch: ({ context }: GuardArgs) => {
		const batch = context.run?.batch;
		return batch?.mode === "sequential" && batch.calls.some((call) => call.status === "awaiting-approval");
	},
	isPreparingCall: (args: GuardArgs) => {
		const { event } = args;
		if (event.type !== "tool.prepared" && event.type !== "tool.settled") return false;
		return callStatus(args, event.callKey) === "preparing";
	},
	noCallRunning: ({ context }: GuardArgs) => context.run?.batch?.calls.some((call) => call.status === "running") !== true,
	hasAnnouncedCall: ({ context }: GuardArgs) => context.run?.batch?.calls.some((call) => call.status === "announced") === true,
	noCallPreparing: ({ context }: GuardArgs) => context.run?.batch?.calls.some((call) => call.status === "preparing") !== true,
	compactionNeeded: ({ context }: GuardArgs) => tokensNeedCompaction(context),
	overflowRecoverable: ({ context }: GuardArgs) => canRecoverFromOverflow(context),
	compactingForOverflow: ({ context }: GuardArgs) => context.run?.compactionReason === "overflow",
	isStreamingToolMode: ({ context }: GuardArgs) => context.config.toolExecution === "streaming",
	hasStreamingBatch: ({ context }: GuardArgs) => context.run?.batch?.mode === "streaming",
	/** Streaming mode without a journal: calls of the reply started (see `closeInterruptedReplyWithStartedCalls`). */
	startedCallsWithoutJournal: ({ context }: GuardArgs) => !context.config.journal && context.run?.batch?.mode === "streaming" && context.run.batch.calls.some(callStarted),
	streamingBatchHasWork: ({ context }: GuardArgs) => {
		const batch = context.run?.batch;
		if (batch?.mode !== "streaming") return false;
		if (batch.calls.some((call) => call.status === "announced" || call.status === "running" || call.status === "prepared")) return true;
		// A queued call is work only once it can start: one held back by a call that waits for
		// approval (a sequential tool's, or a sequential call behind any) waits with it.
		return readyStreamingCalls(batch, context.tools).length > 0;
	},
	transcriptEndsWithAssistant: ({ context }: GuardArgs) => lastRole(context.messages) === "assistant",
	transcriptCanContinue: ({ context }: GuardArgs) => context.messages.length > 0 && lastRole(context.messages) !== "assistant",
	/** The run began with queued steering (`continue()` after an assistant reply): none is taken again before its first call. */
	startedFromSteering: ({ context }: GuardArgs) => context.run?.skipInitialSteeringPoll === true,
	pollsSteeringAtStart: ({ context }: GuardArgs) => context.config.getSteeringMessages !== undefined && context.run?.skipInitialSteeringPoll !== true,
	pollsSteering: ({ context }: GuardArgs) => context.config.getSteeringMessages !== undefined && context.run?.steeringPolled !== true,
	pollsFollowUps: ({ context }: GuardArgs) => context.config.getFollowUpMessages !== undefined && context.run?.followUpsPolled !== true,
	asksWhetherToStop: ({ context }: GuardArgs) => context.config.shouldStopAfterTurn !== undefined && context.run?.stopAsked !== true,
	stopRequested: ({ context }: GuardArgs) => context.run?.stopRequested === true,
};
