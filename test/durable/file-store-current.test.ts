/**
 * A session whose `current` file is gone while its files are in a files directory (`g<N>-...`).
 * `current` is replaced by a rename and never removed, so this is a deleted or damaged file, not a
 * crash. Before, the file store read such a session as one never opened: `Agent.load` gave an
 * empty agent and no problem, and the next opening removed the files directory that still held
 * the whole session as an earlier opening's leftover. Now every load and opening fails with an
 * error naming the files, and nothing is removed until a person decides.
 */
import { copyFile, mkdir, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-current-");

/** A session of two prompts, opened twice, so that its files are in a files directory; its directory. */
async function sessionInFilesDirectory(root: string): Promise<{ dir: string; messages: number }> {
	const scripted = createScriptedModel([{ content: "one" }, { content: "two" }]);
	const first = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, store: createFileStore(root), sessionId: "s" });
	await first.prompt("hello");
	await first.saved();
	first.dispose();
	const store = createFileStore(root);
	const second = await Agent.load({ store, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
	await second.prompt("again");
	await second.saved();
	second.dispose();
	return { dir: store.directoryOf("s"), messages: second.state.messages.length };
}

describe("the file store, when a session's current file is gone", () => {
	it("refuses to load or open the session, naming the files, and removes nothing", async () => {
		const root = await tempDir();
		const { dir, messages } = await sessionInFilesDirectory(root);
		const filesDirectories = (await readdir(dir)).filter((name) => /^g\d+-/.test(name));
		expect(filesDirectories).toHaveLength(1);
		const named = (await readFile(join(dir, "current"), "utf8")).trim();
		await rm(join(dir, "current"));
		// As old as a session idle for an hour: an opening removes an abandoned files directory after a minute.
		const hourAgo = new Date(Date.now() - 3_600_000);
		await utimes(join(dir, named), hourAgo, hourAgo);
		const scripted = createScriptedModel([{ content: "three" }]);
		const missing = `${join(dir, "current")} is missing, but ${join(dir, named)} holds the session's files`;
		await expect(Agent.load({ store: createFileStore(root), sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn })).rejects.toThrow(missing);
		// An agent that starts the session anew cannot open it either: its writes are refused, and the files stay.
		const anew = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, store: createFileStore(root), sessionId: "s" });
		await expect(anew.save()).rejects.toThrow(missing);
		anew.dispose();
		expect((await readdir(dir)).filter((name) => /^g\d+-/.test(name))).toEqual(filesDirectories);
		// Named again, the session is whole.
		await writeFile(join(dir, "current"), `${named}\n`);
		const again = await Agent.load({ store: createFileStore(root), sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		expect(again.state.messages).toHaveLength(messages);
		expect(again.storeProblems).toEqual([]);
		await again.saved();
		again.dispose();
	});

	it("a session never opened, or whose opening stopped before it named its copy, loads as before", async () => {
		const root = await tempDir();
		const store = createFileStore(root);
		const dir = store.directoryOf("s");
		expect(await store.load("s")).toBeUndefined();
		const scripted = createScriptedModel([{ content: "one" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, store, sessionId: "s" });
		await agent.prompt("hello");
		await agent.saved();
		agent.dispose();
		// An opening that copied the files and stopped before naming its copy in `current`.
		const files = (await readdir(dir)).filter((name) => name.endsWith(".json") || name.endsWith(".jsonl"));
		await mkdir(join(dir, "g1-0123abcd"));
		for (const name of files) await copyFile(join(dir, name), join(dir, "g1-0123abcd", name));
		const loaded = await Agent.load({ store: createFileStore(root), sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		expect(loaded.state.messages).toHaveLength(2);
		expect(loaded.storeProblems).toEqual([]);
		await loaded.saved();
		loaded.dispose();
	});
});
