import { getModel as piGetModel } from "@mariozechner/pi-ai";
import { Type } from "typebox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { streamAnthropic } from "../../src/providers/anthropic.js";
import { buildAnthropicRequest, thinkingSettings } from "../../src/providers/anthropic-request.js";
import { getModel } from "../../src/providers/models.js";
import { emptyUsage } from "../../src/types/content.js";
import type { AssistantMessage, Message, ToolResultMessage } from "../../src/types/messages.js";
import type { Context, Model, SimpleStreamOptions } from "../../src/types/model.js";
import { type AnthropicTestServer, startAnthropicServer, textReply } from "./anthropic-server.js";

let server: AnthropicTestServer;
let model: Model;

beforeAll(async () => {
	server = await startAnthropicServer();
	model = { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: server.baseUrl };
});
afterAll(() => server.close());
afterEach(() => server.reset());

function assistant(content: AssistantMessage["content"], overrides: Partial<AssistantMessage> = {}): AssistantMessage {
	return {
		role: "assistant",
		content,
		api: "anthropic-messages",
		provider: "anthropic",
		model: "claude-haiku-4-5",
		usage: emptyUsage(),
		stopReason: content.some((c) => c.type === "toolCall") ? "toolUse" : "stop",
		timestamp: 2,
		...overrides,
	};
}

function toolResult(toolCallId: string, text: string, extra: Partial<ToolResultMessage> = {}): ToolResultMessage {
	return { role: "toolResult", toolCallId, toolName: "read", content: [{ type: "text", text }], isError: false, timestamp: 3, ...extra };
}

/** Sends a context through the real SDK to the local server and returns the body it received. */
async function sentBody(context: Context, options: SimpleStreamOptions = {}): Promise<Record<string, any>> {
	server.respond({ kind: "sse", events: textReply("ok") });
	const result = await streamAnthropic(model, context, { apiKey: "test-key", ...options }).result();
	expect(result.stopReason).toBe("stop");
	const request = server.requests.at(-1);
	if (!request) throw new Error("no request recorded");
	return request.body;
}

const png = { type: "image" as const, data: "iVBORw0KGgo=", mimeType: "image/png" };

