/**
 * A manual compaction (`agent.compact()`) on an agent with a store is journaled before it starts
 * (`{ kind: "compaction", phase: "start", effect: "r<n>" }`, the run number it takes): a crash
 * before it ended, with no snapshot saved during it, comes back from `Agent.load` with the
 * compaction made again (its listeners hear `auto_compaction_start`, then `auto_compaction_end`;
 * `waitForIdle()` waits for it), as a run a crash interrupted goes on. Before, the only durable
 * record was the snapshot from before `compact()`: the session came back uncompacted, with no
 * event and no word of the compaction. A compaction that did not compact (failed, aborted)
 * journals its end, and is not made again.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { CompactionSettings } from "../../src/compaction/settings.js";
import { createFileStore } from "../../src/durable/file-store.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { type AgentStore, createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import { plainRoles } from "../agent/helpers.js";
import { useTempDirs } from "../temp-dirs.js";
import { compactionEvents, hangingCompaction, killedWhileCompacting, long, transcript, until } from "./compaction-helpers.js";

const tempDir = useTempDirs("agentchart-journaled-compaction-");
const summarising = (summary: string, asked: (string | undefined)[] = []): CompactionSettings => ({ enabled: true, keepRecentTokens: 1, summarize: async (request) => (asked.push(request.instructions), summary) });

/** A memory store that counts the snapshots it is given. */
function countingStore(): { store: AgentStore; snapshots: AgentSnapshot[] } {
	const memory = createMemoryStore();
	const snapshots: AgentSnapshot[] = [];
	const store: AgentStore = { ...memory, saveSnapshot: (id, snapshot) => (snapshots.push(snapshot), memory.saveSnapshot(id, snapshot)) };
	return { store, snapshots };
}

/** What the store holds of session "s" after its last snapshot. */
async function journalOf(store: AgentStore): Promise<string[]> {
	const snapshot = (await store.load("s", { peek: true }))?.snapshot;
	return (snapshot?.journal ?? []).filter((entry) => entry.seq > (snapshot?.journalSeq ?? 0)).map((entry) => `${entry.kind}.${entry.phase} ${entry.effect}`);
}

