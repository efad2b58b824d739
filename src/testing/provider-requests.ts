/**
 * What a provider would be sent for a transcript, checked: `convertToLlm`, then each
 * provider's own message transform (our Anthropic and OpenAI converters, and the rule every
 * provider applies, pi-ai's included: failed and empty assistant messages are left out). A transcript is
 * only as good as the next request it makes: a tool result that answers no tool call, or a tool
 * call without a result, gets a 400 on every later call.
 */
import { shown } from "../agent-input.js";
import { isRecord } from "../util/json-values.js";
import { defaultConvertToLlm } from "../machines/run-helpers.js";
import { convertMessages } from "../providers/anthropic-request.js";
import { resolveOpenAICompat } from "../providers/openai-compat.js";
import { convertOpenAIMessages } from "../providers/openai-messages.js";
import { createOpenAICompatibleModel } from "../providers/openai-models.js";
import { getModel } from "../providers/models.js";
import type { AgentMessage, Message } from "../types/messages.js";

const anthropicModel = getModel("anthropic", "claude-sonnet-4-6");
const openAIModel = createOpenAICompatibleModel({ baseUrl: "http://127.0.0.1:11434/v1", id: "local" });

/**
 * An assistant message no provider sends: a failed one, or one without content (a reply cut off
 * by the output limit before anything streamed). Every converter leaves both out: ours, and
 * pi-ai's for Anthropic, OpenAI, Google and Bedrock.
 */
function leftOut(message: Message): boolean {
	return message.role === "assistant" && (message.stopReason === "error" || message.stopReason === "aborted" || message.content.length === 0);
}

/**
 * The generic rule: with the assistant messages no provider sends left out (failed or empty),
 * each assistant message's tool calls are answered by the tool results right after it (exactly
 * once each), and no tool result stands anywhere else.
 */
export function conversationViolations(messages: readonly Message[]): string[] {
	const violations: string[] = [];
	const kept = messages.filter((message) => !leftOut(message));
	// A list, not a set: two calls of one message may share an id, and each needs its own result.
	let open: string[] | undefined;
	let openAt = -1;
	const close = () => {
		if (open && open.length > 0) violations.push(`assistant #${openAt}: tool call(s) ${open.join(", ")} without a result`);
		open = undefined;
	};
	kept.forEach((message, index) => {
		if (message.role === "toolResult") {
			const at = open?.indexOf(message.toolCallId) ?? -1;
			if (at === -1) violations.push(`#${index}: tool result ${message.toolCallId} answers no tool call of the assistant message before it`);
			else open?.splice(at, 1);
			return;
		}
		close();
		if (message.role === "assistant") {
			const calls = message.content.filter((block) => block.type === "toolCall").map((block) => block.id);
			if (calls.length > 0) {
				open = calls;
				openAt = index;
			}
		}
	});
	close();
	return violations;
}

/** Ids that occur more than once. */
function repeated(ids: readonly string[]): string[] {
	return [...new Set(ids.filter((id, index) => ids.indexOf(id) !== index))];
}

/**
 * Anthropic: every `tool_result` answers a `tool_use` of the assistant turn right before it, and
 * every `tool_use` is answered; no two `tool_use` blocks of the request share an id (the API
 * answers 400 "tool_use ids must be unique").
 */
