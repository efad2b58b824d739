/**
 * A run's start and end with a store: when what the store holds between runs (its snapshot, and
 * the runs its journal ended since) is the agent as the next prompt finds it, the prompt is
 * journaled (`RunStart`), and so is the run's end (`RunEnd`) when it ends as the journal says; a
 * restore applies the ended runs and starts the unfinished one again. When the agent is not as
 * stored (a new session, the transcript or system prompt changed), it is saved as it is before the
 * run, and the prompt journaled after that snapshot.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { StoredJournalEntry } from "../../src/durable/journal.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { type AgentStore, createMemoryStore } from "../../src/durable/store.js";
import { JOURNAL_ENTRIES_BEFORE_SNAPSHOT } from "../../src/facade/durable-session.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import { AssistantMessageEventStream } from "../../src/providers/event-stream.js";
import type { AgentEvent } from "../../src/types/agent.js";
import type { StreamFn } from "../../src/types/stream.js";
import { deferred, expectValidTranscript, makeTool, ok, textOf } from "../agent/helpers.js";

/** A memory store that counts its snapshots and can hold them back. */
function countingStore() {
	const inner = createMemoryStore();
	const saves: AgentSnapshot[] = [];
	let hold: Promise<void> | undefined;
	const store: AgentStore = {
		load: (id) => inner.load(id),
		async saveSnapshot(id, snapshot) {
			saves.push(snapshot);
			if (hold) await hold;
			await inner.saveSnapshot(id, snapshot);
		},
		appendJournal: (id, entry) => inner.appendJournal(id, entry),
	};
	return {
		store,
		saves,
		holdSaves: (until: Promise<void>) => {
			hold = until;
		},
		journal: async (id: string): Promise<StoredJournalEntry[]> => (await inner.load(id))?.snapshot?.journal ?? [],
	};
}

/** The scripted replies, then a model call that never answers (the process dies during it). */
function thenHang(...replies: Parameters<typeof createScriptedModel>[0]) {
	const scripted = createScriptedModel(replies);
	const hung = deferred<void>();
	let calls = 0;
	const streamFn: StreamFn = (model, context, options) => {
		calls++;
		if (calls <= replies.length) return scripted.streamFn(model, context, options);
		hung.resolve();
		return new AssistantMessageEventStream();
	};
	return { model: scripted.model, streamFn, hung: hung.promise };
}

/** An agent on a counting store whose model answers "one", then "two". */
function twoReplyAgent(sessionId: string) {
	const counting = countingStore();
	const scripted = createScriptedModel([{ content: "one" }, { content: "two" }]);
	return { counting, agent: new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, store: counting.store, sessionId }) };
}

const transcriptOf = (agent: Agent) => agent.state.messages.map((message) => `${message.role}: ${textOf(message)}`);

