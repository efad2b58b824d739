/**
 * A decision is journaled (a restore sends it again), so `approve()` and `reject()` save no
 * snapshot of their own: each one wrote the whole transcript once more (a probe: 300 prompts with
 * an approval each wrote 901 snapshots, 154 MB, for a 0.34 MB session). A decision whose entry
 * fails still falls back to a snapshot (approvals.test.ts), and a process that restarts after a
 * decision runs the decided calls with the decided arguments (below).
 */
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { type AgentStore, createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentTool } from "../../src/types/agent.js";

/** A memory store that logs what it is given: `snapshot`, or the journal entry's kind and phase. */
function loggedStore() {
	const inner = createMemoryStore();
	const log: string[] = [];
	const store: AgentStore = {
		load: (id, options) => inner.load(id, options),
		saveSnapshot: (id, snapshot) => {
			log.push("snapshot");
			return inner.saveSnapshot(id, snapshot);
		},
		appendJournal: (id, entry) => {
			log.push(`${entry.kind} ${entry.phase}`);
			return inner.appendJournal(id, entry);
		},
	};
	return { store, log };
}

const params = Type.Object({ amount: Type.Number() });

function chargeTool(ran: number[]): AgentTool<typeof params> {
	return {
		name: "charge",
		label: "Charge",
		description: "Charges a card",
		parameters: params,
		needsApproval: true,
		execute: async (_id, { amount }) => {
			ran.push(amount);
			return { content: [{ type: "text", text: `charged ${amount}` }], details: undefined };
		},
	};
}

describe("a decision on a call waiting for approval, with a store", () => {
	for (const decision of ["approve", "reject"] as const) {
		it(`is journaled, and ${decision}() saves no snapshot of its own`, async () => {
			const { store, log } = loggedStore();
			const ran: number[] = [];
			const scripted = createScriptedModel([{ content: [toolCall("charge", { amount: 5 }, "c")] }, { content: "done" }]);
			const agent = new Agent({ store, sessionId: "s", initialState: { model: scripted.model, tools: [chargeTool(ran)] }, streamFn: scripted.streamFn });
			const run = agent.prompt("charge me");
			while (agent.pendingApprovals.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
			await agent.saved();
			const decidedAt = log.length;
			if (decision === "approve") await agent.approve("c");
			else await agent.reject("c", "no");
			// The decision's entry is stored before the call goes on, and no snapshot follows it.
			expect(log[decidedAt]).toBe("approval decided");
			expect(log[decidedAt + 1]).toBe(decision === "approve" ? "tool intent" : "model intent");
			await run;
			await agent.saved();
			// After the decision, one snapshot at most: the run's end (its wait's snapshot was of the run in progress).
			expect(log.slice(decidedAt).filter((entry) => entry === "snapshot").length).toBeLessThanOrEqual(1);
			expect(ran).toEqual(decision === "approve" ? [5] : []);
			agent.dispose();
		});
	}

	it("survives a restart right after it: the approved call ran once, with the arguments the person gave", async () => {
		const store = createMemoryStore();
		const ran: number[] = [];
		const scripted = createScriptedModel([{ content: [toolCall("charge", { amount: 5 }, "a"), toolCall("charge", { amount: 7 }, "b")] }, { content: "done" }]);
		// In the first process the call starts and never ends: the process goes away during it.
		const hanging: AgentTool<typeof params> = {
			...chargeTool(ran),
			execute: async (_id, { amount }) => {
				ran.push(amount);
				return new Promise(() => {});
			},
		};
		const first = new Agent({ store, sessionId: "s", initialState: { model: scripted.model, tools: [hanging] }, streamFn: scripted.streamFn });
		void first.prompt("charge me twice");
		while (first.pendingApprovals.length < 2) await new Promise((resolve) => setTimeout(resolve, 1));
		await first.approve("a", { arguments: { amount: 6 } });
		while (ran.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
		await first.saved();
		first.dispose();
		const again = createScriptedModel([{ content: "done" }]);
		const second = await Agent.load({ store, sessionId: "s", initialState: { model: again.model, tools: [chargeTool(ran)] }, streamFn: again.streamFn });
		while (second.pendingApprovals.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
		expect(second.pendingApprovals.map((call) => call.toolCallId)).toEqual(["b"]);
		await second.reject("b", "not that one");
		await second.waitForIdle();
		// "a" ran once, with the decided 6, and is answered as interrupted (not replay-safe); "b" never ran.
		expect(ran).toEqual([6]);
		const results = second.state.messages.filter((message) => message.role === "toolResult");
		expect(results.map((message) => [message.toolCallId, message.isError])).toEqual([
			["a", true],
			["b", true],
		]);
		second.dispose();
	});
});
