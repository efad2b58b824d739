/**
 * The chunker parses code fences once per drain (OpenClaw's CH7), and cutting that way gives
 * exactly the chunks of the chunker that re-parsed the rest after every chunk (kept, frozen, in
 * the benchmark as `QuadraticBlockChunker`).
 */
// @ts-nocheck

import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { fencedReply, QuadraticBlockChunker } from "../../bench/reply-chunker.js";
import { BlockChunker, type BlockChunkingOptions } from "../../src/reply/block-chunker.js";
import { parseFenceSpans } from "../../src/reply/fences.js";

vi.mock("../../src/reply/fences.js", async (importOriginal) => {
	const actual = await importOriginal<typeof import("../../src/reply/fences.js")>();
	return { ...actual, parseFenceSpans: vi.fn(actual.parseFenceSpans) };
});

describe("the cost of a drain", () => {
	it("parses the fences of a long fenced text once per drain (CH7)", () => {
		const chunker = new BlockChunker({ minChars: 20, maxChars: 80 });
		chunker.append(`\`\`\`txt\n${"line\n".repeat(600)}\`\`\``);
		vi.mocked(parseFenceSpans).mockClear();
		const chunks = chunker.drain({ force: true });
		expect(chunks.length).toBeGreaterThan(40);
		expect(parseFenceSpans).toHaveBeenCalledTimes(1);
		expect(chunker.fenceParses).toBe(1);
	});

	it("parses once per drain for a 200 KB fenced reply with the default sizes", () => {
		const chunker = new BlockChunker();
		chunker.append(fencedReply(200_000));
		vi.mocked(parseFenceSpans).mockClear();
		expect(chunker.drain({ force: true }).length).toBeGreaterThan(150);
		expect(parseFenceSpans).toHaveBeenCalledTimes(1);
	});

	it("does not parse at all when the whole buffer fits in one block", () => {
		const chunker = new BlockChunker({ minChars: 1, maxChars: 100 });
		chunker.append("```js\nshort\n```");
		vi.mocked(parseFenceSpans).mockClear();
		expect(chunker.drain({ force: true }).map((chunk) => chunk.text)).toEqual(["```js\nshort\n```"]);
		expect(parseFenceSpans).not.toHaveBeenCalled();
	});
});

const PIECES = [
	"word",
	" ",
	"  ",
	"\t",
	"\n",
	"\n\n",
	"\n  \n",
	"\r\n",
	".",
	"!",
	"?)",
	"\"",
	"```",
	"```js",
	"~~~",
	"````md",
	"``` not a close",
	"   ```",
	"    ```",
	"``",
	"x".repeat(30),
	"Sentence. ",
	"a ```js\n",
	" ~~~",
];

const optionsArbitrary: fc.Arbitrary<BlockChunkingOptions> = fc.record({
	minChars: fc.integer({ min: 1, max: 40 }),
	maxChars: fc.integer({ min: 1, max: 90 }),
	breakPreference: fc.constantFrom("paragraph" as const, "newline" as const, "sentence" as const),
	flushOnParagraph: fc.boolean(),
});

describe("sliding over parsed fences", () => {
	it("cuts exactly like re-parsing the rest after every chunk, for any text, sizes and drain schedule", () => {
		fc.assert(
			fc.property(
				fc.array(fc.constantFrom(...PIECES), { maxLength: 60 }),
				optionsArbitrary,
				fc.array(fc.tuple(fc.integer({ min: 1, max: 60 }), fc.boolean()), { maxLength: 8 }),
				(pieces, options, schedule) => {
					const text = pieces.join("");
					const current = new BlockChunker(options);
					const quadratic = new QuadraticBlockChunker(options);
					let rest = text;
					for (const [size, force] of schedule) {
						current.append(rest.slice(0, size));
						quadratic.append(rest.slice(0, size));
						rest = rest.slice(size);
						expect(current.drain({ force })).toEqual(quadratic.drain({ force }));
						expect(current.bufferedText).toBe(quadratic.bufferedText);
					}
					current.append(rest);
					quadratic.append(rest);
					expect(current.drain({ force: true })).toEqual(quadratic.drain({ force: true }));
					expect(current.bufferedText).toBe(quadratic.bufferedText);
				},
			),
			{ numRuns: 3000 },
		);
	});
});
