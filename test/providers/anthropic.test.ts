import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { streamAnthropic } from "../../src/providers/anthropic.js";
import { getModel } from "../../src/providers/models.js";
import { isContextOverflow } from "../../src/providers/overflow.js";
import type { AssistantMessage } from "../../src/types/messages.js";
import type { Context, Model, SimpleStreamOptions } from "../../src/types/model.js";
import type { AssistantMessageEvent } from "../../src/types/stream.js";
import {
	type AnthropicTestServer,
	blockDelta,
	blockStart,
	blockStop,
	errorBody,
	messageDelta,
	messageStart,
	messageStop,
	ping,
	type RawResponse,
	redactedThinkingBlock,
	type SseEvent,
	startAnthropicServer,
	streamError,
	textBlock,
	textReply,
	thinkingBlock,
	toolUseBlock,
} from "./anthropic-server.js";

let server: AnthropicTestServer;
let model: Model;

beforeAll(async () => {
	server = await startAnthropicServer();
	model = { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: server.baseUrl };
});
afterAll(() => server.close());
afterEach(() => server.reset());

const context: Context = {
	systemPrompt: "You are terse.",
	messages: [{ role: "user", content: "hi", timestamp: 1 }],
};

/** An event with the state of its partial message at the time it was emitted. */
type Seen = AssistantMessageEvent & { snapshot?: AssistantMessage | undefined };

async function run(
	options: SimpleStreamOptions = {},
	onEvent?: (event: AssistantMessageEvent) => void,
	ctx: Context = context,
): Promise<{ events: Seen[]; result: AssistantMessage }> {
	const stream = streamAnthropic(model, ctx, { apiKey: "test-key", maxRetries: 0, ...options });
	const events: Seen[] = [];
	for await (const event of stream) {
		// `partial` is live: snapshot it so assertions see what a UI saw at that moment.
		const snapshot = "partial" in event ? (structuredClone(event.partial) as AssistantMessage) : undefined;
		events.push({ ...event, snapshot });
		onEvent?.(event);
	}
	return { events, result: await stream.result() };
}

/** Compact trace: "text_delta[0] Hel", "done toolUse". */
function trace(events: Seen[]): string[] {
	return events.map((e) => {
		switch (e.type) {
			case "text_delta":
			case "thinking_delta":
			case "toolcall_delta":
				return `${e.type}[${e.contentIndex}] ${e.delta}`;
			case "text_end":
			case "thinking_end":
				return `${e.type}[${e.contentIndex}] ${e.content}`;
			case "toolcall_end":
				return `${e.type}[${e.contentIndex}] ${JSON.stringify(e.toolCall.arguments)}`;
			case "done":
				return `done ${e.reason}`;
			case "error":
				return `error ${e.reason}: ${e.error.errorMessage}`;
			case "start":
				return "start";
			default:
				return `${e.type}[${e.contentIndex}]`;
		}
	});
}

