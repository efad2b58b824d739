/**
 * Compaction defects found by probing as a user (scratch/probe-reply/c*.ts), each pinned here.
 */
import { describe, expect, it, vi } from "vitest";
import { Agent } from "../../src/agent.js";
import { planCompaction } from "../../src/compaction/cut-point.js";
import { estimateContextTokens } from "../../src/compaction/estimate.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
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

	// On a real clock the kept replies are older than the summary, as they are outside a test that
	// runs in one millisecond; on a frozen one (a fast model and summariser on a fast machine) they
	// share its millisecond, and the count of messages the summary kept tells them apart.
	it.each(["a real clock", "a frozen clock"])("neither reports a compaction as no gain nor starts another at the next prompt, on %s", async (clock) => {
		const big = "x".repeat(4000);
		const now = clock === "a frozen clock" ? vi.spyOn(Date, "now").mockReturnValue(1_800_000_000_000) : undefined;
		try {
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
			if (!now) await new Promise((resolve) => setTimeout(resolve, 5));
			const result = await agent.compact();
			expect(result.tokensBefore).toBe(9000);
			expect(result.tokensAfter).toBeLessThan(3000);
			const [summary, ...kept] = agent.state.messages;
			expect(summary).toMatchObject({ role: "compactionSummary", messagesKept: kept.length });
			const events: AgentEvent[] = [];
			agent.subscribe((event) => void events.push(event));
			await agent.prompt("three");
			expect(events.filter((event) => event.type === "auto_compaction_start")).toEqual([]);
			expect(summaries).toBe(1);
		} finally {
			now?.mockRestore();
		}
	});
});

describe("usage from before the latest compaction, in one millisecond", () => {
	it("is not read from a kept reply of the summary's millisecond, told by the count of messages it kept", () => {
		const summary = { role: "compactionSummary", summary: "s".repeat(400), tokensBefore: 9000, messagesDropped: 3, messagesKept: 1, timestamp: 1000 } as unknown as AgentMessage;
		expect(estimateContextTokens([summary, reply("k".repeat(400), 9000, 1000)])).toBe(100 + 100);
		// A reply after the kept ones measured the compacted context, of the summary's millisecond too.
		const prompt: AgentMessage = { role: "user", content: "next", timestamp: 1000 };
		expect(estimateContextTokens([summary, reply("k".repeat(400), 9000, 1000), prompt, reply("f", 250, 1000)])).toBe(250);
		// A count that is not one is no count: the time alone decides.
		for (const messagesKept of [-1, Number.NaN, 1.5, "1"]) {
			expect(estimateContextTokens([{ ...summary, messagesKept } as unknown as AgentMessage, reply("k".repeat(400), 9000, 1000)])).toBe(9000);
		}
	});

	it("is told apart also when the caller edited the transcript after the summary", () => {
		const summary = { role: "compactionSummary", summary: "s".repeat(400), tokensBefore: 9000, messagesDropped: 3, messagesKept: 2, timestamp: 2000 } as unknown as AgentMessage;
		const keptPrompt: AgentMessage = { role: "user", content: "k".repeat(400), timestamp: 1000 };
		const keptReply = reply("k".repeat(400), 9000, 1000);
		const note: AgentMessage = { role: "user", content: "note", timestamp: 3000 };
		// A note put in among the kept messages pushes the kept reply past the count: its time still says kept.
		expect(estimateContextTokens([summary, note, keptPrompt, keptReply])).toBe(100 + 1 + 100 + 100);
		// A kept message taken out brings a fresh reply within the count: its time says fresh.
		expect(estimateContextTokens([summary, keptReply, reply("f", 5000, 3000)])).toBe(5000);
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

	it("is not summarised away by a keepRecentTokens of NaN: the run is refused before it starts, and a compaction planned with it fails", async () => {
		expect(() => planCompaction(history(), Number.NaN)).toThrow(RangeError);
		const scripted = createScriptedModel([{ content: "", stopReason: "error", errorMessage: "prompt is too long: 150000 tokens > 100000 maximum" }, { content: "answer" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, messages: history() },
			streamFn: scripted.streamFn,
			compaction: { enabled: true, keepRecentTokens: Number(process.env["AGENTCHART_UNSET_KEEP_RECENT"]), summarize: async () => "summary" },
		});
		await expect(agent.prompt("What is the answer to my new question?")).rejects.toThrow(/agent\.compaction has keepRecentTokens NaN/);
		expect(scripted.calls).toHaveLength(0);
		expect(agent.state.messages).toEqual(history());
	});
});

describe("compaction settings no run can use", () => {
	it("are refused when a run would start, naming the setting; a non-string compact() instruction too", async () => {
		const refused: string[] = [];
		for (const compaction of [{ enabled: true, reserveTokens: Number.NaN }, { enabled: true, keepRecentTokens: -1 }, { enabled: "yes" }, 5, { enabled: true, summarize: "short" }]) {
			const scripted = createScriptedModel([{ content: "hello" }]);
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, compaction: compaction as never });
			const error = await agent.prompt("hi").then(
				() => undefined,
				(caught: unknown) => caught,
			);
			expect(error, JSON.stringify(compaction)).toBeInstanceOf(TypeError);
			refused.push((error as Error).message);
			// Nothing was recorded, and the model was not asked.
			expect(agent.state.messages).toEqual([]);
			expect(scripted.calls).toHaveLength(0);
		}
		expect(refused).toEqual([
			"agent.compaction has reserveTokens NaN: it must be a finite number of tokens, at least 0",
			"agent.compaction has keepRecentTokens -1: it must be a finite number of tokens, at least 0",
			'agent.compaction has enabled "yes": it must be true or false',
			"agent.compaction must be an object of compaction settings, got 5",
			'agent.compaction has summarize "short": it must be a function',
		]);
		const scripted = createScriptedModel([]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await expect(agent.compact(42 as never)).rejects.toThrow(new TypeError("agentchart: compact(instructions): instructions must be a string, got number"));
		// null is no compaction, as leaving it out.
		const off = new Agent({ initialState: { model: createScriptedModel([{ content: "hello" }]).model }, streamFn: createScriptedModel([{ content: "hello" }]).streamFn, compaction: null as never });
		await off.prompt("hi");
		expect(off.state.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
	});
});
