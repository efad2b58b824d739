/**
 * A reply cut off inside a code block: the model streams a fenced block and the run is aborted,
 * the provider fails mid-block, or the message simply ends inside the fence. Each block reply is a
 * chat message of its own, so what is flushed then closes the fence it opened (and changes nothing
 * else), as the chunker's own splits close and reopen one. Run on a real Agent.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { BlockChunkingOptions } from "../../src/reply/block-chunker.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import { createFaultyModel, type Fault } from "../../src/testing/faulty-model.js";
import type { AssistantMessage, StreamFn } from "../../src/types/index.js";
import type { Model } from "../../src/types/model.js";
import { unclosedFences } from "./helpers.js";

type Mode = "text_end" | "message_end";

interface Run {
	blocks: string[];
	assistantTexts: string[];
	/** The assistant message's text as the model said it. */
	said: string;
	stopReason: AssistantMessage["stopReason"];
}

/**
 * Runs one prompt with replies subscribed; aborts once `abortAt` characters of text have streamed.
 * `onBlockReply: false` runs without block replies (the final text goes to `assistantTexts`).
 */
async function run(
	model: { model: Model; streamFn: StreamFn },
	options: { mode?: Mode; chunking?: BlockChunkingOptions | undefined; abortAt?: number; onBlockReply?: boolean } = {},
): Promise<Run> {
	const agent = new Agent({ initialState: { model: model.model }, streamFn: model.streamFn });
	const blocks: string[] = [];
	let streamed = 0;
	agent.subscribe((event) => {
		if (event.type !== "message_update" || event.assistantMessageEvent.type !== "text_delta") return;
		streamed += event.assistantMessageEvent.delta.length;
		if (options.abortAt !== undefined && streamed >= options.abortAt) agent.abort();
	});
	const replies = subscribeReplies(agent, {
		blockReplyBreak: options.mode ?? "text_end",
		...(options.chunking ? { blockReplyChunking: options.chunking } : {}),
		...(options.onBlockReply === false ? {} : { onBlockReply: (payload) => void blocks.push(payload.text ?? "") }),
	});
	try {
		await agent.prompt("Show me the code");
	} finally {
		replies.unsubscribe();
	}
	const last = agent.state.messages.at(-1);
	if (last?.role !== "assistant") throw new Error("no assistant reply");
	const said = last.content.map((block) => (block.type === "text" ? block.text : "")).join("");
	return { blocks, assistantTexts: [...replies.assistantTexts], said, stopReason: last.stopReason };
}

// A timer between deltas lets the listener that aborts see each delta before the next streams.
const PACED = { chunkSize: 5, delayMs: 1 };
const CODE = "Here is the code:\n\n```ts\nconst a = 1;\nconst b = 2;\nconst c = 3;\n```\n\nThat is all.";

describe("a reply cut off inside a code fence", () => {
	for (const mode of ["text_end", "message_end"] as const) {
		it(`closes the fence in the block flushed at an abort (${mode}), and changes nothing else`, async () => {
			const scripted = createScriptedModel([{ content: CODE }], PACED);
			const result = await run(scripted, { mode, abortAt: 40 });
			expect(result.stopReason).toBe("aborted");
			expect(result.said).toBe("Here is the code:\n\n```ts\nconst a = 1;\nco");
			expect(result.blocks).toEqual([`${result.said}\n\`\`\``]);
			expect(result.assistantTexts).toEqual(result.blocks);
		});

		it(`closes the last chunk's fence at an abort when the chunker split the block (${mode})`, async () => {
			const scripted = createScriptedModel([{ content: CODE }], PACED);
			const result = await run(scripted, { mode, abortAt: 50, chunking: { minChars: 10, maxChars: 30 } });
			expect(result.stopReason).toBe("aborted");
			// The chunker's own split closes and reopens; the abort closes the rest the same way.
			expect(result.blocks).toEqual(["Here is the code:", "```ts\nconst a = 1;\n```", "```ts\nconst b = 2;\n```"]);
		});
	}

	it("closes the fence when the provider fails mid-block", async () => {
		const faulty = createFaultyModel([{ content: CODE }], { chunkSize: 5, faults: { 0: { kind: "reset", afterDeltas: 8 } } });
		const result = await run(faulty);
		expect(result.stopReason).toBe("error");
		expect(result.said).toBe(CODE.slice(0, 40));
		expect(result.blocks).toEqual([`${result.said}\n\`\`\``]);
	});

	it("closes the fence of a message that ends inside it, with the fence's own marker and indentation", async () => {
		const scripted = createScriptedModel([{ content: "Run:\n\n  ````sh\n  npm test\n" }], { chunkSize: 3 });
		const result = await run(scripted, { mode: "message_end" });
		expect(result.stopReason).toBe("stop");
		expect(result.blocks).toEqual(["Run:\n\n  ````sh\n  npm test\n  ````"]);
	});

	it("closes the fence in the text recorded without block replies", async () => {
		const scripted = createScriptedModel([{ content: CODE }], PACED);
		const result = await run(scripted, { abortAt: 40, onBlockReply: false });
		expect(result.assistantTexts).toEqual([`${result.said}\n\`\`\``]);
	});

	it("splits a block whose closing line would not fit in maxChars, instead of sending it over the limit", async () => {
		const scripted = createScriptedModel([{ content: "Intro text.\n\n```\nabcdefgh" }]);
		const result = await run(scripted, { chunking: { minChars: 5, maxChars: 24 } });
		expect(result.blocks).toEqual(["Intro text.", "```\nabcdefgh\n```"]);
		for (const block of result.blocks) expect(block.length).toBeLessThanOrEqual(24);
	});
});

