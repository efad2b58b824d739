/**
 * Preflight of one tool call, in pi's order: find the tool, `prepareArguments`, validate the
 * arguments against its schema (with conversion), then `beforeToolCall`. Every failure is an
 * error result for that call ("immediate"): a preflight never throws.
 */
import type { AgentContext, AgentToolCall, AgentToolResult, AnyAgentTool, BeforeToolCallHook } from "../types/agent.js";
import type { AssistantMessage } from "../types/messages.js";
import { describeError } from "../util/describe-error.js";
import { validateToolArguments } from "./validate-arguments.js";

/**
 * A tool result before it becomes a message.
 *
 * @example
 * const outcome: ToolOutcome = { result: { content: [{ type: "text", text: "done" }], details: {} }, isError: false };
 */
export interface ToolOutcome {
	result: AgentToolResult<unknown>;
	isError: boolean;
}

/**
 * What preflight decided: run the call with these arguments, answer it right away, or (from
 * `beforeToolCall`) wait for a person's approval first.
 */
export type PreflightOutcome = { kind: "prepared"; args: unknown; approval?: { reason?: string | undefined } | undefined } | { kind: "immediate"; outcome: ToolOutcome };

/** The result of a call the run's abort reached before its tool ran (pi's wording). */
export const ABORTED_BEFORE_RUN = "Tool call was aborted before it ran";

/**
 * An error tool result with one text block.
 *
 * @example
 * errorResult("Tool nope not found"); // { result: { content: [{ type: "text", text: ... }], details: {} }, isError: true }
 */
export function errorResult(text: string, terminate?: boolean): ToolOutcome {
	const result: AgentToolResult<unknown> = { content: [{ type: "text", text }], details: {} };
	if (terminate) result.terminate = true;
	return { result, isError: true };
}

/**
 * The synchronous part of preflight: lookup, `prepareArguments`, validation. Enough on its
 * own when there is no `beforeToolCall` hook, which is why it runs inside the machine's
 * action then, with no actor and no event.
 *
 * @example
 * prepareToolCall(findTool(tools, call.name), call); // { kind: "prepared", args } or { kind: "immediate", outcome }
 */
export function prepareToolCall(tool: AnyAgentTool | undefined, toolCall: AgentToolCall): PreflightOutcome {
	if (!tool) return { kind: "immediate", outcome: errorResult(`Tool ${toolCall.name} not found`) };
	try {
		let call = toolCall;
		if (tool.prepareArguments) {
			const prepared = synchronous(tool.prepareArguments(toolCall.arguments), "prepareArguments", "the arguments");
			if (prepared !== toolCall.arguments) call = { ...toolCall, arguments: prepared as AgentToolCall["arguments"] };
		}
		return { kind: "prepared", args: validateToolArguments(tool, call) };
	} catch (error) {
		return { kind: "immediate", outcome: errorResult(describeError(error)) };
	}
}

/**
 * What a synchronous hook returned, or a TypeError naming it when it returned a promise (typed
 * code cannot, JavaScript can): its rejection is handled here, so it cannot end the process.
 */
function synchronous<T>(value: T, hook: string, expected: string): T {
	if (typeof (value as { then?: unknown } | null | undefined)?.then !== "function") return value;
	(value as PromiseLike<unknown>).then(undefined, () => {});
	throw new TypeError(`${hook} returned a promise; it must return ${expected} synchronously`);
}

/** What `beforeToolCall` is asked with. */
export interface BeforeToolCallInput {
	toolCall: AgentToolCall;
	assistantMessage: AssistantMessage;
	context: AgentContext;
	beforeToolCall: BeforeToolCallHook;
	signal: AbortSignal;
}

/**
 * The `beforeToolCall` step of a prepared call: it may block the call (an error result,
 * possibly terminating) or let it run with the (possibly changed) arguments.
 *
 * @example
 * await askBeforeToolCall({ kind: "prepared", args }, { toolCall, assistantMessage, context, beforeToolCall, signal });
 */
export async function askBeforeToolCall(prepared: PreflightOutcome, input: BeforeToolCallInput): Promise<PreflightOutcome> {
	if (prepared.kind === "immediate") return prepared;
	try {
		const decision = await input.beforeToolCall(
			{ assistantMessage: input.assistantMessage, toolCall: input.toolCall, args: prepared.args, context: input.context },
			input.signal,
		);
		if (decision?.block) return { kind: "immediate", outcome: errorResult(decision.reason || "Tool execution was blocked", decision.terminate) };
		if (decision?.approval === "required") return { kind: "prepared", args: prepared.args, approval: { reason: decision.reason } };
		return prepared;
	} catch (error) {
		return { kind: "immediate", outcome: errorResult(describeError(error)) };
	}
}

/**
 * Whether a person must approve this call before it runs: the tool's `needsApproval` (true, or
 * its rule on the validated arguments), or `beforeToolCall`'s answer. A rule that throws makes
 * the call wait too (a person can still approve it).
 *
 * @example
 * approvalNeeded(tool, args, undefined); // true for a tool with needsApproval: true
 */
export function approvalNeeded(tool: AnyAgentTool | undefined, args: unknown, asked: { reason?: string | undefined } | undefined): { reason?: string | undefined } | undefined {
	if (asked) return asked;
	const rule = tool?.needsApproval;
	if (rule === undefined || rule === false) return undefined;
	if (rule === true) return {};
	try {
		return synchronous(rule(args), "needsApproval", "true or false") ? {} : undefined;
	} catch (error) {
		return { reason: `needsApproval failed: ${describeError(error)}` };
	}
}

/**
 * The arguments an approval runs a call with: the person's (`given`), validated and coerced
 * against the run's tool, or the call's own; or why they cannot run. The call's own arguments
 * were validated when it was asked, unless the run was restored with a tool whose schema changed
 * since (`argsProblem`, see `hydrateAgentContext`).
 *
 * @example
 * const { args, problem } = approvedArguments(tool, call, { path: "README.md" });
 */
export function approvedArguments(
	tool: AnyAgentTool | undefined,
	call: { toolCall: AgentToolCall; args?: unknown; argsProblem?: string | undefined },
	given: unknown,
): { args: unknown; problem?: undefined } | { args?: undefined; problem: string } {
	if (given === undefined) return call.argsProblem === undefined ? { args: call.args } : { problem: call.argsProblem };
	if (!tool) return { problem: `Tool ${call.toolCall.name} not found` };
	try {
		return { args: validateToolArguments(tool, { ...call.toolCall, arguments: given as AgentToolCall["arguments"] }) };
	} catch (error) {
		return { problem: describeError(error) };
	}
}

/**
 * The result of a call a person rejected (or that waited past its approval timeout, or whose
 * run was aborted while it waited).
 *
 * @example
 * rejectedText("rejected", "not on a Friday"); // "Tool call was rejected: not on a Friday"
 */
export function rejectedText(decision: "rejected" | "timed-out" | "aborted", reason: string | undefined): string {
	if (decision === "aborted") return ABORTED_BEFORE_RUN;
	const base = decision === "timed-out" ? "No decision on this tool call came in time; it was not run" : "Tool call was rejected";
	return reason ? `${base}: ${reason}` : base;
}

/**
 * The result of a call that ran past its timeout.
 *
 * @example
 * timedOutText("fetch", 5000); // 'Tool "fetch" timed out after 5000 ms'
 */
export function timedOutText(toolName: string, timeoutMs: number): string {
	return `Tool "${toolName}" timed out after ${timeoutMs} ms`;
}
