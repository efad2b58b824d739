/**
 * Ending a process that runs a durable agent on MCP tools: dispose the agent, then close the
 * servers. Closed first, the servers fail the call in flight and the still-running agent journals
 * that failure as its result, so the next process never runs a replay-safe call again; disposed
 * first, the call stays started in the journal and the next process runs it again. docs/mcp.md
 * ("Ending servers") recommended the first order.
 */
import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { Agent, createMemoryStore, createScriptedModel, toolCall, type AgentEvent, type AgentStore } from "../../src/index.js";
import { connectMcpServers, type McpServers } from "../../src/mcp/index.js";
import { childPids, Cleanup, faultServer, textOf, waitUntil } from "./helpers.js";

const cleanup = new Cleanup();

afterEach(async () => {
	await cleanup.run();
	await waitUntil(() => childPids().length === 0, 10_000, "every server process to exit");
});

async function connectFaults(): Promise<McpServers> {
	const mcp = await connectMcpServers({ servers: { faults: faultServer() }, onProblem: () => undefined });
	cleanup.add(() => mcp.close());
	return mcp;
}

/** The fault server's tools, `slow` marked replay-safe as an application would. */
function toolsOf(mcp: McpServers) {
	return mcp.tools().map((tool) => (tool.name === "faults__slow" ? { ...tool, replay: "safe" as const } : tool));
}

/**
 * Runs a replay-safe `slow` call on a durable agent, ends the process's part as `end` does while
 * the call is in flight, then goes on in a "next process" (new servers, a new agent on the same
 * store): the results the tool call got, in order, across both.
 */
async function endMidCall(end: (agent: Agent, mcp: McpServers) => Promise<void>): Promise<string[]> {
	const store: AgentStore = createMemoryStore();
	const results: string[] = [];
	const record = (event: AgentEvent) => {
		if (event.type === "tool_execution_end") results.push(textOf(event.result as { content: { type: string; text?: string }[] }));
	};
	const first = await connectFaults();
	const calling = createScriptedModel([{ content: [toolCall("faults__slow", { ms: 1500 }, "call-1")] }, { content: "done" }]);
	const agent = await Agent.load({ store, sessionId: "s1", initialState: { model: calling.model, tools: toolsOf(first) }, streamFn: calling.streamFn });
	let started = false;
	agent.subscribe((event) => {
		if (event.type === "tool_execution_update") started = true;
		record(event);
	});
	void agent.prompt("go").catch(() => undefined);
	await waitUntil(() => started, 10_000, "the call to reach the server");
	await agent.saved();
	await end(agent, first);

	const second = await connectFaults();
	const answering = createScriptedModel([{ content: "done" }, { content: "done" }]);
	const next = await Agent.load({ store, sessionId: "s1", initialState: { model: answering.model, tools: toolsOf(second) }, streamFn: answering.streamFn });
	cleanup.add(async () => next.dispose());
	next.subscribe(record);
	await next.waitForIdle();
	return results;
}

describe("a process that ends while a durable agent's replay-safe MCP call runs", () => {
	it("disposing the agent, then closing the servers: the next process runs the call again", async () => {
		const results = await endMidCall(async (agent, mcp) => {
			agent.dispose();
			await mcp.close();
		});
		expect(results.at(-1)).toBe("slow done");
	}, 30_000);

	it("closing the servers first: the closed server's error is the call's result for good (why the order matters)", async () => {
		const results = await endMidCall(async (agent, mcp) => {
			await mcp.close();
			await waitUntil(() => agent.state.messages.some((message) => message.role === "toolResult"), 10_000, "the failure to be recorded");
			await agent.saved();
			agent.dispose();
		});
		expect(results).toEqual([expect.stringContaining("was closed by the application during the call")]);
	}, 30_000);

	it("is shown in docs/mcp.md with the agent disposed before the servers are closed", async () => {
		const guide = await readFile(new URL("../../docs/mcp.md", import.meta.url), "utf8");
		const section = guide.slice(guide.indexOf("## Ending servers"), guide.indexOf("## Tested servers"));
		const handler = /process\.on\("SIGINT"[\s\S]*?\n\}\);|process\.on\("SIGINT".*\n/.exec(section)?.[0] ?? "";
		expect(handler).toContain("mcp.close()");
		expect(handler.indexOf("agent.dispose()")).toBeGreaterThan(-1);
		expect(handler.indexOf("agent.dispose()")).toBeLessThan(handler.indexOf("mcp.close()"));
	});
});
