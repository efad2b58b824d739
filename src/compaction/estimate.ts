import type { AgentMessage, AssistantMessage } from "../types/messages.js";
import type { Usage } from "../types/content.js";

/** An image counts as this many characters (about 1200 tokens), as pi estimates. */
const IMAGE_CHARS = 4800;

function contentChars(content: unknown): number {
	if (typeof content === "string") return content.length;
	if (!Array.isArray(content)) return 0;
	let chars = 0;
	for (const block of content as { type?: string; text?: string; thinking?: string; name?: string; arguments?: unknown }[]) {
		if (block.type === "text") chars += block.text?.length ?? 0;
		else if (block.type === "thinking") chars += block.thinking?.length ?? 0;
		else if (block.type === "toolCall") chars += (block.name?.length ?? 0) + JSON.stringify(block.arguments ?? {}).length;
		else if (block.type === "image") chars += IMAGE_CHARS;
	}
	return chars;
}

/**
 * A rough token estimate of one transcript entry: characters / 4.
 *
 * @example
 * estimateMessageTokens({ role: "user", content: "hello world!", timestamp: 0 }); // 3
 */
export function estimateMessageTokens(message: AgentMessage): number {
	const entry = message as { role?: string; content?: unknown; summary?: string };
	if (entry.role === "compactionSummary") return Math.ceil((entry.summary?.length ?? 0) / 4);
	return Math.ceil(contentChars(entry.content) / 4);
}

/**
 * The context size a usage record reports: totalTokens, or the sum of its parts.
 *
 * @example
 * usageTokens(message.usage);
 */
export function usageTokens(usage: Usage): number {
	return usage.totalTokens || usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
}

function isUsableAssistant(message: AgentMessage): message is AssistantMessage {
	const entry = message as Partial<AssistantMessage>;
	return (
		entry.role === "assistant" &&
		entry.stopReason !== "error" &&
		entry.stopReason !== "aborted" &&
		entry.usage !== undefined &&
		usageTokens(entry.usage) > 0
	);
}

/**
 * Estimated context tokens of a transcript: the usage of the last successful assistant
 * reply plus a chars/4 estimate of everything after it. Usage recorded before the latest
 * compaction is stale (the context it measured no longer exists): that of replies before the
 * summary, and that of the replies the compaction kept after it (older than the summary, or of
 * its millisecond among its `messagesKept` messages right after it). Those, and everything when
 * no reply has fresh usage, are estimated.
 *
 * @example
 * estimateContextTokens(agent.state.messages);
 */
export function estimateContextTokens(messages: AgentMessage[]): number {
	let summaryIndex = -1;
	for (let i = messages.length - 1; i >= 0; i--) {
		if ((messages[i] as { role?: string }).role === "compactionSummary") {
			summaryIndex = i;
			break;
		}
	}
	const summary = summaryIndex >= 0 ? (messages[summaryIndex] as { timestamp?: unknown; messagesKept?: unknown }) : undefined;
	const compactedAt = summary?.timestamp;
	const counted = summary?.messagesKept;
	const kept = typeof counted === "number" && Number.isSafeInteger(counted) && counted >= 0 ? counted : 0;
	// The kept replies' usage measured the whole transcript before the compaction: counting it
	// would report no gain (tokensAfter ≈ tokensBefore) and start the next compaction at once.
	// Older than the summary is kept. So is a reply of its own millisecond (usual with a fast model)
	// among the messages the summary says it kept right after it: the place alone would misjudge a
	// transcript the caller edited there, the time alone that millisecond.
	const isStale = (message: AssistantMessage, index: number): boolean => {
		if (typeof compactedAt !== "number" || typeof message.timestamp !== "number") return false;
		return message.timestamp < compactedAt || (message.timestamp === compactedAt && index <= summaryIndex + kept);
	};
	let tokens = 0;
	for (let i = messages.length - 1; i > summaryIndex; i--) {
		const message = messages[i] as AgentMessage;
		if (isUsableAssistant(message) && !isStale(message, i)) return tokens + usageTokens(message.usage);
		tokens += estimateMessageTokens(message);
	}
	for (let i = summaryIndex; i >= 0; i--) tokens += estimateMessageTokens(messages[i] as AgentMessage);
	return tokens;
}
