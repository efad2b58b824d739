/**
 * The pure parts of `agentchart/mcp`: naming, backoff, content mapping, error
 * classification, and the connection chart as a definition (no server needed).
 */
import { readFileSync } from "node:fs";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { toStatechartGraph } from "../../src/inspect/statechart-graph.js";
import { isConnectionLoss } from "../../src/mcp/errors.js";
import { loadMcpSdk } from "../../src/mcp/sdk.js";
import { agentToolName, mapCallToolResult, mcpConnectionChart, toolPrefixFor } from "../../src/mcp/index.js";
import { backoffDelay, resolveConnectionSettings } from "../../src/mcp/settings.js";

describe("tool names", () => {
	it("prefix a tool with its server's name and two underscores by default", () => {
		expect(agentToolName(toolPrefixFor("github", undefined), "create_issue")).toBe("github__create_issue");
		expect(agentToolName(toolPrefixFor("github", "gh_"), "create_issue")).toBe("gh_create_issue");
		expect(agentToolName(toolPrefixFor("github", false), "create_issue")).toBe("create_issue");
	});

	it("replace characters model APIs refuse, and cut long names to 64 characters with a stable hash", () => {
		// A name that had to change always carries its hash: a tool named "files_read_v2" listed later cannot take it.
		expect(agentToolName("fs__", "files/read.v2")).toMatch(/^fs__files_read_v2_[0-9a-f]{8}$/);
		const long = agentToolName("a-very-long-server-name__", "x".repeat(100));
		expect(long).toHaveLength(64);
		expect(long).toMatch(/^[A-Za-z0-9_-]+_[0-9a-f]{8}$/);
		expect(agentToolName("a-very-long-server-name__", "x".repeat(100))).toBe(long);
		expect(agentToolName("a-very-long-server-name__", `${"x".repeat(99)}y`)).not.toBe(long);
	});
});

describe("reconnection settings", () => {
	it("double the delay from the initial one up to the maximum", () => {
		const settings = { initialDelayMs: 500, maxDelayMs: 3000, maxAttempts: Number.POSITIVE_INFINITY };
		expect([1, 2, 3, 4, 5].map((attempt) => backoffDelay(settings, attempt))).toEqual([500, 1000, 2000, 3000, 3000]);
	});

	it("fill in defaults and refuse negative numbers", () => {
		expect(resolveConnectionSettings({})).toEqual({
			connectTimeoutMs: 30_000,
			reconnect: { initialDelayMs: 500, maxDelayMs: 30_000, maxAttempts: Number.POSITIVE_INFINITY },
		});
		expect(resolveConnectionSettings({ reconnect: false }).reconnect).toBe(false);
		expect(() => resolveConnectionSettings({ reconnect: { initialDelayMs: -1 } })).toThrow(/reconnect.initialDelayMs must be a number of at least 0/);
	});
});

describe("content mapping", () => {
	it("describes content kinds it does not know instead of dropping them", () => {
		const { result } = mapCallToolResult({ content: [{ type: "hologram", data: "…" }] }, "s", "t");
		expect(result.content).toEqual([{ type: "text", text: '[unsupported MCP content of type "hologram"]' }]);
	});

	it("says so for an image it cannot pass on (no MIME type, no data) instead of dropping it", () => {
		const { result } = mapCallToolResult({ content: [{ type: "image", data: "iVBORw0KGgo=" }, { type: "image", mimeType: "image/png" }] }, "s", "t");
		expect(result.content).toEqual([
			{ type: "text", text: "[image without a MIME type, not shown]" },
			{ type: "text", text: "[image without data, not shown]" },
		]);
	});

	it("says so for a text block whose text is not text and an entry that is not a block, instead of showing nothing", () => {
		const { result } = mapCallToolResult({ content: [{ type: "text", text: 42 }, null, { type: "text" }, "loose"] }, "s", "t");
		expect(result.content).toEqual([
			{ type: "text", text: "[malformed MCP text: 42]" },
			{ type: "text", text: "[malformed MCP content: null]" },
			{ type: "text", text: "[malformed MCP text: undefined]" },
			{ type: "text", text: '[malformed MCP content: "loose"]' },
		]);
	});

	it("shows structuredContent as JSON when the result has no content", () => {
		const { result, isError } = mapCallToolResult({ content: [], structuredContent: { sum: 3 } }, "s", "t");
		expect(result.content).toEqual([{ type: "text", text: '{"sum":3}' }]);
		expect(isError).toBe(false);
	});

	it("reads isError and _meta", () => {
		const mapped = mapCallToolResult({ content: [{ type: "text", text: "no" }], isError: true, _meta: { trace: "abc" } }, "s", "t");
		expect(mapped.isError).toBe(true);
		expect(mapped.result.details.meta).toEqual({ trace: "abc" });
	});
});

