/**
 * The built-in stores: what they keep, and how the file store survives a crash in the middle
 * of a write (a torn journal line, a snapshot that does not read): the last good state is used
 * and what was left out is reported, never silently dropped.
 */
import { appendFile, mkdir, readdir, readFile, rename, rm, utimes, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import type { StoredJournalEntry } from "../../src/durable/journal.js";
import { type AgentStore, createMemoryStore } from "../../src/durable/store.js";
import { Type } from "typebox";
import type { AnyAgentTool } from "../../src/types/agent.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import { textOf } from "../agent/helpers.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-store-");

async function idleSnapshot(text: string): Promise<AgentSnapshot> {
	const scripted = createScriptedModel([{ content: text }]);
	const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, sessionId: "s" });
	await agent.prompt("hello");
	return JSON.parse(JSON.stringify(agent.snapshot())) as AgentSnapshot;
}

const entry = (seq: number): StoredJournalEntry => ({ seq, kind: "model", phase: "intent", effect: `r1.m${seq}`, model: "m", messages: 1 });

for (const kind of ["memory", "file"] as const) {
	describe(`the ${kind} store`, () => {
		const make = async () => (kind === "memory" ? createMemoryStore() : createFileStore(await tempDir()));

		it("loads nothing for a new session, then the last snapshot with the journal appended after it", async () => {
			const store = await make();
			expect(await store.load("s")).toBeUndefined();
			const snapshot = await idleSnapshot("first");
			await store.saveSnapshot("s", { ...snapshot, journalSeq: 2, journal: [entry(1), entry(2)] });
			await store.appendJournal("s", entry(3));
			await store.appendJournal("s", entry(4));
			const loaded = await store.load("s");
			expect(loaded?.problems).toEqual([]);
			expect(loaded?.snapshot?.journal.map((each) => each.seq)).toEqual([1, 2, 3, 4]);
			expect(loaded?.snapshot?.machine.context.messages.map((message) => textOf(message))).toEqual(["hello", "first"]);
		});

		it("keeps the entries appended after a snapshot was taken when it is written after them (a run that started meanwhile)", async () => {
			const store = await make();
			// Taken between runs (it has seen entries up to 1), written once the next run appended 2 and 3.
			const between = { ...(await idleSnapshot("done")), journalSeq: 1, journal: [] };
			await store.appendJournal("s", entry(1));
			await store.appendJournal("s", entry(2));
			await store.appendJournal("s", entry(3));
			await store.saveSnapshot("s", between);
			expect((await store.load("s"))?.snapshot?.journal.map((each) => each.seq)).toEqual([2, 3]);
			// A later entry still joins them.
			await store.appendJournal("s", entry(4));
			expect((await store.load("s"))?.snapshot?.journal.map((each) => each.seq)).toEqual([2, 3, 4]);
		});

		it("numbers a session's journal entries without repeating a number, across runs and loads", async () => {
			const inner = await make();
			const seqs: number[] = [];
			const store: AgentStore = { ...inner, load: (id) => inner.load(id), saveSnapshot: (id, snapshot) => inner.saveSnapshot(id, snapshot), appendJournal: (id, stored) => (seqs.push(stored.seq), inner.appendJournal(id, stored)) };
			const echo: AnyAgentTool = { name: "echo", label: "echo", description: "echo", parameters: Type.Object({}), execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }) };
			const replies = () => createScriptedModel([{ content: [toolCall("echo", {}, "a")] }, { content: "one" }, { content: [toolCall("echo", {}, "b")] }, { content: "two" }]);
			const scripted = replies();
			const first = await Agent.load({ store, sessionId: "s", initialState: { model: scripted.model, tools: [echo] }, streamFn: scripted.streamFn });
			await first.prompt("first");
			await first.prompt("second");
			await first.save();
			const again = replies();
			const second = await Agent.load({ store, sessionId: "s", initialState: { tools: [echo] }, streamFn: again.streamFn });
			await second.prompt("third");
			await second.save();
			expect(seqs.length).toBeGreaterThan(12);
			// Each number once, rising: a load after a crash takes the entries after its snapshot's number.
			expect(seqs).toEqual(seqs.map((_, index) => index + 1));
			// Between runs the store keeps no entry that a later snapshot would take for its own.
			expect((await store.load("s"))?.snapshot?.journal).toEqual([]);
		});

		it("keeps sessions apart, whatever their ids hold", async () => {
			const store = await make();
			await store.saveSnapshot("../a b/c", await idleSnapshot("one"));
			await store.saveSnapshot("a", await idleSnapshot("two"));
			expect(textOf((await store.load("../a b/c"))?.snapshot?.machine.context.messages.at(-1))).toBe("one");
			expect(textOf((await store.load("a"))?.snapshot?.machine.context.messages.at(-1))).toBe("two");
			// Escapes of one width each: a character above U+00FF is not an escaped one and hex digits.
			const pairs = [["–", " 13"], ["•", " 22"], ["─", "%00"], ["😀", "Ø3dÞ00"], ["user’s", "user 19s"]] as const;
			for (const [wide, narrow] of pairs) {
				await store.saveSnapshot(wide, await idleSnapshot(`wide ${wide}`));
				await store.saveSnapshot(narrow, await idleSnapshot(`narrow ${narrow}`));
			}
			for (const [wide, narrow] of pairs) {
				expect(textOf((await store.load(wide))?.snapshot?.machine.context.messages.at(-1))).toBe(`wide ${wide}`);
				expect(textOf((await store.load(narrow))?.snapshot?.machine.context.messages.at(-1))).toBe(`narrow ${narrow}`);
			}
		});
	});
}

