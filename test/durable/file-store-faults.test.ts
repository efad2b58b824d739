/**
 * The file store where the file system's timing or failures fall badly, made to happen on purpose
 * through a wrapper of node:fs (a full disk, or a save landing between two reads, cannot be had on
 * request otherwise):
 * - an opening of a session that fails part way (the disk full when the writer file or the files
 *   directory is written) is made again, whole, before the agent writes. Before, an agent whose
 *   opening failed before its writer file was in place wrote the session unfenced beside the
 *   process that had opened it, and a store whose opening failed after its writer file, asked
 *   again, wrote into the files of the process it had fenced off;
 * - a read of a session another store writes, made while that store saves a snapshot, is the
 *   session at one moment. Before, it could be the snapshot before the save with the journal after
 *   it, without the runs between them, and no problem said so;
 * - a session's first snapshot whose journal could not be put beside it (the rename after the
 *   snapshot's failing, as a crash there would leave it) loads without a problem: a journal is in
 *   place before the snapshot, so a snapshot without one always means journaled runs were lost
 *   (which a load reports, see journal-missing.test.ts);
 * - the property at the end fails the store's file system calls at random (EIO) while processes
 *   load and prompt a session: no tool runs twice, and the session stays valid. Before, a read that
 *   failed was taken for damage: the journal was cut to nothing and a tool ran again (it found
 *   that in 33 runs). `PROPERTY_RUNS` (default 60) sets the runs, `PROPERTY_SEED` replays a seed.
 */
import { readFile, rm } from "node:fs/promises";
import fc from "fast-check";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import type { AgentStore } from "../../src/durable/store.js";
import { createScriptedModel, type ScriptedReplyFactory, toolCall } from "../../src/providers/scripted.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { expectValidTranscript, makeTool, ok, textOf } from "../agent/helpers.js";
import { useTempDirs } from "../temp-dirs.js";

/** How many of the next calls of each kind fail with ENOSPC. */
const faults = vi.hoisted(() => ({
	copyFile: 0,
	writerFile: 0,
	afterFirstRead: undefined as (() => Promise<void>) | undefined,
	/** Asked at every file system call the store makes (by name, with its path): true fails it with EIO. */
	random: undefined as ((call: string, path: string) => boolean) | undefined,
}));

function noSpace(call: string): Error {
	return Object.assign(new Error(`ENOSPC: no space left on device, ${call}`), { code: "ENOSPC" });
}

/** Fails the call with EIO when the random injector says so. */
function maybeFail(call: string, path: unknown): void {
	if (faults.random?.(call, String(path))) throw Object.assign(new Error(`EIO: i/o error, ${call} '${String(path)}'`), { code: "EIO" });
}

vi.mock("node:fs/promises", async (importOriginal) => {
	const real = await importOriginal<typeof import("node:fs/promises")>();
	const failing =
		<F extends (...args: never[]) => Promise<unknown>>(call: string, fn: F) =>
		async (...args: Parameters<F>) => {
			maybeFail(call, args[0]);
			return fn(...args);
		};
	return {
		...real,
		open: failing("open", real.open),
		truncate: failing("truncate", real.truncate),
		mkdir: failing("mkdir", real.mkdir),
		copyFile: async (...args: Parameters<typeof real.copyFile>) => {
			maybeFail("copyFile", args[0]);
			if (faults.copyFile > 0) {
				faults.copyFile--;
				throw noSpace("copyfile");
			}
			return real.copyFile(...args);
		},
		readFile: (async (...args: Parameters<typeof real.readFile>) => {
			maybeFail("readFile", args[0]);
			const read = await real.readFile(...args);
			// Right after the first of a load's two reads (the snapshot or the journal, whichever it reads first).
			const hook = faults.afterFirstRead;
			if (hook && /(snapshot\.json|journal\.jsonl)$/.test(String(args[0]))) {
				faults.afterFirstRead = undefined;
				await hook();
			}
			return read;
		}) as typeof real.readFile,
	};
});

vi.mock("node:fs", async (importOriginal) => {
	const real = await importOriginal<typeof import("node:fs")>();
	const failing =
		<F extends (...args: never[]) => unknown>(call: string, fn: F) =>
		(...args: Parameters<F>) => {
			maybeFail(call, args[0]);
			return fn(...args);
		};
	return {
		...real,
		renameSync: failing("renameSync", real.renameSync),
		readFileSync: failing("readFileSync", real.readFileSync),
		openSync: failing("openSync", real.openSync),
		linkSync: failing("linkSync", real.linkSync),
		readdirSync: failing("readdirSync", real.readdirSync),
		writeFileSync: (...args: Parameters<typeof real.writeFileSync>) => {
			maybeFail("writeFileSync", args[0]);
			if (faults.writerFile > 0 && typeof args[0] === "string" && /[/\\]writer\.[^/\\]+\.tmp$/.test(args[0])) {
				faults.writerFile--;
				throw noSpace("write");
			}
			return real.writeFileSync(...args);
		},
	};
});

