/**
 * A decision that comes after a call's approval deadline does not count: `approvalTimeoutMs`
 * runs from when the call was asked, also across a restore, so a call restored after its deadline
 * (the process was down longer than the timeout) is not offered as waiting and cannot be
 * approved, and neither can a call whose deadline passed while the process was busy and its
 * timer had not fired yet. A decision made in time still counts after a restore that comes
 * after the deadline (its decision was stored before a crash).
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { type AgentStore, createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent, AnyAgentTool } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { expectValidTranscript, makeTool, ok, textOf, thrownBy } from "../agent/helpers.js";

const TIMED_OUT = "No decision on this tool call came in time; it was not run";

function deployTool(runs: string[]): AnyAgentTool {
	return makeTool("deploy", async () => {
		runs.push("deploy");
		return ok("deployed");
	}, { needsApproval: true });
}

function toolResultTexts(messages: readonly AgentMessage[]): string[] {
	return messages.filter((message) => message.role === "toolResult").map((message) => textOf(message));
}

/** An agent whose first reply calls deploy (id "a"), then answers "done". */
function deployingAgent(tools: AnyAgentTool[], approvalTimeoutMs: number): Agent {
	const scripted = createScriptedModel([{ content: [toolCall("deploy", {}, "a")] }, { content: "done" }]);
	return new Agent({ initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn, approvalTimeoutMs });
}

async function untilAwaiting(agent: Agent): Promise<void> {
	for (let i = 0; i < 500 && agent.pendingApprovals.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 1));
	expect(agent.pendingApprovals.map((call) => call.toolCallId)).toEqual(["a"]);
}

/** The run as stored while it waited, its deadline moved to `at` (as if that much time had passed since). */
function withDeadline(stored: string, at: number): AgentSnapshot {
	const snapshot = JSON.parse(stored) as AgentSnapshot;
	for (const call of snapshot.machine.context.run?.batch?.calls ?? []) if (call.approval) call.approval.deadline = at;
	return snapshot;
}

