/**
 * An SDK waiting out a rate limit is not a model gone silent (probe AY, 2026-12-07): the agent's
 * stall watch (`streamIdleTimeoutMs`) counted the built-in providers' retry waits as silence, so
 * at the defaults two 60 s `retry-after` waits used up the 120 s limit, the request was cancelled
 * as "stalled" and the attempt that would have succeeded never went out. Each attempt's request
 * and answer are now signs of life. Scaled down here: an idle limit of 800 ms, waits of 400 ms.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { streamAnthropic } from "../../src/providers/anthropic.js";
import { getModel } from "../../src/providers/models.js";
import { streamOpenAICompletions } from "../../src/providers/openai-completions.js";
import { createOpenAICompatibleModel } from "../../src/providers/openai-models.js";
import { textOf } from "../agent/helpers.js";
import * as anthropicWire from "./anthropic-server.js";
import * as openaiWire from "./openai-server.js";

const IDLE_MS = 800;
const RETRY = { maxRetries: 3, maxRetryDelayMs: 400 };

let anthropic: anthropicWire.AnthropicTestServer;
let openai: openaiWire.OpenAITestServer;

beforeAll(async () => {
	anthropic = await anthropicWire.startAnthropicServer();
	openai = await openaiWire.startOpenAIServer();
});

afterAll(async () => {
	await anthropic.close();
	await openai.close();
});

const anthropicLimit = (): anthropicWire.ScriptedResponse => ({ kind: "error", status: 429, headers: { "retry-after": "60" }, body: anthropicWire.errorBody("rate_limit_error", "This request would exceed the rate limit.") });
const openaiLimit = (): openaiWire.ScriptedResponse => ({ kind: "error", status: 429, headers: { "retry-after": "60" }, body: openaiWire.errorBody("Rate limit reached for requests", "requests", "rate_limit_exceeded") });

describe("an agent whose provider waits out rate limits", () => {
	it("gets the Anthropic answer after three 429s, each wait shorter than the idle limit though all of them are longer", async () => {
		anthropic.reset();
		anthropic.respond(anthropicLimit(), anthropicLimit(), anthropicLimit(), { kind: "sse", events: anthropicWire.textReply("finally") });
		const model = { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: anthropic.baseUrl };
		// A stream function that wraps the provider, passing its options on, as users write them.
		const agent = new Agent({ initialState: { model }, streamFn: (m, c, o) => streamAnthropic(m, c, { ...o, apiKey: "key", ...RETRY }), streamIdleTimeoutMs: IDLE_MS });
		await agent.prompt("hi");
		expect(agent.state.errorMessage).toBeUndefined();
		expect(textOf(agent.state.messages.at(-1))).toBe("finally");
		expect(anthropic.requests).toHaveLength(4);
	});

	it("gets the OpenAI-compatible answer after three 429s", async () => {
		openai.reset();
		openai.respond(openaiLimit(), openaiLimit(), openaiLimit(), { kind: "sse", frames: openaiWire.textReply("finally") });
		const model = createOpenAICompatibleModel({ baseUrl: openai.baseUrl, id: "local" });
		const agent = new Agent({ initialState: { model }, streamFn: (m, c, o) => streamOpenAICompletions(m, c, { ...o, ...RETRY }), streamIdleTimeoutMs: IDLE_MS });
		await agent.prompt("hi");
		expect(agent.state.errorMessage).toBeUndefined();
		expect(textOf(agent.state.messages.at(-1))).toBe("finally");
		expect(openai.requests).toHaveLength(4);
	});

	it("gets a compaction's summary after three 429s (the summariser's watch)", async () => {
		anthropic.reset();
		anthropic.respond(anthropicLimit(), anthropicLimit(), anthropicLimit(), { kind: "sse", events: anthropicWire.textReply("the summary") });
		const model = { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: anthropic.baseUrl };
		const long = "x".repeat(4000);
		const agent = new Agent({
			initialState: { model, messages: [{ role: "user", content: long, timestamp: 1 }, { role: "user", content: long, timestamp: 2 }] },
			streamFn: (m, c, o) => streamAnthropic(m, c, { ...o, apiKey: "key", ...RETRY }),
			streamIdleTimeoutMs: IDLE_MS,
			compaction: { enabled: true, keepRecentTokens: 1 },
		});
		const result = await agent.compact();
		expect(result.summary).toContain("the summary");
		expect(anthropic.requests).toHaveLength(4);
	});

	it("still ends a request whose server never answers, after the idle limit", async () => {
		openai.reset();
		openai.respond({ kind: "hang" });
		const model = createOpenAICompatibleModel({ baseUrl: openai.baseUrl, id: "local" });
		const agent = new Agent({ initialState: { model }, streamFn: (m, c, o) => streamOpenAICompletions(m, c, { ...o, ...RETRY }), streamIdleTimeoutMs: IDLE_MS });
		await agent.prompt("hi");
		expect(agent.state.errorMessage).toMatch(/^The model's stream stalled: no content arrived for 0\.8 s/);
	});
});
