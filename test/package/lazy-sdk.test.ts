/**
 * `import "agentchart"` does not load the Anthropic SDK: an application that never calls
 * Anthropic does not pay for it (as pi-ai loads its providers); the first Anthropic call does.
 * Checked on the packed package with a module resolution hook that records what is resolved.
 */
import { spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { consumerProject } from "./consumer-project.js";
import { nodeRuntimes, runtimesUnavailable } from "./node-runtimes.js";

const SCRIPT = `
import { registerHooks } from "node:module";
const resolved = [];
registerHooks({ resolve(specifier, context, next) { if (specifier.startsWith("@anthropic-ai/sdk")) resolved.push(specifier); return next(specifier, context); } });
const { getModel, streamAnthropic } = await import("agentchart");
const afterImport = resolved.length;
// Nothing listens on port 9 here: the call fails to connect, after loading the SDK to make it.
const model = { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: "http://127.0.0.1:9" };
const result = await streamAnthropic(model, { messages: [{ role: "user", content: "hi", timestamp: 0 }] }, { apiKey: "test-key", maxRetries: 0 }).result();
console.log(JSON.stringify({ afterImport, afterCall: resolved.length, stopReason: result.stopReason, errorMessage: result.errorMessage }));
`;

describe.skipIf(runtimesUnavailable() !== undefined)("the Anthropic SDK", () => {
	it("is loaded by the first Anthropic call, not by importing agentchart", async () => {
		const [project, runtimes] = await Promise.all([consumerProject(), nodeRuntimes()]);
		const newest = runtimes.sort((a, b) => a.major - b.major).at(-1);
		if (!newest) throw new Error("no supported Node runtime installed");
		await writeFile(join(project.dir, "lazy-sdk.mjs"), SCRIPT);
		const run = spawnSync(newest.node, ["lazy-sdk.mjs"], { cwd: project.dir, encoding: "utf8", timeout: 60_000 });
		expect(run.status, run.stderr).toBe(0);
		const outcome = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}") as { afterImport: number; afterCall: number; stopReason: string; errorMessage: string };
		expect(outcome.afterImport).toBe(0);
		expect(outcome.afterCall).toBeGreaterThan(0);
		expect(outcome.stopReason).toBe("error");
		expect(outcome.errorMessage).toMatch(/^Connection error/);
	}, 600_000);
});
