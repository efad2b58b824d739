/**
 * A store that only reads a session (its `load`, without opening the session) while another store
 * writes it must change nothing the writer wrote. A load that found the writer's last line half
 * written cut it off, as it would a line a crash had torn: the rest of the append then landed
 * after the cut, did not check, and the entry and every one after it were lost at the next load.
 *
 * The property interleaves, at random, a writer's appends (each caught half written, at a random
 * byte, while readers load), snapshots (which rewrite the journal) and readers' loads, and checks
 * that the session then loads whole: every entry appended after the last snapshot, no problem;
 * the writer is a session's first opener (its files in the session's directory) or a later one
 * (its files in a files directory of its own).
 * It takes `PROPERTY_RUNS` (default 100) and replays a `PROPERTY_SEED`.
 */
import { appendFile, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import type { StoredJournalEntry } from "../../src/durable/journal.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-readers-");
const PROPERTY_RUNS = Number(process.env["PROPERTY_RUNS"] ?? 100);
const PROPERTY_SEED = Number(process.env["PROPERTY_SEED"] ?? Date.now() % 2 ** 31);

const entry = (seq: number): StoredJournalEntry => ({ seq, kind: "model", phase: "intent", effect: `r1.m${seq}`, model: "m", messages: seq });

/** What the writer or a reader does next. */
type Step =
	/** An append, caught half written (`cut` of its line's bytes, 0 to 1) while `readers` loads run, then finished. */
	| { kind: "append"; cut: number; readers: number }
	/** A snapshot that has seen every entry so far (between runs: the journal is emptied). */
	| { kind: "snapshot" }
	/** A load by a store that did not open the session, with nothing on its way. */
	| { kind: "read" };

const step: fc.Arbitrary<Step> = fc.oneof(
	{ weight: 6, arbitrary: fc.record({ kind: fc.constant("append" as const), cut: fc.double({ min: 0.01, max: 0.99, noNaN: true }), readers: fc.integer({ min: 0, max: 2 }) }) },
	{ weight: 1, arbitrary: fc.constant({ kind: "snapshot" as const }) },
	{ weight: 2, arbitrary: fc.constant({ kind: "read" as const }) },
);

describe("the file store, read by a store that did not open the session while another writes it", () => {
	it("property: whatever readers load between the pieces of the writer's appends and snapshots, the session then loads whole", async () => {
		console.log(`property seed (file store readers): ${PROPERTY_SEED}  (PROPERTY_SEED=${PROPERTY_SEED} to replay)`);
		const scripted = createScriptedModel([{ content: "base" }]);
		const base = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, sessionId: "s" });
		await base.prompt("hello");
		const idle = JSON.parse(JSON.stringify(base.snapshot())) as AgentSnapshot;
		await fc.assert(
			fc.asyncProperty(fc.boolean(), fc.array(step, { minLength: 1, maxLength: 12 }), async (reopened, steps) => {
				const root = await tempDir();
				if (reopened) {
					// A store opened the session before: the writer's opening copies it into a files directory of its own.
					const before = createFileStore(root, { fsync: "never" });
					await before.open?.("s");
					await before.saveSnapshot("s", { ...idle, journalSeq: 0 });
				}
				const writer = createFileStore(root, { fsync: "never" });
				await writer.open?.("s");
				await writer.saveSnapshot("s", { ...idle, journalSeq: 0 });
				const journal = join(writer.filesOf("s"), "journal.jsonl");
				let seq = 0;
				let seen = 0;
				for (const next of steps) {
					if (next.kind === "append") {
						const before = await readFile(journal, "utf8").catch(() => "");
						await writer.appendJournal("s", entry(++seq));
						const after = await readFile(journal, "utf8");
						// The append as a reader may find it: its line cut at a random byte.
						const line = after.slice(before.length);
						const half = before + line.slice(0, Math.max(1, Math.floor(line.length * next.cut)));
						await writeFile(journal, half);
						for (let reader = 0; reader < next.readers; reader++) await createFileStore(root, { fsync: "never" }).load("s");
						await appendFile(journal, after.slice(half.length));
					} else if (next.kind === "snapshot") {
						seen = seq;
						await writer.saveSnapshot("s", { ...idle, journalSeq: seq });
					} else {
						const loaded = await createFileStore(root, { fsync: "never" }).load("s");
						expect(loaded?.problems).toEqual([]);
					}
				}
				const loaded = await createFileStore(root, { fsync: "never" }).load("s");
				expect(loaded?.problems).toEqual([]);
				expect(loaded?.snapshot?.journal.map((each) => each.seq)).toEqual(Array.from({ length: seq - seen }, (_, index) => seen + index + 1));
			}),
			{ numRuns: PROPERTY_RUNS, seed: PROPERTY_SEED },
		);
	}, Math.max(30_000, PROPERTY_RUNS * 300));
});
