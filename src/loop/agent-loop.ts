/**
 * pi 0.73.1's low-level loop API (`agentLoop`, `agentLoopContinue`, `runAgentLoop`,
 * `runAgentLoopContinue`), run on the agent statechart: one machine per run, its events
 * handed to the caller's sink one at a time (each awaited, as in pi, so a slow sink holds the
 * loop back), pull-based queues and `shouldStopAfterTurn` asked at the chart's decision points.
 */
import { EventStream } from "../providers/event-stream.js";
import type {
	AfterToolCallHook,
	AgentContext,
	AgentEvent,
	BeforeToolCallHook,
	ConvertToLlm,
	GetApiKey,
	ShouldStopAfterTurn,
	ToolExecutionMode,
	TransformContext,
} from "../types/agent.js";
import type { AgentMessage } from "../types/messages.js";
import type { Model, SimpleStreamOptions } from "../types/model.js";
import type { StreamFn } from "../types/stream.js";
import type { EventSink } from "./sink-delivery.js";
import { runOnMachine } from "./run-on-machine.js";

/**
 * pi's loop configuration: the model, the hooks, the queues (pulled), and every stream option,
 * which is passed to each LLM call.
 *
 * @example
 * const config: AgentLoopConfig = { model, convertToLlm: defaultConvertToLlm, toolExecution: "sequential" };
 * const stream = agentLoop([prompt], { systemPrompt: "", messages: [], tools }, config, undefined, streamFn);
 */
export interface AgentLoopConfig extends SimpleStreamOptions {
	/** The model every call of the run is made to. */
	model: Model;
	/** Transcript entries → LLM messages, before each call. */
	convertToLlm: ConvertToLlm;
	/** Rewrites the transcript before each call (before `convertToLlm`); gets the run's signal. */
	transformContext?: TransformContext | undefined;
	/** Resolves an API key per call (for expiring tokens). */
	getApiKey?: GetApiKey | undefined;
	/** After each turn: true ends the run, leaving queued messages queued. */
	shouldStopAfterTurn?: ShouldStopAfterTurn | undefined;
	/** Asked at the run's start and after each turn: messages to inject before the next reply. */
	getSteeringMessages?: (() => Promise<AgentMessage[]>) | undefined;
	/** Asked when the agent would stop: messages to continue with. */
	getFollowUpMessages?: (() => Promise<AgentMessage[]>) | undefined;
	/** "parallel" (default), "sequential", or agentchart's "streaming". */
	toolExecution?: ToolExecutionMode | undefined;
	/** Asked before each tool call runs, with its validated (mutable) arguments: may block it (with `terminate`, end the run once every call of the batch asks that). */
	beforeToolCall?: BeforeToolCallHook | undefined;
	/** Asked after each tool call: the fields it returns replace the result's, field by field. */
	afterToolCall?: AfterToolCallHook | undefined;
	/**
	 * agentchart: the default time limit of a tool call in milliseconds, as the Agent's option of
	 * that name (default 180000; 0: none, as in pi's loop); a tool's own `timeoutMs` wins. Not
	 * passed to the stream function.
	 *
	 * @example
	 * const config: AgentLoopConfig = { model, convertToLlm: defaultConvertToLlm, toolTimeoutMs: 0 }; // a ten-minute build may run
	 */
	toolTimeoutMs?: number | undefined;
	/**
	 * agentchart: the longest silence allowed from the model's stream before the call ends as an
	 * error that says it stalled, as the Agent's option of that name (default 120000; 0: none, as
	 * in pi's loop: a local server reading a long prompt may send nothing for minutes). Not passed
	 * to the stream function.
	 *
	 * @example
	 * const config: AgentLoopConfig = { model, convertToLlm: defaultConvertToLlm, streamIdleTimeoutMs: 600_000 };
	 */
	streamIdleTimeoutMs?: number | undefined;
	/**
	 * agentchart: after an abort, how long running tools may take to stop before they are given
	 * up on, as the Agent's option of that name (default 5000; 0 waits). Not passed to the stream
	 * function.
	 *
	 * @example
	 * const config: AgentLoopConfig = { model, convertToLlm: defaultConvertToLlm, toolAbortGraceMs: 0 };
	 */
	toolAbortGraceMs?: number | undefined;
}

/**
 * Receives every event of a run; awaited before the loop goes on.
 *
 * @example
 * const emit: AgentEventSink = (event) => console.log(event.type);
 * const added = await runAgentLoop([prompt], { systemPrompt: "", messages: [], tools }, { model, convertToLlm: defaultConvertToLlm }, emit);
 */
export type AgentEventSink = EventSink;

/**
 * The stream `agentLoop` returns: every event, then the run's new messages as its result.
 *
 * @example
 * const stream: AgentEventStream = agentLoop([prompt], context, config);
 * for await (const event of stream) console.log(event.type);
 * const added = await stream.result();
 */
