import type { AgentMessage } from "../types/messages.js";
import { estimateMessageTokens } from "./estimate.js";

/**
 * How a transcript splits for compaction.
 *
 * @example
 * const plan: CompactionPlan | undefined = planCompaction(agent.state.messages, 20_000);
 * if (plan) console.log(`summarising ${plan.dropped} messages, keeping ${plan.kept.length}`);
 */
export interface CompactionPlan {
	/** An earlier compaction summary at the start of the transcript, absorbed into the new one. */
	previousSummary?: string | undefined;
	/** Whole turns to summarise. */
	history: AgentMessage[];
	/** When the cut falls inside a turn: that turn's messages before the cut. */
	turnPrefix: AgentMessage[];
	/** Messages kept verbatim. */
	kept: AgentMessage[];
	/** How many transcript entries the summary replaces (including an earlier summary). */
	dropped: number;
}

function roleOf(message: AgentMessage | undefined): string | undefined {
	return (message as { role?: string } | undefined)?.role;
}

/**
 * Plans a compaction: walks back from the newest message until `keepRecentTokens` are kept
 * (the newest message at least), then moves the cut forward to the nearest message that may
 * start the kept part — never a tool result, so a tool call and its result are never separated. A cut inside a turn (not
 * at a user message) is a split turn: the turn's early part is summarised on its own.
 * Returns undefined when there is nothing to summarise.
 *
 * @throws {RangeError} when `keepRecentTokens` is `NaN` or not a number.
 *
 * @example
 * const plan = planCompaction(messages, 20000);
 * if (plan) console.log(plan.history.length, plan.kept.length);
 */
export function planCompaction(messages: AgentMessage[], keepRecentTokens: number): CompactionPlan | undefined {
	// NaN (a setting read from an unset environment variable) fails every comparison: the walk
	// kept nothing and the pending prompt went into the summary without a word.
	if (typeof keepRecentTokens !== "number" || Number.isNaN(keepRecentTokens)) {
		throw new RangeError(`keepRecentTokens must be a number of tokens, got ${String(keepRecentTokens)}`);
	}
	const start = roleOf(messages[0]) === "compactionSummary" ? 1 : 0;
	const previousSummary = start === 1 ? (messages[0] as unknown as { summary: string }).summary : undefined;
	let kept = 0;
	let index = messages.length;
	// The newest message is always kept (as pi keeps it), also with keepRecentTokens 0: before a
	// call it is the prompt or the tool results the call answers, which a summary must not replace.
	while (index > start && (kept < keepRecentTokens || index === messages.length)) {
		index--;
		kept += estimateMessageTokens(messages[index] as AgentMessage);
	}
	let cut = index;
	while (cut < messages.length && roleOf(messages[cut]) === "toolResult") cut++;
	// Only tool results after the walk: keep their assistant message with them instead.
	if (cut === messages.length) {
		cut = index;
		while (cut > start && roleOf(messages[cut]) === "toolResult") cut--;
	}
	if (cut <= start) return undefined;
	let turnStart = cut;
	if (roleOf(messages[cut]) !== "user" && cut < messages.length) {
		turnStart = cut;
		while (turnStart > start && roleOf(messages[turnStart]) !== "user") turnStart--;
		if (roleOf(messages[turnStart]) !== "user") turnStart = cut;
	}
	const history = messages.slice(start, turnStart);
	const turnPrefix = messages.slice(turnStart, cut);
	if (history.length === 0 && turnPrefix.length === 0) return undefined;
	return { previousSummary, history, turnPrefix, kept: messages.slice(cut), dropped: cut };
}
