import { describe, expect, it } from "vitest";
import { parseFenceSpans } from "../../src/reply/fences.js";
import { BlockChunker } from "../../src/reply/block-chunker.js";

function drainTexts(chunker: BlockChunker, force = false): string[] {
	return chunker.drain({ force }).map((chunk) => chunk.text);
}

describe("BlockChunker", () => {
	it("keeps a fenced block whole and waits with the rest (CH1)", () => {
		const chunker = new BlockChunker({ minChars: 1, maxChars: 40, breakPreference: "paragraph" });
		chunker.append("Intro\n```js\nconsole.log('x')\n```\n\nAfter first line\nAfter second line");
		const chunks = drainTexts(chunker);
		expect(chunks).toHaveLength(1);
		expect(chunks[0]).toContain("console.log");
		expect(chunks[0]).toMatch(/```$/);
		expect(chunks[0]).not.toContain("After");
		expect(chunker.bufferedText.startsWith("After")).toBe(true);
	});

	it("cuts at the last paragraph break past minChars (CH2)", () => {
		const chunker = new BlockChunker({ minChars: 30, maxChars: 200, flushOnParagraph: true });
		chunker.append("First paragraph.\n\nSecond paragraph.\n\nThird paragraph.");
		expect(drainTexts(chunker)).toEqual(["First paragraph.\n\nSecond paragraph."]);
		expect(chunker.bufferedText).toBe("Third paragraph.");
	});

	it("waits below minChars and emits everything when forced (CH3)", () => {
		const chunker = new BlockChunker({ minChars: 100, maxChars: 200, flushOnParagraph: true });
		chunker.append("First paragraph.\n \nSecond paragraph.");
		expect(drainTexts(chunker)).toEqual([]);
		expect(drainTexts(chunker, true)).toEqual(["First paragraph.\n \nSecond paragraph."]);
		expect(chunker.bufferedText).toBe("");
	});

	it("hard-breaks a word longer than maxChars (CH4)", () => {
		const chunker = new BlockChunker({ minChars: 1, maxChars: 10, flushOnParagraph: true });
		chunker.append("abcdefghijKLMNOP");
		expect(drainTexts(chunker)).toEqual(["abcdefghij"]);
		expect(chunker.bufferedText).toBe("KLMNOP");
	});

	it("keeps every chunk within maxChars (CH5)", () => {
		const chunker = new BlockChunker({ minChars: 1, maxChars: 10, flushOnParagraph: true });
		chunker.append("abcdefghijk\n\nRest");
		const chunks = drainTexts(chunker);
		expect(chunks).toEqual(["abcdefghij", "k"]);
		expect(chunks.every((chunk) => chunk.length <= 10)).toBe(true);
		expect(chunker.bufferedText).toBe("Rest");
	});

	it("ignores paragraph breaks inside a fence (CH6)", () => {
		const chunker = new BlockChunker({ minChars: 10, maxChars: 200, flushOnParagraph: true });
		chunker.append("Intro\n```js\nconst a = 1;\n\nconst b = 2;\n```\n\nAfter fence");
		expect(drainTexts(chunker)).toEqual(["Intro\n```js\nconst a = 1;\n\nconst b = 2;\n```"]);
		expect(chunker.bufferedText).toBe("After fence");
	});

	it("splits a long fence into several balanced chunks (CH7)", () => {
		const chunker = new BlockChunker({ minChars: 20, maxChars: 80 });
		chunker.append(`\`\`\`txt\n${"line\n".repeat(600)}\`\`\``);
		const chunks = drainTexts(chunker, true);
		expect(chunks.length).toBeGreaterThan(2);
		for (const chunk of chunks) {
			expect(chunk.length).toBeLessThanOrEqual(80);
			expect(chunk.startsWith("```txt")).toBe(true);
			expect(chunk.match(/```/g)?.length).toBeGreaterThanOrEqual(2);
		}
	});

	it("closes and reopens a fence cut inside a single long line, counting both lines against maxChars (CH8, #129487)", () => {
		const chunker = new BlockChunker({ minChars: 10, maxChars: 30 });
		chunker.append(`\`\`\`txt\n${"a".repeat(80)}\n\`\`\``);
		const chunks = chunker.drain({ force: true });
		expect(chunks.length).toBeGreaterThan(2);
		for (const chunk of chunks) {
			expect(chunk.text.length).toBeLessThanOrEqual(30);
			expect(chunk.text.startsWith("```txt")).toBe(true);
			expect(chunk.text.match(/```/g)?.length).toBeGreaterThanOrEqual(2);
			expect(chunk.text).not.toContain("``\n```");
		}
		expect(chunks[0]?.closedFence).toBe("```");
		expect(chunks[0]?.reopenedFence).toBe("```txt");
	});

	it("does not cut mid-sentence at a space while a better boundary may still come (#143641)", () => {
		const chunker = new BlockChunker({ minChars: 10, maxChars: 200 });
		chunker.append("This sentence is still being written and");
		expect(drainTexts(chunker)).toEqual([]);
		chunker.append(" now it ends. Next");
		expect(drainTexts(chunker)).toEqual(["This sentence is still being written and now it ends."]);
	});

	it("treats a fence line followed by text as content, not a close (#96745)", () => {
		const chunker = new BlockChunker({ minChars: 1, maxChars: 200 });
		chunker.append("```\ncode\n``` not a close\n\nstill code\n```\n\nAfter");
		expect(drainTexts(chunker)).toEqual(["```\ncode\n``` not a close\n\nstill code\n```"]);
	});

	it("cuts a code line of fence markers inside a block where no piece closes the block (CI stress, seed -100193382)", () => {
		// "``````js" is code (a close has nothing after its markers). Every cut of it makes a piece
		// that reads as a fence line; cut after five backticks, the head "`````" closed the block
		// before the chunk's own closing line, which then opened a block left open.
		const chunker = new BlockChunker({ minChars: 5, maxChars: 40 });
		chunker.append("```MEDIA: https://x.test/a.png\n``````js\n```");
		const chunks = drainTexts(chunker, true);
		expect(chunks).toEqual(["```MEDIA: https://x.test/a.png\n``\n```", "```MEDIA: https://x.test/a.png\n``\n```", "```MEDIA: https://x.test/a.png\n``js\n```"]);
		for (const chunk of chunks) expect(parseFenceSpans(chunk).map((span) => span.closed)).toEqual([true]);
	});

	it("waits for the characters that decide whether a fence marker follows a cut, rather than cut before a marker that then comes", () => {
		// The family emoji (11 code units) fills the chunk; the "`" after it may be a fence marker's
		// first: cut there at once, the rest became the fence line "```js" once "``js" came.
		const chunker = new BlockChunker({ minChars: 5, maxChars: 11 });
		chunker.append("👨‍👩‍👧‍👦`");
		expect(drainTexts(chunker)).toEqual([]);
		chunker.append("``js\n");
		const chunks = drainTexts(chunker, true);
		for (const chunk of chunks) expect(parseFenceSpans(chunk)).toEqual([]);
		expect(chunks.join("")).toBe("👨‍👩‍👧‍👦```js");
	});

	it("closes the fence a forced drain leaves open, as a split closes it, with the closing line counted", () => {
		const chunker = new BlockChunker({ minChars: 1, maxChars: 100 });
		chunker.append("Run:\n\n~~~~sh\nnpm test");
		expect(chunker.drain({ force: true })).toEqual([{ text: "Run:\n\n~~~~sh\nnpm test\n~~~~", closedFence: "~~~~" }]);
		const tight = new BlockChunker({ minChars: 1, maxChars: 20 });
		tight.append("Run:\n\n```sh\nnpm test");
		expect(drainTexts(tight, true)).toEqual(["Run:", "```sh\nnpm test\n```"]);
	});

	it("cuts a fence below minChars, closed, rather than hard-cutting it open, when minChars leaves no room for the closing line", () => {
		const chunker = new BlockChunker({ minChars: 30, maxChars: 31 });
		chunker.append(`\`\`\`\n${"line\n".repeat(12)}`);
		const chunks = drainTexts(chunker);
		expect(chunks.length).toBeGreaterThan(0);
		for (const chunk of chunks) expect(chunk).toMatch(/^```\n(line\n)+```$/);
	});

	it("uses defaults of 800/1200", () => {
		const chunker = new BlockChunker();
		expect([chunker.minChars, chunker.maxChars]).toEqual([800, 1200]);
	});
});

describe("blank lines that open the buffer", () => {
	// A probe: the paragraph break before "Three." arrived with its first letters, counted against
	// maxChars 6, and "Three." was cut into "Thre" and "e." when the stream came a character at a time.
	it("do not count against maxChars, so a paragraph that fits is not cut however the text arrived", () => {
		const text = "One.\n\nTwo.\n\nThree.\n\nFour.";
		for (const size of [1, 2, 3, 4, 5, text.length]) {
			const chunker = new BlockChunker({ minChars: 1, maxChars: 6 });
			const chunks: string[] = [];
			for (let at = 0; at < text.length; at += size) {
				chunker.append(text.slice(at, at + size));
				chunks.push(...chunker.drain({ force: false }).map((chunk) => chunk.text));
			}
			chunks.push(...chunker.drain({ force: true }).map((chunk) => chunk.text));
			expect({ size, chunks }).toEqual({ size, chunks: ["One.", "Two.", "Three.", "Four."] });
		}
	});

	it("are left out of the buffer and of the length minChars is measured by", () => {
		const chunker = new BlockChunker({ minChars: 3, maxChars: 20 });
		chunker.append("\n\n  \nab");
		expect(chunker.drain({ force: false })).toEqual([]);
		expect(chunker.bufferedText).toBe("ab");
	});
});