describe("request body", () => {
	it("replays thinking with its signature and redacted thinking as its data", async () => {
		const body = await sentBody({
			messages: [
				{ role: "user", content: "q", timestamp: 1 },
				assistant([
					{ type: "thinking", thinking: "hmm", thinkingSignature: "sig-1" },
					{ type: "thinking", thinking: "[Reasoning redacted]", thinkingSignature: "OPAQUE", redacted: true },
					{ type: "text", text: "answer" },
				]),
				{ role: "user", content: "next", timestamp: 4 },
			],
		});
		expect(body["messages"][1]).toEqual({
			role: "assistant",
			content: [
				{ type: "thinking", thinking: "hmm", signature: "sig-1" },
				{ type: "redacted_thinking", data: "OPAQUE" },
				{ type: "text", text: "answer" },
			],
		});
	});

	it("sends thinking without a signature, or from another model, as plain text", async () => {
		const body = await sentBody({
			messages: [
				{ role: "user", content: "q", timestamp: 1 },
				assistant([{ type: "thinking", thinking: "unsigned" }, { type: "text", text: "a" }]),
				{ role: "user", content: "q2", timestamp: 1 },
				assistant(
					[
						{ type: "thinking", thinking: "foreign", thinkingSignature: "other-sig" },
						{ type: "thinking", thinking: "[Reasoning redacted]", thinkingSignature: "X", redacted: true },
						{ type: "text", text: "b" },
					],
					{ provider: "openai", api: "openai-responses", model: "gpt-5" },
				),
				{ role: "user", content: "q3", timestamp: 1 },
			],
		});
		expect(body["messages"][1].content).toEqual([
			{ type: "text", text: "unsigned" },
			{ type: "text", text: "a" },
		]);
		expect(body["messages"][3].content).toEqual([
			{ type: "text", text: "foreign" },
			{ type: "text", text: "b" },
		]);
	});

	it("groups consecutive tool results into one user turn, with is_error and images", async () => {
		const body = await sentBody({
			messages: [
				{ role: "user", content: "read both", timestamp: 1 },
				assistant([
					{ type: "toolCall", id: "toolu_a", name: "read", arguments: { path: "a" } },
					{ type: "toolCall", id: "toolu_b", name: "read", arguments: { path: "b" } },
					{ type: "toolCall", id: "toolu_c", name: "screenshot", arguments: {} },
				]),
				toolResult("toolu_a", "A"),
				toolResult("toolu_b", "ENOENT", { isError: true }),
				toolResult("toolu_c", "", { content: [png] }),
			],
		});
		expect(body["messages"]).toHaveLength(3);
		expect(body["messages"][1]).toEqual({
			role: "assistant",
			content: [
				{ type: "tool_use", id: "toolu_a", name: "read", input: { path: "a" } },
				{ type: "tool_use", id: "toolu_b", name: "read", input: { path: "b" } },
				{ type: "tool_use", id: "toolu_c", name: "screenshot", input: {} },
			],
		});
		expect(body["messages"][2]).toEqual({
			role: "user",
			content: [
				{ type: "tool_result", tool_use_id: "toolu_a", content: [{ type: "text", text: "A" }], is_error: false },
				{ type: "tool_result", tool_use_id: "toolu_b", content: [{ type: "text", text: "ENOENT" }], is_error: true },
				{
					type: "tool_result",
					tool_use_id: "toolu_c",
					content: [
						{ type: "text", text: "(see attached image)" },
						{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
					],
					is_error: false,
					// The last user turn carries the cache breakpoint.
					cache_control: { type: "ephemeral" },
				},
			],
		});
	});

	it("skips failed assistant turns and answers orphaned tool calls with an error result", async () => {
		const body = await sentBody({
			messages: [
				{ role: "user", content: "go", timestamp: 1 },
				assistant([{ type: "text", text: "half an answ" }], { stopReason: "error", errorMessage: "overloaded" }),
				assistant([{ type: "text", text: "" }, { type: "toolCall", id: "toolu_x", name: "read", arguments: {} }]),
				{ role: "user", content: [{ type: "text", text: "never mind" }, png], timestamp: 5 },
				assistant([{ type: "text", text: "partial" }], { stopReason: "aborted" }),
			],
		});
		expect(body["messages"]).toEqual([
			{ role: "user", content: [{ type: "text", text: "go" }] },
			{ role: "assistant", content: [{ type: "tool_use", id: "toolu_x", name: "read", input: {} }] },
			{
				role: "user",
				content: [{ type: "tool_result", tool_use_id: "toolu_x", content: [{ type: "text", text: "No result provided" }], is_error: true }],
			},
			{
				role: "user",
				content: [
					{ type: "text", text: "never mind" },
					{
						type: "image",
						source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
						cache_control: { type: "ephemeral" },
					},
				],
			},
		]);
	});

	it("leaves out tool results that answer no call of the turn before them, which the API refuses", async () => {
		const result = (toolCallId: string, text: string): ToolResultMessage => ({ role: "toolResult", toolCallId, toolName: "read", content: [{ type: "text", text }], isError: false, timestamp: 3 });
		const body = await sentBody({
			messages: [
				{ role: "user", content: "go", timestamp: 1 },
				// Its reply failed and is left out of the request: the result answers nothing there.
				assistant([{ type: "toolCall", id: "toolu_failed", name: "read", arguments: {} }], { stopReason: "error", errorMessage: "overloaded" }),
				result("toolu_failed", "late"),
				assistant([{ type: "toolCall", id: "toolu_a", name: "read", arguments: {} }]),
				result("toolu_a", "first"),
				// The same call answered twice.
				result("toolu_a", "again"),
				assistant([{ type: "toolCall", id: "toolu_b", name: "read", arguments: {} }]),
				// A user message between the call and its result: the call is answered for it, the late result left out.
				{ role: "user", content: "wait", timestamp: 4 },
				result("toolu_b", "after the user"),
			],
		});
		expect(body["messages"]).toEqual([
			{ role: "user", content: [{ type: "text", text: "go" }] },
			{ role: "assistant", content: [{ type: "tool_use", id: "toolu_a", name: "read", input: {} }] },
			{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_a", content: [{ type: "text", text: "first" }], is_error: false }] },
			{ role: "assistant", content: [{ type: "tool_use", id: "toolu_b", name: "read", input: {} }] },
			{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_b", content: [{ type: "text", text: "No result provided" }], is_error: true }] },
			{ role: "user", content: [{ type: "text", text: "wait", cache_control: { type: "ephemeral" } }] },
		]);
	});

	it("converts tools with input_schema from their TypeBox schema", async () => {
		const body = await sentBody({
			messages: [{ role: "user", content: "hi", timestamp: 1 }],
			tools: [
				{
					name: "read",
					description: "Read a file",
					parameters: Type.Object({ path: Type.String({ description: "File path" }), limit: Type.Optional(Type.Number()) }),
				},
			],
		});
		expect(body["tools"]).toEqual([
			{
				name: "read",
				description: "Read a file",
				input_schema: {
					type: "object",
					properties: { path: { type: "string", description: "File path" }, limit: { type: "number" } },
					required: ["path"],
				},
			},
		]);
	});

	it("shows a tool whose schema is a union at its top as one object, which the API takes (it refuses anyOf, oneOf and allOf there)", async () => {
		const body = await sentBody({
			messages: [{ role: "user", content: "hi", timestamp: 1 }],
			tools: [
				{
					name: "find",
					description: "By id or by name",
					parameters: Type.Union([Type.Object({ id: Type.Number(), exact: Type.Boolean() }), Type.Object({ name: Type.String(), exact: Type.Boolean() })]) as never,
				},
			],
		});
		expect(body["tools"][0].input_schema).toEqual({
			type: "object",
			properties: { id: { type: "number" }, exact: { type: "boolean" }, name: { type: "string" } },
			required: ["exact"],
		});
	});

	it("drops cache_control when cacheRetention is none and asks for 1h when long", async () => {
		const ctx: Context = { systemPrompt: "sys", messages: [{ role: "user", content: "hi", timestamp: 1 }] };
		const none = await sentBody(ctx, { cacheRetention: "none" });
		expect(JSON.stringify(none)).not.toContain("cache_control");
		const long = await sentBody(ctx, { cacheRetention: "long" });
		expect(long["system"][0].cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
		expect(long["messages"][0].content[0].cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
	});

	it("replaces images with a note for models without image input", async () => {
		const textOnly: Model = { ...model, input: ["text"] };
		const body = buildAnthropicRequest(textOnly, { messages: [{ role: "user", content: [{ type: "text", text: "see" }, png], timestamp: 1 }] });
		expect(body.messages[0]?.content).toEqual([
			{ type: "text", text: "see" },
			{ type: "text", text: "(image omitted: this model does not accept images)", cache_control: { type: "ephemeral" } },
		]);
	});

	it("sends a data URL's base64 bare, and a note for an image without data or over the 5 MB the API takes, which it would refuse on every later request", () => {
		const image = (data: string) => ({ type: "image" as const, data, mimeType: "image/png" });
		const body = buildAnthropicRequest(model, {
			messages: [{ role: "user", content: [image("data:image/png;base64,iVBORw0KGgo="), image(""), image("A".repeat(5 * 1024 * 1024 + 4))], timestamp: 1 }],
		});
		expect(body.messages[0]?.content).toEqual([
			{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
			{ type: "text", text: "(image omitted: it has no data)" },
			{ type: "text", text: "(image omitted: 5.0 MB of base64, over the 5 MB Anthropic takes for one image)", cache_control: { type: "ephemeral" } },
		]);
	});

	it("normalizes tool-call ids from other providers consistently", () => {
		const messages: Message[] = [
			{ role: "user", content: "x", timestamp: 1 },
			assistant([{ type: "toolCall", id: "call|abc.def", name: "read", arguments: {} }], { provider: "openai", model: "gpt-5" }),
			toolResult("call|abc.def", "ok"),
		];
		const body = buildAnthropicRequest(model, { messages });
		expect(JSON.stringify(body.messages)).toContain('"id":"call_abc_def"');
		expect(JSON.stringify(body.messages)).toContain('"tool_use_id":"call_abc_def"');
	});

	it("makes repeated tool-call ids unique in the request (the API rejects them), each result answering its own call", async () => {
		const long = `call_${"x".repeat(70)}`;
		const body = await sentBody({
			messages: [
				{ role: "user", content: "go", timestamp: 1 },
				// Two calls with one id (a local model's), and two ids that normalize to the same text.
				assistant([
					{ type: "toolCall", id: "call_0", name: "read", arguments: { path: "a" } },
					{ type: "toolCall", id: "call_0", name: "read", arguments: { path: "b" } },
					{ type: "toolCall", id: "call.1", name: "read", arguments: { path: "c" } },
					{ type: "toolCall", id: "call|1", name: "read", arguments: { path: "d" } },
				], { provider: "local", model: "qwen" }),
				toolResult("call_0", "A"),
				toolResult("call_0", "B"),
				toolResult("call|1", "D"),
				// call.1 has no result: it gets the made-up one, under its own wire id.
				{ role: "user", content: "again", timestamp: 4 },
				// A later reply reusing an earlier id; one too long to keep a suffix untruncated.
				assistant([
					{ type: "toolCall", id: "call_0", name: "read", arguments: { path: "e" } },
					{ type: "toolCall", id: long, name: "read", arguments: { path: "f" } },
					{ type: "toolCall", id: long, name: "read", arguments: { path: "g" } },
				], { provider: "local", model: "qwen" }),
				toolResult("call_0", "E"),
				toolResult(long, "F"),
				toolResult(long, "G"),
			],
		});
		const turns = body["messages"] as { role: string; content: { type: string; id?: string; tool_use_id?: string; input?: { path: string }; content?: { text: string }[] }[] }[];
		const uses = turns.flatMap((turn) => turn.content.filter((block) => block.type === "tool_use"));
		const ids = uses.map((use) => use.id);
		expect(new Set(ids).size).toBe(ids.length);
		for (const id of ids) expect(id).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
		expect(ids.slice(0, 5)).toEqual(["call_0", "call_0_2", "call_1", "call_1_2", "call_0_3"]);
		// Each result answers the call it answered in the transcript.
		const pathOf = new Map(uses.map((use) => [use.id, use.input?.path]));
		const answers = turns.flatMap((turn) => turn.content.filter((block) => block.type === "tool_result")).map((block) => `${pathOf.get(block.tool_use_id)}:${block.content?.[0]?.text}`);
		expect(answers).toEqual(["a:A", "b:B", "d:D", "c:No result provided", "e:E", "f:F", "g:G"]);
	});
});

describe("thinking budgets", () => {
	const haiku = getModel("anthropic", "claude-haiku-4-5");

	it("reads a model from pi-ai's registry (or a dated or custom id) by its id: Claude 4.6 and later think adaptively", () => {
		// Before: only this package's catalogue said "adaptive"; pi-ai's Opus 4.7 got the budget
		// form, which that model refuses with a 400, and Opus 4.6 the deprecated one.
		const effort = (model: Model, reasoning: "high" | "xhigh") => {
			const settings = thinkingSettings(model, { reasoning });
			return [settings.thinking?.type, settings.effort];
		};
		expect(effort(piGetModel("anthropic", "claude-opus-4-7") as unknown as Model, "xhigh")).toEqual(["adaptive", "xhigh"]);
		expect(effort(piGetModel("anthropic", "claude-opus-4-6") as unknown as Model, "xhigh")).toEqual(["adaptive", "max"]);
		expect(effort(piGetModel("anthropic", "claude-sonnet-4-6") as unknown as Model, "high")).toEqual(["adaptive", "high"]);
		const dated: Model = { ...haiku, id: "claude-opus-4-7-20260416", name: "dated", compat: undefined };
		expect(effort(dated, "xhigh")).toEqual(["adaptive", "xhigh"]);
		expect(effort(piGetModel("anthropic", "claude-haiku-4-5") as unknown as Model, "high")).toEqual(["enabled", undefined]);
		// pi-ai's thinkingLevelMap names the effort of a level.
		expect(effort({ ...dated, thinkingLevelMap: { high: "max" } }, "high")).toEqual(["adaptive", "max"]);
	});

	it("maps levels to budgets, with xhigh spending the high budget", () => {
		const budgets = (["minimal", "low", "medium", "high", "xhigh"] as const).map((reasoning) => {
			const { thinking } = thinkingSettings(haiku, { reasoning });
			return thinking?.type === "enabled" ? thinking.budget_tokens : undefined;
		});
		expect(budgets).toEqual([1024, 2048, 8192, 16384, 16384]);
	});

	it("turns thinking off without a level", () => {
		expect(thinkingSettings(haiku, {})).toEqual({ maxTokens: 32000 });
		// 0 is no limit given, as in pi-ai (it was sent as max_tokens 0, which the API refuses).
		expect(thinkingSettings(haiku, { maxTokens: 0 })).toEqual({ maxTokens: 32000 });
	});

	it("shrinks the budget below a small explicit max_tokens, and drops it when no room is left", () => {
		const small = { ...haiku, maxTokens: 5000 };
		expect(thinkingSettings(small, { reasoning: "high" })).toEqual({
			maxTokens: 5000,
			thinking: { type: "enabled", budget_tokens: 3976, display: "summarized" },
		});
		expect(thinkingSettings({ ...haiku, maxTokens: 1500 }, { reasoning: "high" })).toEqual({ maxTokens: 1500 });
	});

	it("maps levels to effort on adaptive models", () => {
		const opus46 = getModel("anthropic", "claude-opus-4-6");
		expect(thinkingSettings(opus46, { reasoning: "minimal" }).effort).toBe("low");
		expect(thinkingSettings(opus46, { reasoning: "medium" }).effort).toBe("medium");
		expect(thinkingSettings(opus46, { reasoning: "xhigh" }).effort).toBe("max");
	});
});
