import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import * as piAi from "@mariozechner/pi-ai";
import { describe, expect, it } from "vitest";
import { streamAnthropic } from "../../src/providers/anthropic.js";
import { getModel } from "../../src/providers/models.js";
import { streamOpenAICompletions } from "../../src/providers/openai-completions.js";
import { createOpenAICompatibleModel } from "../../src/providers/openai-models.js";
import { getOverflowPatterns, isContextOverflow } from "../../src/providers/overflow.js";
import { emptyUsage, type StopReason } from "../../src/types/content.js";
import type { AssistantMessage } from "../../src/types/messages.js";

function message(stopReason: StopReason, errorMessage?: string, usage: Partial<AssistantMessage["usage"]> = {}): AssistantMessage {
	return {
		role: "assistant",
		content: [],
		api: "anthropic-messages",
		provider: "anthropic",
		model: "claude-haiku-4-5",
		usage: { ...emptyUsage(), ...usage },
		stopReason,
		...(errorMessage ? { errorMessage } : {}),
		timestamp: 0,
	};
}

describe("isContextOverflow", () => {
	it.each([
		"400 invalid_request_error: prompt is too long: 213462 tokens > 200000 maximum",
		"413 request_too_large: Request exceeds the maximum allowed number of bytes.",
		// pi-ai's raw form of the same error, for messages persisted by pi.
		'400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}',
		"context_length_exceeded",
		"This model's maximum context length is 128000 tokens",
		"Input has too many tokens",
	])("recognises the overflow error %s", (text) => {
		expect(isContextOverflow(message("error", text))).toBe(true);
	});

	// Probe AY (2026-12-07): four of pi-ai 0.73.1's patterns were missing, so these overflows ended
	// the run instead of being compacted for (and pi transcripts holding them were misread).
	it.each([
		"400 prompt token count of 130000 exceeds the limit of 128000", // GitHub Copilot
		"400 invalid params, context window exceeds limit (2013)", // MiniMax
		"400 Your request exceeded model token limit: 262144", // Kimi
		"400 status code (no body)", // Cerebras
		"413 status code (no body)",
	])("recognises %s, as pi-ai does", (text) => {
		expect(isContextOverflow(message("error", text))).toBe(true);
		expect(piAi.isContextOverflow(message("error", text) as never)).toBe(true);
	});

	it("knows every overflow pattern pi-ai 0.73.1 knows (a drop-in judges a pi transcript as pi does)", () => {
		const ours = new Set(getOverflowPatterns().map((pattern) => `${pattern.source}/${pattern.flags}`));
		const missing = piAi.getOverflowPatterns().filter((pattern) => !ours.has(`${pattern.source}/${pattern.flags}`)).map(String);
		expect(missing).toEqual([]);
	});

	it.each([
		"429 rate_limit_error: Number of request tokens has exceeded your per-minute rate limit",
		"Too many requests: too many tokens",
		"529 overloaded_error: Overloaded",
		"401 authentication_error: invalid x-api-key",
		"Request was aborted",
	])("does not mistake %s for an overflow", (text) => {
		expect(isContextOverflow(message("error", text))).toBe(false);
	});

	it("ignores aborted messages even with an overflow-like text", () => {
		expect(isContextOverflow(message("aborted", "prompt is too long"))).toBe(false);
	});

	it("detects a silent overflow: a reply whose input exceeds the window", () => {
		expect(isContextOverflow(message("stop", undefined, { input: 150_000, cacheRead: 60_000 }), 200_000)).toBe(true);
		expect(isContextOverflow(message("stop", undefined, { input: 150_000, cacheRead: 40_000 }), 200_000)).toBe(false);
		expect(isContextOverflow(message("stop", undefined, { input: 250_000 }))).toBe(false);
	});

	it("detects a reply cut off before any output because the window is full", () => {
		expect(isContextOverflow(message("length", undefined, { input: 199_000, output: 0 }), 200_000)).toBe(true);
		expect(isContextOverflow(message("length", undefined, { input: 199_000, output: 12 }), 200_000)).toBe(false);
	});
});

// Review (2026-12-08): pi-ai reads a 400 or 413 without a body as an overflow (Cerebras sends
// those), but our providers word that answer otherwise, so the pattern copied from pi-ai never
// matched their errors. Checked through each provider against a server that answers so.
describe("a 400 or 413 without a body, through the built-in providers", () => {
	it.each([400, 413])("is an overflow (status %i)", async (status) => {
		const server = createServer((request, response) => {
			request.resume();
			request.on("end", () => response.writeHead(status).end());
		});
		await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
		try {
			const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
			const context = { messages: [{ role: "user" as const, content: "hi", timestamp: 1 }] };
			const openai = await streamOpenAICompletions(createOpenAICompatibleModel({ baseUrl: `${base}/v1`, id: "local" }), context, { maxRetries: 0 }).result();
			const anthropic = await streamAnthropic({ ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: base }, context, { maxRetries: 0, apiKey: "key" }).result();
			expect([openai.errorMessage, isContextOverflow(openai)]).toEqual([expect.stringMatching(new RegExp(`^${status} `)), true]);
			expect([anthropic.errorMessage, isContextOverflow(anthropic)]).toEqual([expect.stringMatching(new RegExp(`^${status} `)), true]);
		} finally {
			await new Promise<void>((resolve) => server.close(() => resolve()));
		}
	});
});
