/**
 * Defects an adversarial probe of durable runs and approvals found (2026-12-07, round 6), each
 * fixed, each test failing before its fix:
 * - a reply that repeats a tool call id (two deploys, both `d1`) listed two rows with the same id
 *   in `pendingApprovals`: `approve("d1")` meant for the second row (staging) approved the first
 *   (production), and `reject` likewise. Each row and each approval event now carries a
 *   `callKey`; the bare id of two waiting calls is refused (the bare machine ignores it as
 *   `ambiguous`);
 * - an agent restored with nobody listening whose run reached a question first while it was
 *   being restored (the process stopped after the reply was stored, before the question was)
 *   listed the call in `pendingApprovals` and then announced it to a listener subscribed later:
 *   code that answered from `pendingApprovals` (as the docs show) and from the listener answered
 *   twice, and the second answer threw inside a listener, which aborted the run.
 */
import { createActor } from "xstate";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { type AgentStore, createMemoryStore } from "../../src/durable/store.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import type { AgentMachineEmitted } from "../../src/machines/types.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import { makeTool, ok, sleep } from "../agent/helpers.js";

async function until(condition: () => boolean, what: string): Promise<void> {
	for (let i = 0; i < 1000; i++) {
		if (condition()) return;
		await sleep(2);
	}
	throw new Error(`timed out waiting for ${what}`);
}

/** A reply with two deploys under one id (production first), then "done"; the deploys log what ran. */
function repeatedDeploys(mode: "parallel" | "sequential" | "streaming") {
	const ran: string[] = [];
	const deploy = makeTool("deploy", async (_id, params) => {
		ran.push(String(params["env"]));
		return ok(`deployed ${String(params["env"])}`);
	}, { needsApproval: true });
	const scripted = createScriptedModel([{ content: [toolCall("deploy", { env: "prod" }, "d1"), toolCall("deploy", { env: "staging" }, "d1")] }, { content: "done" }]);
	const agent = new Agent({ initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn, toolExecution: mode });
	const events: AgentEvent[] = [];
	agent.subscribe((event) => void events.push(event));
	return { agent, ran, events };
}

