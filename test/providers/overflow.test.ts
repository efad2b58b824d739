import * as piAi from "@mariozechner/pi-ai";
import { describe, expect, it } from "vitest";
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
