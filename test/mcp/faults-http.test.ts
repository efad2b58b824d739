/**
 * The same SDK-built server over Streamable HTTP on 127.0.0.1, run as a process of the
 * test's own so it can be killed and started again on the same port.
 */
import { afterEach, describe, expect, it } from "vitest";
import { connectMcpServers, type McpAgentTool, type McpServers, type McpServerStatus, type McpToolDetails } from "../../src/mcp/index.js";
import type { AgentToolResult } from "../../src/types/agent.js";
import { childPids, Cleanup, startHttpFaultServer, textOf, toolNamed, waitForState, waitUntil, withTimeout, type HttpFaultServer } from "./helpers.js";

const cleanup = new Cleanup();

afterEach(async () => {
	await cleanup.run();
	await waitUntil(() => childPids().length === 0, 10_000, "every server process to exit");
});

async function httpServer(port = 0): Promise<HttpFaultServer> {
	const server = await startHttpFaultServer(port);
	cleanup.add(() => server.kill());
	return server;
}

async function connect(url: string, extra: { reconnect?: { initialDelayMs: number; maxDelayMs: number } } = {}): Promise<McpServers> {
	const mcp = await connectMcpServers({ servers: { web: { url, ...extra } }, onProblem: () => undefined });
	cleanup.add(() => mcp.close());
	return mcp;
}

function structured(result: AgentToolResult<McpToolDetails>): Readonly<Record<string, unknown>> | undefined {
	return result.details.kind === "result" ? result.details.structuredContent : undefined;
}

describe("a server over Streamable HTTP", () => {
	it("lists and calls tools, relaying progress", async () => {
		const server = await httpServer();
		const mcp = await connect(server.url);
		expect(mcp.status()[0]).toMatchObject({ server: "web", state: "ready" });
		expect(mcp.tools().map((tool) => tool.name)).toEqual(expect.arrayContaining(["web__echo", "web__progress"]));
		expect(textOf(await toolNamed(mcp, "web__echo").execute("c1", { text: "over http" }))).toBe("echo: over http");
		const updates: string[] = [];
		await toolNamed(mcp, "web__progress").execute("c2", { steps: 3 }, undefined, (update) => updates.push(textOf(update)));
		expect(updates).toEqual(["step 1 of 3", "step 2 of 3", "step 3 of 3"]);
	});

	it("cancels a call when its signal aborts, and the server sees the cancellation", async () => {
		const server = await httpServer();
		const mcp = await connect(server.url);
		const controller = new AbortController();
		const call = toolNamed(mcp, "web__slow").execute("c1", { ms: 20_000 }, controller.signal, () => controller.abort());
		await expect(withTimeout(call, 5000, "the cancelled call")).rejects.toThrow(/MCP tool call cancelled/);
		// The cancellation is its own POST; poll until the server has handled it.
		const count = async () => Number(structured(await toolNamed(mcp, "web__cancellations").execute("c2", {}))?.["count"]);
		const deadline = Date.now() + 5000;
		while ((await count()) !== 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
		expect(await count()).toBe(1);
	});

	it("lists the tools again on notifications/tools/list_changed", async () => {
		const server = await httpServer();
		const mcp = await connect(server.url);
		const changed = new Promise<McpAgentTool[]>((resolve) => mcp.onToolsChanged(resolve));
		await toolNamed(mcp, "web__add-tool").execute("c1", { name: "added" });
		const tools = await withTimeout(changed, 5000, "the tool list to change");
		expect(tools.map((tool) => tool.name)).toContain("web__added");
		expect(textOf(await toolNamed(mcp, "web__added").execute("c2", {}))).toBe("added ran");
	});

	it("when the server restarts, it reconnects with backoff, opens a new session, and calls work again", async () => {
		const first = await httpServer();
		const mcp = await connect(first.url, { reconnect: { initialDelayMs: 50, maxDelayMs: 200 } });
		const firstPid = Number(structured(await toolNamed(mcp, "web__whoami").execute("c1", {}))?.["pid"]);
		const states: McpServerStatus[] = [];
		mcp.onStatusChange((status) => states.push(status));
		await first.kill();
		// Found out without a call: the server's event stream breaks.
		await waitForState(mcp, "web", "reconnecting", 5000);
		await waitUntil(() => (mcp.status()[0]?.attempts ?? 0) >= 2, 5000, "two failed attempts");
		await expect(toolNamed(mcp, "web__echo").execute("c2", { text: "anyone?" })).rejects.toThrow(/is not connected \((reconnecting|connecting)/);
		expect(mcp.status()[0]?.lastError).toMatch(/ECONNREFUSED/);
		const second = await httpServer(first.port);
		await waitForState(mcp, "web", "ready", 5000);
		const secondPid = Number(structured(await toolNamed(mcp, "web__whoami").execute("c3", {}))?.["pid"]);
		expect(secondPid).toBe(second.process.pid);
		expect(secondPid).not.toBe(firstPid);
		expect(states.map((status) => status.state)).toEqual(expect.arrayContaining(["reconnecting", "connecting", "ready"]));
	});

	it("a crash mid-call fails the call at once rather than leaving it hanging", async () => {
		const server = await httpServer();
		const mcp = await connect(server.url, { reconnect: { initialDelayMs: 50, maxDelayMs: 200 } });
		const started = Date.now();
		await expect(withTimeout(toolNamed(mcp, "web__crash").execute("c1", {}), 20_000, "the crashing call")).rejects.toThrow(
			/MCP server "web" was disconnected during the call/,
		);
		expect(Date.now() - started).toBeLessThan(20_000);
		await waitUntil(() => mcp.status()[0]?.state !== "ready", 5000, "the connection to be seen lost");
	});

	it("close() fails a call in flight at once, saying the application closed the connection", async () => {
		const server = await httpServer();
		const mcp = await connect(server.url);
		let arrived!: () => void;
		const reached = new Promise<void>((resolve) => (arrived = resolve));
		const call = toolNamed(mcp, "web__slow").execute("c1", { ms: 20_000 }, undefined, () => arrived());
		call.catch(() => undefined);
		await withTimeout(reached, 5000, "the call to reach the server");
		const closing = mcp.close();
		await expect(withTimeout(call, 5000, "the call to fail")).rejects.toThrow(
			'MCP server "web" was closed by the application during the call (close()); the tool may or may not have run',
		);
		await closing;
	});

	it("close() ends the HTTP session on the server (DELETE)", async () => {
		const server = await httpServer();
		const watcher = await connect(server.url);
		const closing = await connectMcpServers({ servers: { web: { url: server.url } }, onProblem: () => undefined });
		const sessions = async () => Number(structured(await toolNamed(watcher, "web__sessions").execute("c1", {}))?.["count"]);
		expect(await sessions()).toBe(2);
		await closing.close();
		expect(await sessions()).toBe(1);
	});
});