describe("a text block that ends inside a code fence", () => {
	for (const mode of ["text_end", "message_end"] as const) {
		it(`closes the fence there, so the next block's reasoning tags are not read as code (${mode})`, async () => {
			const scripted = createScriptedModel(
				[{ content: [{ type: "text", text: "Look:\n\n```js\nlet a = 1;" }, { type: "text", text: "<think>secret</think>Then this." }] }],
				{ chunkSize: 3 },
			);
			const result = await run(scripted, { mode });
			const sent = result.blocks.join("\n\n");
			expect(sent).not.toContain("secret");
			expect(sent).toBe("Look:\n\n```js\nlet a = 1;\n```\n\nThen this.");
			for (const block of result.blocks) expect(unclosedFences(block)).toEqual([]);
		});
	}
});

// ---- property: whatever cuts the reply off, the channel gets what the model said, once, in order ----

// Fence lines only at line starts: a chunk cut mid-line can turn the rest of a line into a fence
// line ("world. ```ts" cut after "world."), a class the chunker does not handle yet (docs/reply.md).
const TOKENS = ["Hello", "world.", " ", "\n", "\n\n", "\n```ts\n", "\n```\n", "\n~~~\n", "const x = 1;", "\n  ```\n", "\n````md\n"];

/** Text without whitespace and fence lines: what a reader reads, fences closed or not. */
function words(text: string): string {
	return text.replace(/^ {0,3}(`{3,}|~{3,}).*$/gm, "").replace(/\s+/g, "");
}

/** Trailing spaces of lines dropped, blank lines collapsed: the documented normalisation. */
function collapseBlankLines(text: string): string {
	return text.replace(/[ \t]+\n/g, "\n").replace(/\n(?:[ \t]*\n)+/g, "\n\n");
}

const cutOff: fc.Arbitrary<{ abortAt?: number; fault?: Fault }> = fc.oneof(
	fc.record({ abortAt: fc.integer({ min: 1, max: 200 }) }),
	fc.record({ fault: fc.record({ kind: fc.constantFrom("reset" as const, "error" as const, "output-limit" as const), afterDeltas: fc.integer({ min: 0, max: 40 }) }) }),
	fc.constant({}),
);

describe("replies cut off anywhere (property)", () => {
	it("deliver what the model said, once and in order, in blocks that close every fence they open", async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.array(fc.constantFrom(...TOKENS), { minLength: 1, maxLength: 25 }).map((tokens) => tokens.join("")),
				cutOff,
				fc.constantFrom<Mode>("text_end", "message_end"),
				fc.option(fc.record({ minChars: fc.integer({ min: 1, max: 30 }), extra: fc.integer({ min: 20, max: 60 }) }), { nil: undefined }),
				fc.integer({ min: 1, max: 7 }),
				async (content, { abortAt, fault }, mode, sizes, chunkSize) => {
					const reply = [{ content }];
					const delayMs = abortAt === undefined ? 0 : 1;
					const model = fault
						? createFaultyModel(reply, { chunkSize, faults: { 0: fault } })
						: createScriptedModel(reply, { chunkSize, delayMs });
					const chunking = sizes && { minChars: sizes.minChars, maxChars: sizes.minChars + sizes.extra };
					const result = await run(model, { mode, chunking, ...(abortAt === undefined ? {} : { abortAt }) });
					expect(words(result.blocks.join("\n"))).toBe(words(result.said));
					for (const block of result.blocks) expect(unclosedFences(block)).toEqual([]);
					if (chunking) for (const block of result.blocks) expect(block.length).toBeLessThanOrEqual(chunking.maxChars);
					// One block per text block without chunking: exactly the text (trimmed, blank lines
					// collapsed outside code, as documented), and the closing line of the fence it left open.
					if (!chunking && result.blocks.length === 1) {
						const [block = ""] = result.blocks;
						const text = collapseBlankLines(result.said.trim());
						const sent = collapseBlankLines(block);
						expect(sent.startsWith(text)).toBe(true);
						expect(sent.slice(text.length)).toMatch(/^(\n {0,3}(`{3,}|~{3,}))?$/);
					}
				},
			),
			{ numRuns: 150 },
		);
	});
});
