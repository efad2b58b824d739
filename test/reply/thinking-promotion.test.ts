/**
 * Reasoning written inline (`<think>…</think>`) is hidden from the user; at `message_end` the
 * stored assistant message is rewritten to `[{ thinking }, { text }]`, so the transcript and
 * the next request carry the reasoning as a thinking block, as OpenClaw does.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import { promoteThinkingTags } from "../../src/reply/thinking-promotion.js";
import type { AgentMessage, AgentTool, AssistantMessage, Message, StreamFn } from "../../src/types/index.js";
import { assistantMessage, FakeAgent, phaseSignature } from "./helpers.js";

const TAGS = ["think", "thinking", "thought", "antthinking"] as const;

/** Ends a message through a subscription and returns the (possibly rewritten) message. */
function endMessage(message: AssistantMessage, options: Parameters<typeof subscribeReplies>[1] = {}): AssistantMessage {
	const agent = new FakeAgent();
	subscribeReplies(agent, options);
	agent.emitRaw({ type: "message_start", message });
	agent.emitRaw({ type: "message_end", message });
	return message;
}

describe("thinking tags become a thinking block of the stored message", () => {
	it.each(TAGS)("moves <%s> reasoning before the visible text (A1–A4, H2–H5)", (tag) => {
		const message = endMessage(assistantMessage(`<${tag}>\nBecause it helps\n</${tag}>\n\nFinal answer`));
		expect(message.content).toEqual([
			{ type: "thinking", thinking: "Because it helps" },
			{ type: "text", text: "Final answer" },
		]);
	});

	it("keeps tool calls, their order, and the text block's other fields", () => {
		const signature = phaseSignature("final_answer");
		const message = endMessage(
			assistantMessage([
				{ type: "text", text: "<think>check the clock</think>Let me look.", textSignature: signature },
				{ type: "toolCall", id: "c1", name: "clock", arguments: {} },
			]),
		);
		expect(message.content).toEqual([
			{ type: "thinking", thinking: "check the clock" },
			{ type: "text", text: "Let me look.", textSignature: signature },
			{ type: "toolCall", id: "c1", name: "clock", arguments: {} },
		]);
	});

	it("drops a text block that was nothing but reasoning", () => {
		const message = endMessage(assistantMessage("<think>only thoughts</think>"));
		expect(message.content).toEqual([{ type: "thinking", thinking: "only thoughts" }]);
	});

	it("moves the text before an orphan closing tag, which the user never saw, into the thinking block (#67092)", () => {
		const message = endMessage(assistantMessage("The user wants a number. </think>It is 4."));
		expect(message.content).toEqual([
			{ type: "thinking", thinking: "The user wants a number." },
			{ type: "text", text: "It is 4." },
		]);
	});

	it("treats reasoning that never closed as reasoning, as the user saw it", () => {
		const message = endMessage(assistantMessage("Sure. <think>still weighing it"));
		expect(message.content).toEqual([
			{ type: "thinking", thinking: "still weighing it" },
			{ type: "text", text: "Sure." },
		]);
	});

	it("keeps <final> tags and reply directives in the stored text (they steer the model and the channel)", () => {
		const message = endMessage(assistantMessage("<think>why</think><final>[[reply_to_current]] Hi</final>"));
		expect(message.content).toEqual([
			{ type: "thinking", thinking: "why" },
			{ type: "text", text: "<final>[[reply_to_current]] Hi</final>" },
		]);
	});

	it("leaves tags inside code alone", () => {
		const text = "Wrap it in `<think>` tags:\n```\n<think>example</think>\n```";
		expect(endMessage(assistantMessage(text)).content).toEqual([{ type: "text", text }]);
	});

	it("leaves a message that already has a thinking block alone", () => {
		const content = [
			{ type: "thinking" as const, thinking: "native" },
			{ type: "text" as const, text: "<think>inline</think>Answer" },
		];
		expect(endMessage(assistantMessage(content)).content).toEqual(content);
	});

	it("can be turned off", () => {
		const text = "<think>private</think>Answer";
		expect(endMessage(assistantMessage(text), { promoteThinkingTags: false }).content).toEqual([{ type: "text", text }]);
	});

	it("still shows the user only the visible text", () => {
		const agent = new FakeAgent();
		const blocks: string[] = [];
		const replies = subscribeReplies(agent, { blockReplyBreak: "message_end", onBlockReply: (payload) => void blocks.push(payload.text ?? "") });
		agent.emitRaw({ type: "message_end", message: assistantMessage("<think>why</think>Answer") });
		expect(blocks).toEqual(["Answer"]);
		expect(replies.assistantTexts).toEqual(["Answer"]);
	});

	it("reports whether a message changed (promoteThinkingTags on its own)", () => {
		expect(promoteThinkingTags(assistantMessage("<think>a</think>b"))).toBe(true);
		expect(promoteThinkingTags(assistantMessage("plain"))).toBe(false);
	});
});

