/**
 * Journal entries a store gives back whole but not in a shape a restore can use: a file store's
 * line that matches its checksum (edited by hand, written by a newer agentchart), an entry of a
 * store of the user's own, and progress a tool reported in a shape plain JavaScript let through.
 * Before, a whole file-store line that was not an object was taken for a write cut short and cut
 * away with every entry after it; an object missing what its kind needs reached the restore, to
 * be ignored or to fail with a bare `TypeError`; and a tool's non-object progress made the restore
 * of its interrupted call fail inside the chart.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import type { StoredJournalEntry } from "../../src/durable/journal.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentToolResult } from "../../src/types/agent.js";
import { deferred, expectValidTranscript, makeTool, ok, thrownBy, textOf } from "../agent/helpers.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-journal-shape-");

/** A journal line as the file store writes one: its checksum, a tab, the JSON. */
function line(json: string): string {
	return `${crc32(json).toString(16).padStart(8, "0")}\t${json}\n`;
}

/** A stored session whose run is cut off inside a tool: its journal holds the tool's intent. */
async function sessionInsideTool() {
	const store = createFileStore(await tempDir());
	const started = deferred<void>();
	const hold = makeTool("charge", async () => {
		started.resolve();
		return new Promise<never>(() => {});
	});
	const scripted = createScriptedModel([{ content: [toolCall("charge", {}, "a")] }, { content: "done" }]);
	const agent = new Agent({ initialState: { model: scripted.model, tools: [hold] }, streamFn: scripted.streamFn, store, sessionId: "s" });
	void agent.prompt("go");
	await started.promise;
	await agent.saved();
	agent.dispose();
	const journalPath = join(store.filesOf("s"), "journal.jsonl");
	return { store, journalPath, entries: (await readFile(journalPath, "utf8")).split("\n").filter(Boolean) };
}

describe("a journal entry that is whole but not one a restore can use", () => {
	const shapes: [string, (entry: StoredJournalEntry) => unknown, RegExp][] = [
		["null", () => null, /line 2 of .*journal\.jsonl \(whole: it matches its checksum\): it must be an object, not null/],
		["a kind of a newer agentchart", (entry) => ({ ...entry, kind: "timer" }), /line 2 of .*: its kind must be "run" or "model" or "tool" or "approval" or "compaction", not "timer"/],
		["a tool intent without its replay policy", (entry) => ({ ...entry, replay: undefined }), /line 2 of .*: its replay must be "safe" or "unsafe", not undefined/],
		["a phase of a newer agentchart", (entry) => ({ ...entry, phase: "retry" }), /line 2 of .*: its phase must be "intent" or "update" or "outcome", not "retry"/],
		["a tool intent whose call has no name", (entry) => ({ ...entry, call: { id: "a" } }), /line 2 of .*: its call\.name must be a string, not undefined/],
	];
	for (const [what, change, message] of shapes) {
		it(`fails the file store's load, naming the line and the field, and leaves the journal as it is: ${what}`, async () => {
			const { store, journalPath, entries } = await sessionInsideTool();
			const intent = entries.findIndex((text) => text.includes('"phase":"intent"') && text.includes('"kind":"tool"'));
			expect(intent).toBeGreaterThan(0);
			const changed = line(JSON.stringify(change(JSON.parse((entries[intent] as string).slice(9)) as StoredJournalEntry)));
			// The changed entry on line 2, the others after it: a load that cut it away would lose them too.
			const text = [entries[0], changed.trimEnd(), ...entries.slice(1, intent)].map((each) => `${each}\n`).join("");
			await writeFile(journalPath, text);
			await expect(store.load("s")).rejects.toThrow(message);
			await expect(Agent.load({ store, sessionId: "s", initialState: { tools: [] } })).rejects.toThrow(message);
			expect(await readFile(journalPath, "utf8")).toBe(text);
		});
	}

	it("fails a restore from a store of the user's own, naming the entry's field, before the run starts", async () => {
		const { store } = await sessionInsideTool();
		const loaded = (await store.load("s"))?.snapshot as AgentSnapshot;
		const outcome = { kind: "tool", phase: "outcome", effect: "r1.t1.a", seq: 99, result: { details: {} }, isError: false } as unknown as StoredJournalEntry;
		const snapshot: AgentSnapshot = { ...loaded, journal: [...loaded.journal, outcome] };
		const scripted = createScriptedModel([{ content: "done" }]);
		const tools = [makeTool("charge", async () => ok("charged"))];
		expect(thrownBy(() => Agent.restore(snapshot, { initialState: { tools }, streamFn: scripted.streamFn }))).toMatch(
			/the snapshot's journal\[\d+\]\.result\.content must be a list, not undefined/,
		);
	});
});

describe("progress a tool reported as something other than a result", () => {
	for (const progress of ["50%", null, { content: "half" }, { content: [null, { type: "text", text: "half" }] }]) {
		it(`answers the interrupted call after a restore, as any interrupted call: ${JSON.stringify(progress)}`, async () => {
			const started = deferred<void>();
			const charge = makeTool("charge", async (_id, _args, _signal, onUpdate) => {
				onUpdate?.(progress as unknown as AgentToolResult<unknown>);
				started.resolve();
				return new Promise<never>(() => {});
			});
			const scripted = createScriptedModel([{ content: [toolCall("charge", {}, "a")] }, { content: "done" }]);
			const first = new Agent({ initialState: { model: scripted.model, tools: [charge] }, streamFn: scripted.streamFn });
			void first.prompt("go");
			await started.promise;
			const snapshot = JSON.parse(JSON.stringify(first.snapshot())) as AgentSnapshot;
			first.dispose();
			const second = Agent.restore(snapshot, { initialState: { tools: [charge] }, streamFn: scripted.streamFn });
			await second.waitForIdle();
			expect(second.state.errorMessage).toBeUndefined();
			expectValidTranscript(second.state.messages);
			const result = second.state.messages.find((message) => message.role === "toolResult");
			expect(textOf(result)).toMatch(/^Tool "charge" was interrupted by a restart and not run again/);
			expect(textOf(second.state.messages.at(-1))).toBe("done");
		});
	}
});
