import { defineConfig } from "vitest/config";

export default defineConfig({
	test: {
		include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
		testTimeout: 30000,
		environment: "node",
		// Resolves AGENTCHART_ENTRY=packed (npm test) to the installed tarball for pi's coding agent.
		globalSetup: ["test/coding-agent/global-setup.ts"],
		setupFiles: ["test/setup/swallowed-assertions.ts"],
	},
});