function anthropicViolations(messages: readonly Message[]): string[] {
	const violations: string[] = [];
	const turns = convertMessages([...messages], anthropicModel);
	const allToolUses = turns.flatMap((turn) => (typeof turn.content === "string" ? [] : turn.content.flatMap((block) => (block.type === "tool_use" ? [block.id] : []))));
	for (const id of repeated(allToolUses)) violations.push(`anthropic: tool_use id ${id} is not unique in the request`);
	let previousToolUses: string[] = [];
	turns.forEach((turn, index) => {
		const blocks = typeof turn.content === "string" ? [] : turn.content;
		if (blocks.length === 0 && typeof turn.content !== "string") violations.push(`anthropic turn ${index}: empty content`);
		if (turn.role === "user") {
			const answered = blocks.flatMap((block) => (block.type === "tool_result" ? [block.tool_use_id] : []));
			for (const id of answered) if (!previousToolUses.includes(id)) violations.push(`anthropic turn ${index}: tool_result ${id} without its tool_use`);
			for (const id of previousToolUses) if (!answered.includes(id)) violations.push(`anthropic turn ${index}: tool_use ${id} not answered`);
			previousToolUses = [];
		} else {
			if (previousToolUses.length > 0) violations.push(`anthropic turn ${index}: tool_use ${previousToolUses.join(", ")} not answered`);
			previousToolUses = blocks.flatMap((block) => (block.type === "tool_use" ? [block.id] : []));
		}
	});
	if (previousToolUses.length > 0) violations.push(`anthropic: last turn's tool_use ${previousToolUses.join(", ")} not answered`);
	return violations;
}

/** OpenAI Chat Completions: `tool` messages follow the assistant message that made the calls, one per call; call ids are unique. */
function openAIViolations(messages: readonly Message[]): string[] {
	const violations: string[] = [];
	const wire = convertOpenAIMessages(openAIModel, { messages: [...messages] }, resolveOpenAICompat(openAIModel));
	const allCalls = wire.flatMap((message) => (message.role === "assistant" ? (message.tool_calls ?? []).map((call) => call.id) : []));
	for (const id of repeated(allCalls)) violations.push(`openai: tool call id ${id} is not unique in the request`);
	let open = new Set<string>();
	wire.forEach((message, index) => {
		if (message.role === "tool") {
			if (!open.delete(message.tool_call_id)) violations.push(`openai #${index}: tool message ${message.tool_call_id} answers no call`);
			return;
		}
		if (open.size > 0) violations.push(`openai #${index}: call(s) ${[...open].join(", ")} not answered`);
		open = new Set(message.role === "assistant" ? (message.tool_calls ?? []).map((call) => call.id) : []);
	});
	if (open.size > 0) violations.push(`openai: call(s) ${[...open].join(", ")} not answered`);
	return violations;
}

/**
 * Every way the next request for this transcript would be invalid, for the default
 * `convertToLlm` (or the one given).
 *
 * @example
 * expect(providerRequestViolations(agent.state.messages)).toEqual([]);
 */
export function providerRequestViolations(
	transcript: readonly AgentMessage[],
	convertToLlm: (messages: AgentMessage[]) => Message[] = defaultConvertToLlm,
): string[] {
	const messages = convertToLlm([...transcript]);
	// A message of the wrong shape (a listener that replaced a result's content with text) is the
	// finding: the providers' converters would only throw on it.
	const malformed = shapeViolations(messages);
	const violations = malformed.length > 0 ? malformed : [...conversationViolations(messages), ...converted("anthropic", () => anthropicViolations(messages)), ...converted("openai", () => openAIViolations(messages))];
	return violations.map((v) => `next request: ${v}`);
}

/** A provider's check, or what its converter threw on this transcript (a shape no check above foresaw). */
function converted(provider: string, check: () => string[]): string[] {
	try {
		return check();
	} catch (error) {
		return [`${provider}: converting the transcript threw ${error instanceof Error ? error.message : String(error)}`];
	}
}

function isBlockList(content: unknown): content is { type?: unknown }[] {
	return Array.isArray(content) && content.every((block: unknown) => isRecord(block) && typeof block["type"] === "string");
}

/** Messages a provider's request could not be built from: content that is not a list of blocks (text, for a user message), a result without its call's id. */
function shapeViolations(messages: readonly Message[]): string[] {
	const violations: string[] = [];
	messages.forEach((message, index) => {
		const content: unknown = message.content;
		if (message.role === "user" && typeof content === "string") return;
		if (!isBlockList(content)) violations.push(`#${index} (${message.role}): its content is not a list of content blocks, got ${shown(content)}`);
		if (message.role === "toolResult" && typeof message.toolCallId !== "string") violations.push(`#${index} (toolResult): its toolCallId is not a text, got ${shown(message.toolCallId)}`);
	});
	return violations;
}
