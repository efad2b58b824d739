/**
 * Two session ids that one file system takes for one directory ("Alice" and "alice" where upper
 * and lower case are one, as on macOS and Windows by default): the second is refused, naming both,
 * and nothing of the first is read or changed. Where no such file system is at hand, the shared
 * directory is made with a link (and, for a session of an earlier agentchart, which has no `id`
 * file, with the listing such a file system gives: the directory under the name it was made with).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { copyFile, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import type { StoredJournalEntry } from "../../src/durable/journal.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { textOf } from "../agent/helpers.js";
import { useTempDirs } from "../temp-dirs.js";

/**
 * `hidden`: names `readdirSync` leaves out of its listings (links that stand for a file system
 * folding case); `noHardLinks`: `linkSync` fails as on a file system without hard links (FAT).
 */
const folded = vi.hoisted(() => ({ hidden: new Set<string>(), noHardLinks: false, afterJournalRead: undefined as (() => Promise<void>) | undefined }));
vi.mock("node:fs", async (importOriginal) => {
	const fs = await importOriginal<typeof import("node:fs")>();
	const readdirSync = ((path: Parameters<typeof fs.readdirSync>[0], options?: unknown) => {
		const names = fs.readdirSync(path, options as undefined) as unknown[];
		return names.filter((name) => !(typeof name === "string" && folded.hidden.has(join(String(path), name))));
	}) as typeof fs.readdirSync;
	const linkSync = ((...args: Parameters<typeof fs.linkSync>) => {
		if (folded.noHardLinks) throw Object.assign(new Error(`EPERM: operation not permitted, link '${String(args[0])}'`), { code: "EPERM" });
		return fs.linkSync(...args);
	}) as typeof fs.linkSync;
	return { ...fs, readdirSync, linkSync, default: { ...fs, readdirSync, linkSync } };
});

/** `afterJournalRead`: run once, right after a load has read (or not found) a journal, before it reads the snapshot. */
vi.mock("node:fs/promises", async (importOriginal) => {
	const fs = await importOriginal<typeof import("node:fs/promises")>();
	const readFile = (async (...args: Parameters<typeof fs.readFile>) => {
		try {
			return await fs.readFile(...args);
		} finally {
			const hook = folded.afterJournalRead;
			if (hook && String(args[0]).endsWith("journal.jsonl")) {
				folded.afterJournalRead = undefined;
				await hook();
			}
		}
	}) as typeof fs.readFile;
	return { ...fs, readFile, default: { ...fs, readFile } };
});

const tempDir = useTempDirs("agentchart-case-");

const entry = (seq: number): StoredJournalEntry => ({ seq, kind: "model", phase: "intent", effect: `r1.m${seq}`, model: "m", messages: 1 });

/** Every file under `dir`, with its bytes: what a refused session must leave as it was. */
async function filesUnder(dir: string): Promise<Record<string, string>> {
	const files: Record<string, string> = {};
	for (const name of (await readdir(dir, { recursive: true })).sort()) {
		const path = join(dir, name);
		if ((await stat(path)).isFile()) files[name] = await readFile(path, "utf8");
	}
	return files;
}

