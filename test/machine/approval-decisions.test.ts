/**
 * Decisions on calls waiting for approval sent to the bare machine (`createActor(agentMachine)`,
 * as embedders run it, and agentchart's interpreter of it, as an Agent runs it), decided as the
 * Agent decides them:
 * - a decision that comes after the call's deadline is not taken, also before the deadline's timer
 *   fired (the event loop was busy): the call is rejected as timed out and its tool never runs
 *   (the machine used to run it); a decision made in time and sent later says when it was made
 *   (`decidedAt`) and counts;
 * - a decision the machine does not take (an unknown id, a call answered already, one past its
 *   deadline, one after an abort) is said with `agentchart.approval.ignored`, where it used to be dropped silently; an
 *   Agent's listeners never see that event;
 * - a call asked without a deadline and restored into a machine (or an Agent) with an approval
 *   timeout gets that timeout from the restore, where it used to wait for ever; a deadline a call
 *   was asked with stands whatever timeout the restored one has.
 */
import { type AnyActorLogic, createActor } from "xstate";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Agent } from "../../src/agent.js";
import type { PersistedAgentMachine } from "../../src/durable/snapshot.js";
import { hydrateAgentSnapshot } from "../../src/machine.js";
import { agentLogic } from "../../src/machines/agent-logic.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import type { AgentMachineConfig, AgentMachineContext, AgentMachineEmitted } from "../../src/machines/types.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent, AnyAgentTool } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { makeTool, ok, textOf, user } from "../agent/helpers.js";

const TIMED_OUT = "No decision on this tool call came in time; it was not run";

const interpreters: [string, AnyActorLogic][] = [
	["XState's interpreter", agentMachine],
	["agentchart's interpreter", agentLogic],
];

const stopped: { stop(): void }[] = [];
afterEach(() => {
	for (const actor of stopped.splice(0)) actor.stop();
});

async function until(check: () => boolean): Promise<void> {
	for (let i = 0; i < 2000 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 1));
	expect(check()).toBe(true);
}

/** Holds the event loop, as a long synchronous handler does: no timer can fire meanwhile. */
function busyFor(ms: number): void {
	const end = Date.now() + ms;
	while (Date.now() < end) {
		/* busy */
	}
}

function deployTools(runs: string[]): AnyAgentTool[] {
	return [makeTool("deploy", async (id) => (runs.push(id), ok("deployed")), { needsApproval: true })];
}

interface Snap {
	value: unknown;
	context: AgentMachineContext;
	matches(value: unknown): boolean;
}

/** A bare machine whose reply calls deploy `ids`, then answers "done"; it runs until the calls wait. */
async function waitingMachine(logic: AnyActorLogic, config: Partial<AgentMachineConfig>, ids = ["a"]) {
	const runs: string[] = [];
	const tools = deployTools(runs);
	const scripted = createScriptedModel([{ content: ids.map((id) => toolCall("deploy", {}, id)) }, { content: "done" }]);
	const actor = createActor(logic, { input: { model: scripted.model, tools, config: { streamFn: scripted.streamFn, ...config } } });
	stopped.push(actor);
	const emitted: AgentMachineEmitted[] = [];
	actor.on("*", (event: AgentMachineEmitted) => void emitted.push(event));
	actor.start();
	actor.send({ type: "prompt", messages: [user("deploy")] });
	const snapshot = () => actor.getSnapshot() as unknown as Snap;
	await until(() => snapshot().matches({ running: "awaiting-approval" }));
	return { actor, runs, tools, emitted, snapshot };
}

function ignored(emitted: readonly AgentMachineEmitted[]) {
	return emitted.filter((event) => event.type === "agentchart.approval.ignored");
}

function decisions(emitted: readonly AgentMachineEmitted[]) {
	return emitted.flatMap((event) => (event.type === "approval_resolved" ? [`${event.toolCallId}:${event.decision}`] : []));
}

function toolResults(messages: readonly AgentMessage[]): string[] {
	return messages.filter((message) => message.role === "toolResult").map((message) => textOf(message));
}

