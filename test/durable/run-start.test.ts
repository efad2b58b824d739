/**
 * A run's start with a store: when the stored snapshot is the agent between runs as the next
 * prompt finds it, the prompt is journaled instead of a second snapshot (`RunStart`), and a
 * restore from that snapshot starts the run again with it; when anything changed since (the
 * transcript, the system prompt, a save still on its way), the start is a snapshot as before.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { StoredJournalEntry } from "../../src/durable/journal.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { type AgentStore, createMemoryStore } from "../../src/durable/store.js";
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
	it("journals a later prompt instead of saving a second snapshot at its run's start", async () => {
		const { counting, agent } = twoReplyAgent("s1");
		await agent.prompt("first");
		await agent.saved();
		// A new session: its start is a snapshot (nothing is stored yet), and so is its end.
		expect(counting.saves).toHaveLength(2);
		await agent.prompt("second");
		await agent.saved();
		expect(counting.saves).toHaveLength(3);
		expect(counting.saves.at(-1)?.machine.value).toBe("idle");
		// The run's end: its effects are in the transcript, and the snapshot keeps none of its entries.
		expect(counting.saves.map((snapshot) => snapshot.journal.length)).toEqual([1, 0, 0]);
		expect(transcriptOf(agent)).toEqual(["user: first", "assistant: one", "user: second", "assistant: two"]);
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
		expect(counting.saves).toHaveLength(2);
		const entries = await counting.journal("s2");
		const starts = entries.filter((entry) => entry.kind === "run");
		expect(starts.map((entry) => [entry.effect, entry.kind === "run" ? entry.messages.map(textOf) : []])).toEqual([["r2", ["second"]]]);
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

	it("saves a snapshot at the run's start when the agent changed since the stored one, and a restore keeps the change", async () => {
		const counting = countingStore();
		const first = thenHang({ content: "one" });
		const agent = new Agent({ initialState: { model: first.model, systemPrompt: "be brief" }, streamFn: first.streamFn, store: counting.store, sessionId: "s4" });
		await agent.prompt("first");
		await agent.saved();
		agent.state.systemPrompt = "be thorough";
		void agent.prompt("second");
		await first.hung;
		await agent.saved();
		expect(counting.saves).toHaveLength(3);
		agent.dispose();

		const again = createScriptedModel([{ content: "two" }]);
		const second = await Agent.load({ store: counting.store, sessionId: "s4", initialState: { model: again.model }, streamFn: again.streamFn });
		await second.waitForIdle();
		expect(again.calls[0]?.systemPrompt).toBe("be thorough");
		expect(transcriptOf(second)).toEqual(["user: first", "assistant: one", "user: second", "assistant: two"]);
	});

	it("saves a snapshot at the run's start when the transcript was edited between runs", async () => {
		const { counting, agent } = twoReplyAgent("s5");
		await agent.prompt("first");
		await agent.saved();
		agent.state.messages = agent.state.messages.slice(0, 1);
		await agent.prompt("second");
		await agent.saved();
		expect(counting.saves).toHaveLength(4);
		expect(counting.saves[2]?.machine.context.messages.map((message) => textOf(message))).toEqual(["first", "second"]);
	});

	it("saves a snapshot at the run's start while the last save is still on its way to the store", async () => {
		const { counting, agent } = twoReplyAgent("s6");
		const slow = deferred<void>();
		counting.holdSaves(slow.promise);
		await agent.prompt("first");
		// The run's end is not stored yet: the next run's start cannot stand on it.
		const second = agent.prompt("second");
		slow.resolve();
		await second;
		await agent.saved();
		expect(counting.saves).toHaveLength(4);
		expect((await counting.journal("s6")).filter((entry) => entry.kind === "run")).toEqual([]);
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
			// The first run's end is still being saved when the next prompt comes: its start is a snapshot.
			counting.holdSaves(slow.promise);
			await agent.prompt("first");
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
