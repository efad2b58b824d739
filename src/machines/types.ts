import type { DeltaSink, StreamActorEvent, StreamProgress } from "../actors/stream-protocol.js";
import type { CompactionSettings } from "../compaction/settings.js";
import type { ToolOutcome } from "../tools/preflight.js";

export type { CompactionSettings, SummarizeRequest } from "../compaction/settings.js";
import type { ToolBatchEvent } from "../actors/tool-batch-protocol.js";
import type {
	AfterToolCallHook,
	AgentEvent,
	AgentThinkingLevel,
	AgentToolCall,
	AnyAgentTool,
	BeforeToolCallHook,
	CompactionReason,
	CompactionResult,
	ConvertToLlm,
	GetApiKey,
	QueueMode,
	ShouldStopAfterTurn,
	ToolExecutionMode,
	TransformContext,
} from "../types/agent.js";
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../types/messages.js";
import type { Model, SimpleStreamOptions } from "../types/model.js";
import type { StreamFn } from "../types/stream.js";
import type { RunAbort } from "../util/run-abort.js";
import type { EffectJournal } from "../durable/journal.js";

/**
 * Settings of {@link AgentMachineConfig.outputLimitRecovery}.
 *
 * @example
 * const recovery: OutputLimitRecovery = { maxAttempts: 3 };
 * const agent = new Agent({ outputLimitRecovery: recovery });
 */
export interface OutputLimitRecovery {
	/** Resume turns in a row before the run ends with the cut-off reply (e.g. 3). */
	maxAttempts: number;
}

/**
 * Pull-based queues (pi's low-level loop API): the machine asks for steering and follow-up
 * messages at its decision points instead of keeping queues of its own.
 *
 * @example
 * const pollers: QueuePollers = { getSteeringMessages: async () => [], getFollowUpMessages: async () => [] };
 */
export interface QueuePollers {
	/** Messages to inject before the next assistant reply (polled at the run's start and after each turn). */
	getSteeringMessages?: (() => Promise<AgentMessage[]>) | undefined;
	/** Messages to continue with when the agent would otherwise stop. */
	getFollowUpMessages?: (() => Promise<AgentMessage[]>) | undefined;
}

/**
 * Everything the loop needs besides the transcript. Functions, so not serialisable.
 *
 * @example
 * const config: Partial<AgentMachineConfig> = { toolExecution: "sequential", toolTimeoutMs: 30_000 };
 * const actor = createActor(agentMachine, { input: { config } });
 */
