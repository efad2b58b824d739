/**
 * What a buggy proxy, a compromised server or a confused model can send, through the real
 * providers against local servers: each ends as a clear error reply or result, and the session
 * goes on (the next request is made and its body is one the API accepts).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { streamAnthropic } from "../../src/providers/anthropic.js";
import { MAX_STREAM_LINE_BYTES } from "../../src/providers/line-limit.js";
import { getModel } from "../../src/providers/models.js";
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

const servers = useProviderServers();

const anthropicModel = (): Model => ({ ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: servers.anthropic.baseUrl });
const openaiModel = (): Model => createOpenAICompatibleModel({ baseUrl: servers.openai.baseUrl, id: "qwen3:8b" });
const proxyStream: StreamFn = (model, context, options) => streamProxy(model, context, { ...options, proxyUrl: servers.proxy.url, authToken: "tok" });

function agentWith(model: Model, streamFn: StreamFn, tool: AgentTool<typeof anyArguments>): Agent {
	return new Agent({ initialState: { model, systemPrompt: "s", tools: [tool] }, streamFn, getApiKey: () => "key" });
}

/** Every string and key in a request body, to look for unpaired surrogates in. */
function stringsIn(value: unknown, out: string[] = []): string[] {
	if (typeof value === "string") out.push(value);
	else if (Array.isArray(value)) for (const item of value) stringsIn(item, out);
	else if (value !== null && typeof value === "object") {
		for (const [key, item] of Object.entries(value)) {
			out.push(key);
			stringsIn(item, out);
		}
	}
	return out;
}
const unpairedSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe("tool call arguments nested 10,000 levels deep", () => {
	const deep = `{"d":${"[".repeat(10_000)}${"]".repeat(10_000)}}`;
	const tooDeep = "The model's tool call arguments nest deeper than 256 levels of objects and arrays; the call was not run";

	const cases: { provider: string; setUp: () => { model: Model; streamFn: StreamFn; requests: () => number } }[] = [
		{
			provider: "Anthropic",
			setUp: () => {
				servers.anthropic.reset();
				servers.anthropic.respond(
					{ kind: "sse", events: [anthropic.messageStart("msg_deep"), ...anthropic.toolUseBlock(0, "toolu_deep", "store", [deep]), anthropic.messageDelta("tool_use"), anthropic.messageStop()] },
					{ kind: "sse", events: anthropic.textReply("Hello again") },
				);
				return { model: anthropicModel(), streamFn: streamAnthropic, requests: () => servers.anthropic.requests.length };
			},
		},
		{
			provider: "OpenAI",
			setUp: () => {
				servers.openai.reset();
				servers.openai.respond(
					{ kind: "sse", frames: [openai.roleChunk(), ...openai.toolCallChunks(0, "call_deep", "store", [deep.slice(0, 5_000), deep.slice(5_000)]), openai.finishChunk("tool_calls")] },
					{ kind: "sse", frames: openai.textReply("Hello again") },
				);
				return { model: openaiModel(), streamFn: streamOpenAICompletions, requests: () => servers.openai.requests.length };
			},
		},
		{
			provider: "OpenAI, sent as an object",
			setUp: () => {
				servers.openai.reset();
				// Written by hand: the test server's JSON.stringify would overflow on it too.
				const objectArguments = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_deep","type":"function","function":{"name":"store","arguments":${deep}}}]},"finish_reason":null}]}`;
				servers.openai.respond(
					{ kind: "sse", frames: [openai.roleChunk(), { data: objectArguments }, openai.finishChunk("tool_calls")] },
					{ kind: "sse", frames: openai.textReply("Hello again") },
				);
				return { model: openaiModel(), streamFn: streamOpenAICompletions, requests: () => servers.openai.requests.length };
			},
		},
		{
			provider: "the proxy",
			setUp: () => {
				servers.proxy.reset();
				servers.proxy.respond(
					{ kind: "stream", frames: [{ type: "start" }, ...proxy.toolCallBlock(0, "toolu_deep", "store", [deep]), { type: "done", reason: "toolUse", usage: proxy.usage(1, 1) }] },
					{ kind: "stream", frames: proxy.textReply("Hello again") },
				);
				return { model: anthropicModel(), streamFn: proxyStream, requests: () => servers.proxy.requests.length };
			},
		},
	];

	for (const { provider, setUp } of cases) {
		it(`from ${provider}: end the reply as an error that says so, run nothing, and the next prompt gets its answer`, async () => {
			const { model, streamFn, requests } = setUp();
			const tool = countingTool();
			const agent = agentWith(model, streamFn, tool);

			await agent.prompt("Store this.");
			const failed = agent.state.messages[1] as AssistantMessage;
			expect(failed).toMatchObject({ role: "assistant", stopReason: "error", errorMessage: tooDeep });
			expect(tool.runs).toEqual([]);
			expect(checkTranscript(agent.state.messages)).toEqual([]);

			await agent.prompt("Hello?");
			expect(requests()).toBe(2);
			expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop", content: [{ type: "text", text: "Hello again" }] });
		});
	}
});

