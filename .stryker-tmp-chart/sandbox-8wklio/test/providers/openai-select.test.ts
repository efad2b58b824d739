// @ts-nocheck
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selectOpenAICompatibleModel } from "../../src/demo/openai-select.js";
import { type OpenAITestServer, startOpenAIServer, textReply } from "./openai-server.js";

let server: OpenAITestServer;

beforeAll(async () => {
	server = await startOpenAIServer();
});
afterAll(() => server.close());

describe("selectOpenAICompatibleModel (demo)", () => {
	it("builds the model from the flags and sends the key given on the command line", async () => {
		const choice = selectOpenAICompatibleModel({ baseUrl: ` ${server.baseUrl}/ `, model: " qwen3:8b ", apiKey: "cli-key" });
		expect(choice.model).toMatchObject({ id: "qwen3:8b", api: "openai-completions", baseUrl: server.baseUrl });
		server.respond({ kind: "sse", frames: textReply("hello") });
		const stream = await choice.streamFn(choice.model, { messages: [{ role: "user", content: "hi", timestamp: 0 }] });
		const result = await stream.result();
		expect(result.content).toEqual([{ type: "text", text: "hello" }]);
		expect(server.requests[0]?.headers.authorization).toBe("Bearer cli-key");
		expect(server.requests[0]?.body["model"]).toBe("qwen3:8b");
	});

	it("names a known local server as the provider", () => {
		expect(selectOpenAICompatibleModel({ baseUrl: "http://127.0.0.1:11434/v1", model: "llama3.2" }).model.provider).toBe("ollama");
	});

	it("rejects a base URL that is not http(s) and a missing model name", () => {
		expect(() => selectOpenAICompatibleModel({ baseUrl: "localhost:11434", model: "m" })).toThrow(/--base-url must be an http or https URL/);
		expect(() => selectOpenAICompatibleModel({ baseUrl: "11434", model: "m" })).toThrow(/--base-url must be a URL/);
		expect(() => selectOpenAICompatibleModel({ baseUrl: "http://127.0.0.1:11434/v1", model: " " })).toThrow(/--model is required/);
	});
});
