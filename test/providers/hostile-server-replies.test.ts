/**
 * More of what a broken or hostile server can send, through the real providers (the Anthropic
 * and OpenAI SDKs, streamProxy) against local servers: a reply that never ends although each
 * of its lines is small, a tool call without a name, and a connection kept alive with pings and
 * nothing else. Each ends the reply as an error that says what happened, and the session goes on.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { streamAnthropic } from "../../src/providers/anthropic.js";
import { loadAnthropicSdk } from "../../src/providers/anthropic-sdk.js";
import { getModel } from "../../src/providers/models.js";
import { loadOpenAISdk } from "../../src/providers/openai-client.js";
import { streamOpenAICompletions } from "../../src/providers/openai-completions.js";
import { createOpenAICompatibleModel } from "../../src/providers/openai-models.js";
import { streamProxy } from "../../src/providers/proxy.js";
import { checkTranscript } from "../../src/testing/transcript-checks.js";
import type { AgentTool, StreamFn } from "../../src/types/agent.js";
import type { AssistantMessage } from "../../src/types/messages.js";
import type { Model } from "../../src/types/model.js";
import * as anthropic from "./anthropic-server.js";
import * as openai from "./openai-server.js";
import * as proxy from "./proxy-server.js";
import { anyArguments, countingTool } from "./counting-tool.js";
import { useProviderServers } from "./provider-servers.js";

type ProviderName = "anthropic" | "openai" | "proxy";

/** A stream function of each provider against `url`, with extra options for every call. */
function streamFnFor(provider: ProviderName, url: string, extra: { maxReplyBytes?: number; timeoutMs?: number } = {}): StreamFn {
	if (provider === "anthropic") return (model, context, options) => streamAnthropic(model, context, { ...options, ...extra });
	if (provider === "openai") return (model, context, options) => streamOpenAICompletions(model, context, { ...options, ...extra });
	return (model, context, options) => streamProxy(model, context, { ...options, ...extra, proxyUrl: url, authToken: "tok" });
}

function modelFor(provider: ProviderName, url: string): Model {
	return provider === "openai" ? createOpenAICompatibleModel({ baseUrl: `${url}/v1`, id: "qwen3:8b" }) : { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: url };
}

function agentWith(model: Model, streamFn: StreamFn, tool: AgentTool<typeof anyArguments>, streamIdleTimeoutMs = 0): Agent {
	return new Agent({ initialState: { model, systemPrompt: "s", tools: [tool] }, streamFn, getApiKey: () => "key", streamIdleTimeoutMs });
}

/** One streamed answer of a hand-written server: what it sent and whether the client hung up. */
interface Answer {
	written: number;
	/** The server wrote the end of the reply: the client read all of it. */
	ended: boolean;
	closed: Promise<void>;
}

/**
 * A server that answers every request with `opening`, then `piece` again and again (as fast as
 * the client reads, or every few milliseconds when `pieceEveryMs` is set) until `totalBytes`
 * were written, then `ending`.
 */
interface Script {
	opening: string;
	piece: string;
	ending: string;
	totalBytes: number;
	pieceEveryMs?: number;
}

