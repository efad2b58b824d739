/**
 * What the file store flushes to the disk under each `fsync` policy, seen from outside: a real
 * process runs a session and strace records its `fsync` calls, with the path of each. A power cut
 * cannot be had here; what it keeps is what was flushed. Under `"always"`, a new session's
 * directory must be flushed into the directory that holds it (and the root, when the store made
 * it too): before, only the files inside were, so a power cut could take away a session the agent
 * had reported stored. Skipped where strace is not installed or may not trace (`.ci/run` installs it).
 */
import { execFile, execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import type { FsyncPolicy } from "../../src/durable/file-store.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-fsync-");
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

const straceAvailable = (() => {
	try {
		// Traces a process, not only runs: a container may forbid ptrace.
		execFileSync("strace", ["-f", "-e", "trace=none", "true"], { stdio: "ignore" });
		return true;
	} catch {
		return false;
	}
})();

/** A process that loads session "s" from the store at argv[1] (created if need be) and prompts it twice. */
const child = `
	import { Agent } from "./src/agent.ts";
	import { createFileStore } from "./src/durable/file-store.ts";
	import { createScriptedModel } from "./src/providers/scripted.ts";
	const scripted = createScriptedModel([{ content: "one" }, { content: "two" }]);
	const agent = await Agent.load({ store: createFileStore(process.argv[1], { fsync: process.argv[2] }), sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
	await agent.prompt("first");
	await agent.prompt("second");
	await agent.saved();
	if (agent.storeProblems.length > 0) throw new Error(agent.storeProblems.join("; "));
`;

/** The paths the process flushed (`fsync`), with how many times, running the session on a store at `root`. */
async function flushed(root: string, fsync: FsyncPolicy, log: string): Promise<Map<string, number>> {
	// -y names each descriptor's path; -f follows libuv's threads, which make the async calls.
	await promisify(execFile)("strace", ["-f", "-qq", "-y", "-e", "trace=fsync,fdatasync", "-o", log, process.execPath, "--import", "tsx", "--input-type=module", "-e", child, root, fsync], { cwd: repoRoot, timeout: 60_000 });
	const counts = new Map<string, number>();
	for (const match of (await readFile(log, "utf8")).matchAll(/f(?:data)?sync\(\d+<([^>]+)>\) = 0/g)) {
		const path = match[1] as string;
		counts.set(path, (counts.get(path) ?? 0) + 1);
	}
	return counts;
}

describe.skipIf(!straceAvailable)("the file store's flushes, by policy", () => {
	it('"always": a new session\'s directory, and the root it made, are flushed into the directories that hold them; every journal entry is flushed', async () => {
		const dir = await tempDir();
		// Neither the root nor its parent exists yet: the store makes them with the session.
		const root = join(dir, "data", "sessions");
		const paths = await flushed(root, "always", join(dir, "strace.log"));
		expect(paths.get(root)).toBeGreaterThanOrEqual(1);
		expect(paths.get(join(dir, "data"))).toBeGreaterThanOrEqual(1);
		expect(paths.get(dir)).toBeGreaterThanOrEqual(1);
		// The session's directory holds its files (the first opening keeps them there).
		expect(paths.get(join(root, "s"))).toBeGreaterThanOrEqual(1);
		// Two runs journaled after the new session's snapshot: each entry appended is flushed.
		expect(paths.get(join(root, "s", "journal.jsonl"))).toBeGreaterThanOrEqual(4);
	}, 90_000);

	it('"snapshots": the snapshot and the directories are flushed, journal entries appended are not', async () => {
		const dir = await tempDir();
		const root = join(dir, "sessions");
		const paths = await flushed(root, "snapshots", join(dir, "strace.log"));
		expect(paths.get(dir)).toBeGreaterThanOrEqual(1);
		expect(paths.get(join(root, "s", "snapshot.json.tmp"))).toBeGreaterThanOrEqual(1);
		expect(paths.get(join(root, "s", "journal.jsonl"))).toBeUndefined();
	}, 90_000);

	it('"never": nothing is flushed', async () => {
		const dir = await tempDir();
		const paths = await flushed(join(dir, "sessions"), "never", join(dir, "strace.log"));
		expect([...paths.keys()].filter((path) => path.startsWith(dir))).toEqual([]);
	}, 90_000);
});
