/**
 * Every store reads a session back alike: what the memory store's load gives is what the file
 * store's gives, for whatever a tool returns in its result's details, JSON or not (a function, a
 * symbol, a Date, a Map, a Set, NaN, -0, undefined, a class instance, a sparse array). The docs
 * promise it ("every store treats what is not [JSON] the same way, the memory store included"),
 * so a test on the memory store sees what production on the file store would. It covers the class
 * of defect where the two stores copied differently: the memory store's load once used a
 * structured clone, so a function made the session unloadable there and a Date came back as a
 * Date (see `probe-round-4.test.ts`). Values JSON refuses (a BigInt, a cycle) are left to
 * `unstorable.test.ts`: both stores answer them with the same error result.
 * `PROPERTY_RUNS` (default 25) sets the runs, `PROPERTY_SEED` replays a seed.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { createFileStore } from "../../src/durable/file-store.js";
import { createMemoryStore } from "../../src/durable/store.js";
import { storedAndLoaded } from "./stored-details.js";

const PROPERTY_RUNS = Number(process.env["PROPERTY_RUNS"] ?? 25);
const PROPERTY_SEED = Number(process.env["PROPERTY_SEED"] ?? Date.now() % 2 ** 31);

class Point {
	constructor(
		readonly x: number,
		readonly y: number,
	) {}
}

/** Values JSON writes, changes, or leaves out, but does not refuse. */
const oddLeaf: fc.Arbitrary<unknown> = fc.oneof(
	fc.string({ maxLength: 8 }),
	fc.integer(),
	fc.boolean(),
	fc.constant(null),
	fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0),
	fc.constant(undefined),
	fc.constant(() => "a function"),
	fc.constant(Symbol("a symbol")),
	fc.date({ min: new Date(0), max: new Date(2 ** 40), noInvalidDate: true }),
	fc.constant(new Map([["k", 1]])),
	fc.constant(new Set([1, 2])),
	fc.constant(new Point(1, 2)),
	// A sparse array: its hole reads as null.
	fc.constant([1, , 3]),
);

const details: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
	value: fc.oneof({ depthSize: "small", withCrossShrink: true }, oddLeaf, tie("array"), tie("object")),
	array: fc.array(tie("value"), { maxLength: 3 }),
	object: fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), tie("value"), { maxKeys: 3 }),
})).value;

const folders: string[] = [];
afterAll(async () => {
	for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

describe("the stores read a session back alike", () => {
	it(
		"a tool result's details, JSON or not, load from the memory store as from the file store",
		async () => {
			const root = await mkdtemp(join(tmpdir(), "agentchart-store-reading-"));
			folders.push(root);
			let run = 0;
			await fc.assert(
				fc.asyncProperty(details, async (value) => {
					const fromMemory = await storedAndLoaded(createMemoryStore(), value);
					const fromFile = await storedAndLoaded(createFileStore(join(root, String(run++)), { fsync: "never" }), value);
					expect(fromMemory).toStrictEqual(fromFile);
				}),
				{ numRuns: PROPERTY_RUNS, seed: PROPERTY_SEED },
			);
		},
		Math.max(60_000, PROPERTY_RUNS * 2_000),
	);
});
