/**
 * Faults, against a server built with the MCP SDK (`fixtures/fault-server.ts`) over stdio:
 * crashes, stalls, cancellations, broken schemas, tool list changes, a server that is down.
 * Every test ends by closing what it opened and checking that no server process is left.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { McpConnection } from "../../src/mcp/connection.js";
import {
	connectMcpServers,
	McpToolError,
	type ConnectMcpServersOptions,
	type McpAgentTool,
	type McpProblem,
	type McpServers,
	type McpServerStatus,
	type McpToolDetails,
} from "../../src/mcp/index.js";
import type { AgentToolResult } from "../../src/types/agent.js";
import { childPids, Cleanup, faultServer, isAlive, textOf, toolNamed, waitForState, waitUntil, withTimeout } from "./helpers.js";

const cleanup = new Cleanup();

afterEach(async () => {
	await cleanup.run();
	await waitUntil(() => childPids().length === 0, 10_000, "every server process to exit");
});

async function connect(options: ConnectMcpServersOptions): Promise<McpServers> {
	const mcp = await connectMcpServers({ onProblem: () => undefined, ...options });
	cleanup.add(() => mcp.close());
	return mcp;
}

function structured(result: AgentToolResult<McpToolDetails>): Readonly<Record<string, unknown>> | undefined {
	return result.details.kind === "result" ? result.details.structuredContent : undefined;
}

async function serverPid(mcp: McpServers, name = "faults__whoami"): Promise<number> {
	return Number(structured(await toolNamed(mcp, name).execute("whoami", {}))?.["pid"]);
}

describe("tools of a server built with the SDK (stdio)", () => {
	it("leaves out a tool whose schema is invalid, and reports it naming the server and the tool", async () => {
		const problems: McpProblem[] = [];
		const mcp = await connect({ servers: { faults: faultServer() }, onProblem: (problem) => problems.push(problem) });
		expect(mcp.tools().map((tool) => tool.name)).not.toContain("faults__broken");
		expect(problems).toEqual([
			{
				kind: "invalid-schema",
				server: "faults",
				tool: "broken",
				issues: ['properties.n.type: "nubmer" is not a JSON Schema type'],
				message: expect.stringMatching(/^MCP server "faults": tool "broken" left out: its input schema is invalid/),
			},
		]);
		expect(mcp.problems()).toEqual(problems);
	});

	it("names tools <server>__<tool>, replacing characters that model APIs refuse", async () => {
		const mcp = await connect({ servers: { faults: faultServer() } });
		expect(mcp.tools().map((tool) => tool.name)).toContain("faults__files_read_v2_e862d9e3");
		expect(textOf(await toolNamed(mcp, "faults__files_read_v2_e862d9e3").execute("c1", {}))).toBe("read v2");
	});

	it("maps text, image, audio, embedded resources, resource links and structuredContent", async () => {
		const mcp = await connect({ servers: { faults: faultServer() } });
		const result = await toolNamed(mcp, "faults__rich").execute("c1", {});
		expect(result.content).toEqual([
			{ type: "text", text: "here is everything" },
			{ type: "image", data: expect.stringMatching(/^iVBOR/), mimeType: "image/png" },
			{ type: "text", text: "[audio (audio/wav), 12 bytes, not shown]" },
			{ type: "text", text: "[resource file:///notes.txt (text/plain)]\nthe notes" },
			{ type: "image", data: expect.stringMatching(/^iVBOR/), mimeType: "image/png" },
			{ type: "text", text: "[resource file:///data.bin (application/octet-stream), 4 bytes of binary data, not shown]" },
			{ type: "text", text: "[resource link big.csv: file:///big.csv (text/csv) - a large table]" },
		]);
		expect(result.details).toMatchObject({
			kind: "result",
			server: "faults",
			tool: "rich",
			structuredContent: { ok: true },
			audio: [{ mimeType: "audio/wav", data: "UklGRiQAAABXQVZF" }],
			resources: [
				{ kind: "embedded", uri: "file:///notes.txt", text: "the notes" },
				{ kind: "embedded", uri: "file:///pixel.png", mimeType: "image/png" },
				{ kind: "embedded", uri: "file:///data.bin", blob: "AAECAw==" },
				{ kind: "link", uri: "file:///big.csv", name: "big.csv", mimeType: "text/csv" },
			],
		});
	});

	it("throws an McpToolError with the result's text for a result flagged isError", async () => {
		const mcp = await connect({ servers: { faults: faultServer() } });
		const error = await toolNamed(mcp, "faults__fail").execute("c1", {}).catch((caught: unknown) => caught);
		expect(error).toBeInstanceOf(McpToolError);
		expect((error as McpToolError).message).toBe("it failed on purpose");
		expect((error as McpToolError).result.details).toMatchObject({ server: "faults", tool: "fail" });
	});

	it("relays every progress notification, the last one included, before the result", async () => {
		const mcp = await connect({ servers: { faults: faultServer() } });
		// The last notification is written right before the result; repeat to catch a lost one.
		for (let round = 0; round < 5; round++) {
			const updates: number[] = [];
			const result = await toolNamed(mcp, "faults__progress").execute("c1", { steps: 4 }, undefined, (update) => {
				if (update.details.kind === "progress") updates.push(update.details.progress);
			});
			expect(textOf(result)).toBe("progress done");
			expect(updates).toEqual([1, 2, 3, 4]);
		}
	});

	it("cancels a call when its signal aborts: the call ends at once and the server sees the cancellation", async () => {
		const mcp = await connect({ servers: { faults: faultServer() } });
		const controller = new AbortController();
		const started = Date.now();
		// Aborted on the server's first progress notification, so the request has surely arrived.
		const call = toolNamed(mcp, "faults__slow").execute("c1", { ms: 60_000 }, controller.signal, () => controller.abort(new Error("user pressed stop")));
		await expect(withTimeout(call, 20_000, "the cancelled call")).rejects.toThrow("MCP tool call cancelled: user pressed stop");
		expect(Date.now() - started).toBeLessThan(20_000);
		const seen = structured(await toolNamed(mcp, "faults__cancellations").execute("c2", {}));
		expect(seen).toEqual({ count: 1, reasons: ["Error: user pressed stop"] });
	});

	it("applies toolTimeoutMs to the MCP request, and gives it to the agent as the tool's timeoutMs", async () => {
		const mcp = await connect({ servers: { faults: faultServer({ toolTimeoutMs: 1000 }) } });
		const slow = toolNamed(mcp, "faults__slow");
		expect(slow.timeoutMs).toBe(1000);
		await expect(withTimeout(slow.execute("c1", { ms: 20_000 }), 5000, "the timed-out call")).rejects.toThrow(/Request timed out/);
		const seen = structured(await toolNamed(mcp, "faults__cancellations").execute("c2", {}));
		expect(seen?.["count"]).toBe(1);
	});

	it("lists the tools again on notifications/tools/list_changed, keeping unchanged tools as they were", async () => {
		const mcp = await connect({ servers: { faults: faultServer() } });
		const echoBefore = toolNamed(mcp, "faults__echo");
		const changes: McpAgentTool[][] = [];
		mcp.onToolsChanged((tools) => changes.push(tools));
		await toolNamed(mcp, "faults__add-tool").execute("c1", { name: "late" });
		await waitUntil(() => changes.length > 0, 5000, "the tool list to change");
		const latest = changes[changes.length - 1]!;
		expect(latest.map((tool) => tool.name)).toContain("faults__late");
		expect(mcp.tools()).toEqual(latest);
		expect(toolNamed(mcp, "faults__echo")).toBe(echoBefore);
		expect(textOf(await toolNamed(mcp, "faults__late").execute("c2", {}))).toBe("late ran");
	});
});

describe("connection faults (stdio)", () => {
	it("a crash mid-call fails that call at once; the server is started again and calls work", async () => {
		const mcp = await connect({ servers: { faults: faultServer({ reconnect: { initialDelayMs: 50 } }) } });
		const firstPid = await serverPid(mcp);
		await expect(withTimeout(toolNamed(mcp, "faults__crash").execute("c1", {}), 5000, "the crashing call")).rejects.toThrow(
			/MCP server "faults" was disconnected during the call .*; the tool may or may not have run/,
		);
		expect(mcp.status()[0]?.lastError).toBe("connection lost: the server process exited; last stderr: fault-server: crashing on purpose");
		await waitForState(mcp, "faults", "ready");
		const secondPid = await serverPid(mcp);
		expect(secondPid).not.toBe(firstPid);
		expect(isAlive(firstPid)).toBe(false);
	});

	// The waits below are bounds for a failure only (each attempt starts a process, which on a busy
	// machine takes seconds); what is checked is the backoff's lower bounds, which load cannot break.
	it("while the server is down it retries with a doubling backoff, then calls work again", { timeout: 150_000 }, async () => {
		const dir = mkdtempSync(join(tmpdir(), "agentchart-mcp-"));
		const gate = join(dir, "down");
		cleanup.add(async () => rmSync(dir, { recursive: true, force: true }));
		const mcp = await connect({
			servers: { faults: faultServer({ env: { FAULT_SERVER_GATE: gate }, reconnect: { initialDelayMs: 100, maxDelayMs: 10_000 } }) },
		});
		const entered: { state: string; at: number; attempts: number }[] = [];
		mcp.onStatusChange((status: McpServerStatus) => entered.push({ state: status.state, at: Date.now(), attempts: status.attempts }));
		writeFileSync(gate, "");
		await toolNamed(mcp, "faults__crash").execute("c1", {}).catch(() => undefined);
		await waitUntil(() => (mcp.status()[0]?.attempts ?? 0) >= 3 && mcp.status()[0]?.state === "reconnecting", 60_000, "three failed attempts");
		rmSync(gate);
		await waitForState(mcp, "faults", "ready", 60_000);
		expect(textOf(await toolNamed(mcp, "faults__echo").execute("c2", { text: "back" }))).toBe("echo: back");
		// Each wait in `reconnecting` lasts at least 100, 200, 400 ms (timers may fire ~1 ms early).
		const waits: number[] = [];
		entered.forEach((entry, index) => {
			const next = entered[index + 1];
			if (entry.state === "reconnecting" && next?.state === "connecting") waits.push(next.at - entry.at);
		});
		expect(waits.length).toBeGreaterThanOrEqual(4);
		waits.slice(0, 3).forEach((wait, index) => expect(wait).toBeGreaterThanOrEqual(100 * 2 ** index - 5));
		expect(existsSync(gate)).toBe(false);
	});

	it("a call on a disconnected server fails at once instead of waiting for the reconnection", async () => {
		const mcp = await connect({ servers: { faults: faultServer({ reconnect: { initialDelayMs: 60_000 } }) } });
		await toolNamed(mcp, "faults__crash").execute("c1", {}).catch(() => undefined);
		await waitForState(mcp, "faults", "reconnecting");
		const started = Date.now();
		await expect(toolNamed(mcp, "faults__echo").execute("c2", { text: "hello?" })).rejects.toThrow(
			/^MCP server "faults" is not connected \(reconnecting, attempt 1 pending; last error: connection lost: the server process exited/,
		);
		// Not the 60 s the reconnection waits (a bound far from both, so a busy machine cannot fail it).
		expect(Date.now() - started).toBeLessThan(20_000);
		mcp.reconnect("faults");
		await waitForState(mcp, "faults", "ready");
		expect(textOf(await toolNamed(mcp, "faults__echo").execute("c3", { text: "hello" }))).toBe("echo: hello");
	});

	it("with reconnect off, a lost server is failed until reconnect() is called", async () => {
		const mcp = await connect({ servers: { faults: faultServer({ reconnect: false }) } });
		await toolNamed(mcp, "faults__crash").execute("c1", {}).catch(() => undefined);
		await waitForState(mcp, "faults", "failed");
		await expect(toolNamed(mcp, "faults__echo").execute("c2", { text: "x" })).rejects.toThrow(/is not connected \(failed;/);
		mcp.reconnect("faults");
		await waitForState(mcp, "faults", "ready");
		expect(textOf(await toolNamed(mcp, "faults__echo").execute("c3", { text: "x" }))).toBe("echo: x");
	});

	it("a server that never answers the handshake times out, and its process is ended", async () => {
		const mcp = await connect({ servers: { hung: faultServer({ connectTimeoutMs: 300, reconnect: false, optional: true }, ["--silent"]) } });
		expect(mcp.status()[0]).toMatchObject({ state: "failed", lastError: "no answer within 300 ms" });
		await waitUntil(() => childPids().length === 0, 10_000, "the hung server process to be ended");
	});

	it("connectMcpServers rejects, naming the server, when a required server cannot start, and leaves nothing running", async () => {
		const attempt = connectMcpServers({
			servers: { faults: faultServer(), missing: { command: "/nonexistent/mcp-server", reconnect: false } },
			onProblem: () => undefined,
		});
		await expect(attempt).rejects.toThrow(/could not connect to an MCP server:\n {2}- "missing": .*ENOENT/);
		expect(childPids()).toEqual([]);
	});

	it("says that a working directory is missing, not that the command is (Node reports both as ENOENT of the command)", async () => {
		const attempt = connectMcpServers({ servers: { moved: faultServer({ cwd: "/nonexistent/project", reconnect: false }) }, onProblem: () => undefined });
		await expect(attempt).rejects.toThrow(`- "moved": the server's working directory (cwd) "/nonexistent/project" does not exist, so ${JSON.stringify(process.execPath)} could not be started`);
		expect(childPids()).toEqual([]);
	});

	it("quotes the last stderr lines of a server process that exits at start", async () => {
		const dir = mkdtempSync(join(tmpdir(), "agentchart-mcp-"));
		const gate = join(dir, "down");
		writeFileSync(gate, "");
		cleanup.add(async () => rmSync(dir, { recursive: true, force: true }));
		const attempt = connectMcpServers({ servers: { faults: faultServer({ env: { FAULT_SERVER_GATE: gate }, reconnect: false }) }, onProblem: () => undefined });
		await expect(attempt).rejects.toThrow('  - "faults": the server process exited; last stderr: fault-server: down (gate file present)');
	});

	it("an optional server that is down does not hold the others back; its tools appear once it connects", async () => {
		const dir = mkdtempSync(join(tmpdir(), "agentchart-mcp-"));
		const gate = join(dir, "down");
		writeFileSync(gate, "");
		cleanup.add(async () => rmSync(dir, { recursive: true, force: true }));
		const mcp = await connect({
			servers: {
				up: faultServer(),
				late: faultServer({ optional: true, env: { FAULT_SERVER_GATE: gate }, reconnect: { initialDelayMs: 50, maxDelayMs: 100 } }),
			},
		});
		expect(mcp.tools().map((tool) => tool.name)).toContain("up__echo");
		expect(mcp.tools().some((tool) => tool.name.startsWith("late__"))).toBe(false);
		const changed = new Promise<McpAgentTool[]>((resolve) => mcp.onToolsChanged(resolve));
		rmSync(gate);
		const tools = await withTimeout(changed, 10_000, "the late server's tools");
		expect(tools.map((tool) => tool.name)).toContain("late__echo");
		expect(textOf(await toolNamed(mcp, "late__echo").execute("c1", { text: "finally" }))).toBe("echo: finally");
	});

	it("without prefixes, a later server's clashing tools are left out and reported; filters pick tools", async () => {
		const problems: McpProblem[] = [];
		const mcp = await connect({
			servers: {
				a: faultServer({ toolPrefix: false }),
				b: faultServer({ toolPrefix: false, includeTools: ["echo", "whoami"] }),
				c: faultServer({ toolPrefix: "c_", excludeTools: ["crash", "broken"] }),
			},
			onProblem: (problem) => problems.push(problem),
		});
		const names = mcp.tools().map((tool) => tool.name);
		expect(names.filter((name) => name === "echo")).toHaveLength(1);
		expect(names).toContain("c_echo");
		expect(names).not.toContain("c_crash");
		expect(problems.filter((problem) => problem.kind === "name-collision")).toEqual([
			expect.objectContaining({ server: "b", tool: "echo", name: "echo", keptFrom: "a" }),
			expect.objectContaining({ server: "b", tool: "whoami", name: "whoami", keptFrom: "a" }),
		]);
		// The kept "echo" is server a's.
		const aPid = mcp.status().find((status) => status.server === "a")?.pid;
		expect(await serverPid(mcp, "whoami")).toBe(aPid);
	});

	it("close() while the process is starting ends it, and the connection is closed", async () => {
		const connection = new McpConnection("hung", faultServer({ connectTimeoutMs: 60_000 }, ["--silent"]));
		connection.start();
		await waitUntil(() => childPids().length === 1, 10_000, "the server process to start");
		await withTimeout(connection.close(), 10_000, "close()");
		expect(connection.status().state).toBe("closed");
		expect(childPids()).toEqual([]);
	});
});
