/**
 * The file store when another process opens a session while a write of this one is on its way:
 * past the `writer` check, not yet in the file. Before, such a write landed as if nothing had
 * happened. The other process may have read the session before it landed, so a tool whose intent
 * it was ran here, and the other process, which never saw the intent, ran it again. Now a write
 * is checked again once it is in the file: an intent that landed after the other process opened
 * the session is refused, and its tool does not run here; a snapshot that did is reported; and a
 * question for a person whose storing was refused is not asked here (the other process asks); and
 * from the first refusal on, the agent's commands throw, as an agent superseded in its own process's do.
 * And what landed too late lands in the files directory of this process's opening, which no load
 * reads once the other process's opening named its own in `current`.
 *
 * The other process is stood in for by what its `open` does to the directory (a new `writer` file
 * renamed over this one's, then the session's files copied into a files directory of its own,
 * named in `current`), done just before this process writes (through `fs.promises.open` or
 * `fs.renameSync`, replaced for the test and put back after it). What that process does next is
 * done by a store of its own on the same directory.
 */
import fs from "node:fs";
import fsPromises from "node:fs/promises";
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import { SessionTakenOverError } from "../../src/durable/store.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { makeTool, ok } from "../agent/helpers.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-takeover-");
const TAKEN_OVER_ELSEWHERE = /session "s" was opened by an agent of another process/;

const realOpen = fsPromises.open;
const realRenameSync = fs.renameSync;
afterEach(() => {
	fsPromises.open = realOpen;
	fs.renameSync = realRenameSync;
	syncBuiltinESMExports();
});

/**
 * What another process's `open` of the session does to its directory: a writer file of its own,
 * renamed over this one's; then the session's files, as they are at that moment, copied into a
 * files directory of its own, which `current` names. Returns that directory (what its load reads).
 */
function openElsewhere(sessionDir: string): string {
	const writer = join(sessionDir, "writer");
	writeFileSync(`${writer}.other.tmp`, `${JSON.stringify({ token: "other", pid: 0, openedAt: new Date().toISOString() })}\n`);
	renameSync(`${writer}.other.tmp`, writer);
	const current = join(sessionDir, "current");
	const name = existsSync(current) ? readFileSync(current, "utf8").trim() : undefined;
	const from = name === undefined ? sessionDir : join(sessionDir, name);
	const files = `g${Number(/^g(\d+)-/.exec(name ?? "g0-")?.[1]) + 1}-0e0e0e0e`;
	mkdirSync(join(sessionDir, files));
	for (const file of ["snapshot.json", "snapshot.prev.json", "journal.jsonl"]) if (existsSync(join(from, file))) copyFileSync(join(from, file), join(sessionDir, files, file));
	writeFileSync(`${current}.other.tmp`, `${files}\n`);
	renameSync(`${current}.other.tmp`, current);
	return join(sessionDir, files);
}

/**
 * Calls `takeOver` when the store next writes text matching `written` (through a handle of
 * `fs.promises.open`), just before the write: another process opening the session just after this
 * one's check. Returns what `takeOver` returned, once it ran.
 */
function takeOverAtNextWrite<T>(written: RegExp, takeOver: () => T): () => T | undefined {
	let taken: { value: T } | undefined;
	const replaced = (async (...args: Parameters<typeof realOpen>) => {
		const handle = await realOpen(...args);
		const writeFile = handle.writeFile.bind(handle);
		handle.writeFile = ((data: Parameters<typeof writeFile>[0], options?: Parameters<typeof writeFile>[1]) => {
			if (!taken && written.test(String(data))) taken = { value: takeOver() };
			return writeFile(data, options);
		}) as typeof handle.writeFile;
		return handle;
	}) as typeof realOpen;
	fsPromises.open = replaced;
	syncBuiltinESMExports();
	return () => taken?.value;
}

/** A role and its text, per message. */
function transcript(agent: Agent): string[] {
	return agent.state.messages.map((message) => `${message.role}: ${JSON.stringify(message.content)}`);
}

