/**
 * Declares the vitest tests of one scenario: it runs on pi and on agentchart once (in
 * `beforeAll`), then one test per aspect asserts "same as pi" (pi with the documented fixes).
 *
 * An aspect that differs today because of agentchart's engine is listed in `knownDifferences`
 * with its cause: its test is `it.fails`, so it turns red the day the engine is fixed, and
 * moving the entry out of the table makes it a plain `it` again.
 */
// @ts-nocheck

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Aspect, explainDifference } from "./compare.js";
import { killAllChildren } from "./harness.js";
import { type EngineComparison, runOnBothEngines, type Scenario } from "./observe.js";

/** Causes of today's differences, by aspect. */
export type KnownDifferences = Partial<Record<Aspect, string>>;

/** Both engines, pi then agentchart, each at most a few seconds; generous for a busy CI box. */
const SCENARIO_TIMEOUT_MS = 120_000;

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
				const { expected, agentchart } = run();
				expect(explainDifference(expected, agentchart, aspect)).toBe("");
			};
			if (cause === undefined) it(title(scenario, aspect), check);
			else it.fails(`${title(scenario, aspect)} [known difference: ${cause}]`, check);
		}
	});
}