describe("an unpaired surrogate in a tool call's arguments", () => {
	const args = '{"path":"a\\ud800.txt","\\udc00key":["x\\udbff"]}';

	it("from Anthropic: the next request carries U+FFFD in its place, in values and keys", async () => {
		servers.anthropic.reset();
		servers.anthropic.respond(
			{ kind: "sse", events: [anthropic.messageStart("msg_s"), ...anthropic.toolUseBlock(0, "toolu_s", "store", [args]), anthropic.messageDelta("tool_use"), anthropic.messageStop()] },
			{ kind: "sse", events: anthropic.textReply("Stored.") },
		);
		const tool = countingTool();
		await agentWith(anthropicModel(), streamAnthropic, tool).prompt("Store it.");

		expect(tool.runs).toEqual([{ path: "a\ud800.txt", "\udc00key": ["x\udbff"] }]);
		const next = servers.anthropic.requests[1]?.body;
		expect(stringsIn(next).filter((text) => unpairedSurrogate.test(text))).toEqual([]);
		expect(JSON.stringify(next)).toContain('"input":{"path":"a\uFFFD.txt","\uFFFDkey":["x\uFFFD"]}');
	});

	it("from OpenAI: the next request's arguments text carries U+FFFD in its place", async () => {
		servers.openai.reset();
		servers.openai.respond(
			{ kind: "sse", frames: [openai.roleChunk(), ...openai.toolCallChunks(0, "call_s", "store", [args]), openai.finishChunk("tool_calls")] },
			{ kind: "sse", frames: openai.textReply("Stored.") },
		);
		await agentWith(openaiModel(), streamOpenAICompletions, countingTool()).prompt("Store it.");

		const next = servers.openai.requests[1]?.body as { messages: { tool_calls?: { function: { arguments: string } }[] }[] };
		const sent = next.messages.flatMap((message) => message.tool_calls ?? []).map((call) => call.function.arguments);
		expect(sent).toEqual(['{"path":"a\uFFFD.txt","\uFFFDkey":["x\uFFFD"]}']);
	});
});

describe("usage a server should never send", () => {
	it("from Anthropic: counts as strings or negative numbers keep the last good count, and a missing usage is no error", async () => {
		servers.anthropic.reset();
		const noUsageStart = anthropic.messageStart("msg_u");
		delete (noUsageStart.data as { message: { usage?: unknown } }).message.usage;
		servers.anthropic.respond(
			{ kind: "sse", events: [anthropic.messageStart("msg_u", { input_tokens: 7 }), ...anthropic.textBlock(0, ["Hi"]), anthropic.messageDelta("end_turn", { output_tokens: "12", input_tokens: -5 } as never), anthropic.messageStop()] },
			{ kind: "sse", events: [noUsageStart, ...anthropic.textBlock(0, ["Hi again"]), { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null } } }, anthropic.messageStop()] },
		);
		const agent = agentWith(anthropicModel(), streamAnthropic, countingTool());

		await agent.prompt("Hello");
		expect((agent.state.messages[1] as AssistantMessage).usage).toMatchObject({ input: 7, output: 1, totalTokens: 8 });

		await agent.prompt("Hello?");
		const second = agent.state.messages[3] as AssistantMessage;
		expect(second).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "Hi again" }] });
		expect(second.usage).toMatchObject({ input: 0, output: 0, totalTokens: 0 });
	});

	it("from the proxy: counts and costs that are strings, null or negative are zero", async () => {
		servers.proxy.reset();
		const badUsage = { input: "12", output: -3, cacheRead: null, cacheWrite: 2, totalTokens: "x", cost: { input: "1", output: 0.5, cacheRead: -1, cacheWrite: null, total: 0.5 } };
		servers.proxy.respond({ kind: "stream", frames: [{ type: "start" }, ...proxy.textBlock(0, ["Hi"]), { type: "done", reason: "stop", usage: badUsage as never }] });
		const agent = agentWith(anthropicModel(), proxyStream, countingTool());

		await agent.prompt("Hello");
		expect((agent.state.messages[1] as AssistantMessage).usage).toEqual({
			input: 0,
			output: 0,
			cacheRead: 0,
			cacheWrite: 2,
			totalTokens: 0,
			cost: { input: 0, output: 0.5, cacheRead: 0, cacheWrite: 0, total: 0.5 },
		});
	});
});

