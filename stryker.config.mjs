/**
 * StrykerJS mutation testing of the engine (`npm run mutants`, issue 14): the statechart and
 * its interpreter (src/machines), its actors (src/actors), the Agent facade (src/agent.ts,
 * src/facade) and the shared deadline timer and run abort (src/util), against the tests of
 * vitest.stryker.config.ts. Reports go to reports/mutation/.
 *
 * @type {import("@stryker-mutator/api/core").PartialStrykerOptions}
 */
export default {
	packageManager: "npm",
	testRunner: "vitest",
	plugins: ["@stryker-mutator/vitest-runner"],
	// related: false, so that a static mutant runs every test file, also those importing the engine lazily.
	vitest: { configFile: "vitest.stryker.config.ts", related: false },
	// The engine: the chart and its interpreter and actors, their timers and abort, the facade.
	mutate: ["src/machines/**/*.ts", "src/actors/**/*.ts", "src/agent.ts", "src/facade/**/*.ts", "src/util/deadlines.ts", "src/util/run-abort.ts"],
	coverageAnalysis: "perTest",
	concurrency: 1,
	timeoutMS: 4000,
	reporters: ["clear-text", "progress", "html", "json"],
	htmlReporter: { fileName: "reports/mutation/mutation.html" },
	jsonReporter: { fileName: "reports/mutation/mutation.json" },
	// Later runs re-test only the mutants whose code or covering tests changed (--force: all).
	incremental: true,
	incrementalFile: "reports/mutation/stryker-incremental.json",
	tempDirName: ".stryker-tmp",
	cleanTempDir: "always",
	// Copy into the sandbox only what the tests read: not dist/, scratch/ or the benchmarks.
	ignorePatterns: ["/*", "!/src", "!/test", "!/examples", "!/README.md", "!/docs/machine.md", "!/package.json", "!/tsconfig.json", "!/vitest.stryker.config.ts"],
	thresholds: { high: 90, low: 85, break: null },
};
