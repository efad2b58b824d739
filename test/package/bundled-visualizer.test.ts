/**
 * The visualizer server from an application that bundles agentchart into one file (esbuild, as
 * an app built for Node does): the bundle no longer sits beside the page the package ships in
 * `dist/visualizer/`, and a CommonJS bundle has no `import.meta.url`. The server finds the page
 * of the agentchart installed where the app runs. Checked on the packed package, with both
 * output formats, by fetching the page from the started server.
 */
import { spawnSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { build } from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";
import { type ConsumerProject, consumerProject } from "./consumer-project.js";

const APP = `
import { startVisualizerServer } from "agentchart/inspect";
startVisualizerServer().then(
	async (server) => {
		try {
			const page = await fetch(server.url);
			const html = await page.text();
			console.log(JSON.stringify({ status: page.status, html: html.includes("<html") }));
		} finally {
			await server.close();
		}
	},
	(error) => console.log(JSON.stringify({ error: error.message })),
);
`;

// ws, which the server uses, is CommonJS: an ES module bundle needs a require of its own.
const ESM_REQUIRE = 'import { createRequire as bannerRequire } from "node:module"; const require = bannerRequire(import.meta.url);';

describe("the visualizer server in a bundled application", { timeout: 120_000 }, () => {
	let project: ConsumerProject;
	beforeAll(async () => {
		project = await consumerProject();
		await mkdir(join(project.dir, "bundled"), { recursive: true });
		await writeFile(join(project.dir, "bundled", "app.ts"), APP);
	}, 300_000);

	for (const format of ["esm", "cjs"] as const) {
		it(`serves the page from a ${format} bundle`, async () => {
			const outfile = join(project.dir, "bundled", format, format === "esm" ? "app.mjs" : "app.cjs");
			await build({
				entryPoints: [join(project.dir, "bundled", "app.ts")],
				absWorkingDir: project.dir,
				bundle: true,
				platform: "node",
				format,
				outfile,
				logLevel: "silent",
				...(format === "esm" ? { banner: { js: ESM_REQUIRE } } : {}),
			});
			const run = spawnSync(process.execPath, [outfile], { cwd: project.dir, encoding: "utf8", timeout: 60_000 });
			expect(run.status, run.stderr).toBe(0);
			expect(JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}")).toEqual({ status: 200, html: true });
		});
	}
});
