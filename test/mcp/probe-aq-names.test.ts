/**
 * An agent-facing MCP tool name belongs to one server tool for good: a call stored under it
 * (waiting for approval, or replayed after a restart) runs the tool the model called and the
 * person approved, whatever the server lists by then. It used to be hashed only when another tool
 * of the server cleaned to it: `files/read.v2` was `faults__files_read_v2` until the server also
 * listed `files_read_v2`, which then took that name.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Agent, createMemoryStore, createScriptedModel, toolCall, type AgentEvent } from "../../src/index.js";
import { agentToolName, connectMcpServers, type McpProblem, type McpServers } from "../../src/mcp/index.js";
import { type CatalogSource, McpToolCatalog } from "../../src/mcp/tool-catalog.js";
import type { McpToolInfo } from "../../src/mcp/types.js";
import { childPids, Cleanup, faultServer, textOf, waitUntil } from "./helpers.js";

const cleanup = new Cleanup();

afterEach(async () => {
	await cleanup.run();
	await waitUntil(() => childPids().length === 0, 10_000, "every server process to exit");
});

async function connectFaults(): Promise<{ mcp: McpServers; problems: McpProblem[] }> {
	const problems: McpProblem[] = [];
	const mcp = await connectMcpServers({ servers: { faults: faultServer() }, onProblem: (problem) => problems.push(problem) });
	cleanup.add(() => mcp.close());
	return { mcp, problems };
}

/** The agent-facing name of the server tool `mcpName` (its label, as the server lists no title). */
function nameOf(mcp: McpServers, mcpName: string): string {
	const tool = mcp.tools().find((candidate) => candidate.label === mcpName);
	if (!tool) throw new Error(`no tool for "${mcpName}" in ${mcp.tools().map((candidate) => candidate.name).join(", ")}`);
	return tool.name;
}

/** Has the fault server list `added` too, and waits until `tools()` offers it. */
async function addServerTool(mcp: McpServers, added: string): Promise<void> {
	const adder = mcp.tools().find((tool) => tool.name === "faults__add-tool");
	if (!adder) throw new Error("the fault server offers no add-tool");
	await adder.execute("add", { name: added });
	await waitUntil(() => mcp.tools().some((tool) => tool.label === added), 10_000, `"${added}" to be offered`);
}

describe("a name whose tool's name had to change, when the server later lists the name as it is", () => {
	it("keeps calling the tool it was given to; the new tool gets a name of its own", async () => {
		const { mcp, problems } = await connectFaults();
		const before = nameOf(mcp, "files/read.v2");
		expect(before).toMatch(/^faults__files_read_v2_[0-9a-f]{8}$/);

		await addServerTool(mcp, "files_read_v2");

		expect(nameOf(mcp, "files/read.v2")).toBe(before);
		expect(nameOf(mcp, "files_read_v2")).toBe("faults__files_read_v2");
		const tool = mcp.tools().find((candidate) => candidate.name === before);
		expect(textOf(await tool!.execute("c1", {}))).toBe("read v2");
		expect(problems.filter((problem) => problem.kind === "name-collision")).toEqual([]);
	}, 30_000);

	it("runs a call approved after the change on the tool the model called and the person was asked about", async () => {
		const { mcp } = await connectFaults();
		const store = createMemoryStore();
		const readName = nameOf(mcp, "files/read.v2");
		const approved = (tools: ReturnType<McpServers["tools"]>) => tools.map((tool) => ({ ...tool, needsApproval: true }));

		const asking = createScriptedModel([{ content: [toolCall(readName, {}, "call-1")] }, { content: "done" }]);
		const first = await Agent.load({ store, sessionId: "s1", initialState: { model: asking.model, tools: approved(mcp.tools()) }, streamFn: asking.streamFn });
		void first.prompt("read it").catch(() => undefined);
		await waitUntil(() => first.pendingApprovals.length === 1, 10_000, "the call to wait for approval");
		expect(first.pendingApprovals[0]?.toolName).toBe(readName);
		await first.saved();
		first.dispose();

		// While the call waits, the server starts listing a tool named as the first one's cleaned name.
		await addServerTool(mcp, "files_read_v2");

		const answering = createScriptedModel([{ content: "done" }]);
		const next = await Agent.load({ store, sessionId: "s1", initialState: { model: answering.model, tools: approved(mcp.tools()) }, streamFn: answering.streamFn });
		cleanup.add(async () => next.dispose());
		const results: string[] = [];
		next.subscribe((event: AgentEvent) => {
			if (event.type === "tool_execution_end") results.push(textOf(event.result as { content: { type: string; text?: string }[] }));
		});
		expect(next.pendingApprovals.map((call) => call.toolName)).toEqual([readName]);
		await next.approve("call-1");
		await next.waitForIdle();
		expect(results).toEqual(["read v2"]);
	}, 30_000);
});

