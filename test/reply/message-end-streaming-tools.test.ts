/**
 * `blockReplyBreak: "message_end"` with streaming tool execution (probe AX, 2026-12-07): a call
 * starts while its message still streams, and its start flushed the message's text so far.
 * Text that an orphan `</think>` later in the message makes reasoning was then sent to the
 * channel, where "message_end" promises that no block is sent before the message ends. The tool
 * events now wait for the message's end: the channel gets what it gets when tools start after
 * the message (parallel mode), in the same order.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel, text, toolCall } from "../../src/providers/scripted.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import type { AgentTool } from "../../src/types/index.js";

const lookup: AgentTool = {
	name: "lookup",
	label: "Lookup",
	description: "Looks a thing up",
	parameters: { type: "object", properties: { q: { type: "string" } } },
	async execute() {
		return { content: [{ type: "text", text: "found it" }], details: {} };
	},
};

async function channel(toolExecution: "streaming" | "parallel", verbose: "off" | "on" | "full") {
	const scripted = createScriptedModel(
		[{ content: [text("private musing about the user"), toolCall("lookup", { q: "x" }, "c1"), text("</think>Public answer.")] }, { content: "Second." }],
		{ chunkSize: 4, delayMs: 1 },
	);
	const agent = new Agent({ initialState: { model: scripted.model, tools: [lookup] }, streamFn: scripted.streamFn, toolExecution });
	const out: string[] = [];
	const replies = subscribeReplies(agent, {
		blockReplyBreak: "message_end",
		verbose,
		onBlockReply: (payload) => void out.push(payload.text ?? ""),
		onToolResult: (payload) => void out.push(`tool: ${payload.text ?? ""}`),
	});
	await agent.prompt("go");
	await replies.waitForCompactionRetry();
	replies.unsubscribe();
	return { out, texts: replies.assistantTexts };
}

describe('blockReplyBreak "message_end" with streaming tool execution', () => {
	for (const verbose of ["off", "on", "full"] as const) {
		it(`sends no reasoning and keeps the order of tools started after the message (verbose ${verbose})`, async () => {
			const streaming = await channel("streaming", verbose);
			const parallel = await channel("parallel", verbose);
			expect(streaming.out.join("\n")).not.toContain("private musing");
			expect(streaming.texts.join("\n")).not.toContain("private musing");
			expect(streaming.out).toEqual(parallel.out);
			expect(streaming.out[0]).toBe("Public answer.");
		});
	}
});
