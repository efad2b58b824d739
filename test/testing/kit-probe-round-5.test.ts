/**
 * The testing kit's fifth probe (scratch/probeAB, 2026-12-07): a valid run that the kit called a
 * violation. Two calls of one reply with one id, both waiting for approval: the first approved and
 * ended while the second still waited, which the kit read as a call ending while its approval was
 * still requested (it counted approvals by id, not by call).
 */
import { describe, expect, it } from "vitest";
import { Type } from "typebox";
import { Agent } from "../../src/agent.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import { checkAgentInvariants } from "../../src/testing/agent-checks.js";
import type { AgentEvent, AgentTool } from "../../src/types/agent.js";

const guard: AgentTool = {
	name: "guard",
	label: "Guard",
	description: "Needs a person each time.",
	parameters: Type.Object({ v: Type.Number() }),
	needsApproval: true,
	execute: async () => ({ content: [{ type: "text", text: "ran" }], details: {} }),
};

describe("checkAgentInvariants on a reply that repeats a call id", () => {
	for (const toolExecution of ["parallel", "streaming"] as const) {
		it(`accepts the first call approved and ended while the second waits (${toolExecution})`, async () => {
			const scripted = createScriptedModel([{ content: [toolCall("guard", { v: 1 }, "d"), toolCall("guard", { v: 2 }, "d")] }, { content: "done" }]);
			const agent = new Agent({ initialState: { model: scripted.model, tools: [guard] }, streamFn: scripted.streamFn, toolExecution });
			const events: AgentEvent[] = [];
			let secondAsked: () => void = () => {};
			const asked = new Promise<void>((resolve) => (secondAsked = resolve));
			agent.subscribe((event) => {
				events.push(event);
				if (event.type === "approval_requested" && event.callKey === "d#1") void agent.approve("d#1");
				if (event.type === "approval_requested" && event.callKey === "d#2") secondAsked();
			});
			const run = agent.prompt("go");
			await asked;
			// The first call ran and ended; the second waits.
			while (!events.some((event) => event.type === "tool_execution_end")) await new Promise((resolve) => setTimeout(resolve, 1));
			expect(agent.pendingApprovals.map((call) => call.callKey)).toEqual(["d#2"]);
			await agent.approve("d#2");
			await run;
			expect(checkAgentInvariants(events, agent)).toEqual([]);
			agent.dispose();
		});
	}

	it("still reports a call that ended while its only approval was requested", () => {
		const message = { role: "assistant", content: [{ type: "toolCall", id: "d", name: "guard", arguments: {} }], stopReason: "toolUse" } as unknown as Extract<AgentEvent, { type: "message_end" }>["message"];
		const events: AgentEvent[] = [
			{ type: "agent_start" },
			{ type: "turn_start" },
			{ type: "message_start", message },
			{ type: "message_end", message },
			{ type: "tool_execution_start", toolCallId: "d", toolName: "guard", args: {} },
			{ type: "approval_requested", toolCallId: "d", callKey: "d#1", toolName: "guard", args: {} },
			{ type: "tool_execution_end", toolCallId: "d", toolName: "guard", result: { content: [], details: {} }, isError: false },
		];
		const violations = checkAgentInvariants(events, { messages: [message], isStreaming: true, pendingToolCalls: new Set<string>() });
		expect(violations.map((violation) => violation.message)).toEqual(["tool_execution_end: tool d ended while its approval was still requested"]);
	});
});
