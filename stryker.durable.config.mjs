import base from "./stryker.config.mjs";

/**
 * StrykerJS on the durable core (`npm run mutants:durable`, issue 35): the journal and its replay
 * rules, the snapshot's building and reading, the stored shape's checks and the store contract
 * with the memory store, against the tests of vitest.stryker-durable.config.ts. Its own run,
 * apart from `npm run mutants`: the durable tests drive whole agents, and running them against
 * every engine mutant would double that run. Reports go to reports/mutation-durable/.
 *
 * @type {import("@stryker-mutator/api/core").PartialStrykerOptions}
 */
export default {
	...base,
	vitest: { configFile: "vitest.stryker-durable.config.ts", related: false },
	mutate: ["src/durable/journal.ts", "src/durable/snapshot.ts", "src/durable/snapshot-shape.ts", "src/durable/store.ts"],
	// A durable test makes an agent and runs it, often twice (before and after a restore).
	timeoutMS: 6000,
	htmlReporter: { fileName: "reports/mutation-durable/mutation.html" },
	jsonReporter: { fileName: "reports/mutation-durable/mutation.json" },
	incrementalFile: "reports/mutation-durable/stryker-incremental.json",
	tempDirName: ".stryker-tmp-durable",
	ignorePatterns: [...base.ignorePatterns, "!/vitest.stryker-durable.config.ts"],
};