export interface AgentMachineConfig extends QueuePollers {
	/** Runs one LLM call. */
	streamFn: StreamFn;
	/** Transcript entries → LLM messages, before each call. */
	convertToLlm: ConvertToLlm;
	/** Rewrites the transcript before each call. */
	transformContext?: TransformContext | undefined;
	/** Resolves an API key per call. */
	getApiKey?: GetApiKey | undefined;
	/** Runs before each tool call; may block it. */
	beforeToolCall?: BeforeToolCallHook | undefined;
	/** Runs after each tool call; may override its result. */
	afterToolCall?: AfterToolCallHook | undefined;
	/** After each turn (pi's low-level loop): true ends the run, leaving queued messages queued. */
	shouldStopAfterTurn?: ShouldStopAfterTurn | undefined;
	/** parallel (default), sequential or streaming. */
	toolExecution: ToolExecutionMode;
	/** Default tool timeout in milliseconds; 0 disables (default 180000). */
	toolTimeoutMs: number;
	/** After an abort, how long to wait for a stream function that ignores the signal before closing the message ourselves. */
	abortGraceMs: number;
	/**
	 * The longest silence allowed from the model's stream (from the call's start, then between
	 * events) before the call ends as an error that says it stalled; 0 disables (default 120000).
	 */
	streamIdleTimeoutMs: number;
	/**
	 * After an abort, how long running tools may take to stop before they are settled with an
	 * error result (and their late results ignored), so the run ends; 0 waits for them (default 5000).
	 */
	toolAbortGraceMs: number;
	/** Passed to every stream function call (sessionId, onPayload, transport, ...). */
	streamOptions: Omit<SimpleStreamOptions, "signal" | "reasoning">;
	/** Compaction; off when undefined. */
	compaction?: CompactionSettings | undefined;
	/**
	 * Opt-in: a reply cut off by the output token limit (stopReason "length") is not the end:
	 * the next turn asks the model to resume where it stopped (or to issue again the tool calls
	 * the limit cut off), at most `maxAttempts` times in a row. Off by default, as in pi.
	 */
	outputLimitRecovery?: OutputLimitRecovery | undefined;
	/**
	 * How long a tool call may wait for a person's decision before it is rejected (ms); 0 or
	 * undefined: as long as it takes.
	 */
	approvalTimeoutMs?: number | undefined;
	/**
	 * Emit `agentchart.checkpoint` where the run should be stored (a run's start, the end of a turn
	 * that did what the journal does not carry, a wait for approval, the run's end): the Agent
	 * does, with a store.
	 */
	checkpoints?: boolean | undefined;
	/**
	 * The effect journal (see `durable/journal.ts`): model calls and tool calls look themselves up
	 * before they act and record their intent and outcome. Without one nothing is recorded.
	 */
	journal?: EffectJournal | undefined;
	/**
	 * The consumer's delivery, when it paces the loop (the Agent does): undefined when every
	 * event so far has reached its listeners, else a promise that settles when they have. The
	 * stream actor waits on it after each event, so the model's stream is read no faster than
	 * listeners take it, as in pi.
	 */
	deliveryPending?: (() => PromiseLike<void> | undefined) | undefined;
	/**
	 * Where token deltas (`message_update`) go. By default the actor's own emitter, to its
	 * `actor.on(...)` listeners; an embedding that takes every emitted event itself (the Agent
	 * facade, the loop API) may take them directly and skip the emitter's per-event work, and
	 * return its delivery in progress (what `deliveryPending` would) for the stream to wait on.
	 */
	deltaSink?: DeltaSink | undefined;
}

/**
 * The transcript, tools and model a run works on.
 *
 * @example
 * const { systemPrompt, model, tools, messages }: AgentRunState = agent.actor.getSnapshot().context;
 */
export interface AgentRunState {
	systemPrompt: string;
	model: Model;
	thinkingLevel: AgentThinkingLevel;
	tools: AnyAgentTool[];
	messages: AgentMessage[];
}

/**
 * Input of the agent machine. Everything is optional.
 *
 * @example
 * const input: AgentMachineInput = { systemPrompt: "You are terse.", steeringMode: "all", config: { toolExecution: "sequential" } };
 * const actor = createActor(agentMachine, { input }).start();
 */
export interface AgentMachineInput extends Partial<AgentRunState> {
	/** Loop configuration; unset fields get defaults. */
	config?: Partial<AgentMachineConfig> | undefined;
	/** Steering queue mode (default one-at-a-time). */
	steeringMode?: QueueMode | undefined;
	/** Follow-up queue mode (default one-at-a-time). */
	followUpMode?: QueueMode | undefined;
	/** Runs the session started before (an Agent hands over its count, so run ids stay unique). */
	runs?: number | undefined;
	/** Messages already queued (an Agent that starts a machine for a run hands over its queues). */
	steeringQueue?: AgentMessage[] | undefined;
	followUpQueue?: AgentMessage[] | undefined;
	/**
	 * When true the machine waits at each decision point until the consumer acknowledges the
	 * events emitted so far (`agentchart.barrier` → `delivered`). The Agent facade uses this
	 * to make its awaited listeners hold the loop back, as pi's do. Default false.
	 */
	awaitDelivery?: boolean | undefined;
}

/**
 * A tool result before it becomes a message.
 *
 * @example
 * const failed = (result: FinalizedToolResult) => result.isError;
 */
export type FinalizedToolResult = ToolOutcome;

/**
 * Where one tool call of the current batch stands. `announced` is streaming mode's, while somebody
 * watches the run: its `tool_execution_start` is out, and it is preflighted and run once the
 * listeners have it.
 *
 * @example
 * const status: ToolCallStatus | undefined = agent.actor.getSnapshot().context.run?.batch?.calls[0]?.status;
 */
