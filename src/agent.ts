import { approvalExpired } from "./machines/actions/approvals.js";
import { type Actor, createActor } from "xstate";
import { assertAgentMessage, assertAgentOptions, assertTranscript, decisionProblem, promptMessages, shown } from "./agent-input.js";
import { CHECKED_SETTINGS, queueModeProblem, runStateProblem, settingProblem } from "./machines/command-check.js";
import { streamOptionsProblem } from "./providers/stream-option-check.js";
import { MutableAgentState } from "./facade/agent-state.js";
import { type AgentListener, type DeliveryHost, ListenerDelivery } from "./facade/delivery.js";
import type { MessageUpdateEvent } from "./actors/stream-protocol.js";
import type { AgentActor } from "./machines/agent-actor.js";
import { type agentLogic, runLogic } from "./machines/agent-logic.js";
import { acceptDeltaTaps, type DeltaTap, type DeltaTaps } from "./machines/delta-taps.js";
import { emitterOf } from "./machines/emitters.js";
import { continueRefusal } from "./machines/continue-rules.js";
import { assertRestorableRun } from "./machines/restore-check.js";
import { initialContext } from "./machines/context.js";
import { defaultLoopConfig, defaultModel, loopConfig } from "./machines/defaults.js";
import type { AgentMachineCommand, AgentMachineConfig, AgentMachineContext, AgentMachineEmitted, AgentMachineInput, CompactionSettings, OutputLimitRecovery, ToolCallEntry } from "./machines/types.js";
import { approvedArguments, errorResult } from "./tools/preflight.js";
import { assertValidTools } from "./tools/tool-schema.js";
import { validateToolArguments } from "./tools/validate-arguments.js";
import { type CompactionEnd, type CompactionStart, type RunStart, type StoredJournalEntry, modelEffectId, runOfEffect, streamedReasoning, toolEffectId } from "./durable/journal.js";
import { type AgentSnapshot, type PersistedAgentMachine, type PlainAgentContext, SNAPSHOT_FORMAT, SNAPSHOT_VERSION, hydrateAgentContext, persistAgentContext, plainFreshContext, readAgentSnapshot } from "./durable/snapshot.js";
import { type AgentStore, type LoadedSession, ofLineage } from "./durable/store.js";
import { DurableSession, SessionClaim } from "./facade/durable-session.js";
import { callKeyOf, callsNamed, findTool, pendingApproval, replyFailed, toolCallsOf, toolResultMessage } from "./machines/run-helpers.js";
import { createAssistantMessage } from "./providers/assistant-message.js";
import type {
	AfterToolCallHook,
	AgentEvent,
	AgentState,
	AgentToolCall,
	AnyAgentTool,
	BeforeToolCallHook,
	CompactionResult,
	ConvertToLlm,
	GetApiKey,
	PendingApproval,
	QueueMode,
	ToolExecutionMode,
	TransformContext,
} from "./types/agent.js";
import type { ImageContent } from "./types/content.js";
import type { AgentMessage, AssistantMessage } from "./types/messages.js";
import type { SimpleStreamOptions, ThinkingBudgets, Transport } from "./types/model.js";
import type { StreamFn } from "./types/stream.js";
import { describeError } from "./util/describe-error.js";
import { unwritableJson } from "./util/json-writable.js";
import { unlessAborted } from "./util/sleep.js";
import { failedStop } from "./util/stop-reason.js";

export type { AgentListener } from "./facade/delivery.js";


const noop = (): void => {};

/** Two lists of the same items, in the same order. */
function sameItems<T>(one: readonly T[], other: readonly T[]): boolean {
	return one.length === other.length && itemsAt(one, 0, other);
}

/** Whether `array` holds `items` (the same objects) from `at` on. */
function itemsAt<T>(array: readonly T[], at: number, items: readonly T[]): boolean {
	if (array.length < at + items.length) return false;
	for (let index = 0; index < items.length; index++) if (array[at + index] !== items[index]) return false;
	return true;
}

/** A run's start journaled on the agent as the store holds it between runs (`base`; undefined: not known to be stored). */
interface JournaledStart {
	base: PlainAgentContext | undefined;
	entry: RunStart;
}

/** A manual compaction's start, journaled on the agent as the store holds it between runs (`base`; undefined: not known to be stored). */
interface JournaledCompaction {
	base: PlainAgentContext | undefined;
	entry: CompactionStart;
}

/** The error a turn's message sets as `agent.state.errorMessage` (an assistant reply's), as pi's Agent reads it at turn_end. */
function failureOf(message: AgentMessage): string | undefined {
	const reply = message as { role?: string; errorMessage?: string };
	return reply.role === "assistant" && reply.errorMessage ? reply.errorMessage : undefined;
}

/** An assistant message that sets `agent.state.errorMessage`: a run with one ends with a snapshot. */
function failedReply(message: AgentMessage): boolean {
	return message.role === "assistant" && (failedStop(message.stopReason) || message.errorMessage !== undefined);
}

/**
 * What a store's `load` answered, checked: a store of one's own that answers something else (`42`,
 * a snapshot where `{ snapshot, problems }` belongs) used to make a new session of a stored one,
 * without a word.
 */
function checkedLoad(loaded: unknown): LoadedSession | undefined {
	if (loaded === undefined || loaded === null) return undefined;
	const session = loaded as Partial<LoadedSession>;
	const problems = session.problems;
	if (typeof loaded !== "object" || !("snapshot" in loaded) || (session.snapshot !== undefined && (typeof session.snapshot !== "object" || session.snapshot === null)) || !Array.isArray(problems) || !problems.every((problem) => typeof problem === "string")) {
		throw new TypeError(`Agent.load: the store's load() must answer undefined (no such session) or { snapshot, problems: string[] }, got ${shown(loaded)}`);
	}
	return session as LoadedSession;
}

/** The tools a restored agent has: those its snapshot's run uses, then the others given. */
function mergeTools(used: readonly AnyAgentTool[], given: readonly AnyAgentTool[]): AnyAgentTool[] {
	const merged = [...used];
	for (const tool of given) if (!merged.includes(tool)) merged.push(tool);
	return merged;
}

/**
 * Options of {@link Agent}: pi 0.73.1's, plus agentchart's own (marked "agentchart"). Every option
 * but `initialState`, `listeners` and `store` is also a public field of the agent, read at the
 * start of each run.
 *
 * @example
 * const options: AgentOptions = {
 *   initialState: { model: scripted.model, systemPrompt: "Be brief.", tools: [add] },
 *   streamFn: scripted.streamFn,
 *   toolExecution: "sequential",
 *   compaction: { enabled: true },
 * };
 * const agent = new Agent(options);
 */
export interface AgentOptions {
	/** Initial transcript, tools, model, system prompt and thinking level. */
	initialState?: Partial<Omit<AgentState, "pendingToolCalls" | "isStreaming" | "streamingMessage" | "errorMessage">> | undefined;
	/** Transcript to LLM messages before each model call. Default: keeps user, assistant and tool result messages, and sends a compaction summary as a user message. */
	convertToLlm?: ConvertToLlm | undefined;
	/** Rewrites the transcript before each model call (before `convertToLlm`); gets the run's signal. */
	transformContext?: TransformContext | undefined;
	/** Default: pi-ai's `streamSimple` when `@mariozechner/pi-ai` is installed (as in pi). */
	streamFn?: StreamFn | undefined;
	/** Resolves the API key for a provider before each model call (for keys that expire); otherwise the stream function reads its own. */
	getApiKey?: GetApiKey | undefined;
	/** Passed to every stream call: sees (and may replace) each request body. */
	onPayload?: SimpleStreamOptions["onPayload"] | undefined;
	/** Passed to every stream call: gets each response's status and headers. */
	onResponse?: SimpleStreamOptions["onResponse"] | undefined;
	/** Asked before each tool call runs, with its validated (mutable) arguments: may block it (`{ block: true, reason? }`, with `terminate: true` to end the run once every call of the batch asks that) or ask a person (`approval: "required"`). */
	beforeToolCall?: BeforeToolCallHook | undefined;
	/** Asked after each tool call: `content`, `details`, `isError` and `terminate` it returns replace the result's, field by field. */
	afterToolCall?: AfterToolCallHook | undefined;
	/** How many queued steering messages one poll takes: `"one-at-a-time"` (default) or `"all"`. */
	steeringMode?: QueueMode | undefined;
	/** How many queued follow-up messages one poll takes: `"one-at-a-time"` (default) or `"all"`. */
	followUpMode?: QueueMode | undefined;
	/** Passed to every stream call (providers use it for caching); with a `store`, the name of the stored session. */
	sessionId?: string | undefined;
	/** Token budget per thinking level, passed to every stream call. */
	thinkingBudgets?: ThinkingBudgets | undefined;
	/** Preferred transport, passed to every stream call (default `"auto"`). */
	transport?: Transport | undefined;
	/** Cap on a provider-requested retry delay in ms, passed to every stream call. */
	maxRetryDelayMs?: number | undefined;
	/** How the tool calls of one reply run: `"parallel"` (default), `"sequential"`, or `"streaming"` (agentchart: each as soon as it has streamed). */
	toolExecution?: ToolExecutionMode | undefined;
	/** agentchart: default tool timeout in ms (default 180000; 0 disables). */
	toolTimeoutMs?: number | undefined;
	/** agentchart: compaction settings (off by default). */
	compaction?: CompactionSettings | undefined;
	/** agentchart: request timeout passed to the provider (`timeoutMs` of every stream call). */
	timeoutMs?: number | undefined;
	/** agentchart: the provider's retries for transient failures (`maxRetries` of every stream call). */
	maxRetries?: number | undefined;
	/**
	 * agentchart: the most bytes one streamed reply may bring (`maxReplyBytes` of every stream
	 * call; the built-in providers' default is 256 MB, 0 lifts the bound). A reply that streams past
	 * it ends as an error that says so, keeping what had streamed.
	 *
	 * @example
	 * const agent = new Agent({ initialState: { model }, streamFn: streamAnthropic, maxReplyBytes: 8 * 1024 * 1024 });
	 */
	maxReplyBytes?: number | undefined;
	/** agentchart: a call whose stream is silent this long (ms) ends as an error that says it stalled (default 120000; 0 disables). */
	streamIdleTimeoutMs?: number | undefined;
	/** agentchart: after abort(), how long (ms) running tools may take to stop before they are given up on; after dispose(), how long a listener may hold the run's last events (default 5000; 0 waits). */
	toolAbortGraceMs?: number | undefined;
	/** agentchart, opt-in: resume a reply cut off by the output token limit, at most `maxAttempts` times in a row. */
	outputLimitRecovery?: OutputLimitRecovery | undefined;
	/** agentchart: listeners added at once (before a restored run goes on: see `Agent.restore`). */
	listeners?: AgentListener[] | undefined;
	/**
	 * agentchart: where the session is kept (`sessionId` names it): every effect is journaled before
	 * it goes on, an ongoing session's prompts and runs' ends are journaled, and a snapshot is saved
	 * where the journal cannot stand for the agent (a new session, a wait for approval, every
	 * command; see docs/durable.md; `Agent.load` continues a stored session). The newest agent
	 * opened on a session writes it: an older one's writes are refused (`SessionTakenOverError`).
	 * Needs a `sessionId` (a non-empty text): a store without one is a `TypeError`.
	 */
	store?: AgentStore | undefined;
	/**
	 * agentchart: how long a tool call may wait for approval before it is rejected, in ms, from when
	 * it is first asked (default, `0` or `Infinity`: as long as it takes). The deadline is kept across a restore: a
	 * restored run waits only what is left, and a decision after it is refused. A call asked
	 * without one (no timeout then) and restored into an agent with one gets it from the restore.
	 */
	approvalTimeoutMs?: number | undefined;
}

/**
 * Options of {@link Agent.approve}.
 *
 * @example
 * const options: ApproveOptions = { arguments: { path: "README.md" } };
 * await agent.approve("toolu_01", options);
 */
export interface ApproveOptions {
	/** Run the call with these arguments instead of the model's (validated against the tool's schema). */
	arguments?: unknown;
}

type MachineActor = Actor<typeof agentLogic>;

/** `mode` once checked (a queue mode, or, unless `required`, undefined for the default); a `TypeError` naming `field` otherwise. */
function checkedQueueMode(field: string, mode: QueueMode | undefined, required = false): QueueMode | undefined {
	const problem = queueModeProblem(mode, required);
	if (problem) throw new TypeError(`${field} ${problem}`);
	return mode;
}

/** A machine made from a stored run (not started); throws when the chart cannot take it (a state it does not have, say). */
function restoredMachine(logic: typeof agentLogic, machine: Omit<PersistedAgentMachine, "context"> & { context: AgentMachineContext }): MachineActor {
	// The snapshot is everything; the input only ever starts a machine from scratch.
	const actor = createActor(logic, { input: {}, snapshot: machine as never });
	// XState keeps what a restore threw as the actor's error.
	const restored = actor.getSnapshot();
	if (restored.status === "error") throw new Error(`agentchart: the snapshot's run cannot be restored: ${describeError(restored.error)}`, { cause: restored.error });
	return actor;
}

/** A queue command the agent sends while a machine runs. */
type QueueCommand = Extract<AgentMachineCommand, { type: "steer" | "followUp" | "queue.clear" | "queue.mode" }>;

interface SentCommand {
	seq: number;
	command: QueueCommand;
}

/** An idle agent's delta taps: none, shared, so an agent without a machine holds no set of its own. */
const NO_TAPS: DeltaTaps = Object.freeze({ list: Object.freeze([]) });

/**
 * The events the machine emits for an agent's listeners, token deltas (which go around it) aside.
 *
 * @example
 * for (const type of LISTENER_EVENT_TYPES) agent.actor.on(type, (event) => console.log(event.type));
 */
export const LISTENER_EVENT_TYPES = [
	"agent_start",
	"agent_end",
	"turn_start",
	"turn_end",
	"message_start",
	"message_end",
	"tool_execution_start",
	"tool_execution_update",
	"tool_execution_end",
	"approval_requested",
	"approval_resolved",
	"auto_compaction_start",
	"auto_compaction_end",
] as const satisfies readonly Exclude<AgentEvent["type"], "message_update">[];