/** Session "Alice" in `root`, one run stored; its directory. */
async function storeAlice(root: string): Promise<string> {
	const scripted = createScriptedModel([{ content: "for Alice only" }]);
	const store = createFileStore(root, { fsync: "never" });
	const alice = await Agent.load({ store, sessionId: "Alice", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
	await alice.prompt("Alice's secret");
	await alice.saved();
	expect(alice.storeProblems).toEqual([]);
	return store.directoryOf("Alice");
}

/** A snapshot of an agent after one prompt (no store), to save under an id of the test's choosing. */
async function snapshotAfterPrompt(prompt: string, reply: string) {
	const scripted = createScriptedModel([{ content: reply }]);
	const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
	await agent.prompt(prompt);
	return agent.snapshot();
}

/**
 * Makes "alice" lead to Alice's directory (`root`/Alice), as a file system that folds case does by
 * itself (there, nothing is made); its path.
 */
async function shareWithAlice(root: string): Promise<string> {
	const link = join(root, "alice");
	if (!existsSync(link)) await symlink(join(root, "Alice"), link, "junction");
	return link;
}

/** Every way into a session, for id "alice": each must fail naming both ids. */
async function expectAliceRefused(root: string): Promise<void> {
	const both = /session "alice" cannot be kept in .*: that directory is .*session "Alice"'s/;
	const scripted = createScriptedModel([{ content: "for alice" }]);
	await expect(Agent.load({ store: createFileStore(root), sessionId: "alice", initialState: { model: scripted.model }, streamFn: scripted.streamFn })).rejects.toThrow(both);
	const store = createFileStore(root);
	await expect(store.load("alice")).rejects.toThrow(both);
	await expect(store.load("alice", { peek: true })).rejects.toThrow(both);
	expect(() => store.filesOf("alice")).toThrow(both);
	await expect(createFileStore(root).open?.("alice")).rejects.toThrow(both);
	// A store that writes without opening the session.
	const snapshot = (await createFileStore(root).load("Alice"))?.snapshot;
	if (!snapshot) throw new Error("Alice's session did not load");
	await expect(createFileStore(root).saveSnapshot("alice", { ...snapshot, sessionId: "alice" })).rejects.toThrow(both);
	await expect(createFileStore(root).appendJournal("alice", entry(99))).rejects.toThrow(both);
	// An agent made for the session opens it in the background: it runs nothing it could not store.
	const agent = new Agent({ store: createFileStore(root), sessionId: "alice", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
	await agent.prompt("alice's question").catch(() => {});
	await expect(agent.saved()).rejects.toThrow(both);
	expect(scripted.calls).toHaveLength(0);
}

async function expectAliceIntact(root: string, before: Record<string, string>, dir: string): Promise<void> {
	expect(await filesUnder(dir)).toEqual(before);
	const again = await Agent.load({ store: createFileStore(root), sessionId: "Alice", streamFn: createScriptedModel([]).streamFn });
	expect(again.state.messages.map((message) => textOf(message))).toEqual(["Alice's secret", "for Alice only"]);
}

describe("two session ids that share one directory", () => {
	it("the second is refused everywhere, naming both ids, and nothing of the first is read or changed", async () => {
		const root = await tempDir();
		const dir = await storeAlice(root);
		// What a file system that folds case does: "alice" leads to Alice's directory.
		await shareWithAlice(root);
		const before = await filesUnder(dir);
		await expectAliceRefused(root);
		await expectAliceIntact(root, before, dir);
	});

	it("a session an earlier agentchart stored (no `id` file) is refused to the other id, where the file system lists it under the name it was made with", async () => {
		const root = await tempDir();
		const dir = await storeAlice(root);
		// As an earlier agentchart left it: the files in the session's directory, which holds nothing else.
		const files = createFileStore(root).filesOf("Alice");
		await rm(join(dir, "id"), { force: true });
		await rm(join(dir, "writer"));
		for (const name of ["snapshot.json", "snapshot.prev.json", "journal.jsonl"]) {
			if (files !== dir && existsSync(join(files, name))) await copyFile(join(files, name), join(dir, name));
		}
		if (files !== dir) {
			await rm(files, { recursive: true });
			await rm(join(dir, "current"));
		}
		const link = await shareWithAlice(root);
		folded.hidden.add(link);
		try {
			const before = await filesUnder(dir);
			await expectAliceRefused(root);
			expect(await filesUnder(dir)).toEqual(before);
		} finally {
			folded.hidden.delete(link);
		}
		// Found and read by its own id, as before; its first opening claims it.
		expect(existsSync(join(dir, "id"))).toBe(false);
		const alice = await Agent.load({ store: createFileStore(root), sessionId: "Alice", streamFn: createScriptedModel([]).streamFn });
		expect(alice.state.messages.map((message) => textOf(message))).toEqual(["Alice's secret", "for Alice only"]);
		expect(JSON.parse(await readFile(join(dir, "id"), "utf8"))).toEqual({ sessionId: "Alice" });
	});

	it("a store that writes a session without opening it writes nothing more once its directory, removed, was made again by the other id", async () => {
		const root = await tempDir();
		const writer = createFileStore(root, { fsync: "never" });
		const snapshot = await snapshotAfterPrompt("hello", "hi");
		await writer.saveSnapshot("alice", { ...snapshot, sessionId: "alice" });
		// Deleted on purpose; then "Alice" is stored, in the directory that is also "alice"'s where case is folded.
		await rm(writer.directoryOf("alice"), { recursive: true });
		const dir = await storeAlice(root);
		await shareWithAlice(root);
		const before = await filesUnder(dir);
		await expect(writer.saveSnapshot("alice", { ...snapshot, sessionId: "alice" })).rejects.toThrow(/session "alice" cannot be kept in .*: that directory is session "Alice"'s/);
		await expect(writer.appendJournal("alice", entry(5))).rejects.toThrow(/session "alice" cannot be kept/);
		await expectAliceIntact(root, before, dir);
	});

	it("a load of the other id that the first id's store claims the directory under, and writes in, is refused", async () => {
		const root = await tempDir();
		// A new session's directory, being made: no `id` file yet.
		await mkdir(join(root, "Alice"));
		await shareWithAlice(root);
		const snapshot = await snapshotAfterPrompt("Alice's secret", "for Alice only");
		folded.afterJournalRead = async () => {
			await createFileStore(root, { fsync: "never" }).saveSnapshot("Alice", { ...snapshot, sessionId: "Alice" });
		};
		try {
			await expect(createFileStore(root).load("alice")).rejects.toThrow(/session "alice" cannot be kept in .*: that directory is session "Alice"'s/);
			expect(folded.afterJournalRead).toBeUndefined();
		} finally {
			folded.afterJournalRead = undefined;
		}
	});

	it("of two ids that make the directory at once, one has it and the other is refused", async () => {
		for (let round = 0; round < 20; round++) {
			const root = await tempDir();
			await mkdir(join(root, "Alice"));
			await shareWithAlice(root);
			const snapshot = await snapshotAfterPrompt("hello", "hi");
			const results = await Promise.allSettled(["Alice", "alice"].map((id) => createFileStore(root, { fsync: "never" }).saveSnapshot(id, { ...snapshot, sessionId: id })));
			expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
			const refused = results.find((result) => result.status === "rejected");
			expect(String(refused?.reason)).toMatch(/session "(Alice|alice)" cannot be kept in .*: that directory is session "(alice|Alice)"'s \(its id file says so\)/);
		}
	});

	it("on a file system without hard links, the `id` file is written all the same, and the other id refused", async () => {
		folded.noHardLinks = true;
		try {
			const root = await tempDir();
			const dir = await storeAlice(root);
			expect(JSON.parse(await readFile(join(dir, "id"), "utf8"))).toEqual({ sessionId: "Alice" });
			expect((await readdir(dir)).filter((name) => name.endsWith(".tmp"))).toEqual([]);
			await shareWithAlice(root);
			const before = await filesUnder(dir);
			await expectAliceRefused(root);
			await expectAliceIntact(root, before, dir);
		} finally {
			folded.noHardLinks = false;
		}
	});

	it("a session of an earlier agentchart is found and read by its own id, and not claimed by a read", async () => {
		const root = await tempDir();
		const dir = await storeAlice(root);
		await rm(join(dir, "id"), { force: true });
		const store = createFileStore(root);
		expect((await store.load("Alice", { peek: true }))?.snapshot).toBeDefined();
		expect((await store.load("Alice"))?.snapshot).toBeDefined();
		expect(existsSync(join(dir, "id"))).toBe(false);
		const alice = await Agent.load({ store, sessionId: "Alice", streamFn: createScriptedModel([]).streamFn });
		expect(alice.state.messages.map((message) => textOf(message))).toEqual(["Alice's secret", "for Alice only"]);
		expect(JSON.parse(await readFile(join(dir, "id"), "utf8"))).toEqual({ sessionId: "Alice" });
	});

	it("an `id` file that does not hold an id fails the load, naming the file, and is left as it is", async () => {
		const root = await tempDir();
		const dir = await storeAlice(root);
		await writeFile(join(dir, "id"), "");
		await expect(createFileStore(root).load("Alice")).rejects.toThrow(/agentchart: .*[/\\]Alice[/\\]id does not hold a session id \(it holds ""\)/);
		await expect(Agent.load({ store: createFileStore(root), sessionId: "Alice", streamFn: createScriptedModel([]).streamFn })).rejects.toThrow(/does not hold a session id/);
		expect(await readFile(join(dir, "id"), "utf8")).toBe("");
	});
});

/**
 * A directory where upper and lower case are one: the temporary directory where it is so (macOS,
 * Windows), else a tmpfs mounted with `casefold` (as root, on a kernel built with CONFIG_UNICODE).
 */
function findCaseFoldingDirectory(): { dir: string; where: string; unmount?: string } | undefined {
	const probe = mkdtempSync(join(tmpdir(), "agentchart-fold-"));
	try {
		const upper = join(probe, "FOLD");
		mkdirSync(upper);
		if (existsSync(join(probe, "fold")) && statSync(join(probe, "fold")).ino === statSync(upper).ino) return { dir: probe, where: `the temporary directory ${tmpdir()}` };
		rmSync(upper, { recursive: true });
		if (process.platform !== "linux" || process.getuid?.() !== 0) throw new Error("no casefold mount without root on Linux");
		execFileSync("mount", ["-t", "tmpfs", "-o", "casefold", "tmpfs", probe], { stdio: "ignore" });
		const folding = join(probe, "folding");
		try {
			mkdirSync(folding);
			execFileSync("chattr", ["+F", folding], { stdio: "ignore" });
		} catch (error) {
			execFileSync("umount", [probe], { stdio: "ignore" });
			throw error;
		}
		return { dir: folding, where: "a tmpfs mounted with casefold", unmount: probe };
	} catch {
		rmSync(probe, { recursive: true, force: true });
		return undefined;
	}
}

const folding = findCaseFoldingDirectory();
afterAll(() => {
	if (!folding) return;
	if (folding.unmount) {
		execFileSync("umount", [folding.unmount], { stdio: "ignore" });
		rmSync(folding.unmount, { recursive: true, force: true });
	} else rmSync(folding.dir, { recursive: true, force: true });
});

describe.skipIf(folding === undefined)(
	`on a file system that folds case (${folding?.where ?? "skipped: the temporary directory tells case apart, and no tmpfs with casefold can be mounted here: that takes root and a kernel built with CONFIG_UNICODE"})`,
	() => {
		it('"alice" is refused Alice\'s session, naming both, and nothing of it is read or changed', async () => {
			const root = mkdtempSync(join(folding?.dir ?? "", "store-"));
			const dir = await storeAlice(root);
			const before = await filesUnder(dir);
			await expectAliceRefused(root);
			await expectAliceIntact(root, before, dir);
		});
	},
);
