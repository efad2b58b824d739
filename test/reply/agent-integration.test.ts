import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import type { AgentTool } from "../../src/types/index.js";
import type { PartialReply, ReplyPayload } from "../../src/reply/types.js";

const clock: AgentTool = {
	name: "clock",
	label: "Clock",
	description: "Tells the time",
	parameters: { type: "object", properties: {} },
	async execute() {
		return { content: [{ type: "text", text: "12:00" }], details: {} };
	},
};

describe("subscribeReplies on a real Agent with the scripted model", () => {
	it("delivers narration before the tool runs, strips reasoning tags, and sends the answer once", async () => {
		const scripted = createScriptedModel(
			[
				{ content: [{ type: "text", text: "Let me check <think>the user wants the time</think>the clock." }, { type: "toolCall", name: "clock", arguments: {} }] },
				{ content: "It is <thinking>read from the tool</thinking>12:00.\n\n[[reply_to_current]]Anything else?" },
			],
			{ chunkSize: 3 },
		);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [clock] }, streamFn: scripted.streamFn });
		const order: string[] = [];
		const blocks: ReplyPayload[] = [];
		const partials: PartialReply[] = [];
		const replies = subscribeReplies(agent, {
			blockReplyChunking: { minChars: 1, maxChars: 200 },
			onBlockReply: async (payload) => {
				await new Promise((resolve) => setTimeout(resolve, 5));
				blocks.push(payload);
				order.push(`block:${payload.text}`);
			},
			onBlockReplyFlush: () => {
				order.push("flush");
			},
			onPartialReply: (partial) => {
				partials.push(partial);
			},
		});
		agent.subscribe((event) => {
			if (event.type === "tool_execution_start") order.push("tool");
		});

		await agent.prompt("What time is it?");

		const texts = blocks.map((block) => block.text);
		expect(texts.join(" ")).toBe("Let me check the clock. It is 12:00. Anything else?");
		expect(texts.some((text) => /think|secret|user wants|read from/.test(text ?? ""))).toBe(false);
		expect(order.indexOf("block:Let me check the clock.")).toBeLessThan(order.indexOf("tool"));
		expect(blocks.at(-1)).toMatchObject({ text: "Anything else?", replyToCurrent: true });
		expect(partials.every((partial) => !partial.text.includes("<"))).toBe(true);
		expect(replies.toolMetas.map((meta) => meta.toolName)).toEqual(["clock"]);
		expect(replies.getUsageTotals()?.total).toBeGreaterThan(0);
		replies.unsubscribe();
	});

	it("sends nothing for a silent NO_REPLY answer streamed in small deltas", async () => {
		const scripted = createScriptedModel([{ content: "NO_REPLY" }], { chunkSize: 2 });
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const sent: string[] = [];
		const replies = subscribeReplies(agent, {
			onBlockReply: (payload) => void sent.push(payload.text ?? ""),
			onPartialReply: (partial) => void sent.push(partial.text),
		});
		await agent.prompt("hi");
		expect(sent).toEqual([]);
		expect(replies.assistantTexts).toEqual([]);
		replies.unsubscribe();
	});

	it("works on the agent's bare machine actor too (agent.actor)", async () => {
		const scripted = createScriptedModel([{ content: "Hello <think>secret</think>world" }], { chunkSize: 3 });
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const blocks: string[] = [];
		const partials: string[] = [];
		const replies = subscribeReplies(agent.actor, {
			onBlockReply: (payload) => void blocks.push(payload.text ?? ""),
			onPartialReply: (partial) => void partials.push(partial.text),
		});
		await agent.prompt("hi");
		expect(blocks).toEqual(["Hello world"]);
		expect(partials.at(-1)).toBe("Hello world");
		expect(partials.some((text) => text.includes("secret") || text.includes("<"))).toBe(false);
		expect(replies.assistantTexts).toEqual(["Hello world"]);
		replies.unsubscribe();
	});

	// Parallel: both start before either ends (they end in the order they started here).
	it("reports two tool calls that share an id, each with its own arguments and output", async () => {
		const read: AgentTool = {
			name: "read",
			label: "Read",
			description: "Reads a file",
			parameters: { type: "object", properties: { path: { type: "string" } } },
			async execute(_id, params) {
				const text = (params as { path: string }).path === "/tmp/a.txt" ? "alpha" : "beta";
				return { content: [{ type: "text", text }], details: {} };
			},
		};
		const scripted = createScriptedModel([
			{
				content: [
					{ type: "toolCall", id: "dup", name: "read", arguments: { path: "/tmp/a.txt" } },
					{ type: "toolCall", id: "dup", name: "read", arguments: { path: "/tmp/b.txt" } },
				],
			},
			{ content: "done" },
		]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [read] }, streamFn: scripted.streamFn, toolExecution: "parallel" });
		const results: ReplyPayload[] = [];
		subscribeReplies(agent, { verbose: "full", onToolResult: (payload) => void results.push(payload) });
		await agent.prompt("read both");
		const outputs = results.map((payload) => payload.text ?? "").filter((text) => text.includes("```"));
		expect(outputs).toHaveLength(2);
		expect(outputs[0]).toContain("/tmp/a.txt");
		expect(outputs[0]).toContain("alpha");
		expect(outputs[1]).toContain("/tmp/b.txt");
		expect(outputs[1]).toContain("beta");
	});

	it("sends a message once, from its start, to a subscription made while it streams (it sent the tail, then the whole)", async () => {
		const texts = ["Think it through.", "First paragraph.\n\nSecond paragraph.", "Another block."] as const;
		const blocks = [
			{ type: "thinking" as const, thinking: texts[0] },
			{ type: "text" as const, text: texts[1] },
			{ type: "text" as const, text: texts[2] },
		];
		// Each update of the message is a point to join at: in every block, also mid-delta.
		const updates = texts.reduce((count, text) => count + 2 + Math.ceil(text.length / 3), 0);
		for (let joinAt = 1; joinAt <= updates; joinAt += 1) {
			const scripted = createScriptedModel([{ content: blocks }], { chunkSize: 3 });
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
			const sent: string[] = [];
			const partials: PartialReply[] = [];
			let seen = 0;
			let replies: ReturnType<typeof subscribeReplies> | undefined;
			agent.subscribe((event) => {
				if (event.type !== "message_update" || (seen += 1) !== joinAt) return;
				replies = subscribeReplies(agent, {
					reasoningMode: "on",
					onBlockReply: (payload) => void sent.push(payload.text ?? ""),
					onPartialReply: (partial) => void partials.push(partial),
				});
			});
			await agent.prompt("go");
			const answer = sent.filter((text) => !text.startsWith("Reasoning:"));
			expect(answer.join("\n\n"), `joined at update ${joinAt}`).toBe("First paragraph.\n\nSecond paragraph.\n\nAnother block.");
			expect(sent.filter((text) => text.startsWith("Reasoning:")), `joined at update ${joinAt}`).toEqual(["Reasoning:\n_Think it through._"]);
			expect(partials.at(-1)?.text).toBe("First paragraph.\n\nSecond paragraph.\n\nAnother block.");
			replies?.unsubscribe();
		}
	});
});
