/**
 * Checks of a transcript as data: valid to send to a provider as it stands, and what the
 * providers' own converters would make of it.
 */
import { defaultConvertToLlm } from "../machines/run-helpers.js";
import type { AgentMessage, AssistantMessage, Message } from "../types/messages.js";
import { Counts, toolCallIdsOf } from "./id-counts.js";
import { conversationViolations, providerRequestViolations } from "./provider-requests.js";
import { type AgentViolation, violation } from "./violations.js";

function failed(message: AgentMessage): boolean {
	const stop = (message as AssistantMessage).stopReason;
	return stop === "error" || stop === "aborted";
}

function roleOf(message: unknown): string | undefined {
	return (message as { role?: string } | undefined)?.role;
}

/**
 * The transcript is valid to send to a provider: every tool call of a reply that did not fail
 * is answered by exactly one tool result, right after it and in source order; no tool result
 * answers nothing (results of a failed reply's calls are tolerated); a reply that succeeded
 * carries no error message.
 *
 * @example
 * expect(transcriptViolations(agent.state.messages)).toEqual([]);
 */
export function transcriptViolations(messages: readonly AgentMessage[]): AgentViolation[] {
	const violations: AgentViolation[] = [];
	const fail = (text: string) => violations.push(violation("transcript", text));
	// Counted: two calls that share an id are answered by two results.
	const calls = new Counts();
	const answered = new Counts();
	for (let index = 0; index < messages.length; index++) {
		const message = messages[index] as AgentMessage;
		if (roleOf(message) === "assistant") {
			const { stopReason, errorMessage } = message as AssistantMessage;
			// A reply that succeeded carries no error: a run reporting one says it failed when it did not.
			if ((stopReason === "stop" || stopReason === "toolUse") && errorMessage !== undefined) {
				fail(`transcript[${index}]: a ${stopReason} reply carries errorMessage "${errorMessage}"`);
			}
			const ids = toolCallIdsOf(message);
			for (const id of ids) calls.add(id);
			if (failed(message)) continue;
			for (let k = 0; k < ids.length; k++) {
				const next = messages[index + 1 + k] as { role?: string; toolCallId?: string } | undefined;
				if (next?.role !== "toolResult" || next.toolCallId !== ids[k]) {
					fail(`transcript[${index}]: tool call ${ids[k]} not answered in source order (found ${next === undefined ? "the end of the transcript" : next.role === "toolResult" ? `the result of ${next.toolCallId}` : `a ${next.role} message`})`);
					break;
				}
			}
		}
		if (roleOf(message) === "toolResult") {
			const id = (message as { toolCallId: string }).toolCallId;
			if (calls.get(id) === 0) fail(`transcript[${index}]: orphan tool result ${id}`);
			else if (answered.get(id) >= calls.get(id)) fail(`transcript[${index}]: second result for ${id}`);
			answered.add(id);
		}
	}
	return violations;
}

/**
 * Every way the next request for this transcript would be invalid, after `convertToLlm` (the
 * default one, or yours), checked by the rule every provider applies and by agentchart's
 * Anthropic and OpenAI converters.
 *
 * @example
 * expect(requestViolations(agent.state.messages)).toEqual([]);
 */
export function requestViolations(messages: readonly AgentMessage[], convertToLlm: (messages: AgentMessage[]) => Message[] = defaultConvertToLlm): AgentViolation[] {
	return providerRequestViolations(messages, convertToLlm).map((text) => violation("provider-request", text));
}

/**
 * What a request the model was actually sent breaks of the rule every provider applies (each
 * tool call answered right after it, once): the messages after your `transformContext` and
 * `convertToLlm`, which the checks of the transcript do not see. The walk's and the fuzzer's
 * models check every request they get.
 *
 * @example
 * const found = sentRequestViolations(context.messages); // in a stream function
 */
export function sentRequestViolations(messages: readonly Message[]): AgentViolation[] {
	return conversationViolations(messages).map((text) => violation("provider-request", `the model was sent a request a provider refuses (after transformContext and convertToLlm): ${text}`));
}

/**
 * Both checks of a transcript: {@link transcriptViolations} and {@link requestViolations}.
 *
 * @example
 * assertNoViolations(checkTranscript(agent.state.messages));
 */
export function checkTranscript(messages: readonly AgentMessage[], convertToLlm?: (messages: AgentMessage[]) => Message[]): AgentViolation[] {
	return [...transcriptViolations(messages), ...requestViolations(messages, convertToLlm)];
}
