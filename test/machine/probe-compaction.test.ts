/**
 * Compaction edges found by an outside probe: a custom summariser that
 * answers with no text fails the compaction instead of replacing the history with an empty
 * summary, as the default summariser (the agent's own model) already does; and the listeners of
 * `auto_compaction_end` find the compacted transcript in `agent.state.messages`.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { makeTool, ok, textOf, user } from "../agent/helpers.js";

function history(): AgentMessage[] {
	return [user(`first ${"a".repeat(400)}`), user(`second ${"b".repeat(400)}`), user(`third ${"c".repeat(400)}`)];
}

describe("a custom summariser that returns no text", () => {
	for (const [name, answer] of [
		["an empty string", ""],
		["only whitespace", " \n "],
		["undefined (a JavaScript summariser that forgot to return)", undefined],
	] as const) {
		it(`manual compaction: ${name} rejects compact() and leaves the transcript as it was`, async () => {
			const scripted = createScriptedModel([]);
			const messages = history();
			const agent = new Agent({
				initialState: { model: scripted.model, messages },
				streamFn: scripted.streamFn,
				compaction: { enabled: true, keepRecentTokens: 10, summarize: async () => answer as unknown as string },
			});
			await expect(agent.compact()).rejects.toThrow("Compaction failed: Summarization failed: summarize() returned no text");
			expect(agent.state.messages.map((message) => textOf(message))).toEqual(messages.map((message) => textOf(message)));
		});
	}

	it("threshold compaction: the run goes on with its call on the whole transcript, and the end says why", async () => {
		const scripted = createScriptedModel([{ content: "answered" }], { model: { contextWindow: 500 } });
		const messages = [...history(), ...history()];
		const agent = new Agent({
			initialState: { model: scripted.model, messages },
			streamFn: scripted.streamFn,
			compaction: { enabled: true, reserveTokens: 100, keepRecentTokens: 10, summarize: async () => "" },
		});
		const ends: AgentEvent[] = [];
		agent.subscribe((event) => {
			if (event.type === "auto_compaction_end") ends.push(event);
		});
		await agent.prompt("go");
		expect(ends).toEqual([expect.objectContaining({ reason: "threshold", aborted: false, errorMessage: "Compaction failed: Summarization failed: summarize() returned no text" })]);
		expect(agent.state.messages.some((message) => (message as { role: string }).role === "compactionSummary")).toBe(false);
		expect(scripted.calls[0]?.messages).toHaveLength(messages.length + 1);
		expect(textOf(agent.state.messages.at(-1))).toBe("answered");
	});
});

describe("what a listener of auto_compaction_end reads in agent.state", () => {
	/** The roles of the transcript as each compaction event reached a listener, and after the run. */
	async function transcriptsSeen(reason: "threshold" | "overflow" | "manual") {
		const overflow = { content: "", stopReason: "error" as const, errorMessage: "prompt is too long: 150000 tokens > 100000 maximum" };
		const replies = reason === "overflow" ? [overflow, { content: "answered" }] : [{ content: [toolCall("read", {}, "c1")] }, { content: "answered" }];
		const scripted = createScriptedModel(replies, { model: { contextWindow: 1000 } });
		const read = makeTool("read", async () => ok("r".repeat(4000)));
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [read], messages: history() },
			streamFn: scripted.streamFn,
			compaction: { enabled: reason !== "manual", reserveTokens: 100, keepRecentTokens: 50, summarize: async () => "the summary" },
		});
		const seen: { type: string; roles: string[]; tokensAfter?: number | undefined }[] = [];
		agent.subscribe(async (event) => {
			if (event.type !== "auto_compaction_start" && event.type !== "auto_compaction_end") return;
			// An async listener, as one that saves the session would be.
			await Promise.resolve();
			seen.push({ type: event.type, roles: agent.state.messages.map((message) => (message as { role: string }).role), tokensAfter: event.type === "auto_compaction_end" ? event.result?.tokensAfter : undefined });
		});
		if (reason === "manual") await agent.compact();
		else await agent.prompt("go");
		return { seen, final: agent.state.messages };
	}

	for (const reason of ["threshold", "overflow", "manual"] as const) {
		it(`${reason}: the transcript before compaction at its start, the compacted one at its end`, async () => {
			const { seen, final } = await transcriptsSeen(reason);
			expect(seen.map((entry) => entry.type)).toEqual(["auto_compaction_start", "auto_compaction_end"]);
			const [start, end] = seen;
			expect(start?.roles[0]).toBe("user");
			expect(end?.roles[0]).toBe("compactionSummary");
			expect(end?.roles.length).toBeLessThan(start?.roles.length ?? 0);
			// The end's transcript is the one the run went on from: the final one begins with it.
			expect(final.slice(0, end?.roles.length).map((message) => (message as { role: string }).role)).toEqual(end?.roles);
		});
	}
});

describe("agent_end after a compaction inside the run", () => {
	it("lists every message the run added, also those the compaction summarised; agent.state.messages holds the summary", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("read", {}, "c1")] }, { content: "answered" }], { model: { contextWindow: 1000 } });
		const read = makeTool("read", async () => ok("r".repeat(4000)));
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [read], messages: history() },
			streamFn: scripted.streamFn,
			compaction: { enabled: true, reserveTokens: 100, keepRecentTokens: 50, summarize: async () => "the summary" },
		});
		const ended: AgentMessage[][] = [];
		agent.subscribe((event) => {
			if (event.type === "agent_end") ended.push(event.messages);
		});
		await agent.prompt("go");
		const roles = (messages: readonly AgentMessage[]) => messages.map((message) => (message as { role: string }).role);
		expect(roles(ended[0] ?? [])).toEqual(["user", "assistant", "toolResult", "assistant"]);
		expect(textOf(ended[0]?.[0])).toBe("go");
		// The prompt was summarised away: the transcript no longer holds it, agent_end still does.
		expect(roles(agent.state.messages)[0]).toBe("compactionSummary");
		expect(agent.state.messages.some((message) => textOf(message) === "go")).toBe(false);
	});
});