export type ToolCallStatus = "queued" | "announced" | "preparing" | "prepared" | "awaiting-approval" | "running" | "settled";

/**
 * Why and until when a call waits for a person's decision.
 *
 * @example
 * const why = (wait: ApprovalWait) => wait.reason ?? "no reason given";
 */
export interface ApprovalWait {
	/** Why it needs approval (from `beforeToolCall`), if said. */
	reason?: string | undefined;
	/** When the wait ends with a rejection (ms since the epoch), with an approval timeout. */
	deadline?: number | undefined;
}

/**
 * One tool call of the current batch.
 *
 * @example
 * const waiting = (agent.actor.getSnapshot().context.run?.batch?.calls ?? []).filter((call: ToolCallEntry) => call.status === "awaiting-approval");
 * for (const call of waiting) console.log(call.toolCall.id, call.toolCall.arguments);
 */
export interface ToolCallEntry {
	/**
	 * The call's name in its batch: its id, or `id#2`, `id#3`… for a call that repeats an earlier
	 * call's id (a model may send two calls with one id; each still runs and gets its own result).
	 * The batch actor's events name calls by it; listeners see the id.
	 */
	key: string;
	toolCall: AgentToolCall;
	status: ToolCallStatus;
	/** Validated arguments (after preflight). */
	args?: unknown;
	/** The outcome, once settled. */
	outcome?: FinalizedToolResult | undefined;
	/** True once `tool_execution_start` was emitted. */
	started: boolean;
	/** While the call waits for approval (status "awaiting-approval"). */
	approval?: ApprovalWait | undefined;
	/** Its tool result message, once emitted. */
	message: ToolResultMessage | undefined;
	/**
	 * A running call whose tool returned: its `afterToolCall` hook is being asked. A give-up after
	 * an abort names the hook, not the tool, as what did not finish.
	 */
	returned?: true | undefined;
	/**
	 * Why `args` cannot run: the call was restored with a tool whose schema changed since it was
	 * stored and no longer accepts them (the validation error). Such a call does not run with
	 * them: waiting for approval, it is approved only with arguments that fit (or rejected);
	 * otherwise this error is its result.
	 */
	argsProblem?: string | undefined;
}

/**
 * The tool calls of one assistant message.
 *
 * @example
 * const batch: ToolBatch | undefined = agent.actor.getSnapshot().context.run?.batch;
 * console.log(batch?.mode, batch?.calls.map((call) => call.toolCall.name));
 */
export interface ToolBatch {
	assistant: AssistantMessage;
	/** parallel or sequential for this batch (streaming batches are "streaming"). */
	mode: ToolExecutionMode;
	calls: ToolCallEntry[];
	/** Set when calls of the assistant message were cut off by the output token limit (they do not run). */
	truncated: boolean;
	/** True once the batch actor (`tools`) runs. */
	actorStarted: boolean;
	/**
	 * What its calls' effect ids begin with (`r1.t2`: the run and turn it was made in; see
	 * `turnEffectPrefix`). The ids are made from the run's counters; a restore refuses a batch
	 * whose prefix is not theirs, as the journal would not be found under the ids they make and a
	 * call that ran would run again.
	 */
	effectPrefix: string;
}

/**
 * Bookkeeping of the run in progress.
 *
 * @example
 * const run: RunContext | undefined = agent.actor.getSnapshot().context.run;
 * console.log(run?.id, run?.turn);
 */
