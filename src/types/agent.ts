import type { Static } from "typebox";
import type { ImageContent, TextContent, ToolCall } from "./content.js";
import type { AgentMessage, AssistantMessage, Message, ToolResultMessage } from "./messages.js";
import type { Model, SimpleStreamOptions, ThinkingLevel, Tool, ToolParameters } from "./model.js";
import type { AssistantMessageEvent, StreamFn } from "./stream.js";

/**
 * How the tool calls of one assistant message run.
 * - `parallel` (default): preflight one by one in source order, then execute concurrently.
 * - `sequential`: preflight and execute one call at a time.
 * - `streaming`: each call starts as soon as its `toolcall_end` has streamed.
 *
 * @example
 * const agent = new Agent({ toolExecution: "streaming" });
 */
export type ToolExecutionMode = "sequential" | "parallel" | "streaming";

/**
 * How many queued messages one poll of a queue takes.
 *
 * @example
 * agent.steeringMode = "all"; // the next poll takes every queued steering message
 */
export type QueueMode = "all" | "one-at-a-time";

/**
 * The agent's reasoning setting: off, or a level.
 *
 * @example
 * const agent = new Agent({ initialState: { thinkingLevel: "medium" } });
 */
export type AgentThinkingLevel = "off" | ThinkingLevel;

/**
 * A tool call content block (the `toolCall` member of an assistant message's content).
 *
 * @example
 * const calls = reply.content.filter((block): block is AgentToolCall => block.type === "toolCall");
 */
export type AgentToolCall = Extract<AssistantMessage["content"][number], { type: "toolCall" }>;

/**
 * The arguments type of a tool: the static type of its schema (`typebox` 1.x's `Static`, as
 * in pi 0.73.1). `unknown` for a schema whose shape TypeScript cannot see.
 *
 * @example
 * const params = Type.Object({ path: Type.String() });
 * type ReadArgs = ToolArguments<typeof params>; // { path: string }
 */
export type ToolArguments<TParameters extends ToolParameters> = Static<TParameters>;

/**
 * What a tool returns.
 *
 * @example
 * const result: AgentToolResult<{ bytes: number }> = { content: [{ type: "text", text: "done" }], details: { bytes: 4 } };
 */
export interface AgentToolResult<TDetails = unknown> {
	/** What the model sees. */
	content: (TextContent | ImageContent)[];
	/** Structured data for the application; not sent to the model. */
	details: TDetails;
	/**
	 * Ask the loop to stop after this batch instead of calling the model again. Honoured only
	 * when every result in the batch says so. Not persisted in the tool result message.
	 */
	terminate?: boolean | undefined;
}

