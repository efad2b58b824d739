/**
 * The optional peers, as a user meets them in an app that did not install them: the packed
 * package in the consumer project, which installs neither `openai` nor fast-check (the optional
 * peer of agentchart/testing's fuzzAgent); in the project without peers, which installs
 * agentchart alone; and in one whose peers are of versions outside agentchart's ranges.
 */
import { spawnSync } from "node:child_process";
import { copyFile, cp, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
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
		const message = 'streamOpenAICompletions (agentchart) needs the "openai" package, which is not installed: run `npm install openai@^7.57.0` (an optional peer dependency of agentchart)';
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
			fuzzError: 'agentchart/testing (fuzzAgent) needs the "fast-check" package, which is not installed: run `npm install --save-dev fast-check@^4.10.2` (an optional peer dependency of agentchart)',
		});
	});
});

const PEER_RANGES = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { peerDependencies: Record<string, string> }).peerDependencies;

function lastJsonLine(stdout: string): unknown {
	return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
}

describe("agentchart installed alone, without any optional peer", { timeout: 120_000 }, () => {
	let project: ConsumerProject;
	beforeAll(async () => {
		project = await consumerProject({ peers: false });
		for (const fixture of ["peers-missing.mjs", "peers-missing.cjs"]) await copyFile(new URL(`./fixtures/${fixture}`, import.meta.url), join(project.dir, fixture));
	}, 300_000);

	it("imports agentchart/mcp; connectMcpServers rejects with the feature, the package and the install command at the declared range, Node's error as the cause", () => {
		expect(existsSync(join(project.dir, "node_modules", "@modelcontextprotocol", "sdk"))).toBe(false);
		expect(existsSync(join(project.dir, "node_modules", "@mariozechner", "pi-ai"))).toBe(false);
		const result = spawnSync(process.execPath, ["peers-missing.mjs"], { cwd: project.dir, encoding: "utf8", timeout: 60_000 });
		expect(result.stderr).toBe("");
		expect(result.status).toBe(0);
		const outcome = lastJsonLine(result.stdout) as { mcpImported: boolean; mcp: { message: string; causeCode: string; causeMessage: string }; piAi: string };
		expect(outcome.mcpImported).toBe(true);
		expect(outcome.mcp.message).toBe(
			`agentchart/mcp (connectMcpServers) needs the "@modelcontextprotocol/sdk" package, which is not installed: run \`npm install @modelcontextprotocol/sdk@${PEER_RANGES["@modelcontextprotocol/sdk"]}\` (an optional peer dependency of agentchart)`,
		);
		expect(outcome.mcp.causeCode).toBe("ERR_MODULE_NOT_FOUND");
		expect(outcome.mcp.causeMessage).toContain("Cannot find package '@modelcontextprotocol/sdk'");
		expect(outcome.piAi).toContain(`install @mariozechner/pi-ai to use its providers (\`npm install @mariozechner/pi-ai@${PEER_RANGES["@mariozechner/pi-ai"]}\`)`);
	});

	it("says the same to a CommonJS application", () => {
		const result = spawnSync(process.execPath, ["peers-missing.cjs"], { cwd: project.dir, encoding: "utf8", timeout: 60_000 });
		expect(result.status).toBe(0);
		expect(lastJsonLine(result.stdout)).toEqual({
			mcp: {
				message: `agentchart/mcp (connectMcpServers) needs the "@modelcontextprotocol/sdk" package, which is not installed: run \`npm install @modelcontextprotocol/sdk@${PEER_RANGES["@modelcontextprotocol/sdk"]}\` (an optional peer dependency of agentchart)`,
				causeCode: "ERR_MODULE_NOT_FOUND",
			},
		});
	});
});

/** Packages at versions outside agentchart's ranges, with the shape of those versions' entry points. */
const INCOMPATIBLE_PEERS: Record<string, { manifest: Record<string, unknown>; files: Record<string, string> }> = {
	// openai 3: a Configuration and an OpenAIApi, no OpenAI class.
	openai: { manifest: { version: "3.3.0", main: "index.js" }, files: { "index.js": "exports.Configuration = class {};\nexports.OpenAIApi = class {};\n" } },
	"fast-check": { manifest: { version: "2.0.0", main: "index.js" }, files: { "index.js": "exports.assert = () => undefined;\nexports.property = () => undefined;\n" } },
	"@mariozechner/pi-ai": { manifest: { version: "0.50.0", type: "module", main: "index.js" }, files: { "index.js": "export const stream = () => undefined;\n" } },
	// An MCP SDK without the Streamable HTTP and stdio client modules of 1.x.
	"@modelcontextprotocol/sdk": {
		manifest: { version: "0.6.0", type: "module", exports: { "./client/index.js": "./client.js", "./types.js": "./types.js", "./package.json": "./package.json" } },
		files: { "client.js": "export class Client {}\n", "types.js": "export const ErrorCode = {};\n" },
	},
};

