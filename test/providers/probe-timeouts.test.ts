/**
 * `timeoutMs` at its edges. 0 passes the option check, and the proxy reads it as "no limit"
 * (like `maxReplyBytes` 0 and the agent's own timeouts); given as it is to the Anthropic and
 * OpenAI SDKs it failed every request at once with "Request timed out". A limit beyond what a
 * timer takes (3e9 ms, "practically none") fired at once too, with Node's TimeoutOverflowWarning.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { streamAnthropic } from "../../src/providers/anthropic.js";
import { getModel } from "../../src/providers/models.js";
import { streamOpenAICompletions } from "../../src/providers/openai-completions.js";
import { createOpenAICompatibleModel } from "../../src/providers/openai-models.js";
import { requestTimeoutMs } from "../../src/providers/stream-option-check.js";
import { textReply as anthropicText } from "./anthropic-server.js";
import { textReply as openaiText } from "./openai-server.js";
import { useProviderServers } from "./provider-servers.js";

const servers = useProviderServers();
const context = { messages: [{ role: "user" as const, content: "hi", timestamp: 1 }] };
const warnings: string[] = [];
const onWarning = (warning: Error) => warnings.push(warning.name);

beforeEach(() => {
	warnings.length = 0;
	process.on("warning", onWarning);
});
afterEach(() => {
	process.off("warning", onWarning);
	servers.anthropic.reset();
	servers.openai.reset();
});

describe.each([0, 3e9])("timeoutMs %d", (timeoutMs) => {
	it("is no limit for streamAnthropic: the reply arrives", async () => {
		servers.anthropic.respond({ kind: "sse", events: anthropicText("hello there"), chunkDelayMs: 5 });
		const model = { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: servers.anthropic.baseUrl };
		const reply = await streamAnthropic(model, context, { apiKey: "key", timeoutMs, maxRetries: 0 }).result();
		expect(reply.errorMessage).toBeUndefined();
		expect(reply.stopReason).toBe("stop");
		expect(reply.content).toEqual([{ type: "text", text: "hello there" }]);
		await new Promise((resolve) => setImmediate(resolve));
		expect(warnings).not.toContain("TimeoutOverflowWarning");
	});

	it("is no limit for streamOpenAICompletions: the reply arrives", async () => {
		servers.openai.respond({ kind: "sse", frames: openaiText("hello there"), chunkDelayMs: 5 });
		const model = createOpenAICompatibleModel({ baseUrl: servers.openai.baseUrl, id: "test-model" });
		const reply = await streamOpenAICompletions(model, context, { timeoutMs, maxRetries: 0 }).result();
		expect(reply.errorMessage).toBeUndefined();
		expect(reply.stopReason).toBe("stop");
		expect(reply.content).toEqual([{ type: "text", text: "hello there" }]);
		await new Promise((resolve) => setImmediate(resolve));
		expect(warnings).not.toContain("TimeoutOverflowWarning");
	});
});

describe("requestTimeoutMs", () => {
	it("keeps the default for undefined, reads 0 as no limit, and caps what a timer cannot take", () => {
		expect(requestTimeoutMs(undefined)).toBeUndefined();
		expect(requestTimeoutMs(0)).toBe(2_147_483_647);
		expect(requestTimeoutMs(30_000)).toBe(30_000);
		expect(requestTimeoutMs(3e9)).toBe(2_147_483_647);
	});
});