/**
 * Receives partial results while a tool runs (becomes `tool_execution_update`).
 *
 * @example
 * const execute: AgentTool["execute"] = async (_id, params, signal, onUpdate) => {
 *   onUpdate?.({ content: [{ type: "text", text: "50 %" }], details: { progress: 0.5 } });
 *   return { content: [{ type: "text", text: "done" }], details: { progress: 1 } };
 * };
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AgentToolUpdateCallback<TDetails = any> = (partialResult: AgentToolResult<TDetails>) => void;

/**
 * A tool the agent can run. `TDetails` defaults to `any` as in pi 0.73.1, so pi tool code
 * that reads `details` compiles unchanged.
 *
 * @example
 * import { Type } from "typebox";
 * const params = Type.Object({ a: Type.Number(), b: Type.Number() });
 * const add: AgentTool<typeof params> = {
 *   name: "add", label: "Add", description: "Add two numbers",
 *   parameters: params,
 *   async execute(_id, { a, b }) {
 *     return { content: [{ type: "text", text: String(a + b) }], details: { sum: a + b } };
 *   },
 * };
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface AgentTool<TParameters extends ToolParameters = ToolParameters, TDetails = any>
	extends Tool<TParameters> {
	/** Human-readable name for UIs. */
	label: string;
	/** Rewrites raw model arguments before validation (for legacy argument shapes). */
	prepareArguments?: ((args: unknown) => ToolArguments<TParameters>) | undefined;
	/**
	 * Runs the tool. Throw to report a failure: the error message becomes an error result.
	 * `signal` aborts on `agent.abort()`, on timeout and when a sibling cancels it.
	 */
	execute: (
		toolCallId: string,
		params: ToolArguments<TParameters>,
		signal?: AbortSignal,
		onUpdate?: AgentToolUpdateCallback<TDetails>,
	) => Promise<AgentToolResult<TDetails>>;
	/** "sequential" makes the whole batch sequential (parallel mode) or holds later calls back (streaming mode). */
	executionMode?: "sequential" | "parallel" | undefined;
	/** Per-tool timeout in milliseconds, overriding the agent's `toolTimeoutMs`; 0 disables. */
	timeoutMs?: number | undefined;
	/** When this tool fails, abort the siblings of its batch still running (parallel and streaming mode; they get a "Cancelled" error result). */
	cancelSiblingsOnError?: boolean | undefined;
	/**
	 * agentchart (pi 1.x's field): whether a call that a crash interrupted may run again when the
	 * run is restored. `"safe"` (reading, or idempotent work) runs again; anything else is
	 * answered with an error result that says it was interrupted and not run again.
	 */
	replay?: "safe" | "unsafe" | undefined;
	/**
	 * agentchart: a person approves each call before it runs (`true`), or the calls for which this
	 * function of the validated arguments answers true. The run waits in `awaiting-approval`
	 * (see `agent.approve()` / `agent.reject()`).
	 */
	needsApproval?: boolean | ApprovalRule<ToolArguments<TParameters>> | undefined;
}

/**
 * A tool's approval rule: true when a person must approve a call with these arguments. Checked
 * bivariantly (as a method is), so a tool with a typed rule still fits in a list of tools.
 *
 * @example
 * const needsApproval: ApprovalRule<{ command: string }> = (args) => !args.command.startsWith("ls");
 * const bash: AgentTool<typeof bashParams> = { ...bashTool, needsApproval };
 */
export type ApprovalRule<TArgs> = { bivarianceHack(args: TArgs): boolean }["bivarianceHack"];

/**
 * A tool of any parameter and details type, as stored in tool lists. Tools are contravariant
 * in their parameters, so a list of differently typed tools needs this erased form.
 *
 * @example
 * const tools: AnyAgentTool[] = [readTool, writeTool];
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyAgentTool = AgentTool<any, any>;

/**
 * The transcript and tools of one run, as hooks see it.
 *
 * @example
 * agent.beforeToolCall = async ({ context }) => (context.messages.length > 100 ? { block: true, reason: "too long" } : undefined);
 */
export interface AgentContext {
	systemPrompt: string;
	messages: AgentMessage[];
	tools?: AnyAgentTool[] | undefined;
}

/**
 * Returned by `beforeToolCall` to stop a call from running.
 *
 * @example
 * agent.beforeToolCall = async ({ toolCall }) =>
 *   toolCall.name === "delete_file" ? { block: true, reason: "Deleting files is not allowed", terminate: true } : undefined;
 */
export interface BeforeToolCallResult {
	/** Do not run the tool; it gets an error result. */
	block?: boolean | undefined;
	/** Text of the error result (default "Tool execution was blocked"). */
	reason?: string | undefined;
	/** Also stop the loop after this batch (with `block`; counts as a terminating result). */
	terminate?: boolean | undefined;
	/**
	 * agentchart: `"required"` makes the call wait for a person's decision (`agent.approve()` /
	 * `agent.reject()`); `reason` tells them why.
	 */
	approval?: "required" | undefined;
}

/**
 * Returned by `afterToolCall`: each given field replaces the tool's own.
 *
 * @example
 * agent.afterToolCall = async ({ result, isError }) => (isError ? undefined : { details: { result: result.details, audited: true } });
 */
export interface AfterToolCallResult {
	content?: (TextContent | ImageContent)[] | undefined;
	details?: unknown | undefined;
	isError?: boolean | undefined;
	terminate?: boolean | undefined;
}

