/**
 * The statechart's graph indexed for the page: states and transitions by id, and the active
 * configuration a transition leads to (so the chart can move microstep by microstep, as the
 * machine did, not only from snapshot to snapshot).
 */
import type { StatechartEdge, StatechartGraph, StatechartNode } from "../../src/inspect/statechart-graph.js";

/** The graph with lookups by id. */
export interface ChartIndex {
	graph: StatechartGraph;
	nodes: ReadonlyMap<string, StatechartNode>;
	edges: ReadonlyMap<string, StatechartEdge>;
}

/**
 * Indexes a statechart graph.
 *
 * @example
 * const chart = indexChart(graph);
 * chart.edges.get("agent.idle:prompt:0")?.targetId; // "agent.running"
 */
export function indexChart(graph: StatechartGraph): ChartIndex {
	return { graph, nodes: new Map(graph.nodes.map((node) => [node.id, node])), edges: new Map(graph.edges.map((edge) => [edge.id, edge])) };
}

/** A state and its ancestors, root first. */
export function withAncestors(chart: ChartIndex, stateId: string): string[] {
	const ids: string[] = [];
	for (let node = chart.nodes.get(stateId); node; node = node.parentId !== undefined ? chart.nodes.get(node.parentId) : undefined) ids.unshift(node.id);
	return ids;
}

/**
 * The active states after entering `targetIds`: each target with its ancestors and, for a
 * compound target, its initial states down to a leaf. Root first, no repeats.
 *
 * @example
 * activeAfter(chart, ["agent.running"]); // ["agent", "agent.running", "agent.running.run-starting"]
 */
export function activeAfter(chart: ChartIndex, targetIds: readonly string[]): string[] {
	const active: string[] = [];
	const add = (id: string) => {
		if (!active.includes(id)) active.push(id);
	};
	for (const targetId of targetIds) {
		for (const id of withAncestors(chart, targetId)) add(id);
		for (let node = chart.nodes.get(targetId); node?.initialId !== undefined; node = chart.nodes.get(node.initialId)) add(node.initialId);
	}
	return active;
}

/**
 * The active states after a microstep's transitions: for each one with a target, the states
 * below the common ancestor of its source and target are left and the target is entered.
 * States elsewhere (another region of a parallel state) stay active.
 *
 * @example
 * afterTransitions(chart, ["agent", "agent.idle"], [{ sourceId: "agent.idle", targetIds: ["agent.running"] }]);
 * // ["agent", "agent.running", "agent.running.run-starting"]
 */
export function afterTransitions(chart: ChartIndex, previous: readonly string[], transitions: readonly { sourceId: string; targetIds: readonly string[] }[]): string[] {
	let active = [...previous];
	for (const transition of transitions) {
		for (const targetId of transition.targetIds) {
			const sourcePath = withAncestors(chart, transition.sourceId);
			const targetPath = withAncestors(chart, targetId);
			let common = 0;
			while (common < sourcePath.length && common < targetPath.length && sourcePath[common] === targetPath[common]) common++;
			// The deepest state both are in (the source itself for a target inside it, the target
			// for one of its ancestors): what is active below it is left.
			const domain = sourcePath[common - 1];
			if (domain !== undefined) active = active.filter((id) => !id.startsWith(`${domain}.`));
			for (const id of activeAfter(chart, [targetId])) if (!active.includes(id)) active.push(id);
		}
	}
	return active;
}

/** The innermost of a list of active ids (the last one that is a leaf, or the last one). */
export function leafOf(chart: ChartIndex, activeIds: readonly string[]): string | undefined {
	for (let index = activeIds.length - 1; index >= 0; index--) {
		const id = activeIds[index];
		if (id !== undefined && (chart.nodes.get(id)?.childIds.length ?? 0) === 0) return id;
	}
	return activeIds[activeIds.length - 1];
}

/** A state id as a person reads it: without the machine's id (`running.streaming`). */
export function stateName(chart: ChartIndex, stateId: string): string {
	const prefix = `${chart.graph.rootId}.`;
	return stateId.startsWith(prefix) ? stateId.slice(prefix.length) : stateId;
}