export interface RunContext {
	/** The run's id (`r1`, `r2`, …, counted per session): the first part of its effects' ids. */
	id: string;
	/** Aborted by `abort`, dispose, or a listener failure: the run's signal, and its parts' hooks. */
	controller: RunAbort;
	/** True once the run was aborted. */
	aborted: boolean;
	/** The abort found calls running and set the deadline after which they are given up on (`tools.abandon`). */
	abandonScheduled: boolean;
	/** Why the run failed outside the model (listener error), if it did. */
	failure?: string | undefined;
	/** Messages this run added, for `agent_end`. */
	newMessages: AgentMessage[];
	/** 1-based turn counter. */
	turn: number;
	/** Increments with every LLM call; stream events of other attempts are stale. */
	attempt: number;
	/** `continue()` from an assistant tail with queued steering skips the first poll. */
	skipInitialSteeringPoll: boolean;
	/** What the current call's stream has produced so far (its partial message), kept by the stream actor. */
	stream: StreamProgress;
	/** The partial assistant message of the current call, once `start` streamed. */
	partial?: AssistantMessage | undefined;
	/**
	 * Streaming mode, a reply that failed after some of its calls had started: its failed part,
	 * recorded after the tool results of its committed part (see `splitFailedStreamingReply`).
	 */
	pendingFailedReply?: AssistantMessage | undefined;
	/** The completed assistant message of the current turn. */
	assistant?: AssistantMessage | undefined;
	/** The tool calls of the current turn. */
	batch?: ToolBatch | undefined;
	/** True once this turn's turn_end was emitted. */
	turnEnded: boolean;
	/** The tool result messages of the current turn, in source order. */
	toolResults: ToolResultMessage[];
	/** The overflow recovery (compact + retry) was used in this run. */
	overflowRetried: boolean;
	/** Resume turns taken in a row after replies cut off by the output token limit. */
	outputLimitAttempts?: number | undefined;
	/** Set once a threshold compaction ran in this turn, so a still-large context cannot loop. */
	compactedThisTurn?: boolean | undefined;
	/** Why the machine is compacting now. */
	compactionReason?: CompactionReason | undefined;
	/** A compaction ran since the last turn's end was checkpointed: the journal does not carry it. */
	compactedSinceCheckpoint?: boolean | undefined;
	/** Instructions for a manual compaction. */
	compactionInstructions?: string | undefined;
	/** This turn's end already polled the steering queue (pi's low-level loop). */
	steeringPolled?: boolean | undefined;
	/** This turn's end already polled the follow-up queue. */
	followUpsPolled?: boolean | undefined;
	/** This turn's end already asked `shouldStopAfterTurn`. */
	stopAsked?: boolean | undefined;
	/** `shouldStopAfterTurn` said to stop. */
	stopRequested?: boolean | undefined;
}

/**
 * The agent machine's context.
 *
 * @example
 * const context: AgentMachineContext = agent.actor.getSnapshot().context;
 * console.log(context.messages.length, context.steeringQueue.length, context.run?.batch?.calls.length);
 */
export interface AgentMachineContext extends AgentRunState {
	/** The loop's settings: the defaults with the input's and the last run's merged in. */
	config: AgentMachineConfig;
	/** Steering messages waiting for the next poll, oldest first. */
	steeringQueue: AgentMessage[];
	/** Follow-up messages waiting for the run to end, oldest first. */
	followUpQueue: AgentMessage[];
	/** How many steering messages one poll takes. */
	steeringMode: QueueMode;
	/** How many follow-up messages one poll takes. */
	followUpMode: QueueMode;
	/** The run in progress, if any. */
	run?: RunContext | undefined;
	/**
	 * Whether decision states wait for `delivered` (see {@link AgentMachineInput.awaitDelivery}):
	 * `"start"` while a run that waits only at its start is there (see {@link RunOverrides.awaitDelivery}).
	 */
	awaitDelivery: boolean | "start";
	/** Id of the last barrier emitted (a decision state waits for `delivered` with this id). */
	barrier: number;
	/** The last compaction's summary, for iterative updates. */
	lastCompaction?: CompactionResult | undefined;
	/**
	 * The `seq` of the last queue command taken (`steer`, `followUp`, `queue.clear`,
	 * `queue.mode`), for a sender that numbers them and wants to know which are still waiting.
	 */
	commandSeq: number;
	/** Runs started so far (a run's id counts them). */
	runs: number;
}

/**
 * Overrides sent with `prompt`/`continue`: the Agent facade sends its state and options each run.
 *
 * @example
 * const overrides: RunOverrides = { state: { systemPrompt: "Answer in French." }, steeringMode: "all" };
 * agent.actor.send({ type: "continue", ...overrides });
 */
