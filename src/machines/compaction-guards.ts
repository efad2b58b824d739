import type { AgentMachineContext } from "./types.js";

/**
 * Whether the context has grown past the compaction threshold (full behaviour: issue 4).
 *
 * @example
 * tokensNeedCompaction(context); // false while compaction is off
 */
export function tokensNeedCompaction(context: AgentMachineContext): boolean {
	return context.config.compaction?.enabled === true && false;
}
