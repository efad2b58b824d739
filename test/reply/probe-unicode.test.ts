/**
 * A block cut under size pressure never falls between the two halves of a surrogate pair
 * (emoji, CJK extension characters): a half alone is not text, and a channel shows it as "�"
 * or rejects the message (found by an outside probe). Nor inside a character built of several
 * code points (a ZWJ family, a flag, a skin tone, a combining accent): each half would show as
 * a different glyph (found by a second probe).
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { BlockChunker } from "../../src/reply/block-chunker.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import { unclosedFences } from "./helpers.js";

/** True when the text holds half a surrogate pair. */
function hasLoneSurrogate(text: string): boolean {
	return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

describe("chunks of text made of characters outside the BMP", () => {
	it("a hard cut of an unbroken run of emoji ends before a pair, never inside it", () => {
		const text = `a${"😀".repeat(20)}`;
		const chunker = new BlockChunker({ minChars: 5, maxChars: 11 });
		chunker.append(text);
		const chunks = chunker.drain({ force: true }).map((chunk) => chunk.text);
		expect(chunks.length).toBeGreaterThan(1);
		for (const chunk of chunks) {
			expect(hasLoneSurrogate(chunk)).toBe(false);
			expect(chunk.length).toBeLessThanOrEqual(11);
		}
		expect(chunks.join("")).toBe(text);
	});

	it("a streaming drain under maxChars pressure cuts whole characters too", () => {
		const chunker = new BlockChunker({ minChars: 4, maxChars: 9 });
		const emitted: string[] = [];
		for (const piece of `x${"𠀀".repeat(30)}`) {
			chunker.append(piece);
			emitted.push(...chunker.drain({ force: false }).map((chunk) => chunk.text));
		}
		emitted.push(...chunker.drain({ force: true }).map((chunk) => chunk.text));
		for (const chunk of emitted) expect(hasLoneSurrogate(chunk)).toBe(false);
		expect(emitted.join("")).toBe(`x${"𠀀".repeat(30)}`);
	});

	it("a fenced block cut inside a line without a break keeps its characters whole", () => {
		const body = `b${"🎉".repeat(40)}`;
		const chunker = new BlockChunker({ minChars: 1, maxChars: 30 });
		chunker.append(`\`\`\`\n${body}\n\`\`\``);
		const chunks = chunker.drain({ force: true }).map((chunk) => chunk.text);
		expect(chunks.length).toBeGreaterThan(1);
		for (const chunk of chunks) {
			expect(hasLoneSurrogate(chunk)).toBe(false);
			expect(chunk.length).toBeLessThanOrEqual(30);
		}
		const inside = chunks.map((chunk) => chunk.replace(/^```\n/, "").replace(/\n```$/, "")).join("");
		expect(inside).toBe(body);
	});

	it("a fence whose first character is a pair that does not fit after the reopened fence ends (it once looped for ever)", () => {
		// In a child process: the loop this guards against is synchronous, and would hang the test run.
		const program = fileURLToPath(new URL("./fixtures/fence-drain.ts", import.meta.url));
		const child = spawnSync(process.execPath, ["--import", "tsx", program], { encoding: "utf8", timeout: 30_000 });
		expect(child.signal, "the chunker did not finish").toBeNull();
		expect(child.status, child.stderr).toBe(0);
		const results = JSON.parse(child.stdout) as { maxChars: number; chunks: string[] }[];
		for (const { maxChars, chunks } of results) {
			for (const chunk of chunks) expect(hasLoneSurrogate(chunk), `maxChars ${maxChars}: ${JSON.stringify(chunk)}`).toBe(false);
			const inside = chunks.map((chunk) => chunk.replace(/^```\n?/, "").replace(/\n?```$/, "")).join("");
			expect(inside.replace(/\n/g, ""), `maxChars ${maxChars}`).toBe("😀".repeat(10));
		}
	});

	it("a drain whose text so far ends in a pair's first half keeps that half for the next chunk", () => {
		const text = `${"x".repeat(25)}${"🎉".repeat(9)}`;
		const chunker = new BlockChunker({ minChars: 2, maxChars: 9, breakPreference: "paragraph" });
		// A delta that ends between the halves of a pair (36 code units: the sixth 🎉 is split).
		chunker.append(text.slice(0, 36));
		const chunks = chunker.drain({ force: false }).map((chunk) => chunk.text);
		chunker.append(text.slice(36));
		chunks.push(...chunker.drain({ force: true }).map((chunk) => chunk.text));
		for (const chunk of chunks) expect(hasLoneSurrogate(chunk), JSON.stringify(chunk)).toBe(false);
		expect(chunks.join("")).toBe(text);
	});

	it("with maxChars 1, a chunk is one whole character", () => {
		const chunker = new BlockChunker({ minChars: 1, maxChars: 1 });
		chunker.append("😀😀");
		expect(chunker.drain({ force: true }).map((chunk) => chunk.text)).toEqual(["😀", "😀"]);
	});

	it("block replies of an agent's long emoji reply are each valid text, in order, nothing lost", async () => {
		const reply = `Done ${"✅🚀".repeat(300)}`;
		// Deltas of 3 code units: most of them end in the middle of a pair.
		const scripted = createScriptedModel([{ content: reply, chunkSize: 3 }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const blocks: string[] = [];
		const replies = subscribeReplies(agent, {
			blockReplyChunking: { minChars: 40, maxChars: 101 },
			onBlockReply: (payload) => void blocks.push(payload.text ?? ""),
		});
		await agent.prompt("report");
		replies.unsubscribe();
		expect(blocks.length).toBeGreaterThan(5);
		for (const block of blocks) expect(hasLoneSurrogate(block)).toBe(false);
		expect(blocks.join("").replace(/\s/g, "")).toBe(reply.replace(/\s/g, ""));
	});
});

describe("chunks of text made of characters built from several code points", () => {
	const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });
	const charactersOf = (text: string): string[] => [...segmenter.segment(text)].map((part) => part.segment);

	it.each([
		["a ZWJ family", "👨‍👩‍👧‍👦", 13],
		["a flag", "🇺🇸", 43],
		["a skin tone", "👍🏽", 12],
		["a combining accent", "e\u0301", 40],
		["a keycap", "1️⃣", 10],
	])("a hard cut of an unbroken run never splits %s, forced or streamed a code unit at a time", (_, character, maxChars) => {
		const text = `a${character.repeat(30)}`;
		for (const streamed of [false, true]) {
			const chunker = new BlockChunker({ minChars: 1, maxChars });
			const chunks: string[] = [];
			if (streamed) {
				for (let index = 0; index < text.length; index += 1) {
					chunker.append(text.charAt(index));
					chunks.push(...chunker.drain({ force: false }).map((chunk) => chunk.text));
				}
			} else chunker.append(text);
			chunks.push(...chunker.drain({ force: true }).map((chunk) => chunk.text));
			expect(chunks.length, `streamed: ${streamed}`).toBeGreaterThan(1);
			for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(maxChars);
			expect(chunks.flatMap(charactersOf), `streamed: ${streamed}`).toEqual(charactersOf(text));
		}
	});

	it("a character that does not fit between a fenced block's closing and reopened lines is split inside the block, which every chunk closes", () => {
		// Before, the chunk ended with the block open ("```\n👨‍👩‍👧 ef") and its closing line opened a new one: the rest of the chat shown as code.
		const zalgo = `Z${"\u0336\u0301\u0316".repeat(27)}`;
		const cases: [string, number, number][] = [
			["```\nabcd 👨‍👩‍👧 efgh ijkl\n```\n", 3, 15],
			["~~~~\nab\n👨‍👩‍👧\nHello world\n~~~~\n", 3, 15],
			[`\`\`\`python\nprint('${zalgo}')\nprint('done')\n\`\`\`\n\nThat is all.`, 20, 90],
		];
		for (const [text, minChars, maxChars] of cases) {
			for (const piece of [text.length, 2]) {
				const chunker = new BlockChunker({ minChars, maxChars, breakPreference: "paragraph" });
				const chunks: string[] = [];
				for (let at = 0; at < text.length; at += piece) {
					chunker.append(text.slice(at, at + piece));
					chunks.push(...chunker.drain({ force: false }).map((chunk) => chunk.text));
				}
				chunks.push(...chunker.drain({ force: true }).map((chunk) => chunk.text));
				for (const chunk of chunks) {
					expect(chunk.length).toBeLessThanOrEqual(maxChars);
					expect(unclosedFences(chunk), JSON.stringify(chunk)).toEqual([]);
				}
				expect(chunks.join("").replace(/\s|```|~~~~|python/g, "")).toBe(text.replace(/\s|```|~~~~|python/g, ""));
			}
		}
	});

	it("block replies of an agent's reply in family emoji each hold whole families", async () => {
		const family = "👨‍👩‍👧‍👦";
		const reply = `Family: ${family.repeat(40)}`;
		const scripted = createScriptedModel([{ content: reply, chunkSize: 1 }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const blocks: string[] = [];
		const replies = subscribeReplies(agent, {
			blockReplyChunking: { minChars: 10, maxChars: 40 },
			onBlockReply: (payload) => void blocks.push(payload.text ?? ""),
		});
		await agent.prompt("who");
		replies.unsubscribe();
		expect(blocks.length).toBeGreaterThan(5);
		for (const block of blocks.slice(1)) expect(block).toMatch(new RegExp(`^(${family})+$`, "u"));
		expect(blocks.join("").replace(/\s/g, "")).toBe(reply.replace(/\s/g, ""));
	});
});
