/**
 * A store that cannot write (a full disk, a database that went away): the agent goes on where it
 * safely can, never makes an effect whose intent is not durably recorded, never takes the
 * process down, and says so: every failed write is in `storeProblems`, and `save()` / `saved()`
 * reject with it. After a failed write the next one is a snapshot (entries after a hole would
 * lead a restore nowhere). Before these tests a rejected write nobody awaited (a tool's outcome)
 * was an unhandled rejection, a store that threw instead of rejecting an uncaught exception
 * (each ends a Node process), `saved()` resolved as if everything were stored, and entries went
 * on being appended after a failed snapshot, which the random-failure property in
 * test/property/restore.property.test.ts showed can make a restored run call a tool again.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Type } from "typebox";
import { Agent } from "../../src/agent.js";
import type { StoredJournalEntry } from "../../src/durable/journal.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { type AgentStore, createMemoryStore, SessionTakenOverError } from "../../src/durable/store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AnyAgentTool } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { type Escapes, expectValidTranscript, watchEscapes } from "../agent/helpers.js";

/** What reached the process's last-resort handlers while a test ran. */
let escapes: Escapes;
beforeEach(() => {
	escapes = watchEscapes();
});
afterEach(() => escapes.stop());

/** Lets a rejection nobody handled reach `unhandledRejection` (Node reports it after the microtasks). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

type Failure = "reject" | "throw";

/** The memory store, with the writes `fails` picks failing the way `how` says. */
function failingStore(how: Failure, fails: { entry?: (entry: StoredJournalEntry) => boolean; snapshot?: (snapshot: AgentSnapshot) => boolean }): AgentStore {
	const memory = createMemoryStore();
	const fail = (what: string) => {
		const error = new Error(`disk full (${what})`);
		if (how === "throw") throw error;
		return Promise.reject(error);
	};
	return {
		load: (id) => memory.load(id),
		saveSnapshot: (id, snapshot) => (fails.snapshot?.(snapshot) ? fail("snapshot") : memory.saveSnapshot(id, snapshot)),
		appendJournal: (id, entry) => (fails.entry?.(entry) ? fail(`${entry.kind} ${entry.phase}`) : memory.appendJournal(id, entry)),
	};
}

function countingTool(): { tool: AnyAgentTool; runs: () => number } {
	let runs = 0;
	const tool: AnyAgentTool = {
		name: "noop",
		label: "noop",
		description: "does nothing",
		parameters: Type.Object({}),
		execute: async () => {
			runs++;
			return { content: [{ type: "text", text: "ok" }], details: {} };
		},
	};
	return { tool, runs: () => runs };
}

function agentOn(store: AgentStore, tool: AnyAgentTool): Agent {
	const scripted = createScriptedModel([{ content: [toolCall("noop", {}, "c1")] }, { content: "done" }]);
	return new Agent({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn, store, sessionId: "s" });
}

function shape(messages: readonly AgentMessage[]): string[] {
	return messages.map((message) => {
		if (message.role === "toolResult") return `toolResult${message.isError ? " (error)" : ""}`;
		if (message.role === "assistant") return `assistant ${message.stopReason}`;
		return message.role;
	});
}

