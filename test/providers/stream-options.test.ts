/**
 * A stream call's numeric settings are checked before any request: a `maxReplyBytes` of "8mb"
 * or -1, a NaN `timeoutMs`, a fractional `maxRetries` would otherwise be compared as they are by
 * the provider and quietly mean "no bound" or "no retry". Each built-in provider ends the reply
 * as an error naming the field, and its local server sees no request.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { streamAnthropic } from "../../src/providers/anthropic.js";
import { getModel } from "../../src/providers/models.js";
import { streamOpenAICompletions } from "../../src/providers/openai-completions.js";
import { createOpenAICompatibleModel } from "../../src/providers/openai-models.js";
import { streamProxy } from "../../src/providers/proxy.js";
import type { AssistantMessageEventStream } from "../../src/providers/event-stream.js";

let requests = 0;
const server = createServer((_request, response) => {
	requests++;
	response.writeHead(500).end();
});
let url = "";

beforeAll(async () => {
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
	await new Promise<void>((resolve) => server.close(() => resolve()));
});

const context = { systemPrompt: "s", messages: [{ role: "user" as const, content: "hi", timestamp: 1 }] };
type Bad = { timeoutMs?: unknown; maxRetries?: unknown; maxRetryDelayMs?: unknown; maxReplyBytes?: unknown; onPayload?: unknown; onResponse?: unknown };

const providers: Record<string, (bad: Bad) => AssistantMessageEventStream> = {
	anthropic: (bad) => streamAnthropic({ ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: url }, context, { apiKey: "key", ...(bad as object) }),
	openai: (bad) => streamOpenAICompletions(createOpenAICompatibleModel({ baseUrl: `${url}/v1`, id: "qwen3:8b" }), context, { apiKey: "key", ...(bad as object) }),
	proxy: (bad) => streamProxy(getModel("anthropic", "claude-haiku-4-5"), context, { proxyUrl: url, authToken: "tok", ...(bad as object) }),
};

describe.each(Object.keys(providers))("the %s provider", (name) => {
	it.each<[Bad, RegExp]>([
		[{ maxReplyBytes: "8mb" }, /^options\.maxReplyBytes must be a number of bytes, at least 0 \(0: no bound\), got "8mb"$/],
		[{ maxReplyBytes: -1 }, /^options\.maxReplyBytes must be a number of bytes, at least 0 \(0: no bound\), got -1$/],
		[{ timeoutMs: Number.NaN }, /^options\.timeoutMs must be a number of milliseconds, at least 0, got NaN$/],
		[{ maxRetries: 1.5 }, /^options\.maxRetries must be a whole number, at least 0, got 1\.5$/],
		[{ maxRetryDelayMs: -5 }, /^options\.maxRetryDelayMs must be a number of milliseconds, at least 0, got -5$/],
		// Probe AZ (2026-12-07): a callback that is not a function failed inside the provider ("options.onPayload is not a function").
		[{ onPayload: 5 }, /^options\.onPayload must be a function, got 5$/],
		[{ onResponse: "log" }, /^options\.onResponse must be a function, got "log"$/],
	])("ends the reply with an error naming the field for %j, before any request", async (bad, message) => {
		const before = requests;
		const reply = await (providers[name] as (bad: Bad) => AssistantMessageEventStream)(bad).result();
		expect(reply.stopReason).toBe("error");
		expect(reply.errorMessage).toMatch(message);
		expect(requests).toBe(before);
	});
});

// Probe AY (2026-12-07): a context whose messages are not a list was sent as no messages (the
// OpenAI-compatible provider answered an empty conversation) or failed with "content is not
// iterable" (Anthropic's).
describe.each(["anthropic", "openai"])("the %s provider's context", (name) => {
	const call = (context: unknown) =>
		name === "anthropic"
			? streamAnthropic({ ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: url }, context as never, { apiKey: "key" })
			: streamOpenAICompletions(createOpenAICompatibleModel({ baseUrl: `${url}/v1`, id: "qwen3:8b" }), context as never, { apiKey: "key" });
	it.each<[unknown, string]>([
		[{ messages: "hi" }, 'context.messages must be a list of messages, got "hi"'],
		[{ messages: [42] }, "context.messages[0] must be a message ({ role, content }), got 42"],
		[{ messages: [], systemPrompt: 5 }, "context.systemPrompt must be a text, got 5"],
		[{ messages: [], tools: "all" }, 'context.tools must be a list of tools, got "all"'],
		[null, "context must be an object ({ systemPrompt?, messages, tools? }), got null"],
	])("ends the reply with an error naming what is wrong with %j, before any request", async (context, message) => {
		const before = requests;
		const reply = await call(context).result();
		expect(reply.stopReason).toBe("error");
		expect(reply.errorMessage).toBe(message);
		expect(requests).toBe(before);
	});
});
