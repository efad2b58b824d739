/**
 * Defects found by using the reply layer as a channel would (scripts in scratch/probe-reply/),
 * each pinned here: chunking options that hung the agent, a short final answer taken as
 * delivered because a block held it inside a longer word, two thinking-tag segments glued into
 * one, and half an emoji shown in a partial reply.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { BlockChunker } from "../../src/reply/block-chunker.js";
import { createBlockReplyPipeline } from "../../src/reply/block-reply-pipeline.js";
import { filterFinalPayloads } from "../../src/reply/final-payloads.js";
import { stripReasoningTags } from "../../src/reply/reasoning-tags.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import type { SubscribeRepliesParams } from "../../src/reply/subscribe-replies-options.js";
import type { AssistantMessage } from "../../src/types/index.js";
import { FakeAgent } from "./helpers.js";

describe("chunking options that cannot cut", () => {
	it("are refused when subscribing, not looped on inside the agent's event", () => {
		// Number(process.env.MIN_CHARS) with the variable unset: the cutter compared against NaN for ever.
		expect(() => subscribeReplies(new FakeAgent(), { blockReplyChunking: { minChars: Number.NaN } })).toThrow(RangeError);
		expect(() => subscribeReplies(new FakeAgent(), { blockReplyChunking: { maxChars: Number.NaN } })).toThrow(/maxChars is NaN/);
		expect(() => new BlockChunker({ minChars: Number.NaN })).toThrow(RangeError);
	});

	it("refuses a size that is not a number and an unknown break preference or mode", () => {
		const bad = [
			{ blockReplyChunking: { minChars: "10" } },
			{ blockReplyChunking: { breakPreference: "word" } },
			{ blockReplyBreak: "message-end" },
			{ reasoningMode: "hidden" },
			{ verbose: true },
			{ toolResultFormat: "html" },
		] as unknown as SubscribeRepliesParams[];
		for (const params of bad) expect(() => subscribeReplies(new FakeAgent(), params)).toThrow();
	});

	it("still clamps sizes below 1 and takes Infinity as no limit", () => {
		expect(new BlockChunker({ minChars: 0, maxChars: -5 }).maxChars).toBe(1);
		const chunker = new BlockChunker({ maxChars: Number.POSITIVE_INFINITY });
		chunker.append("One.\n\nTwo.");
		expect(chunker.drain({ force: true }).map((chunk) => chunk.text)).toEqual(["One.\n\nTwo."]);
	});
});

describe("a final payload", () => {
	it("is not covered by a delivered block that holds its text inside a longer word", async () => {
		const pipeline = createBlockReplyPipeline({ onBlockReply: () => undefined });
		pipeline.enqueue({ text: "Now checking whether the deploy went out." });
		await pipeline.flush({ force: true });
		// The answer "No" was never sent: "Now" is another word.
		expect(filterFinalPayloads([{ text: "No" }], { pipeline })).toEqual([{ text: "No" }]);
		expect(filterFinalPayloads([{ text: "heck" }], { pipeline })).toEqual([{ text: "heck" }]);
		// Whole words the blocks delivered still count as delivered.
		expect(filterFinalPayloads([{ text: "Now checking whether the deploy went out." }], { pipeline })).toEqual([]);
		expect(filterFinalPayloads([{ text: "a\n\nb" }], { sentPayloads: [{ text: "a" }, { text: "b" }] })).toEqual([]);
	});
});

describe("reasoning written in two thinking tags", () => {
	it("stays two paragraphs: in the transcript, the Reasoning block and stripReasoningTags", async () => {
		const scripted = createScriptedModel([{ content: "<think>plan A</think>Answer one.\n\n<think>plan B</think>Answer two." }], { chunkSize: 5 });
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const reasoning: string[] = [];
		subscribeReplies(agent, { reasoningMode: "on", onBlockReply: (payload) => void (payload.isReasoning && reasoning.push(payload.text ?? "")) });
		await agent.prompt("go");
		expect(reasoning).toEqual(["Reasoning:\n_plan A_\n\n_plan B_"]);
		expect((agent.state.messages[1] as AssistantMessage).content[0]).toEqual({ type: "thinking", thinking: "plan A\n\nplan B" });
		expect(stripReasoningTags("<think>a</think>Visible b</think>c")).toEqual({ visible: "c", reasoning: "a\n\nVisible b" });
		expect(stripReasoningTags("<think>one\n</think>x<think>two</think>").reasoning).toBe("one\n\ntwo");
	});
});

describe("an emoji split between two deltas", () => {
	it("never shows half of its surrogate pair in a partial reply, and the deltas add up to the text", async () => {
		// chunkSize 1 cuts every emoji in two, as a provider that splits a JSON "\ud83d\ude00" escape does.
		const scripted = createScriptedModel([{ content: "Hi 👋 there 🇫🇷!" }], { chunkSize: 1 });
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const partials: { text: string; delta: string }[] = [];
		subscribeReplies(agent, { onPartialReply: ({ text, delta }) => void partials.push({ text, delta }) });
		await agent.prompt("go");
		const brokenAtEnd = partials.filter(({ text }) => /[\uD800-\uDBFF]$/.test(text));
		expect(brokenAtEnd).toEqual([]);
		expect(partials.map(({ delta }) => delta).join("")).toBe("Hi 👋 there 🇫🇷!");
		expect(partials.at(-1)?.text).toBe("Hi 👋 there 🇫🇷!");
	});
});
