/**
 * A server's tool annotations (`readOnlyHint`, `idempotentHint`, `destructiveHint`,
 * `openWorldHint`, `title`) reach the application on each MCP tool as `annotations`, so it can
 * decide `replay` and `needsApproval` from them for durable runs; they were dropped. agentchart
 * does not act on them itself: an MCP tool stays not replay-safe and free of approval unless the
 * application says otherwise.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { AnyAgentTool } from "../../src/index.js";
import { connectMcpServers, type McpAgentTool } from "../../src/mcp/index.js";
import { type CatalogSource, McpToolCatalog } from "../../src/mcp/tool-catalog.js";
import { childPids, Cleanup, everythingServer, faultServer, toolNamed, waitUntil } from "./helpers.js";

const cleanup = new Cleanup();

afterEach(async () => {
	await cleanup.run();
	await waitUntil(() => childPids().length === 0, 10_000, "every server process to exit");
});

/** The rule docs/mcp.md ("Durable runs and approvals") gives as an example. */
function forDurableRuns(tool: McpAgentTool): AnyAgentTool {
	const { readOnlyHint, idempotentHint, destructiveHint } = tool.annotations;
	return { ...tool, replay: readOnlyHint === true || idempotentHint === true ? "safe" : "unsafe", needsApproval: readOnlyHint !== true && destructiveHint !== false };
}

describe("an MCP tool's annotations", () => {
	it("are on the tool as the server lists them, read-only, and the tool is neither replay-safe nor approved by them", async () => {
		const mcp = await connectMcpServers({ servers: { everything: everythingServer() } });
		cleanup.add(() => mcp.close());
		const echo = toolNamed(mcp, "everything__echo");
		expect(echo.annotations).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
		expect(Object.isFrozen(echo.annotations)).toBe(true);
		expect(toolNamed(mcp, "everything__gzip-file-as-resource").annotations).toMatchObject({ readOnlyHint: false, idempotentHint: true });
		for (const tool of mcp.tools()) {
			expect(tool.replay).toBeUndefined();
			expect(tool.needsApproval).toBeUndefined();
		}
		expect(forDurableRuns(echo)).toMatchObject({ name: "everything__echo", replay: "safe", needsApproval: false });
	}, 30_000);

	it("are empty for a tool listed without any, which the documented rule then asks a person about and does not replay", async () => {
		const mcp = await connectMcpServers({ servers: { faults: faultServer() }, onProblem: () => undefined });
		cleanup.add(() => mcp.close());
		const echo = toolNamed(mcp, "faults__echo");
		expect(echo.annotations).toEqual({});
		expect(forDurableRuns(echo)).toMatchObject({ replay: "unsafe", needsApproval: true });
	}, 30_000);

	it("keep only values of the types MCP gives them", () => {
		const caller = { server: "s", callTool: async () => ({ content: [] }) } as unknown as CatalogSource["caller"];
		const annotations = { title: "Delete", destructiveHint: "yes", idempotentHint: true, readOnlyHint: null, custom: 1 };
		const { tools } = new McpToolCatalog().build([{ caller, prefix: "s__", tools: [{ name: "delete", inputSchema: { type: "object" }, annotations }] }]);
		expect(tools[0]?.annotations).toEqual({ title: "Delete", idempotentHint: true });
	});
});
