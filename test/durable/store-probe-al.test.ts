/**
 * What a read-only probe of the durable stores found (round AL), one test per finding:
 *
 * - a file store made with a relative root resolved it at each call, so after `process.chdir()`
 *   every write failed, saying the session's directory was gone;
 * - two file stores reaching one directory through a symlinked root were two sessions to the
 *   process (`sessionKey` resolved the path, it did not follow the link): the older agent was not
 *   told that a newer one had opened its session;
 * - `storeProblems` and the message `saved()` rejects with grew by a line per failed write, for
 *   ever (12,000 entries, a 2.2 MB message after 3,000 prompts on a store that had gone away);
 * - after `reset()`, `snapshot.prev.json` still held the conversation reset() dropped: a damaged
 *   `snapshot.json` brought it back at the next load.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import { type AgentStore, createMemoryStore, SessionTakenOverError } from "../../src/durable/store.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-probe-al-");

const startedIn = process.cwd();
afterEach(() => process.chdir(startedIn));

/** Every file under `root` whose text holds `text`. */
function filesHolding(root: string, text: string): string[] {
	const found: string[] = [];
	const walk = (dir: string) => {
		for (const name of readdirSync(dir)) {
			const path = join(dir, name);
			if (statSync(path).isDirectory()) walk(path);
			else if (readFileSync(path, "utf8").includes(text)) found.push(path.slice(root.length));
		}
	};
	walk(root);
	return found;
}

describe("a file store with a relative root", () => {
	it("keeps writing where it was made after the process changes its working directory", async () => {
		const first = await tempDir();
		const second = await tempDir();
		process.chdir(first);
		const store = createFileStore("./sessions", { fsync: "never" });
		const scripted = createScriptedModel([{ content: "a" }, { content: "b" }]);
		const agent = await Agent.load({ store, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await agent.prompt("one");
		await agent.saved();
		process.chdir(second);
		await agent.prompt("two");
		await expect(agent.saved()).resolves.toBeUndefined();
		expect(agent.storeProblems).toEqual([]);
		expect(existsSync(join(second, "sessions"))).toBe(false);
		const reloaded = await Agent.load({ store: createFileStore(join(first, "sessions")), sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		expect(reloaded.state.messages).toHaveLength(4);
	});
});

describe("two file stores on one directory, one through a symlinked root", () => {
	it("are one session to the process: the agent opened before the other's load writes no more", async () => {
		const real = await tempDir();
		const link = `${real}-link`;
		symlinkSync(real, link);
		try {
			const viaReal = createFileStore(real, { fsync: "never" });
			const viaLink = createFileStore(link, { fsync: "never" });
			expect(viaLink.sessionKey?.("s")).toBe(viaReal.sessionKey?.("s"));
			const scripted = createScriptedModel([{ content: "a" }, { content: "b" }]);
			const older = await Agent.load({ store: viaReal, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
			await older.prompt("one");
			await older.saved();
			const newer = await Agent.load({ store: viaLink, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
			expect(newer.state.messages).toHaveLength(2);
			await expect(older.prompt("two")).rejects.toBeInstanceOf(SessionTakenOverError);
		} finally {
			rmSync(link, { force: true });
		}
	});

	it("a root not made yet is named by the real path of the part that is", async () => {
		const real = await tempDir();
		mkdirSync(join(real, "data"));
		symlinkSync(join(real, "data"), join(real, "alias"));
		const before = createFileStore(join(real, "alias", "sessions"));
		const direct = createFileStore(join(real, "data", "sessions"));
		expect(before.sessionKey?.("s")).toBe(direct.sessionKey?.("s"));
	});

	it("one path given to a store made before it exists and to one made after it was made as a link is one session (a review: two keys)", async () => {
		const base = await tempDir();
		const root = join(base, "current");
		const early = createFileStore(root, { fsync: "never" });
		mkdirSync(join(base, "release-2"));
		symlinkSync(join(base, "release-2"), root);
		const late = createFileStore(root, { fsync: "never" });
		expect(early.sessionKey?.("s")).toBe(late.sessionKey?.("s"));
	});
});

describe("an agent whose store fails every write, prompted again and again", () => {
	/** The memory store, refusing every write once `down` is set. */
	function storeThatGoesDown() {
		const memory = createMemoryStore();
		const state = { down: false, writes: 0 };
		const refuse = () => Promise.reject(new Error(`the database went away (write ${++state.writes})`));
		const store: AgentStore = {
			load: (id, options) => memory.load(id, options),
			saveSnapshot: (id, snapshot) => (state.down ? refuse() : memory.saveSnapshot(id, snapshot)),
			appendJournal: (id, entry) => (state.down ? refuse() : memory.appendJournal(id, entry)),
		};
		return { store, state };
	}

	it("keeps the first and the latest problems, and counts those it left out, in the list and in saved()'s rejection", async () => {
		const { store, state } = storeThatGoesDown();
		const scripted = createScriptedModel([]);
		const agent = new Agent({ store, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		scripted.append({ content: "ok" });
		await agent.prompt("first");
		await agent.saved();
		state.down = true;
		for (let prompt = 0; prompt < 300; prompt++) {
			scripted.append({ content: `reply ${prompt}` });
			await agent.prompt(`p${prompt}`).catch(() => {});
		}
		const rejection = await agent.saved().then(
			() => undefined,
			(error: unknown) => error as Error,
		);
		const problems = agent.storeProblems;
		expect(state.writes).toBeGreaterThan(300);
		expect(problems.length).toBeLessThanOrEqual(51);
		expect(problems[0]).toMatch(/write 1\)/);
		expect(problems.at(-1)).toMatch(new RegExp(`write ${state.writes}\\)`));
		const leftOut = problems.find((problem) => /more problems left out/.test(problem));
		expect(leftOut).toMatch(new RegExp(`^\\(${state.writes - 50} more problems left out here`));
		expect(rejection?.message).toMatch(new RegExp(`^agentchart: ${state.writes} writes failed: `));
		expect(rejection?.message).toMatch(new RegExp(`write ${state.writes}\\)$`));
		expect(rejection?.message.length).toBeLessThan(2_000);
	});
});

describe("reset() on the file store", () => {
	it("leaves no file holding the conversation it cleared, and a damaged snapshot does not bring it back", async () => {
		const root = await tempDir();
		const store = createFileStore(root, { fsync: "never" });
		const scripted = createScriptedModel([{ content: "ok" }, { content: "ok again" }]);
		const agent = await Agent.load({ store, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await agent.prompt("my card is 4111-1111-1111-1111");
		await agent.save();
		await agent.prompt("thanks");
		await agent.save();
		agent.reset();
		await agent.saved();
		expect(filesHolding(root, "4111-1111")).toEqual([]);

		writeFileSync(join(store.filesOf("s"), "snapshot.json"), "{ damaged");
		const loaded = await Agent.load({ store: createFileStore(root, { fsync: "never" }), sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		expect(loaded.state.messages).toEqual([]);
	});
});
