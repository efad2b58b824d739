/**
 * One long run on the file store: a prompt whose tool loop goes on for hundreds of turns. The
 * snapshot rule (the journal after the last snapshot may hold max(256, transcript) entries) was
 * checked only at a run's end, so a single long run never took a snapshot: 3,000 turns left 12,000
 * journal lines after a 1 KB snapshot, and a restore replayed the run from its first turn. Now a
 * run takes one at an outcome, once the rule says it is due, and a restore goes on from there.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import type { AgentStore } from "../../src/durable/store.js";
import { createScriptedModel, type ScriptedReplyFactory, toolCall } from "../../src/providers/scripted.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { makeTool, ok } from "../agent/helpers.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-probe-al-run-");

/** A file store that keeps the snapshots it is given (whether each was of a run in progress). */
function watchedStore(root: string) {
	const inner = createFileStore(root, { fsync: "never" });
	const snapshots: AgentSnapshot[] = [];
	const store: AgentStore = {
		...inner,
		saveSnapshot(id, snapshot) {
			snapshots.push(snapshot);
			return inner.saveSnapshot(id, snapshot);
		},
	};
	return { store, inner, snapshots };
}

const duringRun = (snapshots: readonly AgentSnapshot[]) => snapshots.filter((snapshot) => snapshot.machine.context.run !== undefined).length;

async function journalLines(files: string): Promise<number> {
	return (await readFile(join(files, "journal.jsonl"), "utf8")).split("\n").filter(Boolean).length;
}

/** The messages as stored, without the times of tool results: a restore that replays a call's outcome makes its result again, at the time it does. */
const plain = (messages: readonly AgentMessage[]): unknown =>
	(JSON.parse(JSON.stringify(messages)) as Record<string, unknown>[]).map((message) => (message["role"] === "toolResult" ? { ...message, timestamp: 0 } : message));

describe("a long run on the file store", () => {
	it("takes snapshots while it runs, so the journal after the last one stays shorter than the transcript, and a load goes on with the same transcript", async () => {
		const turns = 400;
		const root = await tempDir();
		const { store, inner, snapshots } = watchedStore(root);
		let blocked!: () => void;
		const reachedLast = new Promise<void>((resolve) => (blocked = resolve));
		// The last turn's tool never ends: the process "stops" there, with the run in progress.
		const step = makeTool("step", async (_id, params) => {
			if (params["n"] === turns) {
				blocked();
				return new Promise(() => {});
			}
			return ok(`step ${String(params["n"])}`);
		});
		let turn = 0;
		const reply: ScriptedReplyFactory = () => (++turn <= turns ? { content: [toolCall("step", { n: turn })] } : { content: "finished" });
		const scripted = createScriptedModel(Array.from({ length: turns + 1 }, () => reply));
		const first = await Agent.load({ store, sessionId: "run", initialState: { model: scripted.model, tools: [step] }, streamFn: scripted.streamFn });
		void first.prompt("go").catch(() => {});
		await reachedLast;
		await first.saved();
		expect(first.storeProblems).toEqual([]);
		expect(duringRun(snapshots)).toBeGreaterThan(0);
		const transcript = first.state.messages.length;
		expect(transcript).toBe(2 * turns);
		// Before: every entry of the run (4 a turn) followed the snapshot taken before the prompt.
		expect(await journalLines(inner.filesOf("run"))).toBeLessThan(transcript);

		const rest = createScriptedModel([{ content: "finished" }]);
		const second = await Agent.load({ store: createFileStore(root, { fsync: "never" }), sessionId: "run", initialState: { model: rest.model, tools: [step] }, streamFn: rest.streamFn });
		await second.waitForIdle();
		expect(second.storeProblems).toEqual([]);
		const messages = second.state.messages;
		expect(plain(messages.slice(0, transcript))).toEqual(plain(first.state.messages));
		// The call the stop cut off is answered as interrupted (not replay-safe), and the run ends.
		expect(messages.slice(transcript).map((message) => message.role)).toEqual(["toolResult", "assistant"]);
	});

	it("a session of short runs takes no snapshot in the middle of a run", async () => {
		const root = await tempDir();
		const { store, snapshots } = watchedStore(root);
		const fetch = makeTool("fetch", async () => ok("fetched"));
		const scripted = createScriptedModel([]);
		const agent = new Agent({ store, sessionId: "short", initialState: { model: scripted.model, tools: [fetch] }, streamFn: scripted.streamFn });
		for (let run = 0; run < 150; run++) {
			scripted.append({ content: [toolCall("fetch", {}, `c${run}`), toolCall("fetch", {}, `d${run}`)] }, { content: `done ${run}` });
			await agent.prompt(`run ${run}`);
		}
		await agent.saved();
		expect(agent.storeProblems).toEqual([]);
		expect(duringRun(snapshots)).toBe(0);
		const loaded = await Agent.load({ store: createFileStore(root, { fsync: "never" }), sessionId: "short", initialState: { model: scripted.model, tools: [fetch] }, streamFn: scripted.streamFn });
		await loaded.waitForIdle();
		expect(plain(loaded.state.messages)).toEqual(plain(agent.state.messages));
	});
});

