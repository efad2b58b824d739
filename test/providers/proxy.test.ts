import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { streamProxy as piStreamProxy } from "@mariozechner/pi-agent-core";
import { Type } from "typebox";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { convertMessages } from "../../src/providers/anthropic-request.js";
import { streamProxy, type ProxyStreamOptions } from "../../src/providers/proxy.js";
import type { AgentEvent, AgentTool } from "../../src/types/agent.js";
import type { AssistantMessage, ToolResultMessage } from "../../src/types/messages.js";
import type { Context, Model, SimpleStreamOptions } from "../../src/types/model.js";
import type { AssistantMessageEvent } from "../../src/types/stream.js";
import {
	type ProxyFrame,
	type ProxyTestServer,
	type ScriptedResponse,
	startProxyServer,
	textBlock,
	textReply,
	thinkingBlock,
	toolCallBlock,
	usage,
} from "./proxy-server.js";

let server: ProxyTestServer;

beforeAll(async () => {
	server = await startProxyServer();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

const model: Model = {
	id: "claude-haiku-4-5",
	name: "Claude Haiku 4.5",
	api: "anthropic-messages",
	provider: "anthropic",
	baseUrl: "https://api.anthropic.com",
	reasoning: true,
	input: ["text", "image"],
	cost: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
	contextWindow: 200_000,
	maxTokens: 64_000,
};

const context: Context = {
	systemPrompt: "Be brief.",
	messages: [{ role: "user", content: "Weather in Zürich?", timestamp: 1_700_000_000_000 }],
	tools: [{ name: "get_weather", description: "Current weather for a city", parameters: Type.Object({ city: Type.String() }) }],
};

/** The shape both clients' streams share. */
interface StreamLike {
	[Symbol.asyncIterator](): AsyncIterator<unknown>;
	result(): Promise<unknown>;
}

type Client = (model: Model, context: Context, options: ProxyStreamOptions) => StreamLike;

const ours: Client = streamProxy;
const pis: Client = (m, c, o) =>
	piStreamProxy(
		m as unknown as Parameters<typeof piStreamProxy>[0],
		c as unknown as Parameters<typeof piStreamProxy>[1],
		o as unknown as Parameters<typeof piStreamProxy>[2],
	);

function options(extra: Partial<ProxyStreamOptions> = {}): ProxyStreamOptions {
	return { proxyUrl: server.url, authToken: "tok_123", ...extra };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The value, or "pending" if it has not settled within `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | "pending"> {
	let timer: NodeJS.Timeout | undefined;
	const timeout = new Promise<"pending">((resolve) => {
		timer = setTimeout(() => resolve("pending"), ms);
	});
	try {
		return await Promise.race([promise, timeout]);
	} finally {
		clearTimeout(timer);
	}
}

async function eventually(condition: () => boolean, ms = 3_000): Promise<boolean> {
	const deadline = Date.now() + ms;
	while (!condition()) {
		if (Date.now() > deadline) return false;
		await sleep(10);
	}
	return true;
}

/** What a stream produced: each event as it was when emitted (partials are live), and the result. */
interface Recording<E = AssistantMessageEvent> {
	events: E[];
	result: AssistantMessage | "pending";
}

async function record<E = AssistantMessageEvent>(stream: StreamLike, ms = 3_000): Promise<Recording<E>> {
	// Both clients push one live partial message; a copy taken when each event is pushed shows
	// what the event meant then, however far the consumer lags behind.
	const pushedAs = new WeakMap<object, unknown>();
	const producer = stream as StreamLike & { push?: (event: object) => void };
	const push = producer.push?.bind(producer);
	if (push) {
		producer.push = (event) => {
			pushedAs.set(event, structuredClone(event));
			push(event);
		};
	}
	const events: E[] = [];
	const drained = (async () => {
		for await (const event of { [Symbol.asyncIterator]: () => stream[Symbol.asyncIterator]() }) {
			events.push((pushedAs.get(event as object) ?? structuredClone(event)) as E);
		}
	})();
	const result = (await within(stream.result(), ms)) as AssistantMessage | "pending";
	if (result !== "pending") await within(drained, ms);
	return { events, result };
}

async function run(client: Client, response: ScriptedResponse, extra: Partial<ProxyStreamOptions> = {}, settleWithinMs = 3_000): Promise<Recording> {
	server.respond(response);
	return record(client(model, context, options(extra)), settleWithinMs);
}

/** How long a stream that should have settled at once is given before it counts as never settling. */
const neverSettlesAfterMs = 500;

function settled(recording: Recording): AssistantMessage {
	if (recording.result === "pending") throw new Error("the stream never settled");
	return recording.result;
}

/** For comparing the two clients: timestamps zeroed, undefined fields and pi's `partialJson` scratch dropped. */
function comparable(value: unknown): unknown {
	return JSON.parse(JSON.stringify(value), (key, field: unknown) => {
		if (key === "partialJson") return undefined;
		if (key === "timestamp") return 0;
		return field;
	});
}

const stream = (frames: ProxyFrame[], rest: Partial<Omit<Extract<ScriptedResponse, { kind: "stream" }>, "kind" | "frames">> = {}): ScriptedResponse => ({
	kind: "stream",
	frames,
	...rest,
});

const toolReply: ProxyFrame[] = [
	{ type: "start" },
	...thinkingBlock(0, ["The user wants ", "the weather."], "sig_think"),
	...textBlock(1, ["Let me ", "check."]),
	...toolCallBlock(2, "toolu_1", "get_weather", ['{"ci', 'ty":"Zü', 'rich","days":', "3}"]),
	{ type: "done", reason: "toolUse", usage: usage(120, 40) },
];

describe("streamProxy's request", () => {
	it("POSTs { model, context, options } to <proxyUrl>/api/stream with the bearer token, sending only serialisable options", async () => {
		// What an agent passes its stream function: some of it is for the server, some is not.
		const agentOptions: SimpleStreamOptions = {
			signal: new AbortController().signal,
			temperature: 0.2,
			maxTokens: 512,
			reasoning: "low",
			sessionId: "session-1",
			headers: { "x-trace": "abc" },
			metadata: { user_id: "u1" },
			thinkingBudgets: { low: 1024 },
			maxRetryDelayMs: 5_000,
			timeoutMs: 60_000,
			apiKey: "sk-secret",
			onPayload: () => undefined,
		};
		const recording = await run(ours, stream(textReply("Hi")), agentOptions);
		expect(settled(recording).stopReason).toBe("stop");
		const [request] = server.requests;
		expect(request).toMatchObject({ method: "POST", url: "/api/stream" });
		expect(request?.headers["authorization"]).toBe("Bearer tok_123");
		expect(request?.headers["content-type"]).toBe("application/json");
		expect(Object.keys(request?.body ?? {})).toEqual(["model", "context", "options"]);
		expect(request?.body["model"]).toEqual(model);
		expect(request?.body["context"]).toEqual(JSON.parse(JSON.stringify(context)));
		expect(request?.body["options"]).toEqual({
			temperature: 0.2,
			maxTokens: 512,
			reasoning: "low",
			sessionId: "session-1",
			headers: { "x-trace": "abc" },
			metadata: { user_id: "u1" },
			thinkingBudgets: { low: 1024 },
			maxRetryDelayMs: 5_000,
		});
		expect(request?.rawBody).not.toContain("sk-secret");
	});

	it("sends the same request bytes as pi's streamProxy", async () => {
		const sent: Partial<ProxyStreamOptions> = { temperature: 0.5, cacheRetention: "long", transport: "sse", sessionId: "s", reasoning: "high" };
		await run(pis, stream(textReply("Hi")), sent);
		await run(ours, stream(textReply("Hi")), sent);
		expect(server.requests).toHaveLength(2);
		expect(server.requests[1]?.rawBody).toBe(server.requests[0]?.rawBody);
		expect(server.requests[1]?.headers["authorization"]).toBe(server.requests[0]?.headers["authorization"]);
	});

	it("reads the body to its end after done, keeping the connection alive for the next call", async () => {
		const response = stream(textReply("Hi"), { chunkDelayMs: 10 });
		for (const client of [pis, ours]) {
			server.reset();
			expect(settled(await run(client, response)).stopReason).toBe("stop");
			expect(await eventually(() => server.requests[0]?.closed === true)).toBe(true);
			await sleep(50);
			expect(server.requests[0]?.connectionClosed).toBe(false);
		}
	});

	it("accepts a proxyUrl with a trailing slash", async () => {
		const recording = await run(ours, stream(textReply("Hi")), { proxyUrl: `${server.url}/` });
		expect(settled(recording).stopReason).toBe("stop");
		expect(server.requests[0]?.url).toBe("/api/stream");
	});
});

describe("streamProxy rebuilding the message", () => {
	it("builds the message with pi's keys in pi's order, so a transcript stored as JSON is pi's byte for byte", async () => {
		// Ours put stopReason after usage (the order of the other providers' messages); pi's proxy puts it second.
		const theirs = settled(await run(pis, stream(toolReply)));
		const mine = settled(await run(ours, stream(toolReply)));
		expect(Object.keys(mine)).toEqual(Object.keys(theirs));
		expect(JSON.stringify(comparable(mine))).toBe(JSON.stringify(comparable(theirs)));
	});

	it("rebuilds thinking, text and a tool call with signatures, usage and the stop reason", async () => {
		const recording = await run(ours, stream(toolReply));
		expect(recording.events.map((e) => e.type)).toEqual([
			"start",
			...["thinking_start", "thinking_delta", "thinking_delta", "thinking_end"],
			...["text_start", "text_delta", "text_delta", "text_end"],
			...["toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_delta", "toolcall_delta", "toolcall_end"],
			"done",
		]);
		const message = settled(recording);
		expect(message).toMatchObject({
			role: "assistant",
			api: "anthropic-messages",
			provider: "anthropic",
			model: "claude-haiku-4-5",
			stopReason: "toolUse",
			usage: usage(120, 40),
		});
		expect(message.content).toEqual([
			{ type: "thinking", thinking: "The user wants the weather.", thinkingSignature: "sig_think" },
			{ type: "text", text: "Let me check." },
			{ type: "toolCall", id: "toolu_1", name: "get_weather", arguments: { city: "Zürich", days: 3 } },
		]);
		expect(recording.events.find((e) => e.type === "text_end")).toMatchObject({ contentIndex: 1, content: "Let me check." });
		expect(recording.events.find((e) => e.type === "toolcall_end")).toMatchObject({ toolCall: message.content[2] });
	});

	it("keeps redacted reasoning redacted, so the next Anthropic request sends it back as such (a probe: it was an empty thinking block, left out of the request)", async () => {
		const frames: ProxyFrame[] = [
			{ type: "start" },
			{ type: "thinking_start", contentIndex: 0 },
			{ type: "thinking_end", contentIndex: 0, contentSignature: "OPAQUE_REDACTED_DATA==", redacted: true },
			...toolCallBlock(1, "toolu_r", "get_weather", ['{"city":"Bern"}']),
			{ type: "done", reason: "toolUse", usage: usage(10, 5) },
		];
		const message = settled(await run(ours, stream(frames)));
		expect(message.content[0]).toEqual({ type: "thinking", thinking: "[Reasoning redacted]", thinkingSignature: "OPAQUE_REDACTED_DATA==", redacted: true });
		const turns = convertMessages([{ role: "user", content: "weather?", timestamp: 0 }, message], model);
		const assistant = turns.find((turn) => turn.role === "assistant");
		expect(Array.isArray(assistant?.content) ? assistant.content[0] : undefined).toEqual({ type: "redacted_thinking", data: "OPAQUE_REDACTED_DATA==" });
	});

	it("reads a tool call's arguments progressively, as each fragment arrives", async () => {
		const recording = await run(ours, stream(toolReply));
		const readings = recording.events.flatMap((e) => (e.type === "toolcall_delta" ? [e.partial.content[e.contentIndex]] : []));
		expect(readings.map((block) => (block?.type === "toolCall" ? block.arguments : undefined))).toEqual([
			{},
			{ city: "Zü" },
			{ city: "Zürich" },
			{ city: "Zürich", days: 3 },
		]);
	});

	it("reads a tool call's arguments through a fragment that ends inside an escape sequence", async () => {
		const frames: ProxyFrame[] = [{ type: "start" }, ...toolCallBlock(0, "c1", "write", ['{"path":"a.txt","text":"x', "\\", 'u00e9"}']), { type: "done", reason: "toolUse", usage: usage(1, 1) }];
		const recording = await run(ours, stream(frames));
		const readings = recording.events.flatMap((e) => (e.type === "toolcall_delta" ? [e.partial.content[0]] : []));
		for (const reading of readings) expect(reading).toMatchObject({ arguments: { path: "a.txt" } });
		expect(settled(recording).content[0]).toMatchObject({ arguments: { path: "a.txt", text: "xé" } });
	});

	it.each([1, 2, 3, 7, 64])("reads events split every %i bytes, through multi-byte characters", async (chunkBytes) => {
		const frames: ProxyFrame[] = [{ type: "start" }, ...textBlock(0, ["Zürich: ", "18°C ☀️ ", "日本語"]), { type: "done", reason: "stop", usage: usage(3, 4) }];
		const recording = await run(ours, stream(frames, { chunkBytes, chunkDelayMs: 0 }));
		expect(settled(recording).content).toEqual([{ type: "text", text: "Zürich: 18°C ☀️ 日本語" }]);
		expect(recording.events.filter((e) => e.type === "text_delta").map((e) => (e.type === "text_delta" ? e.delta : ""))).toEqual([
			"Zürich: ",
			"18°C ☀️ ",
			"日本語",
		]);
	});

	it.each(["\r\n", "\r"] as const)("accepts %j line endings split across chunks", async (newline) => {
		const recording = await run(ours, stream(textReply("Hi"), { newline, chunkBytes: 5, chunkDelayMs: 0 }));
		expect(settled(recording).content).toEqual([{ type: "text", text: "Hi" }]);
	});

	it("accepts data: without a space, comments, event: and id: lines, and events without blank lines between them", async () => {
		const frames: ProxyFrame[] = [
			{ raw: ": keep-alive\n\n" },
			{ raw: 'event: message\nid: 1\ndata:{"type":"start"}\n' },
			{ raw: 'data:   {"type":"text_start","contentIndex":0}   \n' },
			{ raw: "data:\n\n" },
			{ type: "text_delta", contentIndex: 0, delta: "Hi" },
			{ type: "text_end", contentIndex: 0 },
			{ type: "done", reason: "stop", usage: usage(1, 1) },
		];
		const recording = await run(ours, stream(frames, { noBlankLines: true }));
		expect(recording.events.map((e) => e.type)).toEqual(["start", "text_start", "text_delta", "text_end", "done"]);
		expect(settled(recording).content).toEqual([{ type: "text", text: "Hi" }]);
	});

	it("ignores event types it does not know", async () => {
		const frames: ProxyFrame[] = [{ type: "start" }, { raw: 'data: {"type":"ping","at":1}\n\n' }, ...textReply("Hi").slice(1)];
		const recording = await run(ours, stream(frames));
		expect(recording.events.map((e) => e.type)).toEqual(["start", "text_start", "text_delta", "text_end", "done"]);
	});

	it("passes on the server's error event with its message, usage and the content so far", async () => {
		const frames: ProxyFrame[] = [
			{ type: "start" },
			{ type: "text_start", contentIndex: 0 },
			{ type: "text_delta", contentIndex: 0, delta: "Partial" },
			{ type: "error", reason: "error", errorMessage: "529 overloaded_error: Overloaded", usage: usage(10, 2) },
		];
		const message = settled(await run(ours, stream(frames)));
		expect(message).toMatchObject({ stopReason: "error", errorMessage: "529 overloaded_error: Overloaded", usage: usage(10, 2) });
		expect(message.content).toEqual([{ type: "text", text: "Partial" }]);
	});

	it("fills in an error event's missing message and a terminal event's missing usage fields", async () => {
		const noMessage = settled(await run(ours, stream([{ type: "start" }, { raw: 'data: {"type":"error","reason":"error"}\n\n' }])));
		expect(noMessage).toMatchObject({ stopReason: "error", errorMessage: "The proxy reported an error without a message", usage: usage(0, 0) });
		const partialUsage = settled(await run(ours, stream([{ raw: 'data: {"type":"done","reason":"stop","usage":{"input":7,"output":3}}\n\n' }])));
		expect(partialUsage.usage).toEqual({ ...usage(0, 0), input: 7, output: 3 });
	});
});

const wellFormed: [string, ScriptedResponse][] = [
	["a text reply", stream(textReply("Hello there"))],
	["thinking, text and a tool call, split every 5 bytes", stream(toolReply, { chunkBytes: 5, chunkDelayMs: 0 })],
	[
		"two tool calls with text signatures",
		stream([
			{ type: "start" },
			...textBlock(0, ["Both:"], "text_sig"),
			...toolCallBlock(1, "call_a", "get_weather", ['{"city":', '"Bern"}']),
			...toolCallBlock(2, "call_b", "get_weather", ['{"city":"Ba', 'sel"}']),
			{ type: "done", reason: "toolUse", usage: usage(50, 30) },
		]),
	],
	["a reply cut off by the output limit", stream([{ type: "start" }, ...textBlock(0, ["One, two, "]), { type: "done", reason: "length", usage: usage(5, 64) }])],
	[
		"the server's error event mid-text",
		stream([
			{ type: "start" },
			{ type: "text_start", contentIndex: 0 },
			{ type: "text_delta", contentIndex: 0, delta: "Part" },
			{ type: "error", reason: "error", errorMessage: "Connection lost while streaming", usage: usage(9, 1) },
		]),
	],
	["an abort reported by the server", stream([{ type: "start" }, { type: "error", reason: "aborted", errorMessage: "Request was aborted", usage: usage(0, 0) }])],
];

describe("streamProxy next to pi's streamProxy", () => {
	it.each(wellFormed)("produces the same events and final message for %s", async (_name, response) => {
		const theirs = await run(pis, response);
		const mine = await run(ours, response);
		expect(theirs.result).not.toBe("pending");
		expect(comparable(mine.events)).toEqual(comparable(theirs.events));
		expect(comparable(settled(mine))).toEqual(comparable(theirs.result));
	});

	it.each<[string, ScriptedResponse, number, AssistantMessage["content"]]>([
		["while waiting for the headers", { kind: "hang" }, 50, []],
		[
			"mid-stream",
			stream([{ type: "start" }, { type: "text_start", contentIndex: 0 }, { type: "text_delta", contentIndex: 0, delta: "Hi" }], { ending: "stall" }),
			100,
			[{ type: "text", text: "Hi" }],
		],
	])("ends with stopReason aborted for an abort %s, as pi does, keeping the content", async (_stage, response, abortAfterMs, content) => {
		for (const client of [pis, ours]) {
			const controller = new AbortController();
			const timer = setTimeout(() => controller.abort(), abortAfterMs);
			const recording = await run(client, response, { signal: controller.signal });
			clearTimeout(timer);
			expect(settled(recording)).toMatchObject({ stopReason: "aborted", content });
			expect(recording.events.at(-1)).toMatchObject({ type: "error", reason: "aborted" });
		}
		expect(settled(await run(ours, response, { signal: AbortSignal.timeout(abortAfterMs) })).errorMessage).toBe("Request was aborted");
	});
});

describe("streamProxy fixing pi's defects", () => {
	it("ends with an error saying so when the stream closes without done or error (pi's result never settles)", async () => {
		const response = stream([{ type: "start" }, ...textBlock(0, ["Half an ans"]).slice(0, 2)]);
		const theirs = await run(pis, response, {}, neverSettlesAfterMs);
		expect(theirs.result).toBe("pending");
		const mine = settled(await run(ours, response));
		expect(mine.stopReason).toBe("error");
		expect(mine.errorMessage).toBe(
			'The proxy stream ended without a "done" or "error" event (after event 3): the server closed it before the reply was complete',
		);
		expect(mine.content).toEqual([{ type: "text", text: "Half an ans" }]);
	});

	it("reads a last event that has no newline after it (pi drops it and never settles)", async () => {
		const done = JSON.stringify({ type: "done", reason: "stop", usage: usage(2, 2) });
		const response = stream([{ type: "start" }, ...textBlock(0, ["Hi"]), { raw: `data: ${done}` }]);
		expect((await run(pis, response, {}, neverSettlesAfterMs)).result).toBe("pending");
		expect(settled(await run(ours, response))).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "Hi" }] });
	});

	it("names the proxy stream and the event number for a malformed data line, and hangs up (pi: a bare JSON error, connection left open)", async () => {
		const response = stream([{ type: "start" }, { type: "text_start", contentIndex: 0 }, { raw: 'data: {"type":"text_delta","contentIndex":0,"del\n\n' }], {
			ending: "stall",
		});
		const theirs = settled(await run(pis, response));
		expect(theirs.errorMessage).not.toMatch(/proxy|event/i);
		expect(await eventually(() => server.requests[0]?.closed === true, 300)).toBe(false);

		const mine = settled(await run(ours, response));
		expect(mine.stopReason).toBe("error");
		expect(mine.errorMessage).toMatch(/^Malformed event 3 in the proxy stream: not valid JSON \(.+\): \{"type":"text_delta","contentIndex":0,"del$/);
		expect(await eventually(() => server.requests[1]?.closed === true)).toBe(true);
	});

	it.each([
		['{"type":"text_delta","contentIndex":0}', 'Malformed event 2 in the proxy stream: text_delta needs "delta" to be a string'],
		['{"type":"text_start","contentIndex":-1}', 'Malformed event 2 in the proxy stream: text_start needs "contentIndex" to be a non-negative integer'],
		['{"type":"toolcall_start","contentIndex":0,"id":"c1"}', 'Malformed event 2 in the proxy stream: toolcall_start needs "toolName" to be a non-empty string'],
		['{"type":"toolcall_start","contentIndex":0,"id":"c1","toolName":""}', 'Malformed event 2 in the proxy stream: toolcall_start needs "toolName" to be a non-empty string'],
		['{"type":"toolcall_start","contentIndex":0,"id":"","toolName":"store"}', 'Malformed event 2 in the proxy stream: toolcall_start needs "id" to be a non-empty string'],
		['{"type":"done","reason":"error","usage":{}}', 'Malformed event 2 in the proxy stream: done needs "reason" to be one of stop, length, toolUse'],
		["[1,2]", 'Malformed event 2 in the proxy stream: expected an object with a "type"'],
		['{"contentIndex":0}', 'Malformed event 2 in the proxy stream: no "type" field'],
		['{"type":"text_delta","contentIndex":0,"delta":"x"}', "Out-of-order event 2 in the proxy stream: text_delta for content 0, which was never started"],
		['{"type":"text_start","contentIndex":2}', "Out-of-order event 2 in the proxy stream: text_start for content 2, but the message has 0 block(s) so far"],
	])("reports %s readably, by its number", async (line, message) => {
		const recording = await run(ours, stream([{ type: "start" }, { raw: `data: ${line}\n\n` }, ...textReply("never read").slice(1)]));
		expect(settled(recording).stopReason).toBe("error");
		expect(settled(recording).errorMessage?.startsWith(message)).toBe(true);
	});

	it("reports a delta for a block of another kind by its number (pi: a message without the event)", async () => {
		const response = stream([{ type: "start" }, ...toolCallBlock(0, "c1", "get_weather", ["{}"]).slice(0, 1), { type: "text_delta", contentIndex: 0, delta: "x" }]);
		expect(settled(await run(pis, response)).errorMessage).toBe("Received text_delta for non-text content");
		expect(settled(await run(ours, response)).errorMessage).toBe("Out-of-order event 3 in the proxy stream: text_delta for content 0, which is a tool call");
	});

	it("leaves the message it returned alone when events follow the terminal one (pi keeps changing it)", async () => {
		const response = stream([...textReply("Hi"), { type: "text_delta", contentIndex: 0, delta: " and more" }], { chunkDelayMs: 20 });
		const theirs = settled(await run(pis, response));
		await eventually(() => server.requests[0]?.closed === true);
		expect(theirs.content).toEqual([{ type: "text", text: "Hi and more" }]);

		const mine = settled(await run(ours, response));
		await eventually(() => server.requests[1]?.closed === true);
		expect(mine.content).toEqual([{ type: "text", text: "Hi" }]);
	});

	it("keeps a tool call's JSON text out of the message (pi leaks partialJson into an error's content)", async () => {
		const response = stream([{ type: "start" }, ...toolCallBlock(0, "c1", "get_weather", ['{"city":"Be']).slice(0, 2)], { ending: "reset" });
		const theirs = settled(await run(pis, response));
		expect(theirs.content[0]).toHaveProperty("partialJson", '{"city":"Be');
		const mine = settled(await run(ours, response));
		expect(mine.content).toEqual([{ type: "toolCall", id: "c1", name: "get_weather", arguments: { city: "Be" } }]);
		expect(mine.errorMessage).toMatch(/^The proxy stream broke off after event 3: /);
	});

	it.each<[string, ScriptedResponse, string, string]>([
		["a JSON error", { kind: "plain", status: 401, body: { error: "Invalid token" } }, "Proxy error: 401 Unauthorized: Invalid token", "Proxy error: Invalid token"],
		[
			"a JSON error object",
			{ kind: "plain", status: 400, body: { error: { type: "invalid_request_error", message: "prompt is too long: 210000 tokens > 200000 maximum" } } },
			"Proxy error: 400 Bad Request: invalid_request_error: prompt is too long: 210000 tokens > 200000 maximum",
			"Proxy error: [object Object]",
		],
		[
			"an HTML error page",
			{
				kind: "plain",
				status: 502,
				contentType: "text/html",
				body: "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>",
			},
			`Proxy error: 502 Bad Gateway from a proxy or gateway in front of the server (an HTML page, not the API's JSON): "502 Bad Gateway nginx"`,
			"Proxy error: 502 Bad Gateway",
		],
		["a plain-text error", { kind: "plain", status: 500, body: "upstream   timed out\n" }, "Proxy error: 500 Internal Server Error: upstream timed out", "Proxy error: 500 Internal Server Error"],
		["an empty body", { kind: "plain", status: 503, body: "" }, "Proxy error: 503 Service Unavailable (empty body)", "Proxy error: 503 Service Unavailable"],
	])("gives a readable message for an error status with %s", async (_name, response, mine, theirs) => {
		expect(settled(await run(pis, response)).errorMessage).toBe(theirs);
		const message = settled(await run(ours, response));
		expect(message).toMatchObject({ stopReason: "error", errorMessage: mine, content: [] });
	});

	it.each<[string, ScriptedResponse, string]>([
		[
			"an HTML page (a wrong proxyUrl)",
			{ kind: "plain", status: 200, contentType: "text/html; charset=utf-8", body: "<!doctype html><html><body><h1>My App</h1></body></html>" },
			'an HTML page ("My App")',
		],
		["JSON", { kind: "plain", status: 200, body: { error: "streaming disabled" } }, "application/json (streaming disabled)"],
	])("reports a 200 answer with %s instead of waiting forever (pi never settles)", async (_name, response, body) => {
		expect((await run(pis, response, {}, neverSettlesAfterMs)).result).toBe("pending");
		expect(settled(await run(ours, response)).errorMessage).toBe(
			`The proxy at ${server.url}/api/stream answered 200 OK with ${body}, not an event stream (is proxyUrl right?)`,
		);
	});
});

