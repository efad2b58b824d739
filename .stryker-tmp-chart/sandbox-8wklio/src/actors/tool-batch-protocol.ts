// @ts-nocheck
// The tool batch actor's contract, free of XState types (see stream-protocol.ts).
import type { ToolOutcome } from "../tools/preflight.js";
import type { AfterToolCallHook, AgentContext, AgentToolCall, AgentToolResult, AnyAgentTool, BeforeToolCallHook } from "../types/agent.js";
import type { AssistantMessage } from "../types/messages.js";
import type { RunAbortView } from "../util/run-abort.js";

/** What the batch actor tells the machine about one call. */
export type ToolBatchEvent =
	/** Preflight passed (`beforeToolCall` included): the call may run with these arguments. */
	| { type: "tool.prepared"; toolCallId: string; args: unknown }
	/** The call has its outcome (preflight refused it, it ran, or it failed). */
	| { type: "tool.settled"; toolCallId: string; outcome: ToolOutcome }
	/** Progress from the tool's `onUpdate`, while it runs. */
	| { type: "tool.update"; toolCallId: string; partialResult: AgentToolResult<unknown> }
	/** The call ran past its timeout; it was told to stop and its late result is ignored. */
	| { type: "tool.timeout"; toolCallId: string; timeoutMs: number };

/** What the machine asks of the batch actor. */
export type ToolBatchCommand =
	/** Ask `beforeToolCall` (the synchronous part of preflight already passed). */
	| { type: "preflight"; toolCall: AgentToolCall; args: unknown }
	/** Run a prepared call. */
	| { type: "execute"; toolCall: AgentToolCall; args: unknown }
	/** Streaming tool execution with a `beforeToolCall` hook: preflight, then run. */
	| { type: "preflight-and-execute"; toolCall: AgentToolCall }
	/** Stop a call (a sibling failed, or it was given up on); nothing more is reported for it. */
	| { type: "cancel"; toolCallId: string };

/** What one batch of tool calls needs. */
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
}
