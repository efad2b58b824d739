import { Type } from "typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { streamAnthropic } from "../../src/providers/anthropic.js";
import { getModel } from "../../src/providers/models.js";
import type { AgentEvent, AgentTool } from "../../src/types/agent.js";
import type { AssistantMessage, ToolResultMessage } from "../../src/types/messages.js";
import type { Model } from "../../src/types/model.js";
import {
	type AnthropicTestServer,
	messageDelta,
	messageStart,
	messageStop,
	startAnthropicServer,
	textBlock,
	textReply,
	toolUseBlock,
} from "./anthropic-server.js";

let server: AnthropicTestServer;
let model: Model;

beforeAll(async () => {
	server = await startAnthropicServer();
	model = { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: server.baseUrl };
});
afterAll(() => server.close());

const weather: AgentTool<ReturnType<typeof weatherParameters>> = {
	name: "get_weather",
	label: "Weather",
	description: "Current weather for a city",
	parameters: weatherParameters(),
	execute: async (_id, params) => ({
		content: [{ type: "text", text: `${params.city}: 18°C, clear` }],
		details: { city: params.city },
	}),
};

function weatherParameters() {
	return Type.Object({ city: Type.String() });
}

describe("Agent over streamAnthropic", () => {
	it("runs a full tool round trip against the Messages API", async () => {
		server.respond(
			{
				kind: "sse",
				chunkBytes: 11,
				events: [
					messageStart("msg_turn1", { input_tokens: 50 }),
					...textBlock(0, ["Let me check."]),
					...toolUseBlock(1, "toolu_w1", "get_weather", ['{"ci', 'ty":"Zürich"}']),
					messageDelta("tool_use", { output_tokens: 30 }),
					messageStop(),
				],
			},
			{ kind: "sse", events: textReply("It is 18°C and clear in Zürich.", "msg_turn2") },
		);

		const agent = new Agent({
			initialState: { model, systemPrompt: "You answer weather questions.", tools: [weather] },
			streamFn: streamAnthropic,
			getApiKey: () => "test-key",
		});
		const events: AgentEvent[] = [];
		agent.subscribe((event) => {
			events.push(event);
		});

		await agent.prompt("Weather in Zürich?");

		const types = events.map((e) => e.type);
		expect(types[0]).toBe("agent_start");
		expect(types.at(-1)).toBe("agent_end");
		expect(types.filter((t) => t === "turn_start")).toHaveLength(2);
		expect(types).toContain("tool_execution_start");
		const toolEnd = events.find((e) => e.type === "tool_execution_end");
		expect(toolEnd).toMatchObject({ toolCallId: "toolu_w1", toolName: "get_weather", isError: false });

		const messages = agent.state.messages;
		expect(messages.map((m) => ("role" in m ? m.role : "?"))).toEqual(["user", "assistant", "toolResult", "assistant"]);
		const firstReply = messages[1] as AssistantMessage;
		expect(firstReply.stopReason).toBe("toolUse");
		expect(firstReply.content[1]).toEqual({ type: "toolCall", id: "toolu_w1", name: "get_weather", arguments: { city: "Zürich" } });
		expect((messages[2] as ToolResultMessage).content).toEqual([{ type: "text", text: "Zürich: 18°C, clear" }]);
		const finalReply = messages[3] as AssistantMessage;
		expect(finalReply).toMatchObject({ stopReason: "stop", responseId: "msg_turn2" });
		expect(finalReply.content).toEqual([{ type: "text", text: "It is 18°C and clear in Zürich." }]);

		// The second request carries the whole exchange back, tool result included.
		expect(server.requests).toHaveLength(2);
		const second = server.requests[1]?.body;
		expect(server.requests[1]?.headers.authorization).toBe("Bearer test-key");
		expect(second?.["tools"][0]).toMatchObject({ name: "get_weather", input_schema: { type: "object", required: ["city"] } });
		expect(second?.["messages"]).toEqual([
			{ role: "user", content: [{ type: "text", text: "Weather in Zürich?" }] },
			{
				role: "assistant",
				content: [
					{ type: "text", text: "Let me check." },
					{ type: "tool_use", id: "toolu_w1", name: "get_weather", input: { city: "Zürich" } },
				],
			},
			{
				role: "user",
				content: [
					{
						type: "tool_result",
						tool_use_id: "toolu_w1",
						content: [{ type: "text", text: "Zürich: 18°C, clear" }],
						is_error: false,
						cache_control: { type: "ephemeral" },
					},
				],
			},
		]);
	});

	it.each(["parallel", "sequential", "streaming"] as const)(
		"runs two calls that share an id (%s), answers each, and sends them back under ids the API accepts",
		async (toolExecution) => {
			server.reset();
			// A reply whose two calls carry one id (the API rejects that in a request: "tool_use ids must be unique").
			server.respond(
				{
					kind: "sse",
					events: [
						messageStart("msg_dup", { input_tokens: 20 }),
						...toolUseBlock(0, "toolu_dup", "get_weather", ['{"city":"Zürich"}']),
						...toolUseBlock(1, "toolu_dup", "get_weather", ['{"city":"Oslo"}']),
						messageDelta("tool_use", { output_tokens: 10 }),
						messageStop(),
					],
				},
				{ kind: "sse", events: textReply("Both done.", "msg_dup2") },
			);
			const agent = new Agent({ initialState: { model, tools: [weather] }, streamFn: streamAnthropic, getApiKey: () => "test-key", toolExecution });
			const ends: string[] = [];
			agent.subscribe((event) => {
				if (event.type === "tool_execution_end") ends.push(`${event.toolCallId}:${(event.result as { content: { text: string }[] }).content[0]?.text}`);
			});
			await agent.prompt("Weather in Zürich and Oslo?");
			expect(ends.sort()).toEqual(["toolu_dup:Oslo: 18°C, clear", "toolu_dup:Zürich: 18°C, clear"]);
			const results = agent.state.messages.filter((m): m is ToolResultMessage => m.role === "toolResult").map((m) => (m.content[0] as { text: string }).text);
			expect(results).toEqual(["Zürich: 18°C, clear", "Oslo: 18°C, clear"]);
			const second = server.requests[1]?.body;
			expect(second?.["messages"][1]).toEqual({
				role: "assistant",
				content: [
					{ type: "tool_use", id: "toolu_dup", name: "get_weather", input: { city: "Zürich" } },
					{ type: "tool_use", id: "toolu_dup_2", name: "get_weather", input: { city: "Oslo" } },
				],
			});
			expect(second?.["messages"][2]["content"].map((block: { tool_use_id: string; content: { text: string }[] }) => `${block.tool_use_id}:${block.content[0]?.text}`)).toEqual([
				"toolu_dup:Zürich: 18°C, clear",
				"toolu_dup_2:Oslo: 18°C, clear",
			]);
		},
	);
});