describe("streamProxy when the request fails or is aborted", () => {
	it("ends with a readable error when nothing listens at proxyUrl", async () => {
		const closed = createServer();
		await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
		const { port } = closed.address() as AddressInfo;
		await new Promise<void>((resolve) => closed.close(() => resolve()));
		const message = settled(await record(ours(model, context, options({ proxyUrl: `http://127.0.0.1:${port}` }))));
		expect(message.stopReason).toBe("error");
		expect(message.errorMessage).toBe(`The request to the proxy at http://127.0.0.1:${port}/api/stream failed: connect ECONNREFUSED 127.0.0.1:${port}`);
	});

	it("ends with a readable error when the server drops the connection before answering", async () => {
		const message = settled(await run(ours, { kind: "reset" }));
		expect(message.stopReason).toBe("error");
		expect(message.errorMessage).toMatch(new RegExp(`^The request to the proxy at ${server.url}/api/stream failed: \\S`));
	});

	it("ends with a readable error and keeps the content when the connection drops mid-stream", async () => {
		const message = settled(await run(ours, stream([{ type: "start" }, ...textBlock(0, ["Hel"]).slice(0, 2)], { ending: "reset" })));
		expect(message).toMatchObject({ stopReason: "error", content: [{ type: "text", text: "Hel" }] });
		expect(message.errorMessage).toMatch(/^The proxy stream broke off after event 3: /);
	});

	it("cancels a stream that stalls for timeoutMs, saying where it stalled", async () => {
		const started = Date.now();
		const mid = settled(await run(ours, stream([{ type: "start" }], { ending: "stall" }), { timeoutMs: 200 }));
		expect(Date.now() - started).toBeLessThan(2_000);
		expect(mid).toMatchObject({
			stopReason: "error",
			errorMessage: "The proxy stream stalled: nothing arrived for 200 ms after event 1 (timeoutMs); the request was cancelled",
		});
		expect(await eventually(() => server.requests[0]?.closed === true)).toBe(true);
		const beforeHeaders = settled(await run(ours, { kind: "hang" }, { timeoutMs: 200 }));
		expect(beforeHeaders.errorMessage).toBe("The proxy stream stalled: nothing arrived for 200 ms before the response headers (timeoutMs); the request was cancelled");
	});

	it("sends no request when the signal is already aborted", async () => {
		const recording = await record(ours(model, context, options({ signal: AbortSignal.abort() })));
		expect(settled(recording)).toMatchObject({ stopReason: "aborted", errorMessage: "Request was aborted" });
		expect(recording.events.map((e) => e.type)).toEqual(["error"]);
		await sleep(20);
		expect(server.requests).toHaveLength(0);
	});

	it("never throws, even for a proxyUrl that is not a URL", async () => {
		const message = settled(await record(ours(model, context, options({ proxyUrl: "not a url" }))));
		expect(message.stopReason).toBe("error");
		expect(message.errorMessage).toMatch(/^The request to the proxy at not a url\/api\/stream failed: /);
	});
});

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

