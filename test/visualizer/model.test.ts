/**
 * The page's model, fed real records in Node: what each view shows is decided here, so the
 * stale-state defects are pinned without a browser.
 */
import { describe, expect, it } from "vitest";
import { createAgentInspector } from "../../src/inspect/inspector.js";
import type { InspectionRecord } from "../../src/inspect/records.js";
import { toStatechartGraph } from "../../src/inspect/statechart-graph.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import { indexChart } from "../../visualizer/model/chart-index.js";
import { describeRecord } from "../../visualizer/model/log-lines.js";
import { RecordStore } from "../../visualizer/model/record-store.js";
import { applyRecord, createRunModel } from "../../visualizer/model/run-model.js";
import { agentStatusLine } from "../../visualizer/model/status.js";
import type { RunModel } from "../../visualizer/model/types.js";
import { deployAgent, embeddedTicket, flushed, loopRun, weatherAgent } from "./scenarios.js";

const chart = indexChart(toStatechartGraph(agentMachine));

function modelOf(records: readonly InspectionRecord[]): RunModel {
	const model = createRunModel(chart.graph.machineId);
	for (const record of records) applyRecord(model, record, chart);
	return model;
}

const toolSpans = (model: RunModel) => model.spans.filter((span) => span.kind === "tool").map((span) => `${span.label} ${span.status}`);

/** Records written by hand, for what XState may leave unsaid. */
function synthetic(): { add(record: Record<string, unknown>): void; records: InspectionRecord[] } {
	const records: InspectionRecord[] = [];
	return {
		records,
		add(record) {
			const seq = records.length + 1;
			records.push({ seq, t: 1000 + seq, rootId: "x:0", createdAt: "", id: null, _version: "0.7.2", ...record } as unknown as InspectionRecord);
		},
	};
}

const agentActor = { type: "@xstate.actor", sessionId: "x:1", name: "agent", actorId: "agent", parentId: "x:0", snapshot: { status: "active" } };
const emitted = (event: Record<string, unknown>) => ({ type: "@agentchart.emitted", sessionId: "x:1", event });