describe("the rule that names a server's tools", () => {
	const caller = { server: "docs", callTool: async () => ({ content: [] }) } as unknown as CatalogSource["caller"];
	const listed = (name: string): McpToolInfo => ({ name, inputSchema: { type: "object", properties: {} } });
	const build = (prefix: string, names: string[]) => new McpToolCatalog().build([{ caller, prefix, tools: names.map(listed) }]);
	const namesOf = (prefix: string, names: string[]) => Object.fromEntries(build(prefix, names).tools.map((tool) => [tool.label, tool.name]));

	it("gives a name that had to change its hash whether or not another tool cleans to it", () => {
		const alone = namesOf("docs__", ["report.v2"]);
		expect(alone["report.v2"]).toMatch(/^docs__report_v2_[0-9a-f]{8}$/);
		expect(namesOf("docs__", ["report.v2", "report_v2"])).toEqual({ ...alone, report_v2: "docs__report_v2" });
	});

	it("keeps a name that fits as it is, and cleans a prefix without hashing the names after it", () => {
		expect(namesOf("docs__", ["get-sum"])).toEqual({ "get-sum": "docs__get-sum" });
		expect(namesOf("docs.v2__", ["get-sum"])).toEqual({ "get-sum": "docs_v2__get-sum" });
		expect(agentToolName("", "report.v2")).toMatch(/^report_v2_[0-9a-f]{8}$/);
	});

	it("settles a tool named like another's hashed name by the names, not the listing order: the one named so as it is keeps it", () => {
		const hashed = agentToolName("docs__", "report.v2");
		const literal = hashed.slice("docs__".length);
		for (const order of [["report.v2", literal], [literal, "report.v2"]]) {
			const { tools, problems } = build("docs__", order);
			expect(tools.map((tool) => [tool.name, tool.label])).toEqual([[hashed, literal]]);
			expect(problems).toEqual([
				expect.objectContaining({
					kind: "name-collision",
					tool: "report.v2",
					name: hashed,
					keptFrom: "docs",
					message: expect.stringContaining(`the server's tool "${literal}" has it`),
				}),
			]);
		}
	});
});

describe("a name taken by another server's tool when neither has a prefix", () => {
	it("says the tools are not prefixed, not that they are prefixed \"_\"", () => {
		const callerOf = (server: string) => ({ server, callTool: async () => ({ content: [] }) }) as unknown as CatalogSource["caller"];
		const listed: McpToolInfo = { name: "search", inputSchema: { type: "object", properties: {} } };
		const { problems } = new McpToolCatalog().build([
			{ caller: callerOf("first"), prefix: "", tools: [listed] },
			{ caller: callerOf("second"), prefix: "", tools: [listed] },
		]);
		expect(problems.map((problem) => problem.message)).toEqual([
			'MCP server "second": tool "search" left out: the name "search" is already taken: a tool of server "first" has it: neither server\'s tools are prefixed (toolPrefix false or "": give one of them a toolPrefix)',
		]);
	});
});
