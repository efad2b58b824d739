/**
 * What the header says the agent is doing. A stopped or finished agent says so: its last
 * active state is history, not where it is (an agent machine stopped by its parent kept
 * showing `idle`).
 */
import { type ChartIndex, leafOf, stateName } from "./chart-index.js";
import type { RunModel } from "./types.js";

/** The header's state line. */
export interface AgentStatusLine {
	/** `running.streaming`, `stopped`, `finished`… */
	text: string;
	/** For styling: `active`, `stopped`, `done`, `error`, `none`. */
	status: "active" | "stopped" | "done" | "error" | "none";
	/** The innermost active state id while active. */
	stateId?: string | undefined;
	/** The state it was last in, once it is no longer running. */
	lastStateId?: string | undefined;
}

/**
 * The header's state line for a model.
 *
 * @example
 * agentStatusLine(model, chart).text; // "running.streaming", or "stopped (last in idle)"
 */
export function agentStatusLine(model: RunModel, chart: ChartIndex): AgentStatusLine {
	const agent = model.agent === undefined ? undefined : model.actors[model.agent];
	if (!agent) return { text: model.applied === 0 ? "no records yet" : "no agent seen", status: "none" };
	const leaf = leafOf(chart, model.activeIds);
	if (agent.status === "active") return leaf === undefined ? { text: "starting", status: "active" } : { text: stateName(chart, leaf), status: "active", stateId: leaf };
	const last = leaf === undefined || leaf === chart.graph.rootId ? "" : ` (last in ${stateName(chart, leaf)})`;
	const words = { done: "finished", stopped: "stopped", error: "failed" } as const;
	return { text: `${words[agent.status]}${last}`, status: agent.status, lastStateId: leaf };
}