/**
 * What `beforeToolCall` sees. `args` are the validated arguments; changing them changes what `execute` gets.
 *
 * @example
 * agent.beforeToolCall = async ({ toolCall, args }) => {
 *   if (toolCall.name === "shell") (args as { timeout?: number }).timeout ??= 30; // execute gets the changed args
 *   return undefined;
 * };
 */
export interface BeforeToolCallContext {
	assistantMessage: AssistantMessage;
	toolCall: AgentToolCall;
	args: unknown;
	context: AgentContext;
}

/**
 * What `afterToolCall` sees.
 *
 * @example
 * agent.afterToolCall = async ({ toolCall, isError }) => {
 *   console.log(`${toolCall.name}: ${isError ? "failed" : "ok"}`);
 *   return undefined;
 * };
 */
export interface AfterToolCallContext {
	assistantMessage: AssistantMessage;
	toolCall: AgentToolCall;
	args: unknown;
	result: AgentToolResult<unknown>;
	isError: boolean;
	context: AgentContext;
}

/**
 * The Agent's observable state.
 *
 * @example
 * agent.state.systemPrompt = "Be brief."; // takes effect on the next run
 * if (!agent.state.isStreaming) agent.state.messages = savedMessages; // copied on assignment
 */
export interface AgentState {
	systemPrompt: string;
	model: Model;
	thinkingLevel: AgentThinkingLevel;
	/** Assigning copies the array; the copy is what the next run uses. */
	tools: AnyAgentTool[];
	/** Assigning copies the array. */
	messages: AgentMessage[];
	/** True from `prompt()`/`continue()` until the `agent_end` listeners have settled, and while `compact()` runs. */
	readonly isStreaming: boolean;
	/** The assistant message being streamed, if any. */
	readonly streamingMessage?: AgentMessage | undefined;
	/** Ids of the tool calls between `tool_execution_start` and `tool_execution_end`. */
	readonly pendingToolCalls: ReadonlySet<string>;
	/**
	 * The error of the run's last reply that failed or was aborted (or of a listener that threw);
	 * cleared when a run starts. An abort while tools run or calls wait for approval leaves the
	 * reply as it was: the calls' error results say so.
	 */
	readonly errorMessage?: string | undefined;
}

/**
 * The result of a compaction: what was summarised and what was kept.
 *
 * @example
 * const { tokensBefore, tokensAfter, messagesDropped } = await agent.compact();
 */
export interface CompactionResult {
	/** The summary text. */
	summary: string;
	/** Estimated context tokens before compaction. */
	tokensBefore: number;
	/** Estimated context tokens after compaction. */
	tokensAfter: number;
	/** How many transcript messages were replaced by the summary. */
	messagesDropped: number;
	/** How many were kept verbatim. */
	messagesKept: number;
	/** True when the cut fell inside a turn and that turn's prefix was summarised separately. */
	splitTurn: boolean;
}

/**
 * How a call that waited for approval was decided.
 *
 * @example
 * agent.subscribe((event) => { if (event.type === "approval_resolved" && event.decision === "timed-out") console.log(event.toolCallId, "timed out"); });
 */
export type ApprovalOutcome = "approved" | "rejected" | "timed-out" | "aborted";

/**
 * A tool call waiting for a person's decision (`agent.pendingApprovals`).
 *
 * @example
 * for (const pending of agent.pendingApprovals) console.log(pending.toolName, pending.args, pending.reason);
 */
export interface PendingApproval {
	toolCallId: string;
	/**
	 * The name `approve()` and `reject()` take for this call: its `toolCallId` and `#1`
	 * (`toolu_01#1`), a higher number for a call that repeats the id in the reply. Unique in the
	 * reply, and it never changes; a bare id that fits two waiting calls is refused. Answer an
	 * approval screen's row by this.
	 */
	callKey: string;
	toolName: string;
	/** The validated arguments the call would run with (a copy: changing it changes nothing; see `approve(id, { arguments })`). */
	args: unknown;
	/** Why it needs approval (from `beforeToolCall`), if said. */
	reason?: string | undefined;
	/** When the wait ends with a rejection (ms since the epoch), if an approval timeout is set. */
	deadline?: number | undefined;
	/**
	 * Set when `args` no longer fit the tool (restored with a tool whose schema changed since the
	 * call was asked): the validation error. Approve it with `{ arguments }` that fit, or reject it.
	 */
	argsProblem?: string | undefined;
}

