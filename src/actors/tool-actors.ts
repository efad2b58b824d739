import { fromCallback, fromPromise } from "xstate";
import type {
	AfterToolCallHook,
	AfterToolCallResult,
	AgentContext,
	AgentToolCall,
	AgentToolResult,
	AnyAgentTool,
	BeforeToolCallHook,
} from "../types/agent.js";
import type { AssistantMessage } from "../types/messages.js";
import type { AgentMachineInternalEvent, FinalizedToolResult } from "../machines/types.js";
import { validateToolArguments } from "../tools/validate-arguments.js";
import { describeError } from "../util/describe-error.js";

/**
 * An error tool result with one text block.
 *
 * @example
 * errorResult("Tool nope not found"); // { result: { content: [{ type: "text", text: ... }], details: {} }, isError: true }
 */
export function errorResult(text: string, terminate?: boolean): FinalizedToolResult {
	const result: AgentToolResult<unknown> = { content: [{ type: "text", text }], details: {} };
	if (terminate) result.terminate = true;
	return { result, isError: true };
}


function isContentBlock(block: unknown): boolean {
	if (typeof block !== "object" || block === null) return false;
	const { type, text, data, mimeType } = block as { type?: unknown; text?: unknown; data?: unknown; mimeType?: unknown };
	if (type === "text") return typeof text === "string";
	return type === "image" && typeof data === "string" && typeof mimeType === "string";
}

/**
 * What a tool's `execute` resolved with, checked: a result object becomes the call's result; anything
 * else (`undefined`, a string, `{ text }`) an error result that says what came back, so a
 * careless tool cannot leave a tool call without a valid result.
 *
 * @example
 * checkToolResult("read", undefined).isError; // true: 'Tool "read" returned undefined instead of ...'
 */
export function checkToolResult(toolName: string, value: unknown): FinalizedToolResult {
	const result = value as Partial<AgentToolResult<unknown>> | undefined;
	if (typeof value === "object" && value !== null && Array.isArray(result?.content) && result.content.every(isContentBlock)) {
		return { result: value as AgentToolResult<unknown>, isError: false };
	}
	return errorResult(
		`Tool "${toolName}" returned ${describeError(value)} instead of a result: execute must resolve to { content: [{ type: "text", text }], details }`,
	);
}

/** Input of the preflight actor. */
export interface PreflightInput {
	tool: AnyAgentTool | undefined;
	toolCall: AgentToolCall;
	assistantMessage: AssistantMessage;
	context: AgentContext;
	beforeToolCall?: BeforeToolCallHook | undefined;
	signal: AbortSignal;
}

/** What preflight decided: run the call with these arguments, or answer it right away. */
export type PreflightOutcome =
	| { kind: "prepared"; args: unknown }
	| { kind: "immediate"; outcome: FinalizedToolResult };

/**
 * Preflight of one tool call, in pi's order: find the tool, `prepareArguments`, validate
 * against the schema (with conversion), then `beforeToolCall`. Any failure is an immediate
 * error result; it never rejects.
 */
export const preflightActor = fromPromise<PreflightOutcome, PreflightInput>(({ input }) => runPreflight(input));

/**
 * The preflight steps themselves, shared by the preflight actor and by tool actors that
 * preflight their own call (streaming tool execution).
 *
 * @example
 * const outcome = await runPreflight({ tool, toolCall, assistantMessage, context, signal });
 */
export async function runPreflight(input: PreflightInput): Promise<PreflightOutcome> {
	const { tool, toolCall } = input;
	if (!tool) return { kind: "immediate", outcome: errorResult(`Tool ${toolCall.name} not found`) };
	try {
		let call = toolCall;
		if (tool.prepareArguments) {
			const prepared = tool.prepareArguments(toolCall.arguments);
			if (prepared !== toolCall.arguments) call = { ...toolCall, arguments: prepared as AgentToolCall["arguments"] };
		}
		const args = validateToolArguments(tool, call);
		if (input.beforeToolCall) {
			const decision = await input.beforeToolCall(
				{ assistantMessage: input.assistantMessage, toolCall, args, context: input.context },
				input.signal,
			);
			if (decision?.block) {
				return {
					kind: "immediate",
					outcome: errorResult(decision.reason || "Tool execution was blocked", decision.terminate),
				};
			}
		}
		return { kind: "prepared", args };
	} catch (error) {
		return { kind: "immediate", outcome: errorResult(describeError(error)) };
	}
}

