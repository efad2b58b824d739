/**
 * What a file store's load cannot use is kept, not written over. A session none of whose
 * snapshots reads (deleted by hand, lost by a file system, damaged both) starts again from
 * nothing, as before, and says so; a session whose last snapshot does not read goes on from the
 * one before, leaving out the runs journaled after the damaged one. Before, the next saves wrote
 * over the journal (the runs since the last snapshot, which exist nowhere else) and the damaged
 * snapshot, so the report named a loss no one could look into any more. Now they are moved to an
 * `unread-*` directory in the session's directory first, which no opening removes.
 */
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { textOf } from "../agent/helpers.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-unread-");

function load(root: string, tag: string): Promise<Agent> {
	const scripted = createScriptedModel(Array.from({ length: 4 }, (_, index) => ({ content: `reply ${tag} ${index + 1}` })));
	return Agent.load({ store: createFileStore(root), sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
}

/** A session "s" of `prompts` runs ("one", "two", ...), a snapshot saved between each two, its agent disposed; its files directory. */
async function stored(root: string, prompts: number): Promise<string> {
	const agent = await load(root, "A");
	for (const [index, text] of ["one", "two", "three"].slice(0, prompts).entries()) {
		if (index > 0) await agent.save();
		await agent.prompt(text);
	}
	await agent.saved();
	agent.dispose();
	return createFileStore(root).filesOf("s");
}

/** The session's `unread-*` directories and the files in each. */
function unread(root: string): { name: string; files: string[] }[] {
	const dir = createFileStore(root).directoryOf("s");
	return readdirSync(dir)
		.filter((name) => name.startsWith("unread-"))
		.map((name) => ({ name, files: readdirSync(join(dir, name)).sort() }));
}

describe("a file store session whose snapshots do not read", () => {
	it("starts again from nothing with its files moved aside, untouched by what the new session writes", async () => {
		const root = await tempDir();
		const files = await stored(root, 1);
		const journal = readFileSync(join(files, "journal.jsonl"), "utf8");
		expect(journal).toContain("reply A 1");
		rmSync(join(files, "snapshot.json"));
		rmSync(join(files, "snapshot.prev.json"), { force: true });

		// A look without writing (another process reading the session) moves nothing.
		const peeked = await createFileStore(root).load("s", { peek: true });
		expect(peeked?.snapshot).toBeUndefined();
		expect(unread(root)).toEqual([]);

		const second = await load(root, "B");
		expect(second.state.messages).toEqual([]);
		const [moved, ...more] = unread(root);
		expect(more).toEqual([]);
		expect(moved?.files).toEqual(["journal.jsonl"]);
		expect(second.storeProblems).toEqual(["no snapshot could be read: the session starts again from nothing", expect.stringContaining(`moved to ${join(createFileStore(root).directoryOf("s"), moved?.name ?? "")}`)]);

		await second.prompt("two");
		await second.saved();
		const third = await load(root, "C");
		expect(third.state.messages.map(textOf)).toEqual(["two", "reply B 1"]);
		expect(third.storeProblems).toEqual([]);
		// The moved journal is as it was, after two openings of the session and its saves.
		expect(readFileSync(join(createFileStore(root).directoryOf("s"), moved?.name ?? "", "journal.jsonl"), "utf8")).toBe(journal);
	});

	it("moves a damaged snapshot aside too, when the one before it is missing", async () => {
		const root = await tempDir();
		const files = await stored(root, 1);
		writeFileSync(join(files, "snapshot.json"), '{"crc":"00000000","snapshot":"damaged"}');
		rmSync(join(files, "snapshot.prev.json"), { force: true });

		const second = await load(root, "B");
		expect(second.state.messages).toEqual([]);
		expect(unread(root).map((entry) => entry.files)).toEqual([["journal.jsonl", "snapshot.json"]]);
		expect(second.storeProblems.at(-1)).toMatch(/moved to .*unread-/);
	});

	it("keeps the snapshot that did not read and the journal as it was when it falls back to the one before", async () => {
		const root = await tempDir();
		const files = await stored(root, 3);
		const damaged = '{"crc":"00000000","snapshot":"damaged"}';
		writeFileSync(join(files, "snapshot.json"), damaged);
		const journal = readFileSync(join(files, "journal.jsonl"), "utf8");
		expect(journal).toContain("reply A 3");

		const second = await load(root, "B");
		// The one before holds "one"; the run "three" was journaled after the damaged one: it is left out of the session...
		expect(second.state.messages.map(textOf)).toEqual(["one", "reply A 1"]);
		expect(second.storeProblems.at(-1)).toMatch(/copied to .*unread-/);
		// ...and kept, with the damaged snapshot, where the next saves do not reach.
		await second.prompt("four");
		await second.saved();
		const [moved, ...more] = unread(root);
		expect(more).toEqual([]);
		expect(moved?.files).toEqual(["journal.jsonl", "snapshot.json"]);
		const aside = join(createFileStore(root).directoryOf("s"), moved?.name ?? "");
		expect(readFileSync(join(aside, "snapshot.json"), "utf8")).toBe(damaged);
		expect(readFileSync(join(aside, "journal.jsonl"), "utf8")).toBe(journal);
	});

	it("keeps nothing when a save was cut short between its renames (the last snapshot moved to the one before, the new one not yet in place)", async () => {
		const root = await tempDir();
		const files = await stored(root, 2);
		renameSync(join(files, "snapshot.json"), join(files, "snapshot.prev.json"));

		const second = await load(root, "B");
		expect(second.state.messages.map(textOf)).toEqual(["one", "reply A 1", "two", "reply A 2"]);
		expect(second.storeProblems).toEqual([]);
		expect(unread(root)).toEqual([]);
	});

	it("keeps the journal as it was when a whole line in it does not check, and not for an append a crash cut short", async () => {
		const root = await tempDir();
		const files = await stored(root, 1);
		const journal = readFileSync(join(files, "journal.jsonl"), "utf8");
		const lines = journal.split("\n");
		expect(lines.length).toBeGreaterThan(3);
		// A bit flipped in the second line: whole (its newline is there), it no longer matches its checksum.
		lines[1] = (lines[1] ?? "").replace('"seq":', '"seQ":');
		const damaged = lines.join("\n");
		writeFileSync(join(files, "journal.jsonl"), damaged);

		const second = await load(root, "B");
		expect(second.storeProblems).toEqual([expect.stringMatching(/line 2 does not check .* were left out/), expect.stringMatching(/copied to .*unread-/)]);
		const [moved, ...more] = unread(root);
		expect(more).toEqual([]);
		expect(readFileSync(join(createFileStore(root).directoryOf("s"), moved?.name ?? "", "journal.jsonl"), "utf8")).toBe(damaged);
		await second.waitForIdle();
		await second.saved();
		second.dispose();

		// An append cut short: part of a last line, no newline. Cut off and reported, as before; nothing kept.
		const now = createFileStore(root).filesOf("s");
		writeFileSync(join(now, "journal.jsonl"), `${readFileSync(join(now, "journal.jsonl"), "utf8")}0badc0de\t{"seq":9`);
		const third = await load(root, "C");
		expect(third.storeProblems).toEqual([expect.stringMatching(/does not check \(a write cut short\); it and 0 after it were left out/)]);
		expect(unread(root)).toHaveLength(1);
	});

	it("leaves a new session (no files) as it is", async () => {
		const root = await tempDir();
		const agent = await load(root, "A");
		expect(agent.storeProblems).toEqual([]);
		await agent.prompt("one");
		await agent.saved();
		expect(unread(root)).toEqual([]);
	});
});
