/**
 * A tool call the output limit cuts off mid-arguments must not run. The Messages API stops the
 * call's block before it says "max_tokens", and an OpenAI-compatible server says "length" in the
 * chunk that carries the last fragment: the providers announced the call's end with the arguments
 * read leniently from the cut text, and in streaming tool mode the call ran with them (a delete of
 * "/tmp/important-dir/sub" where the model was writing a longer path). Found by a probe
 * (scratch/probeAM/p13). Real SDK-free servers on 127.0.0.1 speak each wire format.
 */
import { Type } from "typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { streamAnthropic } from "../../src/providers/anthropic.js";
import { getModel } from "../../src/providers/models.js";
import { streamOpenAICompletions } from "../../src/providers/openai-completions.js";
import { createOpenAICompatibleModel } from "../../src/providers/openai-models.js";
import type { AgentEvent, AgentTool, ToolExecutionMode } from "../../src/types/agent.js";
import type { AssistantMessage, ToolResultMessage } from "../../src/types/messages.js";
import * as anthropic from "./anthropic-server.js";
import * as openai from "./openai-server.js";

let anthropicServer: anthropic.AnthropicTestServer;
let openaiServer: openai.OpenAITestServer;

beforeAll(async () => {
	anthropicServer = await anthropic.startAnthropicServer();
	openaiServer = await openai.startOpenAIServer();
});
afterAll(async () => {
	await anthropicServer.close();
	await openaiServer.close();
});

const parameters = Type.Object({ path: Type.String() });

function deleteTool(ran: string[]): AgentTool<typeof parameters> {
	return {
		name: "delete",
		label: "Delete",
		description: "Deletes a path",
		parameters,
		execute: async (_id, { path }) => {
			ran.push(path);
			return { content: [{ type: "text", text: `deleted ${path}` }], details: undefined };
		},
	};
}

const modes: ToolExecutionMode[] = ["parallel", "sequential", "streaming"];

async function runCutOff(provider: "anthropic" | "openai", toolExecution: ToolExecutionMode, blockStop: boolean) {
	const ran: string[] = [];
	const cut = ['{"path":"/tmp/imp', 'ortant-dir/sub'];
	if (provider === "anthropic") {
		const call = anthropic.toolUseBlock(1, "toolu_cut", "delete", cut);
		anthropicServer.respond(
			{
				kind: "sse",
				events: [anthropic.messageStart("msg_cut"), ...anthropic.textBlock(0, ["Deleting."]), ...(blockStop ? call : call.slice(0, -1)), anthropic.messageDelta("max_tokens"), anthropic.messageStop()],
			},
			{ kind: "sse", events: anthropic.textReply("Stopped.", "msg_after") },
		);
	} else {
		openaiServer.respond(
			{ kind: "sse", frames: [openai.roleChunk("c1"), ...openai.textChunks(["Deleting."], "c1"), ...openai.toolCallChunks(0, "call_cut", "delete", cut), openai.finishChunk("length")] },
			{ kind: "sse", frames: openai.textReply("Stopped.", "c2") },
		);
	}
	const model = provider === "anthropic" ? { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: anthropicServer.baseUrl } : createOpenAICompatibleModel({ baseUrl: openaiServer.baseUrl, id: "local" });
	const agent = new Agent({
		initialState: { model, tools: [deleteTool(ran)] },
		streamFn: provider === "anthropic" ? streamAnthropic : streamOpenAICompletions,
		getApiKey: () => "test-key",
		toolExecution,
	});
	const ends: AgentEvent[] = [];
	agent.subscribe((event) => {
		if (event.type === "message_update" && event.assistantMessageEvent.type === "toolcall_end") ends.push(event);
	});
	await agent.prompt("clean up");
	agent.dispose();
	return { ran, ends, messages: agent.state.messages };
}