export type AgentEventStream = EventStream<AgentEvent, AgentMessage[]>;

const NO_MESSAGES = "Cannot continue: no messages in context";
const FROM_ASSISTANT = "Cannot continue from message role: assistant";

/** pi's synchronous checks of a continuation. */
function assertCanContinue(context: AgentContext): void {
	if (context.messages.length === 0) throw new Error(NO_MESSAGES);
	if ((context.messages[context.messages.length - 1] as { role?: string }).role === "assistant") throw new Error(FROM_ASSISTANT);
}

/**
 * Runs the loop with new prompt messages, awaiting `emit` for every event. Resolves with the
 * messages the run added (the prompts included).
 *
 * @example
 * const messages = await runAgentLoop([prompt], { systemPrompt: "", messages: [], tools }, { model, convertToLlm }, async (event) => log(event));
 */
export async function runAgentLoop(
	prompts: AgentMessage[],
	context: AgentContext,
	config: AgentLoopConfig,
	emit: AgentEventSink,
	signal?: AbortSignal,
	streamFn?: StreamFn,
): Promise<AgentMessage[]> {
	return runOnMachine({ type: "prompt", messages: prompts }, context, config, emit, signal, streamFn);
}

/**
 * Continues the loop from the context as it is (its last message must not be an assistant
 * reply). Resolves with the messages the run added (not the context's own).
 *
 * @example
 * const added = await runAgentLoopContinue({ systemPrompt: "", messages: transcript, tools }, config, emit);
 */
export async function runAgentLoopContinue(
	context: AgentContext,
	config: AgentLoopConfig,
	emit: AgentEventSink,
	signal?: AbortSignal,
	streamFn?: StreamFn,
): Promise<AgentMessage[]> {
	assertCanContinue(context);
	return runOnMachine({ type: "continue" }, context, config, emit, signal, streamFn);
}

/**
 * The stream of one run: its events, and as its `result()` the run itself. pi's stream takes its
 * result from `agent_end`; here the run may end with `agent_end` and still fail (a queue poll or
 * `shouldStopAfterTurn` that threw after a turn: the chart closes the run first), and a result
 * taken from `agent_end` would hide that failure, which `runAgentLoop` rejects with. The stream
 * ends either way, also on a run that failed before its `agent_end`.
 */
class RunEventStream extends EventStream<AgentEvent, AgentMessage[]> {
	readonly #run: Promise<AgentMessage[]>;

	constructor(run: (emit: AgentEventSink) => Promise<AgentMessage[]>) {
		super(
			(event) => event.type === "agent_end",
			(event) => (event.type === "agent_end" ? event.messages : []),
		);
		this.#run = run(async (event) => this.push(event));
		// Also handles the rejection: a caller that only iterates is not sent an unhandled one.
		void this.#run.then(
			(messages) => this.end(messages),
			() => this.end(),
		);
	}

	/** The run's new messages; rejects with what failed the run (a hook that threw between turns). */
	override result(): Promise<AgentMessage[]> {
		return this.#run;
	}
}

/**
 * The loop with new prompt messages, as a stream of its events whose result is the messages
 * the run added. When a hook fails, the caller learns it from the stream: `beforeToolCall` and
 * `afterToolCall` as the call's error result (as in pi); `transformContext`, `convertToLlm` and
 * `getApiKey` as the run's last reply (`stopReason: "error"`, the hook's `errorMessage`); a queue
 * poll or `shouldStopAfterTurn` as a rejection of `result()`, after the stream ended with
 * `agent_end` (pi's stream never ends there, and its run's rejection goes unhandled).
 *
 * @example
 * const stream = agentLoop([prompt], context, config);
 * for await (const event of stream) console.log(event.type);
 * const added = await stream.result(); // rejects if getFollowUpMessages threw
 */
export function agentLoop(prompts: AgentMessage[], context: AgentContext, config: AgentLoopConfig, signal?: AbortSignal, streamFn?: StreamFn): AgentEventStream {
	return new RunEventStream((emit) => runAgentLoop(prompts, context, config, emit, signal, streamFn));
}

/**
 * The loop continued from the context, as a stream (hook failures as for {@link agentLoop}).
 * Throws at once (before any stream exists) when the context is empty or ends with an assistant
 * reply, as pi does.
 *
 * @example
 * const stream = agentLoopContinue(context, config); // throws "Cannot continue: no messages in context"
 */
export function agentLoopContinue(context: AgentContext, config: AgentLoopConfig, signal?: AbortSignal, streamFn?: StreamFn): AgentEventStream {
	assertCanContinue(context);
	return new RunEventStream((emit) => runAgentLoopContinue(context, config, emit, signal, streamFn));
}