describe("the visualizer's run model, on what XState may leave unsaid", () => {
	it("a child its parent no longer lists has stopped, and the tool calls its batch ran are over", () => {
		const log = synthetic();
		log.add(agentActor);
		log.add(emitted({ type: "agent_start" }));
		log.add(emitted({ type: "turn_start" }));
		log.add({ type: "@xstate.actor", sessionId: "x:2", name: "tools", actorId: "tools", parentId: "x:1", snapshot: { status: "active" } });
		log.add(emitted({ type: "tool_execution_start", toolCallId: "c1", toolName: "slow", args: {} }));
		log.add({ type: "@xstate.snapshot", sessionId: "x:1", event: { type: "x" }, snapshot: { status: "active", children: ["tools"] }, activeIds: ["agent", "agent.running", "agent.running.tool-executing"] });
		expect(toolSpans(modelOf(log.records))).toEqual(["slow open"]);
		// The parent's next snapshot lists no batch; the batch itself said nothing.
		log.add({ type: "@xstate.snapshot", sessionId: "x:1", event: { type: "x" }, snapshot: { status: "active", children: [] }, activeIds: ["agent", "agent.running", "agent.running.turn-ended"] });
		const model = modelOf(log.records);
		expect(model.actors["x:2"]).toMatchObject({ status: "stopped", endedT: 1007 });
		expect(toolSpans(model)).toEqual(["slow stopped"]);
		expect(model.transcript.find((entry) => entry.kind === "span")).toMatchObject({ status: "stopped" });
	});

	it("an agent stopped in the middle of a call: the call, the reply and the turn stop with it, and the header says stopped", () => {
		const log = synthetic();
		log.add(agentActor);
		log.add({ type: "@xstate.snapshot", sessionId: "x:1", event: { type: "x" }, snapshot: { status: "active", children: [] }, activeIds: ["agent", "agent.idle"] });
		log.add(emitted({ type: "agent_start" }));
		log.add(emitted({ type: "turn_start" }));
		log.add({ type: "@xstate.actor", sessionId: "x:2", name: "stream", actorId: "stream", parentId: "x:1", snapshot: { status: "active" } });
		log.add(emitted({ type: "message_start", message: { role: "assistant", content: [] } }));
		log.add({ type: "@agentchart.deltas", sessionId: "x:1", count: 2, chars: 5, segments: [{ kind: "text", contentIndex: 0, text: "Hello" }] });
		log.add({ type: "@xstate.snapshot", sessionId: "x:1", event: { type: "x" }, snapshot: { status: "active", children: ["stream"] }, activeIds: ["agent", "agent.running", "agent.running.streaming"] });
		expect(agentStatusLine(modelOf(log.records), chart).text).toBe("running.streaming");
		log.add({ type: "@xstate.snapshot", sessionId: "x:1", event: { type: "xstate.stop" }, snapshot: { status: "stopped", children: [] }, activeIds: ["agent", "agent.running", "agent.running.streaming"] });
		const model = modelOf(log.records);
		expect(agentStatusLine(model, chart)).toMatchObject({ status: "stopped", text: "stopped (last in running.streaming)" });
		expect(model.spans.map((span) => `${span.kind} ${span.status}`)).toEqual(["run stopped", "turn stopped", "model stopped"]);
		expect(model.transcript.find((entry) => entry.kind === "assistant")).toMatchObject({ streaming: false, blocks: [{ type: "text", text: "Hello" }] });
		expect(model.actors["x:2"]?.status).toBe("stopped");
		expect(model.transcript.at(-1)).toMatchObject({ kind: "note", text: "The agent machine stopped." });
	});

	it("a recording made before the inspector kept an actor's status at its creation: a new actor is starting, not stopped", () => {
		const log = synthetic();
		log.add(agentActor);
		log.add({ type: "@xstate.actor", sessionId: "x:2", name: "stream", actorId: "stream", parentId: "x:1", snapshot: { status: "stopped" } });
		expect(modelOf(log.records).actors["x:2"]?.status).toBe("active");
	});

	it("a call whose own id looks like a repeat of another's (d1#2 and d1) ends on its own row", () => {
		// Before, the end of d1 closed d1#2's span (read as d1's second), and d1's stayed open.
		const log = synthetic();
		log.add(agentActor);
		log.add(emitted({ type: "agent_start" }));
		log.add(emitted({ type: "turn_start" }));
		log.add(emitted({ type: "tool_execution_start", toolCallId: "d1#2", toolName: "slow", args: {} }));
		log.add(emitted({ type: "tool_execution_start", toolCallId: "d1", toolName: "fast", args: {} }));
		log.add(emitted({ type: "tool_execution_end", toolCallId: "d1", toolName: "fast", result: { content: [] }, isError: false }));
		expect(toolSpans(modelOf(log.records))).toEqual(["slow open", "fast done"]);
	});

	it("an approval that timed out or went with an aborted run is not shown approved", () => {
		const outcomes = ["timed-out", "aborted"].map((decision) => {
			const log = synthetic();
			log.add(agentActor);
			log.add(emitted({ type: "approval_requested", toolCallId: "c1", toolName: "deploy", args: {} }));
			log.add(emitted({ type: "approval_resolved", toolCallId: "c1", toolName: "deploy", decision }));
			const entry = modelOf(log.records).transcript.find((candidate) => candidate.kind === "span");
			return entry?.kind === "span" ? `${entry.status} ${String(entry.output)}` : "";
		});
		expect(outcomes).toEqual(["error timed out", "stopped aborted"]);
	});
});