describe("a manual compaction on a store, interrupted by a crash with no snapshot saved during it", () => {
	it("is journaled before it starts, and made again by Agent.load, with its instructions and its events", async () => {
		const { store, snapshots } = countingStore();
		const scripted = createScriptedModel([{ content: long("an answer") }]);
		const options = { store, sessionId: "s", streamFn: scripted.streamFn };
		const held = hangingCompaction();
		const first = new Agent({ ...options, initialState: { model: scripted.model, messages: transcript() }, compaction: held.settings });
		await first.prompt(long("a prompt"));
		await first.saved();
		const before = snapshots.length;
		void first.compact("keep the names").catch(() => undefined);
		await until(held.started);
		await first.saved();
		// Journaled, not saved: the store's last snapshot is from before compact().
		expect(snapshots.length).toBe(before);
		expect(await journalOf(store)).toEqual(["run.start r1", "run.end r1", "compaction.start r2"]);

		const events: AgentEvent[] = [];
		const asked: (string | undefined)[] = [];
		const second = await Agent.load({ ...options, compaction: summarising("the summary", asked), listeners: [(event) => void events.push(event)] });
		await expect(second.compact()).rejects.toThrow(/already processing/);
		await second.waitForIdle();
		expect(compactionEvents(events)).toEqual(["start:manual", "end:manual:compacted"]);
		expect(asked).toEqual(["keep the names"]);
		expect(second.state.messages[0]).toMatchObject({ role: "compactionSummary", summary: "the summary" });
		await second.saved();

		// Stored compacted: a later load makes nothing again.
		const later: AgentEvent[] = [];
		const third = await Agent.load({ ...options, compaction: summarising("another summary"), listeners: [(event) => void later.push(event)] });
		await third.waitForIdle();
		expect(later).toEqual([]);
		expect(third.state.messages[0]).toMatchObject({ role: "compactionSummary", summary: "the summary" });
		expect(await journalOf(store)).toEqual([]);
	});

	it("on a session the store did not hold as it is (a new one), saves it first and journals the compaction after it", async () => {
		const { store } = countingStore();
		const scripted = createScriptedModel([]);
		const held = hangingCompaction();
		const first = new Agent({ store, sessionId: "s", streamFn: scripted.streamFn, initialState: { model: scripted.model, messages: transcript() }, compaction: held.settings });
		void first.compact().catch(() => undefined);
		await until(held.started);
		await first.saved();
		expect(await journalOf(store)).toEqual(["compaction.start r1"]);

		const events: AgentEvent[] = [];
		const second = await Agent.load({ store, sessionId: "s", streamFn: scripted.streamFn, compaction: summarising("the summary"), listeners: [(event) => void events.push(event)] });
		await second.waitForIdle();
		expect(compactionEvents(events)).toEqual(["start:manual", "end:manual:compacted"]);
		expect(second.state.messages[0]).toMatchObject({ role: "compactionSummary" });
	});

	it("made again and failing, journals its end: the next load makes it no more, and later runs are numbered after it", async () => {
		const { store } = countingStore();
		const scripted = createScriptedModel([{ content: long("an answer") }, { content: "later answer" }]);
		const options = { store, sessionId: "s", streamFn: scripted.streamFn };
		const held = hangingCompaction();
		const first = new Agent({ ...options, initialState: { model: scripted.model, messages: transcript() }, compaction: held.settings });
		await first.prompt(long("a prompt"));
		void first.compact().catch(() => undefined);
		await until(held.started);
		await first.saved();

		const failing: CompactionSettings = {
			enabled: true,
			keepRecentTokens: 1,
			summarize: async () => {
				throw new Error("the summariser is down");
			},
		};
		const events: AgentEvent[] = [];
		const second = await Agent.load({ ...options, compaction: failing, listeners: [(event) => void events.push(event)] });
		await second.waitForIdle();
		expect(compactionEvents(events)).toEqual(["start:manual", "end:manual:Compaction failed: the summariser is down"]);
		await second.saved();
		expect(await journalOf(store)).toEqual(["run.start r1", "run.end r1", "compaction.start r2", "compaction.end r2"]);

		const third = await Agent.load({ ...options, compaction: summarising("never asked"), listeners: [(event) => void events.push(event)] });
		await third.waitForIdle();
		expect(compactionEvents(events)).toHaveLength(2);
		await third.prompt("later");
		await third.saved();
		// Journaled as the run after the compaction (r3), and applied so by a load.
		expect(await journalOf(store)).toEqual(["run.start r1", "run.end r1", "compaction.start r2", "compaction.end r2", "run.start r3", "run.end r3"]);
		const fourth = await Agent.load({ ...options });
		await fourth.waitForIdle();
		expect(plainRoles(fourth.state.messages)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant"]);
	});
});

describe("a manual compaction on a store that did not compact", () => {
	for (const ending of ["failed", "aborted"] as const) {
		it(`(${ending}) journals its end: a load makes it no more, and the next prompt is journaled, not saved`, async () => {
			const { store, snapshots } = countingStore();
			const scripted = createScriptedModel([{ content: long("an answer") }, { content: "later answer" }]);
			const options = { store, sessionId: "s", streamFn: scripted.streamFn };
			const held = hangingCompaction();
			const settings: CompactionSettings =
				ending === "aborted"
					? held.settings
					: {
							enabled: true,
							keepRecentTokens: 1,
							summarize: async () => {
								throw new Error("the summariser is down");
							},
						};
			const first = new Agent({ ...options, initialState: { model: scripted.model, messages: transcript() }, compaction: settings });
			await first.prompt(long("a prompt"));
			const compacting = first.compact().catch((error: Error) => error.message);
			if (ending === "aborted") {
				await until(held.started);
				first.abort();
			}
			expect(await compacting).toBe(ending === "aborted" ? "Compaction aborted" : "Compaction failed: the summariser is down");
			const before = snapshots.length;
			await first.prompt("later");
			await first.saved();
			expect(snapshots.length).toBe(before);
			// abort() saves the agent, as it always did: that snapshot stands for the compaction.
			const compaction = ending === "aborted" ? [] : ["run.start r1", "run.end r1", "compaction.start r2", "compaction.end r2"];
			expect(await journalOf(store)).toEqual([...compaction, "run.start r3", "run.end r3"]);

			const events: AgentEvent[] = [];
			const second = await Agent.load({ ...options, compaction: summarising("never asked"), listeners: [(event) => void events.push(event)] });
			await second.waitForIdle();
			expect(events).toEqual([]);
			expect(plainRoles(second.state.messages)).toEqual(plainRoles(first.state.messages));
		});
	}
});

describe("a manual compaction on a store, disposed while a listener holds its events", () => {
	it("journals its end when dispose gives up waiting for the listener: a load does not make again a compaction the agent's owner ended", async () => {
		const { store } = countingStore();
		const scripted = createScriptedModel([{ content: long("an answer") }]);
		const options = { store, sessionId: "s", streamFn: scripted.streamFn };
		const held = hangingCompaction();
		const first = new Agent({ ...options, initialState: { model: scripted.model, messages: transcript() }, compaction: held.settings, toolAbortGraceMs: 20 });
		await first.prompt(long("a prompt"));
		// A listener that never returns from the compaction's start: its end never reaches the listeners.
		first.subscribe((event) => (event.type === "auto_compaction_start" ? new Promise<void>(() => {}) : undefined));
		const compacting = first.compact().catch((error: Error) => error.message);
		await until(held.started);
		first.dispose();
		expect(await compacting).toBe("Compaction aborted: the agent was disposed");
		await first.saved();
		const events: AgentEvent[] = [];
		const second = await Agent.load({ ...options, compaction: summarising("never asked"), listeners: [(event) => void events.push(event)] });
		await second.waitForIdle();
		// Before, the store held the compaction's start alone: the load made it again.
		expect(compactionEvents(events)).toEqual([]);
		expect(plainRoles(second.state.messages)).toEqual(plainRoles(first.state.messages));
	});
});

describe("a manual compaction in a process killed with SIGKILL, with no snapshot saved during it (file store)", () => {
	it("is made again by the process that loads the session", async () => {
		const root = await tempDir();
		// The child stores a session between runs, compacts it with a summariser that never answers,
		// waits until what it wrote is on disk (the compaction's journal entry), and says so.
		await killedWhileCompacting(root, "await agent.saved();", 'await agent.prompt("go"); await agent.saved(); void agent.compact("keep the names");');

		const scripted = createScriptedModel([]);
		const events: AgentEvent[] = [];
		const asked: (string | undefined)[] = [];
		const agent = await Agent.load({ store: createFileStore(root), sessionId: "s", streamFn: scripted.streamFn, compaction: summarising("the summary", asked), listeners: [(event) => void events.push(event)] });
		await agent.waitForIdle();
		expect(compactionEvents(events)).toEqual(["start:manual", "end:manual:compacted"]);
		expect(asked).toEqual(["keep the names"]);
		expect(agent.state.messages[0]).toMatchObject({ role: "compactionSummary", summary: "the summary" });
		await agent.saved();
	}, 30_000);
});
