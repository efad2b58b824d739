/**
 * What a newcomer gets wrong first with the OpenAI-compatible provider, each answered with a
 * message that names the cause: a base URL without its scheme, a base URL without `/v1`, and a
 * model whose provider is "openai" served from a local address (sent in OpenAI's form, as
 * pi-ai sends it).
 */
import { streamSimple, type Model as PiAiModel } from "@mariozechner/pi-ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { streamOpenAICompletions } from "../../src/providers/openai-completions.js";
import { createOpenAICompatibleModel } from "../../src/providers/openai-models.js";
import type { AssistantMessage } from "../../src/types/messages.js";
import type { Context, Model } from "../../src/types/model.js";
import { type OpenAITestServer, startOpenAIServer, textReply } from "./openai-server.js";

let server: OpenAITestServer;
beforeAll(async () => {
	server = await startOpenAIServer();
});
beforeEach(() => server.reset());
afterAll(() => server.close());

const context: Context = { systemPrompt: "Be brief.", messages: [{ role: "user", content: "hi", timestamp: 0 }] };

function modelAt(baseUrl: string, fields: Partial<Model> = {}): Model {
	return { ...createOpenAICompatibleModel({ baseUrl: "http://127.0.0.1:1/v1", id: "qwen3:8b" }), baseUrl, ...fields };
}

async function reply(model: Model, apiKey?: string): Promise<AssistantMessage> {
	return streamOpenAICompletions(model, context, { maxRetries: 0, ...(apiKey ? { apiKey } : {}) }).result();
}

describe("a base URL without http:// or https://", () => {
	it.each([["127.0.0.1:18080/v1"], ["localhost:18080/v1"]])("%s fails with a message that names it and the fix, before any request", async (baseUrl) => {
		const message = await reply(modelAt(baseUrl));
		expect(message.stopReason).toBe("error");
		expect(message.errorMessage).toBe(`Model qwen3:8b (provider local): the base URL "${baseUrl}" has no http:// or https:// scheme: use http://${baseUrl}`);
		expect(message.errorMessage).not.toContain("API key");
	});

	it("is refused by createOpenAICompatibleModel", () => {
		expect(() => createOpenAICompatibleModel({ baseUrl: "127.0.0.1:18080/v1", id: "m" })).toThrow(
			new TypeError('createOpenAICompatibleModel: the base URL "127.0.0.1:18080/v1" has no http:// or https:// scheme: use http://127.0.0.1:18080/v1'),
		);
		expect(() => createOpenAICompatibleModel({ baseUrl: "ftp://example.com/v1", id: "m" })).toThrow('the base URL "ftp://example.com/v1" is not an http:// or https:// URL');
	});
});

describe("createOpenAICompatibleModel's options", () => {
	const options = (given: object) => given as never;
	it.each([
		// The OpenAI SDK's spelling: it failed as "Cannot read properties of undefined (reading 'trim')".
		[{ baseURL: "http://127.0.0.1:11434/v1", id: "m" }, 'no option "baseURL" (its options: baseUrl, id, name, provider, reasoning, thinkingLevelMap, input, contextWindow, maxTokens, cost, headers, compat); the base URL is spelt "baseUrl" here'],
		// Ignored, it left 128000 where the server has less, and compaction came too late.
		[{ baseUrl: "http://127.0.0.1:11434/v1", id: "m", contextwindow: 8192 }, 'no option "contextwindow" (its options: '],
		[{ baseUrl: "http://127.0.0.1:11434/v1" }, "id must be the model name the server knows (a non-empty text), got undefined"],
		[{ baseUrl: 11434, id: "m" }, "baseUrl must be the server's API root, e.g. http://127.0.0.1:11434/v1, got 11434"],
		[undefined, 'options must be an object such as { baseUrl: "http://127.0.0.1:11434/v1", id: "qwen3:8b" }, got undefined'],
	])("refuses %o, naming what is wrong", (given, message) => {
		let thrown: unknown;
		try {
			createOpenAICompatibleModel(options(given as object));
		} catch (error) {
			thrown = error;
		}
		expect(thrown).toBeInstanceOf(TypeError);
		expect((thrown as Error).message).toContain(`createOpenAICompatibleModel: ${message}`);
	});
});

describe("a 404 from the server", () => {
	it("names the URL that was called, and asks whether the base URL is right (a missing /v1)", async () => {
		const root = server.baseUrl.replace(/\/v1$/, "");
		server.respond({ kind: "error", status: 404, body: "404 page not found" });
		const message = await reply(createOpenAICompatibleModel({ baseUrl: root, id: "qwen3:8b" }));
		expect(message.errorMessage).toBe(
			`404 Not Found: 404 page not found (POST ${root}/chat/completions: is the base URL right? OpenAI-compatible servers usually serve the API under /v1)`,
		);
		expect(server.requests[0]?.url).toBe("/chat/completions");
	});

	it("about a model names the URL without the base-URL hint", async () => {
		server.respond({ kind: "error", status: 404, body: { error: { message: 'model "qwen9" not found, try pulling it first', type: "not_found_error" } } });
		const message = await reply(createOpenAICompatibleModel({ baseUrl: server.baseUrl, id: "qwen9" }));
		expect(message.errorMessage).toBe(`404 not_found_error: model "qwen9" not found, try pulling it first (POST ${server.baseUrl}/chat/completions)`);
	});
});

describe('a model whose provider is "openai", served from a local address', () => {
	it("is sent in OpenAI's form, as pi-ai sends it, and needs no key", async () => {
		const model = modelAt(server.baseUrl, { provider: "openai", id: "gpt-local", reasoning: true, maxTokens: 4096 });
		server.respond({ kind: "sse", frames: textReply("ok") }, { kind: "sse", frames: textReply("ok") });
		const ours = await streamOpenAICompletions(model, context, { maxTokens: 1000, maxRetries: 0 }).result();
		const theirs = await streamSimple(model as unknown as PiAiModel<"openai-completions">, context as Parameters<typeof streamSimple>[1], { maxTokens: 1000, apiKey: "test-key" }).result();
		expect([ours.stopReason, theirs.stopReason]).toEqual(["stop", "stop"]);
		const [ourBody, piBody] = server.requests.map((request) => request.body);
		const form = (body: Record<string, unknown> | undefined) => ({
			systemRole: (body?.["messages"] as { role: string }[] | undefined)?.[0]?.role,
			maxCompletionTokens: body?.["max_completion_tokens"],
			maxTokens: body?.["max_tokens"],
			store: body?.["store"],
		});
		expect(form(ourBody)).toEqual({ systemRole: "developer", maxCompletionTokens: 1000, maxTokens: undefined, store: false });
		expect(form(ourBody)).toEqual(form(piBody));
	});

	it("a model the base URL alone describes keeps the local server's form", async () => {
		server.respond({ kind: "sse", frames: textReply("ok") });
		await reply(createOpenAICompatibleModel({ baseUrl: server.baseUrl, id: "qwen3:8b", reasoning: true }));
		const body = server.requests[0]?.body ?? {};
		expect((body["messages"] as { role: string }[])[0]?.role).toBe("system");
		expect(body["store"]).toBeUndefined();
	});
});
