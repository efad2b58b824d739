import type { AgentContext, AgentToolCall, AnyAgentTool, PendingApproval, QueueMode } from "../types/agent.js";
import type { AgentMessage, AssistantMessage, Message, ToolResultMessage } from "../types/messages.js";
import type { SimpleStreamOptions } from "../types/model.js";
import { createAssistantMessage } from "../providers/assistant-message.js";
import type { AgentMachineContext, FinalizedToolResult, ToolBatch, ToolCallEntry } from "./types.js";
import { failedStop } from "../util/stop-reason.js";
import { cloneJson } from "../util/clone-json.js";

/**
 * Takes messages from a queue: the first one (one-at-a-time) or all of them.
 *
 * @example
 * takeFromQueue([a, b], "one-at-a-time"); // { taken: [a], rest: [b] }
 */
export function takeFromQueue(queue: AgentMessage[], mode: QueueMode): { taken: AgentMessage[]; rest: AgentMessage[] } {
	if (queue.length === 0) return { taken: [], rest: queue };
	if (mode === "all") return { taken: queue, rest: [] };
	return { taken: queue.slice(0, 1), rest: queue.slice(1) };
}

/**
 * A call waiting for approval as `agent.pendingApprovals` lists it (and Restate's `state`, read
 * from a stored snapshot): one shape for both, so neither leaves out what the other says.
 *
 * @example
 * batch.calls.filter((call) => call.status === "awaiting-approval").map(pendingApproval);
 */
export function pendingApproval(call: ToolCallEntry): PendingApproval {
	return { toolCallId: call.toolCall.id, callKey: callKeyOf(call), toolName: call.toolCall.name, args: detachedArgs(call.args), reason: call.approval?.reason, deadline: call.approval?.deadline, argsProblem: call.argsProblem };
}

/**
 * A copy of the arguments a call waiting for approval is shown with: an approval screen that edits
 * them in place must not change what the call runs with (that is `approve(id, { arguments })`,
 * validated). Arguments that cannot be copied (a function in them, from `prepareArguments`) are
 * shown as they are.
 *
 * @example
 * detachedArgs({ path: "a" }); // { path: "a" }, another object
 */
export function detachedArgs(args: unknown): unknown {
	try {
		return cloneJson(args);
	} catch {
		return args;
	}
}

/**
 * The tool result message of a settled call.
 *
 * @example
 * toolResultMessage(call, { result: { content: [], details: {} }, isError: false });
 */
export function toolResultMessage(toolCall: AgentToolCall, outcome: FinalizedToolResult): ToolResultMessage {
	return {
		role: "toolResult",
		toolCallId: toolCall.id,
		toolName: toolCall.name,
		content: outcome.result.content,
		details: outcome.result.details,
		isError: outcome.isError,
		timestamp: Date.now(),
	};
}

/**
 * Finds a tool by exact name.
 *
 * @example
 * findTool(tools, "add");
 */
export function findTool(tools: AnyAgentTool[], name: string): AnyAgentTool | undefined {
	return tools.find((tool) => tool.name === name);
}

/**
 * The tool calls of an assistant message.
 *
 * @example
 * toolCallsOf(message).map((call) => call.name);
 */
export function toolCallsOf(message: AssistantMessage): AgentToolCall[] {
	// A message a listener broke (its content taken away) has none: reading it must not throw where a failed run is closed.
	if (!Array.isArray(message.content)) return [];
	return message.content.filter((block): block is AgentToolCall => block?.type === "toolCall");
}

/**
 * A batch for the tool calls of a completed assistant message. A tool with
 * `executionMode: "sequential"` makes a parallel batch sequential.
 *
 * @example
 * const batch = createToolBatch(message, tools, "parallel", turnEffectPrefix(run.id, run.turn));
 */
export function createToolBatch(assistant: AssistantMessage, tools: AnyAgentTool[], mode: AgentMachineContext["config"]["toolExecution"], effectPrefix: string): ToolBatch {
	const toolCalls = toolCallsOf(assistant);
	const forcesSequential = toolCalls.some((call) => findTool(tools, call.name)?.executionMode === "sequential");
	const batchMode = mode === "sequential" || (mode === "parallel" && forcesSequential) ? "sequential" : mode;
	const calls: ToolCallEntry[] = [];
	for (const toolCall of toolCalls) calls.push(newCallEntry(toolCall, callKeyFor(calls, toolCall.id)));
	return newBatch(assistant, batchMode, calls, effectPrefix, assistant.stopReason === "length");
}

