// @ts-nocheck
import { Type } from "typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { streamOpenAICompletions } from "../../src/providers/openai-completions.js";
import { createOpenAICompatibleModel } from "../../src/providers/openai-models.js";
import type { AgentEvent, AgentTool } from "../../src/types/agent.js";
import type { AssistantMessage, ToolResultMessage } from "../../src/types/messages.js";
import type { Model } from "../../src/types/model.js";
import {
	chunk,
	finishChunk,
	type OpenAITestServer,
	roleChunk,
	startOpenAIServer,
	textChunks,
	textReply,
	toolCallChunks,
	usageChunk,
} from "./openai-server.js";

let server: OpenAITestServer;
let model: Model;

beforeAll(async () => {
	server = await startOpenAIServer();
	model = createOpenAICompatibleModel({ baseUrl: server.baseUrl, id: "qwen3:8b" });
});
afterAll(() => server.close());

const weatherParameters = Type.Object({ city: Type.String() });

const weather: AgentTool<typeof weatherParameters> = {
	name: "get_weather",
	label: "Weather",
	description: "Current weather for a city",
	parameters: weatherParameters,
	execute: async (_id, params) => ({
		content: [{ type: "text", text: `${params.city}: 18°C, clear` }],
		details: { city: params.city },
	}),
};

describe("Agent over streamOpenAICompletions", () => {
	it("runs a full tool round trip and sends the tool result back paired with its call", async () => {
		server.respond(
			{
				kind: "sse",
				chunkBytes: 11,
				frames: [
					roleChunk("chatcmpl-turn1"),
					...textChunks(["Let me check."], "chatcmpl-turn1"),
					...toolCallChunks(0, "call_w1", "get_weather", ['{"ci', 'ty":"Zürich"}']),
					finishChunk("tool_calls"),
					usageChunk({ prompt_tokens: 50, completion_tokens: 30 }),
				],
			},
			{ kind: "sse", frames: textReply("It is 18°C and clear in Zürich.", "chatcmpl-turn2") },
		);

		const agent = new Agent({
			initialState: { model, systemPrompt: "You answer weather questions.", tools: [weather] },
			streamFn: streamOpenAICompletions,
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
		const toolEnd = events.find((e) => e.type === "tool_execution_end");
		expect(toolEnd).toMatchObject({ toolCallId: "call_w1", toolName: "get_weather", isError: false });

		const messages = agent.state.messages;
		expect(messages.map((m) => ("role" in m ? m.role : "?"))).toEqual(["user", "assistant", "toolResult", "assistant"]);
		const firstReply = messages[1] as AssistantMessage;
		expect(firstReply).toMatchObject({ stopReason: "toolUse", responseId: "chatcmpl-turn1", usage: { input: 50, output: 30 } });
		expect(firstReply.content[1]).toEqual({ type: "toolCall", id: "call_w1", name: "get_weather", arguments: { city: "Zürich" } });
		expect((messages[2] as ToolResultMessage).content).toEqual([{ type: "text", text: "Zürich: 18°C, clear" }]);
		const finalReply = messages[3] as AssistantMessage;
		expect(finalReply).toMatchObject({ stopReason: "stop", responseId: "chatcmpl-turn2" });
		expect(finalReply.content).toEqual([{ type: "text", text: "It is 18°C and clear in Zürich." }]);

		// The second request carries the whole exchange back: the tool result right after its call.
		expect(server.requests).toHaveLength(2);
		const second = server.requests[1]?.body;
		expect(second?.["tools"]).toEqual([
			{
				type: "function",
				function: {
					name: "get_weather",
					description: "Current weather for a city",
					parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
				},
			},
		]);
		expect(second?.["messages"]).toEqual([
			{ role: "system", content: "You answer weather questions." },
			{ role: "user", content: "Weather in Zürich?" },
			{
				role: "assistant",
				content: "Let me check.",
				tool_calls: [{ id: "call_w1", type: "function", function: { name: "get_weather", arguments: '{"city":"Zürich"}' } }],
			},
			{ role: "tool", tool_call_id: "call_w1", content: "Zürich: 18°C, clear" },
		]);
	});

	it("ends the run with the readable error when the server fails, and continues after it", async () => {
		server.respond(
			{ kind: "error", status: 503, body: { error: "model is loading" } },
			{ kind: "sse", frames: [chunk({ delta: { content: "Back." } }), finishChunk("stop")] },
		);
		const agent = new Agent({
			initialState: { model, systemPrompt: "", tools: [] },
			streamFn: (m, c, o) => streamOpenAICompletions(m, c, { ...o, maxRetries: 0 }),
		});
		await agent.prompt("Hello?");
		const failed = agent.state.messages.at(-1) as AssistantMessage;
		expect(failed).toMatchObject({ stopReason: "error", errorMessage: "503 Service Unavailable: model is loading" });

		const before = server.requests.length;
		await agent.prompt("Again?");
		// The failed turn is not replayed: the server sees the two user messages only.
		expect(server.requests[before]?.body["messages"]).toEqual([
			{ role: "user", content: "Hello?" },
			{ role: "user", content: "Again?" },
		]);
		expect((agent.state.messages.at(-1) as AssistantMessage).content).toEqual([{ type: "text", text: "Back." }]);
	});
});