describe("a server that sends one line without end, as fast as the client reads", () => {
	/** Per provider: the start of its stream up to the inside of a string that never ends. */
	const openings: Record<string, string> = {
		anthropic:
			'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}\n\n' +
			'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"store","input":{}}}\n\n' +
			'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"',
		openai: 'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"',
		proxy: 'data: {"type":"start"}\n\ndata: {"type":"text_start","contentIndex":0}\n\ndata: {"type":"text_delta","contentIndex":0,"delta":"',
	};
	const megabyte = "a".repeat(1024 * 1024);
	let endless: Server;
	let endlessUrl: string;
	let provider = "";
	/** Bytes of the endless line written before the client hung up, per request. */
	const written: number[] = [];

	beforeAll(async () => {
		endless = createServer((request, response) => {
			request.resume();
			response.writeHead(200, { "content-type": "text/event-stream" });
			response.write(openings[provider]);
			const index = written.push(0) - 1;
			const pump = (): void => {
				while (!response.destroyed) {
					written[index] = (written[index] ?? 0) + megabyte.length;
					if (!response.write(megabyte)) {
						response.once("drain", pump);
						return;
					}
				}
			};
			pump();
		});
		await new Promise<void>((resolve) => endless.listen(0, "127.0.0.1", resolve));
		endlessUrl = `http://127.0.0.1:${(endless.address() as AddressInfo).port}`;
	});
	afterAll(async () => {
		endless?.closeAllConnections();
		await new Promise((resolve) => endless?.close(resolve));
	});

	const lineTooLong = "The server sent a line of more than 16 MB without a line end (not an event stream a model API sends); the request was cancelled";
	const cases: { name: string; model: () => Model; streamFn: () => StreamFn }[] = [
		{ name: "anthropic", model: () => ({ ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: endlessUrl }), streamFn: () => streamAnthropic },
		{ name: "openai", model: () => createOpenAICompatibleModel({ baseUrl: `${endlessUrl}/v1`, id: "qwen3:8b" }), streamFn: () => streamOpenAICompletions },
		{
			name: "proxy",
			model: anthropicModel,
			streamFn: () => (model, context, options) => streamProxy(model, context, { ...options, proxyUrl: endlessUrl, authToken: "tok" }),
		},
	];
	for (const { name, model, streamFn } of cases) {
		it(`through the ${name} provider: the reply ends with an error that says so once the line passes 16 MB, and the connection is closed`, async () => {
			provider = name;
			written.length = 0;
			const tool = countingTool();
			const agent = agentWith(model(), streamFn(), tool);

			await agent.prompt("Store this.");

			const reply = agent.state.messages.at(-1) as AssistantMessage;
			expect(reply.stopReason).toBe("error");
			expect(reply.errorMessage).toContain(lineTooLong);
			expect(tool.runs).toEqual([]);
			expect(checkTranscript(agent.state.messages)).toEqual([]);
			// The client stopped reading soon after the bound: what it took in stayed near it.
			expect(written).toHaveLength(1);
			expect(written[0]).toBeLessThan(MAX_STREAM_LINE_BYTES * 2);
		});
	}
});

