import type { AnyAgentTool } from "../types/agent.js";
import type { AssistantMessage } from "../types/messages.js";
import { findTool, toolCallsOf } from "./run-helpers.js";
import type { ToolBatch, ToolCallEntry } from "./types.js";

function isSequential(call: ToolCallEntry, tools: AnyAgentTool[]): boolean {
	return findTool(tools, call.toolCall.name)?.executionMode === "sequential";
}

/**
 * The queued calls of a streaming batch that may start now, in source order: calls run
 * concurrently, except that a call to a "sequential" tool waits until nothing runs and holds
 * back every call after it.
 *
 * @example
 * readyStreamingCalls(batch, tools).map((call) => call.toolCall.id);
 */
export function readyStreamingCalls(batch: ToolBatch, tools: AnyAgentTool[]): ToolCallEntry[] {
	const running = batch.calls.filter((call) => call.status === "running" || call.status === "preparing");
	if (running.some((call) => isSequential(call, tools))) return [];
	let busy = running.length > 0;
	const ready: ToolCallEntry[] = [];
	for (const call of batch.calls) {
		if (call.status !== "queued") continue;
		if (isSequential(call, tools)) {
			if (!busy && ready.length === 0) ready.push(call);
			break;
		}
		ready.push(call);
		busy = true;
	}
	return ready;
}

/**
 * Brings a streaming batch up to date with the completed assistant message: its final
 * content replaces the partial, calls the provider never closed are added, and — after a
 * "length" stop — a call that never finished streaming gets the output-limit error instead
 * of running.
 *
 * @example
 * const batch = completeStreamingBatch(run.batch, message);
 */
export function completeStreamingBatch(
	batch: ToolBatch | undefined,
	message: AssistantMessage,
): { batch: ToolBatch; cutOff: ToolCallEntry[] } {
	const base: ToolBatch = batch ?? { assistant: message, mode: "streaming", calls: [], truncated: false };
	const known = new Set(base.calls.map((call) => call.toolCall.id));
	const calls = [...base.calls];
	const cutOff: ToolCallEntry[] = [];
	for (const toolCall of toolCallsOf(message)) {
		if (known.has(toolCall.id)) continue;
		const entry: ToolCallEntry = { toolCall, status: "queued", started: false, messageEmitted: false };
		calls.push(entry);
		if (message.stopReason === "length") cutOff.push(entry);
	}
	return { batch: { ...base, assistant: message, calls, truncated: false }, cutOff };
}

/**
 * The error result of a tool call cut off by the output token limit.
 *
 * @example
 * lengthCutOffText("write"); // mentions the output token limit
 */
export function lengthCutOffText(name: string): string {
	return `Tool call ${name} was not executed: the assistant message was cut off by the output token limit (stopReason "length"), so its arguments may be incomplete.`;
}
