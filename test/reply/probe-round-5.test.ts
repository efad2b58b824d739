/**
 * Defects found by a channel's use of the reply layer (scratch/probeP, 2026-12-07): an async
 * error reporter whose failure ended the process, a `maxChars` the default `minChars` raised, a
 * final answer sent again because a reasoning block sat between its blocks, a silent answer's
 * media sent, and held-back fragments of the silent token or a directive sent after an abort.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { BlockChunker } from "../../src/reply/block-chunker.js";
import { createBlockReplyPipeline } from "../../src/reply/block-reply-pipeline.js";
import { filterFinalPayloads } from "../../src/reply/final-payloads.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import type { PartialReply, ReplyPayload } from "../../src/reply/types.js";
import { makeTool, ok } from "../agent/helpers.js";
import { FakeAgent } from "./helpers.js";

describe("an onCallbackError that rejects", () => {
	const unhandled: unknown[] = [];
	const onUnhandled = (reason: unknown) => void unhandled.push(reason);
	afterEach(() => {
		process.off("unhandledRejection", onUnhandled);
		unhandled.length = 0;
	});

	it("is ignored, as one that throws is: its rejection was unhandled and ended the process", async () => {
		process.on("unhandledRejection", onUnhandled);
		const scripted = createScriptedModel([{ content: "Hello there." }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const reported: string[] = [];
		const replies = subscribeReplies(agent, {
			onBlockReply: () => {
				throw new Error("channel down");
			},
			onCallbackError: async (error, callback) => {
				reported.push(`${callback}: ${(error as Error).message}`);
				throw new Error("the logger is down too");
			},
		});
		await agent.prompt("hi");
		await new Promise((resolve) => setTimeout(resolve, 20));
		replies.unsubscribe();
		expect(reported).toEqual(["onBlockReply: channel down"]);
		expect(unhandled).toEqual([]);
	});
});

describe("block sizes", () => {
	it("keep a maxChars given below the default minChars: it is the channel's limit", () => {
		// Before: { maxChars: 300 } gave blocks of 800 (the default minChars raised it).
		expect(new BlockChunker({ maxChars: 300 })).toMatchObject({ minChars: 300, maxChars: 300 });
		expect(new BlockChunker({ minChars: 500, maxChars: 300 })).toMatchObject({ minChars: 300, maxChars: 300 });
		// Without maxChars, the default grows to a larger minChars, as before.
		expect(new BlockChunker({ minChars: 2000 })).toMatchObject({ minChars: 2000, maxChars: 2000 });
		const chunker = new BlockChunker({ maxChars: 300 });
		chunker.append("word ".repeat(202).trim());
		const lengths = chunker.drain({ force: true }).map((chunk) => chunk.text.length);
		expect(Math.max(...lengths)).toBeLessThanOrEqual(300);
	});
});

describe("the final answer after block replies with reasoning shown", () => {
	const clock = makeTool("clock", async () => ok("12:00"));

	it.each(["text_end", "message_end"] as const)("is not sent again when every block was delivered (%s)", async (blockReplyBreak) => {
		const scripted = createScriptedModel([
			{ content: [{ type: "thinking", thinking: "Need the time." }, { type: "text", text: "Let me check the clock." }, { type: "toolCall", name: "clock", arguments: {} }] },
			{ content: [{ type: "thinking", thinking: "Got it." }, { type: "text", text: "It is noon." }] },
		]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [clock] }, streamFn: scripted.streamFn });
		const posted: string[] = [];
		const pipeline = createBlockReplyPipeline({ onBlockReply: (payload) => void posted.push(payload.text ?? "") });
		const replies = subscribeReplies(agent, {
			blockReplyBreak,
			reasoningMode: "on",
			onBlockReply: (payload) => pipeline.enqueue(payload),
			onBlockReplyFlush: () => pipeline.flush({ force: true }),
		});
		await agent.prompt("What time is it?");
		await pipeline.flush({ force: true });
		replies.unsubscribe();
		expect(posted.filter((text) => !text.startsWith("Reasoning:"))).toEqual(["Let me check the clock.", "It is noon."]);
		// Before, the reasoning blocks between the two broke the coverage check and the whole answer went again.
		expect(filterFinalPayloads([{ text: replies.assistantTexts.join("\n\n") }], { pipeline })).toEqual([]);
	});

	it("is not sent again when the pipeline sent a repeated paragraph once, but is when a paragraph was never sent", () => {
		const sentPayloads: ReplyPayload[] = [{ text: "Checking the logs." }, { text: "Found it." }];
		expect(filterFinalPayloads([{ text: "Checking the logs.\n\nChecking the logs.\n\nFound it." }], { sentPayloads })).toEqual([]);
		expect(filterFinalPayloads([{ text: "Checking the logs.\n\nFixed it." }], { sentPayloads })).toEqual([{ text: "Checking the logs.\n\nFixed it." }]);
		// Reasoning shown to the user does not stand for the answer.
		expect(filterFinalPayloads([{ text: "It is noon." }], { sentPayloads: [{ text: "It is noon.", isReasoning: true }] })).toEqual([{ text: "It is noon." }]);
	});
});

describe("a silent answer (NO_REPLY) that names media", () => {
	it.each([
		["NO_REPLY\nMEDIA: https://cdn.example/chart.png", "text_end"],
		["MEDIA: https://cdn.example/chart.png\nNO_REPLY", "text_end"],
		["NO_REPLY\nMEDIA: https://cdn.example/chart.png", "message_end"],
		["MEDIA: https://cdn.example/chart.png\nNO_REPLY", "message_end"],
	] as const)("sends nothing: %j (%s)", async (answer, blockReplyBreak) => {
		const scripted = createScriptedModel([{ content: answer }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const sent: ReplyPayload[] = [];
		const replies = subscribeReplies(agent, { blockReplyBreak, onBlockReply: (payload) => void sent.push(payload) });
		await agent.prompt("hi");
		replies.unsubscribe();
		expect(sent).toEqual([]);
	});
});

describe("an answer cut off inside something held back", () => {
	const cutOff = (pieces: string[]) => {
		const agent = new FakeAgent();
		const blocks: ReplyPayload[] = [];
		const partials: PartialReply[] = [];
		subscribeReplies(agent, { onBlockReply: (payload) => void blocks.push(payload), onPartialReply: (partial) => void partials.push(partial) });
		agent.messageStart();
		for (const piece of pieces) agent.delta(piece);
		agent.messageEnd(undefined, { stopReason: "aborted" });
		return { blocks: blocks.map((block) => block.text), partials: partials.map((partial) => partial.text) };
	};

	it("sends no prefix of the silent token", () => {
		// Before: "NO_R" went out as a block and a partial.
		expect(cutOff(["NO_R"])).toEqual({ blocks: [], partials: [] });
	});

	it("sends no unfinished directive, and keeps the text before it", () => {
		expect(cutOff(["Sure.", " [[reply_to_c"]).blocks).toEqual(["Sure."]);
		expect(cutOff(["[[reply_to_c"]).blocks).toEqual([]);
	});

	it("still sends text that only looked like the token's start, when the message ended as meant", () => {
		const agent = new FakeAgent();
		const blocks: ReplyPayload[] = [];
		subscribeReplies(agent, { onBlockReply: (payload) => void blocks.push(payload) });
		agent.messageStart();
		agent.delta("NO_R");
		agent.messageEnd(undefined, { stopReason: "stop" });
		expect(blocks.map((block) => block.text)).toEqual(["NO_R"]);
	});
});

describe("getLastToolError after a failed change", () => {
	it("keeps the change through a failed read and a successful one, until the change succeeds", async () => {
		const tool = (name: string) =>
			makeTool(name, async (_id, args) => {
				if (args["fail"]) throw new Error(`${name} failed`);
				return ok("ok");
			});
		const steps: [string, Record<string, unknown>][] = [
			["bash", { command: "rm -rf build", fail: true }],
			["read", { path: "a.txt", fail: true }],
			["read", { path: "b.txt" }],
		];
		const scripted = createScriptedModel([...steps.map(([name, args]) => ({ content: [{ type: "toolCall" as const, id: `${name}-${String(args["path"] ?? "x")}`, name, arguments: args }] })), { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [tool("bash"), tool("read")] }, streamFn: scripted.streamFn });
		const replies = subscribeReplies(agent);
		const seen: (string | undefined)[] = [];
		agent.subscribe((event) => void (event.type === "tool_execution_end" && seen.push(replies.getLastToolError()?.toolName)));
		await agent.prompt("clean and read");
		replies.unsubscribe();
		// Before: "read" replaced the failed change, and the successful read then cleared it.
		expect(seen).toEqual(["bash", "bash", "bash"]);
	});
});

describe("a directive that opens a line with a code fence after it", () => {
	it.each([
		["[[reply_to_current]]```\nMEDIA: https://x.example/y.png\n```", { text: "```\nMEDIA: https://x.example/y.png\n```", replyToCurrent: true, replyToTag: true }],
		["[[reply_to_current]] ```\nMEDIA: https://x.example/y.png\n```", { text: "```\nMEDIA: https://x.example/y.png\n```", replyToCurrent: true, replyToTag: true }],
		["[[audio_as_voice]]```\n[[reply_to:5]]\n```", { text: "```\n[[reply_to:5]]\n```", audioAsVoice: true }],
	] as const)("leaves the code as code: %j", async (answer, expected) => {
		// Before: the fence the user sees was not one to the directive parser, which took the MEDIA
		// line (or a directive) out of the code block and applied it.
		const scripted = createScriptedModel([{ content: answer }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const sent: ReplyPayload[] = [];
		const replies = subscribeReplies(agent, { onBlockReply: (payload) => void sent.push(payload) });
		await agent.prompt("show the syntax");
		replies.unsubscribe();
		expect(sent).toEqual([expected]);
	});
});

describe("a code block closed on the line of a closing tag (```</final>)", () => {
	it.each([false, true])("closes the block, and the reasoning after it stays private (enforceFinalTag %s)", async (enforceFinalTag) => {
		// Before: the line read as a fence opening, so "</final>" and the <think> after it were shown as code.
		const answer = "<think>plan</think><final>```python\nprint(1)\n```</final>\n<think>private afterthought</think>";
		for (const chunkSize of [1, 3, 1000]) {
			const scripted = createScriptedModel([{ content: answer }], { chunkSize });
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
			const sent: string[] = [];
			const replies = subscribeReplies(agent, { enforceFinalTag, onBlockReply: (payload) => void sent.push(payload.text ?? "") });
			await agent.prompt("code please");
			replies.unsubscribe();
			expect(sent).toEqual(["```python\nprint(1)\n```"]);
		}
	});

	it("leaves an opening tag after a fence marker inside code as code", async () => {
		const answer = "Example:\n```text\n```<think> is how a model starts\n```\nafter";
		const scripted = createScriptedModel([{ content: answer }], { chunkSize: 2 });
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const sent: string[] = [];
		const replies = subscribeReplies(agent, { onBlockReply: (payload) => void sent.push(payload.text ?? "") });
		await agent.prompt("explain");
		replies.unsubscribe();
		expect(sent).toEqual([answer]);
	});
});

describe("an answer that quotes what a messaging tool sent, and says more", () => {
	it("sends what it says beyond the sent text, as a block and as a final", async () => {
		// Before: the whole block went, new question included, since it contained the sent text.
		const sentByTool = "Deployed version 2 to production.";
		const message = makeTool("message", async () => ok("sent"));
		const answer = `I posted this to #ops: "${sentByTool}"\n\nAnything else I should do?`;
		const scripted = createScriptedModel([{ content: [{ type: "toolCall", name: "message", arguments: { action: "send", to: "#ops", message: sentByTool } }] }, { content: answer }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [message] }, streamFn: scripted.streamFn });
		const sent: string[] = [];
		const replies = subscribeReplies(agent, { onBlockReply: (payload) => void sent.push(payload.text ?? "") });
		await agent.prompt("deploy and tell ops");
		replies.unsubscribe();
		expect(sent).toEqual(["Anything else I should do?"]);
		expect(replies.assistantTexts).toEqual(["Anything else I should do?"]);
		expect(filterFinalPayloads([{ text: answer }], { messagingToolSentTexts: [sentByTool] })).toEqual([{ text: "Anything else I should do?" }]);
		// Repeated and nothing more: nothing is sent, as before.
		expect(filterFinalPayloads([{ text: `Posted: ${sentByTool}` }], { messagingToolSentTexts: [sentByTool] })).toEqual([]);
	});
});

describe("a subscription made while a later text block streams", () => {
	it("sends each earlier text block as a block of its own", async () => {
		// Before: subscribed at or after the second block's start, the first was sent joined to it.
		for (let at = 1; at <= 11; at++) {
			const scripted = createScriptedModel([{ content: [{ type: "text", text: "First block." }, { type: "text", text: "Second block." }] }], { chunkSize: 4 });
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
			const blocks: string[] = [];
			let replies: ReturnType<typeof subscribeReplies> | undefined;
			let updates = 0;
			agent.subscribe((event) => {
				if (event.type === "message_update" && ++updates === at) replies ??= subscribeReplies(agent, { onBlockReply: (payload) => void blocks.push(payload.text ?? "") });
			});
			await agent.prompt("go");
			replies?.unsubscribe();
			expect(blocks, `subscribed at update ${at}`).toEqual(["First block.", "Second block."]);
		}
	});
});

describe("the live message of an answer that ends inside a code fence", () => {
	it("ends with the fence's closing line, as the block and assistantTexts do, not with a blank line after it", async () => {
		const scripted = createScriptedModel([{ content: "Here:\n```js\nconst a = 1;" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const live: PartialReply[] = [];
		const sent: string[] = [];
		const replies = subscribeReplies(agent, { onPartialReply: (partial) => void live.push(partial), onBlockReply: (payload) => void sent.push(payload.text ?? "") });
		await agent.prompt("code");
		replies.unsubscribe();
		expect(live.at(-1)?.text).toBe("Here:\n```js\nconst a = 1;\n```");
		expect(sent).toEqual(["Here:\n```js\nconst a = 1;\n```"]);
	});
});