describe.each(interpreters)("decisions after the deadline, on %s", (_name, logic) => {
	for (const type of ["approve", "reject"] as const) {
		it(`${type} after the deadline, before its timer fired, is not taken: the call times out and its tool never runs`, async () => {
			const machine = await waitingMachine(logic, { approvalTimeoutMs: 100 });
			busyFor(300);
			machine.actor.send(type === "approve" ? { type, toolCallId: "a" } : { type, toolCallId: "a", reason: "no" });
			expect(ignored(machine.emitted)).toEqual([{ type: "agentchart.approval.ignored", toolCallId: "a", decision: type, reason: "timed-out" }]);
			await until(() => machine.snapshot().matches("idle"));
			expect(machine.runs).toEqual([]);
			expect(decisions(machine.emitted)).toEqual(["a:timed-out"]);
			expect(toolResults(machine.snapshot().context.messages)).toEqual([TIMED_OUT]);
		});
	}

	it("a decision made in time and sent after the deadline (decidedAt) counts", async () => {
		const machine = await waitingMachine(logic, { approvalTimeoutMs: 100 });
		const decidedAt = Date.now();
		busyFor(300);
		machine.actor.send({ type: "approve", toolCallId: "a", decidedAt });
		await until(() => machine.snapshot().matches("idle"));
		expect(ignored(machine.emitted)).toEqual([]);
		expect(machine.runs).toEqual(["a"]);
		expect(decisions(machine.emitted)).toEqual(["a:approved"]);
	});
});

describe.each(interpreters)("decisions the machine does not take, on %s", (_name, logic) => {
	it("are said with agentchart.approval.ignored: an unknown id, a call answered already, no run", async () => {
		const machine = await waitingMachine(logic, {}, ["a", "b"]);
		machine.actor.send({ type: "approve", toolCallId: "nope" });
		machine.actor.send({ type: "approve", toolCallId: "a" });
		// "a" is answered while "b" still waits: the batch still has it.
		machine.actor.send({ type: "approve", toolCallId: "a" });
		machine.actor.send({ type: "reject", toolCallId: "a", reason: "too late" });
		machine.actor.send({ type: "reject", toolCallId: "b" });
		await until(() => machine.snapshot().matches("idle"));
		machine.actor.send({ type: "approve", toolCallId: "b" });
		expect(ignored(machine.emitted).map((event) => `${event.decision} ${event.toolCallId}: ${event.reason}`)).toEqual(["approve nope: unknown", "approve a: not-waiting", "reject a: not-waiting", "approve b: unknown"]);
		expect(machine.runs).toEqual(["a"]);
		expect(decisions(machine.emitted)).toEqual(["a:approved", "b:rejected"]);
	});
});

describe.each(interpreters)("a decision with a field the machine does not know, on %s", (_name, logic) => {
	it("fails the actor with a TypeError naming the field before anything is decided: { arguments } (the Agent's option) used to approve the model's arguments", async () => {
		for (const [command, field] of [
			[{ type: "approve", toolCallId: "a", arguments: { to: "alice" } }, '"arguments"'],
			[{ type: "reject", toolCallId: "a", reason: 7 }, "reason must be a text, got 7"],
		] as const) {
			const machine = await waitingMachine(logic, {});
			const failed: unknown[] = [];
			machine.actor.subscribe({ error: (error) => void failed.push(error) });
			machine.actor.send(command as never);
			expect(failed).toHaveLength(1);
			expect(failed[0]).toBeInstanceOf(TypeError);
			expect((failed[0] as Error).message).toContain(`the machine's ${command.type} command`);
			expect((failed[0] as Error).message).toContain(field);
			expect(machine.runs).toEqual([]);
			expect(decisions(machine.emitted)).toEqual([]);
		}
	});
});

