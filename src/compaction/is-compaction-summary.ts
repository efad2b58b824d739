import type { CompactionSummaryMessage, TranscriptMessage } from "../types/messages.js";

/**
 * True for agentchart's compaction summary. It takes a {@link TranscriptMessage}, so it
 * narrows a transcript read as such whether or not `CompactionSummaryMessage` is declared in
 * `CustomAgentMessages`.
 *
 * @example
 * const transcript: readonly TranscriptMessage[] = agent.state.messages;
 * const summary = transcript.find(isCompactionSummary)?.summary;
 */
export function isCompactionSummary(message: TranscriptMessage | undefined): message is CompactionSummaryMessage {
	return (message as { role?: unknown } | undefined)?.role === "compactionSummary";
}