describe.each<Failure>(["reject", "throw"])("a store whose writes %s", (how) => {
	it("every journal entry: a snapshot stands in for each, so the run completes; saved() rejects naming the failed writes, once", async () => {
		const { tool, runs } = countingTool();
		const store = failingStore(how, { entry: () => true });
		const agent = agentOn(store, tool);
		await agent.prompt("go");
		expect(shape(agent.state.messages)).toEqual(["user", "assistant toolUse", "toolResult", "assistant stop"]);
		expect(runs()).toBe(1);
		await expect(agent.saved()).rejects.toThrow(/the store could not append a journal entry: disk full/);
		// Reported once: the next wait has nothing new to report.
		await expect(agent.saved()).resolves.toBeUndefined();
		// What the store holds is the agent as it is.
		const restored = await Agent.load({ store, sessionId: "s", initialState: { tools: [tool] } });
		expect(restored.state.messages).toEqual(agent.state.messages);
		await settle();
		expect(escapes.caught).toEqual([]);
	});

	it("a tool's intent: the tool does not run, the model gets an error result, the run goes on", async () => {
		const { tool, runs } = countingTool();
		const agent = agentOn(failingStore(how, { entry: (entry) => entry.kind === "tool" && entry.phase === "intent" }), tool);
		await agent.prompt("go");
		expect(runs()).toBe(0);
		expect(shape(agent.state.messages)).toEqual(["user", "assistant toolUse", "toolResult (error)", "assistant stop"]);
		expect(agent.storeProblems).toEqual(["the store could not append a journal entry: disk full (tool intent)"]);
		await expect(agent.saved()).rejects.toThrow("agentchart: the store could not append a journal entry: disk full (tool intent)");
		await settle();
		expect(escapes.caught).toEqual([]);
	});

	it("a tool's outcome, which nothing waits for: the tool ran once, the run completes, the process goes on", async () => {
		const { tool, runs } = countingTool();
		const agent = agentOn(failingStore(how, { entry: (entry) => entry.kind === "tool" && entry.phase === "outcome" }), tool);
		await agent.prompt("go");
		expect(runs()).toBe(1);
		expect(shape(agent.state.messages)).toEqual(["user", "assistant toolUse", "toolResult", "assistant stop"]);
		await settle();
		expect(escapes.caught).toEqual([]);
		await expect(agent.saved()).rejects.toThrow(/disk full \(tool outcome\)/);
	});

	it("every snapshot: the run's first effect is not made without a durable record, the run ends with the store's error; save() rejects", async () => {
		const { tool, runs } = countingTool();
		let asked = 0;
		const scripted = createScriptedModel([{ content: [toolCall("noop", {}, "c1")] }, { content: "done" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [tool] },
			streamFn: (model, context, options) => (asked++, scripted.streamFn(model, context, options)),
			store: failingStore(how, { snapshot: () => true }),
			sessionId: "s",
		});
		await agent.prompt("go");
		// A new session's first write is its snapshot: the journal after it would lead nowhere.
		expect(asked).toBe(0);
		expect(runs()).toBe(0);
		expect(shape(agent.state.messages)).toEqual(["user", "assistant error"]);
		expect(agent.state.errorMessage).toMatch(/the store could not save a snapshot: disk full \(snapshot\)/);
		await expect(agent.saved()).rejects.toThrow(/the store could not save a snapshot: disk full \(snapshot\)/);
		await expect(agent.save()).rejects.toThrow("agentchart: the store could not save a snapshot: disk full (snapshot)");
		expect(agent.storeProblems.every((problem) => problem.includes("disk full (snapshot)"))).toBe(true);
		await settle();
		expect(escapes.caught).toEqual([]);
	});
});

it("a store that recovers: what the agent writes after a failure is stored, and saved() resolves again", async () => {
	let full = true;
	const memory = createMemoryStore();
	const store: AgentStore = {
		load: (id) => memory.load(id),
		saveSnapshot: (id, snapshot) => (full ? Promise.reject(new Error("disk full")) : memory.saveSnapshot(id, snapshot)),
		appendJournal: (id, entry) => (full ? Promise.reject(new Error("disk full")) : memory.appendJournal(id, entry)),
	};
	const { tool } = countingTool();
	const scripted = createScriptedModel([{ content: "first" }, { content: "second" }]);
	const agent = new Agent({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn, store, sessionId: "s" });
	await agent.prompt("one");
	await expect(agent.saved()).rejects.toThrow(/disk full/);
	full = false;
	await agent.prompt("two");
	await expect(agent.saved()).resolves.toBeUndefined();
	// What the store holds restores to the agent as it is.
	const restored = await Agent.load({ store, sessionId: "s", initialState: { tools: [tool] }, streamFn: scripted.streamFn });
	expect(restored.state.messages).toEqual(agent.state.messages);
	await settle();
	expect(escapes.caught).toEqual([]);
});