async function startScriptedServer(): Promise<{ url: string; answers: Answer[]; script: (next: Script) => void; close: () => Promise<void> }> {
	let current: Script | undefined;
	const answers: Answer[] = [];
	const timers = new Set<ReturnType<typeof setInterval>>();
	const server: Server = createServer((request, response: ServerResponse) => {
		request.resume();
		const script = current as Script;
		let markClosed: () => void = () => {};
		const answer: Answer = { written: 0, ended: false, closed: new Promise((resolve) => (markClosed = resolve)) };
		answers.push(answer);
		response.on("close", markClosed);
		response.writeHead(200, { "content-type": "text/event-stream" });
		response.write(script.opening);
		const finish = () => {
			answer.ended = true;
			response.end(script.ending);
		};
		if (script.pieceEveryMs !== undefined) {
			const timer = setInterval(() => {
				if (response.destroyed) return;
				answer.written += script.piece.length;
				response.write(script.piece);
				if (answer.written >= script.totalBytes) finish();
			}, script.pieceEveryMs);
			timers.add(timer);
			response.on("close", () => {
				clearInterval(timer);
				timers.delete(timer);
			});
			return;
		}
		const pump = (): void => {
			while (!response.destroyed) {
				if (answer.written >= script.totalBytes) return finish();
				answer.written += script.piece.length;
				if (!response.write(script.piece)) {
					response.once("drain", pump);
					return;
				}
			}
		};
		pump();
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		answers,
		script: (next) => {
			current = next;
			answers.length = 0;
		},
		close: async () => {
			for (const timer of timers) clearInterval(timer);
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		},
	};
}

let scripted: Awaited<ReturnType<typeof startScriptedServer>>;
beforeAll(async () => {
	scripted = await startScriptedServer();
});
afterAll(async () => {
	await scripted?.close();
});

const text64 = "a".repeat(64);
const anthropicStart = anthropic.encodeSse([anthropic.messageStart("msg_big")]);
const anthropicEnd = anthropic.encodeSse([anthropic.messageDelta("end_turn"), anthropic.messageStop()]);
const openaiEnd = openai.encodeSse([openai.finishChunk("stop"), { data: "[DONE]" }]);

/** Per provider and kind of delta: a reply whose deltas, each a small line, come without end. */
const endlessReplies: { provider: ProviderName; deltas: string; script: Omit<Script, "totalBytes"> }[] = [
	{
		provider: "anthropic",
		deltas: "text",
		script: {
			opening: anthropicStart + anthropic.encodeSse([anthropic.blockStart(0, { type: "text", text: "" })]),
			piece: anthropic.encodeSse([anthropic.blockDelta(0, { type: "text_delta", text: text64 })]),
			ending: anthropic.encodeSse([anthropic.blockStop(0)]) + anthropicEnd,
		},
	},
	{
		provider: "anthropic",
		deltas: "tool-call argument",
		script: {
			opening:
				anthropicStart +
				anthropic.encodeSse([anthropic.blockStart(0, { type: "tool_use", id: "toolu_big", name: "store", input: {} }), anthropic.blockDelta(0, { type: "input_json_delta", partial_json: '{"x":"' })]),
			piece: anthropic.encodeSse([anthropic.blockDelta(0, { type: "input_json_delta", partial_json: text64 })]),
			ending: anthropic.encodeSse([anthropic.blockDelta(0, { type: "input_json_delta", partial_json: '"}' }), anthropic.blockStop(0)]) + anthropicEnd,
		},
	},
	{
		provider: "openai",
		deltas: "text",
		script: { opening: openai.encodeSse([openai.roleChunk()]), piece: openai.encodeSse(openai.textChunks([text64])), ending: openaiEnd },
	},
	{
		provider: "openai",
		deltas: "tool-call argument",
		script: {
			opening: openai.encodeSse([openai.roleChunk(), openai.toolCallChunk({ index: 0, id: "call_big", name: "store", arguments: '{"x":"' })]),
			piece: openai.encodeSse([openai.toolCallChunk({ index: 0, arguments: text64 })]),
			ending: openai.encodeSse([openai.toolCallChunk({ index: 0, arguments: '"}' }), openai.finishChunk("tool_calls"), { data: "[DONE]" }]),
		},
	},
	{
		provider: "proxy",
		deltas: "text",
		script: {
			opening: proxy.encodeFrames([{ type: "start" }, { type: "text_start", contentIndex: 0 }]),
			piece: proxy.encodeFrames([{ type: "text_delta", contentIndex: 0, delta: text64 }]),
			ending: proxy.encodeFrames([{ type: "text_end", contentIndex: 0 }, { type: "done", reason: "stop", usage: proxy.usage(1, 1) }]),
		},
	},
];

describe("a reply that never ends, each of its lines small", () => {
	const maxReplyBytes = 1024 * 1024;
	const tooLarge = "The server's reply passed 1 MB (maxReplyBytes) without ending; the request was cancelled";

	for (const { provider, deltas, script } of endlessReplies) {
		it(`of ${deltas} deltas, through the ${provider} provider: ends with an error that says so once it passes maxReplyBytes, keeps what streamed and closes the connection`, async () => {
			// Sixteen times the bound: read to its end, it would be a complete reply.
			scripted.script({ ...script, totalBytes: 16 * maxReplyBytes });
			const tool = countingTool();
			const agent = agentWith(modelFor(provider, scripted.url), streamFnFor(provider, scripted.url, { maxReplyBytes }), tool);

			await agent.prompt("Write a lot.");

			const reply = agent.state.messages.at(-1) as AssistantMessage;
			expect(reply.stopReason).toBe("error");
			expect(reply.errorMessage).toBe(tooLarge);
			const streamed = reply.content[0];
			const kept = streamed?.type === "text" ? streamed.text.length : streamed?.type === "toolCall" ? JSON.stringify(streamed.arguments).length : 0;
			// What streamed before the bound stays (deltas carry 64 characters each, in events of up to ~300 bytes).
			expect(kept).toBeGreaterThan(maxReplyBytes / 8);
			expect(tool.runs).toEqual([]);
			expect(checkTranscript(agent.state.messages)).toEqual([]);
			expect(scripted.answers).toHaveLength(1);
			await scripted.answers[0]?.closed;
			expect(scripted.answers[0]?.ended).toBe(false);
		});
	}

	it("the agent's maxReplyBytes option bounds every call of a stream function that passes its options on", async () => {
		const { script } = endlessReplies[0] as (typeof endlessReplies)[number];
		scripted.script({ ...script, totalBytes: 16 * maxReplyBytes });
		const agent = new Agent({
			initialState: { model: modelFor("anthropic", scripted.url), systemPrompt: "s", tools: [countingTool()] },
			streamFn: streamFnFor("anthropic", scripted.url),
			getApiKey: () => "key",
			streamIdleTimeoutMs: 0,
			maxReplyBytes,
		});

		await agent.prompt("Write a lot.");

		expect(agent.state.messages.at(-1)).toMatchObject({ stopReason: "error", errorMessage: tooLarge });
		await scripted.answers[0]?.closed;
		expect(scripted.answers[0]?.ended).toBe(false);
	});

	it("a reply under the bound arrives whole", async () => {
		const { script } = endlessReplies[0] as (typeof endlessReplies)[number];
		scripted.script({ ...script, totalBytes: maxReplyBytes / 2 });
		const agent = agentWith(modelFor("anthropic", scripted.url), streamFnFor("anthropic", scripted.url, { maxReplyBytes }), countingTool());

		await agent.prompt("Write a little.");

		expect(agent.state.messages.at(-1)).toMatchObject({ stopReason: "stop" });
		expect(scripted.answers[0]?.ended).toBe(true);
	});
});

describe("a tool call without a name", () => {
	const servers = useProviderServers();

	/** Every tool call name in a request body: the API refuses a request with an empty one. */
	function toolNamesSent(body: Record<string, unknown> | undefined): unknown[] {
		const messages = (body?.["messages"] ?? []) as { content?: unknown; tool_calls?: { function?: { name?: unknown } }[] }[];
		return messages.flatMap((message) => [
			...(Array.isArray(message.content) ? (message.content as { type?: string; name?: unknown }[]).filter((block) => block.type === "tool_use").map((block) => block.name) : []),
			...(message.tool_calls ?? []).map((call) => call.function?.name),
		]);
	}

	const anthropicCases: { what: string; block: Record<string, unknown>; message: string }[] = [
		{ what: "no name", block: { type: "tool_use", id: "toolu_nameless", input: {} }, message: "The model sent a tool call without a name (tool_use block 1, id toolu_nameless); the call was not run" },
		{ what: "an empty name", block: { type: "tool_use", id: "toolu_nameless", name: "", input: {} }, message: "The model sent a tool call without a name (tool_use block 1, id toolu_nameless); the call was not run" },
		{ what: "a name that is not text, and no id", block: { type: "tool_use", name: { x: 1 }, input: {} }, message: "The model sent a tool call without a name (tool_use block 1); the call was not run" },
	];
	for (const { what, block, message } of anthropicCases) {
		it(`from Anthropic, with ${what}: ends the reply with an error that says so, runs nothing, sends no call without a name and answers the next prompt`, async () => {
			servers.anthropic.reset();
			servers.anthropic.respond(
				{
					kind: "sse",
					events: [
						anthropic.messageStart("msg_nameless"),
						...anthropic.textBlock(0, ["Storing."]),
						anthropic.blockStart(1, block),
						anthropic.blockDelta(1, { type: "input_json_delta", partial_json: "{}" }),
						anthropic.blockStop(1),
						anthropic.messageDelta("tool_use"),
						anthropic.messageStop(),
					],
				},
				{ kind: "sse", events: anthropic.textReply("Hello again") },
			);
			const tool = countingTool();
			const agent = agentWith(modelFor("anthropic", servers.anthropic.baseUrl), streamAnthropic, tool);

			await agent.prompt("Store this.");
			const failed = agent.state.messages[1] as AssistantMessage;
			expect(failed).toMatchObject({ role: "assistant", stopReason: "error", errorMessage: message, content: [{ type: "text", text: "Storing." }] });
			expect(tool.runs).toEqual([]);
			expect(agent.state.messages).toHaveLength(2);
			expect(checkTranscript(agent.state.messages)).toEqual([]);

			await agent.prompt("Hello?");
			expect(servers.anthropic.requests).toHaveLength(2);
			expect(toolNamesSent(servers.anthropic.requests[1]?.body)).toEqual([]);
			expect(agent.state.messages.at(-1)).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "Hello again" }] });
		});
	}

	const openaiCases: { what: string; frames: openai.SseFrame[] }[] = [
		{ what: "no name in any delta", frames: [openai.toolCallChunk({ index: 1, id: "call_nameless", arguments: "{" }), openai.toolCallChunk({ index: 1, arguments: "}" })] },
		{ what: "an empty name", frames: [openai.toolCallChunk({ index: 1, id: "call_nameless", name: "", arguments: "{}" })] },
	];
	for (const { what, frames } of openaiCases) {
		it(`from OpenAI, with ${what}: ends the reply with an error that says so, runs nothing, sends no call without a name and answers the next prompt`, async () => {
			servers.openai.reset();
			servers.openai.respond(
				{ kind: "sse", frames: [openai.roleChunk(), ...openai.toolCallChunks(0, "call_named", "store", ["{}"]), ...frames, openai.finishChunk("tool_calls")] },
				{ kind: "sse", frames: openai.textReply("Hello again") },
			);
			const tool = countingTool();
			const agent = agentWith(modelFor("openai", servers.openai.baseUrl.replace(/\/v1$/, "")), streamOpenAICompletions, tool);

			await agent.prompt("Store this.");
			const failed = agent.state.messages[1] as AssistantMessage;
			expect(failed).toMatchObject({ role: "assistant", stopReason: "error", errorMessage: "The model sent a tool call without a name (call call_nameless); the call was not run" });
			// Neither call runs: the reply failed, so the model's other call is not taken either.
			expect(tool.runs).toEqual([]);
			expect(agent.state.messages).toHaveLength(2);
			expect(checkTranscript(agent.state.messages)).toEqual([]);

			await agent.prompt("Hello?");
			expect(servers.openai.requests).toHaveLength(2);
			expect(toolNamesSent(servers.openai.requests[1]?.body)).toEqual([]);
			expect(agent.state.messages.at(-1)).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "Hello again" }] });
		});
	}

	it("from OpenAI, with the name in a later delta than the id: the call runs", async () => {
		servers.openai.reset();
		servers.openai.respond(
			{ kind: "sse", frames: [openai.roleChunk(), openai.toolCallChunk({ index: 0, id: "call_late", arguments: "{" }), openai.toolCallChunk({ index: 0, name: "store", arguments: "}" }), openai.finishChunk("tool_calls")] },
			{ kind: "sse", frames: openai.textReply("Stored.") },
		);
		const tool = countingTool();
		await agentWith(modelFor("openai", servers.openai.baseUrl.replace(/\/v1$/, "")), streamOpenAICompletions, tool).prompt("Store this.");

		expect(tool.runs).toEqual([{}]);
		expect(toolNamesSent(servers.openai.requests[1]?.body)).toEqual(["store"]);
	});

	it("from the proxy, with an empty name: ends the reply with an error that says so and runs nothing", async () => {
		servers.proxy.reset();
		servers.proxy.respond(
			{ kind: "stream", frames: [{ type: "start" }, ...proxy.toolCallBlock(0, "toolu_nameless", "", ["{}"]), { type: "done", reason: "toolUse", usage: proxy.usage(1, 1) }] },
			{ kind: "stream", frames: proxy.textReply("Hello again") },
		);
		const tool = countingTool();
		const agent = agentWith(modelFor("proxy", servers.proxy.url), streamFnFor("proxy", servers.proxy.url), tool);

		await agent.prompt("Store this.");
		expect(agent.state.messages[1]).toMatchObject({ stopReason: "error", errorMessage: expect.stringContaining('toolcall_start needs "toolName" to be a non-empty string') });
		expect(tool.runs).toEqual([]);
		await agent.prompt("Hello?");
		expect(agent.state.messages.at(-1)).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "Hello again" }] });
	});
});

