/**
 * One server with two tools whose names differ only in a character the model APIs refuse
 * (`report.v2`, `report_v2`): both clean to the same agent-facing name, and no `toolPrefix`
 * can tell them apart, since they share the server's. Both must still be offered, under
 * distinct, stable names, each calling its own tool.
 */
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
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
	it("offers both, the later under a hashed name, and each call reaches its own tool", async () => {
		const { mcp, problems } = await connect();
		expect(problems).toEqual([]);
		const names = mcp.tools().map((tool) => tool.name);
		expect(names).toContain("docs__report_v2");
		const hashed = names.find((name) => /^docs__report_v2_[0-9a-f]{8}$/.test(name));
		expect(hashed).toBeDefined();
		expect(textOf(await toolNamed(mcp, "docs__report_v2").execute("c1", {}))).toBe("report.v2");
		expect(textOf(await toolNamed(mcp, hashed as string).execute("c2", {}))).toBe("report_v2");
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
