/**
 * agentchart/testing works under `node --test` as well as under vitest: a plain .mjs test file
 * (test/package/fixtures/testing-kit.node-test.mjs) imports the built package by its name and
 * runs with Node's own runner, on every Node.js line the package declares (the registry's
 * binaries, as in node-lines.test.ts). Needs `npm run build` (npm test builds first).
 *
 * The reporter is named: Node's default one depends on the line and on whether the output is a
 * terminal (to a pipe Node 20 and 22 write TAP, Node 24 its `spec` lines), and the counts are
 * read from its summary.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { type NodeRuntime, nodeRuntimes, runtimesUnavailable } from "./node-runtimes.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

function runKitTests(node: string): { status: number | null; output: string } {
	const result = spawnSync(node, ["--test", "--test-reporter=tap", "test/package/fixtures/testing-kit.node-test.mjs"], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
	return { status: result.status, output: `${result.stdout}\n${result.stderr}` };
}

describe.skipIf(runtimesUnavailable() !== undefined)("agentchart/testing under node --test", { timeout: 300_000 }, () => {
	let runtimes: NodeRuntime[];
	beforeAll(async () => {
		runtimes = await nodeRuntimes();
	});

	it("runs the kit's checks, fault model, walk and fuzzer with Node's own test runner, on every declared Node.js line", () => {
		expect(runtimes.map((runtime) => runtime.major)).toEqual([22, 24]);
		for (const runtime of runtimes) {
			const { status, output } = runKitTests(runtime.node);
			expect(status, `Node ${runtime.major}:\n${output}`).toBe(0);
			expect(output, `Node ${runtime.major}`).toMatch(/^# pass 4$/m);
			expect(output, `Node ${runtime.major}`).toMatch(/^# fail 0$/m);
		}
	});
});