const idOf = () =>
	fc.oneof(
		fc.array(fc.constantFrom(" ", "%", "u", "0", "1", "3", "d", "e", "2", ".", "–", "─", "😀", "Ø", "Þ", "a"), { minLength: 1, maxLength: 8 }).map((chars) => chars.join("")),
		fc.string({ unit: "binary", minLength: 1 }),
		// Names too long for a file: kept as their start and a hash.
		fc.tuple(fc.constantFrom("x".repeat(254), "é".repeat(85), "日".repeat(42)), fc.string({ unit: "binary", minLength: 1, maxLength: 4 })).map(([start, end]) => start + end),
	);

it("property: the file store names two different session ids' directories differently, each inside its root", () => {
	const store = createFileStore("/sessions");
	fc.assert(
		// Ids of characters that are escaped (narrow and wide), hex digits and plain ones, where names could meet; and any ids.
		fc.property(idOf(), idOf(), (a, b) => {
			for (const id of [a, b]) {
				expect(dirname(store.directoryOf(id))).toBe("/sessions");
				expect(Buffer.byteLength(basename(store.directoryOf(id)))).toBeLessThanOrEqual(255);
			}
			if (a !== b) expect(store.directoryOf(a)).not.toBe(store.directoryOf(b));
		}),
		{ numRuns: 2000 },
	);
	// The pairs the escapes of varying width gave one directory.
	expect(store.directoryOf("–")).not.toBe(store.directoryOf(" 13"));
	expect(store.directoryOf("😀")).not.toBe(store.directoryOf("Ø3dÞ00"));
});

