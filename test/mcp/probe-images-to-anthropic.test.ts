/**
 * Images from MCP tools reach the model's next request. The Messages API takes JPEG, PNG, GIF
 * and WebP only and answers any other type with a 400; as the image stays in the transcript,
 * one SVG from a diagram tool would fail every later request of the session. Here a real MCP
 * server over stdio answers with an SVG and a PNG, and a local server speaking Anthropic's
 * protocol records what the agent sends next.
 */
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { connectMcpServers } from "../../src/mcp/index.js";
import { getModel } from "../../src/providers/models.js";
import { streamAnthropic } from "../../src/providers/anthropic.js";
import { buildAnthropicRequest } from "../../src/providers/anthropic-request.js";
import { type AnthropicTestServer, messageDelta, messageStart, messageStop, startAnthropicServer, textReply, toolUseBlock } from "../providers/anthropic-server.js";
import { childPids, Cleanup, waitUntil, withTimeout } from "./helpers.js";

const IMAGE_SERVER = fileURLToPath(new URL("./fixtures/probe-server.ts", import.meta.url));
const cleanup = new Cleanup();
let anthropic: AnthropicTestServer;

beforeAll(async () => {
	anthropic = await startAnthropicServer();
});
afterAll(() => anthropic?.close());
afterEach(async () => {
	await cleanup.run();
	anthropic.reset();
	await waitUntil(() => childPids().length === 0, 10_000, "every server process to exit");
});

describe("images from an MCP tool, sent to Anthropic", () => {
	it("replaces an SVG with a note the model can read, and sends the PNG under the API's spelling of its type", async () => {
		const mcp = await connectMcpServers({
			servers: { charts: { command: process.execPath, args: ["--import", "tsx", IMAGE_SERVER], stderr: "ignore" } },
		});
		cleanup.add(() => mcp.close());
		anthropic.respond(
			{ kind: "sse", events: [messageStart("msg_1"), ...toolUseBlock(0, "toolu_chart", "charts__chart", ["{}"]), messageDelta("tool_use"), messageStop()] },
			{ kind: "sse", events: textReply("Here is the chart.") },
		);
		const model = { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: anthropic.baseUrl };
		const agent = new Agent({
			initialState: { model, tools: mcp.tools() },
			streamFn: (m, context, options) => streamAnthropic(m, context, { ...options, apiKey: "test-key", maxRetries: 0 }),
		});
		cleanup.add(async () => agent.dispose());

		await withTimeout(agent.prompt("Draw the chart."), 15_000, "the run");

		expect(agent.state.errorMessage).toBeUndefined();
		const sent = anthropic.requests[1]?.body;
		const turn = sent?.["messages"]?.[2];
		expect(turn?.role).toBe("user");
		const result = turn.content[0];
		expect(result).toMatchObject({ type: "tool_result", tool_use_id: "toolu_chart", is_error: false });
		expect(result.content).toEqual([
			{ type: "text", text: "the chart" },
			{ type: "text", text: "(image omitted: Anthropic does not accept image/svg+xml images, only JPEG, PNG, GIF and WebP)" },
			expect.objectContaining({ type: "image", source: expect.objectContaining({ media_type: "image/png" }) }),
		]);
	}, 30_000);

	it("sends image/jpg as image/jpeg, and omits an unsupported image a user attached", () => {
		const body = buildAnthropicRequest(getModel("anthropic", "claude-haiku-4-5"), {
			messages: [
				{
					role: "user",
					content: [
						{ type: "text", text: "compare" },
						{ type: "image", data: "AAAA", mimeType: "image/jpg" },
						{ type: "image", data: "AAAA", mimeType: "image/bmp" },
					],
					timestamp: 1,
				},
			],
		});
		const content = body.messages[0]?.content as unknown[];
		expect(content[1]).toEqual({ type: "image", source: { type: "base64", media_type: "image/jpeg", data: "AAAA" } });
		expect(content[2]).toMatchObject({ type: "text", text: "(image omitted: Anthropic does not accept image/bmp images, only JPEG, PNG, GIF and WebP)" });
	});
});
