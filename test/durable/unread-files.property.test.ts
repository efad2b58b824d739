/**
 * Property: whatever damage a file store session's files took (a snapshot deleted or garbled, the
 * one before too, a journal line garbled, the journal cut at any byte), the load that continues
 * the session keeps every byte it was given, in the session's files or in an `unread-*`
 * directory, except what an append cut short by a crash leaves: a last line without its newline.
 * A load that destroys what it could not read leaves nothing to recover from (see
 * unread-files-kept.test.ts for the cases this found). `PROPERTY_RUNS` (default 150) sets the runs,
 * `PROPERTY_SEED` replays a seed.
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-unread-property-");
const PROPERTY_RUNS = Number(process.env["PROPERTY_RUNS"] ?? 150);
const FILES = ["snapshot.json", "snapshot.prev.json", "journal.jsonl"] as const;
type FileName = (typeof FILES)[number];

type Damage =
	| { kind: "delete"; files: FileName[] }
	| { kind: "garble"; file: FileName; at: number }
	| { kind: "garble-line"; line: number }
	| { kind: "cut"; at: number };

const damage: fc.Arbitrary<Damage> = fc.oneof(
	fc.record({ kind: fc.constant("delete" as const), files: fc.subarray([...FILES], { minLength: 1 }) }),
	fc.record({ kind: fc.constant("garble" as const), file: fc.constantFrom(...FILES), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
	fc.record({ kind: fc.constant("garble-line" as const), line: fc.nat(20) }),
	fc.record({ kind: fc.constant("cut" as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
);

function load(root: string): Promise<Agent> {
	const scripted = createScriptedModel(Array.from({ length: 12 }, (_, index) => ({ content: `reply ${index + 1}` })));
	return Agent.load({ store: createFileStore(root), sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
}

/** Changes one character of `text` at the fraction `at` of its length (to one it cannot be). */
function garbled(text: string, at: number): string {
	if (text.length === 0) return "#";
	const index = Math.min(text.length - 1, Math.floor(at * text.length));
	return `${text.slice(0, index)}${text[index] === "#" ? "%" : "#"}${text.slice(index + 1)}`;
}

function apply(files: string, hurt: Damage): void {
	const path = (name: FileName) => join(files, name);
	if (hurt.kind === "delete") for (const name of hurt.files) rmSync(path(name), { force: true });
	else if (hurt.kind === "garble") {
		if (existsSync(path(hurt.file))) writeFileSync(path(hurt.file), garbled(readFileSync(path(hurt.file), "utf8"), hurt.at));
	} else if (hurt.kind === "garble-line") {
		const lines = readFileSync(path("journal.jsonl"), "utf8").split("\n");
		const index = hurt.line % Math.max(1, lines.length - 1);
		lines[index] = garbled(lines[index] ?? "", 0.5);
		writeFileSync(path("journal.jsonl"), lines.join("\n"));
	} else {
		const text = readFileSync(path("journal.jsonl"), "utf8");
		writeFileSync(path("journal.jsonl"), text.slice(0, Math.floor(hurt.at * text.length)));
	}
}

/** Each of the session's files that is there, by name. */
function read(dir: string): Partial<Record<FileName, string>> {
	const found: Partial<Record<FileName, string>> = {};
	for (const name of FILES) if (existsSync(join(dir, name))) found[name] = readFileSync(join(dir, name), "utf8");
	return found;
}

describe("a file store session whose files were damaged", () => {
	it("property: the load that continues it keeps every byte of them, but for an append a crash cut short", async () => {
		await fc.assert(
			fc.asyncProperty(fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }), damage, async (saves, hurt) => {
				const root = await tempDir();
				const first = await load(root);
				for (const [index, save] of saves.entries()) {
					await first.prompt(`prompt ${index + 1}`);
					if (save) await first.save();
				}
				await first.saved();
				first.dispose();
				const files = createFileStore(root).filesOf("s");
				apply(files, hurt);
				const given = read(files);

				const second = await load(root);
				await second.waitForIdle();
				await second.saved();
				second.dispose();
				const session = createFileStore(root).directoryOf("s");
				const now = read(createFileStore(root).filesOf("s"));
				const kept = readdirSync(session)
					.filter((name) => name.startsWith("unread-"))
					.map((name) => read(join(session, name)));
				for (const name of FILES) {
					const text = given[name];
					if (text === undefined) continue;
					const keptAside = kept.some((aside) => aside[name] === text);
					// Where it was (a journal grown by what the load appended), or as the one before.
					const inPlace = name === "journal.jsonl" ? (now[name] ?? "").startsWith(text) : now[name] === text || (name === "snapshot.json" && now["snapshot.prev.json"] === text);
					// An append cut short: all but a last line without its newline is there.
					const cutShort = name === "journal.jsonl" && !text.endsWith("\n") && (now[name] ?? "").startsWith(text.slice(0, text.lastIndexOf("\n") + 1));
					expect(keptAside || inPlace || cutShort, `${name} (${JSON.stringify(hurt)}): neither in place nor kept`).toBe(true);
				}
			}),
			{ numRuns: PROPERTY_RUNS, ...(process.env["PROPERTY_SEED"] ? { seed: Number(process.env["PROPERTY_SEED"]) } : {}) },
		);
	}, Math.max(30_000, PROPERTY_RUNS * 500));
});
