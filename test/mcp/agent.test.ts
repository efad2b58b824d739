/**
 * End to end: an `Agent` run with the scripted model calling MCP tools, through the whole
 * loop (preflight with the tool's JSON Schema, execution, updates, timeout, abort).
 */
import { Type } from "typebox";
import { afterEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { connectMcpServers, type ConnectMcpServersOptions, type McpServers } from "../../src/mcp/index.js";
import { createScriptedModel, toolCall, type ScriptedReply } from "../../src/providers/scripted.js";
import type { AgentEvent, AgentTool, AnyAgentTool } from "../../src/types/agent.js";
import type { ToolResultMessage } from "../../src/types/messages.js";
import { childPids, Cleanup, everythingServer, faultServer, textOf, toolNamed, waitUntil, withTimeout } from "./helpers.js";

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

function agentWith(replies: ScriptedReply[], tools: AnyAgentTool[], toolTimeoutMs?: number) {
	const scripted = createScriptedModel(replies);
	const agent = new Agent({ initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn, ...(toolTimeoutMs ? { toolTimeoutMs } : {}) });
	cleanup.add(async () => agent.dispose());
	const events: AgentEvent[] = [];
	agent.subscribe((event) => {
		events.push(event);
	});
	return { agent, scripted, events };
}

function toolResults(agent: Agent): ToolResultMessage[] {
	return agent.state.messages.filter((message): message is ToolResultMessage => message.role === "toolResult");
}

const clockParameters = Type.Object({});
const clock: AgentTool<typeof clockParameters> = {
	name: "clock",
	label: "Clock",
	description: "The time",
	parameters: clockParameters,
	execute: async () => ({ content: [{ type: "text", text: "noon" }], details: {} }),
};

describe("an Agent with MCP tools", () => {
	it("runs a turn in which the model calls a tool of server-everything, next to a tool of its own", async () => {
		const mcp = await connect({ servers: { everything: everythingServer() } });
		const { agent, scripted, events } = agentWith(
			[{ content: [toolCall("everything__get-sum", { a: 2, b: 3 }, "t1"), toolCall("clock", {}, "t2")] }, { content: "2 + 3 = 5, at noon." }],
			[clock, ...mcp.tools()],
		);
		await withTimeout(agent.prompt("What is 2 + 3, and what time is it?"), 10_000, "the run");
		const [sum, time] = toolResults(agent);
		expect(sum).toMatchObject({ toolCallId: "t1", toolName: "everything__get-sum", isError: false, details: { kind: "result", server: "everything", tool: "get-sum" } });
		expect(textOf(sum!)).toBe("The sum of 2 and 3 is 5.");
		expect(time).toMatchObject({ toolName: "clock", isError: false });
		// The model's second call saw the MCP result, and the tool's JSON Schema was sent with the first.
		expect(JSON.stringify(scripted.calls[1]?.messages)).toContain("The sum of 2 and 3 is 5.");
		expect(scripted.calls[0]?.tools?.find((tool) => tool.name === "everything__get-sum")?.parameters).toMatchObject({ required: ["a", "b"] });
		expect(events.filter((event) => event.type === "tool_execution_end").map((event) => event.type === "tool_execution_end" && event.isError)).toEqual([false, false]);
		expect(agent.state.errorMessage).toBeUndefined();
	});

	it("rejects arguments that break the MCP tool's schema before calling the server", async () => {
		const mcp = await connect({ servers: { everything: everythingServer() } });
		const { agent } = agentWith([{ content: [toolCall("everything__get-sum", { a: "two" }, "t1")] }, { content: "Sorry." }], mcp.tools());
		await withTimeout(agent.prompt("add"), 10_000, "the run");
		const [result] = toolResults(agent);
		expect(result?.isError).toBe(true);
		expect(textOf(result!)).toMatch(/^Validation failed for tool "everything__get-sum":\n {2}- root: must have required properties b\n {2}- a: must be number/);
		// Never sent: a call would have been answered by the server with its own error text.
		expect(result?.details).toEqual({});
	});

	it("turns progress notifications into tool_execution_update events", async () => {
		const mcp = await connect({ servers: { faults: faultServer() } });
		const { agent, events } = agentWith([{ content: [toolCall("faults__progress", { steps: 3 }, "t1")] }, { content: "done" }], mcp.tools());
		await withTimeout(agent.prompt("go"), 10_000, "the run");
		const updates = events.filter((event): event is Extract<AgentEvent, { type: "tool_execution_update" }> => event.type === "tool_execution_update");
		expect(updates.map((update) => update.partialResult)).toEqual([
			expect.objectContaining({ content: [{ type: "text", text: "step 1 of 3" }], details: expect.objectContaining({ kind: "progress", progress: 1, total: 3 }) }),
			expect.objectContaining({ content: [{ type: "text", text: "step 2 of 3" }] }),
			expect.objectContaining({ content: [{ type: "text", text: "step 3 of 3" }] }),
		]);
		expect(updates.every((update) => update.toolName === "faults__progress" && update.toolCallId === "t1")).toBe(true);
		expect(textOf(toolResults(agent)[0]!)).toBe("progress done");
	});

	it("agent.abort() cancels the MCP request, and the server sees the cancellation", async () => {
		const mcp = await connect({ servers: { faults: faultServer() } });
		const { agent } = agentWith([{ content: [toolCall("faults__slow", { ms: 20_000 }, "t1")] }], mcp.tools());
		// Abort once the server has said the call started.
		agent.subscribe((event) => {
			if (event.type === "tool_execution_update") agent.abort();
		});
		const started = Date.now();
		await withTimeout(agent.prompt("wait"), 10_000, "the aborted run");
		expect(Date.now() - started).toBeLessThan(10_000);
		const seen = await toolNamed(mcp, "faults__cancellations").execute("c1", {});
		expect(seen.details.kind === "result" && seen.details.structuredContent?.["count"]).toBe(1);
	});

	it("the agent's tool timeout aborts the call, which cancels the MCP request", async () => {
		const mcp = await connect({ servers: { faults: faultServer() } });
		const { agent } = agentWith([{ content: [toolCall("faults__slow", { ms: 20_000 }, "t1")] }, { content: "It timed out." }], mcp.tools(), 1000);
		await withTimeout(agent.prompt("wait"), 10_000, "the run");
		const [result] = toolResults(agent);
		expect(result?.isError).toBe(true);
		expect(textOf(result!)).toBe('Tool "faults__slow" timed out after 1000 ms');
		const seen = await toolNamed(mcp, "faults__cancellations").execute("c1", {});
		expect(seen.details.kind === "result" && seen.details.structuredContent?.["count"]).toBe(1);
	});

	it("records an isError result as an error tool result, with the server's text", async () => {
		const mcp = await connect({ servers: { faults: faultServer() } });
		const { agent } = agentWith([{ content: [toolCall("faults__fail", {}, "t1")] }, { content: "It failed." }], mcp.tools());
		await withTimeout(agent.prompt("try"), 10_000, "the run");
		const [result] = toolResults(agent);
		expect(result).toMatchObject({ isError: true, content: [{ type: "text", text: "it failed on purpose" }] });
	});

	it("a call on a lost server is an error result at once, and the run goes on", async () => {
		const mcp = await connect({ servers: { faults: faultServer({ reconnect: { initialDelayMs: 60_000 } }) } });
		await toolNamed(mcp, "faults__crash").execute("c0", {}).catch(() => undefined);
		await waitUntil(() => mcp.status()[0]?.state === "reconnecting", 5000, "the server to be lost");
		const { agent } = agentWith([{ content: [toolCall("faults__echo", { text: "hi" }, "t1")] }, { content: "The server is down." }], mcp.tools());
		const started = Date.now();
		// At once: not the 60 s the reconnection waits (bounds far from both, for a busy machine).
		await withTimeout(agent.prompt("echo"), 25_000, "the run");
		expect(Date.now() - started).toBeLessThan(20_000);
		const [result] = toolResults(agent);
		expect(result?.isError).toBe(true);
		expect(textOf(result!)).toMatch(/^MCP server "faults" is not connected \(reconnecting/);
	});
});
