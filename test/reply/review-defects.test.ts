/**
 * Defects a review of the reply layer suspected, each reproduced through the public API first:
 * reasoning before a stray `</think>`, a commentary replaced by an answer that starts like it, a
 * chunk cut mid-line into a fence line, tag stripping on the final-reply path across text blocks,
 * a multi-line tool command with a fence in it, and the last partial reply of an aborted run.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createAssistantMessageEventStream } from "../../src/providers/event-stream.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import type { PartialReply, ReplyPayload } from "../../src/reply/types.js";
import type { StreamFn, TextContent } from "../../src/types/index.js";
import { assistantMessage, FakeAgent, inventedFences, phaseSignature, toolResult, unclosedFences } from "./helpers.js";

describe("reasoning before a stray </think> (no opening tag)", () => {
	it("never reaches the channel when its block is sent at text_end, and the answer after it does", () => {
		const agent = new FakeAgent();
		const blocks: string[] = [];
		const replies = subscribeReplies(agent, { onBlockReply: (payload) => void blocks.push(payload.text ?? "") });
		agent.messageStart();
		for (const delta of ["I should ", "say 4.", "</think>", "It is 4."]) agent.delta(delta);
		agent.textEnd();
		agent.messageEnd();
		expect(blocks).toEqual(["It is 4."]);
		expect(replies.assistantTexts).toEqual(["It is 4."]);
	});

	for (const reasoningMode of ["on", "stream"] as const) {
		it(`is reasoning, not lost: shown as reasoning and ended by the tag (reasoningMode "${reasoningMode}")`, () => {
			const agent = new FakeAgent();
			const blocks: ReplyPayload[] = [];
			const streamed: string[] = [];
			let ends = 0;
			subscribeReplies(agent, {
				reasoningMode,
				onBlockReply: (payload) => void blocks.push(payload),
				onReasoningStream: ({ text }) => void streamed.push(text),
				onReasoningEnd: () => void (ends += 1),
			});
			agent.messageStart();
			for (const delta of ["I should ", "say 4.", "</think>", "It is 4."]) agent.delta(delta);
			expect(ends).toBe(1);
			agent.textEnd();
			agent.messageEnd();
			expect(ends).toBe(1);
			if (reasoningMode === "on") expect(blocks).toEqual([{ text: "It is 4." }, { text: "Reasoning:\n_I should say 4._", isReasoning: true }]);
			else expect(streamed).toEqual(["Reasoning:\n_I should say 4._"]);
		});
	}
});

/**
 * An OpenAI-Responses-like stream: the block streams as commentary, then the provider replaces
 * its text and phase with the answer's in the same tick, so the Agent's listeners read every
 * event with the replacement already in the partial message. Here the answer starts with the
 * commentary's first delta.
 */
function replacingStreamFn(commentary: string[], answer: string[]): StreamFn {
	return (model) => {
		const stream = createAssistantMessageEventStream();
		const output = assistantMessage([], { api: model.api, provider: model.provider, model: model.id });
		const block: TextContent = { type: "text", text: "", textSignature: phaseSignature("commentary", "item") };
		void (async () => {
			stream.push({ type: "start", partial: output });
			output.content.push(block);
			stream.push({ type: "text_start", contentIndex: 0, partial: output });
			for (const delta of commentary) {
				block.text += delta;
				stream.push({ type: "text_delta", contentIndex: 0, delta, partial: output });
			}
			block.text = "";
			block.textSignature = phaseSignature("final_answer", "item");
			for (const delta of answer) {
				await Promise.resolve();
				block.text += delta;
				stream.push({ type: "text_delta", contentIndex: 0, delta, partial: output });
			}
			stream.push({ type: "text_end", contentIndex: 0, content: block.text, partial: output });
			stream.push({ type: "done", reason: "stop", message: output });
		})();
		return stream;
	};
}

describe("a commentary replaced by an answer that starts with the same text", () => {
	for (const [commentary, answer] of [
		[["Let me ", "check."], ["Let me ", "check: it is 4."]],
		[["Let me "], ["Let me ", "check: it is 4."]],
	] as const) {
		it(`sends the answer once, without the commentary (${JSON.stringify(commentary)})`, async () => {
			const scripted = createScriptedModel([]);
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: replacingStreamFn([...commentary], [...answer]) });
			const blocks: string[] = [];
			const partials: PartialReply[] = [];
			const replies = subscribeReplies(agent, {
				onBlockReply: (payload) => void blocks.push(payload.text ?? ""),
				onPartialReply: (partial) => void partials.push(partial),
			});
			await agent.prompt("What is 2 + 2?");
			replies.unsubscribe();
			expect(blocks).toEqual(["Let me check: it is 4."]);
			expect(replies.assistantTexts).toEqual(["Let me check: it is 4."]);
			expect(partials.at(-1)?.text).toBe("Let me check: it is 4.");
		});
	}
});