describe("an Anthropic tool_use block without a usable id", () => {
	it("gets an id of its own, runs, and the next requests are made", async () => {
		servers.anthropic.reset();
		servers.anthropic.respond(
			{
				kind: "sse",
				events: [
					anthropic.messageStart("msg_noid"),
					anthropic.blockStart(0, { type: "tool_use", name: "store", input: {} }),
					anthropic.blockStop(0),
					anthropic.blockStart(1, { type: "tool_use", id: 5, name: "store", input: {} }),
					anthropic.blockStop(1),
					anthropic.blockStart(2, { type: "text", text: "" }),
					anthropic.blockDelta(2, { type: "text_delta", text: null }),
					anthropic.blockStop(2),
					anthropic.messageDelta("tool_use"),
					anthropic.messageStop(),
				],
			},
			{ kind: "sse", events: anthropic.textReply("Stored.") },
			{ kind: "sse", events: anthropic.textReply("Hello again") },
		);
		const tool = countingTool();
		const agent = agentWith(anthropicModel(), streamAnthropic, tool);

		await agent.prompt("Store this.");
		const reply = agent.state.messages[1] as AssistantMessage;
		const calls = reply.content.filter((part) => part.type === "toolCall");
		expect(calls.map((call) => [typeof call.id, call.id.length > 0, call.name])).toEqual([
			["string", true, "store"],
			["string", true, "store"],
		]);
		expect(calls[0]?.id).not.toBe(calls[1]?.id);
		expect(reply.content.filter((part) => part.type === "text")).toEqual([{ type: "text", text: "" }]);
		expect(tool.runs).toHaveLength(2);
		expect(agent.state.messages.slice(2, 4)).toMatchObject([
			{ role: "toolResult", toolCallId: calls[0]?.id, isError: false },
			{ role: "toolResult", toolCallId: calls[1]?.id, isError: false },
		]);
		expect(agent.state.messages[4]).toMatchObject({ role: "assistant", stopReason: "stop" });
		expect(checkTranscript(agent.state.messages)).toEqual([]);

		await agent.prompt("Hello?");
		expect(servers.anthropic.requests).toHaveLength(3);
		expect(agent.state.messages.at(-1)).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "Hello again" }] });
	});
});

describe("a tool call the server never ends", () => {
	// Long enough that the streaming preview of its arguments lags their text (it is read again once it grew by an eighth).
	const content = Array.from({ length: 3000 }, (_, line) => `line ${line}`).join("\n");
	const json = JSON.stringify({ path: "big.txt", content });
	const fragments = json.match(/[^]{1,64}/g) ?? [];

	it("from Anthropic (no content_block_stop before message_stop): runs with the arguments its whole text says, and its end is reported", async () => {
		servers.anthropic.reset();
		servers.anthropic.respond(
			{ kind: "sse", events: [anthropic.messageStart("msg_open"), ...anthropic.toolUseBlock(0, "toolu_open", "store", fragments).slice(0, -1), anthropic.messageDelta("tool_use"), anthropic.messageStop()] },
			{ kind: "sse", events: anthropic.textReply("Stored.") },
		);
		const tool = countingTool();
		const agent = agentWith(anthropicModel(), streamAnthropic, tool);
		const ends: string[] = [];
		agent.subscribe((event) => {
			if (event.type === "message_update" && event.assistantMessageEvent.type === "toolcall_end") ends.push(event.assistantMessageEvent.toolCall.id);
		});

		await agent.prompt("Store it.");
		expect(tool.runs).toEqual([{ path: "big.txt", content }]);
		expect(ends).toEqual(["toolu_open"]);
		expect((agent.state.messages[1] as AssistantMessage).content).toEqual([{ type: "toolCall", id: "toolu_open", name: "store", arguments: { path: "big.txt", content } }]);
	});

	it("from the proxy, a fragment after a call's toolcall_end changes nothing: the call runs with the arguments it ended with", async () => {
		// Before, the late fragment was read afresh and replaced the arguments (the mutated-wire property found it).
		servers.proxy.reset();
		servers.proxy.respond(
			{ kind: "stream", frames: [{ type: "start" }, ...proxy.toolCallBlock(0, "call_late", "store", ['{"path":', '"a.txt"}']), { type: "toolcall_delta", contentIndex: 0, delta: '{"path":"b.txt"}' }, { type: "done", reason: "toolUse", usage: proxy.usage(10, 5) }] },
			{ kind: "stream", frames: proxy.textReply("Stored.") },
		);
		const tool = countingTool();
		const agent = agentWith(anthropicModel(), proxyStream, tool);

		await agent.prompt("Store it.");
		expect(tool.runs).toEqual([{ path: "a.txt" }]);
	});

	it("from the proxy (no toolcall_end before done): runs with the arguments its whole text says", async () => {
		servers.proxy.reset();
		servers.proxy.respond(
			{ kind: "stream", frames: [{ type: "start" }, ...proxy.toolCallBlock(0, "call_open", "store", fragments).slice(0, -1), { type: "done", reason: "toolUse", usage: proxy.usage(10, 5) }] },
			{ kind: "stream", frames: proxy.textReply("Stored.") },
		);
		const tool = countingTool();
		const agent = agentWith(anthropicModel(), proxyStream, tool);

		await agent.prompt("Store it.");
		expect(tool.runs).toEqual([{ path: "big.txt", content }]);
		expect((agent.state.messages[1] as AssistantMessage).content).toEqual([{ type: "toolCall", id: "call_open", name: "store", arguments: { path: "big.txt", content } }]);
	});
});
