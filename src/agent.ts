import { type Actor, createActor } from "xstate";
import type { AgentActor } from "./machines/agent-actor.js";
import { agentMachine } from "./machines/agent-machine.js";
import { defaultLoopConfig, defaultModel } from "./machines/defaults.js";
import type { AgentLoopConfig, AgentMachineEmitted, CompactionSettings, OutputLimitRecovery } from "./machines/types.js";
import type {
	AfterToolCallHook,
	AgentEvent,
	AgentState,
	AgentThinkingLevel,
	AnyAgentTool,
	BeforeToolCallHook,
	CompactionResult,
	ConvertToLlm,
	GetApiKey,
	QueueMode,
	ToolExecutionMode,
	TransformContext,
} from "./types/agent.js";
import type { ImageContent } from "./types/content.js";
import type { AgentMessage } from "./types/messages.js";
import type { Model, SimpleStreamOptions, ThinkingBudgets, Transport } from "./types/model.js";
import type { StreamFn } from "./types/stream.js";
import { continueRefusal } from "./machines/continue-rules.js";
import { assertValidTools } from "./tools/tool-schema.js";
import { assertAgentMessage, assertTranscript, promptMessages } from "./agent-input.js";
import { describeError } from "./util/describe-error.js";

/** Options of {@link Agent}: pi 0.73.1's, plus agentchart's own (marked "agentchart"). */
export interface AgentOptions {
	/** Initial transcript, tools, model, system prompt and thinking level. */
	initialState?: Partial<Omit<AgentState, "pendingToolCalls" | "isStreaming" | "streamingMessage" | "errorMessage">> | undefined;
	convertToLlm?: ConvertToLlm | undefined;
	transformContext?: TransformContext | undefined;
	streamFn?: StreamFn | undefined;
	getApiKey?: GetApiKey | undefined;
	onPayload?: SimpleStreamOptions["onPayload"] | undefined;
	onResponse?: SimpleStreamOptions["onResponse"] | undefined;
	beforeToolCall?: BeforeToolCallHook | undefined;
	afterToolCall?: AfterToolCallHook | undefined;
	steeringMode?: QueueMode | undefined;
	followUpMode?: QueueMode | undefined;
	sessionId?: string | undefined;
	thinkingBudgets?: ThinkingBudgets | undefined;
	transport?: Transport | undefined;
	maxRetryDelayMs?: number | undefined;
	toolExecution?: ToolExecutionMode | undefined;
	/** agentchart: default tool timeout in ms (default 180000; 0 disables). */
	toolTimeoutMs?: number | undefined;
	/** agentchart: compaction settings (off by default). */
	compaction?: CompactionSettings | undefined;
	/** agentchart: request timeout passed to the provider (`timeoutMs` of every stream call). */
	timeoutMs?: number | undefined;
	/** agentchart: the provider's retries for transient failures (`maxRetries` of every stream call). */
	maxRetries?: number | undefined;
	/** agentchart: a call whose stream is silent this long (ms) ends as an error that says it stalled (default 120000; 0 disables). */
	streamIdleTimeoutMs?: number | undefined;
	/** agentchart: after abort(), how long (ms) running tools may take to stop before they are given up on (default 5000; 0 waits). */
	toolAbortGraceMs?: number | undefined;
	/** agentchart, opt-in: resume a reply cut off by the output token limit, at most `maxAttempts` times in a row. */
	outputLimitRecovery?: OutputLimitRecovery | undefined;
}

/** A subscriber: awaited, in subscription order, for every event. */
export type AgentListener = (event: AgentEvent, signal: AbortSignal) => Promise<void> | void;

const ALREADY_PROMPTING =
	"Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.";
const ALREADY_CONTINUING = "Agent is already processing. Wait for completion before continuing.";
const ALREADY_RESETTING = "Agent is already processing. Wait for completion before resetting.";
const ALREADY_COMPACTING = "Agent is already processing. Wait for completion before compacting.";
const DISPOSED = "Agent has been disposed: create a new Agent to run again.";

/** Given to listeners of events outside any run; never aborts. */
const IDLE_SIGNAL = new AbortController().signal;