describe("optional peers installed at versions outside agentchart's ranges", { timeout: 120_000 }, () => {
	let dir: string;
	beforeAll(async () => {
		const project = await consumerProject({ peers: false });
		// agentchart copied (it resolves its peers from where it is), the rest linked: the fakes below sit beside it.
		dir = await mkdtemp(join(tmpdir(), "agentchart-incompatible-peers-"));
		const modules = join(dir, "node_modules");
		await mkdir(modules);
		for (const name of await readdir(join(project.dir, "node_modules"))) {
			if (name === "agentchart" || name.startsWith(".")) continue;
			await symlink(join(project.dir, "node_modules", name), join(modules, name), "dir");
		}
		await cp(join(project.dir, "node_modules", "agentchart"), join(modules, "agentchart"), { recursive: true });
		for (const [name, fake] of Object.entries(INCOMPATIBLE_PEERS)) {
			const folder = join(modules, name);
			await mkdir(folder, { recursive: true });
			await writeFile(join(folder, "package.json"), JSON.stringify({ name, ...fake.manifest }));
			for (const [file, text] of Object.entries(fake.files)) await writeFile(join(folder, file), text);
		}
		await writeFile(join(dir, "package.json"), JSON.stringify({ name: "incompatible-peers", private: true, type: "module" }));
		await copyFile(new URL("./fixtures/peers-incompatible.mjs", import.meta.url), join(dir, "peers-incompatible.mjs"));
	}, 300_000);
	afterAll(async () => {
		if (dir) await rm(dir, { recursive: true, force: true });
	});

	it("each integration names what is installed and what it needs, as an error, not a crash", () => {
		const result = spawnSync(process.execPath, ["peers-incompatible.mjs"], { cwd: dir, encoding: "utf8", timeout: 60_000 });
		expect(result.status, result.stderr).toBe(0);
		const outcome = lastJsonLine(result.stdout) as { openai: { stopReason: string; errorMessage: string }; mcp: string; fastCheck: string; piAi: string };
		expect(outcome.openai).toEqual({
			stopReason: "error",
			errorMessage: `streamOpenAICompletions (agentchart) cannot use the installed "openai" package: it has no OpenAI, APIError, APIConnectionError, APIConnectionTimeoutError, APIUserAbortError (version 3.3.0 is installed; agentchart needs openai@${PEER_RANGES["openai"]}: run \`npm install openai@${PEER_RANGES["openai"]}\`)`,
		});
		expect(outcome.mcp).toMatch(
			/^agentchart\/mcp \(connectMcpServers\) could not load the "@modelcontextprotocol\/sdk" package \(version 0\.6\.0 is installed; agentchart needs @modelcontextprotocol\/sdk@\^1\.32\.2: run `npm install @modelcontextprotocol\/sdk@\^1\.32\.2`\): Package subpath '\.\/client\/stdio\.js' is not defined by "exports"/,
		);
		expect(outcome.fastCheck).toBe(
			`agentchart/testing (fuzzAgent) cannot use the installed "fast-check" package: it has no array, asyncProperty, boolean, check, constant, constantFrom, integer, oneof, record (version 2.0.0 is installed; agentchart needs fast-check@${PEER_RANGES["fast-check"]}: run \`npm install --save-dev fast-check@${PEER_RANGES["fast-check"]}\`)`,
		);
		expect(outcome.piAi).toContain(
			`pi-ai's providers (the default) are not available: the default stream function of Agent (agentchart) cannot use the installed "@mariozechner/pi-ai" package: it has no streamSimple (version 0.50.0 is installed; agentchart needs @mariozechner/pi-ai@${PEER_RANGES["@mariozechner/pi-ai"]}`,
		);
	});
});