describe("Agent over streamProxy", () => {
	it("runs a tool round trip through the proxy and sends the tool result back in the next context", async () => {
		server.respond(
			stream(
				[
					{ type: "start" },
					...textBlock(0, ["Let me check."]),
					...toolCallBlock(1, "toolu_w1", "get_weather", ['{"ci', 'ty":"Zürich"}']),
					{ type: "done", reason: "toolUse", usage: usage(50, 30) },
				],
				{ chunkBytes: 11, chunkDelayMs: 0 },
			),
			stream(textReply("It is 18°C and clear in Zürich.")),
		);
		const proxyUrl = server.url;
		const authToken = "tok_agent";
		const agent = new Agent({
			initialState: { model, systemPrompt: "You answer weather questions.", tools: [weather] },
			streamFn: (m, c, o) => streamProxy(m, c, { ...o, proxyUrl, authToken }),
			sessionId: "session-42",
		});
		const events: AgentEvent[] = [];
		agent.subscribe((event) => {
			events.push(event);
		});

		await within(agent.prompt("Weather in Zürich?"), 10_000);

		expect(events[0]?.type).toBe("agent_start");
		expect(events.at(-1)?.type).toBe("agent_end");
		expect(events.find((e) => e.type === "tool_execution_end")).toMatchObject({ toolCallId: "toolu_w1", toolName: "get_weather", isError: false });
		const messages = agent.state.messages;
		expect(messages.map((m) => ("role" in m ? m.role : "?"))).toEqual(["user", "assistant", "toolResult", "assistant"]);
		expect((messages[1] as AssistantMessage).content[1]).toEqual({ type: "toolCall", id: "toolu_w1", name: "get_weather", arguments: { city: "Zürich" } });
		expect((messages[2] as ToolResultMessage).content).toEqual([{ type: "text", text: "Zürich: 18°C, clear" }]);
		expect(messages[3]).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "It is 18°C and clear in Zürich." }] });

		expect(server.requests).toHaveLength(2);
		expect(server.requests[1]?.headers["authorization"]).toBe("Bearer tok_agent");
		expect(server.requests[1]?.body["options"]).toMatchObject({ sessionId: "session-42" });
		const secondContext = server.requests[1]?.body["context"] as Context;
		expect(secondContext.systemPrompt).toBe("You answer weather questions.");
		expect(secondContext.tools?.map((t) => t.name)).toEqual(["get_weather"]);
		expect(secondContext.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult"]);
		expect(secondContext.messages[2]).toMatchObject({ role: "toolResult", toolCallId: "toolu_w1", content: [{ type: "text", text: "Zürich: 18°C, clear" }] });
	});
});