/** A FIFO of emitted events that is cheap to shift from (no array re-indexing per event). */
class EventQueue {
	private items: AgentMachineEmitted[] = [];
	private head = 0;
	push(event: AgentMachineEmitted): void {
		this.items.push(event);
	}
	shift(): AgentMachineEmitted | undefined {
		if (this.head >= this.items.length) return undefined;
		const event = this.items[this.head];
		this.items[this.head] = undefined as unknown as AgentMachineEmitted;
		this.head++;
		if (this.head === this.items.length) {
			this.items = [];
			this.head = 0;
		}
		return event;
	}
}

/**
 * An LLM agent: a drop-in replacement for pi-agent-core 0.73.1's `Agent`, run by the
 * agentchart statechart (`agent.actor`).
 *
 * Listeners are awaited one at a time, in subscription order, and each sees `agent.state`
 * already updated for its event; the loop does not take its next decision (call the model,
 * run tools, take queued messages) until they have settled.
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
	convertToLlm: ConvertToLlm;
	transformContext?: TransformContext | undefined;
	streamFn: StreamFn;
	getApiKey?: GetApiKey | undefined;
	onPayload?: SimpleStreamOptions["onPayload"] | undefined;
	onResponse?: SimpleStreamOptions["onResponse"] | undefined;
	beforeToolCall?: BeforeToolCallHook | undefined;
	afterToolCall?: AfterToolCallHook | undefined;
	sessionId?: string | undefined;
	thinkingBudgets?: ThinkingBudgets | undefined;
	transport: Transport;
	maxRetryDelayMs?: number | undefined;
	toolExecution: ToolExecutionMode;
	/** agentchart: default tool timeout in ms (0 disables). */
	toolTimeoutMs: number;
	/** agentchart: compaction settings. */
	compaction?: CompactionSettings | undefined;
	/** agentchart: request timeout passed to the provider. */
	timeoutMs?: number | undefined;
	/** agentchart: the provider's retries for transient failures. */
	maxRetries?: number | undefined;
	/** agentchart: stall timeout of a call's stream in ms (0 disables). */
	streamIdleTimeoutMs: number;
	/** agentchart: how long running tools may take to stop after an abort, in ms (0 waits). */
	toolAbortGraceMs: number;
	/** agentchart: resume turns after the output token limit (off when undefined). */
	outputLimitRecovery?: OutputLimitRecovery | undefined;

	/** The running agent machine actor, for inspection and embedding. */
	readonly actor: AgentActor;

	private readonly listeners: AgentListener[] = [];
	private listenerCopy?: readonly AgentListener[] | undefined;
	private readonly queue = new EventQueue();
	private draining = false;
	private disposed = false;
	private running = false;
	private runSignal?: AbortSignal | undefined;
	private idleWaiters: (() => void)[] = [];
	private manualCompaction?: { resolve: (result: CompactionResult) => void; reject: (error: Error) => void } | undefined;

	private systemPrompt: string;
	private model: Model;
	private thinkingLevel: AgentThinkingLevel;
	private tools: AnyAgentTool[];
	private messages: AgentMessage[];
	private streamingMessage?: AgentMessage | undefined;
	private pendingToolCalls: ReadonlySet<string> = new Set();
	private errorMessage?: string | undefined;

	constructor(options: AgentOptions = {}) {
		const initial = options.initialState ?? {};
		this.systemPrompt = initial.systemPrompt ?? "";
		this.model = initial.model ?? defaultModel();
		this.thinkingLevel = initial.thinkingLevel ?? "off";
		if (initial.tools) assertValidTools(initial.tools);
		this.tools = initial.tools ? [...initial.tools] : [];
		if (initial.messages) assertTranscript(initial.messages, "initialState.messages");
		this.messages = initial.messages ? [...initial.messages] : [];
		const defaults = defaultLoopConfig();
		this.convertToLlm = options.convertToLlm ?? defaults.convertToLlm;
		this.transformContext = options.transformContext;
		this.streamFn = options.streamFn ?? defaults.streamFn;
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
		this.toolTimeoutMs = options.toolTimeoutMs ?? defaults.toolTimeoutMs;
		this.compaction = options.compaction;
		this.timeoutMs = options.timeoutMs;
		this.maxRetries = options.maxRetries;
		this.streamIdleTimeoutMs = options.streamIdleTimeoutMs ?? defaults.streamIdleTimeoutMs;
		this.toolAbortGraceMs = options.toolAbortGraceMs ?? defaults.toolAbortGraceMs;
		this.outputLimitRecovery = options.outputLimitRecovery;

		const actor: Actor<typeof agentMachine> = createActor(agentMachine, {
			input: {
				steeringMode: options.steeringMode ?? "one-at-a-time",
				followUpMode: options.followUpMode ?? "one-at-a-time",
				awaitDelivery: true,
			},
		});
		actor.on("*", (event) => this.enqueue(event));
		this.actor = actor;
		actor.start();
	}

	/**
	 * Adds a listener; returns a function that removes it. Listeners receive the run's abort
	 * signal.
	 *
	 * @example
	 * const unsubscribe = agent.subscribe(async (event) => { if (event.type === "agent_end") await save(); });
	 */
	subscribe(listener: AgentListener): () => void {
		this.listeners.push(listener);
		this.listenerCopy = undefined;
		return () => {
			const index = this.listeners.indexOf(listener);
			if (index >= 0) this.listeners.splice(index, 1);
			this.listenerCopy = undefined;
		};
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
		const agent = this;
		return {
			get systemPrompt() {
				return agent.systemPrompt;
			},
			set systemPrompt(value: string) {
				agent.systemPrompt = value;
			},
			get model() {
				return agent.model;
			},
			set model(value: Model) {
				agent.model = value;
			},
			get thinkingLevel() {
				return agent.thinkingLevel;
			},
			set thinkingLevel(value: AgentThinkingLevel) {
				agent.thinkingLevel = value;
			},
			get tools() {
				return agent.tools;
			},
			set tools(value: AnyAgentTool[]) {
				assertValidTools(value);
				agent.tools = [...value];
			},
			get messages() {
				return agent.messages;
			},
			set messages(value: AgentMessage[]) {
				assertTranscript(value, "state.messages");
				agent.messages = [...value];
			},
			get isStreaming() {
				return agent.running;
			},
			get streamingMessage() {
				return agent.streamingMessage;
			},
			get pendingToolCalls() {
				return agent.pendingToolCalls;
			},
			get errorMessage() {
				return agent.errorMessage;
			},
		};
	}

	/** Steering queue mode. @example agent.steeringMode = "all"; */
	get steeringMode(): QueueMode {
		return this.actor.getSnapshot().context.steeringMode;
	}
	set steeringMode(mode: QueueMode) {
		this.actor.send({ type: "queue.mode", queue: "steering", mode });
	}

	/** Follow-up queue mode. @example agent.followUpMode = "all"; */
	get followUpMode(): QueueMode {
		return this.actor.getSnapshot().context.followUpMode;
	}
	set followUpMode(mode: QueueMode) {
		this.actor.send({ type: "queue.mode", queue: "followUp", mode });
	}

	/**
	 * Queues a message for the running agent: delivered after the current turn (its tool
	 * calls finish first), or at the start of the next run.
	 *
	 * @example
	 * agent.steer({ role: "user", content: "Use metric units.", timestamp: Date.now() });
	 */
	steer(message: AgentMessage): void {
		this.assertUsable();
		assertAgentMessage(message, "steer(message)");
		this.actor.send({ type: "steer", message });
	}

	/**
	 * Queues a message for when the agent would otherwise stop.
	 *
	 * @example
	 * agent.followUp({ role: "user", content: "Now summarise.", timestamp: Date.now() });
	 */
	followUp(message: AgentMessage): void {
		this.assertUsable();
		assertAgentMessage(message, "followUp(message)");
		this.actor.send({ type: "followUp", message });
	}

	/** @example agent.clearSteeringQueue(); */
	clearSteeringQueue(): void {
		this.actor.send({ type: "queue.clear", queue: "steering" });
	}

	/** @example agent.clearFollowUpQueue(); */
	clearFollowUpQueue(): void {
		this.actor.send({ type: "queue.clear", queue: "followUp" });
	}

	/** @example agent.clearAllQueues(); */
	clearAllQueues(): void {
		this.actor.send({ type: "queue.clear", queue: "all" });
	}

	/** @example if (agent.hasQueuedMessages()) await agent.continue(); */
	hasQueuedMessages(): boolean {
		const { steeringQueue, followUpQueue } = this.actor.getSnapshot().context;
		return steeringQueue.length > 0 || followUpQueue.length > 0;
	}

	/**
	 * The abort signal of the run in progress (undefined when idle).
	 *
	 * @example
	 * await fetch(url, { signal: agent.signal });
	 */
	get signal(): AbortSignal | undefined {
		return this.running ? this.runSignal : undefined;
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
		if (this.disposed) return;
		this.actor.send({ type: "abort" });
	}

	/**
	 * Resolves when no run is in progress (after the `agent_end` listeners settled).
	 *
	 * @example
	 * agent.followUp(message); await agent.waitForIdle();
	 */
	waitForIdle(): Promise<void> {
		if (!this.running) return Promise.resolve();
		return new Promise((resolve) => this.idleWaiters.push(resolve));
	}

	/**
	 * Clears the transcript, runtime state and queues. Throws while a run is in progress.
	 *
	 * @example
	 * await agent.waitForIdle(); agent.reset();
	 */
	reset(): void {
		this.assertUsable();
		if (this.running) throw new Error(ALREADY_RESETTING);
		this.messages = [];
		this.streamingMessage = undefined;
		this.pendingToolCalls = new Set();
		this.errorMessage = undefined;
		this.actor.send({ type: "reset" });
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
		this.assertUsable();
		if (this.running) throw new Error(ALREADY_PROMPTING);
		const messages = promptMessages(input, images);
		const finished = this.beginRun();
		this.actor.send({ type: "update", ...this.runOverrides() });
		this.actor.send({ type: "prompt", messages });
		return finished;
	}

	/**
	 * Continues from the current transcript: from a user or tool result tail, calls the model;
	 * from an assistant tail, runs queued steering (else follow-up) messages.
	 *
	 * @example
	 * agent.state.messages = savedMessages; await agent.continue();
	 */
	async continue(): Promise<void> {
		this.assertUsable();
		if (this.running) throw new Error(ALREADY_CONTINUING);
		const { steeringQueue, followUpQueue } = this.actor.getSnapshot().context;
		const refusal = continueRefusal(this.messages, steeringQueue.length + followUpQueue.length > 0);
		if (refusal) throw new Error(refusal);
		const finished = this.beginRun();
		this.actor.send({ type: "update", ...this.runOverrides() });
		this.actor.send({ type: "continue" });
		return finished;
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
		this.assertUsable();
		if (this.running) throw new Error(ALREADY_COMPACTING);
		this.running = true;
		const finished = new Promise<CompactionResult>((resolve, reject) => {
			this.manualCompaction = { resolve, reject };
		});
		this.actor.send({ type: "update", ...this.runOverrides() });
		this.actor.send({ type: "compact", instructions });
		return finished;
	}

	/**
	 * agentchart: aborts any run, stops every child actor and ends the machine. Later calls
	 * to `prompt`, `continue`, `steer`, `followUp` and `reset` throw.
	 *
	 * @example
	 * agent.dispose();
	 */
	dispose(): void {
		if (this.disposed) return;
		const hadRun = this.actor.getSnapshot().context.run !== undefined;
		this.actor.send({ type: "dispose" });
		this.disposed = true;
		// With a run in progress the machine closes it (agent_end, or auto_compaction_end for a
		// manual compaction) and delivery finishes it; otherwise nothing is left to wait for.
		if (!hadRun && !this.draining) this.finishRun();
	}

	private assertUsable(): void {
		if (this.disposed) throw new Error(DISPOSED);
	}

	private beginRun(): Promise<void> {
		this.running = true;
		this.streamingMessage = undefined;
		this.errorMessage = undefined;
		return new Promise((resolve) => this.idleWaiters.push(resolve));
	}

	private runOverrides() {
		const config: Partial<AgentLoopConfig> = {
			streamFn: this.streamFn,
			convertToLlm: this.convertToLlm,
			transformContext: this.transformContext,
			getApiKey: this.getApiKey,
			beforeToolCall: this.beforeToolCall,
			afterToolCall: this.afterToolCall,
			toolExecution: this.toolExecution,
			toolTimeoutMs: this.toolTimeoutMs,
			compaction: this.compaction,
			streamIdleTimeoutMs: this.streamIdleTimeoutMs,
			toolAbortGraceMs: this.toolAbortGraceMs,
			outputLimitRecovery: this.outputLimitRecovery,
			streamOptions: {
				timeoutMs: this.timeoutMs,
				maxRetries: this.maxRetries,
				sessionId: this.sessionId,
				onPayload: this.onPayload,
				onResponse: this.onResponse,
				transport: this.transport,
				thinkingBudgets: this.thinkingBudgets,
				maxRetryDelayMs: this.maxRetryDelayMs,
			},
		};
		return {
			state: {
				systemPrompt: this.systemPrompt,
				model: this.model,
				thinkingLevel: this.thinkingLevel,
				tools: [...this.tools],
				messages: [...this.messages],
			},
			config,
		};
	}

	private enqueue(event: AgentMachineEmitted): void {
		this.queue.push(event);
		if (!this.draining) this.drain();
	}

	/**
	 * Delivers emitted events to listeners one at a time and acknowledges barriers in order.
	 * Synchronous listeners are called without a microtask per event; the first listener that
	 * returns a promise suspends delivery until it settles.
	 */
	private drain(): void {
		this.draining = true;
		for (let event = this.queue.shift(); event; event = this.queue.shift()) {
			if (event.type === "agentchart.barrier") {
				if (!this.disposed) this.actor.send({ type: "delivered", barrier: event.barrier });
				continue;
			}
			if (event.type === "agentchart.transcript") {
				this.messages = [...event.messages];
				continue;
			}
			this.beginDelivery(event);
			const pending = this.callListeners(event, this.listenerSnapshot(), 0);
			if (pending) {
				void pending.then(() => this.drain());
				return;
			}
		}
		this.draining = false;
	}

	private listenerSnapshot(): readonly AgentListener[] {
		// Copied once per change, not per event: unsubscribing mid-delivery must not skip anyone.
		this.listenerCopy ??= [...this.listeners];
		return this.listenerCopy;
	}

	private beginDelivery(event: AgentEvent): void {
		if (event.type === "agent_start" || (event.type === "auto_compaction_start" && event.reason === "manual")) {
			this.runSignal = this.actor.getSnapshot().context.run?.controller.signal ?? this.runSignal;
		}
		this.reduce(event);
	}

	private callListeners(event: AgentEvent, listeners: readonly AgentListener[], from: number): Promise<void> | undefined {
		const signal = this.runSignal ?? IDLE_SIGNAL;
		for (let index = from; index < listeners.length; index++) {
			let result: Promise<void> | void;
			try {
				result = (listeners[index] as AgentListener)(event, signal);
			} catch (error) {
				this.reportListenerError(error);
				continue;
			}
			if (result && typeof result.then === "function") {
				return result.then(
					() => this.callListeners(event, listeners, index + 1),
					(error: unknown) => {
						this.reportListenerError(error);
						return this.callListeners(event, listeners, index + 1);
					},
				);
			}
		}
		this.endDelivery(event);
		return undefined;
	}

	private reportListenerError(error: unknown): void {
		const message = describeError(error);
		this.errorMessage = message;
		if (!this.disposed) this.actor.send({ type: "listener.error", error: message });
	}

	private endDelivery(event: AgentEvent): void {
		if (event.type === "agent_end") this.finishRun();
		if (event.type === "auto_compaction_end" && event.reason === "manual") this.finishManualCompaction(event);
	}

	private finishManualCompaction(event: Extract<AgentEvent, { type: "auto_compaction_end" }>): void {
		const pending = this.manualCompaction;
		this.manualCompaction = undefined;
		this.finishRun();
		if (!pending) return;
		if (event.result) pending.resolve(event.result);
		else pending.reject(new Error(event.errorMessage ?? (event.aborted ? "Compaction aborted" : "Compaction failed")));
	}

	/** The state updates of one event, before listeners see it (pi's order). */
	private reduce(event: AgentEvent): void {
		switch (event.type) {
			case "message_start":
			case "message_update":
				this.streamingMessage = event.message;
				break;
			case "message_end":
				this.streamingMessage = undefined;
				this.messages.push(event.message);
				break;
			case "tool_execution_start": {
				const pending = new Set(this.pendingToolCalls);
				pending.add(event.toolCallId);
				this.pendingToolCalls = pending;
				break;
			}
			case "tool_execution_end": {
				const pending = new Set(this.pendingToolCalls);
				pending.delete(event.toolCallId);
				this.pendingToolCalls = pending;
				break;
			}
			case "turn_end": {
				const message = event.message as { role?: string; errorMessage?: string };
				if (message.role === "assistant" && message.errorMessage) this.errorMessage = message.errorMessage;
				break;
			}
			case "agent_end":
				this.streamingMessage = undefined;
				break;
		}
	}

	private finishRun(): void {
		this.running = false;
		this.streamingMessage = undefined;
		this.pendingToolCalls = new Set();
		const waiters = this.idleWaiters;
		this.idleWaiters = [];
		for (const resolve of waiters) resolve();
	}
}
