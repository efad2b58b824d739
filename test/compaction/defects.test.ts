/**
 * Compaction defects found by probing as a user (scratch/probe-reply/c*.ts), each pinned here.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { planCompaction } from "../../src/compaction/cut-point.js";
import { estimateContextTokens } from "../../src/compaction/estimate.js";
import { createScriptedModel, type ScriptedReplyFactory } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";

const usage = (totalTokens: number) => ({ input: totalTokens, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });

function reply(text: string, totalTokens: number, timestamp: number): AgentMessage {
	return { role: "assistant", content: [{ type: "text", text }], api: "scripted", provider: "scripted", model: "scripted-1", usage: usage(totalTokens), stopReason: "stop", timestamp };
}

describe("usage from before the latest compaction", () => {
	it("is not read from the replies the compaction kept", () => {
		const summary = { role: "compactionSummary", summary: "s".repeat(400), tokensBefore: 9000, messagesDropped: 3, timestamp: 2000 } as unknown as AgentMessage;
		// Written before the compaction: its usage measured the transcript the summary replaced.
		const kept = reply("k".repeat(400), 9000, 1000);
		const prompt: AgentMessage = { role: "user", content: "next", timestamp: 3000 };
		expect(estimateContextTokens([summary, kept, prompt])).toBe(100 + 100 + 1);
		// A reply written after the compaction measured the compacted context: it counts.
		const fresh = reply("f", 250, 4000);
		expect(estimateContextTokens([summary, kept, prompt, fresh])).toBe(250);
	});

	it("neither reports a compaction as no gain nor starts another at the next prompt", async () => {
		const big = "x".repeat(4000);
		const scripted = createScriptedModel(
			[
				{ content: `first ${big}`, usage: { input: 3000, output: 1000 } },
				{ content: `second ${big}`, usage: { input: 8000, output: 1000 } },
				{ content: "third", usage: { input: 100, output: 10 } },
			],
			{ model: { contextWindow: 10_000 } },
		);
		let summaries = 0;
		const agent = new Agent({
			initialState: { model: scripted.model },
			streamFn: scripted.streamFn,
			compaction: { enabled: true, reserveTokens: 2000, keepRecentTokens: 1500, summarize: async () => `summary ${++summaries}` },
		});
		await agent.prompt(`one ${big}`);
		await agent.prompt("two");
		// The kept replies are older than the summary, as they are outside a test that runs in one millisecond.
		await new Promise((resolve) => setTimeout(resolve, 5));
		const result = await agent.compact();
		expect(result.tokensBefore).toBe(9000);
		expect(result.tokensAfter).toBeLessThan(3000);
		const events: AgentEvent[] = [];
		agent.subscribe((event) => void events.push(event));
		await agent.prompt("three");
		expect(events.filter((event) => event.type === "auto_compaction_start")).toEqual([]);
		expect(summaries).toBe(1);
	});
});

describe("the pending prompt", () => {
	const big = "x".repeat(4000);
	function history(): AgentMessage[] {
		return [0, 1, 2].flatMap((i): AgentMessage[] => [{ role: "user", content: `q${i} ${big}`, timestamp: i }, reply(`a${i}`, 0, i)]);
	}

	it("is kept with keepRecentTokens 0: a summary does not replace the message the call answers", () => {
		const prompt: AgentMessage = { role: "user", content: "What now?", timestamp: 9 };
		const plan = planCompaction([...history(), prompt], 0);
		expect(plan?.kept).toEqual([prompt]);
		expect(plan?.dropped).toBe(6);
	});

	it("is not summarised away by a keepRecentTokens of NaN: the compaction fails and says why", async () => {
		expect(() => planCompaction(history(), Number.NaN)).toThrow(RangeError);
		const seen: string[][] = [];
		const retry: ScriptedReplyFactory = (context) => {
			seen.push(context.messages.map((message) => message.role));
			return { content: "answer" };
		};
		const scripted = createScriptedModel([{ content: "", stopReason: "error", errorMessage: "prompt is too long: 150000 tokens > 100000 maximum" }, retry]);
		const agent = new Agent({
			initialState: { model: scripted.model, messages: history() },
			streamFn: scripted.streamFn,
			compaction: { enabled: true, keepRecentTokens: Number(process.env["AGENTCHART_UNSET_KEEP_RECENT"]), summarize: async () => "summary" },
		});
		const ends: AgentEvent[] = [];
		agent.subscribe((event) => void (event.type === "auto_compaction_end" && ends.push(event)));
		await agent.prompt("What is the answer to my new question?");
		expect(ends).toMatchObject([{ type: "auto_compaction_end", errorMessage: expect.stringContaining("keepRecentTokens") }]);
		// The retry never ran on a transcript whose only user message is the summary.
		expect(seen).toEqual([]);
		expect(JSON.stringify(agent.state.messages)).toContain("What is the answer to my new question?");
	});
});
