/**
 * The journal's and the stores' rules that a restored agent depends on, each shown where it can
 * fail: the numbering an index keeps when it forgets entries, which stored entries
 * `journalAfter` takes (a database store keeps every entry and relies on it), which progress the
 * memory store keeps, and what a restart makes of interrupted calls' output and of calls that
 * started while their reply streamed. Found by mutation testing: each of these rules could be
 * broken with every test of the mutation run (test/durable in process, test/agent) still passing.
 */
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { JournalIndex, type StoredJournalEntry } from "../../src/durable/journal.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { createMemoryStore, journalAfter, SessionTakenOverError } from "../../src/durable/store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentToolResult, AnyAgentTool } from "../../src/types/agent.js";
import type { ToolCall } from "../../src/types/content.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { deferred, expectValidTranscript, makeTool, manualStream, ok, textOf } from "../agent/helpers.js";

/** A model call's intent numbered `seq`, of the line `lineage` if given. */
function intent(seq: number, lineage?: string): StoredJournalEntry {
	const entry: StoredJournalEntry = { seq, kind: "model", phase: "intent", effect: `r1.m${seq}`, model: "m", messages: 1 };
	return lineage === undefined ? entry : { ...entry, lineage };
}

/** Progress `text` of the call `call` of run 1, numbered `seq`. */
function progress(seq: number, call: string, text: string): StoredJournalEntry {
	return { seq, kind: "tool", phase: "update", effect: `r1.t1.${call}`, partialResult: ok(text) };
}

/** An idle agent's snapshot with the journal fields given. */
function snapshotWith(fields: Pick<AgentSnapshot, "journal" | "journalSeq"> & Partial<Pick<AgentSnapshot, "lineage">>): AgentSnapshot {
	return { ...new Agent().snapshot(), ...fields };
}

const seqs = (entries: readonly StoredJournalEntry[] | undefined) => entries?.map((entry) => entry.seq);

function toolResults(messages: readonly AgentMessage[]): string[] {
	return messages.filter((message) => message.role === "toolResult").map((message) => `${(message as { toolCallId: string }).toolCallId}: ${textOf(message)}`);
}

/** Waits for `check`, for up to 10 s of a loaded machine's time (a timer tick there may take far more than 1 ms). */
async function until(check: () => boolean, what: string): Promise<void> {
	const deadline = Date.now() + 10_000;
	while (!check()) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 1));
	}
}

/** A tool that reports `report` as its progress, then runs until the process dies; counts its runs. */
function stuckTool(name: string, report: AgentToolResult<unknown>, extra: Partial<AnyAgentTool> = {}) {
	const runs: string[] = [];
	const never = deferred<AgentToolResult<unknown>>();
	const tool = makeTool(
		name,
		async (id, _args, _signal, onUpdate) => {
			runs.push(id);
			onUpdate?.(report);
			return never.promise;
		},
		extra,
	);
	return { tool, runs };
}

describe("a JournalIndex", () => {
	it("starts empty and numbers its first entry 1", () => {
		const journal = new JournalIndex();
		expect(journal.entries).toEqual([]);
		journal.append({ kind: "model", phase: "intent", effect: "r1.m1", model: "m", messages: 1 });
		expect(seqs(journal.entries)).toEqual([1]);
	});

	it("never gives a number twice: not after it forgot its newest entries, nor when it continues a snapshot whose last number has no entry left", () => {
		const journal = new JournalIndex([intent(1), intent(2), intent(3), intent(4)]);
		// A restore's entries that cannot be placed are the newest: their numbers stay given.
		journal.retain((entry) => entry.seq <= 2);
		journal.append({ kind: "model", phase: "intent", effect: "r1.m5", model: "m", messages: 1 });
		expect(seqs(journal.entries)).toEqual([1, 2, 5]);
		const continued = new JournalIndex([intent(1), intent(2)], 7);
		continued.append({ kind: "model", phase: "intent", effect: "r1.m8", model: "m", messages: 1 });
		expect(seqs(continued.entries)).toEqual([1, 2, 8]);
	});

	it("forgets the entries numbered before the number it is given, and keeps the one with that number", () => {
		const journal = new JournalIndex([intent(1), intent(2), intent(3)]);
		journal.forgetBefore(2);
		expect(seqs(journal.entries)).toEqual([2, 3]);
		expect(journal.lookup("r1.m1")).toBeUndefined();
		expect(journal.lookup("r1.m2")?.intent).toEqual(intent(2));
	});
});

describe("journalAfter, for a store that keeps every entry as appended (a database)", () => {
	const stored = [1, 2, 3, 4, 5, 6].map((seq) => intent(seq, "L"));

	it("takes the stored entries numbered after the snapshot's journalSeq, none twice, also when the snapshot's journal is empty", () => {
		// Between runs: the entries up to 4 are in the transcript.
		expect(seqs(journalAfter(snapshotWith({ journal: [], journalSeq: 4, lineage: "L" }), stored))).toEqual([5, 6]);
		// Mid-run: the snapshot carries the run's entries up to 4.
		expect(seqs(journalAfter(snapshotWith({ journal: stored.slice(2, 4), journalSeq: 4, lineage: "L" }), stored))).toEqual([3, 4, 5, 6]);
	});

	it("changes nothing when applied again to what it returned (a snapshot whose journal already holds entries after its journalSeq)", () => {
		const once = snapshotWith({ journal: journalAfter(snapshotWith({ journal: stored.slice(2, 3), journalSeq: 3, lineage: "L" }), stored), journalSeq: 3, lineage: "L" });
		expect(seqs(once.journal)).toEqual([3, 4, 5, 6]);
		expect(seqs(journalAfter(once, stored))).toEqual([3, 4, 5, 6]);
	});

	it("leaves out the entries of another line (an agent the snapshot's replaced), and takes every line's after a snapshot that has none (an older agentchart's)", () => {
		const mixed = [intent(5, "old"), intent(5, "L"), intent(6, "old"), intent(6, "L")];
		expect(journalAfter(snapshotWith({ journal: [], journalSeq: 4, lineage: "L" }), mixed)).toEqual([intent(5, "L"), intent(6, "L")]);
		expect(journalAfter(snapshotWith({ journal: [], journalSeq: 4 }), [intent(5, "old"), intent(6, "L")])).toEqual([intent(5, "old"), intent(6, "L")]);
	});
});

