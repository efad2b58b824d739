/**
 * Model-based tests of the agent machine, on the testing kit (`src/testing`): xstate/graph walks
 * the statechart over an abstract alphabet (commands, delivery acknowledgements, decisions on
 * calls waiting for approval, its actors' events with payloads, the machine's own delayed events,
 * what a restore tells a restored chart), a greedy cover picks shortest paths that together take
 * every reachable transition of the definition, and each path runs against the real Agent
 * (puppet model, stub tool, hook and summariser) with the real machine's state checked against
 * the model after every step (strict). The loop-API variant runs its paths through
 * `runAgentLoop`'s machinery with gated queue polls and stop checks.
 */
import { describe, expect, it } from "vitest";
import { WALK_VARIANTS } from "../../src/testing/model/config.js";
import { journaledCallsOfStreamingReply } from "../../src/testing/model/journaled-calls.js";
import { definitions, describeSteps, type WalkPath } from "../../src/testing/model/plan.js";
import { planOwnWalk, runOwnWalkPath } from "../../src/testing/own-walk.js";
import { formatViolation } from "../../src/testing/violations.js";

/** Transitions no path can take, with the reason. */
const UNREACHABLE: Record<string, string> = {
	// An Agent and the loop API take deltas beside the chart; only the machine run without them
	// (XState's createActor(agentMachine), embedded) turns deltas into chart events.
	"agent.running.streaming --stream.delta#0[isCurrentAttempt]--> (self)": "taken by the bare machine: test/agent/machine.test.ts",
	// The walk's agent is watched from the start (its actor is read), so its runs wait for deliveries
	// already; only a run that started with nobody watching is told to from the middle.
	"agent --delivery.await#0--> (self)": "taken by an agent nobody watched until mid-run: test/agent/unwatched.test.ts",
	// The batch actor says a tool returned only to an agent with an afterToolCall hook, which the
	// walk's agents do not have (its puppets hold tools and beforeToolCall, not the hook after).
	"agent.running --tool.returned#0[isRunningCall]--> (self)": "taken by an agent with an afterToolCall hook: test/agent/abandoned-call-text.test.ts",
};

const walks = WALK_VARIANTS.map((variant) => ({ variant, plan: planOwnWalk(variant) }));
const takenByRealRuns = new Set<string>();

describe("agent machine: model-based paths against the real Agent", () => {
	for (const { variant, plan } of walks) {
		describe(`${plan.config.name} (${plan.states} states, ${plan.edges} edges, ${plan.paths.length} paths)`, () => {
			plan.paths.forEach((path, n) => {
				it(`path ${n + 1}: ${describeSteps(path.steps).slice(0, 160)}`, async () => {
					const run = await runOwnWalkPath(variant, plan, path);
					for (const key of run.taken) takenByRealRuns.add(key);
					expect(run.violations.map(({ violation, step }) => `step ${step}: ${formatViolation(violation)}`), describeSteps(path.steps)).toEqual([]);
				});
			});
		});
	}

	// Real restores (snapshot → JSON → Agent.restore) from every kind of state a run can be in, the
	// restored agent compared with the model's idea of what a restore does.
	for (const { variant, plan } of walks.filter(({ plan }) => plan.restorePaths.length > 0)) {
		describe(`${plan.config.name}: a restore from every kind of state (${plan.restorePaths.length} paths)`, () => {
			plan.restorePaths.forEach((path, n) => {
				it(`path ${n + 1}: ${describeSteps(path.steps).slice(0, 160)}`, async () => {
					const run = await runOwnWalkPath(variant, plan, path);
					for (const key of run.taken) takenByRealRuns.add(key);
					expect(run.violations.map(({ violation, step }) => `step ${step}: ${formatViolation(violation)}`), describeSteps(path.steps)).toEqual([]);
				});
			});
		});
	}

	it("restores from a reply still streaming after some of its calls started, which the restored agent closes with them", () => {
		const restoredFrom = (path: WalkPath) => path.steps[path.steps.length - 1]?.from;
		const closing = walks.flatMap(({ plan }) => plan.restorePaths).filter((path) => {
			const from = restoredFrom(path);
			return from !== undefined && journaledCallsOfStreamingReply(from).length > 0;
		});
		// Run strictly above, with the other restore paths: a call running (once its announcement was delivered), one ended, two of them.
		expect(closing.map((path) => describeSteps(path.steps))).toContain("prompt → agentchart.testing.restore → stream.start → stream.toolcall(a1_1) → delivered → agentchart.testing.restore");
		expect(closing.length).toBeGreaterThanOrEqual(4);
	});

	it("takes every transition of the machine definition (coverage)", () => {
		const defined = [...definitions.values()];
		const reachable = new Set(walks.flatMap(({ plan }) => [...plan.reachable]));
		const triples = new Map<string, boolean>();
		for (const d of defined) {
			const triple = `${d.source} --${d.eventType}--> ${d.targets}`;
			triples.set(triple, (triples.get(triple) ?? false) || takenByRealRuns.has(d.key));
		}
		const rows = defined.map((d) => `${takenByRealRuns.has(d.key) ? "✓" : reachable.has(d.key) ? "✗" : "-"} ${d.key}`);
		const taken = defined.filter((d) => takenByRealRuns.has(d.key)).length;
		const takenTriples = [...triples.values()].filter(Boolean).length;
		const pathCount = walks.reduce((n, { plan }) => n + plan.paths.length, 0);
		const edgeCount = walks.reduce((n, { plan }) => n + plan.edges, 0);
		console.log(
			[
				`model: ${walks.map(({ plan }) => `${plan.config.name}: ${plan.states} states/${plan.edges} edges/${plan.paths.length} paths`).join("; ")}`,
				`paths run against the real Agent: ${pathCount} (graph edges in all variants: ${edgeCount})`,
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
