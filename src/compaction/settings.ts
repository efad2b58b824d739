import type { AgentMessage } from "../types/messages.js";

/**
 * Compaction settings, the Agent's `compaction` option (see docs/compaction.md).
 *
 * @example
 * const agent = new Agent({ initialState: { model }, streamFn, compaction: { enabled: true, reserveTokens: 2048, keepRecentTokens: 2048 } });
 */
export interface CompactionSettings {
	/** Compact automatically (threshold and overflow). */
	enabled: boolean;
	/** Tokens kept free below the context window; compaction starts when the context exceeds window − reserve. Default: 16384. */
	reserveTokens?: number | undefined;
	/** Tokens of recent conversation kept verbatim. Default: 20000. */
	keepRecentTokens?: number | undefined;
	/** Replaces the model call that writes the summary. An empty summary fails the compaction (the history stays). */
	summarize?: ((request: SummarizeRequest) => Promise<string>) | undefined;
}

/**
 * What a custom summariser receives.
 *
 * @example
 * const summarize = ({ messages, previousSummary, signal }: SummarizeRequest) => mySummary(messages, previousSummary, signal);
 * const agent = new Agent({ compaction: { enabled: true, summarize } });
 */
export interface SummarizeRequest {
	/** Messages to summarise (the history before the kept part). */
	messages: AgentMessage[];
	/** When the cut splits a turn: that turn's early part, summarised separately. */
	turnPrefix: AgentMessage[];
	/** The summary of an earlier compaction, for an iterative update. */
	previousSummary?: string | undefined;
	/** Extra instructions (manual compaction). */
	instructions?: string | undefined;
	/** Aborts with the run. */
	signal: AbortSignal;
}
