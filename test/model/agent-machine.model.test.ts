/**
 * Model-based tests of the agent machine: xstate/graph walks the statechart over an abstract
 * alphabet (commands, delivery acknowledgements, and its actors' events with payloads), a
 * greedy cover picks shortest paths that together take every reachable transition of the
 * definition, and each path runs against the real Agent (scripted model, stub tool) with the
 * real machine's state checked against the model after every step. The loop-API variant runs
 * its paths through `runAgentLoop`'s machinery with gated queue polls and stop checks.
 */
import { describe, expect, it } from "vitest";
import { VARIANTS } from "./abstract-model.js";
import { buildModeGraph, definitions, describePath, type ModeGraph } from "./graph.js";
import { runLoopPath } from "./loop-runner.js";
import { runPath } from "./runner.js";

/** Transitions no path can take, with the reason. None today. */
const UNREACHABLE: Record<string, string> = {
	// An Agent and the loop API take deltas beside the chart; only the machine run without them
	// (XState's createActor(agentMachine), embedded) turns deltas into chart events.
	"agent.running.streaming --stream.delta#0[isCurrentAttempt]--> (self)": "taken by the bare machine: test/agent/machine.test.ts",
};

const graphs: ModeGraph[] = VARIANTS.map((variant) => buildModeGraph(variant));
const takenByRealRuns = new Set<string>();

describe("agent machine: model-based paths against the real Agent", () => {
	for (const graph of graphs) {
		describe(`${graph.loop ? "loop API, " : ""}toolExecution: ${graph.mode}${graph.hook ? "" : ", no beforeToolCall"} (${graph.states} states, ${graph.edges} edges, ${graph.paths.length} paths)`, () => {
			graph.paths.forEach((path, n) => {
				it(`path ${n + 1}: ${describePath(path).slice(0, 160)}`, async () => {
					const result = await (path.loop ? runLoopPath(path) : runPath(path));
					for (const key of result.taken) takenByRealRuns.add(key);
					expect(result.violations, describePath(path)).toEqual([]);
				});
			});
		});
	}

	it("takes every transition of the machine definition (coverage)", () => {
		const defined = [...definitions.values()];
		const reachable = new Set(graphs.flatMap((graph) => [...graph.reachable]));
		const triples = new Map<string, boolean>();
		for (const d of defined) {
			const triple = `${d.source} --${d.eventType}--> ${d.targets}`;
			triples.set(triple, (triples.get(triple) ?? false) || takenByRealRuns.has(d.key));
		}
		const rows = defined.map((d) => `${takenByRealRuns.has(d.key) ? "✓" : reachable.has(d.key) ? "✗" : "-"} ${d.key}`);
		const taken = defined.filter((d) => takenByRealRuns.has(d.key)).length;
		const takenTriples = [...triples.values()].filter(Boolean).length;
		const pathCount = graphs.reduce((n, graph) => n + graph.paths.length, 0);
		const edgeCount = graphs.reduce((n, graph) => n + graph.edges, 0);
		console.log(
			[
				`model: ${graphs.map((g) => `${g.loop ? "loop API " : ""}${g.mode}${g.hook ? "" : " (no hook)"} ${g.states} states/${g.edges} edges/${g.paths.length} paths`).join("; ")}`,
				`paths run against the real Agent: ${pathCount} (graph edges in all modes: ${edgeCount})`,
				`definition transitions (guarded candidates) taken by real runs: ${taken}/${defined.length} (${((100 * taken) / defined.length).toFixed(1)} %)`,
				`(source, event, target) triples taken: ${takenTriples}/${triples.size}`,
				`reachable in the model: ${reachable.size}/${defined.length}`,
				...rows,
			].join("\n"),
		);
		const missing = defined.filter((d) => !takenByRealRuns.has(d.key) && !(d.key in UNREACHABLE)).map((d) => d.key);
		expect(missing).toEqual([]);
		expect(Object.keys(UNREACHABLE).filter((key) => reachable.has(key)), "listed as unreachable but reachable").toEqual([]);
	});
});
