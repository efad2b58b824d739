/**
 * Property tests over random scenarios (see scenario.ts) in the three tool execution modes.
 * `PROPERTY_RUNS` sets the runs per mode (60 by default; `npm run property` runs 10,000 in all),
 * `PROPERTY_SEED` replays a seed.
 */
// @ts-nocheck

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ToolExecutionMode } from "../../src/types/agent.js";
import { runScenario, scenarioArb } from "./scenario.js";

const NUM_RUNS = Number(process.env["PROPERTY_RUNS"] ?? 60);
const SEED = Number(process.env["PROPERTY_SEED"] ?? Date.now() % 2 ** 31);

describe("agent properties (fast-check)", () => {
	for (const mode of ["parallel", "sequential", "streaming"] as ToolExecutionMode[]) {
		it(`invariants hold under random scripts, tools and commands (toolExecution: ${mode})`, async () => {
			console.log(`property seed (${mode}): ${SEED}  (PROPERTY_SEED=${SEED} to replay)`);
			await fc.assert(
				fc.asyncProperty(scenarioArb, async (scenario) => {
					const violations = await runScenario(mode, scenario);
					expect(violations).toEqual([]);
				}),
				{ numRuns: NUM_RUNS, seed: SEED },
			);
		}, Math.max(120_000, NUM_RUNS * 1_000));
	}
});
