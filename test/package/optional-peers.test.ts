/**
 * The optional peers, as a user meets them in an app that did not install them: the packed
 * package in the consumer project, which installs neither `openai` nor anything else optional
 * beyond the MCP SDK (and not fast-check, the optional peer of agentchart/testing's fuzzAgent).
 */
import { spawnSync } from "node:child_process";
import { copyFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpenAITestServer, startOpenAIServer } from "../providers/openai-server.js";
import { type ConsumerProject, consumerProject } from "./consumer-project.js";

describe("the optional openai peer, not installed", { timeout: 120_000 }, () => {
	let project: ConsumerProject;
	let server: OpenAITestServer;
	beforeAll(async () => {
		project = await consumerProject();
		server = await startOpenAIServer();
		await copyFile(new URL("./fixtures/openai-missing.mjs", import.meta.url), join(project.dir, "openai-missing.mjs"));
	}, 300_000);
	afterAll(() => server?.close());

	it("fails loudly: a warning on stderr that says to install it, an error reply, and the same message in state.errorMessage", () => {
		expect(existsSync(join(project.dir, "node_modules", "openai"))).toBe(false);
		const result = spawnSync(process.execPath, ["openai-missing.mjs", server.baseUrl], { cwd: project.dir, encoding: "utf8", timeout: 60_000 });
		expect(result.status).toBe(0);
		const message = 'streamOpenAICompletions needs the "openai" package, which is not installed: run `npm install openai` (an optional peer dependency of agentchart)';
		expect(result.stderr).toContain(`[AGENTCHART_OPENAI_MISSING] Warning: ${message}`);
		expect(JSON.parse(result.stdout.trim())).toEqual({ ends: ["error"], error: message });
		expect(server.requests).toEqual([]);
	});
});

describe("the optional fast-check peer, not installed", { timeout: 120_000 }, () => {
	let project: ConsumerProject;
	beforeAll(async () => {
		project = await consumerProject();
		await copyFile(new URL("./fixtures/testing-without-fast-check.mjs", import.meta.url), join(project.dir, "testing-without-fast-check.mjs"));
	}, 300_000);

	it("agentchart/testing loads and walks without it; fuzzAgent says to install it", () => {
		expect(existsSync(join(project.dir, "node_modules", "fast-check"))).toBe(false);
		const result = spawnSync(process.execPath, ["testing-without-fast-check.mjs"], { cwd: project.dir, encoding: "utf8", timeout: 60_000 });
		expect(result.stderr).toBe("");
		expect(result.status).toBe(0);
		expect(JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "{}")).toEqual({
			explored: 5,
			violations: 0,
			fuzzError: "agentchart/testing: fuzzAgent needs fast-check, an optional peer dependency: npm install --save-dev fast-check",
		});
	});
});
