// The tool batch actor's contract, free of XState types (see stream-protocol.ts).
import type { ToolOutcome } from "../tools/preflight.js";
import type { AfterToolCallHook, AgentContext, AgentToolCall, AgentToolResult, AnyAgentTool, BeforeToolCallHook } from "../types/agent.js";
import type { AssistantMessage } from "../types/messages.js";
import type { RunAbortView } from "../util/run-abort.js";
import type { EffectJournal } from "../durable/journal.js";

/**
 * What the batch actor tells the machine about one call. A call is named by its key in the
 * batch (`callKey`): its id, or `id#n` when an earlier call of the reply has that id, so two
 * calls with one id are still told apart.
 *
 * @example
 * const describe = (event: ToolBatchEvent) => event.type;
 */
export type ToolBatchEvent =
	/**
	 * Preflight passed (`beforeToolCall` included): the call may run with these arguments, or,
	 * with `approval`, once a person approves it (the hook asked for it).
	 */
	| { type: "tool.prepared"; callKey: string; args: unknown; approval?: { reason?: string | undefined } | undefined }
	/**
	 * Streaming mode with `beforeToolCall`: preflight passed but the call needs a person's
	 * approval (the hook asked, or the tool's `needsApproval`); it was not run.
	 */
	| { type: "tool.approval"; callKey: string; args: unknown; approval?: { reason?: string | undefined } | undefined }
	/**
	 * Streaming mode with `beforeToolCall`: the hook let the call through and it runs now with
	 * these arguments. Until then the chart counts it as still being prepared: an abort answers
	 * it as aborted before it ran, instead of waiting for a tool that never started.
	 */
	| { type: "tool.executing"; callKey: string; args: unknown }
	/**
	 * The call has its outcome (preflight refused it, it ran, or it failed); `journaled`: the
	 * outcome is the journal's (the call ran before a restart and did not run again).
	 */
	| { type: "tool.settled"; callKey: string; outcome: ToolOutcome; journaled?: true | undefined }
	/** Progress from the tool's `onUpdate`, while it runs. */
	| { type: "tool.update"; callKey: string; partialResult: AgentToolResult<unknown> }
	/**
	 * The tool returned and its `afterToolCall` hook is asked now (sent only when there is one): a
	 * call given up on after an abort from here on is the hook's, not the tool's, to finish.
	 */
	| { type: "tool.returned"; callKey: string }
	/** The call ran past its timeout; it was told to stop and its late result is ignored. */
	| { type: "tool.timeout"; callKey: string; timeoutMs: number }
	/**
	 * The batch was running when the run was stored, and the actor was restored from that
	 * snapshot: the chart hands its calls in flight to a new batch (which looks each up in the
	 * journal before it runs it again).
	 */
	| { type: "tools.interrupted" };

/**
 * What the machine asks of the batch actor (a call named by its key, as in {@link ToolBatchEvent}).
 *
 * @example
 * const cancel: ToolBatchCommand = { type: "cancel", callKey: "call_1" };
 */
export type ToolBatchCommand =
	/** Ask `beforeToolCall` (the synchronous part of preflight already passed). */
	| { type: "preflight"; callKey: string; toolCall: AgentToolCall; args: unknown }
	/**
	 * Run a prepared call (`effect`: its id in the run's journal, when the run keeps one; `argsProblem`:
	 * why its restored arguments cannot run, then its result unless the journal has one).
	 */
	| { type: "execute"; callKey: string; toolCall: AgentToolCall; args: unknown; effect?: string | undefined; argsProblem?: string | undefined }
	/** Streaming tool execution with a `beforeToolCall` hook: preflight, then run. */
	| { type: "preflight-and-execute"; callKey: string; toolCall: AgentToolCall; effect?: string | undefined }
	/** Stop a call (a sibling failed, or it was given up on); nothing more is reported for it. */
	| { type: "cancel"; callKey: string };

/**
 * What one batch of tool calls needs.
 *
 * @example
 * const names = (input: ToolBatchInput) => input.tools.map((tool) => tool.name);
 */
export interface ToolBatchInput {
	tools: AnyAgentTool[];
	assistantMessage: AssistantMessage;
	context: AgentContext;
	beforeToolCall?: BeforeToolCallHook | undefined;
	afterToolCall?: AfterToolCallHook | undefined;
	/** The run's cancellation: aborting the run aborts every call. */
	abort: RunAbortView;
	/** Default timeout per call, ms (a tool's own `timeoutMs` wins); 0 disables. */
	timeoutMs: number;
	/** The run's journal, when it keeps one: calls are looked up before they run and recorded. */
	journal: EffectJournal | undefined;
	/**
	 * For a batch whose calls start while their reply streams (streaming tool execution), the
	 * model call's effect id: each call's intent names it, so that a restart in the middle of
	 * the reply keeps the calls that had started (see the stream actor).
	 */
	streamedFrom?: string | undefined;
	/**
	 * The delivery of the events emitted so far to the listeners (undefined when nothing is being
	 * delivered): a call that reported progress asks `afterToolCall` only once its
	 * `tool_execution_update` events reached them, as pi's loop does.
	 */
	deliveryPending?: (() => PromiseLike<void> | undefined) | undefined;
}

/**
 * What a batch actor's persisted snapshot keeps of its input: enough to say its calls were interrupted.
 *
 * @example
 * const marker: RestoredToolBatchInput = { restored: true };
 */
export interface RestoredToolBatchInput {
	restored: true;
}

/**
 * Whether a stored batch actor's input is the marker `toolBatchActor` persists: restored with
 * another, the actor would start as a new batch and tell the chart nothing of its calls.
 *
 * @example
 * isRestoredToolBatchInput({ restored: true }); // true
 */
export function isRestoredToolBatchInput(input: unknown): input is RestoredToolBatchInput {
	return typeof input === "object" && input !== null && (input as Partial<RestoredToolBatchInput>).restored === true;
}
