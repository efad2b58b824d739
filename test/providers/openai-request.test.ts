import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { resolveOpenAICompat, type OpenAICompletionsCompat } from "../../src/providers/openai-compat.js";
import { normalizeToolCallId } from "../../src/providers/openai-messages.js";
import { createOpenAICompatibleModel, type OpenAICompatibleModelOptions } from "../../src/providers/openai-models.js";
import { buildOpenAICompletionsRequest, type OpenAICompletionsOptions } from "../../src/providers/openai-request.js";
import { emptyUsage } from "../../src/types/content.js";
import type { AssistantMessage, Message, ToolResultMessage } from "../../src/types/messages.js";
import type { Context, Model } from "../../src/types/model.js";

const local = "http://127.0.0.1:8000/v1";

function modelFor(fields: Partial<OpenAICompatibleModelOptions> = {}): Model {
	return createOpenAICompatibleModel({ baseUrl: local, id: "m", ...fields });
}

function build(model: Model, context: Partial<Context> = {}, options: OpenAICompletionsOptions = {}) {
	return buildOpenAICompletionsRequest(model, { messages: [{ role: "user", content: "hi", timestamp: 0 }], ...context }, options);
}

function assistant(model: Model, content: AssistantMessage["content"], fields: Partial<AssistantMessage> = {}): AssistantMessage {
	return {
		role: "assistant",
		content,
		api: model.api,
		provider: model.provider,
		model: model.id,
		usage: emptyUsage(),
		stopReason: content.some((c) => c.type === "toolCall") ? "toolUse" : "stop",
		timestamp: 0,
		...fields,
	};
}

function result(toolCallId: string, text: string, fields: Partial<ToolResultMessage> = {}): ToolResultMessage {
	return { role: "toolResult", toolCallId, toolName: "read", content: [{ type: "text", text }], isError: false, timestamp: 0, ...fields };
}

const user = (content: string): Message => ({ role: "user", content, timestamp: 0 });

describe("buildOpenAICompletionsRequest: server fields", () => {
	it("sends OpenAI's fields to OpenAI: store, max_completion_tokens, developer role, strict tools", () => {
		const openai = createOpenAICompatibleModel({ baseUrl: "https://api.openai.com/v1", id: "o4-mini", reasoning: true, maxTokens: 100_000 });
		const body = build(openai, {
			systemPrompt: "sys",
			tools: [{ name: "echo", description: "Echo", parameters: Type.Object({ text: Type.String() }) }],
		}, { sessionId: "s1" });
		expect(body).toMatchObject({ store: false, max_completion_tokens: 32_000, stream_options: { include_usage: true }, prompt_cache_key: "s1" });
		expect(body.messages[0]).toEqual({ role: "developer", content: "sys" });
		expect(body.tools).toEqual([
			{
				type: "function",
				function: {
					name: "echo",
					description: "Echo",
					parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
					strict: false,
				},
			},
		]);
	});

	it("sends a local server only what it accepts, and a limit only when asked", () => {
		const body = build(modelFor(), { systemPrompt: "sys" });
		expect(body).not.toHaveProperty("store");
		expect(body).not.toHaveProperty("max_tokens");
		expect(body).not.toHaveProperty("max_completion_tokens");
		expect(body.messages[0]).toEqual({ role: "system", content: "sys" });
		expect(build(modelFor(), {}, { maxTokens: 512 }).max_tokens).toBe(512);
		const noUsage = modelFor({ compat: { supportsUsageInStreaming: false } });
		expect(build(noUsage)).not.toHaveProperty("stream_options");
	});

	it("sends pi-ai's default limit (the model's, at most 32000) where the server takes one", () => {
		const groq = createOpenAICompatibleModel({ baseUrl: "https://api.groq.com/openai/v1", id: "m" });
		expect(build(groq).max_completion_tokens).toBe(16_384);
		const big = createOpenAICompatibleModel({ baseUrl: "https://api.groq.com/openai/v1", id: "m", maxTokens: 65_536 });
		expect(build(big).max_completion_tokens).toBe(32_000);
		// 0 is no limit given, as in pi-ai (it was sent as 0, which the API refuses).
		expect(build(groq, {}, { maxTokens: 0 }).max_completion_tokens).toBe(16_384);
		expect(build(modelFor(), {}, { maxTokens: 0 })).not.toHaveProperty("max_tokens");
	});

	it("adds OpenRouter routing and Anthropic cache markers for Claude on OpenRouter", () => {
		const claude = createOpenAICompatibleModel({
			baseUrl: "https://openrouter.ai/api/v1",
			id: "anthropic/claude-sonnet-4.5",
			compat: { openRouterRouting: { only: ["anthropic"] } },
		});
		const body = build(claude, {
			systemPrompt: "sys",
			tools: [{ name: "echo", description: "Echo", parameters: Type.Object({}) }],
		}, { cacheRetention: "short" });
		expect(body["provider"]).toEqual({ only: ["anthropic"] });
		expect(body.messages[0]).toEqual({ role: "system", content: [{ type: "text", text: "sys", cache_control: { type: "ephemeral" } }] });
		expect(body.messages[1]).toEqual({ role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] });
		expect(body.tools?.[0]).toMatchObject({ cache_control: { type: "ephemeral" } });
		expect(build(claude, {}, { cacheRetention: "none" }).messages[0]).toEqual({ role: "user", content: "hi" });
	});
});