describe.each(interpreters)("a decision after an abort, on %s", (_name, logic) => {
	for (const type of ["approve", "reject"] as const) {
		it(`${type} is ignored as aborted while a sibling call still runs (the abort rejects what waits)`, async () => {
			const runs: string[] = [];
			let release = () => {};
			const slow = makeTool("slow", () => new Promise((resolve) => (release = () => resolve(ok("slow done")))));
			const scripted = createScriptedModel([{ content: [toolCall("slow", {}, "s"), toolCall("deploy", {}, "a")] }, { content: "done" }]);
			const actor = createActor(logic, { input: { model: scripted.model, tools: [slow, ...deployTools(runs)], config: { streamFn: scripted.streamFn } } });
			stopped.push(actor);
			const emitted: AgentMachineEmitted[] = [];
			actor.on("*", (event: AgentMachineEmitted) => void emitted.push(event));
			actor.start();
			actor.send({ type: "prompt", messages: [user("deploy")] });
			const snapshot = () => actor.getSnapshot() as unknown as Snap;
			await until(() => snapshot().context.run?.batch?.calls.some((call) => call.status === "awaiting-approval") === true);
			actor.send({ type: "abort" });
			// The run waits for its running sibling to see the signal: the waiting call is the abort's to
			// reject, also for a reject (it used to be taken, the call answered as rejected, not aborted).
			expect(snapshot().context.run?.aborted).toBe(true);
			actor.send(type === "approve" ? { type, toolCallId: "a" } : { type, toolCallId: "a", reason: "not now" });
			release();
			await until(() => snapshot().matches("idle"));
			expect(ignored(emitted).map((event) => `${event.decision} ${event.toolCallId}: ${event.reason}`)).toEqual([`${type} a: aborted`]);
			expect(runs).toEqual([]);
			expect(decisions(emitted)).toEqual(["a:aborted"]);
		});
	}
});

describe.each(interpreters)("a decision once the reply failed, on %s", (_name, logic) => {
	it("is ignored as reply-failed: streaming mode answers the waiting call with the reply's failure, never approved", async () => {
		const runs: string[] = [];
		const scripted = createScriptedModel([{ content: [toolCall("deploy", {}, "a"), { type: "text", text: "and then it breaks" }], stopReason: "error", errorMessage: "overloaded" }], { delayMs: 1 });
		const actor = createActor(logic, { input: { model: scripted.model, tools: deployTools(runs), awaitDelivery: true, config: { streamFn: scripted.streamFn, toolExecution: "streaming" } } });
		stopped.push(actor);
		const emitted: AgentMachineEmitted[] = [];
		actor.on("*", (event: AgentMachineEmitted) => {
			emitted.push(event);
			// A listener that approves as the failed reply's first part ends, before it acknowledges it.
			if (event.type === "message_end" && event.message.role === "assistant" && event.message.stopReason === "toolUse") actor.send({ type: "approve", toolCallId: "a#1" });
			if (event.type === "agentchart.barrier") actor.send({ type: "delivered", barrier: event.barrier });
		});
		actor.start();
		actor.send({ type: "prompt", messages: [user("deploy")] });
		const snapshot = () => actor.getSnapshot() as unknown as Snap;
		await until(() => snapshot().matches("idle"));
		expect(ignored(emitted).map((event) => `${event.decision} ${event.toolCallId}: ${event.reason}`)).toEqual(["approve a#1: reply-failed"]);
		expect(runs).toEqual([]);
		expect(decisions(emitted)).toEqual(["a:aborted"]);
	});
});

