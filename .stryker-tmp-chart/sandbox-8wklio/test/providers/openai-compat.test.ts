// @ts-nocheck
import { describe, expect, it } from "vitest";
import { apiKeyEnvNames, resolveOpenAIApiKey } from "../../src/providers/openai-client.js";
import {
	detectOpenAICompatibleServer,
	isLocalBaseUrl,
	openAICompatibleServers,
	resolveOpenAICompat,
} from "../../src/providers/openai-compat.js";
import { createOpenAICompatibleModel } from "../../src/providers/openai-models.js";

describe("detectOpenAICompatibleServer", () => {
	it.each([
		["https://api.openai.com/v1", "openai"],
		["https://openrouter.ai/api/v1", "openrouter"],
		["https://api.groq.com/openai/v1", "groq"],
		["https://api.deepseek.com/v1", "deepseek"],
		["https://api.x.ai/v1", "xai"],
		["https://api.cerebras.ai/v1", "cerebras"],
		["http://127.0.0.1:11434/v1", "ollama"],
		["http://gpu-box.lan:11434/v1", "ollama"],
		["http://localhost:1234/v1", "lm-studio"],
		["http://127.0.0.1:8000/v1", "vllm"],
		["http://[::1]:8080/v1", "llama.cpp"],
		["http://192.168.1.20:5000/v1", "local"],
		["https://llm.example.com/v1", "openai-compatible"],
		["not a url", "openai-compatible"],
	])("recognises %s as %s", (baseUrl, id) => {
		expect(detectOpenAICompatibleServer(baseUrl).id).toBe(id);
	});

	it("tells local hosts from hosted ones", () => {
		for (const url of ["http://localhost:1/v1", "http://10.0.0.2/v1", "http://172.20.1.1/v1", "http://box.local/v1", "http://[fd00::1]/v1"]) {
			expect(isLocalBaseUrl(url)).toBe(true);
		}
		for (const url of ["https://api.openai.com/v1", "http://172.32.0.1/v1", "http://fcdn.example.com/v1"]) {
			expect(isLocalBaseUrl(url)).toBe(false);
		}
	});

	it("lists a default base URL that it recognises for every known server", () => {
		for (const server of openAICompatibleServers) expect(detectOpenAICompatibleServer(server.baseUrl).id).toBe(server.id);
	});
});

describe("resolveOpenAICompat", () => {
	it("uses OpenAI's behaviour for OpenAI", () => {
		const compat = resolveOpenAICompat({ baseUrl: "https://api.openai.com/v1", id: "gpt-4.1" });
		expect(compat).toMatchObject({
			maxTokensField: "max_completion_tokens",
			sendDefaultMaxTokens: true,
			supportsStore: true,
			supportsDeveloperRole: true,
			supportsStrictMode: true,
			toolCallIdFormat: "openai",
			requiresApiKey: true,
		});
	});

	it("uses conservative defaults and no key for local servers", () => {
		const compat = resolveOpenAICompat({ baseUrl: "http://127.0.0.1:11434/v1", id: "qwen3" });
		expect(compat).toMatchObject({
			maxTokensField: "max_tokens",
			sendDefaultMaxTokens: false,
			supportsUsageInStreaming: true,
			supportsStore: false,
			supportsDeveloperRole: false,
			supportsStrictMode: false,
			requiresApiKey: false,
			reasoningFields: ["reasoning_content", "reasoning", "reasoning_text"],
		});
	});

	it("lets the model's compat win over the server's defaults, ignoring undefined fields", () => {
		const compat = resolveOpenAICompat({
			baseUrl: "http://127.0.0.1:8000/v1",
			id: "Qwen/Qwen3-8B",
			compat: { thinkingFormat: "qwen-chat-template", maxTokensField: "max_completion_tokens", supportsStore: undefined },
		});
		expect(compat).toMatchObject({ thinkingFormat: "qwen-chat-template", maxTokensField: "max_completion_tokens", supportsStore: false });
	});

	it("adds Anthropic cache markers for Claude on OpenRouter, and reads pi-ai's Mistral switch", () => {
		expect(resolveOpenAICompat({ baseUrl: "https://openrouter.ai/api/v1", id: "anthropic/claude-sonnet-4.5" }).cacheControlFormat).toBe("anthropic");
		expect(resolveOpenAICompat({ baseUrl: "https://openrouter.ai/api/v1", id: "openai/gpt-5" }).cacheControlFormat).toBeUndefined();
		expect(resolveOpenAICompat({ baseUrl: "https://x.test/v1", id: "m", compat: { requiresMistralToolIds: true } }).toolCallIdFormat).toBe("mistral");
	});
});

describe("createOpenAICompatibleModel", () => {
	it("builds a free, text-only entry named after the detected server", () => {
		expect(createOpenAICompatibleModel({ baseUrl: "http://127.0.0.1:11434/v1/", id: "qwen3:8b" })).toEqual({
			id: "qwen3:8b",
			name: "qwen3:8b",
			api: "openai-completions",
			provider: "ollama",
			baseUrl: "http://127.0.0.1:11434/v1",
			reasoning: false,
			input: ["text"],
			cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
			contextWindow: 128_000,
			maxTokens: 16_384,
		});
	});

	it("sends an explicit maxTokens by default, unless compat says otherwise", () => {
		const model = createOpenAICompatibleModel({ baseUrl: "http://127.0.0.1:8000/v1", id: "m", maxTokens: 2048 });
		expect(resolveOpenAICompat(model).sendDefaultMaxTokens).toBe(true);
		const quiet = createOpenAICompatibleModel({ baseUrl: "http://127.0.0.1:8000/v1", id: "m", maxTokens: 2048, compat: { sendDefaultMaxTokens: false } });
		expect(resolveOpenAICompat(quiet).sendDefaultMaxTokens).toBe(false);
	});
});

describe("resolveOpenAIApiKey", () => {
	const groq = createOpenAICompatibleModel({ baseUrl: "https://api.groq.com/openai/v1", id: "m" });
	const ollama = createOpenAICompatibleModel({ baseUrl: "http://127.0.0.1:11434/v1", id: "m" });

	it("prefers the option, then the provider's variable", () => {
		expect(resolveOpenAIApiKey(groq, { apiKey: "explicit" }, resolveOpenAICompat(groq), { GROQ_API_KEY: "env" })).toBe("explicit");
		expect(resolveOpenAIApiKey(groq, {}, resolveOpenAICompat(groq), { GROQ_API_KEY: " env " })).toBe("env");
		expect(resolveOpenAIApiKey(groq, {}, resolveOpenAICompat(groq), {})).toBeUndefined();
	});

	it("sends a placeholder to a local server without a key, but never another server's key", () => {
		expect(resolveOpenAIApiKey(ollama, {}, resolveOpenAICompat(ollama), { OPENAI_API_KEY: "sk-secret" })).toBe("no-key");
		expect(apiKeyEnvNames(ollama)).toEqual(["OLLAMA_API_KEY"]);
		const custom = createOpenAICompatibleModel({ baseUrl: "https://llm.example.com/v1", id: "m", provider: "my-gateway" });
		expect(apiKeyEnvNames(custom)).toEqual(["MY_GATEWAY_API_KEY"]);
	});
});