describe("a tool call cut off by the output limit", () => {
	for (const provider of ["anthropic", "openai"] as const) {
		for (const toolExecution of modes) {
			it(`never runs (${provider}, ${toolExecution})`, async () => {
				const { ran, ends, messages } = await runCutOff(provider, toolExecution, true);
				expect(ran).toEqual([]);
				// Its end is never announced: a UI or a streaming tool would take the cut arguments as final.
				expect(ends).toEqual([]);
				const reply = messages[1] as AssistantMessage;
				expect(reply.stopReason).toBe("length");
				const result = messages[2] as ToolResultMessage;
				expect(result).toMatchObject({ role: "toolResult", isError: true });
				expect(JSON.stringify(result.content)).toContain("output token limit");
			});
		}
	}

	it("never runs when the server leaves the block unstopped (anthropic, streaming)", async () => {
		const { ran, ends } = await runCutOff("anthropic", "streaming", false);
		expect(ran).toEqual([]);
		expect(ends).toEqual([]);
	});

	for (const provider of ["anthropic", "openai"] as const) {
		it(`never runs when cut off before any of its arguments (${provider}, streaming; a review: it ran with {})`, async () => {
			const ran: string[] = [];
			const wipe: AgentTool = {
				name: "wipe",
				label: "Wipe",
				description: "Wipes a path, or everything",
				parameters: Type.Object({ path: Type.Optional(Type.String()) }),
				execute: async (_id, params) => {
					ran.push(JSON.stringify(params));
					return { content: [{ type: "text", text: "wiped" }], details: undefined };
				},
			};
			if (provider === "anthropic") {
				anthropicServer.respond(
					{ kind: "sse", events: [anthropic.messageStart("msg_e"), ...anthropic.toolUseBlock(0, "toolu_e", "wipe", []), anthropic.messageDelta("max_tokens"), anthropic.messageStop()] },
					{ kind: "sse", events: anthropic.textReply("Stopped.", "msg_e2") },
				);
			} else {
				openaiServer.respond(
					{ kind: "sse", frames: [openai.roleChunk("e1"), ...openai.toolCallChunks(0, "call_e", "wipe", []), openai.finishChunk("length")] },
					{ kind: "sse", frames: openai.textReply("Stopped.", "e2") },
				);
			}
			const model = provider === "anthropic" ? { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: anthropicServer.baseUrl } : createOpenAICompatibleModel({ baseUrl: openaiServer.baseUrl, id: "local" });
			const agent = new Agent({ initialState: { model, tools: [wipe] }, streamFn: provider === "anthropic" ? streamAnthropic : streamOpenAICompletions, getApiKey: () => "k", toolExecution: "streaming" });
			await agent.prompt("clean up");
			agent.dispose();
			expect(ran).toEqual([]);
			expect(agent.state.messages[2]).toMatchObject({ role: "toolResult", isError: true });
		});
	}

	it("a call of a tool without arguments, which streams none, still runs (anthropic, streaming)", async () => {
		const ran: string[] = [];
		const wipe: AgentTool = {
			name: "ping",
			label: "Ping",
			description: "Pings",
			parameters: Type.Object({}),
			execute: async () => {
				ran.push("ping");
				return { content: [{ type: "text", text: "pong" }], details: undefined };
			},
		};
		anthropicServer.respond(
			{ kind: "sse", events: [anthropic.messageStart("msg_p"), ...anthropic.toolUseBlock(0, "toolu_p", "ping", []), anthropic.messageDelta("tool_use"), anthropic.messageStop()] },
			{ kind: "sse", events: anthropic.textReply("Pinged.", "msg_p2") },
		);
		const model = { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: anthropicServer.baseUrl };
		const agent = new Agent({ initialState: { model, tools: [wipe] }, streamFn: streamAnthropic, getApiKey: () => "k", toolExecution: "streaming" });
		await agent.prompt("ping");
		agent.dispose();
		expect(ran).toEqual(["ping"]);
	});

	it("a call whose arguments were complete before the limit still runs (anthropic, streaming)", async () => {
		const ran: string[] = [];
		anthropicServer.respond(
			{
				kind: "sse",
				events: [anthropic.messageStart("msg_whole"), ...anthropic.toolUseBlock(0, "toolu_whole", "delete", ['{"path":', '"/tmp/x"}']), ...anthropic.textBlock(1, ["and then"]), anthropic.messageDelta("max_tokens"), anthropic.messageStop()],
			},
			{ kind: "sse", events: anthropic.textReply("Done.", "msg_done") },
		);
		const model = { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: anthropicServer.baseUrl };
		const agent = new Agent({ initialState: { model, tools: [deleteTool(ran)] }, streamFn: streamAnthropic, getApiKey: () => "k", toolExecution: "streaming" });
		await agent.prompt("clean up");
		agent.dispose();
		expect(ran).toEqual(["/tmp/x"]);
	});
});
