/**
 * The crash test's compaction summaries: its summariser writes down, as JSON, everything it
 * summarises (an earlier summary inside a later one), so that the whole session can be read back
 * from a compacted transcript: by the checker (crash-run.ts), and by the worker, which must not
 * send again a task that was summarised away.
 */
import type { AgentMessage } from "agentchart";

/** What the crash test's summariser writes (see worker.ts). */
export interface CrashSummary {
	instructions?: string | undefined;
	previous?: string | undefined;
	messages: AgentMessage[];
	turnPrefix: AgentMessage[];
}

/**
 * The transcript with each compaction summary replaced by what it summarised: the crash test's
 * summariser writes that down as JSON (see worker.ts), an earlier summary inside a later one.
 * Throws when a summary is not one of those.
 *
 * @example
 * expandSummaries([{ role: "compactionSummary", summary: JSON.stringify({ messages: [user], turnPrefix: [] }) }, answer]); // [user, answer]
 */
export function expandSummaries(messages: readonly AgentMessage[]): AgentMessage[] {
	const expand = (summary: string): AgentMessage[] => {
		const parsed = JSON.parse(summary) as CrashSummary;
		return [...(parsed.previous === undefined ? [] : expand(parsed.previous)), ...parsed.messages, ...parsed.turnPrefix];
	};
	return messages.flatMap((message) => {
		const entry = message as { role: string; summary?: string };
		return entry.role === "compactionSummary" ? expand(entry.summary ?? "") : [message];
	});
}