describe("the memory store", () => {
	it("lists the sessions it was given a snapshot or an entry for, and none that was only looked for", async () => {
		const store = createMemoryStore();
		expect(await store.load("missing")).toBeUndefined();
		store.saveSnapshot("a", snapshotWith({ journal: [], journalSeq: 0 }));
		store.appendJournal("b", intent(1));
		expect(store.sessions()).toEqual(["a", "b"]);
	});

	it("keeps each call's latest progress only, and every call's, also when the report it replaces is the first entry after the snapshot", async () => {
		const store = createMemoryStore();
		store.saveSnapshot("s", snapshotWith({ journal: [], journalSeq: 2 }));
		for (const entry of [progress(3, "a", "a 1"), progress(4, "b", "b 1"), progress(5, "a", "a 2"), progress(6, "b", "b 2")]) store.appendJournal("s", entry);
		expect(seqs((await store.load("s"))?.snapshot?.journal)).toEqual([5, 6]);
	});
});

describe("a session restarted from the memory store", () => {
	it("answers each interrupted call that is not replay-safe, without running it again, with the output it reported last: its text blocks joined, other blocks named, trimmed", async () => {
		const store = createMemoryStore();
		const image = { type: "image", data: "aGk=", mimeType: "image/png" } as const;
		const copy = stuckTool("copy", { content: [{ type: "text", text: "copied a.txt\n" }, image, { type: "text", text: "copied b.txt\n" }], details: {} });
		const deploy = stuckTool("deploy", ok("deploying web"));
		const tools = [copy.tool, deploy.tool];
		const scripted = createScriptedModel([{ content: [toolCall("copy", {}, "a"), toolCall("deploy", {}, "b")] }]);
		const first = new Agent({ initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn, store, sessionId: "s" });
		void first.prompt("go").catch(() => undefined);
		await until(() => copy.runs.length === 1 && deploy.runs.length === 1, "both calls to run");
		await first.saved();
		first.dispose();

		const again = createScriptedModel([{ content: "done" }]);
		const second = await Agent.load({ store, sessionId: "s", initialState: { tools }, streamFn: again.streamFn });
		await second.waitForIdle();
		expect(copy.runs).toEqual(["a"]);
		expect(deploy.runs).toEqual(["b"]);
		const output = toolResults(second.state.messages).map((line) => line.replace(/^(\w): Tool "\w+" was interrupted by a restart .* Its output before the restart:\n/s, "$1: "));
		expect(output).toEqual(["a: copied a.txt\n[image]copied b.txt", "b: deploying web"]);
		expectValidTranscript(second.state.messages);
	});

	it("closes a reply a restart cut short after one of its calls had started (streaming tool execution) with the call as the model sent it: its arguments before validation, its signature", async () => {
		const store = createMemoryStore();
		const count = stuckTool("count", ok("counting"), { parameters: Type.Object({ n: Type.Number() }) });
		const stream = manualStream();
		const first = new Agent({ initialState: { model: createScriptedModel([]).model, tools: [count.tool] }, streamFn: stream.streamFn, toolExecution: "streaming", store, sessionId: "s" });
		void first.prompt("count to three").catch(() => undefined);
		await stream.opened;
		stream.start();
		// The tool gets `n` as a number; the model sent a text.
		const sent: ToolCall = { type: "toolCall", id: "a", name: "count", arguments: { n: "3" }, thoughtSignature: "signature-a" };
		stream.toolCallEnd(sent);
		await until(() => count.runs.length === 1, "the call to start while the reply streams");
		await first.saved();
		first.dispose();

		const again = createScriptedModel([{ content: "done" }]);
		const second = await Agent.load({ store, sessionId: "s", initialState: { tools: [count.tool] }, streamFn: again.streamFn });
		await second.waitForIdle();
		expect(count.runs).toEqual(["a"]);
		const reply = second.state.messages[1];
		expect(reply?.role === "assistant" ? reply.content : undefined).toEqual([sent]);
		expectValidTranscript(second.state.messages);
	});
});

it("an agent whose session a newer agent of this process opened is refused with an error named SessionTakenOverError that says so (for code that cannot use instanceof, and for logs)", async () => {
	const store = createMemoryStore();
	const scripted = createScriptedModel([{ content: "one" }]);
	const older = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, store, sessionId: "s" });
	new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, store, sessionId: "s" });
	const refused: unknown = await older.prompt("hi").then(
		() => undefined,
		(error: unknown) => error,
	);
	expect(refused).toBeInstanceOf(SessionTakenOverError);
	expect(String(refused)).toMatch(/^SessionTakenOverError: agentchart: session "s" was opened by another agent in this process since this one/);
});
