import { execFileSync, spawnSync } from "node:child_process";
import { copyFile, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join, posix } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type ConsumerProject, REPO_ROOT, consumerProject } from "./consumer-project.js";

const require = createRequire(import.meta.url);
const FIXTURES = new URL("./fixtures/", import.meta.url);
const TSC = require.resolve("typescript/bin/tsc");

function run(command: string, args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
	const result = spawnSync(command, args, { cwd, encoding: "utf8", timeout: 120_000 });
	return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Runs a script in the consumer project and parses the JSON line it prints. */
function runJson(project: ConsumerProject, file: string): Record<string, unknown> {
	const result = run(process.execPath, [file], project.dir);
	expect(result.stderr, `${file} wrote to stderr`).toBe("");
	expect(result.status, result.stderr).toBe(0);
	return JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;
}

// Each test spawns tsc, node or npx on the installed tarball: 30 s is too tight on a busy machine.
describe("the packed package, installed into an empty project", { timeout: 120_000 }, () => {
	let project: ConsumerProject;

	beforeAll(async () => {
		project = await consumerProject();
		for (const file of ["esm.mjs", "cjs.cjs", "mcp.mjs", "strict.ts", "tsconfig.json", "tsconfig.pi.json"]) {
			await copyFile(new URL(file, FIXTURES), join(project.dir, file));
		}
		// The same pi tool source, once against each engine.
		const tool = await readFile(new URL("pi-tool.ts", FIXTURES), "utf8");
		await writeFile(join(project.dir, "pi-tool-agentchart.ts"), tool.replace('"ENGINE"', '"agentchart"'));
		await writeFile(join(project.dir, "pi-tool-pi.ts"), tool.replace('"ENGINE"', '"@mariozechner/pi-agent-core"'));
	}, 300_000);

	it("ships only the build, the README, CONTRIBUTING.md, the guides and the license", async () => {
		const listing = execFileSync("tar", ["-tzf", project.tarball], { encoding: "utf8" }).split("\n").filter(Boolean);
		expect(listing).toContain("package/dist/index.js");
		expect(listing).toContain("package/dist/index.d.ts");
		expect(listing).toContain("package/dist/index.js.map");
		expect(listing).toContain("package/dist/visualizer/app.js");
		expect(listing).toContain("package/README.md");
		expect(listing).toContain("package/LICENSE");
		expect(listing).toContain("package/docs/getting-started.md");
		const stray = listing.filter((path) => !/^package\/(dist\/|docs\/[\w-]+\.md$|docs\/images\/[\w-]+\.png$|bench\/results\.md$|README\.md$|CONTRIBUTING\.md$|LICENSE$|package\.json$)/.test(path));
		expect(stray).toEqual([]);
		expect(listing.some((path) => /\.ts$/.test(path) && !path.endsWith(".d.ts"))).toBe(false);
	});

	// The README's guides were links to docs/*.md that the package did not hold: an installed
	// copy (and a registry page without a repository to resolve them against) led nowhere.
	// CONTRIBUTING.md too: the README's "contributing" links led nowhere in an installed copy.
	it("holds every file the shipped Markdown links to", async () => {
		const listing = new Set(execFileSync("tar", ["-tzf", project.tarball], { encoding: "utf8" }).split("\n").filter(Boolean));
		const broken: string[] = [];
		for (const entry of listing) {
			if (!entry.endsWith(".md")) continue;
			const text = await readFile(join(project.dir, "node_modules", "agentchart", entry.slice("package/".length)), "utf8");
			for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
				const path = (target as string).split("#")[0] as string;
				if (path === "" || /^[a-z]+:/i.test(path)) continue;
				const resolved = posix.normalize(posix.join(posix.dirname(entry), path));
				if (!listing.has(resolved)) broken.push(`${entry} -> ${target}`);
			}
		}
		expect(broken).toEqual([]);
	});

	it("carries the sources in its source maps (it ships no .ts files): a stack trace or a debugger shows agentchart's code", async () => {
		const listing = execFileSync("tar", ["-tzf", project.tarball], { encoding: "utf8" }).split("\n").filter(Boolean);
		const maps = listing.filter((path) => path.endsWith(".map"));
		expect(maps).toContain("package/dist/agent.js.map");
		const lacking: string[] = [];
		for (const path of maps) {
			const map = JSON.parse(await readFile(join(project.dir, "node_modules", "agentchart", path.slice("package/".length)), "utf8")) as { sources: string[]; sourcesContent?: (string | null)[] };
			if (map.sources.some((_, index) => typeof map.sourcesContent?.[index] !== "string")) lacking.push(path);
		}
		expect(lacking).toEqual([]);
		const agentMap = JSON.parse(await readFile(join(project.dir, "node_modules", "agentchart", "dist", "agent.js.map"), "utf8")) as { sourcesContent: string[] };
		expect(agentMap.sourcesContent[0]).toContain("export class Agent");
	});

	it("runs from a plain Node ES module, with both subpaths", () => {
		expect(runJson(project, "esm.mjs")).toEqual({ kind: "esm", answer: "The answer is 42.", blocks: ["The answer is 42."], inspected: true, defaultStream: "Hello from pi-ai." });
	});

	it("runs agentchart/mcp with a real MCP server as tools", () => {
		const everything = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json");
		const entry = join(everything, "..", "dist", "index.js");
		const result = run(process.execPath, ["mcp.mjs", entry], project.dir);
		expect(result.status, result.stderr).toBe(0);
		expect(JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "{}")).toEqual({ kind: "mcp", tools: true, echoed: "Echo: hello over MCP", isError: false });
	});

	it("runs from CommonJS require()", () => {
		expect(runJson(project, "cjs.cjs")).toEqual({ kind: "cjs", answer: "Hello from CommonJS.", subpaths: true });
	});

	it("type-checks a strict NodeNext consumer without skipLibCheck, and the build runs", () => {
		const compiled = run(process.execPath, [TSC, "-p", "tsconfig.json"], project.dir);
		expect(compiled.stdout + compiled.stderr).toBe("");
		expect(compiled.status).toBe(0);
		expect(runJson(project, "out/strict.js")).toEqual({ kind: "strict", toolText: "a.txt:3", events: expect.any(Number), error: null });
	});

	it("type-checks a pi tool against agentchart exactly as against pi-agent-core", async () => {
		// The agentchart copy compiled cleanly in the previous test, @ts-expect-error included
		// (it fails when the parameters are not inferred). The same source against pi itself
		// (pi's own dependencies need skipLibCheck: that is pi's, not ours):
		const pi = run(process.execPath, [TSC, "-p", "tsconfig.pi.json"], project.dir);
		expect(pi.stdout + pi.stderr).toBe("");
		// Without the directive, both engines report the same error at the same place.
		const source = await readFile(join(project.dir, "pi-tool-pi.ts"), "utf8");
		const broken = source.replace("// @ts-expect-error path is a string, so this must not compile (params is not any).\n", "");
		const errors: string[] = [];
		for (const engine of ["@mariozechner/pi-agent-core", "agentchart"]) {
			await writeFile(join(project.dir, "pi-tool-broken.ts"), broken.replace('"@mariozechner/pi-agent-core"', `"${engine}"`));
			const check = run(process.execPath, [TSC, "--noEmit", "--strict", "--skipLibCheck", "--module", "nodenext", "--moduleResolution", "nodenext", "--types", "node", "pi-tool-broken.ts"], project.dir);
			errors.push(check.stdout.trim());
		}
		expect(errors[0]).toMatch(/^pi-tool-broken\.ts\(\d+,\d+\): error TS2322: Type 'string' is not assignable to type 'number'\.$/);
		expect(errors[1]).toBe(errors[0]);
	});

	it("offers the XState-typed machine as agentchart/machine (with skipLibCheck, as XState needs)", async () => {
		await writeFile(
			join(project.dir, "machine.ts"),
			[
				'import { createActor } from "xstate";',
				'import { Agent } from "agentchart";',
				'import { agentMachine, machineActorOf } from "agentchart/machine";',
				"const actor = createActor(agentMachine, { input: {} }).start();",
				"const state: string = String(actor.getSnapshot().value);",
				"const typed = machineActorOf(new Agent());",
				"console.log(JSON.stringify({ state, idle: typed.getSnapshot().matches('idle') }));",
				"actor.stop();",
			].join("\n"),
		);
		const check = run(process.execPath, [TSC, "--strict", "--skipLibCheck", "--exactOptionalPropertyTypes", "--module", "nodenext", "--moduleResolution", "nodenext", "--types", "node", "--outDir", "out", "machine.ts"], project.dir);
		expect(check.stdout + check.stderr).toBe("");
		expect(runJson(project, "out/machine.js")).toEqual({ state: "idle", idle: true });
	});

	it("passes publint", () => {
		const result = run(process.execPath, [join(REPO_ROOT, "node_modules", "publint", "src", "cli.js"), "run", REPO_ROOT, "--strict"], REPO_ROOT);
		expect(result.stdout + result.stderr).not.toMatch(/error|warning|suggestion/i);
		expect(result.status).toBe(0);
	});

	it("passes are-the-types-wrong for an ESM-only package", () => {
		const cli = join(REPO_ROOT, "node_modules", "@arethetypeswrong", "cli", "dist", "index.js");
		const result = run(process.execPath, [cli, project.tarball, "--profile", "esm-only", "--format", "ascii"], REPO_ROOT);
		expect(result.status, result.stdout + result.stderr).toBe(0);
		// Only the resolutions an ESM-only package does not serve (node10, require from CJS) may complain.
		const problems = result.stdout.split("\n").filter((line) => /[⚠💀❌]/u.test(line) && !line.includes("(ignored"));
		expect(problems).toEqual([]);
	});
});