/**
 * Why a compaction ran.
 *
 * @example
 * agent.subscribe((event) => { if (event.type === "auto_compaction_start" && event.reason === "overflow") console.log("context overflowed"); });
 */
export type CompactionReason = "threshold" | "overflow" | "manual";

/**
 * Everything the agent reports, in order: the ten pi 0.73.1 events plus agentchart's two
 * approval events and two compaction events.
 *
 * The tool events carry what pi's carry, typed as loosely as pi types them (`any`), so pi
 * listener code compiles unchanged:
 * - `args`: in the `tool_execution_*` events, the tool call's arguments as the model sent them
 *   (`toolCall.arguments`), before validation and coercion; in the approval events, the validated
 *   arguments the call would run with (after `beforeToolCall`), which the person decides on;
 * - `partialResult`: what the tool passed to `onUpdate`, an {@link AgentToolResult};
 * - `result`: the call's final {@link AgentToolResult} (`content` for the model, `details`
 *   for the application), after `afterToolCall`; for a call that failed, was blocked or had
 *   invalid arguments, `{ content: [{ type: "text", text: <the error> }], details: {} }` with
 *   `isError: true`.
 *
 * Pass type arguments for stricter types, or use {@link StrictAgentEvent}.
 *
 * @typeParam TArgs - The type of `args` (pi: `any`).
 * @typeParam TResult - The type of `result` and `partialResult` (pi: `any`).
 *
 * @example
 * agent.subscribe((event) => {
 *   if (event.type === "tool_execution_end") console.log(event.toolName, event.isError, event.result.content);
 * });
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AgentEvent<TArgs = any, TResult = any> =
	| { type: "agent_start" }
	| { type: "agent_end"; messages: AgentMessage[] }
	| { type: "turn_start" }
	| { type: "turn_end"; message: AgentMessage; toolResults: ToolResultMessage[] }
	/**
	 * `replayed` (agentchart): a run that a restore started again retells a reply its journal had,
	 * the model not asked; listeners of the agent before the restart may have heard it already.
	 */
	| { type: "message_start"; message: AgentMessage; replayed?: true | undefined }
	/** Only for assistant messages while they stream. */
	| { type: "message_update"; message: AgentMessage; assistantMessageEvent: AssistantMessageEvent }
	| { type: "message_end"; message: AgentMessage; replayed?: true | undefined }
	/**
	 * `replayed` (agentchart), on a start: the call had started before a restart (a restored run
	 * retells it); on an end: its outcome is the journal's, and the tool did not run again.
	 */
	| { type: "tool_execution_start"; toolCallId: string; toolName: string; args: TArgs; replayed?: true | undefined }
	| { type: "tool_execution_update"; toolCallId: string; toolName: string; args: TArgs; partialResult: TResult }
	| { type: "tool_execution_end"; toolCallId: string; toolName: string; result: TResult; isError: boolean; replayed?: true | undefined }
	/** agentchart: a tool call waits for a person's decision. */
	| { type: "approval_requested"; toolCallId: string; callKey: string; toolName: string; args: TArgs; reason?: string | undefined }
	/** agentchart: the decision on a call that waited (`timed-out` and `aborted` are rejections too). */
	| {
			type: "approval_resolved";
			toolCallId: string;
			/** As in `approval_requested`. */
			callKey: string;
			toolName: string;
			decision: ApprovalOutcome;
			/** The arguments the call runs with, when approved. */
			args?: TArgs;
			/** True when the person gave them (`approve(id, { arguments })`); otherwise they are the ones asked about. */
			argumentsGiven?: true;
			reason?: string | undefined;
	  }
	| { type: "auto_compaction_start"; reason: CompactionReason }
	| {
			type: "auto_compaction_end";
			reason: CompactionReason;
			result?: CompactionResult | undefined;
			aborted: boolean;
			willRetry: boolean;
			errorMessage?: string | undefined;
	  };

