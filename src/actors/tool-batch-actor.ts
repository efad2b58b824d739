import { fromCallback } from "xstate";
import { ABORTED_BEFORE_RUN, askBeforeToolCall, errorResult, prepareToolCall, type ToolOutcome } from "../tools/preflight.js";
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
import { type Deadline, clearDeadline, setDeadline } from "../util/deadlines.js";
import { describeError } from "../util/describe-error.js";
import type { ToolBatchCommand, ToolBatchEvent, ToolBatchInput } from "./tool-batch-protocol.js";

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
export function checkToolResult(toolName: string, value: unknown): ToolOutcome {
	const result = value as Partial<AgentToolResult<unknown>> | undefined;
	if (typeof value === "object" && value !== null && Array.isArray(result?.content) && result.content.every(isContentBlock)) {
		return { result: value as AgentToolResult<unknown>, isError: false };
	}
	return errorResult(`Tool "${toolName}" returned ${describeError(value)} instead of a result: execute must resolve to { content: [{ type: "text", text }], details }`);
}

/** `afterToolCall`'s field-by-field override of a result; its failure is an error result. */
async function finalize(input: ToolBatchInput, toolCall: AgentToolCall, args: unknown, raw: ToolOutcome, signal: AbortSignal): Promise<ToolOutcome> {
	if (!input.afterToolCall) return raw;
	try {
		const override: AfterToolCallResult | undefined = await input.afterToolCall(
			{ assistantMessage: input.assistantMessage, toolCall, args, result: raw.result, isError: raw.isError, context: input.context },
			signal,
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

/** One call in flight: its own abort (timeout, cancel) and its deadline, if it has one. */
interface CallInFlight {
	controller: AbortController;
	deadline: Deadline | undefined;
	timeoutMs: number;
}

/**
 * The tool calls of one assistant message, as one actor: the machine decides which call is
 * prepared or run when (`preflight`, `execute`, `preflight-and-execute`, `cancel`); this actor
 * runs them and reports each outcome once. One actor per batch rather than per call: a call
 * only gets its own `AbortController` (so a timeout or a failing sibling can stop it alone) and
 * a deadline on the shared timer (`util/deadlines.ts`). Aborting the run aborts every call; a
 * call reported as timed out or cancelled reports nothing more (its late result is not shown
 * to `afterToolCall` either), and a tool's `onUpdate` after its call settled is ignored. A
 * call's clock runs while its tool executes, not while the hooks decide.
 */
export const toolBatchActor = fromCallback<ToolBatchCommand, ToolBatchInput>(({ input, sendBack: send, receive }) => {
	const sendBack = (event: ToolBatchEvent) => send(event);
	let stopped = false;
	const inFlight = new Map<string, CallInFlight>();
	const runSignal = input.abort.signal;

	const abortAll = () => {
		for (const call of inFlight.values()) call.controller.abort(runSignal.reason);
	};
	const removeAbortHook = input.abort.onAbort(abortAll);

	const begin = (toolCall: AgentToolCall): CallInFlight => {
		const call: CallInFlight = { controller: new AbortController(), deadline: undefined, timeoutMs: 0 };
		if (runSignal.aborted) call.controller.abort(runSignal.reason);
		inFlight.set(toolCall.id, call);
		return call;
	};
	/** The timeout runs from the start of execution: `beforeToolCall` may wait for a person. */
	const startClock = (tool: AnyAgentTool, toolCall: AgentToolCall, call: CallInFlight) => {
		call.timeoutMs = tool.timeoutMs ?? input.timeoutMs;
		if (call.timeoutMs <= 0) return;
		call.deadline = setDeadline(call.timeoutMs, () => {
			if (inFlight.get(toolCall.id) !== call) return;
			inFlight.delete(toolCall.id);
			call.controller.abort(new Error(`timed out after ${call.timeoutMs} ms`));
			sendBack({ type: "tool.timeout", toolCallId: toolCall.id, timeoutMs: call.timeoutMs });
		});
	};
	const stopClock = (call: CallInFlight) => {
		clearDeadline(call.deadline);
		call.deadline = undefined;
	};
	/** Reports for a call still in flight (not timed out, cancelled or stopped). */
	const report = (toolCallId: string, call: CallInFlight, event: ToolBatchEvent, done: boolean) => {
		if (stopped || inFlight.get(toolCallId) !== call) return;
		if (done) {
			inFlight.delete(toolCallId);
			stopClock(call);
		}
		sendBack(event);
	};

	const preflight = async (toolCall: AgentToolCall, prepared: Parameters<typeof askBeforeToolCall>[0], call: CallInFlight) => {
		if (!input.beforeToolCall) return prepared;
		const context = { toolCall, assistantMessage: input.assistantMessage, context: input.context, beforeToolCall: input.beforeToolCall };
		return askBeforeToolCall(prepared, { ...context, signal: call.controller.signal });
	};
	const execute = async (toolCall: AgentToolCall, args: unknown, call: CallInFlight) => {
		const tool = input.tools.find((candidate) => candidate.name === toolCall.name);
		if (!tool) return report(toolCall.id, call, { type: "tool.settled", toolCallId: toolCall.id, outcome: errorResult(`Tool ${toolCall.name} not found`) }, true);
		if (inFlight.get(toolCall.id) !== call) return;
		// Streaming mode asks beforeToolCall here, then runs the call: an abort while the hook
		// decided must not let a tool that never checks its signal run after all.
		if (call.controller.signal.aborted) return report(toolCall.id, call, { type: "tool.settled", toolCallId: toolCall.id, outcome: errorResult(ABORTED_BEFORE_RUN) }, true);
		startClock(tool, toolCall, call);
		const onUpdate = (partialResult: AgentToolResult<unknown>) => report(toolCall.id, call, { type: "tool.update", toolCallId: toolCall.id, partialResult }, false);
		let raw: ToolOutcome;
		try {
			const value: unknown = await tool.execute(toolCall.id, args as Parameters<AnyAgentTool["execute"]>[1], call.controller.signal, onUpdate);
			raw = checkToolResult(toolCall.name, value);
		} catch (error) {
			raw = errorResult(describeError(error));
		}
		// A call that timed out or was cancelled already has its result: afterToolCall would be
		// asked about an outcome nobody records, and its answer dropped.
		if (stopped || inFlight.get(toolCall.id) !== call) return;
		// The time limit is the tool's: afterToolCall may wait (for a person, say) as beforeToolCall may.
		stopClock(call);
		const outcome = await finalize(input, toolCall, args, raw, call.controller.signal);
		report(toolCall.id, call, { type: "tool.settled", toolCallId: toolCall.id, outcome }, true);
	};
	// Every path reports; this is the guarantee that a call always settles, whatever throws.
	const guard = (toolCall: AgentToolCall, call: CallInFlight, work: Promise<void>) => {
		work.catch((error: unknown) =>
			report(toolCall.id, call, { type: "tool.settled", toolCallId: toolCall.id, outcome: errorResult(`Tool "${toolCall.name}" failed: ${describeError(error)}`) }, true),
		);
	};

	receive((command) => {
		if (stopped) return;
		switch (command.type) {
			case "preflight": {
				const call = begin(command.toolCall);
				const work = preflight(command.toolCall, { kind: "prepared", args: command.args }, call).then((decided) => {
					const event: ToolBatchEvent =
						decided.kind === "prepared"
							? { type: "tool.prepared", toolCallId: command.toolCall.id, args: decided.args }
							: { type: "tool.settled", toolCallId: command.toolCall.id, outcome: decided.outcome };
					report(command.toolCall.id, call, event, true);
				});
				guard(command.toolCall, call, work);
				return;
			}
			case "execute": {
				const call = begin(command.toolCall);
				guard(command.toolCall, call, execute(command.toolCall, command.args, call));
				return;
			}
			case "preflight-and-execute": {
				const call = begin(command.toolCall);
				const tool = input.tools.find((candidate) => candidate.name === command.toolCall.name);
				const work = preflight(command.toolCall, prepareToolCall(tool, command.toolCall), call).then((decided) =>
					decided.kind === "prepared"
						? execute(command.toolCall, decided.args, call)
						: report(command.toolCall.id, call, { type: "tool.settled", toolCallId: command.toolCall.id, outcome: decided.outcome }, true),
				);
				guard(command.toolCall, call, work);
				return;
			}
			case "cancel": {
				const call = inFlight.get(command.toolCallId);
				if (!call) return;
				inFlight.delete(command.toolCallId);
				stopClock(call);
				call.controller.abort(new Error("cancelled"));
				return;
			}
		}
	});

	return () => {
		stopped = true;
		removeAbortHook();
		for (const call of inFlight.values()) stopClock(call);
		abortAll();
		inFlight.clear();
	};
});