describe("a server that keeps the connection alive with pings and sends nothing else", () => {
	const openings: Record<ProviderName, { opening: string; piece: string }> = {
		anthropic: {
			opening: anthropicStart + anthropic.encodeSse([anthropic.blockStart(0, { type: "text", text: "" }), anthropic.blockDelta(0, { type: "text_delta", text: "Hi" })]),
			piece: anthropic.encodeSse([anthropic.ping()]),
		},
		openai: { opening: openai.encodeSse(openai.textChunks(["Hi"])), piece: openai.encodeSse([{ comment: "OPENROUTER PROCESSING" }]) },
		proxy: { opening: proxy.encodeFrames([{ type: "start" }, { type: "text_start", contentIndex: 0 }, { type: "text_delta", contentIndex: 0, delta: "Hi" }]), piece: ": keep-alive\n\n" },
	};
	const pings = (provider: ProviderName): Script => ({ ...openings[provider], ending: "", totalBytes: Number.POSITIVE_INFINITY, pieceEveryMs: 20 });
	// The silence is timed from the request on: an SDK loaded then, on a busy machine, would eat into it.
	beforeAll(async () => {
		await loadAnthropicSdk();
		await loadOpenAISdk();
	});

	for (const provider of ["anthropic", "openai", "proxy"] as const) {
		it(`through the ${provider} provider: the run's idle timeout says no content came and that pings do not count`, async () => {
			scripted.script(pings(provider));
			const agent = agentWith(modelFor(provider, scripted.url), streamFnFor(provider, scripted.url), countingTool(), 500);

			await agent.prompt("Hello");

			expect(agent.state.messages.at(-1)).toMatchObject({
				stopReason: "error",
				errorMessage: "The model's stream stalled: no content arrived for 0.5 s (streamIdleTimeoutMs; keep-alive pings do not count); the request was cancelled",
				content: [{ type: "text", text: "Hi" }],
			});
			await scripted.answers[0]?.closed;
			expect(scripted.answers[0]?.written).toBeGreaterThan(0);
		});
	}

	it("through the Anthropic provider's timeoutMs: the message says the server kept the connection alive but sent no content", async () => {
		scripted.script(pings("anthropic"));
		const agent = agentWith(modelFor("anthropic", scripted.url), streamFnFor("anthropic", scripted.url, { timeoutMs: 500 }), countingTool());

		await agent.prompt("Hello");

		expect(agent.state.messages.at(-1)).toMatchObject({
			stopReason: "error",
			errorMessage: "Anthropic's stream stalled: the server kept the connection alive (pings or an unfinished event) but sent no event with content for 500 ms after event 3 (timeoutMs); the request was cancelled",
			content: [{ type: "text", text: "Hi" }],
		});
		await scripted.answers[0]?.closed;
		expect(scripted.answers[0]?.written).toBeGreaterThan(0);
	});
});
