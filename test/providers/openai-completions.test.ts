import { createServer, type AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { streamOpenAICompletions } from "../../src/providers/openai-completions.js";
import { createOpenAICompatibleModel } from "../../src/providers/openai-models.js";
import type { OpenAICompletionsOptions } from "../../src/providers/openai-request.js";
import { isContextOverflow } from "../../src/providers/overflow.js";
import type { AssistantMessage } from "../../src/types/messages.js";
import type { Context, Model } from "../../src/types/model.js";
import type { AssistantMessageEvent } from "../../src/types/stream.js";
import {
	chunk,
	errorBody,
	finishChunk,
	type OpenAITestServer,
	reasoningChunks,
	roleChunk,
	startOpenAIServer,
	textChunks,
	textReply,
	toolCallChunk,
	toolCallChunks,
	usageChunk,
} from "./openai-server.js";

let server: OpenAITestServer;
let model: Model;

beforeAll(async () => {
	server = await startOpenAIServer();
	model = createOpenAICompatibleModel({
		baseUrl: server.baseUrl,
		id: "test-model",
		cost: { input: 1, output: 2, cacheRead: 0.5, cacheWrite: 0 },
	});
});
afterAll(() => server.close());
afterEach(() => server.reset());

const context: Context = {
	systemPrompt: "You are terse.",
	messages: [{ role: "user", content: "hi", timestamp: 1 }],
};

/** A port nothing listens on: bound by the OS, then released. */
async function unusedPort(): Promise<number> {
	const probe = createServer();
	await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
	const { port } = probe.address() as AddressInfo;
	await new Promise<void>((resolve) => probe.close(() => resolve()));
	return port;
}

/** An event with the state of its partial message at the time it was emitted. */
type Seen = AssistantMessageEvent & { snapshot?: AssistantMessage };

async function run(
	options: OpenAICompletionsOptions = {},
	onEvent?: (event: AssistantMessageEvent) => void,
	callModel: Model = model,
	ctx: Context = context,
): Promise<{ events: Seen[]; result: AssistantMessage }> {
	const stream = streamOpenAICompletions(callModel, ctx, { apiKey: "test-key", maxRetries: 0, ...options });
	const events: Seen[] = [];
	for await (const event of stream) {
		// `partial` is live: snapshot it so assertions see what a UI saw at that moment.
		const snapshot = "partial" in event ? (structuredClone(event.partial) as AssistantMessage) : undefined;
		events.push({ ...event, ...(snapshot ? { snapshot } : {}) });
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
				return `${e.type}[${e.contentIndex}] ${e.toolCall.name} ${JSON.stringify(e.toolCall.arguments)}`;
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

describe("streamOpenAICompletions: replies", () => {
	it("streams a text reply with usage from the last chunk, cost and the response id", async () => {
		server.respond({
			kind: "sse",
			frames: [
				roleChunk("chatcmpl-1"),
				...textChunks(["Hel", "lo"], "chatcmpl-1"),
				chunk({ id: "chatcmpl-1", delta: {}, finishReason: "stop" }),
				usageChunk({ prompt_tokens: 100, completion_tokens: 20, cached_tokens: 60 }),
			],
		});
		const { events, result } = await run();
		expect(trace(events)).toEqual(["start", "text_start[0]", "text_delta[0] Hel", "text_delta[0] lo", "text_end[0] Hello", "done stop"]);
		expect(result.content).toEqual([{ type: "text", text: "Hello" }]);
		expect(result).toMatchObject({ stopReason: "stop", responseId: "chatcmpl-1", api: "openai-completions", model: "test-model" });
		// Cached prompt tokens are reads, not input: 100 prompt = 40 input + 60 cache read.
		expect(result.usage).toMatchObject({ input: 40, output: 20, cacheRead: 60, cacheWrite: 0, totalTokens: 120 });
		// $1 in, $2 out, $0.50 cache read per million.
		expect(result.usage.cost.input).toBeCloseTo(0.00004, 12);
		expect(result.usage.cost.output).toBeCloseTo(0.00004, 12);
		expect(result.usage.cost.cacheRead).toBeCloseTo(0.00003, 12);
		expect(result.usage.cost.total).toBeCloseTo(0.00011, 12);
		expect(result.errorMessage).toBeUndefined();
	});

	it("sends the key, the model, the system prompt and asks for usage in the stream", async () => {
		server.respond({ kind: "sse", frames: textReply("ok") });
		await run();
		const [request] = server.requests;
		expect(request?.url).toBe("/v1/chat/completions");
		expect(request?.headers.authorization).toBe("Bearer test-key");
		// A local server: no store, no developer role, no output limit unless asked.
		expect(request?.body).toEqual({
			model: "test-model",
			messages: [
				{ role: "system", content: "You are terse." },
				{ role: "user", content: "hi" },
			],
			stream: true,
			stream_options: { include_usage: true },
		});
	});

	it("records a response model that differs from the requested one", async () => {
		server.respond({
			kind: "sse",
			frames: [chunk({ model: "test-model-2025-01", delta: { content: "x" } }), finishChunk("stop")],
		});
		const { result } = await run();
		expect(result.responseModel).toBe("test-model-2025-01");
	});

	it("streams reasoning_content as thinking before the answer and remembers its field", async () => {
		server.respond({
			kind: "sse",
			frames: [roleChunk(), ...reasoningChunks(["Let me ", "think"]), ...textChunks(["Done"]), finishChunk("stop")],
		});
		const { events, result } = await run();
		expect(trace(events)).toEqual([
			"start",
			"thinking_start[0]",
			"thinking_delta[0] Let me ",
			"thinking_delta[0] think",
			"text_start[1]",
			"text_delta[1] Done",
			"thinking_end[0] Let me think",
			"text_end[1] Done",
			"done stop",
		]);
		expect(result.content).toEqual([
			{ type: "thinking", thinking: "Let me think", thinkingSignature: "reasoning_content" },
			{ type: "text", text: "Done" },
		]);
	});

	it("reads the reasoning field and does not double text a server sends in two fields", async () => {
		server.respond({
			kind: "sse",
			frames: [
				chunk({ delta: { reasoning: "Hmm", reasoning_content: "Hmm" } }),
				chunk({ delta: { reasoning: " ok" } }),
				...textChunks(["Yes"]),
				finishChunk("stop"),
			],
		});
		const { result } = await run();
		expect(result.content[0]).toEqual({ type: "thinking", thinking: "Hmm ok", thinkingSignature: "reasoning_content" });
	});

	it("asks a reasoning model for the requested effort", async () => {
		server.respond({ kind: "sse", frames: textReply("ok") });
		const reasoner = createOpenAICompatibleModel({ baseUrl: server.baseUrl, id: "reasoner", reasoning: true });
		await run({ reasoning: "high" }, undefined, reasoner);
		expect(server.requests[0]?.body["reasoning_effort"]).toBe("high");
	});

	it("decodes a body split into 5-byte chunks with CRLF lines and keep-alive comments", async () => {
		const text = "Grüße, 世界 😀";
		server.respond({
			kind: "sse",
			chunkBytes: 5,
			newline: "\r\n",
			frames: [roleChunk(), { comment: "keep-alive" }, ...textChunks([...text].map((c) => c)), finishChunk("stop")],
		});
		const { result } = await run();
		expect(result.content).toEqual([{ type: "text", text }]);
	});
});

describe("streamOpenAICompletions: servers that bend the format", () => {
	it("reads a complete JSON completion from a server that ignores stream: true", async () => {
		server.respond({
			kind: "plain",
			contentType: "application/json",
			body: {
				id: "chatcmpl-whole",
				object: "chat.completion",
				model: "test-model",
				choices: [
					{
						index: 0,
						message: {
							role: "assistant",
							content: "Both.",
							reasoning_content: "two calls",
							tool_calls: [
								{ id: "call_1", type: "function", function: { name: "a", arguments: '{"x":1}' } },
								{ id: "call_2", type: "function", function: { name: "b", arguments: "{}" } },
							],
						},
						finish_reason: "tool_calls",
					},
				],
				usage: { prompt_tokens: 12, completion_tokens: 8, total_tokens: 20 },
			},
		});
		const { events, result } = await run();
		expect(trace(events)).toEqual([
			"start",
			"thinking_start[0]",
			"thinking_delta[0] two calls",
			"text_start[1]",
			"text_delta[1] Both.",
			"toolcall_start[2]",
			'toolcall_delta[2] {"x":1}',
			"toolcall_start[3]",
			"toolcall_delta[3] {}",
			"thinking_end[0] two calls",
			"text_end[1] Both.",
			'toolcall_end[2] a {"x":1}',
			"toolcall_end[3] b {}",
			"done toolUse",
		]);
		expect(result).toMatchObject({ responseId: "chatcmpl-whole", usage: { input: 12, output: 8 } });
	});

	it("says so when a 200 response is an HTML page (a captive portal or proxy login)", async () => {
		server.respond({ kind: "plain", contentType: "text/html", body: "<html><body><h1>Please sign in</h1></body></html>" });
		const { result } = await run();
		expect(result.errorMessage).toBe('The provider answered with an HTML page instead of an event stream (a proxy or login page?): "Please sign in"');
	});

	it("reads content sent as an array of text parts", async () => {
		server.respond({
			kind: "sse",
			frames: [chunk({ delta: { content: [{ type: "text", text: "Bon" }, { type: "text", text: "jour" }] } }), finishChunk("stop")],
		});
		expect((await run()).result.content).toEqual([{ type: "text", text: "Bonjour" }]);
	});
});

describe("streamOpenAICompletions: tool calls", () => {
	it("streams parallel tool calls whose arguments are split across chunks", async () => {
		const args = { path: "café/naïve 文件.txt", text: 'line1\nline2 "quoted" \\ 😀', n: 42 };
		const json = JSON.stringify(args);
		const cut = (s: string, at: number[]) => [...at, s.length].map((end, i) => s.slice(i === 0 ? 0 : at[i - 1], end));
		server.respond({
			kind: "sse",
			// 7-byte chunks split the SSE body through multi-byte UTF-8 sequences too.
			chunkBytes: 7,
			frames: [
				roleChunk(),
				...textChunks(["Reading both."]),
				...toolCallChunks(0, "call_a", "write", cut(json, [3, 9, json.indexOf('\\"') + 1, json.indexOf("😀") + 1])),
				...toolCallChunks(1, "call_b", "read", ['{"path":', '"b.txt"}']),
				finishChunk("tool_calls"),
				usageChunk({ prompt_tokens: 50, completion_tokens: 30 }),
			],
		});
		const { events, result } = await run();
		expect(trace(events)).toEqual([
			"start",
			"text_start[0]",
			"text_delta[0] Reading both.",
			"toolcall_start[1]",
			"toolcall_delta[1] ",
			...cut(json, [3, 9, json.indexOf('\\"') + 1, json.indexOf("😀") + 1]).map((f) => `toolcall_delta[1] ${f}`),
			"toolcall_start[2]",
			"toolcall_delta[2] ",
			'toolcall_delta[2] {"path":',
			'toolcall_delta[2] "b.txt"}',
			"text_end[0] Reading both.",
			`toolcall_end[1] write ${json}`,
			'toolcall_end[2] read {"path":"b.txt"}',
			"done toolUse",
		]);
		expect(result.content).toEqual([
			{ type: "text", text: "Reading both." },
			{ type: "toolCall", id: "call_a", name: "write", arguments: args },
			{ type: "toolCall", id: "call_b", name: "read", arguments: { path: "b.txt" } },
		]);
		// While streaming, the partial message shows the arguments read so far.
		const progressive = events
			.filter((e) => e.type === "toolcall_delta" && e.contentIndex === 1)
			.map((e) => e.snapshot?.content[1])
			.map((c) => (c?.type === "toolCall" ? c.arguments : undefined));
		expect(progressive.some((a) => typeof a?.["path"] === "string" && a["path"] !== args.path)).toBe(true);
		expect(result.usage).toMatchObject({ input: 50, output: 30 });
	});

	it("absorbs tool-call quirks: no index, shared index 0, missing or repeated ids, object arguments", async () => {
		server.respond({
			kind: "sse",
			frames: [
				// No index: matched by id, and a chunk with neither continues the latest call.
				toolCallChunk({ id: "call_x", name: "alpha", arguments: '{"a":' }),
				toolCallChunk({ arguments: "1}" }),
				// Every call at index 0, told apart by a new id; the name repeated in every chunk.
				toolCallChunk({ index: 0, id: "call_y", name: "beta", arguments: '{"b":' }),
				toolCallChunk({ index: 0, id: "call_y", name: "beta", arguments: "2}" }),
				toolCallChunk({ index: 0, id: "call_z", name: "gamma", arguments: "{}" }),
				// No id at all, arguments as an object.
				toolCallChunk({ index: 5, name: "delta", arguments: { d: [4] } }),
				// An id already used by an earlier call in this reply.
				toolCallChunk({ index: 6, id: "call_y", name: "epsilon", arguments: "" }),
				finishChunk("tool_calls"),
			],
		});
		const { result } = await run();
		const calls = result.content.flatMap((c) => (c.type === "toolCall" ? [c] : []));
		expect(calls.map((c) => [c.name, c.arguments])).toEqual([
			["alpha", { a: 1 }],
			["beta", { b: 2 }],
			["gamma", {}],
			["delta", { d: [4] }],
			["epsilon", {}],
		]);
		expect(calls.slice(0, 3).map((c) => c.id)).toEqual(["call_x", "call_y", "call_z"]);
		expect(calls[3]?.id).toMatch(/^call_[a-z0-9]+$/);
		expect(new Set(calls.map((c) => c.id)).size).toBe(5);
		expect(result.stopReason).toBe("toolUse");
	});

	it("keeps OpenRouter's encrypted reasoning on its tool call, to be sent back with it", async () => {
		const detail = { type: "reasoning.encrypted", id: "call_g", data: "OPAQUE", format: "google-gemini-v1", index: 0 };
		server.respond({
			kind: "sse",
			frames: [
				toolCallChunk({ index: 0, id: "call_g", name: "search", arguments: '{"q":"x"}' }),
				chunk({ delta: { reasoning_details: [detail] } }),
				finishChunk("tool_calls"),
			],
		});
		const { result } = await run();
		expect(result.content[0]).toMatchObject({ type: "toolCall", id: "call_g", thoughtSignature: JSON.stringify(detail) });
	});

	it("reports toolUse when a server answers with tool calls but finish_reason stop", async () => {
		server.respond({
			kind: "sse",
			frames: [toolCallChunk({ index: 0, id: "call_1", name: "get_time", arguments: "{}" }), finishChunk("stop")],
		});
		const { events, result } = await run();
		expect(trace(events).at(-1)).toBe("done toolUse");
		expect(result.stopReason).toBe("toolUse");
	});
});

describe("streamOpenAICompletions: stop reasons", () => {
	it("ends with length when the limit cuts a tool call, keeping what arrived", async () => {
		server.respond({
			kind: "sse",
			frames: [...toolCallChunks(0, "call_9", "echo", ['{"value":"tru', "nc"]), finishChunk("length")],
		});
		const { events, result } = await run({ maxTokens: 7 });
		expect(trace(events).at(-1)).toBe("done length");
		expect(result.stopReason).toBe("length");
		expect(result.content[0]).toMatchObject({ type: "toolCall", id: "call_9", arguments: { value: "trunc" } });
		expect(server.requests[0]?.body["max_tokens"]).toBe(7);
	});

	it("turns a content filter stop into an error that says so, keeping the partial text", async () => {
		server.respond({ kind: "sse", frames: [...textChunks(["I can"]), finishChunk("content_filter")] });
		const { events, result } = await run();
		expect(trace(events).at(-1)).toBe(
			'error error: The provider\'s content filter stopped the reply (finish_reason "content_filter")',
		);
		expect(result.content).toEqual([{ type: "text", text: "I can" }]);
	});

	it("reports an unknown finish reason, and one that means overflow is recognised as such", async () => {
		server.respond({ kind: "sse", frames: [finishChunk("model_context_window_exceeded")] });
		const { result } = await run();
		expect(result.errorMessage).toBe('The provider ended the reply with finish_reason "model_context_window_exceeded"');
		expect(isContextOverflow(result, model.contextWindow)).toBe(true);
	});
});

describe("streamOpenAICompletions: abort", () => {
	it("aborts mid-stream, keeping the partial content", async () => {
		server.respond({ kind: "sse", ending: "stall", frames: [roleChunk("chatcmpl-abort"), ...textChunks(["Once upon"])] });
		const controller = new AbortController();
		const { events, result } = await run({ signal: controller.signal }, (event) => {
			if (event.type === "text_delta") controller.abort();
		});
		expect(trace(events)).toEqual(["start", "text_start[0]", "text_delta[0] Once upon", "error aborted: Request was aborted"]);
		expect(result).toMatchObject({
			stopReason: "aborted",
			errorMessage: "Request was aborted",
			responseId: "chatcmpl-abort",
			content: [{ type: "text", text: "Once upon" }],
		});
	});

	it("aborts before the response arrives as a bare aborted error", async () => {
		const { events, result } = await run({ signal: AbortSignal.abort() });
		expect(events.map((e) => e.type)).toEqual(["error"]);
		expect(result).toMatchObject({ stopReason: "aborted", errorMessage: "Request was aborted" });
	});

	it("aborts while waiting for the headers", async () => {
		server.respond({ kind: "hang" });
		const controller = new AbortController();
		const stream = streamOpenAICompletions(model, context, { apiKey: "k", maxRetries: 0, signal: controller.signal });
		setTimeout(() => controller.abort(), 50);
		const result = await stream.result();
		expect(result).toMatchObject({ stopReason: "aborted", errorMessage: "Request was aborted" });
	});
});

describe("streamOpenAICompletions: failures", () => {
	it("reports a connection reset mid-stream, keeping what arrived", async () => {
		server.respond({ kind: "sse", ending: "reset", frames: [roleChunk(), ...textChunks(["so far"])] });
		const { result } = await run();
		expect(result.stopReason).toBe("error");
		expect(result.errorMessage).toMatch(/^Connection lost while streaming/);
		expect(result.content).toEqual([{ type: "text", text: "so far" }]);
	});

	it("reports a connection reset before any response as a bare error", async () => {
		server.respond({ kind: "reset" });
		const { events, result } = await run();
		expect(events.map((e) => e.type)).toEqual(["error"]);
		expect(result.errorMessage).toMatch(/^Connection error: /);
	});

	it("says when nothing is listening at the base URL", async () => {
		const baseUrl = `http://127.0.0.1:${await unusedPort()}/v1`;
		const closed = createOpenAICompatibleModel({ baseUrl, id: "m" });
		const { result } = await run({}, undefined, closed);
		expect(result.errorMessage).toMatch(/^Connection error: .*ECONNREFUSED/);
		expect(result.errorMessage).toContain(`(is the server running at ${baseUrl}?)`);
	});

	it("reports a stream that ends without finish_reason or [DONE]", async () => {
		server.respond({ kind: "sse", ending: "end", frames: [roleChunk(), ...textChunks(["cut"])] });
		const { events, result } = await run();
		expect(trace(events).at(-1)).toBe(
			"error error: The provider's stream ended before the reply was complete (no finish_reason and no [DONE] after event 2)",
		);
		expect(result.content).toEqual([{ type: "text", text: "cut" }]);
	});

	it("accepts a stream that ends after its finish reason without [DONE]", async () => {
		server.respond({ kind: "sse", ending: "end", frames: [...textChunks(["fine"]), finishChunk("stop")] });
		expect((await run()).result.stopReason).toBe("stop");
	});

	it("names the malformed chunk and where it came from", async () => {
		server.respond({
			kind: "sse",
			frames: [roleChunk(), ...textChunks(["ok"]), { data: '{"id":"chatcmpl-test","choices":[{"delta":{"content":"br' }],
		});
		const { events, result } = await run();
		expect(trace(events).at(-1)).toBe(
			'error error: Malformed chunk in the provider\'s stream (event 3): not valid JSON: {"id":"chatcmpl-test","choices":[{"delta":{"content":"br',
		);
		expect(result.content).toEqual([{ type: "text", text: "ok" }]);
	});

	it("reports an error object sent mid-stream (OpenRouter style), keeping the partial text", async () => {
		server.respond({
			kind: "sse",
			frames: [
				...textChunks(["partial"]),
				{
					data: {
						id: "gen-1",
						object: "chat.completion.chunk",
						error: { code: "server_error", message: "Provider disconnected", metadata: { provider_name: "Upstream", raw: "socket hang up" } },
						choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
					},
				},
			],
		});
		const { result } = await run();
		expect(result.errorMessage).toBe("server_error: Provider disconnected (Upstream: socket hang up)");
		expect(result.content).toEqual([{ type: "text", text: "partial" }]);
	});

	it("ends a stream that stalls after the headers by the timeout, with a clear message", async () => {
		// One write, so a slow machine cannot stretch the gap between the two chunks past the limit.
		server.respond({ kind: "sse", ending: "stall", chunkBytes: 1 << 20, frames: [roleChunk(), ...textChunks(["slow..."])] });
		const { result } = await run({ timeoutMs: 200 });
		expect(result.stopReason).toBe("error");
		expect(result.errorMessage).toBe("The provider's stream stalled: nothing arrived for 200 ms after event 2 (timeoutMs)");
		expect(result.content).toEqual([{ type: "text", text: "slow..." }]);
	});

	it("ends a request whose headers never come by the SDK timeout", async () => {
		server.respond({ kind: "hang" });
		const { events, result } = await run({ timeoutMs: 200 });
		expect(events.map((e) => e.type)).toEqual(["error"]);
		expect(result.errorMessage).toBe(`Request timed out: no response from ${server.baseUrl} within 200 ms (timeoutMs)`);
	});

	it("describes an HTML error page from a proxy instead of repeating its status", async () => {
		server.respond({
			kind: "error",
			status: 502,
			headers: { "content-type": "text/html" },
			body: "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n",
		});
		const { events, result } = await run();
		expect(events.map((e) => e.type)).toEqual(["error"]);
		expect(result.errorMessage).toBe(
			'502 Bad Gateway from a proxy or gateway in front of the server (an HTML page, not the API\'s JSON): "502 Bad Gateway nginx/1.25.3"',
		);
		expect(result.errorMessage).not.toMatch(/^502 502/);
	});

	it("turns 401 into a bare error with the server's message, without retrying", async () => {
		server.respond({
			kind: "error",
			status: 401,
			body: errorBody("Incorrect API key provided: sk-wrong.", "invalid_request_error", "invalid_api_key"),
		});
		const { events, result } = await run({ maxRetries: 3, maxRetryDelayMs: 5 });
		expect(events.map((e) => e.type)).toEqual(["error"]);
		expect(result.errorMessage).toBe("401 invalid_request_error (invalid_api_key): Incorrect API key provided: sk-wrong.");
		expect(server.requests).toHaveLength(1);
		expect(isContextOverflow(result, model.contextWindow)).toBe(false);
	});

	it("retries a 429 after its retry-after, capped by maxRetryDelayMs, then succeeds", async () => {
		server.respond(
			// Without the cap the SDK would wait 50 s here, far past the test's timeout.
			{ kind: "error", status: 429, body: errorBody("Rate limit reached for requests", "requests", "rate_limit_exceeded"), headers: { "retry-after": "50" } },
			{ kind: "sse", frames: textReply("after retry") },
		);
		const { events, result } = await run({ maxRetries: 2, maxRetryDelayMs: 20 });
		expect(server.requests).toHaveLength(2);
		expect(trace(events)[0]).toBe("start");
		expect(result.content).toEqual([{ type: "text", text: "after retry" }]);
	});

	it("waits the cap for a retry-after of more than a minute, which the SDK alone would ignore for its own half-second backoff", async () => {
		server.respond(
			{ kind: "error", status: 429, body: errorBody("Rate limit reached for requests", "requests", "rate_limit_exceeded"), headers: { "retry-after": "90" } },
			{ kind: "sse", frames: textReply("after retry") },
		);
		const started = Date.now();
		const { result } = await run({ maxRetries: 1, maxRetryDelayMs: 1_500 });
		expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
		expect(server.requests).toHaveLength(2);
		expect(result.content).toEqual([{ type: "text", text: "after retry" }]);
	});

	it("follows the server's x-should-retry: a 400 it calls retryable waits no longer than the cap, a 500 it calls final is not retried", async () => {
		server.respond(
			// Without the cap the SDK would wait 50 s here, far past the test's timeout.
			{ kind: "error", status: 400, body: errorBody("Try again", "invalid_request_error"), headers: { "x-should-retry": "true", "retry-after": "50" } },
			{ kind: "sse", frames: textReply("after retry") },
		);
		const { result } = await run({ maxRetries: 2, maxRetryDelayMs: 20 });
		expect(server.requests).toHaveLength(2);
		expect(result.content).toEqual([{ type: "text", text: "after retry" }]);

		server.respond({ kind: "error", status: 500, body: errorBody("Do not retry", "server_error"), headers: { "x-should-retry": "false" } });
		const final = await run({ maxRetries: 2, maxRetryDelayMs: 5 });
		expect(server.requests).toHaveLength(3);
		expect(final.result.errorMessage).toBe("500 server_error: Do not retry");
	});

	it("reports a 429 that outlasts the retries as a rate limit, not an overflow", async () => {
		const message = "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 5000.";
		server.respond(
			{ kind: "error", status: 429, body: errorBody(message, "tokens", "rate_limit_exceeded"), headers: { "retry-after-ms": "5" } },
			{ kind: "error", status: 429, body: errorBody(message, "tokens", "rate_limit_exceeded"), headers: { "retry-after-ms": "5" } },
		);
		const { result } = await run({ maxRetries: 1 });
		expect(server.requests).toHaveLength(2);
		expect(result.errorMessage).toBe(`429 tokens (rate_limit_exceeded): ${message}`);
		expect(isContextOverflow(result, model.contextWindow)).toBe(false);
	});

	it("retries 5xx with backoff until the retries run out", async () => {
		server.respond(
			{ kind: "error", status: 500, body: errorBody("The server had an error while processing your request.", "server_error") },
			{ kind: "error", status: 503, body: "upstream connect error or disconnect/reset before headers" },
			{ kind: "error", status: 502, body: { error: "Bad gateway: model runner crashed" } },
		);
		const { result } = await run({ maxRetries: 2, maxRetryDelayMs: 5 });
		expect(server.requests).toHaveLength(3);
		expect(result.errorMessage).toBe("502 Bad Gateway: Bad gateway: model runner crashed");
	});

	// How each server reports a prompt that does not fit (bodies as they send them).
	const overflowBodies: [string, number, unknown, string][] = [
		[
			"OpenAI",
			400,
			errorBody("This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.", "invalid_request_error", "context_length_exceeded"),
			"400 invalid_request_error (context_length_exceeded): This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
		],
		[
			"vLLM (top-level error object)",
			400,
			{ object: "error", message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).", type: "BadRequestError", param: null, code: 400 },
			"400 BadRequestError: This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).",
		],
		[
			"llama.cpp",
			400,
			{ error: { code: 400, message: "the request exceeds the available context size, try increasing it", type: "exceed_context_size_error", n_prompt_tokens: 9000, n_ctx: 8192 } },
			"400 exceed_context_size_error: the request exceeds the available context size, try increasing it",
		],
		[
			"LM Studio (bare error string)",
			400,
			{ error: "The number of tokens to keep from the initial prompt is greater than the context length." },
			"400 Bad Request: The number of tokens to keep from the initial prompt is greater than the context length.",
		],
		[
			"Ollama",
			400,
			{ error: { message: "prompt too long; exceeded max context length by 1200 tokens", type: "api_error", param: null, code: null } },
			"400 api_error: prompt too long; exceeded max context length by 1200 tokens",
		],
		[
			"Groq",
			400,
			errorBody("Please reduce the length of the messages or completion.", "invalid_request_error", "context_length_exceeded"),
			"400 invalid_request_error (context_length_exceeded): Please reduce the length of the messages or completion.",
		],
		["a proxy's body limit", 413, "<html><body><h1>413 Request Entity Too Large</h1></body></html>", ""],
	];

	it.each(overflowBodies)("recognises a context overflow from %s", async (_server, status, body, expected) => {
		server.respond({ kind: "error", status, body, ...(typeof body === "string" ? { headers: { "content-type": "text/html" } } : {}) });
		const { events, result } = await run();
		expect(events.map((e) => e.type)).toEqual(["error"]);
		if (expected) expect(result.errorMessage).toBe(expected);
		expect(isContextOverflow(result, model.contextWindow)).toBe(true);
	});

	it("reports a missing API key for a hosted server without a request", async () => {
		const saved = process.env["GROQ_API_KEY"];
		delete process.env["GROQ_API_KEY"];
		try {
			const groq = createOpenAICompatibleModel({ baseUrl: "https://api.groq.com/openai/v1", id: "llama-3.3-70b-versatile" });
			const stream = streamOpenAICompletions(groq, context);
			const events: AssistantMessageEvent[] = [];
			for await (const event of stream) events.push(event);
			expect(events.map((e) => e.type)).toEqual(["error"]);
			expect((await stream.result()).errorMessage).toBe("No API key for provider groq: set GROQ_API_KEY or pass apiKey");
		} finally {
			if (saved !== undefined) process.env["GROQ_API_KEY"] = saved;
		}
	});

	it("needs no key for a local server", async () => {
		server.respond({ kind: "sse", frames: textReply("ok") });
		const result = await streamOpenAICompletions(model, context, { maxRetries: 0 }).result();
		expect(result.stopReason).toBe("stop");
		expect(server.requests[0]?.headers.authorization).toBe("Bearer no-key");
	});
});

describe("streamOpenAICompletions: hooks and options", () => {
	it("lets onPayload replace the body and reports the response to onResponse", async () => {
		server.respond({ kind: "sse", frames: textReply("ok"), headers: { "x-test": "yes" } });
		const seen: { status?: number; header?: string | undefined; payloadModel?: string } = {};
		await run({
			onPayload: (payload) => {
				seen.payloadModel = (payload as { model: string }).model;
				return { ...(payload as object), max_tokens: 123, stream: false };
			},
			onResponse: (response) => {
				seen.status = response.status;
				seen.header = response.headers["x-test"];
			},
		});
		expect(seen).toEqual({ status: 200, header: "yes", payloadModel: "test-model" });
		expect(server.requests[0]?.body).toMatchObject({ max_tokens: 123, stream: true });
	});

	it("sends extra headers, temperature, tool choice and session affinity headers", async () => {
		server.respond({ kind: "sse", frames: textReply("ok") });
		const affinity = createOpenAICompatibleModel({
			baseUrl: server.baseUrl,
			id: "test-model",
			headers: { "x-model-header": "m" },
			compat: { sendSessionAffinityHeaders: true },
		});
		await run({ headers: { "x-extra": "1" }, temperature: 0.3, toolChoice: "none", sessionId: "session-42" }, undefined, affinity);
		const request = server.requests[0];
		expect(request?.headers).toMatchObject({ "x-extra": "1", "x-model-header": "m", "x-session-affinity": "session-42", session_id: "session-42" });
		expect(request?.body).toMatchObject({ temperature: 0.3, tool_choice: "none" });
	});

	it("loads the openai SDK only when called: no static import of it anywhere in the provider", async () => {
		const { build } = await import("esbuild");
		const entryPoints = ["openai-completions", "openai-models", "openai-compat", "openai-request"].map((name) =>
			fileURLToPath(new URL(`../../src/providers/${name}.ts`, import.meta.url)),
		);
		const bundle = await build({ entryPoints, bundle: true, write: false, metafile: true, packages: "external", platform: "node", format: "esm", outdir: "out", logLevel: "silent" });
		const sdkImports = Object.values(bundle.metafile.outputs).flatMap((output) => output.imports.filter((i) => i.path === "openai"));
		expect(sdkImports.length).toBeGreaterThan(0);
		expect(sdkImports.every((i) => i.kind === "dynamic-import")).toBe(true);
	});

	it("returns the stream at once and sends the request afterwards", async () => {
		// Creating a stream is synchronous and returns at once; the request follows asynchronously.
		server.respond({ kind: "sse", frames: textReply("ok") });
		const stream = streamOpenAICompletions(model, context, { apiKey: "k" });
		expect(server.requests).toHaveLength(0);
		await stream.result();
		expect(server.requests).toHaveLength(1);
	});
});