const tempDir = useTempDirs("agentchart-open-faults-");
const TAKEN_OVER_ELSEWHERE = /session "s" was opened by an agent of another process/;

function texts(messages: readonly AgentMessage[]): string[] {
	return messages.map((message) => `${message.role}: ${textOf(message)}`);
}

/**
 * Session "s" on a file store as another process has it (without `sessionKey`, its agents' claims
 * are its own: only the store's writer file tells the processes apart), its replies `reply <tag> <n>`.
 */
function agentOn(dir: string, tag: string, load = true) {
	const store = createFileStore(dir, { fsync: "never" });
	const own: AgentStore = {
		load: (id, options) => store.load(id, options),
		open: (id) => store.open?.(id),
		saveSnapshot: (id, snapshot) => store.saveSnapshot(id, snapshot),
		appendJournal: (id, entry) => store.appendJournal(id, entry),
	};
	const scripted = createScriptedModel(Array.from({ length: 10 }, (_, index) => ({ content: `reply ${tag} ${index + 1}` })));
	const options = { store: own, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn };
	return { store, make: () => (load ? Agent.load(options) : Promise.resolve(new Agent(options))) };
}

describe("a file store's opening that fails part way", () => {
	it("before its writer file is in place: the agent opens the session again before it writes, and the process that had it is fenced off", async () => {
		const dir = await tempDir();
		const first = agentOn(dir, "B");
		const older = await first.make();
		await older.prompt("from B");
		await older.saved();
		faults.writerFile = 1;
		const second = agentOn(dir, "A", false);
		const agent = await second.make();
		await expect(agent.saved()).rejects.toThrow(/open the session.*ENOSPC/s);
		await agent.prompt("from A");
		await agent.saved();
		// Its writes went into a files directory of its own, named in `current`.
		expect(second.store.filesOf("s")).not.toBe(first.store.filesOf("s"));
		expect((await readFile(join(dir, "s", "current"), "utf8")).trim()).toBe(second.store.filesOf("s").split(/[/\\]/).at(-1));
		await older.prompt("again from B");
		await expect(older.saved()).rejects.toThrow(TAKEN_OVER_ELSEWHERE);
		expect(texts((await agentOn(dir, "check").make()).state.messages)).toEqual(["user: from A", "assistant: reply A 1"]);
	});

	it("after its writer file is in place (copying the files): a load asked again makes the opening whole, in files of its own", async () => {
		const dir = await tempDir();
		const first = agentOn(dir, "B");
		const older = await first.make();
		await older.prompt("from B");
		await older.saved();
		const second = agentOn(dir, "A");
		faults.copyFile = 1;
		await expect(second.make()).rejects.toThrow(/ENOSPC/);
		const agent = await second.make();
		expect(texts(agent.state.messages)).toEqual(["user: from B", "assistant: reply B 1"]);
		expect(second.store.filesOf("s")).not.toBe(first.store.filesOf("s"));
		expect((await readFile(join(dir, "s", "current"), "utf8")).trim()).toBe(second.store.filesOf("s").split(/[/\\]/).at(-1));
		await agent.prompt("from A");
		await agent.saved();
		await older.prompt("again from B");
		await expect(older.saved()).rejects.toThrow(TAKEN_OVER_ELSEWHERE);
		expect(texts((await agentOn(dir, "check").make()).state.messages)).toEqual(["user: from B", "assistant: reply B 1", "user: from A", "assistant: reply A 1"]);
	});
});

describe("a read of a session another store writes", () => {
	it("made while that store saves a snapshot (between its read of the snapshot and that of the journal), is the session at one moment", async () => {
		const dir = await tempDir();
		const writing = agentOn(dir, "W");
		const writer = await writing.make();
		await writer.prompt("one");
		await writer.prompt("two");
		await writer.saved();
		const reader = createFileStore(dir, { fsync: "never" });
		faults.afterFirstRead = () => writer.save();
		const loaded = await reader.load("s");
		expect(faults.afterFirstRead).toBeUndefined();
		expect(loaded?.problems).toEqual([]);
		expect(texts(Agent.restore(loaded?.snapshot as NonNullable<typeof loaded>["snapshot"] & object, {}).state.messages)).toEqual(["user: one", "assistant: reply W 1", "user: two", "assistant: reply W 2"]);
	});
});

const PROPERTY_RUNS = Number(process.env["PROPERTY_RUNS"] ?? 60);
const PROPERTY_SEED = Number(process.env["PROPERTY_SEED"] ?? Date.now() % 2 ** 31);