it("after a snapshot the store could not save, no entry is appended behind it: the next effect waits for a snapshot in its place, and is not made while none can be stored", async () => {
	const memory = createMemoryStore();
	let snapshotsFail = false;
	const appended: string[] = [];
	const store: AgentStore = {
		load: (id) => memory.load(id),
		saveSnapshot: (id, snapshot) => (snapshotsFail ? Promise.reject(new Error("disk full")) : memory.saveSnapshot(id, snapshot)),
		appendJournal: (id, entry) => (appended.push(`${entry.kind} ${entry.phase} ${entry.effect}`), memory.appendJournal(id, entry)),
	};
	const { tool, runs } = countingTool();
	const scripted = createScriptedModel([{ content: "one" }, { content: [toolCall("noop", {}, "c1")] }, { content: "done" }]);
	const agent = new Agent({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn, store, sessionId: "s" });
	await agent.prompt("first");
	await agent.saved();
	// A changed agent saves a snapshot before its next run: that one fails.
	snapshotsFail = true;
	agent.state.systemPrompt = "changed";
	appended.length = 0;
	await agent.prompt("second");
	// Without the snapshot, an entry of run 2 would follow run 1's end in the store: a restore
	// would not reach it, and the tool it announced would run again after a crash.
	expect(appended).toEqual([]);
	expect(runs()).toBe(0);
	expect(agent.state.errorMessage).toMatch(/the store could not save a snapshot: disk full/);
	await expect(agent.saved()).rejects.toThrow(/disk full/);
	const restored = await Agent.load({ store, sessionId: "s", initialState: { tools: [tool] } });
	expect(restored.state.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
	await settle();
	expect(escapes.caught).toEqual([]);
});

describe("a decision the store could not store", () => {
	// Before, approve() and reject() resolved all the same: a person was told their answer counted,
	// and the agent that loaded the session next asked again (or, taken over by another process, already had).
	it.each(["approve", "reject"] as const)("%s(): its entry failed and so did the snapshot standing in: rejects, and the call does not run", async (answer) => {
		const { tool, runs } = countingTool();
		let asked = false;
		// From the question on, nothing more can be stored (the store went down, or another process took the session).
		const store = failingStore("reject", { entry: () => asked, snapshot: () => asked });
		const scripted = createScriptedModel([{ content: [toolCall("noop", {}, "c1")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [{ ...tool, needsApproval: true }] }, streamFn: scripted.streamFn, store, sessionId: "s" });
		const question = new Promise<string>((resolve) => agent.subscribe((event) => void (event.type === "approval_requested" && resolve(event.toolCallId))));
		const run = agent.prompt("go");
		const id = await question;
		asked = true;
		const decided = answer === "approve" ? agent.approve(id) : agent.reject(id, "no");
		await expect(decided).rejects.toThrow(/the store could not save a snapshot: disk full/);
		expect(agent.storeProblems.join("\n")).toMatch(/could not append a journal entry: disk full \(approval decided\)/);
		await run;
		expect(runs()).toBe(0);
		expectValidTranscript(agent.state.messages);
		await settle();
		expect(escapes.caught).toEqual([]);
	});

	it.each(["approve", "reject"] as const)("%s(): its entry failed, the snapshot standing in did not: resolves, and the decision holds", async (answer) => {
		const { tool, runs } = countingTool();
		const store = failingStore("reject", { entry: (entry) => entry.kind === "approval" && entry.phase === "decided" });
		const scripted = createScriptedModel([{ content: [toolCall("noop", {}, "c1")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [{ ...tool, needsApproval: true }] }, streamFn: scripted.streamFn, store, sessionId: "s" });
		// Answered without waiting, as a listener may.
		agent.subscribe((event) => {
			if (event.type === "approval_requested") void (answer === "approve" ? agent.approve(event.toolCallId) : agent.reject(event.toolCallId, "no"));
		});
		let decided: Promise<void> | undefined;
		agent.subscribe((event) => {
			if (event.type === "approval_requested") decided = agent.saved().catch(() => {});
		});
		await agent.prompt("go");
		await decided;
		expect(runs()).toBe(answer === "approve" ? 1 : 0);
		await settle();
		expect(escapes.caught).toEqual([]);
	});

	it("not waited for, a decision that could not be stored is not an unhandled rejection", async () => {
		const { tool } = countingTool();
		let asked = false;
		const store = failingStore("reject", { entry: () => asked, snapshot: () => asked });
		const scripted = createScriptedModel([{ content: [toolCall("noop", {}, "c1")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [{ ...tool, needsApproval: true }] }, streamFn: scripted.streamFn, store, sessionId: "s" });
		agent.subscribe((event) => {
			if (event.type === "approval_requested") {
				asked = true;
				void agent.approve(event.toolCallId);
			}
		});
		await agent.prompt("go");
		await settle();
		expect(escapes.caught).toEqual([]);
		expect(agent.storeProblems.join("\n")).toMatch(/approval decided/);
	});
});

describe("a store that never answers one write", () => {
	const hangs = ["model intent", "tool intent", "approval requested", "approval decided", "model outcome", "snapshot"] as const;
	it.each(hangs)("(%s): abort() still ends the run, a call whose intent is not stored never runs, and approve() settles", async (which) => {
		const memory = createMemoryStore();
		let snapshots = 0;
		const never = new Promise<void>(() => {});
		const store: AgentStore = {
			load: (id) => memory.load(id),
			// The new session's first snapshot lands; the one a wait for approval saves does not.
			saveSnapshot: (id, snapshot) => (which === "snapshot" && snapshots++ > 0 ? never : memory.saveSnapshot(id, snapshot)),
			appendJournal: (id, entry) => (`${entry.kind} ${entry.phase}` === which ? never : memory.appendJournal(id, entry)),
		};
		const { tool, runs } = countingTool();
		const scripted = createScriptedModel([{ content: [toolCall("noop", {}, "c1")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [{ ...tool, needsApproval: true }] }, streamFn: scripted.streamFn, store, sessionId: "s" });
		const decisions: Promise<string>[] = [];
		agent.subscribe((event) => {
			// Asked only once the question is stored, which may be after the abort: then nothing waits.
			if (event.type !== "approval_requested") return;
			queueMicrotask(() => {
				if (!agent.pendingApprovals.some((call) => call.toolCallId === event.toolCallId)) return;
				decisions.push(
					agent.approve(event.toolCallId).then(
						() => "stored",
						(error: unknown) => `rejected: ${String(error)}`,
					),
				);
			});
		});
		let ended = false;
		const run = agent.prompt("go").finally(() => (ended = true));
		await new Promise((resolve) => setTimeout(resolve, 50));
		// Stalled on the store (the write never lands): only an abort ends it.
		expect(ended).toBe(false);
		agent.abort();
		// Less than the grace a stream that ignores the abort gets (2 s): waiting for the store is not that.
		await Promise.race([run, new Promise((resolve) => setTimeout(resolve, 1_000))]);
		expect(ended, "the run did not end after abort()").toBe(true);
		expect(agent.state.isStreaming).toBe(false);
		expectValidTranscript(agent.state.messages);
		if (which === "model intent" || which === "tool intent" || which === "approval requested" || which === "snapshot") expect(runs()).toBe(0);
		// The decision's promise settles too: a write that never lands does not hold the caller of
		// approve() once the run is aborted (it waited for ever).
		const settledDecisions = await Promise.race([Promise.all(decisions), new Promise<string>((resolve) => setTimeout(() => resolve("approve() still pending"), 1_000))]);
		if (which === "approval decided") expect(settledDecisions).toEqual([expect.stringMatching(/^rejected: .*approval of tool call "c1" was not confirmed stored: the run was aborted/)]);
		else expect(settledDecisions).not.toBe("approve() still pending");
		await settle();
		expect(escapes.caught).toEqual([]);
	});
});

describe("a store whose open fails", () => {
	for (const how of ["throws", "rejects"] as const) {
		it(`(${how}): new Agent does not throw, the failure is reported, and the session is opened again before the agent's next write; Agent.load fails`, async () => {
			const memory = createMemoryStore();
			let failing = true;
			let opened = 0;
			const store: AgentStore = {
				load: (id, options) => memory.load(id, options),
				saveSnapshot: (id, snapshot) => memory.saveSnapshot(id, snapshot),
				appendJournal: (id, entry) => memory.appendJournal(id, entry),
				open: () => {
					if (!failing) return void opened++;
					const error = new Error("database unreachable");
					if (how === "throws") throw error;
					return Promise.reject(error);
				},
			};
			const scripted = createScriptedModel([{ content: "first" }, { content: "second" }]);
			const options = { store, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn };
			await expect(Agent.load(options)).rejects.toThrow("database unreachable");
			const agent = new Agent(options);
			await expect(agent.saved()).rejects.toThrow(/open the session: database unreachable/);
			failing = false;
			await agent.prompt("hello");
			await agent.saved();
			expect(opened).toBe(1);
			expect(agent.storeProblems.join("\n")).toMatch(/database unreachable/);
			const again = await Agent.load(options);
			expect(again.state.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
		});
	}

	it("an opening asked again after one failed is waited for: no write reaches the store before it", async () => {
		const memory = createMemoryStore();
		const log: string[] = [];
		let opens = 0;
		const store: AgentStore = {
			load: (id, options) => memory.load(id, options),
			saveSnapshot: (id, snapshot) => (log.push("save"), memory.saveSnapshot(id, snapshot)),
			appendJournal: (id, entry) => (log.push("append"), memory.appendJournal(id, entry)),
			open: () => {
				const n = ++opens;
				log.push(`open ${n}`);
				if (n === 1) return Promise.reject(new Error("connection reset"));
				return new Promise<void>((resolve) => setTimeout(() => (log.push(`opened ${n}`), resolve()), 20));
			},
		};
		const scripted = createScriptedModel([{ content: "hi" }]);
		const agent = new Agent({ store, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await settle();
		await agent.prompt("hello");
		await agent.saved().catch(() => {});
		expect(log.slice(0, 3)).toEqual(["open 1", "open 2", "opened 2"]);
		expect(log.indexOf("opened 2")).toBeLessThan(log.findIndex((line) => line === "save" || line === "append"));
	});

	it("an opening refused because another process opened the session since is not asked again: the agent's writes stay refused, and the newer agent keeps the session", async () => {
		const memory = createMemoryStore();
		let opens = 0;
		const store: AgentStore = {
			load: (id, options) => memory.load(id, options),
			saveSnapshot: () => Promise.reject(new SessionTakenOverError("s", "an agent of another process")),
			appendJournal: () => Promise.reject(new SessionTakenOverError("s", "an agent of another process")),
			open: () => (opens++, Promise.reject(new SessionTakenOverError("s", "an agent of another process"))),
		};
		const scripted = createScriptedModel([{ content: "hi" }]);
		const agent = new Agent({ store, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await agent.prompt("hello").catch(() => {});
		await expect(agent.saved()).rejects.toThrow(/opened by an agent of another process/);
		// Asked once: an opening asked again would fence off the newer agent.
		expect(opens).toBe(1);
	});
});