describe("a run's start with a store", () => {
	it("journals a session's prompts and runs' ends after one snapshot, and a restore applies the ended runs without asking the model", async () => {
		const { counting, agent } = twoReplyAgent("s1");
		await agent.prompt("first");
		await agent.saved();
		// A new session: the agent is saved as the first prompt finds it (nothing is stored yet).
		expect(counting.saves).toHaveLength(1);
		expect(counting.saves[0]?.machine.value).toBe("idle");
		expect(counting.saves[0]?.machine.context.messages).toEqual([]);
		await agent.prompt("second");
		await agent.saved();
		expect(counting.saves).toHaveLength(1);
		const runs = (await counting.journal("s1")).filter((entry) => entry.kind === "run");
		expect(runs.map((entry) => [entry.effect, entry.phase, entry.kind === "run" ? entry.messages.map(textOf) : []])).toEqual([
			["r1", "start", ["first"]],
			["r1", "end", ["one"]],
			["r2", "start", ["second"]],
			["r2", "end", ["two"]],
		]);
		// The memory store keeps of a run that ended only its start and end (all a restore reads).
		expect((await counting.journal("s1")).every((entry) => entry.kind === "run")).toBe(true);
		expect(transcriptOf(agent)).toEqual(["user: first", "assistant: one", "user: second", "assistant: two"]);
		agent.dispose();

		const none = createScriptedModel([]);
		const events: string[] = [];
		const again = await Agent.load({ store: counting.store, sessionId: "s1", initialState: { model: none.model }, streamFn: none.streamFn, listeners: [(event: AgentEvent) => void events.push(event.type)] });
		await again.waitForIdle();
		expect(transcriptOf(again)).toEqual(transcriptOf(agent));
		// Ended runs are applied, not run again: no model call, no event.
		expect(none.calls).toHaveLength(0);
		expect(events).toEqual([]);
		// The restored session goes on journaling: its next prompt saves no snapshot either.
		const more = createScriptedModel([{ content: "three" }]);
		const third = await Agent.load({ store: counting.store, sessionId: "s1", initialState: { model: more.model }, streamFn: more.streamFn });
		await third.prompt("third");
		await third.saved();
		expect(counting.saves).toHaveLength(1);
		const fourth = await Agent.load({ store: counting.store, sessionId: "s1", initialState: { model: none.model }, streamFn: none.streamFn });
		expect(transcriptOf(fourth)).toEqual([...transcriptOf(agent), "user: third", "assistant: three"]);
	});

	it("starts the run again from the journaled prompt after a crash, and asks the model once more", async () => {
		const counting = countingStore();
		const first = thenHang({ content: "one" });
		const agent = new Agent({ initialState: { model: first.model }, streamFn: first.streamFn, store: counting.store, sessionId: "s2" });
		await agent.prompt("first");
		await agent.saved();
		void agent.prompt("second");
		await first.hung;
		// The process dies while the model answers the second prompt: no snapshot has it.
		expect(counting.saves).toHaveLength(1);
		const entries = await counting.journal("s2");
		const starts = entries.filter((entry) => entry.kind === "run" && entry.phase === "start");
		expect(starts.map((entry) => [entry.effect, entry.kind === "run" ? entry.messages.map(textOf) : []])).toEqual([
			["r1", ["first"]],
			["r2", ["second"]],
		]);
		agent.dispose();

		const again = createScriptedModel([{ content: "two" }]);
		const events: string[] = [];
		const second = await Agent.load({ store: counting.store, sessionId: "s2", initialState: { model: again.model }, streamFn: again.streamFn, listeners: [(event: AgentEvent) => void events.push(event.type)] });
		await second.waitForIdle();
		expect(again.calls).toHaveLength(1);
		expect(transcriptOf(second)).toEqual(["user: first", "assistant: one", "user: second", "assistant: two"]);
		// The listeners of the new process see the whole run, from its start.
		expect(events[0]).toBe("agent_start");
		expect(events.at(-1)).toBe("agent_end");
		expectValidTranscript(second.state.messages);
	});

	it("follows the journal in the run it starts again: a reply that ended is not asked for, a call in flight is answered as interrupted", async () => {
		const store = createMemoryStore();
		const runs: string[] = [];
		const held = deferred<void>();
		const started = deferred<void>();
		const charge = makeTool("charge", async (id) => {
			runs.push(id);
			started.resolve();
			await held.promise;
			return ok("charged");
		});
		const scripted = createScriptedModel([{ content: "one" }, { content: [toolCall("charge", {}, "c1")] }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [charge] }, streamFn: scripted.streamFn, store, sessionId: "s3" });
		await agent.prompt("first");
		await agent.saved();
		void agent.prompt("charge me");
		await started.promise;
		agent.dispose();

		const again = createScriptedModel([{ content: "done" }]);
		const second = await Agent.load({ store, sessionId: "s3", initialState: { model: again.model, tools: [charge] }, streamFn: again.streamFn });
		await second.waitForIdle();
		expect(runs).toEqual(["c1"]);
		// The reply with the call came from the journal; only the one after the interrupted call was asked for.
		expect(again.calls).toHaveLength(1);
		expect(transcriptOf(second).map((line) => line.slice(0, 54))).toEqual(["user: first", "assistant: one", "user: charge me", "assistant: ", 'toolResult: Tool "charge" was interrupted by a restart', "assistant: done"]);
		expectValidTranscript(second.state.messages);
	});

	it("saves a snapshot before the run when the agent changed since the stored one, and a restore keeps the change", async () => {
		const counting = countingStore();
		const first = thenHang({ content: "one" });
		const agent = new Agent({ initialState: { model: first.model, systemPrompt: "be brief" }, streamFn: first.streamFn, store: counting.store, sessionId: "s4" });
		await agent.prompt("first");
		await agent.saved();
		agent.state.systemPrompt = "be thorough";
		void agent.prompt("second");
		await first.hung;
		await agent.saved();
		expect(counting.saves).toHaveLength(2);
		expect(counting.saves[1]?.machine.context.systemPrompt).toBe("be thorough");
		agent.dispose();

		const again = createScriptedModel([{ content: "two" }]);
		const second = await Agent.load({ store: counting.store, sessionId: "s4", initialState: { model: again.model }, streamFn: again.streamFn });
		await second.waitForIdle();
		expect(again.calls[0]?.systemPrompt).toBe("be thorough");
		expect(transcriptOf(second)).toEqual(["user: first", "assistant: one", "user: second", "assistant: two"]);
	});

	it("saves a snapshot before the run when the transcript was edited between runs", async () => {
		const { counting, agent } = twoReplyAgent("s5");
		await agent.prompt("first");
		await agent.saved();
		agent.state.messages = agent.state.messages.slice(0, 1);
		await agent.prompt("second");
		await agent.saved();
		expect(counting.saves).toHaveLength(2);
		expect(counting.saves[1]?.machine.context.messages.map((message) => textOf(message))).toEqual(["first"]);
		const none = createScriptedModel([]);
		const again = await Agent.load({ store: counting.store, sessionId: "s5", initialState: { model: none.model }, streamFn: none.streamFn });
		expect(transcriptOf(again)).toEqual(["user: first", "user: second", "assistant: two"]);
	});

	it("journals the prompt after a snapshot still on its way, and nothing of the run acts before the snapshot is stored", async () => {
		const { counting, agent } = twoReplyAgent("s6");
		const slow = deferred<void>();
		counting.holdSaves(slow.promise);
		const first = agent.prompt("first");
		// The writes reach the store in order: the model is asked only once the snapshot is stored.
		await new Promise((resolve) => setTimeout(resolve, 50));
		expect(agent.state.messages.map(textOf)).toEqual(["first"]);
		expect(await counting.journal("s6")).toEqual([]);
		slow.resolve();
		await first;
		await agent.saved();
		expect(counting.saves).toHaveLength(1);
		expect((await counting.journal("s6")).filter((entry) => entry.kind === "run").map((entry) => `${entry.effect} ${entry.phase}`)).toEqual(["r1 start", "r1 end"]);
	});

	it("saves a run's end as a snapshot when a reply failed, and once the journal since the last snapshot is long", async () => {
		const counting = countingStore();
		const failing = createScriptedModel([{ content: "one" }, { content: "", stopReason: "error", errorMessage: "overloaded" }]);
		const agent = new Agent({ initialState: { model: failing.model }, streamFn: failing.streamFn, store: counting.store, sessionId: "s8" });
		await agent.prompt("first");
		await agent.prompt("second");
		await agent.saved();
		expect(agent.state.errorMessage).toBe("overloaded");
		// The failed run's end is a snapshot: it keeps the error the agent reports.
		expect(counting.saves).toHaveLength(2);
		expect(counting.saves[1]?.agent.errorMessage).toBe("overloaded");
		const none = createScriptedModel([]);
		const again = await Agent.load({ store: counting.store, sessionId: "s8", initialState: { model: none.model }, streamFn: none.streamFn });
		expect(again.state.errorMessage).toBe("overloaded");

		// Runs of a tool call each: 6 journal entries a run, so the bound is passed within 43 runs.
		const long = countingStore();
		const replies = Array.from({ length: 60 }, (_, index) => [{ content: [toolCall("noop", {}, `c${index}`)] }, { content: `done ${index}` }]).flat();
		const scripted = createScriptedModel(replies);
		const noop = makeTool("noop", async () => ok("ok"));
		const busy = new Agent({ initialState: { model: scripted.model, tools: [noop] }, streamFn: scripted.streamFn, store: long.store, sessionId: "s9" });
		let snapshotAt = 0;
		for (let run = 1; run <= 60 && snapshotAt === 0; run++) {
			await busy.prompt(`run ${run}`);
			await busy.saved();
			if (long.saves.length > 1) snapshotAt = run;
		}
		expect(snapshotAt).toBeGreaterThan(1);
		expect(snapshotAt).toBeLessThanOrEqual(Math.ceil(JOURNAL_ENTRIES_BEFORE_SNAPSHOT / 6) + 1);
		expect(long.saves.at(-1)?.machine.value).toBe("idle");
		// The snapshot stands for the journal before it: the store dropped it.
		expect(await long.journal("s9")).toEqual([]);
		const restored = await Agent.load({ store: long.store, sessionId: "s9", initialState: { model: none.model, tools: [noop] }, streamFn: none.streamFn });
		expect(transcriptOf(restored)).toEqual(transcriptOf(busy));
	});

	it("saves the agent first when it is restored from a snapshot the store does not hold", async () => {
		const { counting, agent } = twoReplyAgent("s10");
		await agent.prompt("first");
		const elsewhere = countingStore();
		const scripted = createScriptedModel([{ content: "two" }]);
		const moved = Agent.restore(JSON.parse(JSON.stringify(agent.snapshot())) as AgentSnapshot, { initialState: { model: scripted.model }, streamFn: scripted.streamFn, store: elsewhere.store, sessionId: "s10" });
		await moved.prompt("second");
		await moved.saved();
		expect(counting.saves).toHaveLength(1);
		// The store it moved to knew nothing of it: it is saved as the prompt finds it.
		expect(elsewhere.saves).toHaveLength(1);
		const none = createScriptedModel([]);
		const again = await Agent.load({ store: elsewhere.store, sessionId: "s10", initialState: { model: none.model }, streamFn: none.streamFn });
		expect(transcriptOf(again)).toEqual(["user: first", "assistant: one", "user: second", "assistant: two"]);
	});

	// A run whose start is a snapshot is known from that snapshot only: a restore from the one
	// before does not look for its entries. So no effect of it may run before that snapshot is
	// stored, or a crash during the effect loses it (the crash test found this: a tool ran, and
	// the restored session asked the model again and never answered that call).
	it.each([
		["a prompt made while the last run's end is still being saved", "prompt"],
		["continue() with a queued follow-up (never journaled as a prompt)", "continue"],
	] as const)("runs no tool of a run before the snapshot that starts it is stored: %s", async (_name, start) => {
		// What a crash leaves is what the store finished writing: what its load gives.
		const counting = countingStore();
		const runs: string[] = [];
		let leftByCrash: AgentSnapshot | undefined;
		const charge = makeTool("charge", async (id) => {
			runs.push(id);
			leftByCrash = (await counting.store.load("s7"))?.snapshot;
			return ok("charged");
		});
		const scripted = createScriptedModel([{ content: "one" }, { content: [toolCall("charge", {}, "c1")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [charge] }, streamFn: scripted.streamFn, store: counting.store, sessionId: "s7" });
		const slow = deferred<void>();
		if (start === "prompt") {
			// The agent changed since the store had it: the prompt finds it saved first, and the save is slow.
			await agent.prompt("first");
			await agent.saved();
			agent.state.systemPrompt = "changed";
			counting.holdSaves(slow.promise);
		} else {
			await agent.prompt("first");
			await agent.saved();
			counting.holdSaves(slow.promise);
			agent.followUp({ role: "user", content: "charge me", timestamp: 0 });
		}
		const run = start === "prompt" ? agent.prompt("charge me") : agent.continue();
		// Time for the model to answer and the tool to run, had they not waited for the store.
		await new Promise((resolve) => setTimeout(resolve, 100));
		expect(runs).toEqual([]);
		slow.resolve();
		await run;
		expect(runs).toEqual(["c1"]);

		// A crash while the tool ran: a restore from what the store held then answers the call.
		const crashed = createMemoryStore();
		await crashed.saveSnapshot("s7", leftByCrash as AgentSnapshot);
		const again = createScriptedModel([{ content: "done" }]);
		const second = await Agent.load({ store: crashed, sessionId: "s7", initialState: { model: again.model, tools: [charge] }, streamFn: again.streamFn });
		await second.waitForIdle();
		expect(runs).toEqual(["c1"]);
		expect(transcriptOf(second).map((line) => line.slice(0, 54))).toEqual(["user: first", "assistant: one", "user: charge me", "assistant: ", 'toolResult: Tool "charge" was interrupted by a restart', "assistant: done"]);
		expectValidTranscript(second.state.messages);
	});
});