describe("a chunk cut in the middle of a line", () => {
	it("never starts or ends with a piece of the line that reads as a code fence", () => {
		const agent = new FakeAgent();
		const blocks: string[] = [];
		subscribeReplies(agent, {
			blockReplyChunking: { minChars: 5, maxChars: 20 },
			onBlockReply: (payload) => void blocks.push(payload.text ?? ""),
		});
		const text = "Some words then ```ts and more words here.";
		agent.messageStart();
		agent.delta(text);
		agent.textEnd();
		agent.messageEnd();
		expect(blocks.join(" ")).toBe(text);
		for (const block of blocks) expect(inventedFences(block, text)).toEqual([]);
	});

	it("inside a fence, never leaves a piece of a code line that closes the fence early", () => {
		const agent = new FakeAgent();
		const blocks: string[] = [];
		subscribeReplies(agent, {
			blockReplyChunking: { minChars: 5, maxChars: 40 },
			onBlockReply: (payload) => void blocks.push(payload.text ?? ""),
		});
		// The last code line does not fit after the reopened fence: it is cut mid-line, before "```".
		const text = "```HelloHello<final>\n\n</ thinking > ```";
		agent.messageStart();
		agent.delta(text);
		agent.textEnd();
		agent.messageEnd();
		// Cut in two; a check of each block alone would hold for no block at all.
		expect(blocks).toEqual(["```HelloHello<final>\n\n</ thinking\n```", "```HelloHello<final>\n> ```\n```"]);
		// Every block opens the fence with its own opening line and closes it once.
		for (const block of blocks) {
			expect(block.startsWith("```HelloHello<final>\n")).toBe(true);
			expect(block.endsWith("\n```")).toBe(true);
			expect(unclosedFences(block)).toEqual([]);
			expect(block.split("\n").filter((line) => line === "```")).toHaveLength(1);
		}
	});
});

describe("the answer recorded without block replies (the final-reply path)", () => {
	it("strips reasoning tags in a text block that follows one ending inside a fence, as block replies do", () => {
		const content = [
			{ type: "text" as const, text: "Look:\n\n```js\nlet a = 1;" },
			{ type: "text" as const, text: "<think>secret</think>Then this." },
		];
		const recorded = new FakeAgent();
		const replies = subscribeReplies(recorded);
		recorded.messageStart();
		recorded.messageEnd(content);
		const sent = new FakeAgent();
		const blocks: string[] = [];
		subscribeReplies(sent, { blockReplyBreak: "message_end", onBlockReply: (payload) => void blocks.push(payload.text ?? "") });
		sent.messageStart();
		sent.messageEnd(content);
		expect(replies.assistantTexts).toEqual(["Look:\n\n```js\nlet a = 1;\n```\n\nThen this."]);
		expect(replies.assistantTexts).toEqual(blocks);
	});
});

describe("a tool command of several lines with a fence in it", () => {
	for (const verbose of ["on", "full"] as const) {
		it(`keeps the summary on one line and every fence of the tool messages balanced (verbose "${verbose}")`, () => {
			const agent = new FakeAgent();
			const messages: string[] = [];
			subscribeReplies(agent, { verbose, onToolResult: (payload) => void messages.push(payload.text ?? "") });
			agent.toolStart("exec", { command: "cat > notes.md <<EOF\n```\nEOF" });
			agent.toolEnd("exec", toolResult("ok"));
			expect(messages[0]).toBe("🛠️ Exec: ````cat > notes.md <<EOF ``` EOF````");
			for (const message of messages) expect(unclosedFences(message)).toEqual([]);
			if (verbose === "full") expect(messages[1]).toBe("🛠️ Exec: ````cat > notes.md <<EOF ``` EOF````\n```txt\nok\n```");
		});
	}

	it("puts a command that starts or ends with a backtick in a code span that holds it whole", () => {
		const agent = new FakeAgent();
		const messages: string[] = [];
		subscribeReplies(agent, { verbose: "on", onToolResult: (payload) => void messages.push(payload.text ?? "") });
		agent.toolStart("exec", { command: "`date`" });
		expect(messages).toEqual(["🛠️ Exec: `` `date` ``"]);
	});
});

describe("the last partial reply of a run aborted inside a code fence", () => {
	it("closes the fence, as the block reply and the recorded answer do", async () => {
		const content = "Here:\n\n```ts\nconst a = 1;\nconst b = 2;\n```\nDone.";
		const scripted = createScriptedModel([{ content }], { chunkSize: 3, delayMs: 1 });
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		let streamed = 0;
		agent.subscribe((event) => {
			if (event.type !== "message_update" || event.assistantMessageEvent.type !== "text_delta") return;
			streamed += event.assistantMessageEvent.delta.length;
			if (streamed >= 25) agent.abort();
		});
		const partials: PartialReply[] = [];
		const blocks: string[] = [];
		const replies = subscribeReplies(agent, {
			onPartialReply: (partial) => void partials.push(partial),
			onBlockReply: (payload) => void blocks.push(payload.text ?? ""),
		});
		await agent.prompt("Show me");
		replies.unsubscribe();
		const last = partials.at(-1);
		expect(blocks).toEqual(["Here:\n\n```ts\nconst a = 1;\nc\n```"]);
		expect(last?.text.trimEnd()).toBe(blocks[0]);
		expect(unclosedFences(last?.text ?? "")).toEqual([]);
		// The fence's close extends what the channel showed: no replacement needed.
		expect(last?.replace).toBeUndefined();
	});
});