describe("streamAnthropic: replies", () => {
	it("streams a text reply with usage, cost and the response id", async () => {
		server.respond({
			kind: "sse",
			events: [
				messageStart("msg_1", {
					input_tokens: 10,
					output_tokens: 1,
					cache_read_input_tokens: 100,
					cache_creation_input_tokens: 20,
				}),
				ping(),
				...textBlock(0, ["Hel", "lo"]),
				messageDelta("end_turn", { output_tokens: 50 }),
				messageStop(),
			],
		});
		const { events, result } = await run();
		expect(trace(events)).toEqual([
			"start",
			"text_start[0]",
			"text_delta[0] Hel",
			"text_delta[0] lo",
			"text_end[0] Hello",
			"done stop",
		]);
		expect(result.content).toEqual([{ type: "text", text: "Hello" }]);
		expect(result.stopReason).toBe("stop");
		expect(result.responseId).toBe("msg_1");
		expect(result.usage).toMatchObject({ input: 10, output: 50, cacheRead: 100, cacheWrite: 20, totalTokens: 180 });
		// Haiku 4.5: $1 in, $5 out, $0.10 cache read, $1.25 cache write per million.
		expect(result.usage.cost.input).toBeCloseTo(0.00001, 12);
		expect(result.usage.cost.output).toBeCloseTo(0.00025, 12);
		expect(result.usage.cost.cacheRead).toBeCloseTo(0.00001, 12);
		expect(result.usage.cost.cacheWrite).toBeCloseTo(0.000025, 12);
		expect(result.usage.cost.total).toBeCloseTo(0.000295, 12);
		expect(result).toMatchObject({ api: "anthropic-messages", provider: "anthropic", model: "claude-haiku-4-5" });
	});

	it("sends the key, the model, cache_control on the system prompt and the last user turn", async () => {
		server.respond({ kind: "sse", events: textReply("ok") });
		await run();
		const [request] = server.requests;
		expect(request?.url).toBe("/v1/messages");
		expect(request?.headers.authorization).toBe("Bearer test-key");
		expect(request?.body).toEqual({
			model: "claude-haiku-4-5",
			max_tokens: 32000,
			stream: true,
			system: [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } }],
			messages: [{ role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] }],
		});
	});

	it("streams thinking with its signature and asks for a thinking budget", async () => {
		server.respond({
			kind: "sse",
			events: [
				messageStart("msg_think"),
				...thinkingBlock(0, ["Let me ", "think"], "sig123"),
				...textBlock(1, ["Done"]),
				messageDelta("end_turn"),
				messageStop(),
			],
		});
		const { events, result } = await run({ reasoning: "medium", temperature: 0.2 });
		expect(trace(events)).toEqual([
			"start",
			"thinking_start[0]",
			"thinking_delta[0] Let me ",
			"thinking_delta[0] think",
			"thinking_end[0] Let me think",
			"text_start[1]",
			"text_delta[1] Done",
			"text_end[1] Done",
			"done stop",
		]);
		expect(result.content[0]).toEqual({ type: "thinking", thinking: "Let me think", thinkingSignature: "sig123" });
		const request = server.requests[0];
		expect(request?.body["thinking"]).toEqual({ type: "enabled", budget_tokens: 8192, display: "summarized" });
		expect(request?.body["max_tokens"]).toBe(32000 + 8192);
		// API version 2026-10-21 rejects sampling parameters outright.
		expect(request?.body).not.toHaveProperty("temperature");
		expect(request?.headers["anthropic-beta"]).toContain("interleaved-thinking-2025-05-14");
	});

	it("honours thinkingBudgets and keeps max_tokens above the budget", async () => {
		server.respond({ kind: "sse", events: textReply("ok") }, { kind: "sse", events: textReply("ok") });
		await run({ reasoning: "high", thinkingBudgets: { high: 4000 } });
		expect(server.requests[0]?.body["thinking"]).toMatchObject({ type: "enabled", budget_tokens: 4000 });
		expect(server.requests[0]?.body["max_tokens"]).toBe(36000);
		await run({ reasoning: "high", maxTokens: 64000 });
		// 64000 + 16384 would exceed the model's 64000: max_tokens is clamped, the budget stays below it.
		expect(server.requests[1]?.body["max_tokens"]).toBe(64000);
		expect(server.requests[1]?.body["thinking"].budget_tokens).toBe(16384);
	});

	it("uses adaptive thinking with an effort level on Claude 4.6+ models", async () => {
		server.respond({ kind: "sse", events: textReply("ok") });
		const opus = { ...getModel("anthropic", "claude-opus-4-7"), baseUrl: server.baseUrl };
		const stream = streamAnthropic(opus, context, { apiKey: "test-key", reasoning: "xhigh" });
		await stream.result();
		expect(server.requests[0]?.body["thinking"]).toEqual({ type: "adaptive", display: "summarized" });
		expect(server.requests[0]?.body["output_config"]).toEqual({ effort: "xhigh" });
		expect(server.requests[0]?.headers["anthropic-beta"]).toBeUndefined();
	});

	it("surfaces redacted thinking as a placeholder that keeps the opaque data", async () => {
		server.respond({
			kind: "sse",
			events: [
				messageStart("msg_r"),
				...redactedThinkingBlock(0, "OPAQUE=="),
				...textBlock(1, ["Hi"]),
				messageDelta("end_turn"),
				messageStop(),
			],
		});
		const { events, result } = await run({ reasoning: "low" });
		expect(trace(events).slice(0, 3)).toEqual(["start", "thinking_start[0]", "thinking_end[0] [Reasoning redacted]"]);
		expect(result.content[0]).toEqual({
			type: "thinking",
			thinking: "[Reasoning redacted]",
			thinkingSignature: "OPAQUE==",
			redacted: true,
		});
	});
});