/**
 * The key a new call with this id gets in a batch that holds `calls`: the id itself, or
 * `id#n` with the first n from 2 that no call holds, when a call of the batch has it already.
 * A model may repeat an id within one reply; pi runs each such call and answers each, so the
 * batch must tell them apart.
 *
 * @example
 * callKeyFor([], "toolu_1"); // "toolu_1"
 * callKeyFor([first], "toolu_1"); // "toolu_1#2" when first.key is "toolu_1"
 */
export function callKeyFor(calls: readonly ToolCallEntry[], id: string): string {
	let key = id;
	for (let n = 2; keyTaken(calls, key); n++) key = `${id}#${n}`;
	return key;
}

/**
 * Whether `key` is one {@link callKeyFor} makes for a call with this id: the id, or `id#n`.
 *
 * @example
 * isCallKeyOf("toolu_1#2", "toolu_1"); // true
 * isCallKeyOf("other", "toolu_1"); // false
 */
export function isCallKeyOf(key: string, id: string): boolean {
	return key === id || (key.startsWith(`${id}#`) && /^[1-9]\d*$/.test(key.slice(id.length + 1)));
}

/**
 * The name a person's decision gives a call (`approve()`, `reject()`, the `approve` and `reject`
 * events), as `pendingApprovals` and the approval events show it: `id#1` for the first call with
 * its id in the reply (`toolu_1#1`), a higher number for a call that repeats the id (`toolu_1#2`).
 * It never changes once the call exists (a repeat that streams in later does not rename the
 * first), and no two calls of a batch share it, whatever ids the model sent.
 *
 * @example
 * callKeyOf(call); // "toolu_1#1"
 */
export function callKeyOf(call: Pick<ToolCallEntry, "key"> & { toolCall: { id: string } }): string {
	// The batch's key is the id for a first call, `id#n` (n from 2) for a repeat: unique in the
	// batch, and `id#1` is never a first call's key, whose id would have to end in "#1" itself.
	return call.key === call.toolCall.id ? `${call.key}#1` : call.key;
}

/**
 * The calls among `candidates` that a decision's `name` names: the one whose {@link callKeyOf} it
 * is, else those with it as their tool call id. A key always names its call, also where it is
 * another call's id (a model whose own ids look like keys: `x`, `x`, `x#2` are keyed `x#1`, `x#2`,
 * `x#2#2`), so every call can be answered by its key. More than one is an ambiguous name, a bare id
 * the reply repeats: a decision takes none of them, since taking one could answer a call the
 * person did not mean.
 *
 * @example
 * const named = callsNamed(waiting, "toolu_1"); // two calls when both toolu_1 wait
 * callsNamed(waiting, "toolu_1#2"); // the repeat alone
 */
export function callsNamed(candidates: readonly ToolCallEntry[], name: string): ToolCallEntry[] {
	const byKey = candidates.filter((call) => callKeyOf(call) === name);
	return byKey.length > 0 ? byKey : candidates.filter((call) => call.toolCall.id === name);
}

function keyTaken(calls: readonly ToolCallEntry[], key: string): boolean {
	for (const call of calls) if (call.key === key) return true;
	return false;
}

/**
 * Pairs each tool call block with the batch's entry for it: the n-th block with an id goes with
 * the n-th entry with that id (entries join a batch in the order their calls stream), so
 * repeated ids pair up in order. Undefined for a block the batch has no entry for.
 *
 * @example
 * entriesOfBlocks(toolCallsOf(message), batch.calls); // [entry, entry, undefined]
 */
export function entriesOfBlocks(blocks: readonly AgentToolCall[], calls: readonly ToolCallEntry[]): (ToolCallEntry | undefined)[] {
	const seen = new Map<string, number>();
	return blocks.map((block) => {
		const ordinal = seen.get(block.id) ?? 0;
		seen.set(block.id, ordinal + 1);
		let left = ordinal;
		for (const call of calls) if (call.toolCall.id === block.id && left-- === 0) return call;
		return undefined;
	});
}

/**
 * Replaces one call of a batch, found by its key (batches are small; copying keeps context
 * immutable).
 *
 * @example
 * const next = updateCall(batch, "t1", { status: "running" });
 */
export function updateCall(batch: ToolBatch, key: string, patch: Partial<ToolCallEntry>): ToolBatch {
	return patchBatch(batch, { calls: batch.calls.map((call) => (call.key === key ? patchCall(call, patch) : call)) });
}

/**
 * The batch with `patch` applied, as a new object.
 *
 * @example
 * const next = patchBatch(batch, { truncated: true });
 */
export function patchBatch(batch: ToolBatch, patch: Partial<ToolBatch>): ToolBatch {
	return { ...batch, ...patch };
}

/**
 * A new batch, its actor not started.
 *
 * @example
 * const batch = newBatch(message, "streaming", [], turnEffectPrefix(run.id, run.turn));
 */