describe("connection loss", () => {
	it("is the SDK's own close, a refused connection, or an unknown HTTP session; not a server's error", async () => {
		const sdk = await loadMcpSdk();
		expect(isConnectionLoss(new McpError(ErrorCode.ConnectionClosed, "Connection closed"), sdk)).toBe(true);
		expect(isConnectionLoss(new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }) }), sdk)).toBe(true);
		expect(isConnectionLoss(new Error("SSE stream disconnected: TypeError: terminated"), sdk)).toBe(true);
		// -32000 is also a server's own error code range.
		expect(isConnectionLoss(new McpError(ErrorCode.ConnectionClosed, "database unavailable"), sdk)).toBe(false);
		expect(isConnectionLoss(new McpError(ErrorCode.InvalidParams, "bad arguments"), sdk)).toBe(false);
	});
});

describe("the connection statechart", () => {
	const graph = toStatechartGraph(mcpConnectionChart);

	it("describes every state", () => {
		const undescribed = graph.nodes.filter((node) => node.id !== graph.rootId && !node.description).map((node) => node.id);
		expect(undescribed).toEqual([]);
	});

	it("gives every child actor an explicit id and handles its errors", () => {
		const invokes = graph.nodes.flatMap((node) => node.invokes.map((invoke) => ({ state: node.id, ...invoke })));
		expect(invokes.map((invoke) => invoke.id).sort()).toEqual(["close-session", "list-tools", "open-session", "watch-session"]);
		for (const invoke of invokes) {
			expect(graph.edges.some((edge) => edge.sourceId === invoke.state && edge.eventType === `xstate.error.actor.${invoke.id}`)).toBe(true);
		}
	});

	it("lets close() end every state but the closing ones", () => {
		const closable = graph.edges.filter((edge) => edge.eventType === "close").map((edge) => edge.sourceId.replace("mcpConnection.", ""));
		expect(closable.sort()).toEqual(["connecting", "failed", "ready", "reconnecting"]);
	});

	it("matches the diagram in docs/mcp.md", () => {
		const draft = readFileSync(new URL("../../docs/mcp.md", import.meta.url), "utf8");
		const diagram = /```mermaid\n([\s\S]*?)```/.exec(draft)?.[1] ?? "";
		const drawn = new Set<string>();
		for (const match of diagram.matchAll(/^\s*(\[\*\]|[\w-]+) --> (\[\*\]|[\w-]+)/gm)) drawn.add(`${match[1]} -> ${match[2]}`);
		const short = (id: string | undefined) => (id ?? "").replace(/^mcpConnection\./, "").replace(/^ready\..*/, "ready");
		const actual = new Set(
			graph.edges
				.filter((edge) => edge.targetId !== undefined && !edge.sourceId.startsWith("mcpConnection.ready."))
				.map((edge) => `${short(edge.sourceId)} -> ${short(edge.targetId)}`),
		);
		actual.add("[*] -> connecting");
		actual.add("closed -> [*]");
		const drawnTopLevel = new Set([...drawn].filter((edge) => !edge.includes("tools")));
		expect([...drawnTopLevel].sort()).toEqual([...actual].sort());
	});
});
