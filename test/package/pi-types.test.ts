/**
 * A pi application's TypeScript compiles unchanged on agentchart: the same pi-style files
 * (tools, event handlers that read the tool events' `args` and `result`, transcript access with
 * custom messages) are compiled against `@mariozechner/pi-agent-core` 0.73.1, against the
 * packed agentchart, and through the switch recipe (a package named
 * `@mariozechner/pi-agent-core` that re-exports agentchart, which module augmentation must
 * reach), with the same compiler options. Each must compile without an error.
 */
import { spawnSync } from "node:child_process";
import { mkdir, readFile, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type ConsumerProject, consumerProject } from "./consumer-project.js";

const TSC = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const FIXTURE = new URL("./fixtures/pi-app/", import.meta.url);

/** Copies the pi-style files into `dir`, importing `engine` where they say ENGINE. */
async function writeApp(dir: string, engine: string): Promise<void> {
	await rm(dir, { recursive: true, force: true });
	await mkdir(dir, { recursive: true });
	await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
	for (const file of await readdir(FIXTURE)) {
		const text = await readFile(new URL(file, FIXTURE), "utf8");
		await writeFile(join(dir, file), text.replaceAll('"ENGINE"', JSON.stringify(engine)));
	}
}

function compile(dir: string): string {
	const result = spawnSync(process.execPath, [TSC, "-p", "tsconfig.json"], { cwd: dir, encoding: "utf8", timeout: 180_000 });
	return `${result.stdout}${result.stderr}`.trim();
}

describe("pi-style application code", { timeout: 240_000 }, () => {
	let project: ConsumerProject;
	beforeAll(async () => {
		project = await consumerProject();
	}, 300_000);

	it("compiles against pi-agent-core 0.73.1 (the reference)", async () => {
		const dir = join(project.dir, "pi-app-pi");
		await writeApp(dir, "@mariozechner/pi-agent-core");
		expect(compile(dir)).toBe("");
	});

	it("compiles unchanged against agentchart", async () => {
		const dir = join(project.dir, "pi-app-agentchart");
		await writeApp(dir, "agentchart");
		expect(compile(dir)).toBe("");
	});

	it("compiles unchanged through the switch recipe (pi-agent-core re-exporting agentchart)", async () => {
		// A project of its own: its node_modules has the vendored package under pi's name, and
		// the consumer's installed agentchart, typebox and Node types beside it.
		const dir = join(project.dir, "pi-app-switched");
		await writeApp(dir, "@mariozechner/pi-agent-core");
		const modules = join(dir, "node_modules");
		await mkdir(join(modules, "@mariozechner"), { recursive: true });
		await mkdir(join(modules, "@types"), { recursive: true });
		for (const name of ["agentchart", "typebox", "@types/node", "@mariozechner/pi-ai"]) await symlink(join(project.dir, "node_modules", name), join(modules, name), "dir");
		const vendored = join(modules, "@mariozechner", "pi-agent-core");
		await mkdir(vendored);
		await writeFile(join(vendored, "package.json"), JSON.stringify({ name: "@mariozechner/pi-agent-core", version: "0.73.1", type: "module", main: "index.js", types: "index.d.ts" }));
		await writeFile(join(vendored, "index.js"), 'export * from "agentchart";\n');
		await writeFile(join(vendored, "index.d.ts"), 'export * from "agentchart";\n');
		expect(compile(dir)).toBe("");
	});

	it("is really checked: a type error in the same files is reported on both engines", async () => {
		const errors: string[] = [];
		for (const engine of ["@mariozechner/pi-agent-core", "agentchart"]) {
			const dir = join(project.dir, `pi-app-broken-${engine.replace(/\W/g, "-")}`);
			await writeApp(dir, engine);
			const transcript = await readFile(join(dir, "transcript.ts"), "utf8");
			await writeFile(join(dir, "transcript.ts"), transcript.replace('case "note":\n\t\t\treturn message.content;\n', ""));
			errors.push(compile(dir));
		}
		// Leaving out a role breaks the exhaustive switch, the same way on both.
		expect(errors[0]).toMatch(/transcript\.ts\(\d+,\d+\): error TS2322: Type '.*' is not assignable to type 'never'/);
		expect(errors[1]).toBe(errors[0]);
	});
});

