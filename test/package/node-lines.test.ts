/**
 * Every Node.js line agentchart declares in `engines` runs the packed package: the plain ES
 * module user, the CommonJS `require()` user, and the strict TypeScript user (compiled by tsc
 * running on that line, then run), each on the registry's binary of that line.
 */
import { spawnSync } from "node:child_process";
import { copyFile, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type ConsumerProject, REPO_ROOT, consumerProject } from "./consumer-project.js";
import { declaredNodeLines, type NodeRuntime, nodeRuntimes, runtimesUnavailable } from "./node-runtimes.js";

const TSC = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const FIXTURES = new URL("./fixtures/", import.meta.url);

function run(node: string, args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
	const result = spawnSync(node, args, { cwd, encoding: "utf8", timeout: 180_000 });
	return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function lastJson(output: string): unknown {
	return JSON.parse(output.trim().split("\n").at(-1) ?? "{}");
}

describe("the Node.js lines in engines", () => {
	it("are the lines the tests run on, and only supported ones (Node 20 reached its end of life in April 2026)", async () => {
		const manifest = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8")) as { engines: { node: string } };
		expect(manifest.engines.node).toBe(declaredNodeLines().map((major) => `^${major === 22 ? "22.12.0" : `${major}.0.0`}`).join(" || "));
		expect(declaredNodeLines()).toEqual([22, 24]);
	});
});

describe.skipIf(runtimesUnavailable() !== undefined)("the packed package on each supported Node.js line", { timeout: 300_000 }, () => {
	let project: ConsumerProject;
	let runtimes: NodeRuntime[];
	beforeAll(async () => {
		[project, runtimes] = await Promise.all([consumerProject(), nodeRuntimes()]);
		for (const file of ["esm.mjs", "cjs.cjs", "strict.ts", "tsconfig.json"]) await copyFile(new URL(file, FIXTURES), join(project.dir, file));
		const tool = await readFile(new URL("pi-tool.ts", FIXTURES), "utf8");
		await writeFile(join(project.dir, "pi-tool-agentchart.ts"), tool.replace('"ENGINE"', '"agentchart"'));
	}, 600_000);

	for (const major of declaredNodeLines()) {
		const runtime = () => {
			const found = runtimes.find((candidate) => candidate.major === major);
			if (!found) throw new Error(`no runtime for Node ${major}`);
			return found.node;
		};

		it(`Node ${major}: is that line`, () => {
			expect(run(runtime(), ["--version"], project.dir).stdout).toMatch(new RegExp(`^v${major}\\.`));
		});

		it(`Node ${major}: runs a plain ES module user`, () => {
			const result = run(runtime(), ["esm.mjs"], project.dir);
			expect(result.stderr).toBe("");
			expect(lastJson(result.stdout)).toEqual({ kind: "esm", answer: "The answer is 42.", blocks: ["The answer is 42."], inspected: true, defaultStream: "Hello from pi-ai." });
		});

		it(`Node ${major}: runs a CommonJS require() user`, () => {
			const result = run(runtime(), ["cjs.cjs"], project.dir);
			expect(result.stderr).toBe("");
			expect(lastJson(result.stdout)).toEqual({ kind: "cjs", answer: "Hello from CommonJS.", subpaths: true });
		});

		it(`Node ${major}: type-checks the strict TypeScript user with tsc running on it, and runs the output`, () => {
			const outDir = `out-node${major}`;
			const compiled = run(runtime(), [TSC, "-p", "tsconfig.json", "--outDir", outDir], project.dir);
			expect(compiled.stdout + compiled.stderr).toBe("");
			const result = run(runtime(), [join(outDir, "strict.js")], project.dir);
			expect(result.stderr).toBe("");
			expect(lastJson(result.stdout)).toEqual({ kind: "strict", toolText: "a.txt:3", events: expect.any(Number), error: null });
		});
	}
});