/**
 * What the agent listens to on a machine handed out (`agent.actor`): every emitted type but token
 * deltas, which it takes from the stream itself. XState's emitter then calls nobody for a delta
 * unless someone else listens (a wildcard listener would make it call the agent's for each).
 */
const EMITTED_BUT_DELTAS = [
	...LISTENER_EVENT_TYPES,
	"agentchart.barrier",
	"agentchart.transcript",
	"agentchart.checkpoint",
	"agentchart.approval.ignored",
] as const satisfies readonly Exclude<AgentMachineEmitted["type"], "message_update">[];
// A type the chart emits and the list leaves out would never reach a pinned agent's listeners.
const everyTypeListed: [Exclude<AgentMachineEmitted["type"], "message_update" | (typeof EMITTED_BUT_DELTAS)[number]>] extends [never] ? true : false = true;
void everyTypeListed;

/**
 * The hooks pi's Agent takes as none when set to null (its loop asks `if (config.beforeToolCall)`,
 * `streamFn || streamSimple`): code written for pi may clear one that way. `convertToLlm` is not
 * one of them (pi's run fails on it), so null there is refused with the other wrong values.
 */
const NULL_IS_NONE: ReadonlySet<string> = new Set(["streamFn", "transformContext", "getApiKey", "beforeToolCall", "afterToolCall"]);

const ALREADY_PROMPTING = "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.";
const ALREADY_CONTINUING = "Agent is already processing. Wait for completion before continuing.";
const ALREADY_RESETTING = "Agent is already processing. Wait for completion before resetting.";
const ALREADY_COMPACTING = "Agent is already processing. Wait for completion before compacting.";
const DISPOSED = "Agent has been disposed: create a new Agent to run again.";

/** Given to listeners of events outside any run; never aborts. */
const IDLE_SIGNAL = new AbortController().signal;

/** The loop configuration's defaults, read by every new agent (made once: a copy per agent was garbage at once). */
const LOOP_DEFAULTS = defaultLoopConfig();

type RunStreamOptionsShape = AgentMachineConfig["streamOptions"];

/**
 * The options every stream function call of a run is given, read from the agent when the run
 * starts.
 */
class RunStreamOptions implements RunStreamOptionsShape {
	readonly sessionId: string | undefined;
	readonly onPayload: SimpleStreamOptions["onPayload"] | undefined;
	readonly onResponse: SimpleStreamOptions["onResponse"] | undefined;
	readonly transport: Transport;
	readonly thinkingBudgets: ThinkingBudgets | undefined;
	readonly maxRetryDelayMs: number | undefined;
	readonly timeoutMs: number | undefined;
	readonly maxRetries: number | undefined;
	readonly maxReplyBytes: number | undefined;

	constructor(agent: Agent) {
		this.sessionId = agent.sessionId;
		this.onPayload = agent.onPayload;
		this.onResponse = agent.onResponse;
		this.transport = agent.transport;
		this.thinkingBudgets = agent.thinkingBudgets;
		this.maxRetryDelayMs = agent.maxRetryDelayMs;
		this.timeoutMs = agent.timeoutMs;
		this.maxRetries = agent.maxRetries;
		this.maxReplyBytes = agent.maxReplyBytes;
	}
}

/** What an agent hands its machine and its store (see `Agent.#handles`). */
interface HandedFunctions {
	deliveryPending: () => PromiseLike<void> | undefined;
	deltaSink: (event: MessageUpdateEvent) => PromiseLike<void> | undefined;
	takeSnapshot: () => AgentSnapshot;
}

/** The run in progress: what `waitForIdle()` waits for, and how the machine's part of it ends. */
interface ActiveRun {
	/** `abort()` was called: the machine may not have taken it yet (see `AgentSnapshot.agent.abortPending`). */
	abortSent?: true | undefined;
	/** A listener failed in this run: its error is the run's `errorMessage`, not one a later failure caused. */
	listenerFailed?: true | undefined;
	/**
	 * The last event on its way to the listeners that sets `errorMessage` (a failed reply's
	 * turn_end) or clears it (a compaction that retries the reply), and what it sets: a snapshot
	 * stores the error as the agent will have it (see `snapshot()`).
	 */
	errorAhead?: { event: AgentEvent; error: string | undefined } | undefined;
	promise: Promise<void>;
	resolve: () => void;
	/**
	 * Its controller, once `agent_start` (or a manual compaction's start) was delivered: its signal
	 * is the run's. Kept here because the machine's run ends before `agent_end` reaches the
	 * listeners, and an `abort()` from one of them must still abort the signal they were given (pi's does).
	 */
	controller?: AbortController | undefined;
	/** Settles when the machine's run is over and its last event was delivered. */
	machineDone: Promise<void>;
	endMachine: () => void;
	/** A manual compaction's outcome. */
	compaction?: { resolve: (result: CompactionResult) => void; reject: (error: Error) => void } | undefined;
	/**
	 * `agent.state.messages` as the run alone made it (its start, each `message_end`, a compaction's
	 * outcome), never handed out: where the caller's transcript differs from it, the caller changed
	 * it during the run. Its last message is the run's last one the listeners have.
	 */
	own: AgentMessage[];
	/** The caller's transcript is not the run's: restored as such (its messages are copies of the run's). */
	callerChanged?: true | undefined;
	/** A compaction the machine made whose outcome the listeners have not reached yet. */
	compacted?: { messages: AgentMessage[]; replaced: readonly AgentMessage[] } | undefined;
}

/** The tool calls of the transcript's last assistant message that no tool result answers. */
function unansweredToolCalls(messages: readonly AgentMessage[]): AgentToolCall[] {
	let last = messages.length - 1;
	while (last >= 0 && (messages[last] as { role?: unknown }).role !== "assistant") last--;
	if (last < 0) return [];
	const answered = new Set<string>();
	for (let index = last + 1; index < messages.length; index++) {
		const message = messages[index] as { role?: unknown; toolCallId?: unknown };
		if (message.role === "toolResult" && typeof message.toolCallId === "string") answered.add(message.toolCallId);
	}
	return toolCallsOf(messages[last] as AssistantMessage).filter((call) => !answered.has(call.id));
}

/**
 * An LLM agent: a drop-in replacement for pi-agent-core 0.73.1's `Agent`, run by the
 * agentchart statechart.
 *
 * Listeners are awaited one at a time, in subscription order, and each sees `agent.state`
 * already updated for its event; the loop does not take its next decision (call the model,
 * run tools, take queued messages) until they have settled. An idle agent is plain data: the
 * machine runs while a run does (or for as long as `agent.actor` is in use).
 *
 * @example
 * const agent = new Agent({ initialState: { model, systemPrompt: "Be brief.", tools }, streamFn });
 * agent.subscribe((event) => {
 *   if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") {
 *     process.stdout.write(event.assistantMessageEvent.delta);
 *   }
 * });
 * await agent.prompt("What is 2 + 2?");
 */
export class Agent {
	/** Transcript to LLM messages before each model call (see {@link AgentOptions.convertToLlm}). */
	convertToLlm: ConvertToLlm;
	/** Rewrites the transcript before each model call (see {@link AgentOptions.transformContext}). */
	transformContext: TransformContext | undefined;
	/** The stream function of the next model call (see {@link AgentOptions.streamFn}). */
	streamFn: StreamFn;
	/** Resolves a provider's API key before each model call (see {@link AgentOptions.getApiKey}). */
	getApiKey: GetApiKey | undefined;
	/** Passed to every stream call (see {@link AgentOptions.onPayload}). */
	onPayload: SimpleStreamOptions["onPayload"] | undefined;
	/** Passed to every stream call (see {@link AgentOptions.onResponse}). */
	onResponse: SimpleStreamOptions["onResponse"] | undefined;
	/** Asked before each tool call runs (see {@link AgentOptions.beforeToolCall}). */
	beforeToolCall: BeforeToolCallHook | undefined;
	/** Asked after each tool call (see {@link AgentOptions.afterToolCall}). */
	afterToolCall: AfterToolCallHook | undefined;
	/**
	 * Passed to every stream call; with a store, the stored session's name (see {@link AgentOptions.sessionId}),
	 * fixed when the agent is made: a run refuses to start under another (a `TypeError`), and
	 * `snapshot()` names the stored session. `Agent.load` opens another.
	 */
	sessionId: string | undefined;
	/** Token budget per thinking level, passed to every stream call. */
	thinkingBudgets: ThinkingBudgets | undefined;
	/** Preferred transport, passed to every stream call. */
	transport: Transport;
	/** Cap on a provider-requested retry delay in ms, passed to every stream call. */
	maxRetryDelayMs: number | undefined;
	/** How the tool calls of one reply run (see {@link AgentOptions.toolExecution}). */
	toolExecution: ToolExecutionMode;
	/** agentchart: default tool timeout in ms (0 disables). */
	toolTimeoutMs: number;
	/** agentchart: compaction settings. */
	compaction: CompactionSettings | undefined;
	/** agentchart: request timeout passed to the provider. */
	timeoutMs: number | undefined;
	/** agentchart: the provider's retries for transient failures. */
	maxRetries: number | undefined;
	/** agentchart: the most bytes one streamed reply may bring, passed to every stream call (see {@link AgentOptions.maxReplyBytes}). */
	maxReplyBytes: number | undefined;
	/** agentchart: stall timeout of a call's stream in ms (0 disables). */
	streamIdleTimeoutMs: number;
	/** agentchart: how long running tools may take to stop after an abort, in ms (0 waits). */
	toolAbortGraceMs: number;
	/** agentchart: resume turns after the output token limit (off when undefined). */
	outputLimitRecovery: OutputLimitRecovery | undefined;
	/** agentchart: how long a call may wait for approval, in ms (undefined: as long as it takes). */
	approvalTimeoutMs: number | undefined;

	readonly #state: MutableAgentState;
	/** The journal of the run in progress and, with a store, what the agent saves. */
	#session: DurableSession;
	/** The claim `Agent.load` opened its session with, for the agent it makes next (see `SessionClaim`). */
	static #claimToAdopt: SessionClaim | undefined;

