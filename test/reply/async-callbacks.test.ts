/**
 * Callbacks that return promises, through an Agent (a probe found each): a slow `onToolResult`
 * was not waited for, so the next turn's block reply reached the channel before the tool's output
 * and `prompt()` settled with deliveries still to come; slow `onPartialReply` calls overlapped and
 * the live message could end on an older text; `unsubscribe()` left queued deliveries to go out
 * after it. Each is a promise of docs/reply.md ("Order").
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import { makeTool, ok } from "../agent/helpers.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const read = makeTool("read", async () => ok("file body"));

function readingAgent(firstText: string): Agent {
	const scripted = createScriptedModel([
		{ content: [{ type: "text", text: firstText }, { type: "toolCall", name: "read", arguments: { path: "/a" }, id: "c1" }] },
		{ content: "Done reading." },
	]);
	return new Agent({ initialState: { model: scripted.model, tools: [read] }, streamFn: scripted.streamFn });
}

describe("callbacks that return promises", () => {
	it("a slow onToolResult is delivered in the channel's order, before the next turn's block reply, and prompt() waits for it", async () => {
		const agent = readingAgent("Let me look.");
		const channel: string[] = [];
		const replies = subscribeReplies(agent, {
			verbose: "full",
			onBlockReply: async (payload) => {
				await sleep(5);
				channel.push(`block ${payload.text}`);
			},
			onToolResult: async (payload) => {
				await sleep(60);
				channel.push(`tool ${(payload.text ?? "").split("\n")[0]}`);
			},
		});
		await agent.prompt("go");
		const settled = channel.length;
		replies.unsubscribe();
		expect(channel).toEqual(["block Let me look.", "tool 📖 Read: `/a`", "tool 📖 Read: `/a`", "block Done reading."]);
		expect(settled).toBe(4);
	});

	it("slow onPartialReply calls run one at a time, and the live message ends on the answer", async () => {
		const scripted = createScriptedModel([{ content: "Hello there, this is the answer.", chunkSize: 3 }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		let inFlight = 0;
		let most = 0;
		let live = "";
		// Later calls answer sooner: overlapping, an older text would land last.
		let delay = 40;
		const replies = subscribeReplies(agent, {
			onPartialReply: async (partial) => {
				inFlight += 1;
				most = Math.max(most, inFlight);
				await sleep((delay = Math.max(0, delay - 4)));
				live = partial.text ?? "";
				inFlight -= 1;
			},
		});
		await agent.prompt("hi");
		replies.unsubscribe();
		expect(most).toBe(1);
		expect(inFlight).toBe(0);
		expect(live).toBe("Hello there, this is the answer.");
	});

	it("after unsubscribe() no callback is called, not even for deliveries that were queued", async () => {
		const scripted = createScriptedModel([
			{ content: [{ type: "text", text: "One.\n\nTwo.\n\nThree.\n\nFour." }, { type: "toolCall", name: "read", arguments: { path: "/a" }, id: "c1" }] },
			{ content: "Done." },
		]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [read] }, streamFn: scripted.streamFn });
		const calls: string[] = [];
		let unsubscribed = false;
		const replies = subscribeReplies(agent, {
			verbose: "on",
			blockReplyChunking: { minChars: 1, maxChars: 6 },
			onBlockReply: async (payload) => {
				calls.push(`${unsubscribed ? "late " : ""}block ${payload.text}`);
				if (payload.text === "One.") {
					replies.unsubscribe();
					unsubscribed = true;
				}
				await sleep(20);
			},
			onToolResult: async (payload) => {
				calls.push(`${unsubscribed ? "late " : ""}tool ${payload.text}`);
				await sleep(20);
			},
		});
		await agent.prompt("go");
		await sleep(100);
		expect(calls).toEqual(["block One."]);
	});
});
