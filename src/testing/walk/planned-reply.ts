/**
 * What the model says next: the reply the path's next `stream.done` carries (with the tool calls
 * streamed before it), made into a script the puppet stream plays.
 */
import type { AgentMachineEvent } from "../../machines/types.js";
import type { ScriptedBlock, ScriptedReply } from "../../providers/scripted.js";
import type { AgentToolCall } from "../../types/agent.js";
import type { AssistantMessage } from "../../types/messages.js";
import { isRestore } from "../model/alphabet.js";
import { USAGE } from "../model/fixtures.js";
import { WalkCast } from "./cast.js";

function callBlock(call: AgentToolCall): ScriptedBlock {
	return { type: "toolCall", name: call.name, arguments: { ...call.arguments }, id: WalkCast.nextCallId() };
}

function replyFrom(message: AssistantMessage): ScriptedReply {
	const blocks: ScriptedBlock[] = message.content.flatMap((block): ScriptedBlock[] => {
		if (block.type === "text") return [{ type: "text", text: block.text }];
		if (block.type === "toolCall") return [callBlock(block)];
		return [];
	});
	const stopReason = message.stopReason === "toolUse" || message.stopReason === "stop" ? undefined : message.stopReason;
	return { content: blocks, stopReason, errorMessage: message.errorMessage, usage: { input: USAGE.input, output: USAGE.output, totalTokens: USAGE.totalTokens } };
}

/**
 * The reply for a model call made at step `index` of these events: the next `stream.done`'s (with
 * the calls streamed before it), or, when the path ends or aborts first, the calls it streams
 * (else a short text).
 */
export function plannedReply(events: readonly AgentMachineEvent[], index: number, auto: boolean): ScriptedReply {
	const streamed: AgentToolCall[] = [];
	if (!auto) {
		for (let j = index + 1; j < events.length; j++) {
			const event = events[j] as AgentMachineEvent;
			if (event.type === "stream.toolcall") streamed.push(event.toolCall as AgentToolCall);
			if (event.type === "stream.done") {
				if (event.message.stopReason !== "aborted") return replyFrom(event.message);
				break;
			}
			// This call's stream ends with its agent: a restored one makes the call again.
			if (event.type === "dispose" || event.type === "stream.interrupted" || isRestore(event)) break;
		}
	}
	const content: ScriptedBlock[] = streamed.length ? streamed.map(callBlock) : [{ type: "text", text: "hi" }];
	return { content, usage: { input: USAGE.input, output: USAGE.output, totalTokens: USAGE.totalTokens } };
}