describe("buildOpenAICompletionsRequest: reasoning", () => {
	const cases: [string, OpenAICompletionsCompat, OpenAICompletionsOptions, Record<string, unknown>][] = [
		["openai", {}, { reasoning: "medium" }, { reasoning_effort: "medium" }],
		["openai, clamped", {}, { reasoning: "xhigh" }, { reasoning_effort: "high" }],
		["openrouter", { thinkingFormat: "openrouter" }, { reasoning: "low" }, { reasoning: { effort: "low" } }],
		["openrouter with a budget", { thinkingFormat: "openrouter" }, { reasoning: "low", thinkingBudgets: { low: 3000 } }, { reasoning: { max_tokens: 3000 } }],
		["openrouter, off", { thinkingFormat: "openrouter" }, {}, { reasoning: { effort: "none" } }],
		["deepseek", { thinkingFormat: "deepseek" }, { reasoning: "high" }, { thinking: { type: "enabled" }, reasoning_effort: "high" }],
		["deepseek, off", { thinkingFormat: "deepseek" }, {}, { thinking: { type: "disabled" } }],
		["qwen with a budget", { thinkingFormat: "qwen" }, { reasoning: "high", thinkingBudgets: { high: 8000 } }, { enable_thinking: true, thinking_budget: 8000 }],
		["qwen-chat-template, off", { thinkingFormat: "qwen-chat-template" }, {}, { chat_template_kwargs: { enable_thinking: false, preserve_thinking: true } }],
		["qwen-chat-template", { thinkingFormat: "qwen-chat-template" }, { reasoning: "low" }, { chat_template_kwargs: { enable_thinking: true, preserve_thinking: true } }],
		["pi-ai's reasoningEffort name", {}, { reasoningEffort: "low" }, { reasoning_effort: "low" }],
	];

	it.each(cases)("requests reasoning in the %s format", (_name, compat, options, expected) => {
		const body = build(modelFor({ reasoning: true, compat }), {}, options);
		expect(body).toMatchObject(expected);
	});

	it("maps levels through the model's thinkingLevelMap, skipping unsupported ones", () => {
		const model = modelFor({ reasoning: true, thinkingLevelMap: { minimal: null, low: "lo", xhigh: "max", off: "none" } });
		expect(build(model, {}, { reasoning: "minimal" }).reasoning_effort).toBe("lo");
		expect(build(model, {}, { reasoning: "xhigh" }).reasoning_effort).toBe("max");
		expect(build(model).reasoning_effort).toBe("none");
	});

	it("never asks a model that does not reason, nor a server without reasoning_effort", () => {
		expect(build(modelFor(), {}, { reasoning: "high" })).not.toHaveProperty("reasoning_effort");
		const xai = createOpenAICompatibleModel({ baseUrl: "https://api.x.ai/v1", id: "grok", reasoning: true });
		expect(build(xai, {}, { reasoning: "high" })).not.toHaveProperty("reasoning_effort");
	});
});