export interface RunOverrides {
	/** Replaces these parts of the transcript, tools, model, system prompt and thinking level before the run. */
	state?: Partial<AgentRunState> | undefined;
	/** Merged onto the loop's settings for this run and later ones. */
	config?: Partial<AgentMachineConfig> | undefined;
	/** Sets the steering queue's mode before the run. */
	steeringMode?: QueueMode | undefined;
	/** Sets the follow-up queue's mode before the run. */
	followUpMode?: QueueMode | undefined;
	/**
	 * Whether the run waits for deliveries at its decision points (see {@link AgentMachineInput.awaitDelivery}).
	 * `"start"`: only at its start (`run-starting`), before it takes queued steering; after that it
	 * does not wait (in later runs too, as with `false`), unless a `delivery.await` comes. The Agent starts a run nobody watches so,
	 * and answers that one barrier a microtask later: a `steer()` on the line after `prompt()` joins
	 * the first request, as with pi's loop, which awaits its first emits before polling.
	 */
	awaitDelivery?: boolean | "start" | undefined;
}

/**
 * Events the agent machine accepts from its user.
 *
 * @example
 * const steer: AgentMachineCommand = { type: "steer", message: { role: "user", content: "Stop after this file.", timestamp: Date.now() } };
 * agent.actor.send(steer);
 */
export type AgentMachineCommand =
	| ({ type: "prompt"; messages: AgentMessage[] } & RunOverrides)
	| ({ type: "continue" } & RunOverrides)
	| { type: "steer"; message: AgentMessage; seq?: number | undefined }
	| { type: "followUp"; message: AgentMessage; seq?: number | undefined }
	| { type: "queue.clear"; queue: "steering" | "followUp" | "all"; seq?: number | undefined }
	| { type: "queue.mode"; queue: "steering" | "followUp"; mode: QueueMode; seq?: number | undefined }
	| { type: "abort" }
	| { type: "dispose" }
	| { type: "reset" }
	| ({ type: "update" } & RunOverrides)
	| { type: "compact"; instructions?: string | undefined }
	| { type: "delivered"; barrier: number }
	/** From here on the run waits for deliveries at its decision points (a listener joined a run that did not). */
	| { type: "delivery.await" }
	| { type: "listener.error"; error: string; /** The type of the event the listener was given, when it was one. */ during?: string | undefined }
	/**
	 * A person approves a call waiting for approval (by its tool call id), maybe with changed
	 * arguments. `decidedAt` (ms since the epoch, default: when the machine takes the event) is when
	 * they decided: a decision counts only before the call's deadline (`approvalTimeoutMs`), so a
	 * decision made in time and replayed after a restart passes the time it was made.
	 */
	| { type: "approve"; toolCallId: string; args?: unknown; decidedAt?: number | undefined }
	/** A person rejects a call waiting for approval (`decidedAt` as for `approve`). */
	| { type: "reject"; toolCallId: string; reason?: string | undefined; decidedAt?: number | undefined }
	/** Sent once a run restored from a snapshot has started: what waits on a clock waits again. */
	| { type: "agentchart.resumed" };

/**
 * Events the machine raises for itself.
 *
 * @example
 * const own: AgentMachineOwnEvent = { type: "tools.abandon" };
 */
export type AgentMachineOwnEvent =
	/** Raised `toolAbortGraceMs` after an abort: tools still running are given up on. */
	| { type: "tools.abandon" }
	/** Raised when the first approval deadline passes: calls past their deadline are rejected. */
	| { type: "approval.timeout" };

/**
 * Every event the agent machine accepts: commands, its actors' events, and its own.
 *
 * @example
 * const event: AgentMachineEvent = { type: "abort" };
 * agent.actor.send(event);
 */
export type AgentMachineEvent = AgentMachineCommand | StreamActorEvent | ToolBatchEvent | AgentMachineOwnEvent;