describe("approval decisions after the deadline", () => {
	it("a call restored after its deadline is not waiting: not listed, approve() and reject() throw, the tool never runs", async () => {
		const runs: string[] = [];
		const tools = [deployTool(runs)];
		const first = deployingAgent(tools, 60_000);
		const run = first.prompt("deploy");
		await untilAwaiting(first);
		const stored = JSON.stringify(first.snapshot());
		first.dispose();
		await run;

		const scripted = createScriptedModel([{ content: "done" }]);
		const events: AgentEvent[] = [];
		const restored = Agent.restore(withDeadline(stored, Date.now() - 1), { initialState: { tools }, streamFn: scripted.streamFn, approvalTimeoutMs: 60_000, listeners: [(event) => void events.push(event)] });
		expect(restored.pendingApprovals).toEqual([]);
		expect(thrownBy(() => restored.approve("a"))).toMatch(/tool call "a" is not waiting for approval: its approvalTimeoutMs ran out before this decision/);
		expect(thrownBy(() => restored.reject("a", "no"))).toMatch(/tool call "a" is not waiting for approval: its approvalTimeoutMs ran out/);
		await restored.waitForIdle();

		expect(runs).toEqual([]);
		expect(toolResultTexts(restored.state.messages)).toEqual([TIMED_OUT]);
		expect(events.filter((event) => event.type === "approval_resolved").map((event) => event.type === "approval_resolved" && event.decision)).toEqual(["timed-out"]);
		expectValidTranscript(restored.state.messages);
	});

	it("a call whose deadline passed while the process was busy cannot be approved before its timer fires", async () => {
		const runs: string[] = [];
		const agent = deployingAgent([deployTool(runs)], 250);
		const run = agent.prompt("deploy");
		await untilAwaiting(agent);
		const deadline = agent.pendingApprovals[0]?.deadline ?? 0;
		// Busy past the deadline: no timer can fire during synchronous work.
		while (Date.now() <= deadline) {
			/* the event loop is held, as by a long synchronous handler */
		}
		expect(agent.pendingApprovals).toEqual([]);
		expect(thrownBy(() => agent.approve("a"))).toMatch(/its approvalTimeoutMs ran out before this decision/);
		await run;

		expect(runs).toEqual([]);
		expect(toolResultTexts(agent.state.messages)).toEqual([TIMED_OUT]);
	});

	it("a call approved (and stored) before its deadline runs once after a restart that comes after the deadline", async () => {
		const runs: string[] = [];
		const tools = [deployTool(runs)];
		const disk = createMemoryStore();
		// The first process stops right after the decision is stored: its tool's intent is never written.
		const crashing: AgentStore = {
			load: (id, options) => disk.load(id, options),
			saveSnapshot: (id, snapshot) => disk.saveSnapshot(id, snapshot),
			appendJournal: (id, entry) => (entry.kind === "tool" && entry.phase === "intent" ? new Promise<void>(() => {}) : disk.appendJournal(id, entry)),
		};
		const scripted = createScriptedModel([{ content: [toolCall("deploy", {}, "a")] }, { content: "done" }]);
		const first = new Agent({ initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn, approvalTimeoutMs: 60_000, store: crashing, sessionId: "s" });
		void first.prompt("deploy");
		await untilAwaiting(first);
		await first.approve("a");
		expect(runs).toEqual([]);

		// The next process loads the session once the deadline is long past: the session's times
		// (the deadline, when the decision was made) move back as far, as if that much time had passed.
		const later: AgentStore = {
			load: async (id, options) => {
				const loaded = await disk.load(id, options);
				for (const call of loaded?.snapshot?.machine.context.run?.batch?.calls ?? []) {
					if (call.approval?.deadline === undefined) continue;
					const shift = call.approval.deadline - (Date.now() - 60_000);
					call.approval.deadline -= shift;
					for (const entry of loaded?.snapshot?.journal ?? []) if (entry.kind === "approval" && entry.phase === "decided" && entry.decidedAt !== undefined) entry.decidedAt -= shift;
				}
				return loaded;
			},
			saveSnapshot: (id, snapshot) => disk.saveSnapshot(id, snapshot),
			appendJournal: (id, entry) => disk.appendJournal(id, entry),
		};
		const next = createScriptedModel([{ content: "done" }]);
		const restored = await Agent.load({ store: later, sessionId: "s", initialState: { tools }, streamFn: next.streamFn, approvalTimeoutMs: 60_000 });
		await restored.waitForIdle();
		expect(runs).toEqual(["deploy"]);
		expect(toolResultTexts(restored.state.messages)).toEqual(["deployed"]);
		expectValidTranscript(restored.state.messages);
		first.dispose();
	});

	// Streaming mode: a reply that still streamed when the process stopped is closed again by the
	// restored run, which asks about its waiting calls again; the deadline is the first ask's.
	for (const passed of [false, true]) {
		it(`a call asked again after a restart (its reply was still streaming) keeps the deadline it was first asked with${passed ? ", which passed meanwhile" : ""}`, async () => {
			const runs: string[] = [];
			const tools = [deployTool(runs)];
			const disk = createMemoryStore();
			let stopped = false;
			// The first process stops once the question is stored: nothing it writes after that lands.
			const first: AgentStore = {
				load: (id, options) => disk.load(id, options),
				saveSnapshot: (id, snapshot) => (stopped ? new Promise<void>(() => {}) : disk.saveSnapshot(id, snapshot)),
				appendJournal: (id, entry) => (stopped ? new Promise<void>(() => {}) : disk.appendJournal(id, entry)),
			};
			const tail = "and a long tail of text that keeps streaming ".repeat(40);
			const scripted = createScriptedModel([{ content: [toolCall("deploy", {}, "a"), { type: "text", text: tail }], delayMs: 5 }, { content: "done" }]);
			const asking = new Agent({ initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn, toolExecution: "streaming", approvalTimeoutMs: 60_000, store: first, sessionId: "s" });
			asking.subscribe((event) => {
				if (event.type === "approval_requested") stopped = true;
			});
			void asking.prompt("deploy");
			await untilAwaiting(asking);
			expect(stopped).toBe(true);

			// What the first ask stored, its deadline set to one no timeout from now would give.
			const asked = passed ? Date.now() - 1 : Date.now() + 3_600_000 + 123;
			const later: AgentStore = {
				load: async (id, options) => {
					const loaded = await disk.load(id, options);
					for (const entry of loaded?.snapshot?.journal ?? []) if (entry.kind === "approval" && entry.phase === "requested") entry.deadline = asked;
					for (const call of loaded?.snapshot?.machine.context.run?.batch?.calls ?? []) if (call.approval) call.approval.deadline = asked;
					return loaded;
				},
				saveSnapshot: (id, snapshot) => disk.saveSnapshot(id, snapshot),
				appendJournal: (id, entry) => disk.appendJournal(id, entry),
			};
			const next = createScriptedModel([{ content: "done" }]);
			const events: AgentEvent[] = [];
			const restored = await Agent.load({ store: later, sessionId: "s", initialState: { tools }, streamFn: next.streamFn, toolExecution: "streaming", approvalTimeoutMs: 60_000, listeners: [(event) => void events.push(event)] });
			if (passed) {
				await restored.waitForIdle();
				expect(runs).toEqual([]);
				expect(toolResultTexts(restored.state.messages)).toEqual([TIMED_OUT]);
				expectValidTranscript(restored.state.messages);
			} else {
				await untilAwaiting(restored);
				expect(restored.pendingApprovals.map((call) => call.deadline)).toEqual([asked]);
				restored.abort();
				await restored.waitForIdle();
			}
			expect(events.filter((event) => event.type === "approval_requested").length).toBe(1);
			asking.dispose();
		});
	}
});
