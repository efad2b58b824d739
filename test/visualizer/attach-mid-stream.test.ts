/**
 * An inspector attached while a reply streams: the page shows what streamed before the attach at
 * once and grows it with the deltas after, instead of showing nothing until the reply ends.
 */
import { describe, expect, it } from "vitest";
import { Agent, createAssistantMessageEventStream, createScriptedModel } from "../../src/index.js";
import { createAgentInspector } from "../../src/inspect/inspector.js";
import type { InspectionRecord } from "../../src/inspect/records.js";
import { toStatechartGraph } from "../../src/inspect/statechart-graph.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import type { AssistantMessage } from "../../src/types/messages.js";
import type { StreamFn } from "../../src/types/stream.js";
import { indexChart } from "../../visualizer/model/chart-index.js";
import { applyRecord, createRunModel } from "../../visualizer/model/run-model.js";
import type { AssistantEntry, RunModel } from "../../visualizer/model/types.js";

const chart = indexChart(toStatechartGraph(agentMachine));

function modelOf(records: readonly InspectionRecord[]): RunModel {
	const model = createRunModel(chart.graph.machineId);
	for (const record of records) applyRecord(model, record, chart);
	return model;
}

const replyOf = (model: RunModel): AssistantEntry | undefined => model.transcript.filter((entry): entry is AssistantEntry => entry.kind === "assistant").at(-1);
const textOf = (entry: AssistantEntry | undefined) => entry?.blocks.map((block) => (block.type === "toolCall" ? `[${block.name}]` : block.text)).join("|");

/** A reply that streams "Hello " and a thinking block, then waits for `release` before "world". */
function pausingStream(): { streamFn: StreamFn; started: Promise<void>; release: () => void } {
	const { model } = createScriptedModel([]);
	let release!: () => void;
	const gate = new Promise<void>((resolve) => (release = resolve));
	let started!: () => void;
	const startedPromise = new Promise<void>((resolve) => (started = resolve));
	const streamFn: StreamFn = () => {
		const stream = createAssistantMessageEventStream();
		const partial: AssistantMessage = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: Date.now() };
		void (async () => {
			stream.push({ type: "start", partial });
			partial.content.push({ type: "thinking", thinking: "" });
			stream.push({ type: "thinking_start", contentIndex: 0, partial });
			(partial.content[0] as { thinking: string }).thinking += "Plan.";
			stream.push({ type: "thinking_delta", contentIndex: 0, delta: "Plan.", partial });
			stream.push({ type: "thinking_end", contentIndex: 0, content: "Plan.", partial });
			partial.content.push({ type: "text", text: "" });
			stream.push({ type: "text_start", contentIndex: 1, partial });
			(partial.content[1] as { text: string }).text += "Hello ";
			stream.push({ type: "text_delta", contentIndex: 1, delta: "Hello ", partial });
			started();
			await gate;
			(partial.content[1] as { text: string }).text += "world";
			stream.push({ type: "text_delta", contentIndex: 1, delta: "world", partial });
			stream.push({ type: "text_end", contentIndex: 1, content: "Hello world", partial });
			stream.push({ type: "done", reason: "stop", message: partial });
		})();
		return stream;
	};
	return { streamFn, started: startedPromise, release };
}

describe("an inspector attached while a reply streams", () => {
	it("shows what streamed before the attach at once, then grows it with each delta", async () => {
		const { streamFn, started, release } = pausingStream();
		const { model } = createScriptedModel([]);
		const agent = new Agent({ initialState: { model }, streamFn });
		try {
			const run = agent.prompt("Say hello");
			await started;
			await new Promise((resolve) => setTimeout(resolve, 5));
			const inspector = createAgentInspector();
			const records: InspectionRecord[] = [];
			inspector.subscribe((batch) => records.push(...batch));
			inspector.attach(agent.actor);
			inspector.flush();
			const mid = replyOf(modelOf(records));
			expect(mid?.streaming).toBe(true);
			expect(textOf(mid)).toBe("Plan.|Hello ");
			release();
			await run;
			inspector.flush();
			const done = modelOf(records);
			expect(textOf(replyOf(done))).toBe("Plan.|Hello world");
			expect(done.transcript.filter((entry) => entry.kind === "assistant")).toHaveLength(1);
		} finally {
			agent.dispose();
		}
	});

	it("does not count what streamed before the attach twice when the page is flushed only after later deltas", async () => {
		const { streamFn, started, release } = pausingStream();
		const { model } = createScriptedModel([]);
		const agent = new Agent({ initialState: { model }, streamFn });
		try {
			const run = agent.prompt("Say hello");
			await started;
			const inspector = createAgentInspector({ schedule: () => {} });
			const records: InspectionRecord[] = [];
			inspector.subscribe((batch) => records.push(...batch));
			inspector.attach(agent.actor);
			// The flush comes after the reply grew: the re-told start must still hold only what had streamed at the attach.
			release();
			await new Promise((resolve) => setTimeout(resolve, 5));
			const beforeEnd = records.length;
			inspector.flush();
			expect(records.length).toBeGreaterThan(beforeEnd);
			await run;
			inspector.flush();
			const shown = modelOf(records);
			expect(textOf(replyOf(shown))).toBe("Plan.|Hello world");
		} finally {
			agent.dispose();
		}
	});
});