/**
 * The barrier the machine emits at decision points when `awaitDelivery` is on.
 *
 * @example
 * agent.actor.on("agentchart.barrier", (event: DeliveryBarrierEvent) => agent.actor.send({ type: "delivered", barrier: event.barrier }));
 */
export interface DeliveryBarrierEvent {
	type: "agentchart.barrier";
	barrier: number;
}

/**
 * After a compaction: the new transcript (for consumers that mirror it, like the Agent facade).
 *
 * @example
 * agent.actor.on("agentchart.transcript", (event: TranscriptReplacedEvent) => console.log(event.messages.length));
 */
export interface TranscriptReplacedEvent {
	type: "agentchart.transcript";
	messages: AgentMessage[];
	/** The transcript it replaces: what a mirror holds beyond it was added there, not by the run. */
	replaced: readonly AgentMessage[];
}

/**
 * Where the run may be stored: emitted with `config.checkpoints`.
 *
 * @example
 * agent.actor.on("agentchart.checkpoint", (event: CheckpointEvent) => console.log(event.at)); // needs `config.checkpoints`
 */
export interface CheckpointEvent {
	type: "agentchart.checkpoint";
	/**
	 * Where the run is: its start, the end of a turn that compacted or whose listener failed (a
	 * turn's model call and tool calls are in the journal, each with its outcome; a compaction and
	 * a listener's failure are not), a wait for approval, its end.
	 */
	at: "run-start" | "turn-end" | "approval" | "run-end";
}

/**
 * A decision (`approve`, `reject`) the machine did not take: the call it names does not wait for
 * one. The `Agent` throws for such a decision before it reaches the machine; a machine run without
 * it has no caller to throw to, so it says so with this event (`actor.on("agentchart.approval.ignored", ...)`).
 *
 * - `unknown`: no call of the current turn has this id (no run, another turn's call, a typo);
 * - `not-waiting`: the call is in the turn but waits for no decision (answered already, or it
 *   never needed one);
 * - `timed-out`: its `approvalTimeoutMs` ran out before the decision (`decidedAt`): it is rejected
 *   as timed out (its timer may not have fired yet, when the process was busy);
 * - `aborted`: the run was aborted, which rejects every call waiting;
 * - `reply-failed`: the reply the call came in failed after it was asked (streaming tool mode): it
 *   never runs, and is answered with the reply's failure;
 * - `invalid-arguments`: an `approve` whose `args` the tool's schema rejects, or without `args`
 *   for a call whose own arguments no longer fit (`argsProblem`): the call keeps waiting;
 * - `ambiguous`: the id is one the reply repeats, and more than one call with it waits: name the
 *   call by its `callKey` (`id#1`, `id#2`, ... as `approval_requested` gives it; a callKey always names its call).
 *
 * @example
 * actor.on("agentchart.approval.ignored", (event: ApprovalIgnoredEvent) => console.warn(`${event.decision} of ${event.toolCallId} ignored: ${event.reason}`));
 */
export interface ApprovalIgnoredEvent {
	type: "agentchart.approval.ignored";
	toolCallId: string;
	decision: "approve" | "reject";
	reason: "unknown" | "not-waiting" | "timed-out" | "aborted" | "reply-failed" | "invalid-arguments" | "ambiguous";
	/** With `invalid-arguments`: the validation error. */
	problem?: string | undefined;
}

/**
 * Every event the machine emits: AgentEvents, delivery barriers, transcript replacements, checkpoints and ignored decisions.
 *
 * @example
 * agent.actor.on("*", (event: AgentMachineEmitted) => { if (event.type === "agentchart.checkpoint") console.log("checkpoint"); });
 */
export type AgentMachineEmitted = AgentEvent | DeliveryBarrierEvent | TranscriptReplacedEvent | CheckpointEvent | ApprovalIgnoredEvent;

/**
 * What the machine outputs when it reaches `ended`.
 *
 * @example
 * const output: AgentMachineOutput | undefined = agent.actor.getSnapshot().output; // set once the machine has ended
 * console.log(output?.messages.length);
 */
export interface AgentMachineOutput {
	messages: AgentMessage[];
}
