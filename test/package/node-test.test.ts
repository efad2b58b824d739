/**
 * agentchart/testing works under `node --test` as well as under vitest: a plain .mjs test file
 * (test/package/fixtures/testing-kit.node-test.mjs) imports the built package by its name and
 * runs with Node's own runner. Needs `npm run build` (npm test builds first).
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

describe("agentchart/testing under node --test", () => {
	it("runs the kit's checks, fault model, walk and fuzzer with Node's own test runner", () => {
		const result = spawnSync(process.execPath, ["--test", "test/package/fixtures/testing-kit.node-test.mjs"], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
		expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
		expect(result.stdout).toMatch(/# pass 4\b/);
		expect(result.stdout).toMatch(/# fail 0\b/);
	}, 150_000);
});
