/**
 * An `Agent.load` in one process whose opening of the session (after its writer file is in place,
 * while it reads `current` or copies the files) is overtaken by openings of another: those remove
 * the files it reads and the copy it made, and it must fail as what it is, an opening fenced off
 * (`SessionTakenOverError`, as its writes would). Before, it failed with the file it found gone
 * ("current names g1-…, which is gone; the session's files are not where it says", or a bare
 * ENOENT from flushing its copy), which reads as a damaged session; three processes loading one
 * session at once met the second. Both go through one path (the opening's failure is checked
 * against the writer file); the read of `current` is the one a test can hold still.
 *
 * The opening process is held in its read of `current` by a named pipe put where the file was,
 * and answered once the other process's opening is done. Skipped where `mkfifo` is not there.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { constants, statSync } from "node:fs";
import { type FileHandle, open, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { textOf } from "../agent/helpers.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-open-race-");
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

const mkfifoAvailable = (() => {
	try {
		execFileSync("mkfifo", ["--version"], { stdio: "ignore" });
		return true;
	} catch {
		return false;
	}
})();

/**
 * A process that opens session "s" of the store at argv[1] (as `Agent.load` does once it has
 * looked at the session: its look reads `current` too, and is left out here so that the only read
 * of `current` is the opening's), and says how that went.
 */
const opener = `
	import { createFileStore } from "./src/durable/file-store.ts";
	import { SessionTakenOverError } from "./src/durable/store.ts";
	try {
		await createFileStore(process.argv[1]).open("s");
		console.log("opened");
	} catch (error) {
		console.log(error instanceof SessionTakenOverError ? "SessionTakenOverError" : "Error", error.message);
	}
`;

function texts(messages: readonly AgentMessage[]): string[] {
	return messages.map((message) => `${message.role}: ${textOf(message)}`);
}

/** Loads session "s" as a process of its own would (a store of its own), its replies `reply <tag> <n>`. */
function load(root: string, tag: string): Promise<Agent> {
	const scripted = createScriptedModel(Array.from({ length: 3 }, (_, index) => ({ content: `reply ${tag} ${index + 1}` })));
	return Agent.load({ store: createFileStore(root), sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
}

/** The opener, started, with what it printed once it ended. */
function startOpener(root: string): { child: ChildProcess; ended: Promise<string> } {
	const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", opener, root], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
	let out = "";
	let errors = "";
	child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
	child.stderr?.on("data", (chunk: Buffer) => (errors += chunk.toString()));
	return { child, ended: new Promise((resolve) => child.on("close", () => resolve(errors === "" ? out : `${out}\n(stderr) ${errors}`))) };
}

/**
 * Waits until the opener opens the pipe at `path` to read it, and gives the end to answer it
 * with; throws if the opener ends first (the wait for a reader is then let go).
 */
async function reader(path: string, ended: Promise<string>): Promise<FileHandle> {
	const opening = open(path, "w");
	const first = await Promise.race([opening, ended]);
	if (typeof first !== "string") return first;
	const release = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
	await (await opening).close();
	await release.close();
	throw new Error(`the opener ended before it read ${path}: ${first}`);
}

/** Puts a named pipe where `path` is, and gives back what the file held. */
async function pipeInPlaceOf(path: string): Promise<string> {
	const text = await readFile(path, "utf8");
	await rm(path);
	execFileSync("mkfifo", [path]);
	return text;
}

/** Puts the file back where the pipe is (the opener holds the pipe open already). */
async function fileInPlaceOfPipe(path: string, text: string): Promise<void> {
	await writeFile(`${path}.back`, text);
	await rename(`${path}.back`, path);
}

describe.skipIf(!mkfifoAvailable)("an opening of a session that another process's openings overtake", () => {
	it("while it reads `current` (after its writer file is in place): it fails with SessionTakenOverError, not with the files directory it found gone", async () => {
		const root = await tempDir();
		const first = await load(root, "A");
		await first.prompt("one");
		await first.saved();
		// Opened again: the files are in a files directory that `current` names.
		await (await load(root, "B")).saved();
		const dir = join(root, "s");
		const current = join(dir, "current");
		const writerFile = () => statSync(join(dir, "writer")).ino;
		const before = writerFile();
		const named = await pipeInPlaceOf(current);
		const { child, ended } = startOpener(root);
		try {
			const held = await reader(current, ended);
			// It waits in its read of `current`, its writer file in place.
			expect(writerFile()).not.toBe(before);
			// Another process opens the session meanwhile: it copies the files into a directory of its own, and removes these.
			await fileInPlaceOfPipe(current, named);
			const newer = await load(root, "C");
			// The opener reads what `current` held when its read began.
			await held.writeFile(named);
			await held.close();
			expect(await ended).toMatch(/^SessionTakenOverError agentchart: session "s" was opened by an agent of another process/);
			await newer.prompt("two");
			await newer.saved();
			expect(texts((await load(root, "D")).state.messages)).toEqual(["user: one", "assistant: reply A 1", "user: two", "assistant: reply C 1"]);
		} finally {
			child.kill("SIGKILL");
		}
	}, 60_000);
});
