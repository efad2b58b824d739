import { defineConfig } from "vitest/config";

/**
 * The tests StrykerJS runs against each mutant of the engine (`npm run mutants`): every fast,
 * deterministic test that drives `src/machines`, `src/actors` or `src/agent.ts` in process.
 * Left out: the packed-package, pi coding-agent, demo, MCP, visualizer and provider-wire tests
 * (they spawn processes, pack tarballs or talk HTTP, and reach the engine only through what
 * these tests already cover), the reply tests that never start an agent, and the test of
 * `AGENTCHART_INTERPRETER` (child processes).
 */
export default defineConfig({
	test: {
		include: [
			"test/agent/**/*.test.ts",
			"test/machine/**/*.test.ts",
			// Not test/model: it walks the chart's graph at collection time, outside any test, which
			// makes every machine mutant "static" (run against all tests), and takes seconds per mutant.
			"test/loop/**/*.test.ts",
			"test/property/**/*.test.ts",
			"test/inspect/**/*.test.ts",
			"test/tools/**/*.test.ts",
			"test/examples/**/*.test.ts",
			"test/reply/agent-integration.test.ts",
			"test/mutation/**/*.test.ts",
			"test/util/**/*.test.ts",
		],
		exclude: [
			// It runs the engine in child processes, where no mutant is ever active (StrykerJS switches
			// mutants in its own worker), so it can kill none; and its three process starts, made
			// synchronously, outlast the 3 s limit below on a loaded machine and failed a dry run.
			"test/agent/interpreter-env.test.ts",
			// The examples run as programs (child processes, where no mutant is active), and take
			// longer than the 3 s limit below to start.
			"test/examples/examples.test.ts",
		],
		// One module graph per run instead of one per test file: StrykerJS starts a fresh worker
		// for every mutant, so each mutant still gets freshly evaluated modules.
		isolate: false,
		// A mutant that makes a run hang fails its test here, cheaply, instead of being timed out
		// (and its worker restarted) by StrykerJS.
		testTimeout: 3000,
		environment: "node",
		// Fewer property runs per mutant, from a fixed seed, so every mutant meets the same cases
		// (without it each run drew its seed from the clock, and a mutant could be killed by one run
		// and survive the next).
		env: { PROPERTY_RUNS: process.env["PROPERTY_RUNS"] ?? "3", PROPERTY_SEED: process.env["PROPERTY_SEED"] ?? "20261123" },
	},
});