describe("a file store whose file system fails at random", () => {
	it("property: whatever calls fail (EIO), while processes load the session and prompt it, also mid-run, no tool runs twice, and once the disk is well the session loads valid and takes a prompt", async () => {
		console.log(`property seed (file store faults): ${PROPERTY_SEED}  (PROPERTY_SEED=${PROPERTY_SEED} to replay)`);
		type Step = "load" | "prompt" | "promptLater" | "settle";
		await fc.assert(
			fc.asyncProperty(fc.array(fc.constantFrom<Step>("load", "prompt", "promptLater", "settle"), { minLength: 1, maxLength: 10 }), fc.constantFrom(0.02, 0.08, 0.2), fc.integer({ min: 0, max: 2 ** 31 - 1 }), fc.constantFrom<"always" | "never">("always", "never"), async (steps, rate, seed, fsync) => {
				const dir = await tempDir();
				let state = seed;
				const random = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0), state / 2 ** 32);
				/** Runs of each tool call, by its id. */
				const ran = new Map<string, number>();
				const charge = makeTool("charge", async (id) => (ran.set(id, (ran.get(id) ?? 0) + 1), ok(`charged ${id}`)));
				// A model that answers from the transcript: a charge per prompt, then a text; the same for a restored run.
				const reply: ScriptedReplyFactory = (context) => {
					const last = context.messages.at(-1);
					const prompts = context.messages.filter((message) => message.role === "user").length;
					return last?.role === "toolResult" ? { content: `done ${prompts}` } : { content: [toolCall("charge", {}, `charge-${prompts}`)] };
				};
				const load = () => {
					// A store object stands for a process (no sessionKey: only the writer file tells them apart).
					const store = createFileStore(dir, { fsync });
					const own: AgentStore = { load: (id, options) => store.load(id, options), open: (id) => store.open?.(id), saveSnapshot: (id, snapshot) => store.saveSnapshot(id, snapshot), appendJournal: (id, entry) => store.appendJournal(id, entry) };
					const model = createScriptedModel(Array.from({ length: 40 }, () => reply));
					return Agent.load({ store: own, sessionId: "s", initialState: { model: model.model, tools: [charge] }, streamFn: model.streamFn });
				};
				const agents: Agent[] = [];
				const pending: Promise<unknown>[] = [];
				let prompts = 0;
				faults.random = (_call, path) => path.startsWith(dir) && random() < rate;
				try {
					for (const step of steps) {
						if (step === "load") {
							const agent = await load().catch(() => undefined);
							if (agent) agents.push(agent);
						} else if (step === "settle") {
							await Promise.all(pending.splice(0));
						} else {
							const agent = agents.at(-1);
							if (!agent) continue;
							const run = agent
								.waitForIdle()
								.then(() => agent.prompt(`prompt ${++prompts}`))
								.catch(() => {});
							if (step === "prompt") await run;
							else pending.push(run);
						}
					}
					await Promise.all(pending.splice(0));
				} finally {
					faults.random = undefined;
				}
				// The disk is well again: every agent comes to rest (a run whose writes were refused ends all the same).
				for (const agent of agents) {
					agent.abort();
					await agent.waitForIdle();
				}
				for (const [id, times] of ran) expect(times, `${id} ran ${times} times`).toBe(1);
				const final = await load();
				await final.waitForIdle();
				expectValidTranscript(final.state.messages);
				await final.prompt("after the faults");
				await final.saved();
				const again = await load();
				await again.waitForIdle();
				expectValidTranscript(again.state.messages);
				expect(textOf(again.state.messages.at(-1))).toMatch(/^done \d+$/);
				expect(again.state.messages.filter((message) => message.role === "user").map((message) => textOf(message)).at(-1)).toBe("after the faults");
				for (const [id, times] of ran) expect(times, `${id} ran ${times} times`).toBe(1);
				await rm(dir, { recursive: true, force: true });
			}),
			{ numRuns: PROPERTY_RUNS, seed: PROPERTY_SEED },
		);
	}, Math.max(60_000, PROPERTY_RUNS * 2000));
});


describe("a session's first snapshot", () => {
	it("has a journal beside it even when the journal's rewrite after it fails, so a load reports no loss", async () => {
		const dir = await tempDir();
		const scripted = createScriptedModel([]);
		const snapshot = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn }).snapshot();
		const store = createFileStore(dir, { fsync: "never" });
		await store.open("s");
		faults.random = (call, path) => call === "renameSync" && path.endsWith("journal.jsonl.tmp");
		try {
			await expect(store.saveSnapshot("s", snapshot)).rejects.toThrow(/EIO/);
		} finally {
			faults.random = undefined;
		}
		const loaded = await createFileStore(dir, { fsync: "never" }).load("s", { peek: true });
		expect(loaded?.snapshot).toBeDefined();
		expect(loaded?.problems).toEqual([]);
	});
});