it("the file store keeps a session whose id makes a name longer than a file's may be, apart from every other, inside its root", async () => {
	const root = await tempDir();
	const long = "x".repeat(300);
	// 255 and 256 characters: the longest plain name, and the shortest too long; 43 characters escaped above U+00FF; ids that differ only at their end.
	const ids = ["x".repeat(255), "x".repeat(256), long, `${long}y`, "日本語".repeat(15), `${"日本語".repeat(15)}!`, "/".repeat(100), "\ud800".repeat(50), "\ud801".repeat(50)];
	for (const id of ids) {
		const scripted = createScriptedModel([{ content: `reply to ${id}` }]);
		const agent = await Agent.load({ store: createFileStore(root), sessionId: id, initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await agent.prompt("hello");
		await agent.saved();
		expect(agent.storeProblems).toEqual([]);
	}
	const store = createFileStore(root);
	for (const id of ids) {
		expect(dirname(store.directoryOf(id))).toBe(root);
		const agent = await Agent.load({ store, sessionId: id, streamFn: createScriptedModel([]).streamFn });
		expect(textOf(agent.state.messages.at(-1))).toBe(`reply to ${id}`);
	}
	expect(new Set(ids.map((id) => store.directoryOf(id))).size).toBe(ids.length);
	expect(await readdir(root)).toHaveLength(ids.length);
});

/**
 * Session "s" in a file store of a new directory, its runs "one" and "two" stored (replies r1,
 * r2; r3 next): a new store object on the directory (`make`), and a load of the session by one (`load`).
 */
async function twoRunsStored() {
	const root = await tempDir();
	const make = () => createFileStore(root, { fsync: "never" });
	const scripted = createScriptedModel([{ content: "r1" }, { content: "r2" }, { content: "r3" }]);
	const load = () => Agent.load({ store: make(), sessionId: "s", streamFn: scripted.streamFn, initialState: { model: scripted.model } });
	const agent = await load();
	await agent.prompt("one");
	await agent.prompt("two");
	await agent.saved();
	return { make, load };
}

describe("the file store after a crash mid-write", () => {
	it("drops a journal line a crash cut short, and the lines after it, and says so", async () => {
		const root = await tempDir();
		const store = createFileStore(root, { fsync: "never" });
		await store.saveSnapshot("s", { ...(await idleSnapshot("x")), journalSeq: 0 });
		await store.appendJournal("s", entry(1));
		await store.appendJournal("s", entry(2));
		const journal = join(store.directoryOf("s"), "journal.jsonl");
		const text = await readFile(journal, "utf8");
		// The second line loses its end, as a write the process died in leaves it.
		await writeFile(journal, text.slice(0, text.length - 12));
		const loaded = await store.load("s");
		expect(loaded?.snapshot?.journal.map((each) => each.seq)).toEqual([1]);
		expect(loaded?.problems.join("\n")).toMatch(/journal\.jsonl: line 2 does not check \(a write cut short\); it and 0 after it were left out/);
		// A line that checks but follows a bad one is not trusted either.
		await appendFile(journal, `\n${(await readFile(journal, "utf8")).split("\n")[0]}\n`);
		expect((await store.load("s"))?.snapshot?.journal.map((each) => each.seq)).toEqual([1]);
	});

	it("drops a last journal line that lost only its newline, and cuts it: the next append does not join it, and what follows is read", async () => {
		const { make, load } = await twoRunsStored();
		const journal = join(make().filesOf("s"), "journal.jsonl");
		const text = await readFile(journal, "utf8");
		// The last append's write stopped right before its newline: what is there checks.
		await writeFile(journal, text.slice(0, -1));
		const second = await load();
		expect(second.storeProblems.join("\n")).toMatch(/journal\.jsonl: line \d+ does not check \(a write cut short\); it and 0 after it were left out/);
		// That line was the second run's end: the run goes on again, its reply answered by the journal.
		await second.waitForIdle();
		expect(second.state.messages.map((message) => textOf(message))).toEqual(["one", "r1", "two", "r2"]);
		await second.prompt("three");
		await second.saved();
		const third = await load();
		expect(third.storeProblems).toEqual([]);
		expect(third.state.messages.map((message) => textOf(message))).toEqual(["one", "r1", "two", "r2", "three", "r3"]);
	});

	it("a session file that is there but cannot be read now fails the load and changes nothing: it is not damage to pass over, cut, or start anew from", async () => {
		const { make, load } = await twoRunsStored();
		const files = make().filesOf("s");
		for (const name of ["snapshot.json", "journal.jsonl"]) {
			// A directory in the file's place: reading it fails (EISDIR), as a read may fail with EMFILE or EIO.
			await rename(join(files, name), join(files, `${name}.aside`));
			await mkdir(join(files, name));
			await expect(load()).rejects.toThrow(new RegExp(`^agentchart: the file store cannot read .*${name.replace(".", "\\.")}: EISDIR`));
			await expect(make().load("s")).rejects.toThrow(/EISDIR/);
			await rm(join(files, name), { recursive: true });
			await rename(join(files, `${name}.aside`), join(files, name));
		}
		const again = await load();
		expect(again.storeProblems).toEqual([]);
		expect(again.state.messages.map((message) => textOf(message))).toEqual(["one", "r1", "two", "r2"]);
	});

	it("drops a line a failed append left torn when the next snapshot is saved, also in the middle of a run, so that the entries appended after it are read", async () => {
		const root = await tempDir();
		const store = createFileStore(root, { fsync: "never" });
		await store.saveSnapshot("s", { ...(await idleSnapshot("x")), journalSeq: 0 });
		await store.appendJournal("s", entry(1));
		await store.appendJournal("s", entry(2));
		const journal = join(store.directoryOf("s"), "journal.jsonl");
		// Entry 3's append failed halfway (a full disk): its line is torn, the process goes on.
		await appendFile(journal, "1234abcd\t{\"seq\":3,\"ki");
		// The agent saves a snapshot in place of what failed: mid-run, it carries the run's entries.
		await store.saveSnapshot("s", { ...(await idleSnapshot("x")), journalSeq: 3, journal: [entry(1), entry(2), entry(3)] });
		await store.appendJournal("s", entry(4));
		const loaded = await store.load("s");
		expect(loaded?.problems).toEqual([]);
		expect(loaded?.snapshot?.journal.map((each) => each.seq)).toEqual([1, 2, 3, 4]);
	});

	it("cuts a torn line off when it loads, so that the entries appended after it are read", async () => {
		const root = await tempDir();
		const store = createFileStore(root, { fsync: "never" });
		await store.saveSnapshot("s", { ...(await idleSnapshot("x")), journalSeq: 0 });
		await store.appendJournal("s", entry(1));
		const journal = join(store.directoryOf("s"), "journal.jsonl");
		await appendFile(journal, "1234abcd\t{\"seq\":2,\"ki");
		expect((await store.load("s"))?.problems).toHaveLength(1);
		// The next process numbers its next entry 2 again, and appends it.
		const next = createFileStore(root, { fsync: "never" });
		await next.appendJournal("s", entry(2));
		const loaded = await next.load("s");
		expect(loaded?.problems).toEqual([]);
		expect(loaded?.snapshot?.journal.map((each) => each.seq)).toEqual([1, 2]);
	});

	it("cuts nothing in a session another store opened when it reads it without opening it: the line it finds unfinished may be one on its way", async () => {
		const root = await tempDir();
		const writer = createFileStore(root, { fsync: "never" });
		await writer.open?.("s");
		await writer.saveSnapshot("s", { ...(await idleSnapshot("x")), journalSeq: 0 });
		await writer.appendJournal("s", entry(1));
		await writer.appendJournal("s", entry(2));
		const journal = join(writer.filesOf("s"), "journal.jsonl");
		const whole = await readFile(journal, "utf8");
		// The writer's second line, half written: what a reader finds while the append is under way.
		const half = whole.slice(0, whole.length - 12);
		await writeFile(journal, half);
		const reader = createFileStore(root, { fsync: "never" });
		const loaded = await reader.load("s");
		expect(loaded?.problems.join("\n")).toMatch(/line 2 does not check/);
		expect(loaded?.snapshot?.journal.map((each) => each.seq)).toEqual([1]);
		expect(await readFile(journal, "utf8")).toBe(half);
		// The rest of the append lands: the line is whole.
		await appendFile(journal, whole.slice(half.length));
		const later = await reader.load("s");
		expect(later?.problems).toEqual([]);
		expect(later?.snapshot?.journal.map((each) => each.seq)).toEqual([1, 2]);
	});

	it("refuses a load whose snapshot is whole but of a format this agentchart does not read (a newer one), rather than pass it over for the one before or start the session anew", async () => {
		const root = await tempDir();
		const store = createFileStore(root);
		await store.saveSnapshot("s", await idleSnapshot("older"));
		await store.saveSnapshot("s", { ...(await idleSnapshot("newer")), version: 999 });
		await expect(store.load("s")).rejects.toThrow(/snapshot\.json is whole but cannot be read here: the snapshot's format is version 999, newer than this agentchart reads/);
		const scripted = createScriptedModel([]);
		await expect(Agent.load({ store: createFileStore(root), sessionId: "s", streamFn: scripted.streamFn })).rejects.toThrow(/version 999/);
		// Nothing was written over it.
		expect(await readFile(join(store.filesOf("s"), "snapshot.json"), "utf8")).toMatch(/999/);
	});

	it("uses the snapshot before when the last one does not read, and says so", async () => {
		const root = await tempDir();
		const store = createFileStore(root);
		await store.saveSnapshot("s", await idleSnapshot("older"));
		await store.saveSnapshot("s", await idleSnapshot("newer"));
		const path = join(store.directoryOf("s"), "snapshot.json");
		const text = await readFile(path, "utf8");
		await writeFile(path, text.replace("newer", "NEWER"));
		const loaded = await store.load("s");
		expect(textOf(loaded?.snapshot?.machine.context.messages.at(-1))).toBe("older");
		expect(loaded?.problems.join("\n")).toMatch(/snapshot\.json does not match its checksum[\s\S]*used snapshot\.prev\.json instead/);
	});

	it("reports, through the agent, what a load had to leave out", async () => {
		const root = await tempDir();
		const store = createFileStore(root);
		await store.saveSnapshot("s", await idleSnapshot("kept"));
		await appendFile(join(store.directoryOf("s"), "journal.jsonl"), "00000000\t{\"torn");
		const scripted = createScriptedModel([{ content: "again" }]);
		const agent = await Agent.load({ store, sessionId: "s", streamFn: scripted.streamFn });
		expect(agent.storeProblems.join("\n")).toMatch(/line 1 does not check/);
		expect(textOf(agent.state.messages.at(-1))).toBe("kept");
	});

	it("empties the journal when a snapshot between runs is saved", async () => {
		const root = await tempDir();
		const store = createFileStore(root);
		await store.appendJournal("s", entry(1));
		await store.saveSnapshot("s", { ...(await idleSnapshot("done")), journalSeq: 1 });
		expect(await readFile(join(store.directoryOf("s"), "journal.jsonl"), "utf8")).toBe("");
	});
});

describe("the file store's files directories", () => {
	it("an opening copies the session into a files directory of its own and names it in `current` (but the first, which keeps the files where they are); the files of earlier openings are removed", async () => {
		const root = await tempDir();
		const store = createFileStore(root, { fsync: "never" });
		// A store that writes without opening the session writes where `current` says: nowhere yet, so in the session's directory (as agentchart did before files directories).
		await store.saveSnapshot("s", await idleSnapshot("kept"));
		const dir = store.directoryOf("s");
		expect(store.filesOf("s")).toBe(dir);
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }, { content: "three" }]);
		const load = async () => {
			const opener = createFileStore(root, { fsync: "never" });
			return { agent: await Agent.load({ store: opener, sessionId: "s", streamFn: scripted.streamFn }), files: opener.filesOf("s") };
		};
		// The first opening: no store opened the session before, so none can write in it late.
		const first = await load();
		expect(first.files).toBe(dir);
		expect(existsSync(join(dir, "current"))).toBe(false);
		await first.agent.prompt("hello");
		await first.agent.saved();
		const second = await load();
		expect(second.agent.state.messages.map((message) => textOf(message))).toEqual(["hello", "kept", "hello", "one"]);
		expect(second.files).toBe(join(dir, (await readFile(join(dir, "current"), "utf8")).trim()));
		expect(second.files).toMatch(/[/\\]g1-[0-9a-f]{8}$/);
		// Moved: nothing of the session is left beside `id`, `writer` and `current`.
		expect((await readdir(dir)).sort()).toEqual([second.files.split(/[/\\]/).at(-1), "current", "id", "writer"].sort());
		await second.agent.prompt("again");
		await second.agent.saved();
		const third = await load();
		expect(third.files).toMatch(/[/\\]g2-[0-9a-f]{8}$/);
		expect(existsSync(second.files)).toBe(false);
		await third.agent.prompt("once more");
		await third.agent.saved();
		expect(third.agent.storeProblems).toEqual([]);
		// A store that did not open it reads it where `current` says: the snapshot and the runs journaled after it.
		const loaded = await createFileStore(root).load("s");
		expect(loaded?.problems).toEqual([]);
		expect(loaded?.snapshot?.journal.length).toBeGreaterThan(0);
		expect((await load()).agent.state.messages.map((message) => textOf(message))).toEqual(["hello", "kept", "hello", "one", "again", "two", "once more", "three"]);
	});

	it("an opening removes what crashed or fenced-off openings left, once a minute old: their temporary files and a files directory copied from the same `current` but never named in it", async () => {
		const root = await tempDir();
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }]);
		const load = async () => {
			const opener = createFileStore(root, { fsync: "never" });
			return { agent: await Agent.load({ store: opener, sessionId: "s", streamFn: scripted.streamFn }), files: opener.filesOf("s") };
		};
		const first = await load();
		await first.agent.prompt("hello");
		await first.agent.saved();
		const second = await load();
		const dir = createFileStore(root).directoryOf("s");
		const named = second.files.split(/[/\\]/).at(-1) ?? "";
		expect(named).toMatch(/^g1-/);
		// A process stopped while it copied from the same `current` (g1): its g2 copy was never named there.
		await mkdir(join(dir, "g2-deadbeef"));
		await writeFile(join(dir, "g2-deadbeef", "journal.jsonl"), "");
		// One still copying (written just now) may be an opening under way as this one lands: it stays.
		await mkdir(join(dir, "g2-0123abcd"));
		// Processes stopped between writing a fence's, a `current`'s or an `id`'s temporary file and renaming (or linking) it.
		const stale = ["writer.0b7e2f8a-53c1-4d6e-9a41-3f0c2d9e8b71.tmp", "current.5d2c0a9e-1f4b-4a7c-8e36-7b9d1c2e4f50.tmp", "id.2f6e1c3a-8b4d-4e7f-9a0c-5d1b3e2f4a6c.tmp"];
		const minuteAgo = new Date(Date.now() - 61_000);
		for (const name of stale) await writeFile(join(dir, name), "x");
		for (const name of [...stale, "g2-deadbeef"]) await utimes(join(dir, name), minuteAgo, minuteAgo);
		// One written just now may be another process's, about to be renamed: it stays.
		const fresh = "writer.9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d.tmp";
		await writeFile(join(dir, fresh), "x");
		const third = await load();
		const own = third.files.split(/[/\\]/).at(-1) ?? "";
		expect(own).toMatch(/^g2-/);
		expect((await readdir(dir)).sort()).toEqual([own, "current", fresh, "g2-0123abcd", "id", "writer"].sort());
		await third.agent.prompt("again");
		await third.agent.saved();
		expect(third.agent.storeProblems).toEqual([]);
		expect((await load()).agent.state.messages.map((message) => textOf(message))).toEqual(["hello", "one", "again", "two"]);
	});

	it("refuses to open a session whose `current` names a files directory that is gone, rather than start it anew", async () => {
		const root = await tempDir();
		const store = createFileStore(root, { fsync: "never" });
		await store.open?.("s");
		await store.saveSnapshot("s", await idleSnapshot("kept"));
		await writeFile(join(store.directoryOf("s"), "current"), "g7-abcdef01\n");
		const scripted = createScriptedModel([]);
		await expect(Agent.load({ store: createFileStore(root), sessionId: "s", streamFn: scripted.streamFn })).rejects.toThrow(/current names .*g7-abcdef01, which is gone/);
	});

	it("refuses a root that names no directory, a policy it does not have and an option it does not know, at once: a misspelt policy (\"Always\") used to flush less often than asked", () => {
		const refusals: [() => unknown, RegExp][] = [
			[() => createFileStore(42 as never), /createFileStore\(root\): expected the path of a directory \(a non-empty text\), got 42/],
			[() => createFileStore(""), /createFileStore\(root\): expected the path of a directory/],
			[() => createFileStore("./sessions", { fsync: "Always" as never }), /fsync must be "always", "snapshots" or "never", got "Always"/],
			[() => createFileStore("./sessions", { fsync: true as never }), /fsync must be .*got true/],
			[() => createFileStore("./sessions", { fsycn: "never" } as never), /unknown option "fsycn" \(the only one is "fsync"\)/],
			[() => createFileStore("./sessions", "never" as never), /expected \{ fsync\?: .*got "never"/],
		];
		for (const [make, message] of refusals) expect(make).toThrow(message);
		expect(() => createFileStore("./sessions", { fsync: undefined })).not.toThrow();
	});

	it("a store whose root is a file, or a session that is a file, fails a load with an error that names the file store and the path", async () => {
		const root = await tempDir();
		const scripted = createScriptedModel([]);
		await writeFile(join(root, "not-a-directory"), "");
		const underFile = createFileStore(join(root, "not-a-directory"));
		await expect(Agent.load({ store: underFile, sessionId: "s", streamFn: scripted.streamFn })).rejects.toThrow(/^agentchart: the file store cannot read .*not-a-directory\/s\/current: ENOTDIR/);
		const store = createFileStore(root);
		await writeFile(store.directoryOf("t"), "");
		await expect(Agent.load({ store, sessionId: "t", streamFn: scripted.streamFn })).rejects.toThrow(/^agentchart: the file store cannot read .*current: ENOTDIR/);
	});
});