describe("a long run loaded from a snapshot of it in progress", () => {
	it("spaces its next snapshot from the stored transcript, not from nothing (a review: one after 256 entries whatever the transcript)", async () => {
		const turns = 700;
		const stopAt = 500;
		const root = await tempDir();
		const first = watchedStore(root);
		let blocked!: () => void;
		const reached = new Promise<void>((resolve) => (blocked = resolve));
		let stopping = true;
		const step = makeTool("step", async (_id, params) => {
			if (stopping && params["n"] === stopAt) {
				blocked();
				return new Promise(() => {});
			}
			return ok(`step ${String(params["n"])}`);
		});
		let turn = 0;
		const reply: ScriptedReplyFactory = () => (++turn <= turns ? { content: [toolCall("step", { n: turn })] } : { content: "finished" });
		const model = createScriptedModel(Array.from({ length: turns + 1 }, () => reply));
		const agent = await Agent.load({ store: first.store, sessionId: "run", initialState: { model: model.model, tools: [step] }, streamFn: model.streamFn });
		void agent.prompt("go").catch(() => {});
		await reached;
		await agent.saved();
		const stored = first.snapshots.at(-1);
		expect(stored?.machine.context.run).toBeDefined();
		const storedTranscript = stored?.machine.context.messages.length ?? 0;
		expect(storedTranscript).toBeGreaterThan(256);
		// The journal holds only the entries after the last snapshot: they count toward the next.
		const before = await journalLines(first.inner.filesOf("run"));

		stopping = false;
		turn = stopAt;
		const second = watchedStore(root);
		let appended = 0;
		const entriesAtSnapshot: number[] = [];
		const counting: AgentStore = {
			...second.store,
			appendJournal(id, entry) {
				appended++;
				return second.store.appendJournal(id, entry);
			},
			saveSnapshot(id, snapshot) {
				entriesAtSnapshot.push(appended);
				return second.store.saveSnapshot(id, snapshot);
			},
		};
		const again = createScriptedModel(Array.from({ length: turns + 1 }, () => reply));
		const loaded = await Agent.load({ store: counting, sessionId: "run", initialState: { model: again.model, tools: [step] }, streamFn: again.streamFn });
		await loaded.waitForIdle();
		await loaded.saved();
		expect(loaded.storeProblems).toEqual([]);
		// The loaded run's first snapshot (mid-run, or its end's, 800 entries on): not before the
		// stored transcript's length of entries since the stored snapshot.
		expect(entriesAtSnapshot.length).toBeGreaterThan(0);
		expect(before + (entriesAtSnapshot[0] ?? 0)).toBeGreaterThanOrEqual(storedTranscript);
		expect(loaded.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
	});
});