describe("streamAnthropic: tool calls", () => {
	it("parses arguments split inside strings, escapes and multi-byte characters", async () => {
		const args = { path: "café/naïve 文件.txt", text: 'line1\nline2 "quoted" \\ é 😀', n: 42, nested: { list: [1, 2] } };
		const json = JSON.stringify(args).replace("é", "\\u00e9"); // one escaped, one literal é
		// Fragments cut through a \" escape, a \u escape, a surrogate pair's escape-free UTF-8 and a number.
		const cuts = [3, 9, json.indexOf("\\u") + 2, json.indexOf('\\"') + 1, json.indexOf("😀") + 1, json.indexOf("42") + 1];
		const fragments: string[] = [];
		let from = 0;
		for (const cut of [...cuts].sort((a, b) => a - b)) {
			fragments.push(json.slice(from, cut));
			from = cut;
		}
		fragments.push(json.slice(from));
		expect(fragments.join("")).toBe(json);

		server.respond({
			kind: "sse",
			// 7-byte chunks split the SSE body through multi-byte UTF-8 sequences too.
			chunkBytes: 7,
			events: [
				messageStart("msg_tool"),
				...toolUseBlock(0, "toolu_1", "write", fragments),
				messageDelta("tool_use"),
				messageStop(),
			],
		});
		const { events, result } = await run();
		const deltas = events.filter((e) => e.type === "toolcall_delta");
		expect(deltas.map((e) => (e.type === "toolcall_delta" ? e.delta : "")).join("")).toBe(json);
		// While streaming, the partial message shows the arguments read so far.
		const progressive = deltas.map((e) => e.snapshot?.content[0]).map((c) => (c?.type === "toolCall" ? c.arguments : undefined));
		expect(progressive[0]).toEqual({});
		expect(progressive.some((a) => typeof a?.["path"] === "string" && a["path"].startsWith("caf") && a["path"] !== args.path)).toBe(true);
		expect(progressive.at(-1)).toEqual(args);
		const end = events.find((e) => e.type === "toolcall_end");
		expect(end?.type === "toolcall_end" && end.toolCall).toEqual({ type: "toolCall", id: "toolu_1", name: "write", arguments: JSON.parse(json) });
		expect(result.stopReason).toBe("toolUse");
		expect(trace(events).at(-1)).toBe("done toolUse");
	});

	it("maps two tool calls after text to their positions in the message", async () => {
		server.respond({
			kind: "sse",
			events: [
				messageStart("msg_two"),
				...textBlock(0, ["Checking both."]),
				...toolUseBlock(1, "toolu_a", "read", ['{"path":', '"a.txt"}']),
				...toolUseBlock(2, "toolu_b", "read", ['{"path":"b.txt"}']),
				messageDelta("tool_use"),
				messageStop(),
			],
		});
		const { events, result } = await run();
		expect(trace(events)).toEqual([
			"start",
			"text_start[0]",
			"text_delta[0] Checking both.",
			"text_end[0] Checking both.",
			"toolcall_start[1]",
			'toolcall_delta[1] {"path":',
			'toolcall_delta[1] "a.txt"}',
			'toolcall_end[1] {"path":"a.txt"}',
			"toolcall_start[2]",
			'toolcall_delta[2] {"path":"b.txt"}',
			'toolcall_end[2] {"path":"b.txt"}',
			"done toolUse",
		]);
		expect(result.content.map((c) => (c.type === "toolCall" ? c.id : c.type))).toEqual(["text", "toolu_a", "toolu_b"]);
	});

	it("gives a tool call without arguments an empty object", async () => {
		server.respond({
			kind: "sse",
			events: [
				messageStart("msg_noargs"),
				...toolUseBlock(0, "toolu_now", "current_time", []),
				...toolUseBlock(1, "toolu_now2", "current_time", [""]),
				messageDelta("tool_use"),
				messageStop(),
			],
		});
		const { events, result } = await run();
		// No argument text is also what a call cut off before its arguments has: the ends wait for
		// the message's stop reason (here tool_use, so they come, and the calls run).
		expect(trace(events)).toEqual([
			"start",
			"toolcall_start[0]",
			"toolcall_start[1]",
			"toolcall_delta[1] ",
			"toolcall_end[0] {}",
			"toolcall_end[1] {}",
			"done toolUse",
		]);
		expect(result.content[0]).toEqual({ type: "toolCall", id: "toolu_now", name: "current_time", arguments: {} });
	});
});