/** A file store in a new directory, and an agent of session "s" on it whose first run is stored. */
async function oneRunStored() {
	const store = createFileStore(await tempDir(), { fsync: "never" });
	const scripted = createScriptedModel([{ content: "first" }, { content: "second" }]);
	const agent = await Agent.load({ store, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
	await agent.prompt("one");
	await agent.saved();
	return { store, agent };
}

describe("the file store, when another process opens the session while a write is on its way", () => {
	it("a tool whose intent landed after another process opened the session does not run (that process may never see the intent, and would run it)", async () => {
		const dir = await tempDir();
		const store = createFileStore(dir, { fsync: "never" });
		const sessionDir = store.directoryOf("s");
		let runs = 0;
		const charge = makeTool("charge", async () => {
			runs++;
			return ok("charged");
		});
		const scripted = createScriptedModel([{ content: [{ type: "toolCall", name: "charge", arguments: {} }] }, { content: "done" }]);
		const agent = await Agent.load({
			store,
			sessionId: "s",
			initialState: { model: scripted.model, tools: [charge] },
			streamFn: scripted.streamFn,
		});
		const readThere = takeOverAtNextWrite(/"kind":"tool","phase":"intent"/, () => readFileSync(join(openElsewhere(sessionDir), "journal.jsonl"), "utf8"));
		await agent.prompt("charge it");
		const refused = await agent.saved().catch((error: unknown) => error);
		expect(refused).toBeInstanceOf(SessionTakenOverError);
		expect((refused as Error).message).toMatch(TAKEN_OVER_ELSEWHERE);
		const journalThere = readThere();
		expect(journalThere).toBeDefined();
		// The other process's load read no intent of the call: it would make the call itself.
		expect(journalThere).not.toMatch(/"kind":"tool","phase":"intent"/);
		expect(runs).toBe(0);
		// The call is answered (the transcript stays valid for a provider), with what stopped it.
		const results = agent.state.messages.filter((message) => message.role === "toolResult");
		expect(results).toHaveLength(1);
		expect(results[0]).toMatchObject({ isError: true });
		expect(JSON.stringify(results[0]?.content)).toMatch(/opened by an agent of another process/);
		expect(agent.storeProblems.some((problem) => TAKEN_OVER_ELSEWHERE.test(problem))).toBe(true);
		// It knows now that the session is another agent's: what would write it is refused, as in one process.
		await expect(agent.prompt("again")).rejects.toThrow(TAKEN_OVER_ELSEWHERE);
		expect(() => agent.followUp({ role: "user", content: "later", timestamp: Date.now() })).toThrow(SessionTakenOverError);
	});

	it("the intent that landed too late is in no file a later load reads: the other process runs the call, and a later load reads the session it made and runs nothing again", async () => {
		const dir = await tempDir();
		const store = createFileStore(dir, { fsync: "never" });
		const runs: string[] = [];
		const charge = (by: string) => makeTool("charge", async () => (runs.push(by), ok("charged")));
		const first = createScriptedModel([{ content: [{ type: "toolCall", name: "charge", arguments: {}, id: "c1" }] }, { content: "done here" }]);
		const agent = await Agent.load({ store, sessionId: "s", initialState: { model: first.model, tools: [charge("here")] }, streamFn: first.streamFn });
		const here = store.filesOf("s");
		const tookOver = takeOverAtNextWrite(/"kind":"tool","phase":"intent"/, () => openElsewhere(store.directoryOf("s")));
		await agent.prompt("go");
		expect(tookOver()).toBeDefined();
		// It landed, in this process's files directory, which that process's opening copied before it.
		expect(readFileSync(join(here, "journal.jsonl"), "utf8")).toMatch(/"kind":"tool","phase":"intent"/);
		expect(readFileSync(join(tookOver() as string, "journal.jsonl"), "utf8")).not.toMatch(/"kind":"tool","phase":"intent"/);
		// That process goes on from what it read: the call had no intent there, so it runs it.
		const second = createScriptedModel([{ content: "done there" }]);
		const there = await Agent.load({ store: createFileStore(dir, { fsync: "never" }), sessionId: "s", initialState: { model: second.model, tools: [charge("there")] }, streamFn: second.streamFn });
		await there.waitForIdle();
		await there.saved();
		// What the openings before wrote is removed once `current` names a later one's files.
		expect(existsSync(join(here, "journal.jsonl"))).toBe(false);
		const third = createScriptedModel([]);
		const later = await Agent.load({ store: createFileStore(dir, { fsync: "never" }), sessionId: "s", initialState: { model: third.model, tools: [charge("later")] }, streamFn: third.streamFn });
		await later.waitForIdle();
		expect(later.storeProblems).toEqual([]);
		expect(later.state.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
		expect(JSON.stringify(later.state.messages.at(-1)?.content)).toMatch(/done there/);
		expect(runs).toEqual(["there"]);
	});

	it("a model's reply that landed too late is in no file a later load reads either: a later load takes the reply the other process got, whose call had started there, and answers that call as interrupted", async () => {
		const dir = await tempDir();
		const store = createFileStore(dir, { fsync: "never" });
		const runs: string[] = [];
		const first = createScriptedModel([{ content: [{ type: "toolCall", name: "charge", arguments: {}, id: "here-1" }] }, { content: "done here" }]);
		const agent = await Agent.load({ store, sessionId: "s", initialState: { model: first.model, tools: [makeTool("charge", async () => (runs.push("here"), ok("charged")))] }, streamFn: first.streamFn });
		const here = store.filesOf("s");
		takeOverAtNextWrite(/"kind":"model","phase":"outcome"/, () => openElsewhere(store.directoryOf("s")));
		await agent.prompt("go");
		expect(readFileSync(join(here, "journal.jsonl"), "utf8")).toMatch(/"kind":"model","phase":"outcome".*"here-1"/);
		// That process asks the model again (another reply, another call) and stops while its call runs.
		const second = createScriptedModel([{ content: [{ type: "toolCall", name: "charge", arguments: {}, id: "there-1" }] }]);
		const thereStore = createFileStore(dir, { fsync: "never" });
		const there = await Agent.load({ store: thereStore, sessionId: "s", initialState: { model: second.model, tools: [makeTool("charge", () => (runs.push("there"), new Promise<never>(() => {})))] }, streamFn: second.streamFn });
		await expect.poll(() => readFileSync(join(thereStore.filesOf("s"), "journal.jsonl"), "utf8")).toMatch(/"kind":"tool","phase":"intent"/);
		const third = createScriptedModel([{ content: "done later" }]);
		const later = await Agent.load({ store: createFileStore(dir, { fsync: "never" }), sessionId: "s", initialState: { model: third.model, tools: [makeTool("charge", async () => (runs.push("later"), ok("charged")))] }, streamFn: third.streamFn });
		await later.waitForIdle();
		expect(later.storeProblems).toEqual([]);
		const calls = later.state.messages.flatMap((message) => (message.role === "assistant" ? message.content.filter((block) => block.type === "toolCall").map((block) => block.id) : []));
		expect(calls).toEqual(["there-1"]);
		const result = later.state.messages.find((message) => message.role === "toolResult");
		expect(JSON.stringify(result?.content)).toMatch(/interrupted by a restart/);
		expect(runs).toEqual(["there"]);
		there.abort();
	});

	it("a snapshot renamed into place in the moment between its check and its rename, after another process opened the session and read it, is not what a later load reads: the session that process read is", async () => {
		const dir = await tempDir();
		const store = createFileStore(dir, { fsync: "never" });
		const scripted = createScriptedModel([{ content: "first" }]);
		const agent = await Agent.load({ store, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await agent.prompt("one");
		await agent.saved();
		const before = transcript(agent);
		const here = store.filesOf("s");
		// Another process opens the session (and reads it) right after this one's check, before its rename.
		let tookOver = false;
		fs.renameSync = ((from: fs.PathLike, to: fs.PathLike) => {
			if (!tookOver && String(from).endsWith("snapshot.json.tmp")) {
				tookOver = true;
				openElsewhere(store.directoryOf("s"));
			}
			realRenameSync(from, to);
		}) as typeof fs.renameSync;
		syncBuiltinESMExports();
		agent.state.messages = [];
		await expect(agent.save()).rejects.toThrow(TAKEN_OVER_ELSEWHERE);
		expect(tookOver).toBe(true);
		// It landed, in this process's files directory.
		expect(readFileSync(join(here, "snapshot.json"), "utf8")).not.toMatch(/first/);
		fs.renameSync = realRenameSync;
		syncBuiltinESMExports();
		const later = await Agent.load({ store: createFileStore(dir, { fsync: "never" }), sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		expect(later.storeProblems).toEqual([]);
		expect(transcript(later)).toEqual(before);
		expect(before).toHaveLength(2);
	});

	it("a question for a person whose storing another process's opening cut off is not asked here (that process asks), and the run ends rather than wait for an answer nobody can give", async () => {
		const dir = await tempDir();
		const store = createFileStore(dir, { fsync: "never" });
		const deploy = makeTool("deploy", async () => ok("deployed"), { needsApproval: true });
		const scripted = createScriptedModel([{ content: [{ type: "toolCall", name: "deploy", arguments: {} }] }, { content: "done" }]);
		const agent = await Agent.load({ store, sessionId: "s", initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn });
		const asked: string[] = [];
		agent.subscribe((event) => {
			if (event.type === "approval_requested") asked.push(event.toolCallId);
		});
		const tookOver = takeOverAtNextWrite(/"kind":"approval","phase":"requested"/, () => {
			openElsewhere(store.directoryOf("s"));
			return true;
		});
		// Ends by itself, as on abort(): before, the call waited with no question asked, and the prompt never settled.
		await agent.prompt("deploy it");
		await agent.saved().catch(() => {});
		expect(tookOver()).toBe(true);
		expect(asked).toEqual([]);
		expect(agent.pendingApprovals).toEqual([]);
		expect(agent.storeProblems.some((problem) => TAKEN_OVER_ELSEWHERE.test(problem))).toBe(true);
	});

	it("a snapshot that landed after another process opened the session is reported, not taken as stored", async () => {
		const { store, agent } = await oneRunStored();
		const tookOver = takeOverAtNextWrite(/"snapshot"/, () => {
			openElsewhere(store.directoryOf("s"));
			return true;
		});
		agent.state.messages = [];
		await expect(agent.save()).rejects.toThrow(TAKEN_OVER_ELSEWHERE);
		expect(tookOver()).toBe(true);
	});

	it("another process's writer file that got this one's inode and modification time (a file system reusing a freed inode, a kernel whose file times are as coarse as its tick) still tells: its size differs", async () => {
		const { store, agent } = await oneRunStored();
		const writer = join(store.directoryOf("s"), "writer");
		const mine = fs.statSync(writer, { bigint: true });
		// The other process's writer file, in the same inode (written in place) with the same time, of another length.
		const other = JSON.stringify({ token: "other", pid: 0, openedAt: new Date().toISOString() });
		writeFileSync(writer, `${other}${" ".repeat(Math.max(0, Number(mine.size) - other.length))} \n`);
		const seconds = mine.mtimeNs / 1_000_000_000n;
		const nanoseconds = String(mine.mtimeNs % 1_000_000_000n).padStart(9, "0");
		execFileSync("touch", ["-m", "-d", `@${seconds}.${nanoseconds}`, writer]);
		const now = fs.statSync(writer, { bigint: true });
		expect([now.ino, now.mtimeNs]).toEqual([mine.ino, mine.mtimeNs]);
		await agent.prompt("two");
		await expect(agent.saved()).rejects.toThrow(TAKEN_OVER_ELSEWHERE);
	});
});