describe("an Agent's machine sent a decision it does not take", () => {
	it("tells the Agent's listeners nothing and fails nothing", async () => {
		const runs: string[] = [];
		const scripted = createScriptedModel([{ content: [toolCall("deploy", {}, "a")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: deployTools(runs) }, streamFn: scripted.streamFn });
		const events: AgentEvent[] = [];
		agent.subscribe((event) => void events.push(event));
		const run = agent.prompt("deploy");
		await until(() => agent.pendingApprovals.length === 1);
		const seen = events.length;
		agent.actor.send({ type: "approve", toolCallId: "nope" });
		expect(events.length).toBe(seen);
		await agent.approve("a");
		await run;
		expect(runs).toEqual(["a"]);
		expect(events.map((event) => event.type)).not.toContain("agentchart.approval.ignored");
		agent.dispose();
	});
});

/** A run waiting for approval of "a", persisted as JSON, asked with `approvalTimeoutMs`. */
async function persistedWait(logic: AnyActorLogic, approvalTimeoutMs: number | undefined) {
	const machine = await waitingMachine(logic, approvalTimeoutMs === undefined ? {} : { approvalTimeoutMs });
	const json = JSON.parse(JSON.stringify(machine.actor.getPersistedSnapshot())) as PersistedAgentMachine;
	machine.actor.stop();
	return { json, runs: machine.runs, tools: machine.tools };
}

function restoredMachine(logic: AnyActorLogic, json: PersistedAgentMachine, tools: AnyAgentTool[], config: Partial<AgentMachineConfig>) {
	const scripted = createScriptedModel([{ content: "done" }]);
	const actor = createActor(logic, { snapshot: hydrateAgentSnapshot(json, { tools, config: { streamFn: scripted.streamFn, ...config } }) });
	stopped.push(actor);
	const emitted: AgentMachineEmitted[] = [];
	actor.on("*", (event: AgentMachineEmitted) => void emitted.push(event));
	actor.start();
	actor.send({ type: "agentchart.resumed" });
	return { actor, emitted, snapshot: () => actor.getSnapshot() as unknown as Snap };
}

const deadlineOf = (snapshot: Snap) => snapshot.context.run?.batch?.calls[0]?.approval?.deadline;

describe.each(interpreters)("a restored wait's deadline, on %s", (_name, logic) => {
	it("a call asked without a timeout, restored with one, gets it from the restore and times out", async () => {
		const { json, runs, tools } = await persistedWait(logic, undefined);
		const restoredAt = Date.now();
		const restored = restoredMachine(logic, json, tools, { approvalTimeoutMs: 100 });
		expect(deadlineOf(restored.snapshot())).toBeGreaterThanOrEqual(restoredAt + 100);
		await until(() => restored.snapshot().matches("idle"));
		expect(runs).toEqual([]);
		expect(decisions(restored.emitted)).toEqual(["a:timed-out"]);
	});

	it("a call asked with a timeout keeps its deadline, restored with none or another", async () => {
		const { json, tools } = await persistedWait(logic, 60_000);
		const asked = json.context.run?.batch?.calls[0]?.approval?.deadline;
		expect(asked).toBeDefined();
		for (const approvalTimeoutMs of [0, 1_000_000]) {
			const restored = restoredMachine(logic, json, tools, { approvalTimeoutMs });
			expect(deadlineOf(restored.snapshot())).toBe(asked);
			restored.actor.stop();
		}
	});

	it("a call asked without a timeout, restored without one, keeps waiting", async () => {
		const { json, tools } = await persistedWait(logic, undefined);
		const restored = restoredMachine(logic, json, tools, {});
		expect(deadlineOf(restored.snapshot())).toBeUndefined();
		expect(restored.snapshot().matches({ running: "awaiting-approval" })).toBe(true);
	});
});

describe("an Agent's decision", () => {
	it("is taken by its machine by the time approve() checked the deadline, also when the clock passed it since", async () => {
		const runs: string[] = [];
		const scripted = createScriptedModel([{ content: [toolCall("deploy", {}, "a")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: deployTools(runs) }, streamFn: scripted.streamFn, approvalTimeoutMs: 60_000 });
		const run = agent.prompt("deploy");
		await until(() => agent.pendingApprovals.length === 1);
		const deadline = agent.pendingApprovals[0]?.deadline ?? 0;
		// approve() reads the clock just before the deadline; every later reading is past it.
		let readings = 0;
		const clock = vi.spyOn(Date, "now").mockImplementation(() => (readings++ === 0 ? deadline - 1 : deadline + 1));
		try {
			void agent.approve("a");
		} finally {
			clock.mockRestore();
		}
		await run;
		expect(runs).toEqual(["a"]);
		expect(toolResults(agent.state.messages)).toEqual(["deployed"]);
		agent.dispose();
	});

	it("a call asked without a timeout, restored into an agent with one, gets it from the restore and times out", async () => {
		const runs: string[] = [];
		const tools = deployTools(runs);
		const scripted = createScriptedModel([{ content: [toolCall("deploy", {}, "a")] }, { content: "done" }]);
		const first = new Agent({ initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn });
		const run = first.prompt("deploy");
		await until(() => first.pendingApprovals.length === 1);
		expect(first.pendingApprovals[0]?.deadline).toBeUndefined();
		const stored = JSON.parse(JSON.stringify(first.snapshot()));
		first.dispose();
		await run;

		const next = createScriptedModel([{ content: "done" }]);
		const restoredAt = Date.now();
		const restored = Agent.restore(stored, { initialState: { tools }, streamFn: next.streamFn, approvalTimeoutMs: 100 });
		expect(restored.pendingApprovals[0]?.deadline).toBeGreaterThanOrEqual(restoredAt + 100);
		await restored.waitForIdle();
		expect(runs).toEqual([]);
		expect(toolResults(restored.state.messages)).toEqual([TIMED_OUT]);
		restored.dispose();
	});
});
