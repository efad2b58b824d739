/**
 * Streaming tool execution and approvals: a call that waits for a person's decision while its
 * reply is still streaming is answered when the reply fails or the run is aborted, as a call that
 * runs would be (found by the testing kit's walk: the call was left without a result, and its
 * approval never resolved).
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel, text, toolCall } from "../../src/providers/scripted.js";
import { checkAgentInvariants } from "../../src/testing/agent-checks.js";
import type { AgentEvent } from "../../src/types/agent.js";
import { makeTool, ok, textOf } from "./helpers.js";

function agentWithGuardedSend(hook: boolean, reply: Parameters<typeof createScriptedModel>[0][number]) {
	const runs: string[] = [];
	const send = makeTool("send", async (id) => (runs.push(id), ok("sent")), { needsApproval: true });
	const scripted = createScriptedModel([reply, { content: "done" }], { delayMs: 1 });
	const agent = new Agent({ initialState: { model: scripted.model, tools: [send] }, streamFn: scripted.streamFn, toolExecution: "streaming", ...(hook ? { beforeToolCall: async () => undefined } : {}) });
	const events: AgentEvent[] = [];
	agent.subscribe((event) => void events.push(event));
	return { agent, events, runs };
}

describe("streaming tool execution: a call waiting for approval when its reply ends badly", () => {
	for (const hook of [false, true]) {
		it(`is answered, and its approval resolved, when the reply fails after it streamed (${hook ? "with" : "without"} beforeToolCall)`, async () => {
			const { agent, events, runs } = agentWithGuardedSend(hook, { content: [toolCall("send", {}, "a"), text("and then it breaks")], stopReason: "error", errorMessage: "overloaded" });
			await agent.prompt("go");
			expect(runs).toEqual([]);
			expect(checkAgentInvariants(events, agent)).toEqual([]);
			const resolved = events.flatMap((event) => (event.type === "approval_resolved" ? [`${event.toolCallId} ${event.decision}`] : []));
			expect(resolved).toEqual(["a aborted"]);
			expect(textOf(agent.state.messages.find((message) => message.role === "toolResult"))).toMatch(/Tool call aborted: the assistant message ended with stopReason "error"/);
		});

		it(`refuses an approval given once the reply failed, as the run says so, and answers the call aborted (${hook ? "with" : "without"} beforeToolCall)`, async () => {
			// Before, approve() at the failed reply's first message_end was taken: approval_resolved said
			// "approved" for a call that then ended with the reply's error and never ran.
			const { agent, events, runs } = agentWithGuardedSend(hook, { content: [toolCall("send", {}, "a"), text("and then it breaks")], stopReason: "error", errorMessage: "overloaded" });
			const answers: string[] = [];
			agent.subscribe((event) => {
				if (event.type !== "message_end" || event.message.role !== "assistant") return;
				try {
					void agent.approve("a#1");
					answers.push("accepted");
				} catch (error) {
					answers.push((error as Error).message);
				}
			});
			await agent.prompt("go");
			expect(answers[0]).toBe('agentchart: tool call "a#1" is not waiting for approval: the reply it came in failed (stopReason "error"), so it does not run');
			expect(runs).toEqual([]);
			const resolved = events.flatMap((event) => (event.type === "approval_resolved" ? [`${event.callKey} ${event.decision}`] : []));
			expect(resolved).toEqual(["a#1 aborted"]);
			expect(checkAgentInvariants(events, agent)).toEqual([]);
		});

		it(`is answered when the run is aborted while it waits and the reply still streams (${hook ? "with" : "without"} beforeToolCall)`, async () => {
			const { agent, events, runs } = agentWithGuardedSend(hook, { content: [toolCall("send", {}, "a"), text("a long tail ".repeat(50))] });
			agent.subscribe((event) => {
				if (event.type === "approval_requested") agent.abort();
			});
			await agent.prompt("go");
			expect(runs).toEqual([]);
			expect(checkAgentInvariants(events, agent)).toEqual([]);
			expect(agent.pendingApprovals).toEqual([]);
		});
	}
});