describe("with a real Agent and the scripted model", () => {
	const clock: AgentTool = {
		name: "clock",
		label: "Clock",
		description: "Tells the time",
		parameters: { type: "object", properties: {} },
		async execute() {
			return { content: [{ type: "text", text: "12:00" }], details: {} };
		},
	};

	/** A scripted agent whose stream function records a deep copy of every request's messages. */
	function recordingAgent(replies: Parameters<typeof createScriptedModel>[0]) {
		const scripted = createScriptedModel(replies, { chunkSize: 4 });
		const requests: Message[][] = [];
		const streamFn: StreamFn = (model, context, options) => {
			requests.push(structuredClone(context.messages));
			return scripted.streamFn(model, context, options);
		};
		const agent = new Agent({ initialState: { model: scripted.model, tools: [clock] }, streamFn });
		return { agent, requests };
	}

	const promoted = [
		{ type: "thinking", thinking: "the user wants the time" },
		{ type: "text", text: "Let me check the clock." },
	];

	function assistantContents(messages: readonly (AgentMessage | Message)[]): unknown[] {
		return messages.filter((message) => message.role === "assistant").map((message) => message.content);
	}

	it("sends the next request the reasoning as a thinking block and the text without tags, as agent.state.messages shows", async () => {
		const { agent, requests } = recordingAgent([
			{ content: [{ type: "text", text: "<think>the user wants the time</think>Let me check the clock." }, { type: "toolCall", name: "clock", arguments: {} }] },
			{ content: "It is 12:00." },
		]);
		const replies = subscribeReplies(agent, { onBlockReply: () => undefined });
		await agent.prompt("What time is it?");

		expect(requests).toHaveLength(2);
		const [firstAnswer] = assistantContents(requests[1] ?? []);
		expect(firstAnswer).toEqual([...promoted, expect.objectContaining({ type: "toolCall", name: "clock" })]);
		expect(assistantContents(agent.state.messages)[0]).toEqual(firstAnswer);
		replies.unsubscribe();
	});

	it("rewrites the very object the transcript holds, also when a slow listener runs first", async () => {
		const { agent, requests } = recordingAgent([
			{ content: [{ type: "text", text: "<think>the user wants the time</think>Let me check the clock." }, { type: "toolCall", name: "clock", arguments: {} }] },
			{ content: "It is 12:00." },
		]);
		// Subscribed before the reply layer, so the reply layer rewrites after this listener has waited.
		agent.subscribe(async (event) => {
			if (event.type === "message_end") await new Promise((resolve) => setTimeout(resolve, 5));
		});
		const replies = subscribeReplies(agent);
		const seenAfter: unknown[] = [];
		agent.subscribe((event) => {
			if (event.type === "turn_end" && event.message.role === "assistant") seenAfter.push(event.message.content);
		});
		await agent.prompt("What time is it?");

		const [firstAnswer] = assistantContents(requests[1] ?? []);
		expect(firstAnswer).toEqual([...promoted, expect.objectContaining({ type: "toolCall" })]);
		expect(seenAfter[0]).toEqual(firstAnswer);
		replies.unsubscribe();
	});

	it("does the same for the next prompt's request, and on the bare machine actor", async () => {
		for (const source of ["agent", "actor"] as const) {
			const { agent, requests } = recordingAgent([
				{ content: "<think>the user wants the time</think>Let me check the clock." },
				{ content: "Anything else?" },
			]);
			const replies = subscribeReplies(source === "agent" ? agent : agent.actor);
			await agent.prompt("What time is it?");
			await agent.prompt("Thanks");
			expect(assistantContents(requests[1] ?? [])).toEqual([promoted]);
			expect(assistantContents(agent.state.messages)[0]).toEqual(promoted);
			replies.unsubscribe();
		}
	});

	it("lets a second subscription, after the one that rewrote the message, send the answer once (it sent it twice)", async () => {
		for (const blockReplyBreak of ["text_end", "message_end"] as const) {
			const { agent } = recordingAgent([{ content: "Sure. <think>the user wants a number</think>It is 4." }]);
			// A channel and a log, say: both read the same message_end, and the first one rewrites it.
			const sent: string[][] = [[], []];
			const texts = [0, 1].map((which) =>
				subscribeReplies(agent, {
					blockReplyBreak,
					reasoningMode: which === 1 ? "on" : "off",
					onBlockReply: (payload) => void sent[which]?.push(payload.text ?? ""),
				}),
			);
			await agent.prompt("What is 2 + 2?");
			expect(sent[0]).toEqual(["Sure. It is 4."]);
			expect(sent[1]?.filter((text) => !text.startsWith("Reasoning:"))).toEqual(["Sure. It is 4."]);
			expect(sent[1]?.filter((text) => text.startsWith("Reasoning:"))).toEqual(["Reasoning:\n_the user wants a number_"]);
			for (const replies of texts) {
				expect(replies.assistantTexts).toEqual(["Sure. It is 4."]);
				replies.unsubscribe();
			}
		}
	});

	it("leaves the transcript as the model wrote it when turned off", async () => {
		const { agent, requests } = recordingAgent([{ content: "<think>hidden</think>Hi" }, { content: "Bye" }]);
		const replies = subscribeReplies(agent, { promoteThinkingTags: false });
		await agent.prompt("Hello");
		await agent.prompt("Again");
		expect(assistantContents(requests[1] ?? [])).toEqual([[{ type: "text", text: "<think>hidden</think>Hi" }]]);
		replies.unsubscribe();
	});
});
