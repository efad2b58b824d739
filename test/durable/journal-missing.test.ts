/**
 * A session's journal.jsonl gone while its snapshot stays (deleted by hand, or lost by a file
 * system that did not keep a file's directory entry): the runs journaled after the snapshot were
 * dropped and nothing said so. A snapshot is now never put in place without a journal beside it,
 * so a snapshot without one is reported in the load's problems (that a first snapshot always has one,
 * even when a save fails between the two, is tested in file-store-faults.test.ts).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-journal-missing-");
const MISSING = /journal\.jsonl is missing: the journal entries appended after the snapshot \(the runs since\), if there were any, are lost/;

describe("a file store session without its journal", () => {
	it("is reported, and the session goes on from the snapshot", async () => {
		const root = await tempDir();
		const store = createFileStore(root, { fsync: "never" });
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }]);
		const options = { store, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn };
		const agent = await Agent.load(options);
		await agent.prompt("first");
		await agent.saved();
		// The run is in the journal, after the snapshot the session's first run put in place.
		rmSync(join(store.filesOf("s"), "journal.jsonl"));
		agent.dispose();

		const loaded = await store.load("s", { peek: true });
		expect(loaded?.problems.some((problem) => MISSING.test(problem))).toBe(true);
		const again = await Agent.load(options);
		expect(again.storeProblems.some((problem) => MISSING.test(problem))).toBe(true);
		// The run is lost: the session is where its snapshot was, before it.
		expect(again.state.messages).toEqual([]);
		await again.prompt("second");
		await again.saved();
		expect(again.state.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
		again.dispose();
		// Written again with the next save: nothing more to report.
		expect((await store.load("s"))?.problems).toEqual([]);
	});
});
