// The Restate tests' transcript check (scripts/restate/checks.ts) applies the provider's rule,
// not a stricter one: an abort that lands while the model streams a tool call keeps the
// streamed call in an aborted reply, which providers leave out of the next request (the
// "aborts a prompt sent right behind it" session test failed on CI that way, a false alarm).
import { describe, expect, it } from "vitest";
import { transcriptProblems } from "../../scripts/restate/checks.js";
import type { AgentMessage, AssistantMessage } from "../../src/types/messages.js";

const user: AgentMessage = { role: "user", content: [{ type: "text", text: "slow-tool:8000" }], timestamp: 1 };

function reply(stopReason: AssistantMessage["stopReason"], ids: string[]): AssistantMessage {
	return {
		role: "assistant",
		content: [{ type: "text", text: "Running the slow tool." }, ...ids.map((id) => ({ type: "toolCall" as const, id, name: "work", arguments: { ms: 8000 } }))],
		api: "scripted",
		provider: "scripted",
		model: "scripted",
		usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
		stopReason,
		...(stopReason === "aborted" ? { errorMessage: "Request was aborted" } : {}),
		timestamp: 2,
	};
}

function result(id: string): AgentMessage {
	return { role: "toolResult", toolCallId: id, toolName: "work", content: [{ type: "text", text: "worked" }], isError: false, timestamp: 3 };
}

describe("transcriptProblems", () => {
	it("takes an aborted reply that ends with a streamed, unanswered call", () => {
		expect(transcriptProblems([user, reply("aborted", ["t0_0"])])).toEqual([]);
	});

	it("reports a reply that asked for a tool and got no result", () => {
		expect(transcriptProblems([user, reply("toolUse", ["t0_0"])]).join("\n")).toContain("t0_0");
	});

	it("reports a call answered twice, and results out of order", () => {
		expect(transcriptProblems([user, reply("toolUse", ["t0_0"]), result("t0_0"), result("t0_0")]).join("\n")).toContain("second result for t0_0");
		expect(transcriptProblems([user, reply("toolUse", ["a", "b"]), result("b"), result("a")]).join("\n")).toContain("source order");
	});

	it("reports a result that answers no call", () => {
		expect(transcriptProblems([user, result("t9")]).join("\n")).toContain("orphan tool result t9");
	});
});