describe("a reply that repeats a tool call id: each waiting call is answered by its own name", () => {
	for (const mode of ["parallel", "streaming"] as const) {
		it(`approving the staging row runs staging, not production (${mode})`, async () => {
			const { agent, ran, events } = repeatedDeploys(mode);
			const run = agent.prompt("deploy both");
			await until(() => agent.pendingApprovals.length === 2, "both deploys to wait");
			const rows = agent.pendingApprovals;
			expect(rows.map((row) => [row.toolCallId, row.callKey, (row.args as { env: string }).env])).toEqual([
				["d1", "d1#1", "prod"],
				["d1", "d1#2", "staging"],
			]);
			// The bare id names both: refused, naming the keys, and nothing is decided.
			expect(() => agent.approve("d1")).toThrow(/id "d1" names 2 calls waiting for approval.*"d1#1", "d1#2"/);
			expect(() => agent.reject("d1", "no")).toThrow(/names 2 calls/);
			expect(agent.pendingApprovals).toHaveLength(2);
			const staging = rows.find((row) => (row.args as { env: string }).env === "staging");
			await agent.approve(staging!.callKey);
			await until(() => ran.length === 1, "staging to run");
			expect(ran).toEqual(["staging"]);
			// One waits now: its bare id names it alone.
			expect(agent.pendingApprovals.map((row) => row.callKey)).toEqual(["d1#1"]);
			await agent.reject("d1", "not production");
			await run;
			expect(ran).toEqual(["staging"]);
			const results = agent.state.messages.filter((message) => message.role === "toolResult").map((message) => (message.content[0] as { text: string }).text);
			expect(results).toEqual(["Tool call was rejected: not production", "deployed staging"]);
			// The events say which call each decision was about.
			const resolved = events.filter((event) => event.type === "approval_resolved").map((event) => [event.callKey, event.decision]);
			expect(resolved).toEqual([
				["d1#2", "approved"],
				["d1#1", "rejected"],
			]);
			// The same names from the question on, also where the repeat streamed in after the first was asked.
			expect(events.filter((event) => event.type === "approval_requested").map((event) => event.callKey)).toEqual(["d1#1", "d1#2"]);
		});
	}

	it("names every call apart also when the model numbers its own ids (x, x#1, x): each is answered by its callKey, a key before an id", async () => {
		const ran: string[] = [];
		const deploy = makeTool("deploy", async (_id, params) => {
			ran.push(String(params["env"]));
			return ok("deployed");
		}, { needsApproval: true });
		const scripted = createScriptedModel([{ content: [toolCall("deploy", { env: "prod" }, "x"), toolCall("deploy", { env: "qa" }, "x#1"), toolCall("deploy", { env: "staging" }, "x")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn });
		const run = agent.prompt("deploy");
		await until(() => agent.pendingApprovals.length === 3, "the three deploys to wait");
		const keys = agent.pendingApprovals.map((row) => row.callKey);
		expect(new Set(keys).size).toBe(3);
		expect(keys).toEqual(["x#1", "x#1#1", "x#2"]);
		// The bare x fits two, and answering it could run a deploy nobody meant.
		expect(() => agent.approve("x")).toThrow(/names 2 calls/);
		expect(ran).toEqual([]);
		// A key names its call, also where it is another call's id: "x#1" is the first x (prod),
		// and the call whose id is x#1 (qa) is answered by its own key.
		await agent.approve("x#1");
		await until(() => ran.length === 1, "prod to run");
		expect(ran).toEqual(["prod"]);
		await agent.approve("x#1#1");
		await agent.reject("x#2", "not staging");
		await run;
		expect(ran).toEqual(["prod", "qa"]);
	});

	it("answers a repeat whose key is another call's id (x, x, x#2): by its key, which names it first", async () => {
		// Before, "x#2" (the repeat's key and the third call's id) and "x" (both x calls) were both
		// refused: the repeat of x could be answered by no name, and only an abort ended the run.
		const ran: string[] = [];
		const deploy = makeTool("deploy", async (_id, params) => (ran.push(String(params["env"])), ok("deployed")), { needsApproval: true });
		const scripted = createScriptedModel([{ content: [toolCall("deploy", { env: "prod" }, "x"), toolCall("deploy", { env: "staging" }, "x"), toolCall("deploy", { env: "qa" }, "x#2")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn });
		const run = agent.prompt("deploy");
		await until(() => agent.pendingApprovals.length === 3, "the three deploys to wait");
		expect(agent.pendingApprovals.map((row) => `${row.callKey} ${JSON.stringify(row.args)}`)).toEqual(['x#1 {"env":"prod"}', 'x#2 {"env":"staging"}', 'x#2#2 {"env":"qa"}']);
		await agent.approve("x#2");
		await until(() => ran.length === 1, "staging to run");
		expect(ran).toEqual(["staging"]);
		await agent.reject("x#1", "not prod");
		await agent.approve("x#2#2");
		await run;
		expect(ran).toEqual(["staging", "qa"]);
	});

	it("a listener that answers each question by its bare id, repeated, stops the run with the ambiguity as its errorMessage, not a later failure's", async () => {
		const { agent, ran } = repeatedDeploys("parallel");
		agent.subscribe((event) => {
			if (event.type === "approval_requested") void agent.approve(event.toolCallId);
		});
		await agent.prompt("deploy both");
		expect(ran).toEqual([]);
		expect(agent.state.errorMessage).toMatch(/id "d1" names 2 calls waiting for approval/);
	});

	it("the bare machine ignores a decision whose id names two waiting calls, as ambiguous, and takes one by its callKey", async () => {
		const deploy = makeTool("deploy", async (_id, params) => ok(`deployed ${String(params["env"])}`), { needsApproval: true });
		const scripted = createScriptedModel([{ content: [toolCall("deploy", { env: "prod" }, "d1"), toolCall("deploy", { env: "staging" }, "d1")] }, { content: "done" }]);
		const actor = createActor(agentMachine, { input: { model: scripted.model, tools: [deploy], config: { streamFn: scripted.streamFn } } });
		const emitted: AgentMachineEmitted[] = [];
		actor.on("*", (event) => void emitted.push(event));
		actor.start();
		actor.send({ type: "prompt", messages: [{ role: "user", content: [{ type: "text", text: "go" }], timestamp: 0 }] });
		await until(() => actor.getSnapshot().matches({ running: "awaiting-approval" }), "the machine to wait");
		actor.send({ type: "approve", toolCallId: "d1" });
		expect(emitted.filter((event) => event.type === "agentchart.approval.ignored")).toEqual([{ type: "agentchart.approval.ignored", toolCallId: "d1", decision: "approve", reason: "ambiguous" }]);
		actor.send({ type: "approve", toolCallId: "d1#2" });
		actor.send({ type: "reject", toolCallId: "d1#1", reason: "no" });
		await until(() => actor.getSnapshot().matches("idle"), "the run to end");
		const results = actor.getSnapshot().context.messages.filter((message) => message.role === "toolResult").map((message) => (message.content[0] as { text: string }).text);
		expect(results).toEqual(["Tool call was rejected: no", "deployed staging"]);
		actor.stop();
	});
});

/** `inner` until the reply's outcome is journaled; nothing after it lands (the process stopped there). */
function stopsAfterTheReply(inner: AgentStore): AgentStore {
	let stopped = false;
	return {
		load: (id, options) => inner.load(id, options),
		saveSnapshot: async (id, snapshot) => {
			if (!stopped) await inner.saveSnapshot(id, snapshot);
		},
		appendJournal: async (id, entry) => {
			if (stopped) return;
			await inner.appendJournal(id, entry);
			if (entry.kind === "model" && entry.phase === "outcome") stopped = true;
		},
	};
}

/** A deploy that needs approval, logging what ran. */
function loggedDeploy(ran: string[]) {
	return makeTool("deploy", async (_id, params) => {
		ran.push(String(params["env"]));
		return ok("deployed");
	}, { needsApproval: true });
}

/**
 * Answers a restored agent's waiting calls both ways the docs show: from `pendingApprovals`, and
 * from a listener subscribed after the agent was made. Resolves with what the listener was asked
 * and what its answer threw, once the run ended; the call must have run once, cleanly.
 */
async function answeredBothWays(agent: Agent, ran: string[]): Promise<{ asked: string[]; threw: unknown }> {
	expect(agent.pendingApprovals.map((row) => row.callKey)).toEqual(["c1#1"]);
	const asked: string[] = [];
	let threw: unknown;
	agent.subscribe((event) => {
		if (event.type !== "approval_requested") return;
		asked.push(event.callKey);
		try {
			void agent.approve(event.callKey);
		} catch (error) {
			threw = error;
		}
	});
	for (const row of agent.pendingApprovals) await agent.approve(row.callKey);
	await agent.waitForIdle();
	expect(ran).toEqual(["prod"]);
	expect(agent.state.errorMessage).toBeUndefined();
	expect(agent.state.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
	return { asked, threw };
}

describe("an agent restored with nobody listening, whose run reaches a question while it is restored", () => {
	it("with a store: lists the call in pendingApprovals and does not announce it to a listener subscribed after the load (answering both ways aborted the run)", async () => {
		for (const mode of ["parallel", "sequential"] as const) {
			const ran: string[] = [];
			const deploy = loggedDeploy(ran);
			const inner = createMemoryStore();
			const scripted = createScriptedModel([{ content: [toolCall("deploy", { env: "prod" }, "c1")] }, { content: "done" }]);
			const first = new Agent({ initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn, store: stopsAfterTheReply(inner), sessionId: "s", toolExecution: mode });
			void first.prompt("deploy").catch(() => {});
			await until(() => first.pendingApprovals.length === 1, "the question");
			first.dispose();

			const later = createScriptedModel([{ content: "done" }]);
			const agent = await Agent.load({ store: inner, sessionId: "s", initialState: { tools: [deploy] }, streamFn: later.streamFn, toolExecution: mode });
			expect({ mode, ...(await answeredBothWays(agent, ran)) }).toEqual({ mode, asked: [], threw: undefined });
			agent.dispose();
		}
	});

	it("without a store, from agent.snapshot(): the same", async () => {
		const ran: string[] = [];
		const deploy = loggedDeploy(ran);
		const scripted = createScriptedModel([{ content: [toolCall("deploy", { env: "prod" }, "c1")] }, { content: "done" }]);
		// Stored as the reply ended, before the question was asked (a process that stopped there).
		let stored: AgentSnapshot | undefined;
		const first = new Agent({ initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn });
		first.subscribe((event) => {
			if (event.type === "message_end" && event.message.role === "assistant" && stored === undefined) stored = JSON.parse(JSON.stringify(first.snapshot())) as AgentSnapshot;
		});
		void first.prompt("deploy").catch(() => {});
		await until(() => stored !== undefined, "the reply to end");
		first.dispose();
		expect(stored!.machine.context.run?.batch).toBeUndefined();

		const later = createScriptedModel([{ content: "done" }]);
		const agent = Agent.restore(stored!, { initialState: { tools: [deploy] }, streamFn: later.streamFn });
		expect(await answeredBothWays(agent, ran)).toEqual({ asked: [], threw: undefined });
	});
});
