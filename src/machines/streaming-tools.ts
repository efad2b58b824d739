import type { AgentToolCall, AnyAgentTool } from "../types/agent.js";
import type { AssistantMessage } from "../types/messages.js";
import { emptyUsage } from "../types/content.js";
import { callKeyFor, entriesOfBlocks, findTool, newBatch, newCallEntry, patchBatch, toolCallsOf } from "./run-helpers.js";
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
	// A call waiting for approval holds later calls back as a running one does.
	const running = batch.calls.filter((call) => call.status !== "queued" && call.status !== "settled");
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
 * const batch = completeStreamingBatch(run.batch, message, turnEffectPrefix(run.id, run.turn));
 */
export function completeStreamingBatch(
	batch: ToolBatch | undefined,
	message: AssistantMessage,
	effectPrefix: string,
): { batch: ToolBatch; cutOff: ToolCallEntry[] } {
	const base: ToolBatch = batch ?? newBatch(message, "streaming", [], effectPrefix);
	const blocks = toolCallsOf(message);
	const entries = entriesOfBlocks(blocks, base.calls);
	const calls = [...base.calls];
	const cutOff: ToolCallEntry[] = [];
	for (let index = 0; index < blocks.length; index++) {
		if (entries[index]) continue;
		const toolCall = blocks[index] as AgentToolCall;
		const entry = newCallEntry(toolCall, callKeyFor(calls, toolCall.id));
		calls.push(entry);
		if (message.stopReason === "length") cutOff.push(entry);
	}
	return { batch: patchBatch(base, { assistant: message, calls, truncated: false }), cutOff };
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

/**
 * A reply that failed (error, abort, reset) after some of its tool calls had started, in
 * streaming mode, cut in two at the last started call: `committed`, the reply up to and
 * including the calls that ran (stopReason "toolUse", the call's usage), which their tool
 * results answer; and `failed`, the rest with the failure (no usage): every block after the
 * cut, preceded by any call before it that never started (a call that did not run cannot stay
 * in the committed part, where nothing would answer it, and must not vanish from the
 * transcript either; each block of the reply lands in exactly one part). Providers leave failed
 * messages out of the next request, so without the cut the started calls' results would
 * answer a tool call the model is never shown (Anthropic rejects that with a 400, on every
 * later call) and the model would never learn that its tools ran.
 *
 * Undefined when no call had started: the reply stays one failed message.
 *
 * @example
 * const split = splitFailedStreamingReply(message, run.batch);
 * if (split) transcript.push(split.committed, ...results, split.failed);
 */
export function splitFailedStreamingReply(
	message: AssistantMessage,
	batch: ToolBatch | undefined,
): { committed: AssistantMessage; failed: AssistantMessage } | undefined {
	if (batch?.mode !== "streaming") return undefined;
	const started = batch.calls.filter((call) => call.status !== "queued");
	if (started.length === 0) return undefined;
	// The blocks of the calls that ran (a repeated id pairs with the entry of its own occurrence).
	const blocks = toolCallsOf(message);
	const entries = entriesOfBlocks(blocks, batch.calls);
	const ranBlocks = new Set<AssistantMessage["content"][number]>(blocks.filter((_, index) => (entries[index]?.status ?? "queued") !== "queued"));
	let cut = -1;
	message.content.forEach((block, index) => {
		if (ranBlocks.has(block)) cut = index;
	});
	const upToCut = message.content.slice(0, cut + 1);
	const head = upToCut.filter((block) => block.type !== "toolCall" || ranBlocks.has(block));
	// A provider whose final message lost a call it had streamed: the call that ran still belongs here.
	const paired = new Set(entries);
	const missing = started.filter((call) => !paired.has(call)).map((call) => call.toolCall);
	const committed: AssistantMessage = { ...message, content: [...head, ...missing], stopReason: "toolUse" };
	delete committed.errorMessage;
	const notStarted = upToCut.filter((block) => block.type === "toolCall" && !ranBlocks.has(block));
	const failed: AssistantMessage = { ...message, content: [...notStarted, ...message.content.slice(cut + 1)], usage: emptyUsage() };
	return { committed, failed };
}
