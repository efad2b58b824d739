/**
 * The messages and replies the abstract model and the real runs share: the walk's prompts,
 * the scripted model's description, and the reply kinds a `stream.done` can carry (a reply is
 * data the puppet stream plays back as the path asks).
 */
import { emptyUsage } from "../../types/content.js";
import type { AgentToolCall } from "../../types/agent.js";
import type { AgentMessage, AssistantMessage, UserMessage } from "../../types/messages.js";
import type { Model } from "../../types/model.js";

/**
 * A tool call the walk's replies make (name and arguments; the id is made per reply).
 *
 * @example
 * const calls: SampleCall[] = [{ name: "lookupOrder", arguments: { id: "A-17" } }, { name: "refund", arguments: { id: "A-17", amount: 20 } }];
 * const report = await fuzzAgent(factory, { calls });
 */
export interface SampleCall {
	name: string;
	arguments: Record<string, unknown>;
}

/** The stub tool of agentchart's own walk, and a tool no agent has. */
export const STUB_TOOL = "stub";
export const MISSING_TOOL = "missing";
export const SUMMARY = "summary";
export const OVERFLOW_ERROR = "prompt is too long: 150000 tokens > 100000 maximum";
export const USAGE = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 };

/** The walk's own model description (agentchart's walk; yours keeps your agent's model). */
export const walkModel: Model = {
	id: "scripted-1",
	name: "Scripted model",
	api: "scripted",
	provider: "scripted",
	baseUrl: "",
	reasoning: true,
	input: ["text"],
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
	contextWindow: 100_000,
	maxTokens: 16_384,
};

/** A user message. */
export function userMessage(text: string, timestamp = 0): UserMessage {
	return { role: "user", content: [{ type: "text", text }], timestamp };
}

/** An assistant message of the walk's model. */
export function assistantMessage(model: Pick<Model, "api" | "provider" | "id">, content: AssistantMessage["content"], stopReason: AssistantMessage["stopReason"], errorMessage?: string): AssistantMessage {
	const message: AssistantMessage = {
		role: "assistant",
		content,
		api: model.api,
		provider: model.provider,
		model: model.id,
		usage: stopReason === "aborted" ? emptyUsage() : { ...emptyUsage(), ...USAGE },
		stopReason,
		timestamp: 0,
	};
	if (errorMessage !== undefined) message.errorMessage = errorMessage;
	return message;
}

/**
 * The reply kinds a `stream.done` can carry: plain text, one or two tool calls, a call cut off by
 * the output limit, a call of a tool the agent does not have, an error, a context overflow, and
 * the reply of an aborted call.
 */
export type ReplyKind = "text" | "tools" | "length" | "missing" | "error" | "overflow" | "aborted";

/** The stop reason of a reply kind. */
export function replyStop(kind: ReplyKind): AssistantMessage["stopReason"] {
	switch (kind) {
		case "text":
			return "stop";
		case "tools":
		case "missing":
			return "toolUse";
		case "length":
			return "length";
		case "error":
		case "overflow":
			return "error";
		case "aborted":
			return "aborted";
	}
}

/** The error message of a reply kind. */
export function replyError(kind: ReplyKind): string | undefined {
	if (kind === "error") return "boom";
	if (kind === "overflow") return OVERFLOW_ERROR;
	if (kind === "aborted") return "Request was aborted";
	return undefined;
}

/** The tool calls of a message, in order. */
export function callsOf(message: AgentMessage | undefined): AgentToolCall[] {
	if ((message as { role?: string } | undefined)?.role !== "assistant") return [];
	return (message as AssistantMessage).content.filter((block): block is AgentToolCall => block.type === "toolCall");
}

/** The kind of an abstract reply (the model's messages are made by {@link abstractReply}, so this reads them back). */
export function replyKindOf(message: AssistantMessage): ReplyKind {
	switch (message.stopReason) {
		case "aborted":
			return "aborted";
		case "error":
			return message.errorMessage === OVERFLOW_ERROR ? "overflow" : "error";
		case "length":
			return "length";
		case "toolUse":
			return callsOf(message).some((call) => call.name === MISSING_TOOL) ? "missing" : "tools";
		default:
			return "text";
	}
}