describe("Agent.saved()", () => {
	it("resolves once the run's end is stored, without a snapshot of its own", async () => {
		const memory = createMemoryStore();
		const written: string[] = [];
		let release: () => void = () => {};
		// A slow store: each snapshot is stored only when the test lets it.
		const store: AgentStore = {
			load: (id) => memory.load(id),
			appendJournal: (id, each) => memory.appendJournal(id, each),
			async saveSnapshot(id, snapshot) {
				await new Promise<void>((resolve) => (release = resolve));
				written.push(String(snapshot.machine.value));
				await memory.saveSnapshot(id, snapshot);
			},
		};
		const scripted = createScriptedModel([{ content: "stored" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, store, sessionId: "s" });
		const prompted = agent.prompt("hello");
		let saved = false;
		const releaseAll = setInterval(() => release(), 1);
		try {
			await prompted;
			await agent.saved().then(() => (saved = true));
		} finally {
			clearInterval(releaseAll);
		}
		expect(saved).toBe(true);
		// The agent as the prompt found it; the run's start and end are journaled: saved() added no snapshot.
		expect(written).toEqual(["idle"]);
		await agent.saved();
		expect(written).toEqual(["idle"]);
		const loaded = await memory.load("s");
		expect(loaded?.snapshot?.journal.filter((entry) => entry.kind === "run").map((entry) => entry.phase)).toEqual(["start", "end"]);
		const again = await Agent.load({ store: memory, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		expect(again.state.messages.map((message) => textOf(message))).toEqual(["hello", "stored"]);
	});

	it("with a store that writes at once (its writes return nothing, as the memory store's do): every write lands, and save() and saved() resolve", async () => {
		const memory = createMemoryStore();
		const snapshot = await idleSnapshot("x");
		expect(memory.saveSnapshot("other", snapshot)).toBeUndefined();
		expect(memory.appendJournal("other", entry(1))).toBeUndefined();
		const writes: string[] = [];
		const store: AgentStore = {
			load: (id) => memory.load(id),
			saveSnapshot: (id, taken) => {
				writes.push(`snapshot ${String(taken.machine.value)}`);
				memory.saveSnapshot(id, taken);
			},
			appendJournal: (id, each) => {
				writes.push(`${each.effect} ${each.phase}`);
				memory.appendJournal(id, each);
			},
		};
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, store, sessionId: "s" });
		await agent.prompt("first");
		await agent.saved();
		agent.state.systemPrompt = "changed";
		await agent.save();
		await agent.prompt("second");
		await agent.saved();
		expect(writes).toEqual(["snapshot idle", "r1 start", "r1.m1 intent", "r1.m1 outcome", "r1 end", "snapshot idle", "r2 start", "r2.m1 intent", "r2.m1 outcome", "r2 end"]);
		const again = await Agent.load({ store: memory, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		expect(again.state.systemPrompt).toBe("changed");
		expect(again.state.messages.map((message) => textOf(message))).toEqual(["first", "one", "second", "two"]);
	});

	it("waits for a save asked for in the same step (a command's)", async () => {
		const store = createMemoryStore();
		const scripted = createScriptedModel([]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, store, sessionId: "s" });
		agent.followUp({ role: "user", content: [{ type: "text", text: "later" }], timestamp: 1 });
		await agent.saved();
		expect((await store.load("s"))?.snapshot?.machine.context.followUpQueue.map((message) => textOf(message))).toEqual(["later"]);
	});
});

describe("the order of an agent's writes", () => {
	// A store that writes in parallel (a database pool) would otherwise land a run's prompt after
	// its tool's intent, or the next run's prompt before the last run's end: a crash then leaves a
	// journal a restore cannot follow (a tool that ran, in a run the store does not know).
	it("hands each write to the store only once the one before it is done: the store holds a prefix of the agent's writes", async () => {
		const memory = createMemoryStore();
		let inFlight = 0;
		let overlapped = 0;
		const written: string[] = [];
		const slowly = async (label: string, ms: number, write: () => Promise<void> | void) => {
			if (++inFlight > 1) overlapped++;
			await new Promise((resolve) => setTimeout(resolve, ms));
			await write();
			written.push(label);
			inFlight--;
		};
		const store: AgentStore = {
			load: (id) => memory.load(id),
			saveSnapshot: (id, snapshot) => slowly("snapshot", 3, () => memory.saveSnapshot(id, snapshot)),
			// Run entries are slow, the others fast: a store writing in parallel would reorder them.
			appendJournal: (id, entry) => slowly(`${entry.effect} ${entry.phase}`, entry.kind === "run" ? 4 : 0, () => memory.appendJournal(id, entry)),
		};
		const tool: AnyAgentTool = { name: "noop", label: "noop", description: "", parameters: Type.Object({}), execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }) };
		const scripted = createScriptedModel([{ content: [toolCall("noop", {}, "c1")] }, { content: "done" }, { content: [toolCall("noop", {}, "c2")] }, { content: "done again" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn, store, sessionId: "s" });
		await agent.prompt("one");
		await agent.prompt("two");
		await agent.saved();
		expect(overlapped).toBe(0);
		expect(written.slice(0, 3)).toEqual(["snapshot", "r1 start", "r1.m1 intent"]);
		expect(written).toContain("r1 end");
		expect(written.indexOf("r1 end")).toBeLessThan(written.indexOf("r2 start"));
		const seqs = ((await memory.load("s"))?.snapshot?.journal ?? []).map((entry) => entry.seq);
		expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
	});
});
