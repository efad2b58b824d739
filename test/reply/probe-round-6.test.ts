/**
 * A defect found by a channel's use of the reply layer (scratch/probeAC, 2026-12-07): the silent
 * token at the end of a longer answer, cut by the chunker into a block of its own, was posted to
 * the channel as a message reading "NO_REPLY".
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { createBlockReplyPipeline } from "../../src/reply/block-reply-pipeline.js";
import { DEFAULT_BLOCK_CHUNKING } from "../../src/reply/block-chunker.js";
import { filterFinalPayloads } from "../../src/reply/final-payloads.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import type { ReplyPayload } from "../../src/reply/types.js";

async function posted(answer: string, chunking: { minChars: number; maxChars: number }): Promise<{ posted: string[]; finals: number; texts: string[] }> {
	const scripted = createScriptedModel([{ content: answer }], { chunkSize: 9 });
	const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
	const sent: ReplyPayload[] = [];
	const pipeline = createBlockReplyPipeline({ onBlockReply: async (payload) => void sent.push(payload), timeoutMs: 5000 });
	const replies = subscribeReplies(agent, { blockReplyChunking: chunking, onBlockReply: (payload) => pipeline.enqueue(payload), onBlockReplyFlush: () => pipeline.flush({ force: true }) });
	await agent.prompt("status?");
	await pipeline.flush({ force: true });
	const finals = filterFinalPayloads([{ text: replies.assistantTexts.join("\n\n") }], { pipeline });
	replies.unsubscribe();
	agent.dispose();
	return { posted: sent.map((payload) => payload.text ?? ""), finals: finals.length, texts: [...replies.assistantTexts] };
}

describe("the silent token cut into a block of its own", () => {
	it("is not posted after a paragraph the default chunking sent", async () => {
		const paragraph = `${"word ".repeat(165)}end.`;
		const result = await posted(`${paragraph}\n\nNO_REPLY`, DEFAULT_BLOCK_CHUNKING);
		expect(result).toEqual({ posted: [paragraph], finals: 0, texts: [paragraph] });
	});

	it("is not posted after a sentence small blocks sent", async () => {
		const result = await posted("Done, or not. NO_REPLY", { minChars: 1, maxChars: 40 });
		expect(result.posted).toEqual(["Done, or not."]);
		expect(result.texts).toEqual(["Done, or not."]);
	});
});
