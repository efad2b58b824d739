// @ts-nocheck
import { describe, expect, it } from "vitest";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import { stripReasoningTags } from "../../src/reply/reasoning-tags.js";
import type { ReasoningUpdate, ReplyPayload } from "../../src/reply/types.js";
import { FakeAgent } from "./helpers.js";

const TAGS = ["think", "thinking", "thought", "antthinking"] as const;

describe("reasoning modes", () => {
	it.each(TAGS)("streams <%s> reasoning and sends only the answer (A1–A4)", (tag) => {
		const agent = new FakeAgent();
		const blocks: ReplyPayload[] = [];
		const reasoning: ReasoningUpdate[] = [];
		subscribeReplies(agent, {
			reasoningMode: "stream",
			blockReplyBreak: "message_end",
			onBlockReply: (payload) => void blocks.push(payload),
			onReasoningStream: (update) => void reasoning.push(update),
		});
		agent.messageStart();
		agent.delta(`<${tag}>\nBecause`);
		agent.delta(` it helps\n</${tag}>\n\nFinal answer`);
		agent.messageEnd(`<${tag}>\nBecause it helps\n</${tag}>\n\nFinal answer`);
		expect(blocks).toEqual([{ text: "Final answer" }]);
		expect(reasoning.at(-1)?.text).toBe("Reasoning:\n_Because it helps_");
	});

	it.each(TAGS)("never leaks <%s> reasoning into chunked text_end blocks (A7–A10)", (tag) => {
		const agent = new FakeAgent();
		const blocks: ReplyPayload[] = [];
		subscribeReplies(agent, {
			blockReplyBreak: "text_end",
			blockReplyChunking: { minChars: 5, maxChars: 50, breakPreference: "newline" },
			onBlockReply: (payload) => void blocks.push(payload),
		});
		agent.messageStart();
		agent.delta(`<${tag}>Reasoning chunk that should not leak`);
		expect(blocks).toEqual([]);
		agent.delta(`</${tag}>\n\nFinal answer`);
		agent.bareTextEnd();
		expect(blocks.length).toBeGreaterThan(0);
		expect(blocks.some((block) => block.text?.includes("Reasoning") || block.text?.includes(`<${tag}`))).toBe(false);
		expect(blocks.map((block) => block.text).join("")).toBe("Final answer");
	});

	it("streams native thinking with the full content of thinking_end (A11)", () => {
		const agent = new FakeAgent();
		const reasoning: ReasoningUpdate[] = [];
		subscribeReplies(agent, { reasoningMode: "stream", onReasoningStream: (update) => void reasoning.push(update) });
		agent.messageStart();
		agent.thinkingDelta("Checking files");
		agent.thinkingEnd("Checking files done");
		expect(reasoning.map((update) => update.text)).toEqual([
			"Reasoning:\n_Checking files_",
			"Reasoning:\n_Checking files done_",
		]);
	});

	it("streams each reasoning state once when native and tagged reasoning overlap (A12, adapted)", () => {
		const agent = new FakeAgent();
		const reasoning: ReasoningUpdate[] = [];
		subscribeReplies(agent, { reasoningMode: "stream", onReasoningStream: (update) => void reasoning.push(update) });
		agent.messageStart();
		agent.delta("<think>Checking", 1);
		agent.thinkingEnd("Native", 0);
		agent.delta(" files</think>\nFinal answer", 1);
		agent.messageEnd();
		const texts = reasoning.map((update) => update.text);
		expect(new Set(texts).size).toBe(texts.length);
	});

	it("sends reasoning as a separate block before the answer in message_end mode (H1)", () => {
		const agent = new FakeAgent();
		const blocks: ReplyPayload[] = [];
		subscribeReplies(agent, {
			reasoningMode: "on",
			blockReplyBreak: "message_end",
			onBlockReply: (payload) => void blocks.push(payload),
		});
		agent.messageStart();
		agent.messageEnd([
			{ type: "thinking", thinking: "Because it helps" },
			{ type: "text", text: "Final answer" },
		]);
		expect(blocks).toEqual([
			{ text: "Reasoning:\n_Because it helps_", isReasoning: true },
			{ text: "Final answer" },
		]);
	});

	it.each(TAGS)("sends tagged <%s> reasoning as a separate block (H2–H5)", (tag) => {
		const agent = new FakeAgent();
		const blocks: ReplyPayload[] = [];
		const replies = subscribeReplies(agent, {
			reasoningMode: "on",
			blockReplyBreak: "message_end",
			onBlockReply: (payload) => void blocks.push(payload),
		});
		agent.messageStart();
		agent.messageEnd(`<${tag}>\nBecause it helps\n</${tag}>\n\nFinal answer`);
		expect(blocks.map((block) => block.text)).toEqual(["Reasoning:\n_Because it helps_", "Final answer"]);
		expect(replies.assistantTexts).toEqual(["Final answer"]);
	});

	it("sends reasoning after the answer when the answer already went out at text_end", () => {
		const agent = new FakeAgent();
		const blocks: ReplyPayload[] = [];
		subscribeReplies(agent, { reasoningMode: "on", onBlockReply: (payload) => void blocks.push(payload) });
		agent.messageStart();
		agent.thinkingDelta("Because", 0);
		agent.delta("Answer", 1);
		agent.textEnd(undefined, 1);
		agent.messageEnd();
		expect(blocks).toEqual([{ text: "Answer" }, { text: "Reasoning:\n_Because_", isReasoning: true }]);
	});
});