describe("streamAnthropic: stop reasons", () => {
	it("ends with length when max_tokens cuts a tool call, keeping what arrived", async () => {
		server.respond({
			kind: "sse",
			events: [
				messageStart("msg_len"),
				...toolUseBlock(0, "toolu_9", "echo", ['{"value":"tru', "nc"]),
				messageDelta("max_tokens", { output_tokens: 7 }),
				messageStop(),
			],
		});
		const { events, result } = await run();
		expect(trace(events).at(-1)).toBe("done length");
		expect(result.stopReason).toBe("length");
		expect(result.content[0]).toMatchObject({ type: "toolCall", arguments: { value: "trunc" } });
	});

	it("maps stop_sequence to stop", async () => {
		server.respond({
			kind: "sse",
			events: [messageStart("msg_seq"), ...textBlock(0, ["a"]), messageDelta("stop_sequence"), messageStop()],
		});
		expect((await run()).result.stopReason).toBe("stop");
	});

	it("turns a refusal into an error that says the model refused", async () => {
		server.respond({
			kind: "sse",
			events: [messageStart("msg_no"), ...textBlock(0, ["I can't"]), messageDelta("refusal"), messageStop()],
		});
		const { events, result } = await run();
		expect(trace(events).at(-1)).toBe('error error: The model refused to answer (stop_reason "refusal")');
		expect(result.stopReason).toBe("error");
		expect(result.content).toEqual([{ type: "text", text: "I can't" }]);
	});
});

