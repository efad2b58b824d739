/**
 * A tool that reports progress at every chunk of its output (a shell, a build) on a stored
 * session: only a call's latest progress is ever read (it is what an interrupted call's answer
 * quotes), so a report that a newer one follows before it is written is not written. Before, the
 * file store appended every report (with fsync "always", a flush each), each holding all the tool
 * had output so far: 2,000 reports of a 50 KB tail made an 88 MB journal for one call, and the
 * run's next model call waited seconds for them; the memory store kept every report in memory
 * until the run ended (200 MB).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import type { StoredJournalEntry } from "../../src/durable/journal.js";
import { type AgentStore, createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentToolResult } from "../../src/types/agent.js";
import { expectValidTranscript, makeTool, ok, textOf } from "../agent/helpers.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-progress-");
const REPORTS = 300;

/** The progress entries of the journal entries, as the text each reported. */
function progressOf(entries: readonly StoredJournalEntry[]): string[] {
	return entries.flatMap((entry) => (entry.phase === "update" ? [textOf(entry.partialResult)] : []));
}

/**
 * Runs a call of a tool that reports {@link REPORTS} times at once, and gives what `stored` says
 * the store holds of its progress once every write so far has landed, before the call ends.
 */
async function progressStoredDuringCall(store: AgentStore, stored: () => Promise<string[]>): Promise<{ agent: Agent; progress: string[] }> {
	let agent: Agent | undefined;
	let progress: string[] = [];
	const chatty = makeTool("chatty", async (_id, _args, _signal, onUpdate) => {
		let output = "";
		for (let line = 1; line <= REPORTS; line++) {
			output += `line ${line}\n`;
			onUpdate?.(ok(output) as AgentToolResult<unknown>);
		}
		await agent?.saved();
		progress = await stored();
		return ok("built");
	});
	const scripted = createScriptedModel([{ content: [toolCall("chatty", {}, "a")] }, { content: "done" }]);
	agent = new Agent({ initialState: { model: scripted.model, tools: [chatty] }, streamFn: scripted.streamFn, store, sessionId: "s" });
	await agent.prompt("build it");
	await agent.saved();
	return { agent, progress };
}

describe("a tool that reports progress often, on a stored session", () => {
	it("the file store gets its latest report, not each one (each would be a line, and a flush, holding all it output so far)", async () => {
		const store = createFileStore(await tempDir());
		const { agent, progress } = await progressStoredDuringCall(store, async () => {
			const text = await readFile(join(store.filesOf("s"), "journal.jsonl"), "utf8");
			return progressOf(text.split("\n").flatMap((line) => (line ? [JSON.parse(line.slice(9)) as StoredJournalEntry] : [])));
		});
		// The first may have been handed to the store before the others came.
		expect(progress.length).toBeLessThanOrEqual(2);
		expect(progress.at(-1)?.trim().split("\n").at(-1)).toBe(`line ${REPORTS}`);
		expectValidTranscript(agent.state.messages);
		expect(agent.storeProblems).toEqual([]);
	});

	it("the memory store keeps its latest report only", async () => {
		const store = createMemoryStore();
		const { agent, progress } = await progressStoredDuringCall(store, async () => progressOf((await store.load("s"))?.snapshot?.journal ?? []));
		expect(progress).toHaveLength(1);
		expect(progress[0]?.trim().split("\n").at(-1)).toBe(`line ${REPORTS}`);
		expectValidTranscript(agent.state.messages);
	});
});
