/**
 * The examples run as a user runs them (`npx tsx examples/<name>.ts`), importing the package by
 * its name (tsconfig.json maps it to the source), and print what their comments promise.
 */
import { execFile } from "node:child_process";
import { readFile, readdir } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpenAITestServer, startOpenAIServer, textChunks, roleChunk, finishChunk, toolCallChunks } from "../providers/openai-server.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Runs an example in a child process; asynchronously, so a test server in this process can answer it. */
function runExample(file: string, env: Record<string, string | undefined> = {}, args: string[] = []): Promise<{ status: number | null; stdout: string; stderr: string }> {
	return new Promise((resolve) => {
		execFile(
			process.execPath,
			["--import", "tsx", file, ...args],
			{ cwd: ROOT, encoding: "utf8", timeout: 60_000, env: { ...process.env, ANTHROPIC_API_KEY: "", ...env } },
			(error, stdout, stderr) => resolve({ status: error ? (typeof error.code === "number" ? error.code : null) : 0, stdout, stderr }),
		);
	});
}

describe("examples/quick-start.ts", () => {
	it("prints the answer text with the scripted model, and nothing else, without a key", async () => {
		const result = await runExample("examples/quick-start.ts");
		expect(result.stderr).toBe("");
		expect(result.status).toBe(0);
		expect(result.stdout).toBe("The answer is 42.\n");
	});

	it("is the README's quick start, word for word", async () => {
		const [example, readme] = await Promise.all([readFile(new URL("examples/quick-start.ts", `file://${ROOT}`), "utf8"), readFile(new URL("README.md", `file://${ROOT}`), "utf8")]);
		expect(readme).toContain(`\`\`\`ts\n${example}\`\`\``);
	});
});

describe("examples/support-agent.ts", () => {
	it("answers with the scripted model, and nothing else (its kit tests are examples/support-agent.test.ts)", async () => {
		const result = await runExample("examples/support-agent.ts");
		expect(result.stderr).toBe("");
		expect(result.status).toBe(0);
		expect(result.stdout).toBe("Order A-17 ships tomorrow.\n");
	});
});

describe("examples/local-model.ts", () => {
	let server: OpenAITestServer;
	beforeAll(async () => {
		server = await startOpenAIServer();
	});
	afterAll(() => server.close());

	it("runs a tool round trip on an OpenAI-compatible server given by OPENAI_BASE_URL", async () => {
		server.respond(
			{ kind: "sse", frames: [roleChunk(), ...toolCallChunks(0, "call_1", "get_weather", ['{"city":', '"Zürich"}']), finishChunk("tool_calls")] },
			{ kind: "sse", frames: [roleChunk(), ...textChunks(["Zürich: 18°C, clear."]), finishChunk("stop")] },
		);
		const result = await runExample("examples/local-model.ts", { OPENAI_BASE_URL: server.baseUrl, OPENAI_MODEL: "test-model" });
		expect(result.stderr).toBe("");
		expect(result.status).toBe(0);
		expect(result.stdout).toBe("[get_weather: ok]\nZürich: 18°C, clear.\n");
		expect(server.requests.map((request) => request.body["model"])).toEqual(["test-model", "test-model"]);
	});

	it("says what went wrong when the server is not there, and exits with 1", async () => {
		// A port nothing listens on: taken, then given back.
		const closed = createServer();
		await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
		const { port } = closed.address() as AddressInfo;
		await new Promise((resolve) => closed.close(resolve));
		const result = await runExample("examples/local-model.ts", { OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` });
		expect(result.status).toBe(1);
		expect(result.stderr).toContain(`error: Connection error: connect ECONNREFUSED 127.0.0.1:${port} (is the server running at http://127.0.0.1:${port}/v1?)`);
	});
});

describe("examples/support-ticket.ts", () => {
	it("runs the ticket to its output with the scripted model", async () => {
		const result = await runExample("examples/support-ticket.ts");
		expect(result.stderr).toBe("");
		expect(result.status).toBe(0);
		expect(result.stdout).toContain("answer: 'Your order A-17 ships tomorrow.'");
	});
});

describe("every example", () => {
	it("imports agentchart by its name, never the repository's sources, so a copy of it runs in a user's project", async () => {
		const files = (await readdir(new URL("examples/", `file://${ROOT}`))).filter((file) => file.endsWith(".ts"));
		const offenders: string[] = [];
		for (const file of files) {
			const source = await readFile(new URL(`examples/${file}`, `file://${ROOT}`), "utf8");
			for (const match of source.matchAll(/(?:from\s*|import\s*\(\s*)["'](\.\.\/[^"']*)["']/g)) offenders.push(`${file}: ${match[1]}`);
		}
		expect(files.length).toBeGreaterThan(0);
		expect(offenders).toEqual([]);
	});
});