describe("buildOpenAICompletionsRequest: transcript", () => {
	const model = modelFor({ reasoning: true, input: ["text", "image"] });

	it("pairs each tool result with its call, repairs unanswered calls and drops stray results", () => {
		const body = build(model, {
			messages: [
				user("read both"),
				assistant(model, [
					{ type: "text", text: "Reading." },
					{ type: "toolCall", id: "call_1", name: "read", arguments: { path: "a" } },
					{ type: "toolCall", id: "call_2", name: "read", arguments: { path: "b" } },
				]),
				result("call_1", "A"),
				result("call_9", "stray"),
				user("and?"),
			],
		});
		expect(body.messages).toEqual([
			{ role: "user", content: "read both" },
			{
				role: "assistant",
				content: "Reading.",
				tool_calls: [
					{ id: "call_1", type: "function", function: { name: "read", arguments: '{"path":"a"}' } },
					{ id: "call_2", type: "function", function: { name: "read", arguments: '{"path":"b"}' } },
				],
			},
			{ role: "tool", tool_call_id: "call_1", content: "A" },
			{ role: "tool", tool_call_id: "call_2", content: "No result provided" },
			{ role: "user", content: "and?" },
		]);
	});

	it("leaves out failed turns and sends reasoning back in the field it came in", () => {
		const body = build(model, {
			messages: [
				user("q1"),
				assistant(model, [{ type: "text", text: "half" }], { stopReason: "error", errorMessage: "boom" }),
				user("q2"),
				assistant(model, [
					{ type: "thinking", thinking: "mull", thinkingSignature: "reasoning_content" },
					{ type: "text", text: "a2" },
				]),
				user("q3"),
			],
		});
		expect(body.messages).toEqual([
			{ role: "user", content: "q1" },
			{ role: "user", content: "q2" },
			{ role: "assistant", content: "a2", reasoning_content: "mull" },
			{ role: "user", content: "q3" },
		]);
	});

	it("sends another model's reasoning as text, and DeepSeek an empty reasoning_content", () => {
		const other: AssistantMessage = {
			...assistant(model, [
				{ type: "thinking", thinking: "their thoughts", thinkingSignature: "sig" },
				{ type: "text", text: "answer" },
			]),
			provider: "anthropic",
			api: "anthropic-messages",
			model: "claude",
		};
		expect(build(model, { messages: [user("q"), other] }).messages[1]).toEqual({ role: "assistant", content: "their thoughts\n\nanswer" });
		const deepseek = createOpenAICompatibleModel({ baseUrl: "https://api.deepseek.com/v1", id: "deepseek-chat", reasoning: true });
		expect(build(deepseek, { messages: [user("q"), other] }).messages[1]).toMatchObject({ reasoning_content: "" });
	});

	it("sends OpenRouter's encrypted reasoning back as reasoning_details, for the same model only", () => {
		const detail = { type: "reasoning.encrypted", id: "call_g", data: "OPAQUE" };
		const call = { type: "toolCall" as const, id: "call_g", name: "search", arguments: { q: "x" }, thoughtSignature: JSON.stringify(detail) };
		const messages = [user("q"), assistant(model, [call]), result("call_g", "found")];
		expect(build(model, { messages }).messages[1]).toMatchObject({ reasoning_details: [detail] });
		const otherModel = modelFor({ id: "other" });
		expect(build(otherModel, { messages }).messages[1]).not.toHaveProperty("reasoning_details");
	});

	it("keeps reasoning out of replayed messages for Groq, which rejects the field", () => {
		const groq = createOpenAICompatibleModel({ baseUrl: "https://api.groq.com/openai/v1", id: "openai/gpt-oss-120b", reasoning: true });
		const reply = assistant(groq, [
			{ type: "thinking", thinking: "mull", thinkingSignature: "reasoning" },
			{ type: "text", text: "a" },
		]);
		expect(build(groq, { messages: [user("q"), reply] }).messages[1]).toEqual({ role: "assistant", content: "a" });
	});

	it("puts tool-result images in a user message after the tool messages", () => {
		const image = { type: "image" as const, data: "iVBOR", mimeType: "image/png" };
		const body = build(model, {
			messages: [
				user("look"),
				assistant(model, [{ type: "toolCall", id: "call_s", name: "screenshot", arguments: {} }]),
				{ role: "toolResult", toolCallId: "call_s", toolName: "screenshot", content: [image], isError: false, timestamp: 0 },
			],
		});
		expect(body.messages.slice(2)).toEqual([
			{ role: "tool", tool_call_id: "call_s", content: "(see attached image)" },
			{
				role: "user",
				content: [
					{ type: "text", text: "Attached image(s) from tool result:" },
					{ type: "image_url", image_url: { url: "data:image/png;base64,iVBOR" } },
				],
			},
		]);
		const textOnly = modelFor();
		const blind = build(textOnly, {
			messages: [user("look"), assistant(textOnly, [{ type: "toolCall", id: "c", name: "s", arguments: {} }]), result("c", "", { content: [image] })],
		});
		expect(blind.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "c", content: "(image omitted: this model does not accept images)" });
	});

	it("sends a data URL's base64 bare in its own data URL, and a note for an image without data", () => {
		const body = build(model, {
			messages: [{ role: "user", content: [{ type: "text", text: "see" }, { type: "image", data: "data:image/png;base64,iVBOR", mimeType: "image/png" }, { type: "image", data: "", mimeType: "image/png" }], timestamp: 0 }],
		});
		expect(body.messages.at(-1)).toEqual({
			role: "user",
			content: [
				{ type: "text", text: "see" },
				{ type: "image_url", image_url: { url: "data:image/png;base64,iVBOR" } },
				{ type: "text", text: "(image omitted: it has no data)" },
			],
		});
	});

	it("sends an SVG (an MCP tool's chart) as a note, since no vision model reads one and the API would refuse every later request", () => {
		const body = build(model, {
			messages: [{ role: "user", content: [{ type: "image", data: "PHN2Zy8+", mimeType: "image/svg+xml" }, { type: "image", data: "UklGR", mimeType: "image/webp" }], timestamp: 0 }],
		});
		expect(body.messages.at(-1)).toEqual({
			role: "user",
			content: [
				{ type: "text", text: "(image omitted: image/svg+xml is a vector drawing, which vision models do not read)" },
				{ type: "image_url", image_url: { url: "data:image/webp;base64,UklGR" } },
			],
		});
	});

	it("applies the name, bridge and id switches some servers need", () => {
		const strict = modelFor({
			compat: { requiresToolResultName: true, requiresAssistantAfterToolResult: true, toolCallIdFormat: "mistral" },
		});
		const body = build(strict, {
			messages: [
				user("go"),
				assistant(strict, [{ type: "toolCall", id: "toolu_01ABC|x", name: "read", arguments: {} }]),
				result("toolu_01ABC|x", "done"),
				user("next"),
			],
		});
		const id = normalizeToolCallId("toolu_01ABC|x", "mistral");
		expect(id).toMatch(/^[a-zA-Z0-9]{9}$/);
		expect(body.messages.slice(1)).toEqual([
			{ role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "read", arguments: "{}" } }] },
			{ role: "tool", tool_call_id: id, content: "done", name: "read" },
			{ role: "assistant", content: "I have processed the tool results." },
			{ role: "user", content: "next" },
		]);
	});

	it.each(["keep", "openai", "mistral"] as const)("makes repeated tool-call ids unique in the request, each result answering its own call (%s ids)", (toolCallIdFormat) => {
		const server = modelFor({ compat: { toolCallIdFormat } });
		const body = build(server, {
			messages: [
				user("go"),
				assistant(server, [
					{ type: "toolCall", id: "call_0", name: "read", arguments: { path: "a" } },
					{ type: "toolCall", id: "call_0", name: "read", arguments: { path: "b" } },
					{ type: "toolCall", id: "call_0", name: "read", arguments: { path: "c" } },
				]),
				result("call_0", "A"),
				result("call_0", "B"),
				user("again"),
				assistant(server, [{ type: "toolCall", id: "call_0", name: "read", arguments: { path: "d" } }]),
				result("call_0", "D"),
			],
		});
		const calls = body.messages.flatMap((message) => (message.role === "assistant" ? (message.tool_calls ?? []) : []));
		const ids = calls.map((call) => call.id);
		expect(new Set(ids).size).toBe(4);
		if (toolCallIdFormat === "mistral") for (const id of ids) expect(id).toMatch(/^[a-zA-Z0-9]{9}$/);
		else expect(ids).toEqual(["call_0", "call_0_2", "call_0_3", "call_0_4"]);
		const pathOf = new Map(calls.map((call) => [call.id, (JSON.parse(call.type === "function" ? call.function.arguments : "{}") as { path: string }).path]));
		const answers = body.messages.flatMap((message) => (message.role === "tool" ? [`${pathOf.get(message.tool_call_id)}:${String(message.content)}`] : []));
		expect(answers).toEqual(["a:A", "b:B", "c:No result provided", "d:D"]);
	});

	it("rewrites ids for OpenAI deterministically, keeping short ones", () => {
		expect(normalizeToolCallId("call_abc", "openai")).toBe("call_abc");
		expect(normalizeToolCallId("call_1|fc_+/=", "openai")).toBe("call_1");
		const long = normalizeToolCallId(`toolu_${"x".repeat(60)}`, "openai");
		expect(long.length).toBeLessThanOrEqual(40);
		expect(normalizeToolCallId(`toolu_${"x".repeat(60)}`, "openai")).toBe(long);
		expect(normalizeToolCallId(`toolu_${"x".repeat(59)}y`, "openai")).not.toBe(long);
	});

	it("cleans a Responses API id (call|item) for every server, as pi-ai does, and keeps other ids as they are", () => {
		// Before: a session moved from openai-codex to Groq or OpenRouter replayed 400-character ids of base64.
		const responses = `call_abc|fc_${"Zm9v+/=".repeat(60)}`;
		expect(normalizeToolCallId(responses, "keep")).toBe("call_abc");
		expect(normalizeToolCallId("toolu_01A.b", "keep")).toBe("toolu_01A.b");
		const body = build(modelFor(), { messages: [user("go"), assistant(modelFor(), [{ type: "toolCall", id: responses, name: "s", arguments: {} }]), result(responses, "done")] });
		expect(JSON.stringify(body.messages)).not.toContain("fc_");
		expect(body.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_abc" });
	});

	it("replaces unpaired surrogates, which would make the body invalid JSON", () => {
		const body = build(modelFor(), { messages: [user("bad \uD800 text")] });
		expect(body.messages[0]).toEqual({ role: "user", content: "bad \uFFFD text" });
	});

	it("resolves compat once per call from the model", () => {
		expect(resolveOpenAICompat(model).toolCallIdFormat).toBe("keep");
	});
});
