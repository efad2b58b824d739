/**
 * Against a real MCP server nobody here wrote: `@modelcontextprotocol/server-everything`
 * (the MCP project's reference test server), started over stdio from its installed bin.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectMcpServers, McpToolError, type McpProblem, type McpServers, type McpToolDetails } from "../../src/mcp/index.js";
import type { AgentToolResult } from "../../src/types/agent.js";
import { childPids, everythingServer, isAlive, textOf, toolNamed, withTimeout } from "./helpers.js";

describe("server-everything over stdio", () => {
	let mcp: McpServers;
	const problems: McpProblem[] = [];

	beforeAll(async () => {
		mcp = await connectMcpServers({
			servers: { everything: everythingServer({ env: { AGENTCHART_MCP_TEST: "from-the-config" } }) },
			onProblem: (problem) => problems.push(problem),
		});
	});
	afterAll(async () => {
		await mcp?.close();
	});

	it("lists its tools as agent tools named <server>__<tool>, with their JSON Schemas", () => {
		const names = mcp.tools().map((tool) => tool.name);
		expect(names).toEqual(expect.arrayContaining(["everything__echo", "everything__get-sum", "everything__get-tiny-image", "everything__trigger-long-running-operation"]));
		const sum = toolNamed(mcp, "everything__get-sum");
		expect(sum.label).toBe("Get Sum Tool");
		expect(sum.parameters).toMatchObject({ type: "object", required: ["a", "b"] });
		expect(mcp.status()).toEqual([expect.objectContaining({ server: "everything", state: "ready", attempts: 0, pid: expect.any(Number) })]);
	});

	it("leaves out the tool that only runs as an MCP task, and says why", () => {
		expect(mcp.tools().map((tool) => tool.name)).not.toContain("everything__simulate-research-query");
		expect(problems).toEqual([expect.objectContaining({ kind: "task-required", server: "everything", tool: "simulate-research-query" })]);
		expect(mcp.problems()).toEqual(problems);
	});

	it("calls a tool and returns its text", async () => {
		const result = await toolNamed(mcp, "everything__get-sum").execute("call-1", { a: 2, b: 3 });
		expect(textOf(result)).toBe("The sum of 2 and 3 is 5.");
		expect(result.details).toMatchObject({ kind: "result", server: "everything", tool: "get-sum" });
	});

	it("passes the configured environment to the server process", async () => {
		const result = await toolNamed(mcp, "everything__get-env").execute("call-2", {});
		expect(textOf(result)).toContain('"AGENTCHART_MCP_TEST": "from-the-config"');
	});

	it("maps image content to an image block", async () => {
		const result = await toolNamed(mcp, "everything__get-tiny-image").execute("call-3", {});
		expect(result.content.map((block) => block.type)).toEqual(["text", "image", "text"]);
		expect(result.content[1]).toMatchObject({ type: "image", mimeType: "image/png", data: expect.stringMatching(/^iVBOR/) });
	});

	it("maps an embedded text resource to text and keeps it in details", async () => {
		const result = await toolNamed(mcp, "everything__get-resource-reference").execute("call-4", { resourceType: "Text", resourceId: 2 });
		expect(textOf(result)).toContain("[resource demo://resource/dynamic/text/2 (text/plain)]");
		const details = result.details as McpToolDetails;
		expect(details.kind === "result" && details.resources[0]).toMatchObject({ kind: "embedded", uri: "demo://resource/dynamic/text/2", text: expect.any(String) });
	});

	it("maps resource links to text notes and lists them in details", async () => {
		const result = await toolNamed(mcp, "everything__get-resource-links").execute("call-5", { count: 2 });
		// (server-everything labels its blob links text/plain; the mapping passes on what it is told.)
		expect(textOf(result)).toContain("[resource link Blob Resource 1: demo://resource/dynamic/blob/1 (text/plain) - Resource 1: plaintext resource]");
		const details = result.details as McpToolDetails;
		expect(details.kind === "result" && details.resources.map((resource) => resource.kind)).toEqual(["link", "link"]);
	});

	it("keeps structuredContent in details", async () => {
		const result = await toolNamed(mcp, "everything__get-structured-content").execute("call-6", { location: "Chicago" });
		expect(result.details).toMatchObject({ structuredContent: { temperature: 36, conditions: "Light rain / drizzle", humidity: 82 } });
	});

	it("throws the server's message when the call is refused (the agent records an error result)", async () => {
		const call = toolNamed(mcp, "everything__get-resource-reference").execute("call-7", { resourceType: "Nope", resourceId: 1 });
		await expect(call).rejects.toBeInstanceOf(McpToolError);
		await expect(call).rejects.toThrow(/Invalid option: expected one of "Text"\|"Blob"/);
	});

	it("relays progress notifications to onUpdate", async () => {
		const updates: AgentToolResult<McpToolDetails>[] = [];
		const result = await toolNamed(mcp, "everything__trigger-long-running-operation").execute("call-8", { duration: 0.2, steps: 3 }, undefined, (update) => {
			updates.push(update);
		});
		expect(textOf(result)).toContain("Long running operation completed");
		expect(updates.map((update) => update.details)).toEqual([
			expect.objectContaining({ kind: "progress", progress: 1, total: 3 }),
			expect.objectContaining({ kind: "progress", progress: 2, total: 3 }),
			expect.objectContaining({ kind: "progress", progress: 3, total: 3 }),
		]);
		expect(textOf(updates[0]!)).toBe("Progress: 1/3");
	});

	it("cancels a long call when its signal aborts, and the server stays usable", async () => {
		const controller = new AbortController();
		const started = Date.now();
		// 60 s operation; aborted at its first progress notification, i.e. once it surely runs.
		const call = toolNamed(mcp, "everything__trigger-long-running-operation").execute("call-9", { duration: 60, steps: 300 }, controller.signal, () => controller.abort());
		await expect(withTimeout(call, 20_000, "the aborted call")).rejects.toThrow(/cancelled/);
		expect(Date.now() - started).toBeLessThan(20_000);
		const after = await toolNamed(mcp, "everything__echo").execute("call-10", { message: "still here" });
		expect(textOf(after)).toBe("Echo: still here");
	});

	it("ends the server process on close", async () => {
		const pid = mcp.status()[0]?.pid;
		expect(pid).toBeDefined();
		await mcp.close();
		expect(isAlive(pid!)).toBe(false);
		expect(childPids()).toEqual([]);
		expect(mcp.status()[0]?.state).toBe("closed");
		await expect(toolNamed(mcp, "everything__echo").execute("call-11", { message: "late" })).rejects.toThrow(/is not connected \(closed\)/);
	});
});