export function newBatch(assistant: AssistantMessage, mode: ToolBatch["mode"], calls: ToolCallEntry[], effectPrefix: string, truncated = false): ToolBatch {
	const batch: { [K in keyof ToolBatch]-?: ToolBatch[K] } = { assistant, mode, calls, truncated, actorStarted: false, effectPrefix };
	return batch;
}

/**
 * The call entry with `patch` applied, as a new object.
 *
 * @example
 * const running = patchCall(call, { status: "running" });
 */
export function patchCall(call: ToolCallEntry, patch: Partial<ToolCallEntry>): ToolCallEntry {
	return { ...call, ...patch };
}

/**
 * The entry of a call that has just joined its batch (queued).
 *
 * @example
 * const entry = newCallEntry(toolCall, callKeyFor(batch.calls, toolCall.id)); // status "queued"
 */
export function newCallEntry(toolCall: AgentToolCall, key: string): ToolCallEntry {
	return { key, toolCall, status: "queued", args: undefined, outcome: undefined, started: false, message: undefined };
}

/**
 * pi's rule: a batch stops the loop only when every result asks to terminate.
 *
 * @example
 * batchTerminates(batch); // false unless every outcome has terminate: true
 */
export function batchTerminates(batch: ToolBatch): boolean {
	return batch.calls.length > 0 && batch.calls.every((call) => call.outcome?.result.terminate === true);
}

/**
 * A reply that ended as an error or was aborted: its tool calls never run, providers are not
 * sent it again.
 *
 * @example
 * failedReply(message); // true after a connection reset
 */
export function failedReply(message: AssistantMessage): boolean {
	return failedStop(message.stopReason);
}

/**
 * The turn's reply failed (a reply still streaming has none yet).
 *
 * @example
 * replyFailed(runOf(context)); // true after a connection reset
 */
export function replyFailed(run: { assistant?: AssistantMessage | undefined } | undefined): boolean {
	return run?.assistant !== undefined && failedReply(run.assistant);
}

/**
 * The context hooks see.
 *
 * @example
 * hookContext(context).messages.length;
 */
export function hookContext(context: AgentMachineContext): AgentContext {
	const hook = {} as AgentContext;
	hook.systemPrompt = context.systemPrompt;
	hook.messages = context.messages;
	hook.tools = context.tools;
	return hook;
}

/**
 * The stream options of one LLM call (reasoning from the thinking level).
 *
 * @example
 * streamOptionsFor(context).reasoning; // undefined when thinking is off
 */
export function streamOptionsFor(context: AgentMachineContext): SimpleStreamOptions {
	const options: SimpleStreamOptions = { ...context.config.streamOptions };
	if (context.thinkingLevel !== "off") options.reasoning = context.thinkingLevel;
	return options;
}

/**
 * An empty aborted assistant message: closes a turn that was aborted before its LLM call,
 * so every turn still ends with an assistant message and no call is made.
 *
 * @example
 * abortedAssistantMessage(context).stopReason; // "aborted"
 */
export function abortedAssistantMessage(context: AgentMachineContext, errorMessage: string): AssistantMessage {
	return createAssistantMessage(context.model, { stopReason: "aborted", errorMessage });
}

/**
 * The default `convertToLlm`: keeps user, assistant and tool result messages, turns
 * compaction summaries into a user message, drops everything else.
 *
 * @example
 * const llm = defaultConvertToLlm(agent.state.messages);
 */
export function defaultConvertToLlm(messages: AgentMessage[]): Message[] {
	// Usually every message goes to the model as it is: the transcript is then copied whole (a
	// block copy), and only from the first one that is not is it rebuilt message by message.
	let first = 0;
	while (first < messages.length && isLlmRole((messages[first] as { role?: unknown }).role)) first++;
	if (first === messages.length) return messages.slice() as Message[];
	const result = messages.slice(0, first) as Message[];
	for (let index = first; index < messages.length; index++) {
		const message = messages[index] as AgentMessage;
		const role = (message as { role?: unknown }).role;
		if (isLlmRole(role)) {
			result.push(message as Message);
		} else if (role === "compactionSummary") {
			const summary = (message as { summary?: unknown }).summary;
			result.push({
				role: "user",
				content: [
					{
						type: "text",
						text: `The conversation history before this point was compacted into the following summary:\n\n<summary>\n${String(summary)}\n</summary>`,
					},
				],
				timestamp: (message as { timestamp?: number }).timestamp ?? Date.now(),
			});
		}
	}
	return result;
}

function isLlmRole(role: unknown): boolean {
	return role === "user" || role === "assistant" || role === "toolResult";
}