/**
 * {@link AgentEvent} with the tool events typed by what they hold: `args` as `unknown` (the
 * model's arguments, unvalidated, in the `tool_execution_*` events; validated in the approval
 * events) and `result` / `partialResult` as
 * `AgentToolResult<unknown>`. A listener written for it is accepted wherever an
 * `AgentEvent` listener is.
 *
 * @example
 * agent.subscribe((event: StrictAgentEvent) => {
 *   if (event.type === "tool_execution_end") {
 *     const text = event.result.content.map((block) => (block.type === "text" ? block.text : "")).join("");
 *     console.log(`${event.toolName}: ${text}`);
 *   }
 * });
 */
export type StrictAgentEvent = AgentEvent<unknown, AgentToolResult<unknown>>;

/**
 * Converts transcript entries to LLM messages before each call.
 *
 * @example
 * // Keeps what a provider takes: entries an app declared for itself (see `CustomAgentMessages`) are left out.
 * const convertToLlm: ConvertToLlm = (messages) => messages.filter((message): message is Message => ["user", "assistant", "toolResult"].includes(message.role));
 */
export type ConvertToLlm = (messages: AgentMessage[]) => Message[] | Promise<Message[]>;
/**
 * Rewrites the transcript (pruning, injection) before each call.
 *
 * @example
 * const transformContext: TransformContext = async (messages) => messages.slice(-50); // keep the last 50
 */
export type TransformContext = (messages: AgentMessage[], signal?: AbortSignal) => Promise<AgentMessage[]>;
/**
 * Resolves an API key per LLM call.
 *
 * @example
 * const getApiKey: GetApiKey = (provider) => (provider === "anthropic" ? process.env["MY_ANTHROPIC_KEY"] : undefined);
 */
export type GetApiKey = (provider: string) => Promise<string | undefined> | string | undefined;
/**
 * Runs before a tool call executes; may block it.
 *
 * @example
 * const confirm: BeforeToolCallHook = async ({ toolCall }) => ((await askUser(toolCall.name)) ? undefined : { block: true, reason: "The user said no" });
 */
export type BeforeToolCallHook = (
	context: BeforeToolCallContext,
	signal?: AbortSignal,
) => Promise<BeforeToolCallResult | undefined>;
/**
 * Runs after a tool call; may override its result field by field.
 *
 * @example
 * const redact: AfterToolCallHook = async ({ result }) => ({ content: result.content.map((block) => (block.type === "text" ? { ...block, text: block.text.replaceAll(secret, "***") } : block)) });
 */
export type AfterToolCallHook = (
	context: AfterToolCallContext,
	signal?: AbortSignal,
) => Promise<AfterToolCallResult | undefined>;

/**
 * What `shouldStopAfterTurn` sees (pi's low-level loop).
 *
 * @example
 * const shouldStopAfterTurn = ({ toolResults }: ShouldStopAfterTurnContext) => toolResults.some((result) => result.isError);
 */
export interface ShouldStopAfterTurnContext {
	/** The turn's assistant message. */
	message: AssistantMessage;
	/** Its tool results, in source order. */
	toolResults: ToolResultMessage[];
	/** The context as the loop has it now. */
	context: AgentContext;
	/** Messages the run added so far. */
	newMessages: AgentMessage[];
}

/**
 * After each turn: true ends the run (queued steering and follow-ups stay queued).
 *
 * @example
 * const stopOnError: ShouldStopAfterTurn = ({ message }) => message.stopReason === "error";
 */
export type ShouldStopAfterTurn = (context: ShouldStopAfterTurnContext) => boolean | Promise<boolean>;

export type { StreamFn, ToolCall, SimpleStreamOptions };