describe("the visualizer's run model", () => {
	it("an agent machine embedded in a parent: every tool call ends done, and once the parent stops it the agent is stopped, not idle", async () => {
		const inspector = createAgentInspector();
		const ticket = embeddedTicket(inspector);
		ticket.open();
		await ticket.resolved;
		await flushed(inspector);
		const records = inspector.history();

		// The moment the run went back to idle, before the parent let the agent go.
		const idleAt = records.findIndex((record) => record.type === "@agentchart.emitted" && record.event.type === "agent_end");
		const duringRun = modelOf(records.slice(0, idleAt + 1));
		expect(toolSpans(duringRun)).toEqual(["get_weather done", "get_weather done"]);

		const model = modelOf(records);
		expect(toolSpans(model)).toEqual(["get_weather done", "get_weather done"]);
		expect(model.spans.filter((span) => span.status === "open")).toEqual([]);
		const line = agentStatusLine(model, chart);
		expect(line.status).toBe("stopped");
		expect(line.text).not.toBe("idle");
		expect(line.text).toMatch(/^stopped/);
		// Every child of the agent is over.
		const agent = model.agent;
		expect(Object.values(model.actors).filter((actor) => actor.parentId === agent && actor.endedT === undefined)).toEqual([]);
	});

	it("the loop API: the machine stopped after its run says stopped, with its tools done", async () => {
		const inspector = createAgentInspector();
		await loopRun(inspector);
		await flushed(inspector);
		const model = modelOf(inspector.history());
		expect(toolSpans(model)).toEqual(["get_weather done", "get_weather done"]);
		expect(agentStatusLine(model, chart).status).toBe("stopped");
	});

	it("approvals of two calls with one id: each decision lands on its own row, decided in either order", async () => {
		const { agent, asked } = deployAgent(["d1", "d1"]);
		const inspector = createAgentInspector();
		inspector.attach(agent.actor);
		const run = agent.prompt("Deploy billing and search");
		await asked;
		expect(agent.pendingApprovals.map((call) => call.callKey)).toEqual(["d1#1", "d1#2"]);
		// The second call first: approved; then the first: rejected.
		await agent.approve("d1#2");
		await flushed(inspector);
		const between = modelOf(inspector.history());
		const approvals = (model: RunModel) =>
			model.transcript.flatMap((entry) => (entry.kind === "span" && entry.spanKind === "approval" ? [`${JSON.stringify(entry.input)} ${entry.status} ${String(entry.output)}`] : []));
		expect(approvals(between)).toEqual(['{"service":"billing"} open undefined', '{"service":"search"} done approved']);
		// The billing call still waits for its person; the search call does not.
		const tools = (model: RunModel) => model.spans.filter((span) => span.kind === "tool").map((span) => (span.status === "open" ? `open: ${span.openWord ?? "running"}` : span.status));
		expect(tools(between)[0]).toBe("open: waiting for approval");
		await agent.reject("d1#1", "not on a Friday");
		await run;
		await flushed(inspector);
		const model = modelOf(inspector.history());
		expect(approvals(model)).toEqual(['{"service":"billing"} error rejected: not on a Friday', '{"service":"search"} done approved']);
		expect(model.spans.filter((span) => span.status === "open")).toEqual([]);
		agent.dispose();
	});

	it("two calls with one id, the first approved (and running) and the second rejected: each tool row ends with its own call's outcome, and the arguments a person gave are the row's", async () => {
		const { agent, asked } = deployAgent(["d1", "d1"]);
		const inspector = createAgentInspector();
		inspector.attach(agent.actor);
		const run = agent.prompt("Deploy billing and search");
		await asked;
		// The first runs with arguments the person changed; the second's rejection ends it at once,
		// before the first's end: it closed the first's row before.
		await agent.approve("d1#1", { arguments: { service: "billing-canary" } });
		await agent.reject("d1#2", "not on a Friday");
		await run;
		await flushed(inspector);
		const model = modelOf(inspector.history());
		const tools = model.transcript.flatMap((entry) => (entry.kind === "span" && entry.spanKind === "tool" ? [`${JSON.stringify(entry.input)} ${entry.status} ${JSON.stringify(entry.output).slice(0, 60)}`] : []));
		expect(tools).toEqual([expect.stringMatching(/^\{"service":"billing-canary"\} done .*billing-canary deployed/), expect.stringMatching(/^\{"service":"search"\} error .*Tool call was rejected/)]);
		const approvals = model.transcript.flatMap((entry) => (entry.kind === "span" && entry.spanKind === "approval" ? [`${entry.status} ${String(entry.output)}`] : []));
		expect(approvals).toEqual(["done approved with changed arguments", "error rejected: not on a Friday"]);
		expect(model.spans.filter((span) => span.status === "open")).toEqual([]);
		agent.dispose();
	});

	it("an inspector attached while two calls with one id wait re-tells each question with its callKey, so each decision lands on its row", async () => {
		const { agent, asked } = deployAgent(["d1", "d1"]);
		const run = agent.prompt("Deploy billing and search");
		await asked;
		const inspector = createAgentInspector();
		inspector.attach(agent.actor);
		await flushed(inspector);
		const told = inspector.history().flatMap((record) => (record.type === "@agentchart.emitted" && record.event.type === "approval_requested" ? [record.event["callKey"]] : []));
		expect(told).toEqual(["d1#1", "d1#2"]);
		await agent.approve("d1#2");
		await agent.reject("d1#1", "not on a Friday");
		await run;
		await flushed(inspector);
		const model = modelOf(inspector.history());
		const approvals = model.transcript.flatMap((entry) => (entry.kind === "span" && entry.spanKind === "approval" ? [`${JSON.stringify(entry.input)} ${entry.status} ${String(entry.output)}`] : []));
		expect(approvals).toEqual(['{"service":"billing"} error rejected: not on a Friday', '{"service":"search"} done approved']);
		expect(model.spans.filter((span) => span.status === "open")).toEqual([]);
		agent.dispose();
	});

	it("approvals: a call waiting for a person says so, and the decision (approved, rejected with its reason) is what the page shows", async () => {
		const { agent, asked } = deployAgent();
		const inspector = createAgentInspector();
		inspector.attach(agent.actor);
		const run = agent.prompt("Deploy billing and search");
		await asked;
		await flushed(inspector);
		const spansOf = (model: RunModel, kind: string) => model.spans.filter((span) => span.kind === kind).map((span) => (span.status === "open" ? `open: ${span.openWord ?? "running"}` : span.status));
		const waiting = modelOf(inspector.history());
		expect(spansOf(waiting, "approval")).toEqual(["open: waiting", "open: waiting"]);
		expect(spansOf(waiting, "tool")).toEqual(["open: waiting for approval", "open: waiting for approval"]);

		await agent.approve("d1");
		await agent.reject("d2", "not on a Friday");
		await run;
		await flushed(inspector);
		const model = modelOf(inspector.history());
		expect(spansOf(model, "approval")).toEqual(["done", "error"]);
		expect(spansOf(model, "tool")).toEqual(["done", "error"]);
		const rows = model.transcript.flatMap((entry) => (entry.kind === "span" ? [`${entry.spanKind} ${JSON.stringify(entry.input)} ${entry.status} ${entry.spanKind === "approval" ? String(entry.output) : ""}`.trim()] : []));
		expect(rows).toEqual([
			'tool {"service":"billing"} done',
			'approval {"service":"billing"} done approved',
			'tool {"service":"search"} error',
			'approval {"service":"search"} error rejected: not on a Friday',
		]);
		// The log says the same in one line each, a no in the error tone.
		const approvalLines = inspector.history().flatMap((record) => {
			const line = record.type === "@agentchart.emitted" && record.event.type.startsWith("approval_") ? describeRecord(record, { chart, nameOf: (id) => id ?? "" }) : undefined;
			return line ? [`${line.title} ${line.summary}${line.tone ? ` (${line.tone})` : ""}`] : [];
		});
		expect(approvalLines).toEqual([
			'approval_requested deploy {"service":"billing"}',
			'approval_requested deploy {"service":"search"}',
			"approval_resolved deploy approved",
			"approval_resolved deploy rejected: not on a Friday (error)",
		]);
		agent.dispose();
	});

	it("an Agent: the transcript holds the prompt, the thinking, the text, both tool calls with arguments and results, and the answer", async () => {
		const agent = weatherAgent({ delayMs: 0 });
		const inspector = createAgentInspector();
		inspector.attach(agent.actor);
		await agent.prompt("Weather in Paris and Tokyo?");
		await flushed(inspector);
		const model = modelOf(inspector.history());
		const rows = model.transcript.map((entry) => {
			if (entry.kind === "user") return `user ${entry.text}`;
			if (entry.kind === "assistant") return `assistant ${entry.blocks.map((block) => (block.type === "toolCall" ? `[${block.name} ${JSON.stringify(block.args)}]` : `${block.type}:${block.text}`)).join(" ")}`;
			if (entry.kind === "span") return `${entry.spanKind} ${entry.title} ${JSON.stringify(entry.input)} ${entry.status} ${JSON.stringify(entry.output).includes("sunny")}`;
			return `note ${entry.text}`;
		});
		expect(rows).toEqual([
			"user Weather in Paris and Tokyo?",
			'assistant thinking:Two independent lookups: run them in parallel. text:Let me check both cities. [get_weather {"city":"Paris"}] [get_weather {"city":"Tokyo"}]',
			'tool get_weather {"city":"Paris"} done true',
			'tool get_weather {"city":"Tokyo"} done true',
			"assistant text:Paris is sunny and so is Tokyo.",
		]);
		expect(model.turns.map((turn) => turn.endSeq !== undefined)).toEqual([true, true]);
		expect(model.spans.map((span) => span.kind)).toEqual(expect.arrayContaining(["run", "turn", "model", "tool"]));
		expect(model.spans.filter((span) => span.kind === "model").map((span) => span.marks.length)).toEqual([1, 1]);
		agent.dispose();
	});

	it("grows the streaming reply from delta records, in order", async () => {
		const agent = weatherAgent({ delayMs: 0 });
		const inspector = createAgentInspector();
		inspector.attach(agent.actor);
		await agent.prompt("Weather?");
		await flushed(inspector);
		const records = inspector.history();
		const firstEnd = records.findIndex((record) => record.type === "@agentchart.emitted" && record.event.type === "message_end" && JSON.stringify(record.event).includes('"assistant"'));
		const streamed = modelOf(records.slice(0, firstEnd));
		const reply = streamed.transcript.find((entry) => entry.kind === "assistant");
		expect(reply?.kind === "assistant" && reply.streaming).toBe(true);
		const texts = reply?.kind === "assistant" ? reply.blocks.map((block) => (block.type === "toolCall" ? block.argsText : block.text)) : [];
		expect(texts.slice(0, 2)).toEqual(["Two independent lookups: run them in parallel.", "Let me check both cities."]);
		agent.dispose();
	});

	it("names an eventless step `always`, with the event whose step it was part of, not after that event", async () => {
		const inspector = createAgentInspector();
		const ticket = embeddedTicket(inspector);
		ticket.open();
		await ticket.resolved;
		await flushed(inspector);
		const names = (id: string | undefined) => id ?? "outside";
		const lines = inspector.history().flatMap((record) => {
			const line = describeRecord(record, { chart, nameOf: names });
			return line?.category === "transition" ? [line] : [];
		});
		const nextTurn = lines.find((line) => line.summary.startsWith("running.turn-ended → running.before-call"));
		expect(nextTurn).toMatchObject({ title: "always", eventless: true, cause: "tool.settled" });
		expect(nextTurn?.summary).toContain("[eventsDelivered && (toolsWantAnotherCall || steeringQueued)]");
		expect(lines.find((line) => line.summary.startsWith("idle → running"))).toMatchObject({ title: "prompt" });
		expect(lines.filter((line) => line.title === "tool.settled" && line.summary.includes("→ running.before-call"))).toEqual([]);
	});

	it("seeks: the model at any position is the model of the records before it, back and forth, and position 0 shows nothing", async () => {
		const agent = weatherAgent({ delayMs: 0 });
		const inspector = createAgentInspector();
		inspector.attach(agent.actor);
		await agent.prompt("Weather?");
		agent.dispose();
		await flushed(inspector);
		const records = inspector.history();
		const store = new RecordStore(chart, 40);
		store.push(records.slice(0, 30));
		store.push(records.slice(30));
		// Beyond capacity the oldest were folded into the base: seeking is limited to what is held.
		expect(store.start).toBeGreaterThan(0);
		const full = new RecordStore(chart);
		full.push(records);
		const positions = [records.length, 3, 50, 1, records.length - 5, 0, 20];
		for (const position of positions) {
			const expected = modelOf(records.slice(0, position));
			expect(full.modelAt(position)).toEqual(expected);
		}
		expect(agentStatusLine(full.modelAt(0), chart).text).toBe("no records yet");
		expect(agentStatusLine(full.modelAt(2), chart).text).toBe("idle");
		expect(agentStatusLine(full.modelAt(records.length), chart)).toMatchObject({ status: "done", text: "ended (final state)" });
		for (const position of [store.start, store.start + 5, store.end]) expect(store.modelAt(position).applied).toBe(position);
	});
});
