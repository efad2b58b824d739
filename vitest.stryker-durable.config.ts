import { defineConfig } from "vitest/config";

/**
 * The tests StrykerJS runs against each mutant of the durable core (`npm run mutants:durable`):
 * the durable tests that run in process, the restore properties, and the agent tests (a snapshot
 * is taken at every quiet point of a run with a store). Left out: tests that start child
 * processes (the crash test, takeovers, one writer per session, the fsync policy, many sessions,
 * the `AGENTCHART_INTERPRETER` test), where no mutant is ever active, and the file-store tests that
 * wrap node:fs with `vi.mock`: under `isolate: false` the store's modules are already loaded
 * with the real node:fs by an earlier file, so their faults never happen and they fail.
 */
export default defineConfig({
	test: {
		include: ["test/durable/**/*.test.ts", "test/property/restore.property.test.ts", "test/property/changed-tools.property.test.ts", "test/agent/**/*.test.ts"],
		exclude: [
			"test/durable/crash.test.ts",
			"test/durable/crash/**",
			"test/durable/takeover/**",
			"test/durable/approval-takeover-watch.test.ts",
			"test/durable/file-store-fsync.test.ts",
			"test/durable/file-store-open-race.test.ts",
			"test/durable/file-store-takeover.test.ts",
			"test/durable/many-sessions.test.ts",
			"test/durable/one-writer.test.ts",
			"test/agent/interpreter-env.test.ts",
			// vi.mock("node:fs"): see above.
			"test/durable/file-store-case.test.ts",
			"test/durable/file-store-faults.test.ts",
		],
		// As in vitest.stryker.config.ts: one module graph per run (Stryker starts a worker per mutant).
		isolate: false,
		testTimeout: 5000,
		environment: "node",
		env: { PROPERTY_RUNS: process.env["PROPERTY_RUNS"] ?? "3", PROPERTY_SEED: process.env["PROPERTY_SEED"] ?? "20261123" },
	},
});