describe("onReasoningEnd", () => {
	function reasoningEnds(extra: Parameters<typeof subscribeReplies>[1] = {}) {
		const agent = new FakeAgent();
		const order: string[] = [];
		subscribeReplies(agent, {
			reasoningMode: "stream",
			onReasoningStream: (update) => void order.push(`stream:${update.text}`),
			onReasoningEnd: () => void order.push("end"),
			...extra,
		});
		return { agent, order, ends: () => order.filter((entry) => entry === "end").length };
	}

	it("is called once when a native thinking block ends, after its last reasoning update (A11)", () => {
		const { agent, order } = reasoningEnds();
		agent.messageStart();
		agent.thinkingDelta("Checking files");
		expect(order).toEqual(["stream:Reasoning:\n_Checking files_"]);
		agent.thinkingEnd("Checking files done");
		expect(order).toEqual(["stream:Reasoning:\n_Checking files_", "stream:Reasoning:\n_Checking files done_", "end"]);
	});

	it.each(TAGS)("is called when a <%s> block closes in the text, also when the tag is split across deltas", (tag) => {
		const { agent, ends } = reasoningEnds();
		agent.messageStart();
		agent.delta(`<${tag}>Because`);
		expect(ends()).toBe(0);
		agent.delta(" it helps</");
		expect(ends()).toBe(0);
		agent.delta(`${tag}>Final answer`);
		expect(ends()).toBe(1);
		agent.messageEnd();
		expect(ends()).toBe(1);
	});

	it("is called once when native and tagged reasoning end in the same message (A12)", () => {
		const { agent, ends } = reasoningEnds();
		agent.messageStart();
		agent.delta("<think>Checking", 1);
		agent.thinkingEnd("Native", 0);
		agent.delta(" files</think>\nFinal answer", 1);
		agent.messageEnd();
		expect(ends()).toBe(1);
	});

	it("is called for each reasoning block of a message", () => {
		const { agent, ends } = reasoningEnds({ reasoningMode: "off" });
		agent.messageStart();
		agent.delta("<think>one</think>A <think>two</think>B");
		expect(ends()).toBe(2);
	});

	it("is called at message_end for reasoning that never closed", () => {
		const { agent, ends } = reasoningEnds();
		agent.messageStart();
		agent.delta("<think>still thinking");
		expect(ends()).toBe(0);
		agent.messageEnd();
		expect(ends()).toBe(1);
	});

	it("is called once per reasoning block of a message that arrives whole, and not again when it repeats", () => {
		const { agent, ends } = reasoningEnds();
		agent.messageStart();
		const content = [
			{ type: "thinking" as const, thinking: "Because it helps" },
			{ type: "text" as const, text: "Final answer" },
		];
		agent.messageEnd(content);
		agent.messageEnd(content);
		expect(ends()).toBe(1);
	});

	it("is not called for a message without reasoning", () => {
		const { agent, ends } = reasoningEnds();
		agent.messageStart();
		agent.delta("Just an answer");
		agent.textEnd();
		agent.messageEnd();
		expect(ends()).toBe(0);
	});
});

describe("stripReasoningTags", () => {
	it("is case- and whitespace-tolerant", () => {
		expect(stripReasoningTags("A< THINK >x</ think >B").visible).toBe("A B");
	});

	it("keeps text after an unclosed think out of the answer (#87712)", () => {
		expect(stripReasoningTags("<think>reasoning never closed").visible).toBe("");
	});

	it("drops the reasoning before an orphan close tag (#67092), and reports it as reasoning", () => {
		expect(stripReasoningTags("reasoning here </think> the answer")).toEqual({ visible: "the answer", reasoning: "reasoning here " });
	});

	it("keeps <final> tags when asked to, still stripping reasoning", () => {
		expect(stripReasoningTags("<think>why</think><final>Hi</final>", { keepFinalTags: true }).visible).toBe("<final>Hi</final>");
	});

	it("keeps text outside <final> unless enforced", () => {
		expect(stripReasoningTags("pre <final>Hi</final>").visible).toBe("pre Hi");
		expect(stripReasoningTags("pre <final>Hi</final> post", { enforceFinalTag: true }).visible).toBe("Hi");
	});

	it("does not treat lookalike tags as tags", () => {
		expect(stripReasoningTags("a <thinker> b").visible).toBe("a <thinker> b");
	});
});