describe("streamAnthropic: failures", () => {
	it("reports a mid-stream error event readably, keeping partial content and usage", async () => {
		server.respond({
			kind: "sse",
			events: [
				messageStart("msg_mid", { input_tokens: 5, output_tokens: 1 }),
				blockStart(0, { type: "text", text: "" }),
				blockDelta(0, { type: "text_delta", text: "partial" }),
				streamError("overloaded_error", "Overloaded"),
			],
		});
		const { events, result } = await run();
		expect(trace(events)).toEqual([
			"start",
			"text_start[0]",
			"text_delta[0] partial",
			"error error: overloaded_error: Overloaded",
		]);
		expect(result).toMatchObject({
			stopReason: "error",
			errorMessage: "overloaded_error: Overloaded",
			responseId: "msg_mid",
			content: [{ type: "text", text: "partial" }],
			usage: { input: 5, output: 1, totalTokens: 6 },
		});
	});

	it("reports a stream that ends without message_stop", async () => {
		server.respond({
			kind: "sse",
			events: [messageStart("msg_cut"), blockStart(0, { type: "text", text: "" }), blockDelta(0, { type: "text_delta", text: "cut" })],
		});
		const { events, result } = await run();
		expect(trace(events).at(-1)).toBe("error error: Anthropic stream ended before message_stop");
		expect(result.content).toEqual([{ type: "text", text: "cut" }]);
	});

	it("reports a connection reset mid-stream", async () => {
		server.respond({
			kind: "sse",
			ending: "reset",
			events: [messageStart("msg_reset"), blockStart(0, { type: "text", text: "" }), blockDelta(0, { type: "text_delta", text: "so far" })],
		});
		const { result } = await run();
		expect(result.stopReason).toBe("error");
		expect(result.errorMessage).toMatch(/^Connection lost while streaming/);
		expect(result.content).toEqual([{ type: "text", text: "so far" }]);
	});

	it("reports a connection reset before any response as a bare error", async () => {
		server.respond({ kind: "reset" });
		const { events, result } = await run();
		expect(events.map((e) => e.type)).toEqual(["error"]);
		expect(result.errorMessage).toMatch(/^Connection error/);
	});

	const httpErrors: [number, string, string][] = [
		[400, "invalid_request_error", "prompt is too long: 213462 tokens > 200000 maximum"],
		[401, "authentication_error", "invalid x-api-key"],
		[403, "permission_error", "Your API key does not have permission to use the specified resource."],
		[404, "not_found_error", "model: claude-nope"],
		[413, "request_too_large", "Request exceeds the maximum allowed number of bytes."],
		[429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"],
		[500, "api_error", "Internal server error"],
		[529, "overloaded_error", "Overloaded"],
	];

	it.each(httpErrors)("turns HTTP %i into a bare error event with a readable message", async (status, type, message) => {
		server.respond({ kind: "error", status, body: errorBody(type, message) });
		const { events, result } = await run({ maxRetries: 0 });
		expect(events.map((e) => e.type)).toEqual(["error"]);
		expect(result.stopReason).toBe("error");
		expect(result.errorMessage).toBe(`${status} ${type}: ${message}`);
		expect(result.content).toEqual([]);
		expect(isContextOverflow(result, model.contextWindow)).toBe(status === 400 || status === 413);
	});

	// The SDK passes an error's type and message through as the server sent them: an object there
	// read "[object Object]: Overloaded" (found by mutated-wire.property.test.ts).
	it("leaves out an error's type or message that is not text, mid-stream and in an HTTP error", async () => {
		server.respond({ kind: "sse", events: [messageStart("msg_odd"), { event: "error", data: { type: "error", error: { type: { code: 7 }, message: "Overloaded" } } }] });
		expect((await run()).result.errorMessage).toBe("Overloaded");
		server.respond({ kind: "sse", events: [messageStart("msg_odd"), { event: "error", data: { type: "error", error: { type: "overloaded_error", message: { x: 1 } } } }] });
		expect((await run()).result.errorMessage).toBe('Anthropic\'s stream sent an error event without a message (type "overloaded_error")');
		server.respond({ kind: "error", status: 529, body: { type: "error", error: { type: { a: 1 }, message: "Overloaded" } } });
		expect((await run({ maxRetries: 0 })).result.errorMessage).toBe("529 Overloaded");
	});

	it("says an error event carried no error, rather than ending with its bare data ('null', 'message_start')", async () => {
		server.respond({ kind: "sse", events: [messageStart("msg_odd"), { event: "error", data: null }] });
		expect((await run()).result.errorMessage).toBe('Anthropic\'s stream sent an error event without a type or message: "null"');
		server.respond({ kind: "sse", events: [{ event: "error", data: { type: "message_start" } }] });
		expect((await run()).result.errorMessage).toBe('Anthropic\'s stream sent an error event without a message (type "message_start")');
	});

	it("reads a non-JSON error page, as a proxy in front of the API may send", async () => {
		server.respond({
			kind: "error",
			status: 413,
			body: "<html><body><h1>413 Request Entity Too Large</h1></body></html>",
			headers: { "content-type": "text/html" },
		});
		const { result } = await run();
		expect(result.errorMessage).toBe(`413 Payload Too Large from a proxy or gateway in front of the server (an HTML page, not the API's JSON): "413 Request Entity Too Large"`);
		expect(isContextOverflow(result)).toBe(true);
	});

	it("says a 502 came from a proxy's HTML page, not '502 502 Bad Gateway'", async () => {
		server.respond({
			kind: "error",
			status: 502,
			body: "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>",
			headers: { "content-type": "text/html" },
		});
		const { result } = await run();
		expect(result.errorMessage).toBe(`502 Bad Gateway from a proxy or gateway in front of the server (an HTML page, not the API's JSON): "502 Bad Gateway nginx/1.25.3"`);
	});

	it("names the malformed event of a stream, not only the JSON parser's complaint", async () => {
		server.respond({
			kind: "sse",
			events: [messageStart("msg_bad"), blockStart(0, { type: "text", text: "" }), { event: "content_block_delta", data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"unterminated' }],
		});
		const { result } = await run();
		expect(result.stopReason).toBe("error");
		expect(result.errorMessage).toMatch(/^Malformed event in Anthropic's stream \(event 3, after content_block_start\): not valid JSON \(.+\)$/);
	});

	// Read as an event stream, such an answer held no event: "Anthropic stream ended before
	// message_stop", or without a body the SDK's "Attempted to iterate over a response with no body".
	const notEventStreams: [string, RawResponse, string][] = [
		[
			"an HTML page",
			{ kind: "raw", status: 200, contentType: "text/html; charset=utf-8", body: "<!doctype html><html><head><title>nginx</title></head><body><h1>Welcome to nginx!</h1></body></html>" },
			'200 OK with an HTML page ("Welcome to nginx!")',
		],
		[
			"a message in one JSON body, not streamed",
			{ kind: "raw", status: 200, contentType: "application/json", body: '{"id":"msg_1","type":"message","content":[{"type":"text","text":"Hi"}]}' },
			'200 OK with application/json ({"id":"msg_1","type":"message","content":[{"type":"text","text":"Hi"}]})',
		],
		[
			"an HTML page sent as an event stream",
			{ kind: "raw", status: 200, contentType: "text/event-stream", body: "<html><body><h1>Sign in</h1></body></html>" },
			'200 OK with an HTML page ("Sign in")',
		],
		["text without a content type", { kind: "raw", status: 200, body: "It works!" }, "200 OK with a body without a content type (It works!)"],
		["an empty event stream", { kind: "raw", status: 200, contentType: "text/event-stream", body: "" }, "200 OK with an empty body"],
		["no body at all", { kind: "raw", status: 204 }, "204 No Content without a body"],
	];

	it.each(notEventStreams)("says what came back when a successful answer is not an event stream: %s", async (_what, response, what) => {
		server.respond(response);
		const { events, result } = await run();
		expect(events.map((e) => e.type)).toEqual(["start", "error"]);
		expect(result.stopReason).toBe("error");
		expect(result.errorMessage).toBe(`The server at ${server.baseUrl} answered ${what} instead of Anthropic's event stream (is the model's baseUrl right?)`);
	});

	it("still calls an event stream of pings alone cut short, not something else", async () => {
		server.respond({ kind: "raw", status: 200, contentType: "text/event-stream", body: 'event: ping\ndata: {"type":"ping"}\n\n' });
		const { result } = await run();
		expect(result.errorMessage).toBe("Anthropic stream ended before message_stop");
	});

	// Valid JSON of the wrong shape (from a proxy or a compatible server) gave a bare TypeError:
	// "Cannot read properties of undefined (reading 'type')" named neither the event nor the field.
	const malformedEvents: [string, SseEvent[], string][] = [
		["null", [{ event: "content_block_delta", data: "null" }], "(event 2, after message_start): expected a JSON object with a \"type\", got null"],
		["a number", [{ event: "message_delta", data: "42" }], "(event 2, after message_start): expected a JSON object with a \"type\", got 42"],
		[
			"content_block_start without content_block",
			[{ event: "content_block_start", data: { type: "content_block_start", index: 0 } }],
			'(event 2, content_block_start): no "content_block" object with a "type": {"type":"content_block_start","index":0}',
		],
		[
			"content_block_delta without delta",
			[blockStart(0, { type: "text", text: "" }), { event: "content_block_delta", data: { type: "content_block_delta", index: 0 } }],
			'(event 3, content_block_delta): no "delta" object with a "type": {"type":"content_block_delta","index":0}',
		],
		[
			"content_block_delta without index",
			[blockStart(0, { type: "text", text: "" }), { event: "content_block_delta", data: { type: "content_block_delta", delta: { type: "text_delta", text: "x" } } }],
			'(event 3, content_block_delta): no "index" (a whole number, at least 0): {"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}',
		],
		[
			"message_delta without delta",
			[{ event: "message_delta", data: { type: "message_delta", usage: { output_tokens: 2 } } }],
			'(event 2, message_delta): no "delta" object: {"type":"message_delta","usage":{"output_tokens":2}}',
		],
		[
			"message_delta with a stop_reason that is not text",
			[{ event: "message_delta", data: { type: "message_delta", delta: { stop_reason: { why: "x" } } } }],
			'(event 2, message_delta): "delta.stop_reason" is neither a string nor null: {"type":"message_delta","delta":{"stop_reason":{"why":"x"}}}',
		],
	];

	it.each(malformedEvents)("names the event and what it lacks for valid JSON of the wrong shape: %s", async (_what, events, detail) => {
		server.respond({ kind: "sse", events: [messageStart("msg_shape"), ...events, messageDelta("end_turn"), messageStop()] });
		const { events: seen, result } = await run();
		expect(result.stopReason).toBe("error");
		expect(result.errorMessage).toBe(`Malformed event in Anthropic's stream ${detail}`);
		expect(seen.at(-1)?.type).toBe("error");
		expect(result.responseId).toBe("msg_shape");
	});

	it("names a message_start without its message", async () => {
		server.respond({ kind: "sse", events: [{ event: "message_start", data: { type: "message_start" } }, messageDelta("end_turn"), messageStop()] });
		const { result } = await run();
		expect(result.errorMessage).toBe('Malformed event in Anthropic\'s stream (event 1, message_start): no "message" object: {"type":"message_start"}');
	});

	it("skips fields of the wrong kind inside a block or delta instead of storing them", async () => {
		const start = messageStart("msg_fields");
		(start.data as { message: { model: unknown } }).message.model = 7;
		server.respond({
			kind: "sse",
			events: [
				start,
				blockStart(0, { type: "thinking", thinking: "", signature: 5 }),
				blockDelta(0, { type: "thinking_delta", thinking: "hmm" }),
				blockDelta(0, { type: "signature_delta" }),
				blockDelta(0, { type: "signature_delta", signature: "sig" }),
				blockStop(0),
				blockStart(1, { type: "tool_use", id: "toolu_1", name: "read", input: {} }),
				blockDelta(1, { type: "input_json_delta", partial_json: '{"path":' }),
				blockDelta(1, { type: "input_json_delta" }),
				blockDelta(1, { type: "input_json_delta", partial_json: '"a.txt"}' }),
				blockStop(1),
				messageDelta("tool_use"),
				messageStop(),
			],
		});
		const { result } = await run();
		expect(result.errorMessage).toBeUndefined();
		expect(result.responseModel).toBeUndefined();
		expect(result.content).toEqual([
			{ type: "thinking", thinking: "hmm", thinkingSignature: "sig" },
			{ type: "toolCall", id: "toolu_1", name: "read", arguments: { path: "a.txt" } },
		]);
	});

	it("ends a stream that stalls after the headers within timeoutMs, keeping what arrived", async () => {
		server.respond({
			kind: "sse",
			ending: "stall",
			events: [messageStart("msg_stall"), blockStart(0, { type: "text", text: "" }), blockDelta(0, { type: "text_delta", text: "slow..." })],
		});
		const started = Date.now();
		const { result } = await run({ timeoutMs: 300 });
		expect(Date.now() - started).toBeLessThan(5_000);
		expect(result.stopReason).toBe("error");
		expect(result.errorMessage).toBe("Anthropic's stream stalled: nothing arrived for 300 ms after event 3 (timeoutMs); the request was cancelled");
		expect(result.content).toEqual([{ type: "text", text: "slow..." }]);
	});

	it("retries a 429 after its retry-after, capped by maxRetryDelayMs, then succeeds", async () => {
		server.respond(
			{ kind: "error", status: 429, body: errorBody("rate_limit_error", "slow down"), headers: { "retry-after": "1" } },
			{ kind: "sse", events: textReply("after retry") },
		);
		const started = Date.now();
		const { events, result } = await run({ maxRetries: 2, maxRetryDelayMs: 20 });
		expect(Date.now() - started).toBeLessThan(900);
		expect(server.requests).toHaveLength(2);
		expect(trace(events)[0]).toBe("start");
		expect(result.content).toEqual([{ type: "text", text: "after retry" }]);
	});

	it("waits out a retry the server asked for that is longer than timeoutMs: the silence watched is the body's, from the headers on", async () => {
		// Before, the watch started with the request: the 429's wait counted as silence and the reply failed as "stalled before the first event".
		server.respond(
			{ kind: "error", status: 429, body: errorBody("rate_limit_error", "slow down"), headers: { "retry-after-ms": "700" } },
			{ kind: "sse", events: textReply("after retry") },
		);
		const { result } = await run({ timeoutMs: 300, maxRetries: 1 });
		expect(server.requests).toHaveLength(2);
		expect(result.errorMessage).toBeUndefined();
		expect(result.content).toEqual([{ type: "text", text: "after retry" }]);
	});

	it("retries 529 and 500 with backoff until retries run out", async () => {
		server.respond(
			{ kind: "error", status: 529, body: errorBody("overloaded_error", "Overloaded") },
			{ kind: "error", status: 500, body: errorBody("api_error", "Internal server error") },
			{ kind: "error", status: 529, body: errorBody("overloaded_error", "Overloaded") },
		);
		const { result } = await run({ maxRetries: 2, maxRetryDelayMs: 5 });
		expect(server.requests).toHaveLength(3);
		expect(result.errorMessage).toBe("529 overloaded_error: Overloaded");
	});

	it("follows the server's x-should-retry: a 400 it calls retryable waits no longer than the cap, a 500 it calls final is not retried", async () => {
		server.respond(
			{ kind: "error", status: 400, body: errorBody("invalid_request_error", "try again"), headers: { "x-should-retry": "true", "retry-after": "30" } },
			{ kind: "sse", events: textReply("after retry") },
		);
		const started = Date.now();
		const { result } = await run({ maxRetries: 2, maxRetryDelayMs: 20 });
		expect(Date.now() - started).toBeLessThan(5_000);
		expect(server.requests).toHaveLength(2);
		expect(result.content).toEqual([{ type: "text", text: "after retry" }]);

		server.respond({ kind: "error", status: 500, body: errorBody("api_error", "do not retry"), headers: { "x-should-retry": "false" } });
		const final = await run({ maxRetries: 2, maxRetryDelayMs: 5 });
		expect(server.requests).toHaveLength(3);
		expect(final.result.errorMessage).toBe("500 api_error: do not retry");
	});

	it("does not retry client errors", async () => {
		server.respond({ kind: "error", status: 400, body: errorBody("invalid_request_error", "bad") });
		await run({ maxRetries: 3, maxRetryDelayMs: 5 });
		expect(server.requests).toHaveLength(1);
	});

	it("reports a missing API key without a request", async () => {
		const saved = process.env["ANTHROPIC_API_KEY"];
		delete process.env["ANTHROPIC_API_KEY"];
		try {
			const stream = streamAnthropic(model, context);
			const events: AssistantMessageEvent[] = [];
			for await (const event of stream) events.push(event);
			expect(events.map((e) => e.type)).toEqual(["error"]);
			expect((await stream.result()).errorMessage).toBe(
				"No API key for provider anthropic: set ANTHROPIC_API_KEY or pass apiKey",
			);
			expect(server.requests).toHaveLength(0);
		} finally {
			if (saved !== undefined) process.env["ANTHROPIC_API_KEY"] = saved;
		}
	});
});

describe("streamAnthropic: abort", () => {
	it("aborts mid-stream, keeping the partial content and usage", async () => {
		server.respond({
			kind: "sse",
			ending: "stall",
			events: [
				messageStart("msg_abort", { input_tokens: 10, cache_read_input_tokens: 100 }),
				blockStart(0, { type: "text", text: "" }),
				blockDelta(0, { type: "text_delta", text: "Once upon" }),
			],
		});
		const controller = new AbortController();
		const { events, result } = await run({ signal: controller.signal }, (event) => {
			if (event.type === "text_delta") controller.abort();
		});
		expect(trace(events)).toEqual(["start", "text_start[0]", "text_delta[0] Once upon", "error aborted: Request was aborted"]);
		expect(result).toMatchObject({
			stopReason: "aborted",
			errorMessage: "Request was aborted",
			responseId: "msg_abort",
			content: [{ type: "text", text: "Once upon" }],
			usage: { input: 10, cacheRead: 100 },
		});
	});

	it("ends a stalled stream when the signal fires", async () => {
		server.respond({
			kind: "sse",
			ending: "stall",
			events: [messageStart("msg_stall"), blockStart(0, { type: "text", text: "" }), blockDelta(0, { type: "text_delta", text: "slow..." })],
		});
		// Aborted once the text has arrived, not after a time: loading the SDK on a busy machine took longer than one.
		const controller = new AbortController();
		const { events, result } = await run({ signal: controller.signal }, (event) => {
			if (event.type === "text_delta") controller.abort();
		});
		expect(trace(events).at(-1)).toBe("error aborted: Request was aborted");
		expect(result.content).toEqual([{ type: "text", text: "slow..." }]);
	});

	it("aborts before the response arrives as a bare aborted error", async () => {
		const { events, result } = await run({ signal: AbortSignal.abort() });
		expect(events.map((e) => e.type)).toEqual(["error"]);
		expect(result.stopReason).toBe("aborted");
		expect(result.errorMessage).toBe("Request was aborted");
	});
});

describe("streamAnthropic: hooks", () => {
	it("lets onPayload replace the body and reports the response to onResponse", async () => {
		server.respond({ kind: "sse", events: textReply("ok"), headers: { "x-test": "yes" } });
		const seen: { status?: number; header?: string | undefined; payloadModel?: string } = {};
		await run({
			onPayload: (payload) => {
				seen.payloadModel = (payload as { model: string }).model;
				return { ...(payload as object), max_tokens: 123 };
			},
			onResponse: (response) => {
				seen.status = response.status;
				seen.header = response.headers["x-test"];
			},
		});
		expect(seen).toEqual({ status: 200, header: "yes", payloadModel: "claude-haiku-4-5" });
		expect(server.requests[0]?.body["max_tokens"]).toBe(123);
		expect(server.requests[0]?.body["stream"]).toBe(true);
	});

	it("sends sessionId as request metadata and extra headers", async () => {
		server.respond({ kind: "sse", events: textReply("ok") });
		await run({ sessionId: "session-42", headers: { "x-extra": "1" } });
		expect(server.requests[0]?.body["metadata"]).toEqual({ user_id: "session-42" });
		expect(server.requests[0]?.headers["x-extra"]).toBe("1");
	});
});