/** Input of a tool actor. */
export interface ToolActorInput {
	/** Undefined only when `preflight` is given (the lookup then reports "not found"). */
	tool: AnyAgentTool | undefined;
	/** Streaming tool execution: preflight this call first, inside the actor. */
	preflight?: Omit<PreflightInput, "signal"> | undefined;
	toolCall: AgentToolCall;
	args: unknown;
	assistantMessage: AssistantMessage;
	context: AgentContext;
	afterToolCall?: AfterToolCallHook | undefined;
	/** Aborted by the run, a timeout, or a failing sibling. */
	signal: AbortSignal;
}

async function finalize(input: ToolActorInput, raw: FinalizedToolResult): Promise<FinalizedToolResult> {
	if (!input.afterToolCall) return raw;
	try {
		const override: AfterToolCallResult | undefined = await input.afterToolCall(
			{
				assistantMessage: input.assistantMessage,
				toolCall: input.toolCall,
				args: input.args,
				result: raw.result,
				isError: raw.isError,
				context: input.context,
			},
			input.signal,
		);
		if (!override) return raw;
		if (override.content !== undefined && !(Array.isArray(override.content) && override.content.every(isContentBlock))) {
			return errorResult(`afterToolCall returned content that is not a list of text and image blocks: ${describeError(override.content)}`);
		}
		const result: AgentToolResult<unknown> = {
			content: override.content ?? raw.result.content,
			details: "details" in override ? override.details : raw.result.details,
		};
		const terminate = override.terminate ?? raw.result.terminate;
		if (terminate !== undefined) result.terminate = terminate;
		return { result, isError: override.isError ?? raw.isError };
	} catch (error) {
		return errorResult(describeError(error));
	}
}

/**
 * A tool actor: executes one prepared tool call, relays its progress updates and reports
 * exactly one `tool.settled` (after `afterToolCall`). Updates after it settled, or after the
 * actor was stopped, are dropped: a late `onUpdate` is harmless.
 */
export const toolActor = fromCallback<AgentMachineInternalEvent, ToolActorInput>(({ input, sendBack }) => {
	let settled = false;
	const toolCallId = input.toolCall.id;
	const onUpdate = (partialResult: AgentToolResult<unknown>) => {
		if (settled) return;
		sendBack({ type: "tool.update", toolCallId, partialResult });
	};
	const report = (outcome: FinalizedToolResult) => {
		if (settled) return;
		settled = true;
		sendBack({ type: "tool.settled", toolCallId, outcome });
	};
	const run = async () => {
		let args = input.args;
		if (input.preflight) {
			const decided = await runPreflight({ ...input.preflight, signal: input.signal });
			if (decided.kind === "immediate") return report(decided.outcome);
			args = decided.args;
		}
		if (!input.tool) return report(errorResult(`Tool ${input.toolCall.name} not found`));
		let raw: FinalizedToolResult;
		try {
			const result: unknown = await input.tool.execute(toolCallId, args as Parameters<AnyAgentTool["execute"]>[1], input.signal, onUpdate);
			raw = checkToolResult(input.toolCall.name, result);
		} catch (error) {
			raw = errorResult(describeError(error));
		}
		report(await finalize({ ...input, args }, raw));
	};
	// Every path above reports; this is the guarantee that a call always settles, whatever throws.
	run().catch((error: unknown) => report(errorResult(`Tool "${input.toolCall.name}" failed: ${describeError(error)}`)));
	return () => {
		settled = true;
	};
});
