/**
 * A reply the output limit cut off before anything streamed is an assistant message without
 * content. Every provider's converter leaves such a message out of the next request (ours, and
 * pi-ai's for Anthropic, OpenAI, Google and Bedrock), so the kit does not call it a request a
 * provider refuses (it did: `recordAgent` reported "empty assistant message" on a valid run).
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { recordAgent } from "../../src/testing/agent-checks.js";
import { providerRequestViolations } from "../../src/testing/provider-requests.js";
import type { AgentMessage, AssistantMessage } from "../../src/types/messages.js";

describe("an empty reply cut off by the output limit", () => {
	it("is no violation of a recorded run that resumes after it", async () => {
		const scripted = createScriptedModel([{ content: [], stopReason: "length" }, { content: "Fine." }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, outputLimitRecovery: { maxAttempts: 2 } });
		const recording = recordAgent(agent);
		await agent.prompt("hi");
		expect(agent.state.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
		expect(agent.state.messages[1]).toMatchObject({ content: [], stopReason: "length" });
		expect(recording.check()).toEqual([]);
		agent.dispose();
	});

	it("is left out like a failed reply, while an unanswered call after it is still found", () => {
		const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
		const empty: AssistantMessage = { role: "assistant", content: [], stopReason: "length", api: "x", provider: "x", model: "x", usage, timestamp: 0 };
		const withCall: AssistantMessage = { ...empty, content: [{ type: "toolCall", id: "c1", name: "t", arguments: {} }], stopReason: "toolUse" };
		const user: AgentMessage = { role: "user", content: "go", timestamp: 0 };
		expect(providerRequestViolations([user, empty, user])).toEqual([]);
		expect(providerRequestViolations([user, empty, withCall])).toEqual(expect.arrayContaining([expect.stringContaining("c1")]));
	});
});
