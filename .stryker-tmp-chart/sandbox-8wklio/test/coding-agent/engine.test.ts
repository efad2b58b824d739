/**
 * The engine switch itself: the same `node` command line loads the real pi-agent-core, or
 * agentchart (the entry chosen by `AGENTCHART_ENTRY`) in its place.
 */
// @ts-nocheck

import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { AGENTCHART_ENTRY, type Engine, engineLaunch, REPO_ROOT } from "./engine.js";

interface Probe {
	/** Where `@mariozechner/pi-agent-core` resolves. */
	url: string;
	/** `typeof` its `Agent` export. */
	agent: string;
}

/** What a script started on `engine` gets for `@mariozechner/pi-agent-core`. */
function probe(engine: Engine): Probe {
	const { execArgv, env } = engineLaunch(engine);
	const script = [
		`const url = import.meta.resolve("@mariozechner/pi-agent-core");`,
		`const { Agent } = await import("@mariozechner/pi-agent-core");`,
		`console.log(JSON.stringify({ url, agent: typeof Agent }));`,
	].join("\n");
	const result = spawnSync(process.execPath, [...execArgv, "--input-type=module", "-e", script], {
		cwd: REPO_ROOT,
		env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", ...env },
		encoding: "utf8",
		timeout: 30_000,
	});
	if (result.status !== 0) throw new Error(`probe on ${engine} failed: ${result.stderr}`);
	return JSON.parse(result.stdout) as Probe;
}

describe("the engine switch", () => {
	it("loads the real pi-agent-core for pi", () => {
		expect(probe("pi")).toEqual({
			url: pathToFileURL(join(REPO_ROOT, "node_modules/@mariozechner/pi-agent-core/dist/index.js")).href,
			agent: "function",
		});
	});

	it(`loads agentchart (${AGENTCHART_ENTRY.replace(REPO_ROOT, ".")}) in its place for agentchart`, () => {
		expect(probe("agentchart")).toEqual({ url: pathToFileURL(AGENTCHART_ENTRY).href, agent: "function" });
	});
});
