/**
 * Declares the vitest tests of one scenario: it runs on pi and on agentchart once (in
 * `beforeAll`), then one test per aspect asserts "same as pi" (pi with the documented fixes).
 *
 * An aspect that differs today because of agentchart's engine is listed in `knownDifferences`
 * with its cause: its test is `it.fails`, so it turns red the day the engine is fixed, and
 * moving the entry out of the table makes it a plain `it` again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Aspect, explainDifference } from "./compare.js";
import { killAllChildren } from "./harness.js";
import { loadSignature } from "./load-signature.js";
import { type EngineComparison, MAX_RUNS, runOnBothEngines, type Scenario } from "./observe.js";

/** Causes of today's differences, by aspect. */
export type KnownDifferences = Partial<Record<Aspect, string>>;

/**
 * Both engines, pi then agentchart, each at most a few seconds; generous for a busy CI box, where
 * each engine may run up to `MAX_RUNS` times (observe.ts).
 */
const SCENARIO_TIMEOUT_MS = 60_000 * MAX_RUNS;

/** Whether a failing comparison ran on a busy machine: the load signatures of its compared and discarded runs. */
function loadNote(scenario: Scenario, comparison: EngineComparison): string {
	const lines: string[] = [];
	for (const [engine, observation] of [["pi", comparison.pi], ["agentchart", comparison.agentchart]] as const) {
		const signature = scenario.burst ? undefined : loadSignature(observation.records);
		const discarded = comparison.discarded[engine];
		if (discarded.length > 0) lines.push(`${engine}: ${discarded.length} run(s) with the load signature run again (${discarded.join("; ")})`);
		if (signature !== undefined) lines.push(`${engine}: the compared run still shows the load signature (${signature}): the machine is too busy`);
	}
	return lines.join("\n");
}

function aspectsOf(scenario: Scenario): Aspect[] {
	return scenario.mode === "print"
		? ["stdout", "session", "requests"]
		: ["stdout", "event order", "event content", "events", "session", "requests"];
}

function title(scenario: Scenario, aspect: Aspect): string {
	switch (aspect) {
		case "stdout":
			return scenario.mode === "print" ? "prints the same stdout, with the same exit code, as pi" : "exits with the same code as pi";
		case "event order":
			return "emits the same records in the same order as pi";
		case "event content":
			return "emits records with the same content as pi (key order aside)";
		case "events":
			return "emits the same records as pi, byte for byte";
		case "session":
			return "writes the same session file as pi";
		case "requests":
			return "sends the same request bodies to the model as pi";
	}
}

/**
 * @example
 * describeScenario(jsonPlain, {
 *   // prompt() settles before pi's: print mode unsubscribes before the last events are written.
 *   "event order": "final turn_end and agent_end missing",
 * });
 */
export function describeScenario(scenario: Scenario, knownDifferences: KnownDifferences = {}): void {
	describe(scenario.name, () => {
		let comparison: EngineComparison | undefined;
		const run = (): EngineComparison => {
			if (!comparison) throw new Error("the scenario did not run (see the beforeAll error)");
			return comparison;
		};

		beforeAll(async () => {
			comparison = await runOnBothEngines(scenario);
		}, SCENARIO_TIMEOUT_MS);
		afterAll(() => killAllChildren());

		it(`does what the scenario says on pi (${scenario.requestCount} model requests)`, () => {
			expect(run().pi.requests).toHaveLength(scenario.requestCount);
		});

		for (const aspect of aspectsOf(scenario)) {
			const cause = knownDifferences[aspect];
			const check = () => {
				const comparison = run();
				const difference = explainDifference(comparison.expected, comparison.agentchart, aspect);
				expect(difference === "" ? "" : `${difference}\n${loadNote(scenario, comparison)}`).toBe("");
			};
			if (cause === undefined) it(title(scenario, aspect), check);
			else it.fails(`${title(scenario, aspect)} [known difference: ${cause}]`, check);
		}
	});
}
