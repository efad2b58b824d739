/**
 * An inspector attached to an agent that already holds a conversation (restored by
 * `Agent.load` while its run waits for a person) tells what it holds; and turns are numbered
 * as the agent counts them, so a page opened late numbers them as one open all along does.
 */
import { describe, expect, it } from "vitest";
import { Agent, type AgentTool, createScriptedModel, toolCall } from "../../src/index.js";
import { turnLabel } from "../../visualizer/model/spans.js";
import type { RunModel } from "../../visualizer/model/types.js";
import { Type } from "typebox";
import { attachRecording, modelOf } from "./attach-helpers.js";
import { loadedWaitingForApproval } from "./scenarios.js";

describe("an inspector attached to an agent restored mid-run", () => {
	it("tells its transcript and the call waiting for approval, and times the wait from the attach", async () => {
		const agent = await loadedWaitingForApproval();
		try {
			expect(agent.pendingApprovals.map((call) => call.toolCallId)).toEqual(["call-1"]);
			const { inspector, records } = attachRecording(agent);
			const waiting = modelOf(records);
			const summary = waiting.transcript.map((entry) =>
				entry.kind === "span" ? `${entry.spanKind} ${entry.title} ${entry.openWord ?? entry.status}` : entry.kind === "assistant" ? `assistant ${entry.blocks.map((block) => (block.type === "toolCall" ? `calls ${block.name}` : block.text)).join(" / ")}` : `${entry.kind} ${entry.kind === "user" || entry.kind === "note" ? entry.text : ""}`,
			);
			expect(summary).toEqual(["user Deploy billing", "assistant Deploying billing now. / calls deploy", "tool deploy waiting for approval", "approval approval for deploy waiting"]);
			expect(waiting.transcript.every((entry) => entry.restored === true)).toBe(true);
			expect(waiting.spans.filter((span) => span.status === "open").map((span) => span.label)).toEqual(["run", "run 1 · turn 1", "deploy", "approval · deploy"]);
			expect(records.filter((record) => record.type === "@agentchart.emitted").every((record) => record.type === "@agentchart.emitted" && record.restored === true)).toBe(true);

			await new Promise((resolve) => setTimeout(resolve, 40));
			agent.approve("call-1");
			await agent.waitForIdle();
			inspector.flush();
			const done = modelOf(records);
			const approval = done.transcript.find((entry) => entry.kind === "span" && entry.spanKind === "approval");
			expect(approval?.kind === "span" && approval.status).toBe("done");
			// Timed from the attach (40 ms before the decision), not a zero-length wait the page never saw start.
			const wait = approval?.kind === "span" && approval.endT !== undefined ? approval.endT - approval.startT : -1;
			expect(wait).toBeGreaterThanOrEqual(35);
			expect(done.transcript.filter((entry) => entry.kind === "span" && entry.spanKind === "approval")).toHaveLength(1);
			expect(done.transcript.at(-1)?.kind === "assistant" && done.transcript.at(-1)?.restored).toBe(undefined);
		} finally {
			agent.dispose();
		}
	});

	it("tells nothing for a new agent, and only the transcript for one that is idle", async () => {
		const scripted = createScriptedModel([{ content: "hello" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		try {
			const early = attachRecording(agent).records;
			expect(early.filter((record) => record.type === "@agentchart.emitted")).toEqual([]);
			await agent.prompt("hi");
			const model = modelOf(attachRecording(agent).records);
			expect(model.transcript.map((entry) => entry.kind)).toEqual(["user", "assistant"]);
			expect(model.spans).toEqual([]);
		} finally {
			agent.dispose();
		}
	});
});

describe("turn numbers", () => {
	it("are the agent's run and turn, the same for a page that holds every record and one that holds the last few", async () => {
		const params = Type.Object({ q: Type.String() });
		const search: AgentTool<typeof params> = { name: "search", label: "Search", description: "Searches", parameters: params, execute: async (_id, { q }) => ({ content: [{ type: "text", text: `found ${q}` }], details: {} }) };
		const runs = 6;
		const replies = [];
		for (let index = 0; index < runs; index++) replies.push({ content: [toolCall("search", { q: `q${index}` }, `c${index}`)] }, { content: `answer ${index}` });
		const scripted = createScriptedModel(replies);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [search] }, streamFn: scripted.streamFn });
		try {
			const { inspector, records: all } = attachRecording(agent, { historySize: 60 });
			for (let index = 0; index < runs; index++) await agent.prompt(`question ${index}`);
			inspector.flush();
			const labels = (model: RunModel) => model.turns.map((turn) => turnLabel(turn));
			const live = labels(modelOf(all));
			const late = labels(modelOf(inspector.history()));
			expect(live).toHaveLength(runs * 2);
			expect(live.slice(-2)).toEqual([`Run ${runs} · Turn 1`, `Run ${runs} · Turn 2`]);
			expect(late.length).toBeLessThan(live.length);
			expect(late).toEqual(live.slice(-late.length));
		} finally {
			agent.dispose();
		}
	});
});
