/**
 * What the header says the agent is doing. A stopped or finished agent says so: its last
 * active state is history, not where it is (an agent machine stopped by its parent kept
 * showing `idle`).
 */
import { type ChartIndex, leafOf, stateName } from "./chart-index.js";
import type { RunModel } from "./types.js";

/** The header's state line. */
export interface AgentStatusLine {
	/** `running.streaming`, `stopped (last in idle)`, `ended (final state)`… */
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
 * agentStatusLine(model, chart).text; // "running.streaming", "stopped (last in idle)", "ended (final state)"
 */
export function agentStatusLine(model: RunModel, chart: ChartIndex): AgentStatusLine {
	const agent = model.agent === undefined ? undefined : model.actors[model.agent];
	if (!agent) return { text: model.applied === 0 ? "no records yet" : "no agent seen", status: "none" };
	const leaf = leafOf(chart, model.activeIds);
	if (agent.status === "active") return leaf === undefined ? { text: "starting", status: "active" } : { text: stateName(chart, leaf), status: "active", stateId: leaf };
	const known = leaf !== undefined && leaf !== chart.graph.rootId;
	// A machine that reached a final state is in it for good; one stopped from outside was somewhere.
	if (agent.status === "done") return { text: known ? `${stateName(chart, leaf)} (final state)` : "finished", status: "done", lastStateId: leaf };
	const last = known ? ` (last in ${stateName(chart, leaf)})` : "";
	return { text: `${agent.status === "error" ? "failed" : "stopped"}${last}`, status: agent.status, lastStateId: leaf };
}