	/**
	 * The agent's side of its listener delivery: methods on a class of the agent's own (it reaches
	 * the agent's private members), not closures per agent (see docs/performance.md, "Idle agents").
	 */
	static readonly #DeliveryHost = class implements DeliveryHost {
		constructor(readonly agent: Agent) {}
		reduce(event: AgentEvent): void {
			this.agent.#reduce(event);
		}
		listenerFailed(message: string, event?: AgentEvent): void {
			this.agent.#listenerFailed(message, event);
		}
		delivered(event: AgentEvent, delivery: Promise<void>): void {
			this.agent.#delivered(event, delivery);
		}
	};
	/** The prompt to journal at the start of the run being started, instead of a snapshot (see `#promptEntry`). */
	#startEntry: JournaledStart | undefined;
	/** The run being started is one the journal started before a restore: its start is journaled already. */
	#startJournaled: JournaledStart | undefined;
	/** The run in progress started with its prompt journaled on what the store held: its end may be journaled too. */
	#runBase: JournaledStart | undefined;
	/** The manual compaction in progress, journaled before it started: an end that did not compact is journaled too. */
	#compactionStart: JournaledCompaction | undefined;
	/** Runs the session started (a run's id counts them). */
	#runs = 0;
	/** Calls a decision was sent for, not yet taken by the machine (`turn:key`); made at the first decision. */
	#answered: Set<string> | undefined;
	/**
	 * True while the agent is made from a snapshot (`Agent.restore`, `Agent.load`): a call the
	 * restored run asks about again then, asked before the restart, is not announced again (it is
	 * in `pendingApprovals` once the agent is returned).
	 */
	#restoring = false;
	/** What runs this agent's chart (agentchart's interpreter; XState's in the suite's second pass). */
	readonly #logic = runLogic();
	readonly #delivery: ListenerDelivery;
	/** Queued messages while no machine runs; the machine's context holds them while one does. */
	#steering: AgentMessage[] = [];
	#followUps: AgentMessage[] = [];
	#steeringMode: QueueMode;
	#followUpMode: QueueMode;
	#machine: MachineActor | undefined;
	/** The machine whose queues and modes the agent took back (see #takeBackQueues). */
	#queuesTakenFrom: MachineActor | undefined;
	/**
	 * Queue commands sent to the machine, with their sequence numbers: one that the machine has
	 * not taken yet (a listener's `steer` waits while the machine finishes the step that called
	 * the listener) is applied on top of what the context says (see #queuesIn).
	 */
	#sentCommands: SentCommand[] | undefined;
	#commandSeq = 0;
	/** True once `agent.actor` was asked for: the machine then outlives runs (listeners may be attached to it). */
	#pinned = false;
	/**
	 * A run was started and its first barrier (its start's) not answered yet: with nothing on its
	 * way to a listener, it is answered a microtask later, once the caller's code after `prompt()` ran.
	 */
	#startWait = false;
	/** The inspector's delta counters on the current machine (see `tapDeltas`); usually none. */
	#deltaTaps: DeltaTaps = NO_TAPS;
	/** The emitter of the machine handed out (`emitterOf`), asked once per machine rather than per delta. */
	#machineEmitter: ((event: MessageUpdateEvent) => void) | undefined;
	#emitterFor: MachineActor | undefined;
	/** Ends the agent's listening on its machine (see #listenTo). */
	#stopListening: (() => void) | undefined;
	#run: ActiveRun | undefined;
	#disposed = false;
	/**
	 * The functions the machine and the store are handed (`deliveryPending`, `deltaSink`, the
	 * snapshot taker): made at first use and kept, so neither a run makes them again nor an agent
	 * that never runs holds them (see docs/performance.md, "Idle agents").
	 */
	#handed: HandedFunctions | undefined;
	get #handles(): HandedFunctions {
		return (this.#handed ??= {
			deliveryPending: () => this.#delivery.pending(),
			deltaSink: (event) => this.#sinkDelta(event),
			takeSnapshot: () => this.snapshot(),
		});
	}
	/**
	 * The machine's `deltaSink`: the agent's listeners get the delta directly, and a machine handed
	 * out also takes it to its own listeners; what it returns is the delivery the stream waits for.
	 */
	#sinkDelta(event: MessageUpdateEvent): PromiseLike<void> | undefined {
		// Nobody has been handed the machine: nobody else listens on it, and nothing taps it.
		if (!this.#pinned) return this.#delivery.delta(event);
		// A machine handed out may have listeners of its own (`agent.actor.on(...)`): its emitter
		// takes the delta to them (the agent's own listener leaves deltas out: see #listenTo). First,
		// as the machine's other events reach them before the agent's listeners: an agent listener
		// that disposes the agent on this delta stops the machine, which would drop it.
		const machine = this.#machine;
		if (machine !== this.#emitterFor) {
			this.#emitterFor = machine;
			this.#machineEmitter = machine && emitterOf(machine);
		}
		this.#machineEmitter?.(event);
		const taps = this.#deltaTaps.list;
		for (let index = 0; index < taps.length; index++) (taps[index] as DeltaTap)(event);
		return this.#delivery.delta(event);
	}

	constructor(options: AgentOptions = {}) {
		assertAgentOptions(options, "new Agent");
		const initial = options.initialState ?? {};
		if (initial.messages) assertTranscript(initial.messages, "initialState.messages");
		this.#state = new MutableAgentState(
			initial.systemPrompt ?? "",
			initial.model ?? defaultModel(),
			initial.thinkingLevel ?? "off",
			initial.tools ? Array.from(initial.tools) : [],
			initial.messages ? Array.from(initial.messages) : [],
		);
		this.convertToLlm = options.convertToLlm ?? LOOP_DEFAULTS.convertToLlm;
		this.transformContext = options.transformContext;
		this.streamFn = options.streamFn ?? LOOP_DEFAULTS.streamFn;
		this.getApiKey = options.getApiKey;
		this.onPayload = options.onPayload;
		this.onResponse = options.onResponse;
		this.beforeToolCall = options.beforeToolCall;
		this.afterToolCall = options.afterToolCall;
		this.sessionId = options.sessionId;
		this.thinkingBudgets = options.thinkingBudgets;
		this.transport = options.transport ?? "auto";
		this.maxRetryDelayMs = options.maxRetryDelayMs;
		this.toolExecution = options.toolExecution ?? "parallel";
		this.toolTimeoutMs = options.toolTimeoutMs ?? LOOP_DEFAULTS.toolTimeoutMs;
		this.compaction = options.compaction;
		this.timeoutMs = options.timeoutMs;
		this.maxRetries = options.maxRetries;
		this.maxReplyBytes = options.maxReplyBytes;
		this.streamIdleTimeoutMs = options.streamIdleTimeoutMs ?? LOOP_DEFAULTS.streamIdleTimeoutMs;
		this.toolAbortGraceMs = options.toolAbortGraceMs ?? LOOP_DEFAULTS.toolAbortGraceMs;
		this.outputLimitRecovery = options.outputLimitRecovery;
		this.approvalTimeoutMs = options.approvalTimeoutMs;
		const claim = Agent.#claimToAdopt;
		Agent.#claimToAdopt = undefined;
		this.#session = new DurableSession(options.store, options.sessionId, [], 0, options.store && this.#handles.takeSnapshot, claim);
		this.#listenForTakeOver();
		this.#steeringMode = checkedQueueMode("steeringMode", options.steeringMode) ?? "one-at-a-time";
		this.#followUpMode = checkedQueueMode("followUpMode", options.followUpMode) ?? "one-at-a-time";
		this.#delivery = new ListenerDelivery(
			new Agent.#DeliveryHost(this),
			IDLE_SIGNAL,
			this.#state,
		);
		for (const listener of options.listeners ?? []) this.subscribe(listener);
	}

	/**
	 * Adds a listener; returns a function that removes it. Listeners receive the run's abort
	 * signal.
	 *
	 * @example
	 * const unsubscribe = agent.subscribe(async (event) => { if (event.type === "agent_end") await save(); });
	 */
	subscribe(listener: AgentListener): () => void {
		// Found here, not as the run's failure at its first event ("… is not a function", pi's TypeError from prompt()).
		if (typeof listener !== "function") throw new TypeError(`subscribe(listener): expected a function (event, signal) => void, got ${shown(listener)}`);
		this.#delivery.add(listener);
		this.#observed();
		// Typed as pi types it; like pi's (`Set.delete`), it answers whether the listener was still there.
		return () => this.#delivery.remove(listener);
	}

	/**
	 * The agent's state. `tools` and `messages` copy on assignment; the runtime fields are
	 * read-only.
	 *
	 * @example
	 * agent.state.messages = []; // replaces the transcript (a copy)
	 * agent.state.isStreaming; // true while a run is in progress
	 */
	get state(): AgentState {
		return this.#state;
	}

	/**
	 * The agent's statechart actor, for inspection and embedding (started on first use; from
	 * then on it stays, so listeners and inspectors attached to it see every run). Made from the
	 * agent's settings and state, so when one of them no run could use (`agent.toolTimeoutMs =
	 * -5`) it throws the `TypeError` naming it that `prompt()` would reject with, and makes nothing.
	 *
	 * @example
	 * createAgentInspector().attach(agent.actor);
	 * agent.actor.getSnapshot().value; // "idle"
	 */
	get actor(): AgentActor {
		if (!this.#machine) this.#assertMachineInput();
		const existing = this.#pinned ? undefined : this.#machine;
		this.#pinned = true;
		const pinned = this.#ensureMachine();
		// A machine made before it was handed out is listened to as a handed-out one from now on.
		if (existing) {
			this.#stopListening?.();
			this.#listenTo(existing);
		}
		// The machine's delta taps (tapDeltas): only an actor handed out can be tapped.
		this.#deltaTaps = acceptDeltaTaps(pinned);
		this.#observed();
		// XState types a state value's map as possibly undefined per key; the chart's never are.
		return pinned as unknown as AgentActor;
	}

	/** Steering queue mode; anything but `"all"` or `"one-at-a-time"` throws a `TypeError`. @example agent.steeringMode = "all"; */
	get steeringMode(): QueueMode {
		return this.#queues().steeringMode;
	}
	set steeringMode(mode: QueueMode) {
		checkedQueueMode("agent.steeringMode", mode, true);
		// Asked first: a machine that has ended hands its queues and modes back before this one changes.
		const machine = this.#commandableMachine();
		this.#steeringMode = mode;
		this.#queueCommand(machine, { type: "queue.mode", queue: "steering", mode });
	}

	/** Follow-up queue mode; anything but `"all"` or `"one-at-a-time"` throws a `TypeError`. @example agent.followUpMode = "all"; */
	get followUpMode(): QueueMode {
		return this.#queues().followUpMode;
	}
	set followUpMode(mode: QueueMode) {
		checkedQueueMode("agent.followUpMode", mode, true);
		// Asked first: a machine that has ended hands its queues and modes back before this one changes.
		const machine = this.#commandableMachine();
		this.#followUpMode = mode;
		this.#queueCommand(machine, { type: "queue.mode", queue: "followUp", mode });
	}

	/**
	 * Queues a message for the running agent: delivered after the current turn (its tool
	 * calls finish first), or at the start of the next run.
	 *
	 * @example
	 * agent.steer({ role: "user", content: "Use metric units.", timestamp: Date.now() });
	 */
	steer(message: AgentMessage): void {
		this.#assertWriter();
		assertAgentMessage(message, "steer(message)");
		this.#assertStorable(message, "steer(message)");
		if (this.#machine) this.#sendCommand(this.#machine, { type: "steer", message });
		else {
			this.#steering.push(message);
			this.#saveSoon();
		}
	}

	/**
	 * Queues a message for when the agent would otherwise stop.
	 *
	 * @example
	 * agent.followUp({ role: "user", content: "Now summarise.", timestamp: Date.now() });
	 */
	followUp(message: AgentMessage): void {
		this.#assertWriter();
		assertAgentMessage(message, "followUp(message)");
		this.#assertStorable(message, "followUp(message)");
		if (this.#machine) this.#sendCommand(this.#machine, { type: "followUp", message });
		else {
			this.#followUps.push(message);
			this.#saveSoon();
		}
	}

	/** @example agent.clearSteeringQueue(); */
	clearSteeringQueue(): void {
		const machine = this.#commandableMachine();
		this.#steering = [];
		this.#queueCommand(machine, { type: "queue.clear", queue: "steering" });
	}

	/** @example agent.clearFollowUpQueue(); */
	clearFollowUpQueue(): void {
		const machine = this.#commandableMachine();
		this.#followUps = [];
		this.#queueCommand(machine, { type: "queue.clear", queue: "followUp" });
	}

	/** @example agent.clearAllQueues(); */
	clearAllQueues(): void {
		this.clearSteeringQueue();
		this.clearFollowUpQueue();
	}

	/** @example if (agent.hasQueuedMessages()) await agent.continue(); */
	hasQueuedMessages(): boolean {
		const { steering, followUps } = this.#queues();
		return steering.length > 0 || followUps.length > 0;
	}

	/**
	 * The abort signal of the run in progress (undefined when idle).
	 *
	 * @example
	 * await fetch(url, { signal: agent.signal ?? null });
	 */
	get signal(): AbortSignal | undefined {
		return this.#run?.controller?.signal;
	}

	/**
	 * Aborts the run in progress (no-op when idle). A streaming reply ends with stopReason
	 * "aborted" and keeps its partial content; running tools see the aborted signal and their
	 * results are recorded; no further LLM call is made; queued messages stay queued.
	 *
	 * @example
	 * setTimeout(() => agent.abort(), 5000);
	 */
	abort(): void {
		const machine = this.#machine;
		if (!this.#run || this.#disposed || !machine) return;
		this.#run.abortSent = true;
		machine.send({ type: "abort" });
		// Called from a listener, the machine takes `abort` only after the step that called it;
		// pi's signal is aborted on the spot, so the run's is too (the chart's abortRun then finds
		// it aborted and does the rest: it decides, the signal only tells tools and the provider).
		(machine.getSnapshot().context.run?.controller ?? this.#run.controller)?.abort();
		this.#saveSoon();
	}

	/**
	 * A newer agent has the session (of this process: as soon as it is made; of another: at the first
	 * write its store refuses). Its run's writes are refused from then on, which ends what it was
	 * doing, but not a wait for approval: see {@link Agent.#endUnanswerableWait}.
	 */
	#listenForTakeOver(): void {
		const claim = this.#session.claim;
		if (!claim) return;
		// The claim tells only while a run waits for approval (see DurableSession.watchForTakeover),
		// also when it was superseded before (a later load of this process was decided first).
		this.#session.onTakenOver = () => queueMicrotask(() => this.#endUnanswerableWait());
	}

	/**
	 * Calls waiting for approval on a session a newer agent has: nobody can answer them here
	 * (`approve()` and `reject()` throw, and a question whose storing was refused is not asked), so
	 * the run ends, as on `abort()`, rather than wait for ever. The newer agent asks.
	 */
	#endUnanswerableWait(): void {
		if (this.#awaitingCalls().length > 0) this.abort();
	}

	/**
	 * Resolves when no run is in progress (after the `agent_end` listeners settled). It starts
	 * nothing: a message queued on an idle agent waits for the next `prompt()` or `continue()`.
	 *
	 * @example
	 * void agent.prompt("Summarise the report");
	 * agent.followUp(message); // taken by the run in progress
	 * await agent.waitForIdle();
	 */
	waitForIdle(): Promise<void> {
		return this.#run?.promise ?? Promise.resolve();
	}

	/**
	 * agentchart: the tool calls waiting for a person's decision, in source order.
	 *
	 * @example
	 * for (const call of agent.pendingApprovals) console.log(call.toolName, call.args, call.reason);
	 */
	get pendingApprovals(): PendingApproval[] {
		return this.#awaitingCalls().map(pendingApproval);
	}

	/**
	 * agentchart: approves a tool call waiting for approval (by its `callKey`, as
	 * `pendingApprovals` and `approval_requested` give it, which names its call before any call's
	 * id, or by its tool call id; a bare id that fits two waiting calls throws); it runs when its
	 * turn comes, with `options.arguments` instead of the model's if given (validated against the
	 * schema of the tool the run has, which a change of `state.tools` since does not replace). Throws
	 * for an id that is not waiting (unknown, answered already, or past its `approvalTimeoutMs`
	 * deadline, also one that passed while the process was down), and a `TypeError` for options
	 * other than `{ arguments }` (a misspelt `{ args }` would otherwise run the model's). Works on
	 * an agent restored in another process; there, a call whose tool's schema changed since it was
	 * asked and no longer accepts its arguments (`argsProblem` in `pendingApprovals`) is approved
	 * only with `{ arguments }` that fit (without, this throws). With a store, the returned promise resolves once the
	 * decision is stored: from then on a crash cannot lose it (when its journal entry fails, the
	 * snapshot after it stands in). It rejects when the store could store neither (also in
	 * `storeProblems`), for instance because an agent of another process loaded the session since
	 * (that agent asks again); a call whose approval is not stored then does not run either, since
	 * its intent cannot be stored. It rejects too when the run is aborted (or the agent disposed)
	 * before a store that has not answered confirms it. Not waiting for it is safe (the rejection is not reported as
	 * unhandled).
	 *
	 * @example
	 * agent.subscribe((event) => { if (event.type === "approval_requested") agent.approve(event.callKey); });
	 */
	approve(toolCallId: string, options: ApproveOptions = {}): Promise<void> {
		const problem = decisionProblem("approve", options);
		if (problem !== undefined) throw new TypeError(`agentchart: approve(${shown(toolCallId)}, options): ${problem}`);
		const { call, machine, decidedAt } = this.#decisionFor(toolCallId);
		let args: unknown;
		if (options.arguments !== undefined) {
			// The tool the call runs with is the run's: `state.tools` may have been changed for the next run since.
			const tool = machine.getSnapshot().context.tools.find((candidate) => candidate.name === call.toolCall.name);
			if (!tool) throw new Error(`agentchart: tool "${call.toolCall.name}" is not among the run's tools`);
			// Read as the JSON a model sends, which has no undefined: a field an approval screen cleared to
			// undefined is missing, not coerced to "" past a required check. What JSON cannot write is
			// refused first, with or without a store: validation quotes what it rejects as JSON, which a
			// BigInt would break with a bare TypeError.
			const where = unwritableJson(options.arguments, `approve(${shown(toolCallId)}, options).arguments`);
			if (where !== undefined) throw new TypeError(`agentchart: ${where}: tool arguments are JSON, as a model sends them`);
			const given = JSON.parse(JSON.stringify(options.arguments)) as ToolCallEntry["toolCall"]["arguments"];
			args = validateToolArguments(tool, { ...call.toolCall, arguments: given });
			this.#assertStorable(args, `approve(${shown(toolCallId)}, options).arguments`);
		} else if (call.argsProblem !== undefined) {
			throw new Error(
				`agentchart: tool call ${shown(toolCallId)} cannot be approved as it is: tool "${call.toolCall.name}" does not accept its stored arguments (the tool changed since the call was asked, or the snapshot was edited); approve it with { arguments } that fit, or reject it. ${call.argsProblem}`,
			);
		}
		// Journaled, the decision needs no snapshot (a restore sends it again): one would write the
		// whole transcript once more per approval (see #recordDecision for a write that failed).
		const stored = this.#recordDecision(machine, call, "approved", args, undefined, decidedAt);
		machine.send({ type: "approve", toolCallId: callKeyOf(call), args, decidedAt });
		return stored;
	}

	/**
	 * agentchart: rejects a tool call waiting for approval (by its `callKey`, as `approve`): it does not run, and the model gets an
	 * error result with `reason`. Throws for an id that is not waiting, and a `TypeError` for a
	 * reason that is not a text. With a store, the returned
	 * promise resolves once the decision is stored (see {@link Agent.approve}).
	 *
	 * @example
	 * await agent.reject("toolu_01", "not on production");
	 */
	reject(toolCallId: string, reason?: string): Promise<void> {
		const problem = decisionProblem("reject", reason);
		if (problem !== undefined) throw new TypeError(`agentchart: reject(${shown(toolCallId)}, reason): ${problem}`);
		const { call, machine, decidedAt } = this.#decisionFor(toolCallId);
		const stored = this.#recordDecision(machine, call, "rejected", undefined, reason, decidedAt);
		machine.send({ type: "reject", toolCallId: callKeyOf(call), reason, decidedAt });
		return stored;
	}

	/** The calls waiting for approval that no decision was sent for yet (and whose deadline is after `now`). */
	#awaitingCalls(now = Date.now()): ToolCallEntry[] {
		const run = this.#run ? this.#machine?.getSnapshot().context.run : undefined;
		// Aborted (from a listener, the chart takes it after the step): what waits is rejected, not
		// answerable; so is what waits in a reply that failed since it was asked (streaming mode).
		if (!run?.batch || run.controller.signal.aborted || replyFailed(run)) return [];
		return run.batch.calls.filter((call) => call.status === "awaiting-approval" && !this.#answered?.has(`${run.turn}:${call.key}`) && !approvalExpired(call, now));
	}

	/**
	 * The call a decision names, and when it was decided: the machine is told that time, so it takes
	 * the decision by the deadline this check passed it by, also when its clock ticked past it since.
	 */
	#decisionFor(toolCallId: string): { call: ToolCallEntry; machine: MachineActor; decidedAt: number } {
		this.#assertWriter();
		const decidedAt = Date.now();
		const waiting = this.#awaitingCalls(decidedAt);
		const machine = this.#machine;
		const calls = machine?.getSnapshot().context.run?.batch?.calls ?? [];
		const named = callsNamed(waiting, toolCallId);
		// A repeated id two of whose calls wait: taking the first would answer a row the person did not mean.
		if (named.length > 1) {
			const keys = named.map((entry) => `"${callKeyOf(entry)}"`).join(", ");
			throw new Error(`agentchart: tool call id "${toolCallId}" names ${named.length} calls waiting for approval (the reply repeats it): name one by its callKey (${keys}), as pendingApprovals and approval_requested give it`);
		}
		const call = named[0];
		if (!call || !machine) {
			const run = this.#run ? machine?.getSnapshot().context.run : undefined;
			if (run?.controller.signal.aborted) {
				throw new Error(`agentchart: tool call "${toolCallId}" is not waiting for approval: the run was aborted, which rejects every call waiting`);
			}
			// Calls the machine still has waiting that the facade does not offer: why not.
			const namedInBatch = callsNamed(calls.filter((entry) => entry.status === "awaiting-approval"), toolCallId);
			if (run && replyFailed(run) && namedInBatch.length > 0) {
				throw new Error(`agentchart: tool call "${toolCallId}" is not waiting for approval: the reply it came in failed (stopReason "${run.assistant?.stopReason}"), so it does not run`);
			}
			// Past its deadline, the timer's rejection (due now, or right after a restore) is the answer:
			// a decision that comes later, after a restart that outlasted the deadline say, is refused.
			const expired = namedInBatch.find((entry) => approvalExpired(entry, decidedAt));
			if (expired) {
				throw new Error(`agentchart: tool call "${toolCallId}" is not waiting for approval: its approvalTimeoutMs ran out before this decision, so it is rejected as timed out`);
			}
			// Each by its id, as the model gave it; by its callKey where two that wait share the id.
			const ids = waiting.map((entry) => (waiting.some((other) => other !== entry && other.toolCall.id === entry.toolCall.id) ? callKeyOf(entry) : entry.toolCall.id));
			throw new Error(`agentchart: tool call "${toolCallId}" is not waiting for approval (${ids.length > 0 ? `waiting: ${ids.join(", ")}` : "none is"})`);
		}
		return { call, machine, decidedAt };
	}

	/**
	 * A decision is journaled with its call, so a restored run never runs a call that was rejected
	 * (the journaled decision is sent again: see {@link Agent.#replayDecisions}). Resolves once stored.
	 */
	#recordDecision(machine: MachineActor, call: ToolCallEntry, decision: "approved" | "rejected", args: unknown, reason: string | undefined, decidedAt: number): Promise<void> {
		const run = machine.getSnapshot().context.run;
		if (!run) return Promise.resolve();
		(this.#answered ??= new Set()).add(`${run.turn}:${call.key}`);
		// A command made before it (a steer, a follow-up) is stored before it: the process may exit once the decision is.
		this.#session.takeRequestedSave(this.#handles.takeSnapshot);
		const written = this.#session.journal.append({ kind: "approval", phase: "decided", effect: toolEffectId(run.id, run.turn, call.key), toolCallId: call.toolCall.id, decision, args, reason, decidedAt });
		if (!written) return Promise.resolve();
		// Its entry failed: the snapshot after this step carries the decision (the machine has it by
		// then), so it is stored if that snapshot is. Rejects when neither is (also in storeProblems);
		// marked handled, so that a caller that does not wait (a listener answering at once) gets no
		// unhandled rejection.
		const stored = Promise.resolve(written).then(noop, () => this.#session.storeInSnapshot());
		// A write the store never answers holds the call, not abort() or dispose(): once the run is
		// aborted, the decision's promise says it was not confirmed stored rather than wait for ever.
		const settled = unlessAborted(stored, run.controller.signal, () => new Error(`agentchart: the ${decision === "approved" ? "approval" : "rejection"} of tool call "${call.toolCall.id}" was not confirmed stored: the run was aborted while the store had not answered its write (the call did not run)`));
		settled.catch(noop);
		return settled;
	}

	/**
	 * Calls waiting for approval whose decision the journal has (made before a restart, or before
	 * a restart made the reply streaming them be closed again) get it again, and are not asked
	 * about twice. A call asked about for the first time is journaled as asked: a restart in the
	 * middle of its reply keeps it (see `startedDuring` in the journal).
	 */
	#replayDecisions(machine: MachineActor): void {
		const run = machine.getSnapshot().context.run;
		if (!run?.batch) return;
		for (const call of run.batch.calls) {
			if (call.status !== "awaiting-approval" || this.#answered?.has(`${run.turn}:${call.key}`)) continue;
			const decided = this.#session.journal.lookup(toolEffectId(run.id, run.turn, call.key))?.decision;
			if (!decided) continue;
			// An approval whose arguments the tool no longer takes (changed since): a person decides again.
			if (decided.decision === "approved" && approvedArguments(findTool(machine.getSnapshot().context.tools, call.toolCall.name), call, decided.args).problem !== undefined) continue;
			(this.#answered ??= new Set()).add(`${run.turn}:${call.key}`);
			// Stored, so made in time: an entry from before decisions kept their time counts as made before any deadline.
			const decidedAt = decided.decidedAt ?? 0;
			const callKey = callKeyOf(call);
			if (decided.decision === "approved") machine.send({ type: "approve", toolCallId: callKey, args: decided.args, decidedAt });
			else machine.send({ type: "reject", toolCallId: callKey, reason: decided.reason, decidedAt });
		}
	}

	/**
	 * A call is asked about: journaled as asked (with its reply's model call while that streams);
	 * decided already, answered at once. True when the question was queued for the listeners here.
	 */
	#approvalRequested(event: Extract<AgentEvent, { type: "approval_requested" }>): boolean {
		const toolCallId = event.toolCallId;
		const machine = this.#machine;
		const run = machine?.getSnapshot().context.run;
		const batch = run?.batch;
		const call = batch?.calls.find((entry) => entry.status === "awaiting-approval" && callKeyOf(entry) === event.callKey);
		if (!machine || !run || !batch || !call) return false;
		const effect = toolEffectId(run.id, run.turn, call.key);
		const record = this.#session.journal.lookup(effect);
		// Decided before a restart: answered at once, nobody is asked (an answer would find it answered).
		if (record?.decision) {
			this.#replayDecisions(machine);
			return true;
		}
		// Asked before the restart, and asked again as a restored streaming run closes the reply that
		// was streaming: the agent lists it in pendingApprovals once it is returned; it is not asked
		// twice. Nor is a question nobody listens to when it is asked (a run `Agent.load` restored
		// goes on to it before the caller could subscribe): it is in pendingApprovals, where the code
		// answers it; announced later, to a listener subscribed since, it would be answered twice.
		const askedBefore = (this.#restoring && record?.request !== undefined) || !this.#delivery.listening();
		const streamedFrom = batch.mode === "streaming" ? modelEffectId(run.id, run.attempt) : undefined;
		const reasoning = streamedFrom === undefined ? undefined : streamedReasoning(this.#session.journal, streamedFrom, batch.assistant.content, call.toolCall);
		void this.#session.journal.append({ kind: "approval", phase: "requested", effect, toolCallId, toolName: call.toolCall.name, args: call.args, call: call.toolCall, streamedFrom, ...(reasoning ? { reasoning } : {}), deadline: call.approval?.deadline });
		this.#session.watchForTakeover();
		if (askedBefore) return true;
		if (!this.#session.saves) return false;
		// A person is asked only once the question's save has settled: stored, a crash after it cannot
		// lose it; failed (in storeProblems), the question lives here until a later save carries it. An
		// abort does not wait for the store (one that never answers would hold the run forever).
		// Not at all once a newer agent took the session (another process's, unbeknown to this one
		// until its write was refused): that agent asks, and an answer here could not be stored.
		const session = this.#session;
		const signal = this.#delivery.signal;
		this.#delivery.hold(() => unlessAborted(session.saveNow(this.#handles.takeSnapshot), signal));
		this.#delivery.eventIf(event, () => {
			if (!session.takenOver) return true;
			queueMicrotask(() => this.#endUnanswerableWait());
			return false;
		});
		return true;
	}

	/**
	 * agentchart: the agent as plain JSON, at any moment: the transcript, the queues and their
	 * modes, where the run is in the chart, its calls in flight and what the journal knows of
	 * them, the calls waiting for approval. `Agent.restore(snapshot, options)` continues from it,
	 * in this process or another.
	 *
	 * @example
	 * await writeFile("agent.json", JSON.stringify(agent.snapshot()));
	 */
	snapshot(): AgentSnapshot {
		const journal = this.#session.journal;
		const running = this.#run !== undefined && this.#machine !== undefined;
		const machine = running ? this.#persistMachine(this.#machine as MachineActor) : this.#persistIdle();
		// Called from a listener, abort() reaches the machine after the step in progress: the snapshot says it is on its way.
		const abortPending = running && this.#run?.abortSent === true && machine.status === "active" && machine.context.run !== undefined && machine.context.run.aborted !== true;
		const transcript = running ? this.#transcriptBeside(machine.context.messages) : undefined;
		// The error the run's events on their way will set: a restored agent is not told them again.
		const ahead = running ? this.#run?.errorAhead : undefined;
		const agent: AgentSnapshot["agent"] = { errorMessage: ahead ? ahead.error : this.#state.errorMessage };
		if (abortPending) agent.abortPending = true;
		if (transcript) agent.transcript = transcript;
		return {
			format: SNAPSHOT_FORMAT,
			version: SNAPSHOT_VERSION,
			createdAt: new Date().toISOString(),
			// With a store, the session it is stored in (see #assertRunnable).
			sessionId: this.#session.saves ? this.#session.sessionId : this.sessionId,
			machine,
			// A run that has ended (its last events on their way to the listeners) is in the transcript: its entries are not needed again.
			journal: machine.context.run ? journal.entries.slice() : [],
			journalSeq: journal.nextSeq - 1,
			...(this.#session.lineage === undefined ? {} : { lineage: this.#session.lineage }),
			agent,
		};
	}

	/**
	 * `agent.state.messages` as the run's end would save it, when the caller changed it during the
	 * run (it is then not the run's transcript, `runMessages`, as far as its events have reached the
	 * listeners); undefined when it was not changed. The run's messages whose events are still on
	 * their way follow it: the restored agent has them, and their events are not told again.
	 */
	#transcriptBeside(runMessages: readonly AgentMessage[]): AgentMessage[] | undefined {
		const run = this.#run;
		if (!run) return undefined;
		const shown = this.#state.messages;
		const { own } = run;
		// A copy of the array is no change (state libraries copy); a message put in, taken out or
		// replaced in place is.
		if (!run.callerChanged && shown.length === own.length && shown.every((message, index) => message === own[index])) return undefined;
		const compacted = run.compacted;
		// With a compaction the listeners have not reached, theirs will be its outcome followed by
		// the caller's messages (see "agentchart.transcript" in #onEmitted).
		const base = compacted ? [...compacted.messages, ...callerAdditions(shown, compacted.replaced)] : shown.slice();
		const last = compacted ? compacted.messages.at(-1) : own.at(-1);
		const at = last === undefined ? -1 : runMessages.lastIndexOf(last);
		// The run's messages whose events are still on their way follow.
		if (last === undefined || at >= 0) base.push(...runMessages.slice(at + 1));
		return base;
	}

	/** The running machine, persisted (its context as plain data). */
	#persistMachine(machine: MachineActor): PersistedAgentMachine {
		const persisted = machine.getPersistedSnapshot() as unknown as PersistedAgentMachine;
		let context = persistAgentContext(persisted.context);
		// The start's wait is for the caller's code after prompt() (#start), not part of the run: what
		// restores the snapshot sets its own wait, and a bare machine (or an agentchart before
		// "start") restored from it would otherwise wait at the start for a barrier nobody answers.
		if (context.awaitDelivery === "start") context = { ...context, awaitDelivery: false };
		const untaken = this.#untakenCommandSeq(machine);
		if (untaken === undefined) return { ...persisted, context };
		// A listener's steer(), followUp() or queue change waits while the machine finishes the step
		// that called it; the chart takes each as a plain assignment of the queues, so the snapshot
		// has them as the machine will (a copy: the chart's own plain context is shared).
		const queues = this.#queuesIn(machine);
		return { ...persisted, context: { ...context, steeringQueue: [...queues.steering], followUpQueue: [...queues.followUps], steeringMode: queues.steeringMode, followUpMode: queues.followUpMode, commandSeq: untaken } };
	}

	/** The number of the last queue command sent to `machine` and not taken yet, or undefined when it took them all. */
	#untakenCommandSeq(machine: MachineActor): number | undefined {
		this.#forgetTakenCommands(machine);
		const sent = this.#sentCommands;
		return sent === undefined || sent.length === 0 ? undefined : (sent[sent.length - 1] as SentCommand).seq;
	}

	/**
	 * An agent between runs, persisted as a machine waiting in `idle` with the context its state
	 * makes: what `getPersistedSnapshot()` of such a machine gives, without making one.
	 */
	#persistIdle(): PersistedAgentMachine {
		return { status: "active", output: undefined, error: undefined, value: "idle", historyValue: {}, context: plainFreshContext(initialContext(this.#machineInput())), children: {} };
	}

	/**
	 * agentchart: with a store, saves the session now (after the saves already under way); without
	 * one, does nothing. The agent saves by itself where its journal cannot stand for it (a new
	 * session's first run, a wait for approval, every command; an ongoing session's runs are
	 * journaled instead, see docs/durable.md); call this after changing `agent.state` between runs.
	 * Rejects when the store could not write the snapshot, or a write before it that no earlier
	 * `save()` or `saved()` reported (each is also in {@link Agent.storeProblems}); with a
	 * `SessionTakenOverError` once a newer agent has the session.
	 *
	 * @example
	 * agent.state.messages = edited; await agent.save();
	 */
	save(): Promise<void> {
		const session = this.#session;
		return session.saveNow(this.#handles.takeSnapshot).then(() => session.reportFailedWrites());
	}

	/**
	 * agentchart: resolves once every write the agent has made or asked for so far is stored (at
	 * once without a store). Unlike {@link Agent.save} it takes no snapshot of its own: it waits for
	 * the writes the agent makes by itself, such as the entry (or snapshot) that ends a run. Rejects, naming them, when
	 * writes failed since the last `save()` or `saved()` (also in {@link Agent.storeProblems}), also
	 * when a snapshot written after them stands in for what they would have stored. Once a newer
	 * agent has the session, the rejection is a `SessionTakenOverError` (load the session again).
	 *
	 * @example
	 * await agent.prompt("Refund order 42");
	 * await agent.saved(); // the run's end is in the store: the process may exit
	 */
	saved(): Promise<void> {
		const session = this.#session;
		return session.settled().then(() => session.reportFailedWrites());
	}

	/** agentchart: what the store reported (failed writes, what a load had to leave out), oldest first. */
	get storeProblems(): readonly string[] {
		return this.#session.problems;
	}

	/**
	 * agentchart: an agent continuing from a snapshot. The transcript, model, system prompt, queues
	 * and run come from the snapshot; the functions from `options`: the tools (by name, in
	 * `options.initialState.tools`: a tool the snapshot names that is missing is an error), the
	 * stream function, the hooks, the listeners (`options.listeners`: a run restored mid-way goes
	 * on at once, as does a run whose prompt the journal holds after this snapshot). What a crash
	 * interrupted follows the journal: a call that ended is not made again; a model request in
	 * flight is made again; a tool call in flight runs again only if its tool is `replay: "safe"`,
	 * else the model is told it was interrupted. Await the run with `waitForIdle()`. Throws, naming
	 * the field, for a snapshot that is not one this agentchart reads (newer, edited or damaged),
	 * and a `TypeError` for a setting in `options` no run can use (the one `prompt()` would throw).
	 *
	 * @example
	 * const agent = Agent.restore(JSON.parse(await readFile("agent.json", "utf8")), { initialState: { tools }, streamFn, listeners: [log] });
	 * agent.approve("toolu_01");
	 * await agent.waitForIdle();
	 */
	static restore(snapshot: AgentSnapshot, options: AgentOptions = {}): Agent {
		assertAgentOptions(options, "Agent.restore", (snapshot as Partial<AgentSnapshot> | null | undefined)?.sessionId);
		Agent.#assertSettings(options, "Agent.restore");
		return Agent.#restore(snapshot, options, false);
	}

	/**
	 * Throws a `TypeError` naming the setting when `options` hold one no run can use: a restore goes
	 * on with a run (or a compaction) the snapshot or journal has in progress as soon as it is made,
	 * before a `prompt()` could refuse the setting, and a run that failed on it there would leave
	 * the agent waiting for an end that never comes. Checked before a load opens the session.
	 */
	static #assertSettings(options: AgentOptions, call: string): void {
		// Read as an agent holds them (a null convertToLlm or toolExecution is the default, as in
		// pi): one made from the settings alone, with no store, transcript or listeners to touch.
		const { store: _store, sessionId: _sessionId, listeners: _listeners, initialState: _state, steeringMode: _steering, followUpMode: _followUps, ...settings } = options;
		new Agent(settings).#assertSettingsHeld(`${call}(options).`);
	}

	/** Throws a `TypeError` naming the setting (after `owner`) this agent holds that no run can use. */
	#assertSettingsHeld(owner: string): void {
		const fields = this as unknown as Record<string, unknown>;
		for (const key of CHECKED_SETTINGS) {
			if (fields[key] === null && NULL_IS_NONE.has(key)) continue;
			const problem = settingProblem(key, fields[key]);
			if (problem) throw new TypeError(`${owner}${key} ${problem}`);
		}
		const streamProblem = streamOptionsProblem(fields, owner.slice(0, -1));
		if (streamProblem) throw new TypeError(streamProblem);
	}

	/**
	 * The snapshot as this agentchart reads it, and the tools it names as `options` give them.
	 * Throws for a snapshot it does not read (newer, edited, damaged) or a tool it names that
	 * `options` lack: checked before anything is made (an idle snapshot with a missing tool fails
	 * too, not only when a run goes on).
	 */
	static #readRestorable(snapshot: AgentSnapshot, options: AgentOptions): { read: AgentSnapshot; runtimeTools: AnyAgentTool[]; given: AnyAgentTool[] } {
		const read = readAgentSnapshot(snapshot);
		const given = options.initialState?.tools ?? [];
		const hydrated = hydrateAgentContext(read.machine.context, { tools: given, config: {} }, loopConfig);
		// A run in progress goes on from the chart's state: one the chart does not have fails here,
		// before `Agent.load` opens the session (the actor is never started: nothing runs).
		if (read.machine.status === "active" && read.machine.context.run) {
			// The stored JSON first: a state value naming "constructor" trips XState's own lookup.
			assertRestorableRun(read.machine);
			restoredMachine(runLogic(), { ...read.machine, context: hydrated });
			// The run goes on without a prompt() to check its tools: a tool it would call and could not
			// run (no execute, a schema that is none) would use up a person's approval on an error.
			assertValidTools(mergeTools(hydrated.tools, given));
		}
		return { read, runtimeTools: hydrated.tools, given };
	}

	/** {@link Agent.restore}; `stored`: the snapshot and its journal are what the agent's store holds. */
	static #restore(snapshot: AgentSnapshot, options: AgentOptions, stored: boolean): Agent {
		const { read, runtimeTools, given } = Agent.#readRestorable(snapshot, options);
		const context = read.machine.context;
		const agent = new Agent({
			...options,
			initialState: { ...options.initialState, systemPrompt: context.systemPrompt, model: context.model, thinkingLevel: context.thinkingLevel, tools: mergeTools(runtimeTools, given), messages: context.messages },
			steeringMode: context.steeringMode,
			followUpMode: context.followUpMode,
			sessionId: options.sessionId ?? read.sessionId,
		});
		agent.#restoreFrom(read, stored);
		return agent;
	}

	/**
	 * agentchart: the session stored under `options.sessionId` in `options.store`, continued (see
	 * {@link Agent.restore}), or a new agent when nothing is stored. What the store had to leave
	 * out (a write a crash cut short) is in `agent.storeProblems`. The session is opened before it
	 * is read: from then on this agent writes it, and an agent that opened it before (here, or in
	 * another process on a store that tells, as the file store does) has its writes refused with
	 * `SessionTakenOverError`. It reads once the writes the older agent had handed to the store
	 * have landed; until it has made its agent, that agent's writes wait. A load that fails (the
	 * store cannot read the session) withdraws its opening in this process: the agent it would have
	 * superseded writes on, its writes of that time stored. Before it opens the session for the
	 * store, it looks at it (`store.load(id, { peek: true })`): a session this agent cannot continue
	 * (a snapshot this agentchart does not read, a tool it names that `options` lack, a run in a
	 * state the chart does not have; before that, a setting in `options` no run can use) fails the load there, and the agent that writes it, in another
	 * process too, writes on. A run the store's journal started and did not end starts again: its
	 * prompt joins `agent.state.messages` as its events reach the listeners, so wait for
	 * `waitForIdle()` before reading the transcript to decide whether to prompt.
	 *
	 * @example
	 * const agent = await Agent.load({ store: createFileStore("./sessions"), sessionId: "user-42", initialState: { model, tools }, streamFn });
	 * await agent.waitForIdle(); // a run a restart interrupted goes on by itself
	 * if (agent.state.messages.length === 0) await agent.prompt("hello");
	 */
	static async load(options: AgentOptions & { store: AgentStore; sessionId: string }): Promise<Agent> {
		assertAgentOptions(options, "Agent.load");
		if (options?.store === undefined) throw new TypeError("Agent.load(options).store: expected the AgentStore the session is kept in, got undefined");
		Agent.#assertSettings(options, "Agent.load");
		// Claimed at once (the newest load of this process writes the session), opened only once a
		// look at the session shows this agent can continue it (a snapshot this agentchart reads, the
		// tools it names): opening fences off the agents of other processes that opened it before, for
		// good, and one that cannot continue it would leave the session to nobody.
		const claim = new SessionClaim(options.store, options.sessionId, true);
		let agent: Agent;
		let loaded: LoadedSession | undefined;
		try {
			const look = checkedLoad(await options.store.load(options.sessionId, { peek: true }));
			if (look?.snapshot) Agent.#readRestorable(look.snapshot, options);
			// Opened once the writes the older agents of this process had handed to the store have
			// landed (later ones wait for this load), and before it is read: an agent that opened it
			// earlier, here or elsewhere, can no longer change what is read.
			await claim.landedBefore();
			await claim.open(options.store);
			loaded = checkedLoad(await options.store.load(options.sessionId));
			Agent.#claimToAdopt = claim;
			agent = loaded?.snapshot ? Agent.#restore(loaded.snapshot, options, true) : new Agent(options);
			claim.confirm();
		} catch (error) {
			// No agent came of it: the one it superseded writes on.
			claim.withdraw();
			throw error;
		} finally {
			Agent.#claimToAdopt = undefined;
		}
		// Before what the restore found: the store's problems say why (a snapshot it could not read, say).
		agent.#session.noteProblems(loaded?.problems ?? [], true);
		return agent;
	}

	#restoreFrom(snapshot: AgentSnapshot, fromStore: boolean): void {
		this.#restoring = true;
		try {
			this.#restoreRun(snapshot, fromStore);
		} finally {
			this.#restoring = false;
		}
	}

	#restoreRun(snapshot: AgentSnapshot, fromStore: boolean): void {
		const context = snapshot.machine.context;
		this.#steering = [...context.steeringQueue];
		this.#followUps = [...context.followUpQueue];
		this.#runs = context.runs ?? 0;
		this.#state.errorMessage = snapshot.agent.errorMessage;
		// Entries after the snapshot of another line are an agent's it replaced (journalAfter leaves them out; a store of one's own may not).
		const journal = snapshot.journal.filter((entry) => entry.seq <= snapshot.journalSeq || ofLineage(snapshot, entry));
		// Loaded, it goes on with the stored line; restored, it starts one of its own.
		this.#session = new DurableSession(this.#session.store, this.#session.sessionId, journal, snapshot.journalSeq, this.#session.take, this.#session.claim, snapshot.lineage, fromStore);
		this.#listenForTakeOver();
		if (snapshot.machine.status !== "active") return;
		// The transcript the caller changed during a run (which may have ended, its last events still
		// on their way) is the agent's: the run's end would have saved it.
		if (snapshot.agent.transcript) this.#state.messages = snapshot.agent.transcript;
		if (!context.run) {
			this.#restoreBetweenRuns(context, journal.length, snapshot.journalSeq, fromStore);
			return;
		}
		// Entries after the snapshot of another run than its own follow a snapshot this one is not (see
		// #restoreBetweenRuns): they cannot be placed, and the run's snapshots would say they had seen them.
		const runId = context.run.id;
		if (fromStore) this.#session.loadedInRun(Math.max(context.messages.length, snapshot.agent.transcript?.length ?? 0), journal.filter((entry) => entry.seq > snapshot.journalSeq).length);
		const stray = this.#leaveOutStrayEntries(snapshot.journalSeq, runId);
		if (stray) this.#session.noteProblems([`the journal holds ${stray.held} after the snapshot of runs other than its run in progress (${stray.runs}, where the snapshot is in ${runId}): ${stray.leftOut}, and the session goes on from the snapshot`]);
		// A run in progress: it goes on from where it was, on a machine restored from the snapshot.
		const hydrated = { ...snapshot.machine, context: hydrateAgentContext(context, { tools: this.#state.tools, config: this.#config() }, loopConfig) };
		// As every run: it waits if somebody watches (listeners given to restore are subscribed by now; a later one sends delivery.await).
		hydrated.context.awaitDelivery = this.#awaitsDelivery();
		const machine = restoredMachine(this.#logic, hydrated);
		const restored = machine.getSnapshot();
		// Queue commands sent from now on are numbered after those the stored machine took (see #forgetTakenCommands).
		this.#commandSeq = Math.max(this.#commandSeq, restored.context.commandSeq);
		const run = this.#startRun();
		if (snapshot.agent.transcript) {
			// The transcript is the caller's, its messages read apart from the machine's (copies of them
			// count as the run's, see callerAdditions): the run's own view is the machine's.
			run.callerChanged = true;
			run.own = hydrated.context.messages.slice();
		}
		this.#state.errorMessage = snapshot.agent.errorMessage;
		// Calls started before the restart and not ended are still pending: their end comes from this
		// agent (unless their reply was still streaming: it is made again, and its calls go with it).
		if (!restored.matches({ running: "streaming" })) for (const call of context.run.batch?.calls ?? []) if (call.started && call.status !== "settled") this.#state.callStarted(call.toolCall.id);
		this.#attach(machine);
		run.controller = machine.getSnapshot().context.run?.controller;
		this.#delivery.signal = run.controller?.signal ?? IDLE_SIGNAL;
		// The barrier the stored run waited at: its events were delivered before it was stored. Read
		// before the start, whose replay of a reply may reach a barrier of its own (acknowledged once
		// its events reach the listeners, as any other).
		const stored = machine.getSnapshot().context.barrier;
		// An abort() the stored machine had not taken yet: sent before the start, it is the first
		// event the restored machine takes, ahead of what its restored children tell it (a call in
		// flight made again), as the stored machine would have taken it after its step.
		if (snapshot.agent.abortPending === true) {
			run.abortSent = true;
			machine.send({ type: "abort" });
		}
		machine.start();
		// What waited on a clock waits again; a decision point that waited for delivery goes on.
		machine.send({ type: "agentchart.resumed" });
		machine.send({ type: "delivered", barrier: stored });
		this.#replayDecisions(machine);
		// Restored into a store that does not hold it: a run that waits for a person makes no write
		// until they answer, so the store would hold nothing of the question (a restart lost it).
		if (!fromStore && this.#session.saves && this.pendingApprovals.length > 0) this.#session.requestSave(this.#handles.takeSnapshot);
		if (this.pendingApprovals.length > 0) this.#session.watchForTakeover();
		void this.#awaitRestoredRun(run);
	}

	/**
	 * An agent restored between runs: the runs its journal ended after the snapshot are applied to
	 * the transcript; a run it started and did not end starts again, its effects following the
	 * journal. `journalSeq`: the snapshot's. `stored`: the store holds this snapshot and journal
	 * (then the next run needs no snapshot of its own).
	 */
	#restoreBetweenRuns(context: PlainAgentContext, entries: number, journalSeq: number, stored: boolean): void {
		const journal = this.#session.journal;
		let messages: AgentMessage[] | undefined;
		const runsBefore = this.#runs;
		let record = journal.lookup(`r${this.#runs + 1}`);
		// A manual compaction journaled to its end did not compact: it took the run's number, nothing else.
		while ((record?.start && record.end) || (record?.compactionStart && record.compactionEnd)) {
			if (record.start && record.end) (messages ??= [...this.#state.messages]).push(...record.start.messages, ...record.end.messages);
			this.#runs++;
			record = journal.lookup(`r${this.#runs + 1}`);
		}
		const applied = this.#runs !== runsBefore;
		if (applied) {
			if (messages) this.#state.messages = messages;
			// A run journaled to its end ended without an error (a compaction's start cleared it too).
			this.#state.errorMessage = undefined;
			const ended = `r${this.#runs}`;
			const last = journal.entries.find((entry) => entry.phase === "end" && entry.effect === ended);
			journal.forgetBefore((last?.seq ?? 0) + 1);
		}
		// What is left belongs to the next run, if anything. Entries of a later one follow a snapshot
		// this one is not: a store that fell back to the snapshot before a damaged one, whose journal
		// went on from the damaged one. They cannot be placed, and must not be journaled on: the next
		// run would take a number one of them has, and a later load would apply them after it. So
		// they are left out, and the next write is a snapshot (as for a session the store does not
		// hold as it is), which drops them from the store.
		const next = `r${this.#runs + 1}`;
		const stray = this.#leaveOutStrayEntries(journalSeq, next);
		if (stray) {
			this.#session.noteProblems([`the journal holds ${stray.held} of runs that do not follow the snapshot (${stray.runs}, where ${next} would be next), as when the store read the snapshot before a damaged one: ${stray.leftOut}, and the session goes on from the snapshot`]);
			stored = false;
		}
		let base: PlainAgentContext | undefined;
		if (stored) {
			base = applied ? Object.assign({}, context, { messages: this.#state.messages.slice(), runs: this.#runs }) : context;
			this.#session.loadedBetweenRuns(base, entries);
		}
		if (record?.start) this.#startAgain({ base, entry: record.start });
		else if (record?.compactionStart) this.#compactAgain({ base, entry: record.compactionStart });
	}

	/**
	 * Leaves out of the restored journal its entries after the snapshot (`journalSeq`) of another
	 * run than `runId`, the one the restore goes on with: they follow a snapshot this one is not
	 * and cannot be placed. Says, for a note in `storeProblems`, how many there were ("1 entry"),
	 * of which runs, and that they were left out ("it was left out"); undefined when none.
	 */
	#leaveOutStrayEntries(journalSeq: number, runId: string): { held: string; runs: string; leftOut: string } | undefined {
		const journal = this.#session.journal;
		const ofRun = (entry: StoredJournalEntry) => runOfEffect(entry.effect) === runId;
		const stray = journal.entries.filter((entry) => entry.seq > journalSeq && !ofRun(entry));
		if (stray.length === 0) return undefined;
		journal.retain((entry) => entry.seq <= journalSeq || ofRun(entry));
		const one = stray.length === 1;
		return { held: one ? "1 entry" : `${stray.length} entries`, runs: [...new Set(stray.map((entry) => runOfEffect(entry.effect)))].join(", "), leftOut: one ? "it was left out" : "they were left out" };
	}

	/**
	 * Makes again a manual compaction the journal says started on the restored snapshot and did not
	 * end: its listeners hear `auto_compaction_start`, then `auto_compaction_end`, and
	 * `waitForIdle()` waits for it (its `compact()` promise went with the process that called it).
	 */
	#compactAgain(start: JournaledCompaction): void {
		const run = this.#startRun();
		this.#compactionStart = start;
		this.#start({ type: "compact", instructions: start.entry.instructions });
		void this.#awaitRestoredRun(run);
	}

	/**
	 * A manual compaction's start, journaled (as a prompt's is, see {@link Agent.#promptEntry}) when
	 * the agent has a store: on what the store holds between runs, the agent saved first when that
	 * is not the agent as it is (a save asked for in this step is taken now, before the compaction
	 * starts, so that the snapshot is of the agent before it). Undefined without a store, or when
	 * the store holds no snapshot to journal after (a write failed: the snapshot saved at the end
	 * stands for the compaction).
	 */
	#journalCompactionStart(instructions: string | undefined): JournaledCompaction | undefined {
		const session = this.#session;
		if (!session.saves) return undefined;
		session.takeRequestedSave(this.#handles.takeSnapshot);
		const runs = this.#runCount();
		const base = this.#storedBase(runs);
		if (!base) return undefined;
		const entry: CompactionStart = instructions === undefined ? { kind: "compaction", phase: "start", effect: `r${runs + 1}` } : { kind: "compaction", phase: "start", effect: `r${runs + 1}`, instructions };
		const written = session.journal.append(entry);
		// Not stored: the compaction is saved in a snapshot of the agent as it compacts (a restore makes it again from there).
		if (written) void written.then(undefined, () => this.#saveSoon());
		return { base, entry };
	}

	/**
	 * A manual compaction that did not compact (it failed, or was aborted): its end is journaled, so
	 * that a restore does not make it again; saved as a snapshot when its start was not journaled on
	 * what the store holds, or the agent changed since (a `steer()` meanwhile, say).
	 */
	#journalCompactionEnd(event: Pick<Extract<AgentEvent, { type: "auto_compaction_end" }>, "aborted" | "errorMessage">): void {
		const started = this.#compactionStart;
		this.#compactionStart = undefined;
		if (!this.#session.saves) return;
		const base = started?.base;
		if (started && base) {
			const entry: CompactionEnd = { kind: "compaction", phase: "end", effect: started.entry.effect, outcome: event.aborted ? "aborted" : "failed" };
			if (event.errorMessage !== undefined) entry.errorMessage = event.errorMessage;
			// The compaction took a run's number; the transcript is as it was.
			const after = Object.assign({}, base, { runs: base.runs + 1 });
			if (this.#session.endRun(base, entry, after, () => this.#saveSoon())) return;
		}
		this.#saveSoon();
	}

	/** Starts again a run the journal says was prompted on the restored snapshot (its start is not journaled twice). */
	#startAgain(start: JournaledStart): void {
		this.#startJournaled = start;
		this.#runMachine({ type: "prompt", messages: start.entry.messages }).catch((error: unknown) => {
			this.#state.errorMessage = error instanceof Error ? error.message : String(error);
		});
	}

	async #awaitRestoredRun(run: ActiveRun): Promise<void> {
		try {
			await run.machineDone;
		} finally {
			this.#finishRun();
		}
	}

	/**
	 * Clears the transcript, runtime state and queues. Throws while a run is in progress.
	 *
	 * @example
	 * await agent.waitForIdle(); agent.reset();
	 */
	reset(): void {
		this.#assertWriter();
		if (this.#run) throw new Error(ALREADY_RESETTING);
		this.#state.messages = [];
		this.#state.settle();
		this.#state.errorMessage = undefined;
		this.#steering = [];
		this.#followUps = [];
		this.#machine?.send({ type: "reset" });
		// With a store: a cleared session must not come back, queued messages and all, after a restart.
		this.#saveSoon();
	}

	/**
	 * Starts a run with a user message (text and optional images), a message, or messages.
	 * Resolves when the run has ended and its `agent_end` listeners have settled.
	 *
	 * @example
	 * await agent.prompt("Describe this picture", [{ type: "image", data, mimeType: "image/png" }]);
	 */
	prompt(message: AgentMessage | AgentMessage[]): Promise<void>;
	prompt(input: string, images?: ImageContent[]): Promise<void>;
	async prompt(input: string | AgentMessage | AgentMessage[], images?: ImageContent[]): Promise<void> {
		this.#assertWriter();
		if (this.#run) throw new Error(ALREADY_PROMPTING);
		this.#assertRunnable();
		const messages = promptMessages(input, images);
		this.#assertStorable(messages, "prompt(...) messages");
		assertValidTools(this.#state.tools);
		this.#startEntry = this.#promptEntry(messages);
		await this.#runMachine({ type: "prompt", messages });
	}

	/**
	 * Continues from the current transcript: from a user or tool result tail, calls the model;
	 * from an assistant tail, runs queued steering (else follow-up) messages.
	 *
	 * @example
	 * agent.state.messages = savedMessages; await agent.continue();
	 */
	async continue(): Promise<void> {
		this.#assertWriter();
		if (this.#run) throw new Error(ALREADY_CONTINUING);
		this.#assertRunnable();
		const refusal = continueRefusal(this.#state.messages, this.hasQueuedMessages());
		if (refusal) throw new Error(refusal);
		assertValidTools(this.#state.tools);
		await this.#runMachine({ type: "continue" });
	}

	/**
	 * agentchart: compacts the transcript now (idle only): older messages are replaced by a
	 * structured summary, recent ones (`keepRecentTokens`) kept. Resolves with what was done;
	 * rejects when there is nothing to compact, the summariser fails, or `abort()` is called.
	 *
	 * @example
	 * const result = await agent.compact("Keep the file paths");
	 * console.log(result.tokensBefore, "→", result.tokensAfter);
	 */
	async compact(instructions?: string): Promise<CompactionResult> {
		this.#assertWriter();
		if (instructions !== undefined && typeof instructions !== "string") throw new TypeError(`agentchart: compact(instructions): instructions must be a string, got ${typeof instructions}`);
		if (this.#run) throw new Error(ALREADY_COMPACTING);
		this.#assertRunnable();
		// Journaled before it starts (the agent is saved first when the store does not hold it as it
		// is): a restart before it ended makes it again, as a run a restart interrupted goes on.
		const journaled = this.#journalCompactionStart(instructions);
		const run = this.#startRun();
		this.#compactionStart = journaled;
		const result = new Promise<CompactionResult>((resolve, reject) => {
			run.compaction = { resolve, reject };
		});
		this.#start({ type: "compact", instructions });
		try {
			return await result;
		} finally {
			await run.machineDone;
			this.#finishRun();
		}
	}

	/**
	 * agentchart: aborts any run, stops the machine and its children. Later calls to `prompt`,
	 * `continue`, `steer`, `followUp` and `reset` throw; the queues can still be read and
	 * cleared and the queue modes set (the agent keeps them from here on). A run in progress settles once its last
	 * events reached the listeners, or after `toolAbortGraceMs` if a listener still holds them.
	 *
	 * @example
	 * agent.dispose();
	 */
	dispose(): void {
		if (this.#disposed) return;
		this.#session.close(this.#handles.takeSnapshot);
		this.#disposed = true;
		// With a run in progress the machine closes it (agent_end, or auto_compaction_end for a
		// manual compaction) and delivery finishes it; otherwise nothing is left to wait for.
		this.#machine?.send({ type: "dispose" });
		if (!this.#run) this.#releaseMachine(true);
		else this.#settleWithinGrace(this.#run);
	}

	/**
	 * A listener that never returns would hold a disposed agent's `prompt()` for ever: the run
	 * waits for its last events to be delivered while they keep reaching the listeners, and at
	 * most `toolAbortGraceMs` for one a listener holds (0: as long as it takes). Events still
	 * queued reach the listeners if the one holding them ever returns.
	 */
	#settleWithinGrace(run: ActiveRun): void {
		const grace = this.toolAbortGraceMs;
		if (grace <= 0) return;
		let timer: ReturnType<typeof setTimeout>;
		let progress = this.#delivery.progress();
		const giveUpUnlessMoving = () => {
			// A timer is wall-clock time: on a loaded machine it can fire after listeners that were
			// merely slow, with the run's last events still on their way. Only a delivery that has
			// not moved for the whole grace is held by a listener.
			const now = this.#delivery.progress();
			if (now !== progress) {
				progress = now;
				arm();
				return;
			}
			if (run.compaction) {
				// Its end may never reach the listeners: journaled now, or a load would make again the compaction dispose ended.
				const errorMessage = "Compaction aborted: the agent was disposed";
				this.#journalCompactionEnd({ aborted: true, errorMessage });
				run.compaction.reject(new Error(errorMessage));
			}
			run.endMachine();
		};
		// Not unref'd: the timer lives only while a listener holds the run's last events (it is
		// cleared once they are delivered), and without it a program awaiting the run's prompt()
		// ended with code 13 (an unsettled top-level await) before the grace settled it.
		const arm = () => {
			timer = setTimeout(giveUpUnlessMoving, grace);
		};
		arm();
		void run.machineDone.then(() => clearTimeout(timer));
	}

	#assertUsable(): void {
		if (this.#disposed) throw new Error(DISPOSED);
	}

	/** Usable, and the writer of its stored session: what starts or answers work would write it. */
	#assertWriter(): void {
		this.#assertUsable();
		this.#session.assertWriter();
	}

	/**
	 * The queues and their modes as they are now: the agent's own while no machine runs; the
	 * machine's otherwise, with the queue commands it has not taken yet applied (a listener's
	 * `steer` waits in the mailbox while the machine finishes the step that called the listener).
	 */
	#queues(): { steering: readonly AgentMessage[]; followUps: readonly AgentMessage[]; steeringMode: QueueMode; followUpMode: QueueMode } {
		const machine = this.#commandableMachine();
		if (!machine) return { steering: this.#steering, followUps: this.#followUps, steeringMode: this.#steeringMode, followUpMode: this.#followUpMode };
		return this.#queuesIn(machine);
	}

	/** Sends a queue command, remembered until the machine has taken it (see #queuesIn). */
	#sendCommand(machine: MachineActor, command: QueueCommand): void {
		const seq = ++this.#commandSeq;
		(this.#sentCommands ??= []).push({ seq, command });
		machine.send({ ...command, seq });
		// Forgotten here too, not only when the queues are read: a pinned machine lives for the
		// agent's life, and an application that steers without reading would keep every message.
		this.#forgetTakenCommands(machine);
		this.#saveSoon();
	}

	/** Drops the sent commands the machine has taken (it takes them in the order they were sent). */
	#forgetTakenCommands(machine: MachineActor): void {
		const sent = this.#sentCommands;
		if (sent === undefined) return;
		const takenUpTo = machine.getSnapshot().context.commandSeq;
		let taken = 0;
		while (taken < sent.length && (sent[taken] as SentCommand).seq <= takenUpTo) taken++;
		if (taken > 0) sent.splice(0, taken);
	}

	/**
	 * A queue clear or mode change the caller made to the agent's own copy: sent to the machine
	 * that holds the queues, if one does; otherwise (between runs) that copy is what a snapshot
	 * stores, and it is saved as a command sent to the machine is. Not after `dispose()`: a
	 * disposed agent keeps its queues readable, it no longer writes.
	 */
	#queueCommand(machine: MachineActor | undefined, command: QueueCommand): void {
		if (machine) this.#sendCommand(machine, command);
		else if (!this.#disposed) this.#saveSoon();
	}

	/** With a store: the session is saved once the step in progress is over. */
	#saveSoon(): void {
		this.#session.requestSave(this.#handles.takeSnapshot);
	}


	/** A machine's queues and modes, with the queue commands it has not taken yet applied. */
	#queuesIn(machine: MachineActor): { steering: readonly AgentMessage[]; followUps: readonly AgentMessage[]; steeringMode: QueueMode; followUpMode: QueueMode } {
		const context = machine.getSnapshot().context;
		const queues = { steering: context.steeringQueue, followUps: context.followUpQueue, steeringMode: context.steeringMode, followUpMode: context.followUpMode };
		this.#forgetTakenCommands(machine);
		for (const { command: event } of this.#sentCommands ?? []) {
			if (event.type === "steer") queues.steering = [...queues.steering, event.message];
			else if (event.type === "followUp") queues.followUps = [...queues.followUps, event.message];
			else if (event.type === "queue.clear") queues[event.queue === "steering" ? "steering" : "followUps"] = [];
			else if (event.type === "queue.mode") queues[event.queue === "steering" ? "steeringMode" : "followUpMode"] = event.mode;
		}
		return queues;
	}

	/**
	 * A run, shaped as pi's (`prompt` → `runPromptMessages` → `runWithLifecycle` → the loop):
	 * `prompt()` and `waitForIdle()` settle in the same microtask as pi's do after the
	 * `agent_end` listeners, which code written for pi (pi's coding agent, among others) relies on.
	 */
	async #runMachine(command: AgentMachineCommand): Promise<void> {
		await this.#runWithLifecycle(command);
	}

	async #runWithLifecycle(command: AgentMachineCommand): Promise<void> {
		const run = this.#startRun();
		try {
			await this.#loop(run, command);
		} finally {
			this.#finishRun();
		}
	}

	async #loop(run: ActiveRun, command: AgentMachineCommand): Promise<void> {
		this.#start(command);
		await this.#runEnded(run);
	}

	/** pi's loop awaits its last `emit` one level below the caller's await; so does this. */
	async #runEnded(run: ActiveRun): Promise<void> {
		await run.machineDone;
	}

	#startRun(): ActiveRun {
		let resolve!: () => void;
		let endMachine!: () => void;
		const promise = new Promise<void>((done) => (resolve = done));
		const machineDone = new Promise<void>((done) => (endMachine = done));
		const run: ActiveRun = { promise, resolve, controller: undefined, machineDone, endMachine, own: this.#state.messages.slice() };
		this.#run = run;
		this.#state.isStreaming = true;
		this.#state.streamingMessage = undefined;
		this.#state.errorMessage = undefined;
		return run;
	}

	#finishRun(): void {
		this.#state.settle();
		// Messages the caller put in `state.messages` during the run are the agent's, not the run's: its
		// end, journaled or saved from the machine, does not carry them, so the agent is saved as it is.
		// A machine that failed at its start has no context to compare (its run ends all the same).
		const ran = this.#machine?.getSnapshot().context as AgentMachineContext | undefined;
		if (this.#session.saves && !this.#disposed && ran && !sameItems(this.#state.messages, ran.messages)) this.#saveSoon();
		const run = this.#run;
		this.#run = undefined;
		this.#answered = undefined;
		// Meant for this run's start only (a run that never reached it leaves them behind).
		this.#startEntry = undefined;
		this.#startJournaled = undefined;
		this.#startWait = false;
		this.#runBase = undefined;
		this.#compactionStart = undefined;
		this.#session.stopWatching();
		this.#session.forgetRun();
		this.#delivery.signal = IDLE_SIGNAL;
		if (!this.#pinned || this.#disposed) this.#releaseMachine(this.#disposed);
		else if (this.#machine) this.#forgetTakenCommands(this.#machine);
		run?.resolve();
	}

	/** Hands the run to the machine: started for it from the agent's data, or the pinned one brought up to date. */
	#start(command: AgentMachineCommand): void {
		const existing = this.#machine;
		const machine = this.#ensureMachine();
		if (existing) machine.send({ type: "update", ...this.#overrides() });
		if (command.type !== "prompt" && command.type !== "continue") {
			machine.send(command);
			return;
		}
		// Nobody to wait for: the run still waits once, at its start (see RunOverrides.awaitDelivery).
		this.#startWait = true;
		machine.send({ ...command, awaitDelivery: this.#awaitsDelivery() || "start" });
	}

	#ensureMachine(): MachineActor {
		if (this.#machine) return this.#machine;
		const machine = createActor(this.#logic, { input: this.#machineInput() });
		this.#attach(machine);
		machine.start();
		if (this.#disposed) machine.send({ type: "dispose" });
		return machine;
	}

	/**
	 * A machine's input: the agent's state, options and queues (a pinned machine's between runs)
	 * and its run count.
	 */
	#machineInput(): AgentMachineInput {
		const state = this.#state;
		const queues = this.#queues();
		return {
			systemPrompt: state.systemPrompt,
			model: state.model,
			thinkingLevel: state.thinkingLevel,
			tools: [...state.tools],
			messages: [...state.messages],
			config: this.#config(),
			steeringMode: queues.steeringMode,
			followUpMode: queues.followUpMode,
			steeringQueue: [...queues.steering],
			followUpQueue: [...queues.followUps],
			// Between runs the machine waits for deliveries; each run says whether it does (#start).
			awaitDelivery: true,
			runs: this.#runCount(),
		};
	}

	/**
	 * Runs the session started: a pinned machine's count while it lives (the agent takes the count,
	 * like the queues, back only when the machine is released).
	 */
	#runCount(): number {
		const machine = this.#commandableMachine();
		return machine ? machine.getSnapshot().context.runs : this.#runs;
	}

	#attach(machine: MachineActor): void {
		this.#machine = machine;
		this.#listenTo(machine);
		// Taps reach a machine through `agent.actor` (which pins the agent) only.
		this.#deltaTaps = this.#pinned ? acceptDeltaTaps(machine) : NO_TAPS;
	}

	/**
	 * Listens to what the machine emits: everything, with one wildcard listener, while nobody else
	 * has the machine (token deltas never go through its emitter then); every type but deltas once
	 * it is handed out (see {@link EMITTED_BUT_DELTAS}).
	 */
	#listenTo(machine: MachineActor): void {
		const onEmitted = (event: AgentMachineEmitted) => this.#onEmitted(event);
		// Unobserved, an error thrown inside the chart would go to the process as an uncaught exception.
		const failure = machine.subscribe({ error: (error: unknown) => this.#machineFailed(machine, error) });
		if (!this.#pinned) {
			const subscription = machine.on("*", onEmitted);
			this.#stopListening = () => {
				subscription.unsubscribe();
				failure.unsubscribe();
			};
			return;
		}
		const subscriptions = EMITTED_BUT_DELTAS.map((type) => machine.on(type, onEmitted));
		this.#stopListening = () => {
			for (const subscription of subscriptions) subscription.unsubscribe();
			failure.unsubscribe();
		};
	}

	/**
	 * The chart threw (a defect of agentchart's, or a stored run it cannot go on from): the run ends
	 * as pi ends a run whose loop threw, with a failed assistant message and `agent_end`, after an
	 * error result for each tool call the transcript leaves unanswered, so it stays valid for a
	 * provider. The agent is then idle and usable; with a store, it is saved as it is.
	 */
	#machineFailed(machine: MachineActor, error: unknown): void {
		const run = this.#run;
		if (!run || this.#machine !== machine) return;
		const errorMessage = `agentchart: the run stopped on an internal error: ${describeError(error)}`;
		const messages = this.#state.messages;
		const added: AgentMessage[] = unansweredToolCalls(messages).map((call) => toolResultMessage(call, errorResult(errorMessage)));
		added.push(createAssistantMessage(this.#state.model, { content: [{ type: "text", text: "" }], stopReason: "error", errorMessage }));
		messages.push(...added);
		run.own.push(...added);
		this.#state.errorMessage = errorMessage;
		this.#delivery.event({ type: "agent_end", messages: added });
		void run.promise.then(() => this.#saveSoon());
	}

	/** Takes back the queues and modes, and lets the machine go (stopped, or disposed). */
	#releaseMachine(disposed: boolean): void {
		const machine = this.#machine;
		if (!machine) return;
		this.#takeBackQueues(machine);
		if (disposed && this.#pinned) return; // a pinned machine stays readable, in `ended`
		this.#machine = undefined;
		// The marker only guards the machine in use: kept, it would hold a stopped machine (its
		// context, transcript and children) for as long as the agent lives.
		this.#queuesTakenFrom = undefined;
		this.#sentCommands = undefined;
		this.#deltaTaps = NO_TAPS;
		this.#stopListening = undefined;
		machine.stop();
	}

	/**
	 * The machine while it takes queue commands. A disposed agent's machine ends (it stays, in
	 * `ended`, when pinned, or until its run settles) and would drop them, with a warning of
	 * XState's; one that still has `dispose` in its mailbox would drop the ones sent after it.
	 * So from `dispose()` on, the agent keeps the queues and modes itself, starting from the
	 * machine's with the commands sent before `dispose` applied (nothing changes them after).
	 */
	#commandableMachine(): MachineActor | undefined {
		const machine = this.#machine;
		if (!machine || !this.#disposed) return machine;
		this.#takeBackQueues(machine);
		return undefined;
	}

	/** The machine's queues and modes become the agent's again (once per machine: later changes are the agent's). */
	#takeBackQueues(machine: MachineActor): void {
		if (this.#queuesTakenFrom === machine) return;
		this.#queuesTakenFrom = machine;
		const queues = this.#queuesIn(machine);
		this.#runs = machine.getSnapshot().context.runs;
		this.#steering = [...queues.steering];
		this.#followUps = [...queues.followUps];
		this.#steeringMode = queues.steeringMode;
		this.#followUpMode = queues.followUpMode;
	}

	#runState() {
		return {
			systemPrompt: this.#state.systemPrompt,
			model: this.#state.model,
			thinkingLevel: this.#state.thinkingLevel,
			tools: [...this.#state.tools],
			messages: [...this.#state.messages],
		};
	}

	/**
	 * Throws before a run when it could not start: a setting holds a value no run can use (set from
	 * JavaScript: `agent.toolExecution = "wild"`), or the agent's pinned machine failed (it takes no
	 * more commands: a run handed to it would wait for ever).
	 */
	#assertRunnable(): void {
		this.#assertMachineInput();
		// The store's session is claimed when the agent is made: a run under another name would be stored under the first.
		const session = this.#session;
		if (session.saves && this.sessionId !== session.sessionId) {
			throw new TypeError(`agent.sessionId is ${shown(this.sessionId)}, but this agent writes the stored session ${shown(session.sessionId)}: with a store, the session is fixed when the agent is made (open another with Agent.load)`);
		}
		const snapshot = this.#machine?.getSnapshot();
		if (snapshot?.status === "error") {
			throw new Error(
				`agentchart: this agent's machine (agent.actor) stopped on an internal error and takes no more runs: ${describeError(snapshot.error)}. Continue on a new agent: Agent.restore(agent.snapshot(), options)`,
				{ cause: snapshot.error },
			);
		}
	}

	/**
	 * Throws a `TypeError` naming the setting or state field when the agent's settings and state
	 * could not start a machine: asked before a run, and before `agent.actor` makes one (a machine
	 * made from them would fail at its start and take no run after the setting was put right).
	 */
	#assertMachineInput(): void {
		this.#assertSettingsHeld("agent.");
		// `agent.state` is as mutable as pi's: a run started from a state it cannot take failed inside the chart (with `model` null, the process).
		const stateProblem = runStateProblem(this.#state);
		if (stateProblem) throw new TypeError(`agent.state.${stateProblem.field} ${stateProblem.problem}`);
		// A command may leave the model out; the agent's state always has one, unless set to undefined.
		if (this.#state.model === undefined) throw new TypeError("agent.state.model must be a model object, got undefined");
	}

	/**
	 * Throws a `TypeError` when the agent saves its session and `value` (a command's input) is
	 * something no store could write: every save after it would fail (the snapshot holds it).
	 */
	#assertStorable(value: unknown, what: string): void {
		if (!this.#session.saves) return;
		const where = unwritableJson(value, what);
		if (where !== undefined) throw new TypeError(`agentchart: ${where}: an agent with a store keeps only what JSON can write (the store writes it)`);
	}

	#config(): Partial<AgentMachineConfig> {
		return {
			// A hook set to null is none (a stream function the default), as pi's Agent takes it (see NULL_IS_NONE).
			streamFn: this.streamFn ?? LOOP_DEFAULTS.streamFn,
			convertToLlm: this.convertToLlm,
			transformContext: this.transformContext ?? undefined,
			getApiKey: this.getApiKey ?? undefined,
			beforeToolCall: this.beforeToolCall ?? undefined,
			afterToolCall: this.afterToolCall ?? undefined,
			toolExecution: this.toolExecution,
			toolTimeoutMs: this.toolTimeoutMs,
			streamIdleTimeoutMs: this.streamIdleTimeoutMs,
			toolAbortGraceMs: this.toolAbortGraceMs,
			compaction: this.compaction,
			outputLimitRecovery: this.outputLimitRecovery,
			approvalTimeoutMs: this.approvalTimeoutMs,
			checkpoints: this.#session.saves,
			journal: this.#session.journal,
			deliveryPending: this.#handles.deliveryPending,
			deltaSink: this.#handles.deltaSink,
			streamOptions: new RunStreamOptions(this),
		};
	}

	#overrides() {
		return { state: this.#runState(), config: this.#config() };
	}

	/**
	 * Whether a run starting now waits for deliveries at its decision points: when somebody can act
	 * on its events before it decides (a listener, or one still being delivered to), and when its
	 * actor was handed out (its observers see the run rest at each decision, as always). Otherwise
	 * no decision can depend on a delivery, and waiting would change nothing but cost a machine
	 * event each time (see docs/performance.md, "Nobody to wait for").
	 */
	#awaitsDelivery(): boolean {
		return this.#pinned || this.#delivery.listening() || this.#delivery.pending() !== undefined;
	}

	/** Someone now watches the agent: a run that started with nobody to wait for waits from its next decision on. */
	#observed(): void {
		const machine = this.#machine;
		if (this.#run === undefined || machine === undefined) return;
		const snapshot = machine.getSnapshot();
		if (snapshot.status === "active" && snapshot.context.awaitDelivery !== true) machine.send({ type: "delivery.await" });
	}

	/** Everything the machine emits, in order: events for listeners, and the steps between them. */
	#onEmitted(event: AgentMachineEmitted): void {
		if (event.type === "agentchart.barrier") {
			const answer = () => {
				if (this.#machine?.getSnapshot().status === "active") this.#machine.send({ type: "delivered", barrier: event.barrier });
			};
			const atStart = this.#startWait;
			this.#startWait = false;
			// pi's loop awaits its first emits before it polls the steering queue, so a steer() on the
			// line after prompt() joins the first request: with nothing to deliver that takes a microtask.
			if (atStart && this.#delivery.pending() === undefined) queueMicrotask(() => this.#delivery.after(answer));
			else this.#delivery.after(answer);
			return;
		}
		if (event.type === "agentchart.transcript") {
			// Until the events before it reach the listeners, the run's transcript is compacted and
			// theirs is not: a snapshot meanwhile says what theirs will be (see #transcriptBeside).
			const run = this.#run;
			const compacted = { messages: event.messages, replaced: event.replaced };
			if (run) run.compacted = compacted;
			this.#delivery.after(() => {
				// Messages the caller put in `state.messages` while the run went on (the run does not see
				// them, as in pi, but the next one does) are not the compaction's to drop: they stay, after it.
				const added = callerAdditions(this.#state.messages, event.replaced);
				this.#state.messages = added.length === 0 ? event.messages : [...event.messages, ...added];
				if (run && run.compacted === compacted) run.compacted = undefined;
				if (run) run.own = event.messages.slice();
			});
			return;
		}
		if (event.type === "agentchart.checkpoint") {
			// The chart checkpoints a turn's end only when the turn did what the journal does not carry.
			if (event.at === "run-start" ? this.#journalRunStart() : event.at === "run-end" && this.#journalRunEnd()) return;
			this.#saveSoon();
			return;
		}
		// Said for a bare machine, which cannot throw to its sender; approve() and reject() throw before sending such a decision.
		if (event.type === "agentchart.approval.ignored") return;
		if (event.type === "approval_requested" && this.#approvalRequested(event)) return;
		const run = this.#run;
		if (run) {
			if (event.type === "auto_compaction_end" && event.willRetry) run.errorAhead = { event, error: undefined };
			else if (event.type === "turn_end") {
				const error = failureOf(event.message);
				if (error) run.errorAhead = { event, error };
			}
		}
		this.#delivery.event(event);
	}

	/**
	 * A run's start: its prompt journaled when the store holds the agent between runs as the run
	 * found it (what is stored and the prompt are the run's start), nothing when the journal started
	 * it again after a restore. False: the start is saved as a snapshot.
	 */
	#journalRunStart(): boolean {
		const start = this.#startEntry;
		this.#startEntry = undefined;
		const journaled = this.#startJournaled;
		if (journaled) {
			this.#startJournaled = undefined;
			this.#runBase = journaled.base ? journaled : undefined;
			return true;
		}
		if (!start) return false;
		const written = this.#session.journal.append(start.entry);
		this.#runBase = start;
		// Not stored: the run's start is saved as a snapshot after all.
		if (written) void written.then(undefined, () => this.#saveSoon());
		return true;
	}

	/**
	 * A run's end: journaled (what it added after its prompt) when it started with its prompt
	 * journaled and ended as the journal says: the transcript is what the store holds, the prompt and
	 * the run's replies and results, no reply failed, nothing else of the agent changed. False: the
	 * end is saved as a snapshot.
	 */
	#journalRunEnd(): boolean {
		const started = this.#runBase;
		this.#runBase = undefined;
		const base = started?.base;
		const machine = this.#machine;
		if (!started || !base || !machine) return false;
		const context = machine.getSnapshot().context;
		const messages = context.messages;
		const prompt = started.entry.messages;
		const before = base.messages.length;
		if (context.run?.failure !== undefined || context.runs !== base.runs + 1) return false;
		if (!itemsAt(messages, 0, base.messages) || !itemsAt(messages, before, prompt)) return false;
		const added = messages.slice(before + prompt.length);
		if (added.some(failedReply) || !this.#isAsStored(base, undefined, base.runs)) return false;
		// The chart's transcript is never changed in place (each message makes a new array).
		const after = Object.assign({}, base, { messages, runs: context.runs });
		return this.#session.endRun(base, { kind: "run", phase: "end", effect: started.entry.effect, messages: added }, after, () => this.#saveSoon());
	}

	/**
	 * The journal entry that starts a prompt's run on what the store holds between runs, when that
	 * is the agent as the run finds it (its transcript, queues, model, prompt and tools, all the same
	 * objects). When it is not (a new session, an agent changed since), the agent is saved first, as
	 * it is now, and the prompt journaled after it. Undefined without a store, or when a save asked
	 * for in this step is still to come (the run's start is then a snapshot).
	 */
	#promptEntry(messages: AgentMessage[]): JournaledStart | undefined {
		const session = this.#session;
		if (!session.saves || session.saveRequested) return undefined;
		const runs = this.#runCount();
		const base = this.#storedBase(runs);
		return base && { base, entry: { kind: "run", phase: "start", effect: `r${runs + 1}`, messages } };
	}

	/**
	 * What the store holds between runs, as the agent is now (after `runs` runs): the agent is saved
	 * first when the store holds something else. Undefined when it holds nothing a journal entry
	 * could follow (a write failed).
	 */
	#storedBase(runs: number): PlainAgentContext | undefined {
		const session = this.#session;
		const base = session.betweenRuns();
		if (base && this.#isAsStored(base, this.#state.messages, runs)) return base;
		void session.saveNow(this.#handles.takeSnapshot);
		return session.betweenRuns();
	}

	/**
	 * Whether the agent, with `messages` (undefined: not compared) and `runs`, is the agent between
	 * runs `context` describes.
	 */
	#isAsStored(context: PlainAgentContext, messages: readonly AgentMessage[] | undefined, runs: number): boolean {
		const state = this.#state;
		if (runs !== context.runs || state.systemPrompt !== context.systemPrompt || state.model !== context.model || state.thinkingLevel !== context.thinkingLevel) return false;
		if ((messages && !sameItems(messages, context.messages)) || state.tools.length !== context.tools.length) return false;
		for (let index = 0; index < state.tools.length; index++) if (state.tools[index]?.name !== context.tools[index]?.name) return false;
		const queues = this.#queues();
		return (
			queues.steeringMode === context.steeringMode &&
			queues.followUpMode === context.followUpMode &&
			sameItems(queues.steering, context.steeringQueue) &&
			sameItems(queues.followUps, context.followUpQueue)
		);
	}

	/** The state updates of one event, before listeners see it (pi's order). */
	#reduce(event: AgentEvent): void {
		const state = this.#state;
		switch (event.type) {
			case "agent_start":
			case "auto_compaction_start":
				if (this.#run && !this.#run.controller) {
					this.#run.controller = this.#machine?.getSnapshot().context.run?.controller;
					// Listeners get the run's signal from this event on.
					this.#delivery.signal = this.#run.controller?.signal ?? IDLE_SIGNAL;
				}
				break;
			case "auto_compaction_end":
				// The overflowed reply that set the error leaves the transcript and its call is retried:
				// the error no longer describes the run (pi's coding agent retries with continue(),
				// which clears it too).
				if (event.willRetry) state.errorMessage = undefined;
				if (this.#run?.errorAhead?.event === event) this.#run.errorAhead = undefined;
				break;
			// A token delta's update is the delivery's own (it never comes here).
			case "message_start":
				state.streamingMessage = event.message;
				break;
			case "message_end":
				state.streamingMessage = undefined;
				state.messages.push(event.message);
				this.#run?.own.push(event.message);
				break;
			case "tool_execution_start":
				state.callStarted(event.toolCallId);
				break;
			case "tool_execution_end":
				state.callEnded(event.toolCallId);
				break;
			case "turn_end": {
				const error = failureOf(event.message);
				if (error) state.errorMessage = error;
				if (this.#run?.errorAhead?.event === event) this.#run.errorAhead = undefined;
				break;
			}
			case "agent_end":
				state.streamingMessage = undefined;
				break;
		}
	}

	/** An event reached every listener: the end of the machine's run is an event too. */
	#delivered(event: AgentEvent, delivery: Promise<void>): void {
		const run = this.#run;
		if (!run) return;
		if (event.type === "agent_end") void delivery.then(run.endMachine);
		if (event.type === "auto_compaction_end" && event.reason === "manual") {
			void delivery.then(() => {
				run.endMachine();
				if (event.result) {
					// The journal carries a compaction's start, not the transcript it made: with a store, it is saved.
					this.#compactionStart = undefined;
					this.#saveSoon();
					run.compaction?.resolve(event.result);
				} else {
					this.#journalCompactionEnd(event);
					run.compaction?.reject(new Error(event.errorMessage ?? (event.aborted ? "Compaction aborted" : "Compaction failed")));
				}
			});
		}
	}

	#listenerFailed(message: string, event?: AgentEvent): void {
		// The first failure says why the run stopped: a later one is often its consequence (an
		// approve() the abort refused), and would hide it.
		const run = this.#run;
		if (run?.listenerFailed) return;
		if (run) run.listenerFailed = true;
		this.#state.errorMessage = message;
		if (this.#run && !this.#disposed) this.#machine?.send(event ? { type: "listener.error", error: message, during: event.type } : { type: "listener.error", error: message });
	}
}

/**
 * The messages of `shown` (the listeners' transcript) that a compaction replacing `replaced` does
 * not drop: those the caller put there. A message the transcript had is the compaction's, also as
 * an equal copy (a listener that replaced the transcript with copies of it, as state libraries and
 * redaction do): kept after it, it would bring the summarised history back.
 */
function callerAdditions(shown: readonly AgentMessage[], replaced: readonly AgentMessage[]): AgentMessage[] {
	const same = new Set(replaced);
	let copies: Set<string> | undefined;
	return shown.filter((message) => {
		if (same.has(message)) return false;
		copies ??= new Set(replaced.map(jsonOrNothing).filter((text): text is string => text !== undefined));
		const text = jsonOrNothing(message);
		return text === undefined || !copies.has(text);
	});
}

/** A message's JSON, or undefined when JSON cannot write it (without a store a tool's details may hold a BigInt). */
function jsonOrNothing(message: AgentMessage): string | undefined {
	try {
		return JSON.stringify(message);
	} catch {
		return undefined;
	}
}
