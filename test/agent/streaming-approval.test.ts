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

describe("streaming tool execution: a sequential tool's call waiting for approval, with calls after it", () => {
	// Found by the agent property once its hooks could ask for approval: the calls queued behind the
	// waiting one counted as work the batch could start, and the chart went round between
	// tool-dispatching and tool-executing until XState's 10,000-microstep limit failed the run.
	for (const asked of ["needsApproval", "beforeToolCall"] as const) {
		for (const decision of ["approve", "reject"] as const) {
			it(`waits for the decision, then runs the calls after it (${asked}, ${decision})`, async () => {
				const runs: string[] = [];
				const serial = makeTool("serial", async (id) => (runs.push(id), ok("serial ran")), { executionMode: "sequential", ...(asked === "needsApproval" ? { needsApproval: true } : {}) });
				const work = makeTool("work", async (id) => (runs.push(id), ok("work ran")));
				const scripted = createScriptedModel([{ content: [toolCall("serial", {}, "s1"), toolCall("work", {}, "w1"), toolCall("work", {}, "w2")] }, { content: "done" }], { delayMs: 1 });
				const agent = new Agent({
					initialState: { model: scripted.model, tools: [serial, work] },
					streamFn: scripted.streamFn,
					toolExecution: "streaming",
					...(asked === "beforeToolCall" ? { beforeToolCall: async ({ toolCall: call }) => (call.name === "serial" ? { approval: "required" as const } : undefined) } : {}),
				});
				const events: AgentEvent[] = [];
				agent.subscribe((event) => {
					events.push(event);
					if (event.type === "approval_requested") setTimeout(() => void (decision === "approve" ? agent.approve(event.callKey) : agent.reject(event.callKey, "no")), 5);
				});
				await agent.prompt("go");
				expect(agent.state.errorMessage).toBeUndefined();
				expect(runs).toEqual(decision === "approve" ? ["s1", "w1", "w2"] : ["w1", "w2"]);
				expect(agent.state.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "toolResult", "toolResult", "assistant"]);
				expect(checkAgentInvariants(events, agent)).toEqual([]);
			});
		}
	}
});
