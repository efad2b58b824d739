import { fromPromise } from "xstate";
import { planCompaction } from "../compaction/cut-point.js";
import { estimateContextTokens } from "../compaction/estimate.js";
import { summarizeWithModel } from "../compaction/summarize.js";
import type { AgentMessage, CompactionSummaryMessage } from "../types/messages.js";
import { DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS, type CompactionActorInput, type CompactionOutput, InterruptedByRestart, type RestoredCompactionInput } from "./compaction-protocol.js";

/**
 * Compacts a transcript: plans the cut, writes the summary (custom `summarize`, else the
 * agent's own model), and returns `[summary, ...kept]`. Rejects when there is nothing to
 * compact or the summariser fails; the machine turns that into `auto_compaction_end` with an
 * `errorMessage` and leaves the transcript unchanged.
 */
const compactionPromise = fromPromise<CompactionOutput, CompactionActorInput | RestoredCompactionInput>(async ({ input: given, signal }) => {
	// Restored from a snapshot taken while it ran: the chart makes the compaction again.
	if ("restored" in given) throw new InterruptedByRestart();
	const input = given;
	const combined = input.signal ? AbortSignal.any([signal, input.signal]) : signal;
	const keepRecentTokens = input.settings.keepRecentTokens ?? DEFAULT_KEEP_RECENT_TOKENS;
	const reserveTokens = input.settings.reserveTokens ?? DEFAULT_RESERVE_TOKENS;
	const plan = planCompaction(input.messages, keepRecentTokens);
	if (!plan) throw new Error("Nothing to compact: the transcript is already within keepRecentTokens");
	const tokensBefore = estimateContextTokens(input.messages);
	const summaryInput = {
		history: plan.history,
		turnPrefix: plan.turnPrefix,
		previousSummary: plan.previousSummary,
		instructions: input.instructions,
	};
	const summary = input.settings.summarize
		? await input.settings.summarize({ messages: plan.history, turnPrefix: plan.turnPrefix, previousSummary: plan.previousSummary, instructions: input.instructions, signal: combined })
		: await summarizeWithModel(summaryInput, {
				streamFn: input.streamFn,
				model: input.model,
				convertToLlm: input.convertToLlm,
				reserveTokens,
				streamOptions: input.streamOptions,
				getApiKey: input.getApiKey,
				signal: combined,
				idleTimeoutMs: input.idleTimeoutMs,
			});
	if (combined.aborted) throw new Error("Compaction aborted");
	// The summary replaces the history for good: an empty one (a summariser whose model answered
	// nothing) would lose it silently. The default summariser refuses that too.
	if (typeof summary !== "string" || summary.trim() === "") throw new Error("Summarization failed: summarize() returned no text");
	const summaryMessage: CompactionSummaryMessage = {
		role: "compactionSummary",
		summary,
		tokensBefore,
		messagesDropped: plan.dropped,
		messagesKept: plan.kept.length,
		timestamp: Date.now(),
	};
	// The summary is agentchart's own entry (a TranscriptMessage); AgentMessage, as pi's, leaves it out unless an app declares it.
	const messages = [summaryMessage, ...plan.kept] as AgentMessage[];
	return {
		messages,
		result: {
			summary,
			tokensBefore,
			tokensAfter: estimateContextTokens(messages),
			messagesDropped: plan.dropped,
			messagesKept: plan.kept.length,
			splitTurn: plan.turnPrefix.length > 0,
		},
	};
});

/**
 * The compaction actor's logic: `compactionPromise`, persisted as a marker of the compaction in
 * progress (its input holds the run's functions), so that a restored actor fails with
 * `InterruptedByRestart` (an internal error class) and the chart makes the compaction again.
 */
export const compactionActor = {
	...compactionPromise,
	getPersistedSnapshot(snapshot: { status: string; output?: unknown; error?: unknown }) {
		return { status: snapshot.status, output: snapshot.output, error: snapshot.error, input: { restored: true } satisfies RestoredCompactionInput };
	},
} as typeof compactionPromise;
