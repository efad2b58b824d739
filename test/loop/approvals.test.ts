/**
 * A tool call that asks for a person's approval in the loop API (scratch/probeAB, 2026-12-07):
 * the loop API has no `approve()`, and the run waited for ever (no `agent_end`, `result()` never
 * settled). The call is now rejected as soon as the sink has the question, and never runs.
 */
import { describe, expect, it } from "vitest";
import { LOOP_API_REJECTS_APPROVALS, agentLoop, defaultConvertToLlm } from "../../src/index.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import { makeTool, ok, textOf, user } from "../agent/helpers.js";

describe("the loop API and tool calls that need approval", () => {
	for (const toolExecution of ["parallel", "sequential", "streaming"] as const) {
		for (const asked of ["needsApproval", "beforeToolCall"] as const) {
			it(`rejects the call at once and ends the run (${toolExecution}, ${asked})`, async () => {
				const runs: string[] = [];
				const deploy = makeTool("deploy", async (id) => (runs.push(id), ok("deployed")), asked === "needsApproval" ? { needsApproval: true } : {});
				const scripted = createScriptedModel([{ content: [toolCall("deploy", {}, "d1")] }, { content: "It was not deployed." }]);
				const stream = agentLoop(
					[user("deploy")],
					{ systemPrompt: "", messages: [], tools: [deploy] },
					{ model: scripted.model, convertToLlm: defaultConvertToLlm, toolExecution, ...(asked === "beforeToolCall" ? { beforeToolCall: async () => ({ approval: "required" as const }) } : {}) },
					undefined,
					scripted.streamFn,
				);
				const events: AgentEvent[] = [];
				for await (const event of stream) events.push(event);
				const messages = await stream.result();
				expect(runs).toEqual([]);
				const approvals = events.flatMap((event) => (event.type === "approval_requested" ? ["requested d1#1"] : event.type === "approval_resolved" ? [`${event.decision} ${event.callKey}: ${event.reason}`] : []));
				expect(approvals).toEqual(["requested d1#1", `rejected d1#1: ${LOOP_API_REJECTS_APPROVALS}`]);
				expect(textOf(messages.find((message) => message.role === "toolResult"))).toContain(LOOP_API_REJECTS_APPROVALS);
				expect(events.at(-1)?.type).toBe("agent_end");
				expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
			}, 10_000);
		}
	}
});
