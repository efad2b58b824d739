import { DEFAULT_RESERVE_TOKENS } from "../actors/compaction-protocol.js";
import { estimateContextTokens } from "../compaction/estimate.js";
import { isContextOverflow } from "../providers/overflow.js";
import type { AgentMachineContext } from "./types.js";

/**
 * Whether the context has grown past the threshold (window − reserveTokens) before an LLM
 * call. Checked before every call of a run, so a long tool loop compacts before it overflows;
 * at most once per turn, so a context that stays too large after compacting does not loop.
 *
 * @example
 * tokensNeedCompaction(context); // false while compaction is off
 */
export function tokensNeedCompaction(context: AgentMachineContext): boolean {
	const settings = context.config.compaction;
	if (!settings?.enabled || context.run?.compactedThisTurn) return false;
	const window = context.model.contextWindow;
	if (!window) return false;
	const reserve = settings.reserveTokens ?? DEFAULT_RESERVE_TOKENS;
	return estimateContextTokens(context.messages) > window - reserve;
}

/**
 * Whether the reply that just ended is a context overflow the machine can still recover
 * from (compaction on, no recovery attempted yet in this run).
 *
 * @example
 * canRecoverFromOverflow(context);
 */
export function canRecoverFromOverflow(context: AgentMachineContext): boolean {
	const assistant = context.run?.assistant;
	if (!assistant || !context.config.compaction?.enabled || context.run?.overflowRetried) return false;
	return isContextOverflow(assistant, context.model.contextWindow);
}

/** The error an overflow right after an overflow's compact-and-retry ends the run with. */
export const OVERFLOW_RECOVERY_FAILED =
	"Context overflow recovery failed after one compact-and-retry attempt. Reduce the context (fewer or smaller messages, a lower keepRecentTokens) or switch to a model with a larger context window.";
