/**
 * agentchart's own walk: the chart's variants (each tool execution mode, hooks, approvals, the
 * loop API) with the walk's stub tool, hook and summariser as puppets that answer what the path
 * asks, compared strictly with the model after every step. `test/model` runs it; it is the kit's
 * proof on the suite that found the engine's bugs.
 */
import { Agent } from "../agent.js";
import { SUMMARY, walkModel } from "./model/fixtures.js";
import {
	stubTool,
	WALK_APPROVAL_TIMEOUT_MS,
	WALK_COMPACTION,
	WALK_INITIAL_TRANSCRIPT,
	WALK_OUTPUT_LIMIT_RECOVERY,
	WALK_TOOL_TIMEOUT_MS,
	type WalkVariant,
	walkConfig,
} from "./model/config.js";
import { planWalk, type WalkPath, type WalkPlan } from "./model/plan.js";
import type { AgentFactory } from "./walk/cast.js";
import { runLoopPath } from "./walk/loop-path.js";
import { type PathRun, runWalkPath } from "./walk/run-path.js";

/** The factory of a variant of agentchart's walk: the stub tool, and puppets for the hook and the summariser. */
export function ownWalkFactory(variant: WalkVariant): AgentFactory {
	return (kit) => {
		const options = kit.options({
			initialState: { model: walkModel, tools: [stubTool(variant.approval !== undefined)], messages: [...WALK_INITIAL_TRANSCRIPT] },
			toolExecution: variant.mode,
			toolTimeoutMs: WALK_TOOL_TIMEOUT_MS,
			toolAbortGraceMs: WALK_TOOL_TIMEOUT_MS,
			outputLimitRecovery: WALK_OUTPUT_LIMIT_RECOVERY,
			compaction: { ...WALK_COMPACTION, summarize: async () => SUMMARY },
			...(variant.approval === "timeout" ? { approvalTimeoutMs: WALK_APPROVAL_TIMEOUT_MS } : {}),
			...(variant.hook ? { beforeToolCall: async () => undefined } : {}),
		});
		return kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
	};
}

/** The plan of a variant of agentchart's walk (with its restore paths when the variant walks restores). */
export function planOwnWalk(variant: WalkVariant): WalkPlan {
	return planWalk(walkConfig(variant));
}

/**
 * Runs a path of agentchart's walk strictly (the real chart must be where the model is after
 * every step).
 *
 * @example
 * const run = await runOwnWalkPath(variant, plan, plan.paths[0] as WalkPath);
 */
export function runOwnWalkPath(variant: WalkVariant, plan: WalkPlan, path: WalkPath): Promise<PathRun> {
	if (plan.config.loop) return runLoopPath(plan, path);
	return runWalkPath(plan, path, ownWalkFactory(variant), { strict: true, stepTimeoutMs: 1000, settleTimeoutMs: 3000, maxReplans: 0 });
}
