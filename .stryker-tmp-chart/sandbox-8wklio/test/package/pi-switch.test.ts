/**
 * The README's recipe for switching a pi application to agentchart, as a user applies it: a
 * vendored package named `@mariozechner/pi-agent-core` that re-exports agentchart, a `$`
 * override so that a dependency's own `@mariozechner/pi-agent-core` (here a small library
 * depending on pi-agent-core 0.73.1 from the registry) gets it too, then `npm install`, and
 * `npm ci` from the lockfile that wrote (the step an override to a `file:` path alone breaks).
 */
// @ts-nocheck

import { execFileSync } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumerProject } from "./consumer-project.js";

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
let dir: string;

function npm(args: string[]): void {
	execFileSync("npm", [...args, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], { cwd: dir, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, npm_config_update_notifier: "false" } });
}

function runApp(): unknown {
	return JSON.parse(execFileSync(process.execPath, ["app.mjs"], { cwd: dir, encoding: "utf8" }).trim());
}

describe("the README's recipe: a pi application switches to agentchart", () => {
	beforeAll(async () => {
		const { tarball } = await consumerProject();
		dir = await mkdtemp(join(tmpdir(), "agentchart-switch-"));
		await copyFile(tarball, join(dir, "agentchart.tgz"));
		await mkdir(join(dir, "vendor/pi-agent-core"), { recursive: true });
		await writeFile(
			join(dir, "vendor/pi-agent-core/package.json"),
			json({ name: "@mariozechner/pi-agent-core", version: "0.73.1", type: "module", main: "index.js", types: "index.d.ts", peerDependencies: { agentchart: "*" } }),
		);
		await writeFile(join(dir, "vendor/pi-agent-core/index.js"), 'export * from "agentchart";\n');
		await writeFile(join(dir, "vendor/pi-agent-core/index.d.ts"), 'export * from "agentchart";\n');
		// A library built on pi, as pi-coding-agent is: its own dependency on pi-agent-core.
		await mkdir(join(dir, "lib"));
		await writeFile(join(dir, "lib/package.json"), json({ name: "uses-pi", version: "1.0.0", type: "module", main: "index.js", dependencies: { "@mariozechner/pi-agent-core": "0.73.1" } }));
		await writeFile(join(dir, "lib/index.js"), 'export { Agent } from "@mariozechner/pi-agent-core";\n');
		await writeFile(
			join(dir, "package.json"),
			json({
				name: "pi-app",
				private: true,
				type: "module",
				dependencies: { "@mariozechner/pi-agent-core": "file:vendor/pi-agent-core", agentchart: "file:agentchart.tgz", "uses-pi": "file:lib" },
				overrides: { "@mariozechner/pi-agent-core": "$@mariozechner/pi-agent-core" },
			}),
		);
		// dispose() exists on agentchart's Agent only.
		await writeFile(
			join(dir, "app.mjs"),
			[
				'import { Agent as Direct } from "@mariozechner/pi-agent-core";',
				'import { Agent as ViaLibrary } from "uses-pi";',
				"console.log(JSON.stringify({ direct: typeof Direct.prototype.dispose, viaLibrary: typeof ViaLibrary.prototype.dispose }));",
				"",
			].join("\n"),
		);
	}, 300_000);
	afterAll(async () => {
		if (dir) await rm(dir, { recursive: true, force: true });
	});

	it("runs agentchart for the application and for its pi-based dependency, after npm install and after npm ci", () => {
		npm(["install"]);
		expect(runApp()).toEqual({ direct: "function", viaLibrary: "function" });
		npm(["ci"]);
		expect(runApp()).toEqual({ direct: "function", viaLibrary: "function" });
	}, 300_000);
});
