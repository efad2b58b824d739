/**
 * `timeoutMs` at its edges. 0 passes the option check, and the proxy reads it as "no limit"
 * (like `maxReplyBytes` 0 and the agent's own timeouts); given as it is to the Anthropic and
 * OpenAI SDKs it failed every request at once with "Request timed out". A limit beyond what a
 * timer takes (3e9 ms, "practically none") fired at once too, with Node's TimeoutOverflowWarning.
 * One that is not whole (2500.5, or `0.1 * 3 * 1000`) made the Anthropic SDK refuse every request.
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

// The documented check asks only for a number at least 0, and a limit computed from seconds is
// rarely whole: the Anthropic SDK ended each such reply with "timeout must be an integer".
describe.each([2500.5, 0.1 * 3 * 1000, 60_000.5])("timeoutMs %s, not a whole number", (timeoutMs) => {
	it("is a limit streamAnthropic accepts: the reply arrives", async () => {
		servers.anthropic.respond({ kind: "sse", events: anthropicText("hello there") });
		const model = { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: servers.anthropic.baseUrl };
		const reply = await streamAnthropic(model, context, { apiKey: "key", timeoutMs, maxRetries: 0 }).result();
		expect(reply.errorMessage).toBeUndefined();
		expect(reply.stopReason).toBe("stop");
		expect(reply.content).toEqual([{ type: "text", text: "hello there" }]);
		expect(servers.anthropic.requests).toHaveLength(1);
	});
});

describe("requestTimeoutMs", () => {
	it("keeps the default for undefined, reads 0 as no limit, and caps what a timer cannot take", () => {
		expect(requestTimeoutMs(undefined)).toBeUndefined();
		expect(requestTimeoutMs(0)).toBe(2_147_483_647);
		expect(requestTimeoutMs(30_000)).toBe(30_000);
		expect(requestTimeoutMs(3e9)).toBe(2_147_483_647);
	});

	it("rounds a fraction up, so a limit is never shorter than asked", () => {
		expect(requestTimeoutMs(2500.5)).toBe(2501);
		expect(requestTimeoutMs(0.1 * 3 * 1000)).toBe(301);
		expect(requestTimeoutMs(0.5)).toBe(1);
		expect(requestTimeoutMs(Number.POSITIVE_INFINITY)).toBe(2_147_483_647);
	});
});
