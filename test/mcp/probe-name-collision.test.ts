/**
 * One server with two tools whose names differ only in a character the model APIs refuse
 * (`report.v2`, `report_v2`): both clean to the same agent-facing name, and no `toolPrefix`
 * can tell them apart, since they share the server's. Both must still be offered, under
 * distinct, stable names, each calling its own tool.
 */
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { type CatalogSource, McpToolCatalog } from "../../src/mcp/tool-catalog.js";
import type { McpToolInfo } from "../../src/mcp/types.js";
import { connectMcpServers, type McpProblem } from "../../src/mcp/index.js";
import { childPids, Cleanup, textOf, toolNamed, waitUntil } from "./helpers.js";

const PROBE_SERVER = fileURLToPath(new URL("./fixtures/probe-server.ts", import.meta.url));
const cleanup = new Cleanup();

afterEach(async () => {
	await cleanup.run();
	await waitUntil(() => childPids().length === 0, 10_000, "every server process to exit");
});

async function connect() {
	const problems: McpProblem[] = [];
	const mcp = await connectMcpServers({
		servers: { docs: { command: process.execPath, args: ["--import", "tsx", PROBE_SERVER], stderr: "ignore" } },
		onProblem: (problem) => problems.push(problem),
	});
	cleanup.add(() => mcp.close());
	return { mcp, problems };
}

describe("two tools of one server whose names clean to the same name", () => {
	it("offers both, the one whose name needed no change under it and the other under a hashed name, and each call reaches its own tool", async () => {
		const { mcp, problems } = await connect();
		expect(problems).toEqual([]);
		const names = mcp.tools().map((tool) => tool.name);
		expect(names).toContain("docs__report_v2");
		const hashed = names.find((name) => /^docs__report_v2_[0-9a-f]{8}$/.test(name));
		expect(hashed).toBeDefined();
		expect(textOf(await toolNamed(mcp, "docs__report_v2").execute("c1", {}))).toBe("report_v2");
		expect(textOf(await toolNamed(mcp, hashed as string).execute("c2", {}))).toBe("report.v2");
		expect(mcp.status()[0]).toMatchObject({ toolCount: 3, listedToolCount: 3 });
	}, 20_000);

	it("gives the same names from run to run", async () => {
		const first = await connect();
		const names = first.mcp.tools().map((tool) => tool.name);
		await first.mcp.close();
		const second = await connect();
		expect(second.mcp.tools().map((tool) => tool.name)).toEqual(names);
	}, 20_000);
});

describe("names of tools whose names clean to the same name", () => {
	const caller = { server: "docs", callTool: async () => ({ content: [] }) } as unknown as CatalogSource["caller"];
	const listed = (name: string): McpToolInfo => ({ name, inputSchema: { type: "object", properties: {} } });
	const namesOf = (order: string[]) => {
		const { tools, problems } = new McpToolCatalog().build([{ caller, prefix: "docs__", tools: order.map(listed) }]);
		expect(problems).toEqual([]);
		return Object.fromEntries(order.map((mcpName, index) => [mcpName, tools[index]?.name]));
	};

	it("do not depend on the order the server lists them in (a name never moves to another tool)", () => {
		const forward = namesOf(["report.v2", "report_v2", "report/v2"]);
		expect(forward["report_v2"]).toBe("docs__report_v2");
		expect(forward["report.v2"]).toMatch(/^docs__report_v2_[0-9a-f]{8}$/);
		expect(forward["report/v2"]).toMatch(/^docs__report_v2_[0-9a-f]{8}$/);
		expect(new Set(Object.values(forward)).size).toBe(3);
		expect(namesOf(["report_v2", "report/v2", "report.v2"])).toEqual(forward);
		expect(namesOf(["report/v2", "report.v2", "report_v2"])).toEqual(forward);
	});

	it("are all hashed when none of them is named so already", () => {
		const names = namesOf(["a.b", "a/b"]);
		expect(names["a.b"]).toMatch(/^docs__a_b_[0-9a-f]{8}$/);
		expect(names["a/b"]).toMatch(/^docs__a_b_[0-9a-f]{8}$/);
		expect(names["a.b"]).not.toBe(names["a/b"]);
		expect(namesOf(["a/b", "a.b"])).toEqual(names);
	});
});

describe("a name taken twice is reported with what to change", () => {
	const listed = (name: string): McpToolInfo => ({ name, inputSchema: { type: "object", properties: {} } });
	const callerOf = (server: string) => ({ server, callTool: async () => ({ content: [] }) }) as unknown as CatalogSource["caller"];
	const messages = (sources: { server: string; prefix: string; tools: string[] }[]) =>
		new McpToolCatalog().build(sources.map(({ server, prefix, tools }) => ({ caller: callerOf(server), prefix, tools: tools.map(listed) }))).problems.map((problem) => problem.message);

	// It said "give the servers different toolPrefix values" for all three, which for the first
	// pointed at the wrong party and for the second did not say why default prefixes met.
	it("a server that lists a name twice: the server's doing", () => {
		expect(messages([{ server: "s", prefix: "s__", tools: ["dup", "dup"] }])).toEqual(['MCP server "s": tool "dup" left out: the name "s__dup" is already taken: the server lists a tool of that name more than once; the first is kept']);
	});

	it("two servers whose names clean to one prefix", () => {
		expect(messages([{ server: "a.b", prefix: "a.b__", tools: ["echo"] }, { server: "a_b", prefix: "a_b__", tools: ["echo"] }])).toEqual([
			'MCP server "a_b": tool "echo" left out: the name "a_b__echo" is already taken: a tool of server "a.b" has it: both servers\' tools are prefixed "a_b__" (give one of them a toolPrefix of its own)',
		]);
	});

	it("names that meet at the separator", () => {
		expect(messages([{ server: "a", prefix: "a__", tools: ["b__c"] }, { server: "a__b", prefix: "a__b__", tools: ["c"] }])).toEqual([
			'MCP server "a__b": tool "c" left out: the name "a__b__c" is already taken: a tool of server "a" has it: its prefix "a__" and tool name make the same name (give one of the servers a different toolPrefix)',
		]);
	});
});
