/**
 * A file store whose last snapshot is damaged (a disk that lost it, an edit) loads the one before
 * (`snapshot.prev.json`); its journal went on from the damaged one (each snapshot's save keeps
 * only the entries after it), so the runs journaled there do not follow the snapshot it loads.
 * They are left out and reported, and the session goes on from the snapshot. Before, they stayed
 * in the journal unapplied and unreported, the next run took the number of one of them, and a
 * later load applied them after it: a run the user had never seen again came back, out of order
 * ("three", then "two").
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { textOf } from "../agent/helpers.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-fallback-");

function texts(messages: readonly AgentMessage[]): string[] {
	return messages.map((message) => `${message.role}: ${textOf(message)}`);
}

/** Loads session "s" from `root` as a process of its own would (a store of its own), its replies `reply <tag> <n>`. */
function load(root: string, tag: string): Promise<Agent> {
	const scripted = createScriptedModel(Array.from({ length: 5 }, (_, index) => ({ content: `reply ${tag} ${index + 1}` })));
	return Agent.load({ store: createFileStore(root), sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
}

describe("a file store session whose last snapshot does not read", () => {
	it("goes on from the snapshot before it, without the runs journaled after the damaged one (reported), which never come back", async () => {
		const root = await tempDir();
		const first = await load(root, "A");
		// A new session's first write is a snapshot (empty); "one" is journaled after it.
		await first.prompt("one");
		// The last snapshot (the empty one is kept as the one before); "two" is journaled after it.
		await first.save();
		await first.prompt("two");
		await first.saved();
		await writeFile(join(createFileStore(root).filesOf("s"), "snapshot.json"), '{"crc":"00000000","snapshot":"damaged"}');

		const second = await load(root, "B");
		expect(texts(second.state.messages)).toEqual([]);
		await second.prompt("three");
		await second.saved();

		const third = await load(root, "C");
		expect(texts(third.state.messages)).toEqual(["user: three", "assistant: reply B 1"]);
		expect(third.storeProblems).toEqual([]);
		expect(second.storeProblems).toEqual([
			expect.stringMatching(/snapshot\.json does not match its checksum/),
			"used snapshot.prev.json instead",
			expect.stringMatching(/^the journal holds \d+ entries of runs that do not follow the snapshot \(r2, where r1 would be next\).*left out/),
		]);
	});
});
