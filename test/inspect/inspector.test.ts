import { join } from "node:path";
import { Type } from "typebox";
import { createInspector, type StatelyInspectionEvent } from "@statelyai/inspect";
import { createActor, createMachine } from "xstate";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import { tapDeltas } from "../../src/machines/delta-taps.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentTool } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { createAgentInspector } from "../../src/inspect/inspector.js";
import type { InspectionRecord } from "../../src/inspect/records.js";
import { type AgentContextSummary, previewValue, summarizeContext, summarizeEvent } from "../../src/inspect/summarize.js";
import { LiveActors } from "../../src/inspect/live-actors.js";
import { RingBuffer } from "../../src/inspect/ring-buffer.js";
import { forwardToStately, readRecording, recordToNdjson } from "../../src/inspect/sinks.js";
import { toStatechartGraph } from "../../src/inspect/statechart-graph.js";
import { useTempDirs } from "../temp-dirs.js";
import { collectGarbage } from "../collect-garbage.js";

const tempDir = useTempDirs("agentchart-inspector-");
const params = Type.Object({});
const clock: AgentTool<typeof params> = {
	name: "clock",
	label: "Clock",
	description: "The time.",
	parameters: params,
	execute: async () => ({ content: [{ type: "text", text: "12:00" }], details: {} }),
};

function toolRunAgent(messages: AgentMessage[] = []): Agent {
	const scripted = createScriptedModel([{ content: [toolCall("clock", {}, "t1")] }, { content: "It is noon." }], { chunkSize: 4 });
	return new Agent({ initialState: { model: scripted.model, tools: [clock], messages }, streamFn: scripted.streamFn });
}

async function settle(): Promise<void> {
	await new Promise((resolve) => setImmediate(resolve));
}

/** Strictly increasing `seq`: in order, none twice. */
function inOrder(records: readonly InspectionRecord[]): boolean {
	return records.every((record, index) => index === 0 || record.seq > (records[index - 1] as InspectionRecord).seq);
}

function ofType<T extends InspectionRecord["type"]>(records: InspectionRecord[], type: T): Extract<InspectionRecord, { type: T }>[] {
	return records.filter((record): record is Extract<InspectionRecord, { type: T }> => record.type === type);
}

describe("the agent inspector", () => {
	it("hears the children a run spawned before `agent.actor` was asked for, once the run is handed over", async () => {
		let release = () => {};
		let started = () => {};
		const running = new Promise<void>((resolve) => (started = resolve));
		const gate = new Promise<void>((resolve) => (release = resolve));
		const slowClock: AgentTool<typeof params> = { ...clock, execute: async () => (started(), await gate, { content: [{ type: "text", text: "12:00" }], details: {} }) };
		const scripted = createScriptedModel([{ content: [toolCall("clock", {}, "t1")] }, { content: "It is noon." }], { chunkSize: 4 });
		const agent = new Agent({ initialState: { model: scripted.model, tools: [slowClock] }, streamFn: scripted.streamFn });
		const done = agent.prompt("What time is it?");
		await running;
		// The run started on a lean actor; the batch running the tool is its child.
		const seen: string[] = [];
		agent.actor.system.inspect((record) => {
			if (record.type !== "@xstate.event") return;
			const source = record.sourceRef as { id?: string } | undefined;
			seen.push(`${source?.id ?? "-"} ${(record.event as { type: string }).type}`);
		});
		release();
		await done;
		expect(seen).toContain("tools tool.settled");
	});

	it("attaches to an agent that is already running and records the whole run", async () => {
		const agent = toolRunAgent();
		const inspector = createAgentInspector();
		inspector.attach(agent.actor);
		await agent.prompt("What time is it?");
		await settle();
		const records = inspector.history();

		const seqs = records.map((record) => record.seq);
		expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
		expect(new Set(seqs).size).toBe(seqs.length);

		const actors = ofType(records, "@xstate.actor");
		expect(actors[0]).toMatchObject({ name: "agent", sessionId: agent.actor.sessionId });
		// One stream actor per call, one batch actor for a reply's tool calls; the calls are in the context summary.
		expect(actors.map((actor) => actor.actorId)).toEqual(expect.arrayContaining(["stream", "tools"]));
		expect(actors.find((actor) => actor.actorId === "tools")?.parentId).toBe(agent.actor.sessionId);
		const summaries = ofType(records, "@xstate.snapshot").map((record) => record.snapshot.context as { run?: { toolCalls?: { id: string; status: string }[] } } | undefined);
		expect(summaries.some((context) => context?.run?.toolCalls?.some((call) => call.id === "t1" && call.status === "settled"))).toBe(true);
		const deltas = ofType(records, "@agentchart.deltas");
		expect(deltas.reduce((sum, record) => sum + record.count, 0)).toBeGreaterThan(0);

		const emitted = ofType(records, "@agentchart.emitted").map((record) => record.event.type);
		expect(emitted).toEqual(expect.arrayContaining(["agent_start", "tool_execution_start", "tool_execution_end", "agent_end"]));

		const leaves = ofType(records, "@xstate.snapshot")
			.filter((record) => record.sessionId === agent.actor.sessionId && record.activeIds)
			.map((record) => record.activeIds?.[record.activeIds.length - 1]);
		const order = ["agent.running.streaming", "agent.running.tool-executing", "agent.idle"].map((id) => leaves.lastIndexOf(id));
		expect(order.every((index) => index >= 0)).toBe(true);
		expect(leaves[leaves.length - 1]).toBe("agent.idle");
	});

	it("keeps the agent's creation and latest snapshot in a history that let them go, and no actor that has ended", async () => {
		const agent = toolRunAgent();
		const inspector = createAgentInspector({ historySize: 40 });
		inspector.attach(agent.actor);
		await agent.prompt("What time is it?");
		await agent.prompt("And now?");
		await settle();
		const records = inspector.history();
		// The ring holds the last 40 records; before them, only the agent's creation (its latest
		// snapshot is in the ring), nothing of the stream and tool actors that have ended.
		expect(inspector.stats.records).toBeGreaterThan(100);
		const kept = records.slice(0, records.length - 40);
		expect(kept.map((record) => `${record.type} ${record.sessionId === agent.actor.sessionId ? "agent" : record.sessionId}`)).toEqual(["@xstate.actor agent"]);
		expect(kept[0]).toMatchObject({ type: "@xstate.actor", name: "agent" });
		const seqs = records.map((record) => record.seq);
		expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
		agent.dispose();
	});

	it("bounds its history in bytes: records carrying large tool results push the oldest out (historyBytes)", async () => {
		const big: AgentTool<typeof params> = { ...clock, name: "dump", execute: async () => ({ content: [{ type: "text", text: "d".repeat(30_000) }], details: {} }) };
		const replies = Array.from({ length: 20 }, (_, index) => [{ content: [toolCall("dump", {}, `t${index}`)] }, { content: "Dumped." }]).flat();
		const scripted = createScriptedModel(replies);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [big] }, streamFn: scripted.streamFn });
		const limit = 512 * 1024;
		const inspector = createAgentInspector({ historyBytes: limit });
		inspector.attach(agent.actor);
		for (let run = 0; run < 20; run++) await agent.prompt("dump");
		await settle();
		const records = inspector.history();
		// Each run's records carry the result a few times over (tool end, message end, turn end):
		// twenty runs are several MiB, and the history keeps what fits, the newest records whole.
		const bytes = records.reduce((sum, record) => sum + JSON.stringify(record).length, 0);
		expect(bytes).toBeLessThan(limit * 1.25);
		expect(records.length).toBeLessThan(inspector.stats.records / 2);
		expect(records.at(-1)).toMatchObject({ type: "@xstate.snapshot" });
		expect(records.some((record) => JSON.stringify(record).includes("d".repeat(4000)))).toBe(true);
		expect(() => createAgentInspector({ historyBytes: 0 })).toThrow(/historyBytes must be a number of bytes above 0/);
		agent.dispose();
	});

	it("remembers each live actor by its creation and latest snapshot, and forgets one that ended or that its parent dropped", () => {
		const base = { t: 0, rootId: "a", createdAt: "", id: null, _version: "" };
		const actor = (seq: number, sessionId: string, actorId: string, parentId?: string) => ({ ...base, seq, sessionId, type: "@xstate.actor", name: actorId, actorId, parentId, snapshot: { status: "active" } }) as InspectionRecord;
		const snapshot = (seq: number, sessionId: string, status: string, children?: string[]) => ({ ...base, seq, sessionId, type: "@xstate.snapshot", event: { type: "x" }, snapshot: { status, children } }) as InspectionRecord;
		const live = new LiveActors();
		for (const record of [actor(1, "a", "agent"), snapshot(2, "a", "active", []), actor(3, "b", "stream", "a"), actor(4, "c", "tools", "a"), snapshot(5, "a", "active", ["stream", "tools"]), snapshot(6, "c", "done"), snapshot(7, "a", "active", ["tools"])]) live.note(record);
		// b was dropped by its parent (no word of its own), c finished: only a, with its latest snapshot.
		expect(live.before(100).map((record) => `${record.type} ${record.seq}`)).toEqual(["@xstate.actor 1", "@xstate.snapshot 7"]);
		// Only what is older than the history's first record.
		expect(live.before(5).map((record) => record.seq)).toEqual([1]);
		live.note(snapshot(8, "a", "stopped"));
		expect(live.before(100)).toEqual([]);
	});

	it("does not hand the agents it detached from to later pages as alive, however many it inspected", async () => {
		const historySize = 40;
		const inspector = createAgentInspector({ historySize });
		// A gateway: one inspector, a conversation's agent attached, run, detached and disposed, again and again.
		for (const order of ["detach, then dispose", "detach, run on, dispose", "dispose, then detach"]) {
			for (let conversation = 0; conversation < 4; conversation++) {
				const scripted = createScriptedModel([{ content: [toolCall("clock", {}, "t1")] }, { content: "It is noon." }, { content: "Still noon." }]);
				const agent = new Agent({ initialState: { model: scripted.model, tools: [clock] }, streamFn: scripted.streamFn });
				const detach = inspector.attach(agent.actor);
				await agent.prompt("What time is it?");
				if (order === "dispose, then detach") {
					agent.dispose();
					await settle();
					detach();
					continue;
				}
				detach();
				if (order === "detach, run on, dispose") await agent.prompt("And now?");
				agent.dispose();
			}
			await settle();
			// Each run is more records than the history keeps: only its newest records are left, and no actor before them.
			expect(inspector.stats.records).toBeGreaterThan(historySize * 4);
			expect(inspector.history()).toHaveLength(historySize);
		}
		// One attached now is handed first again once its own records are pushed out.
		const scripted = createScriptedModel([{ content: [toolCall("clock", {}, "t1")] }, { content: "It is noon." }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [clock] }, streamFn: scripted.streamFn });
		inspector.attach(agent.actor);
		await agent.prompt("What time is it?");
		await settle();
		expect(inspector.history()[0]).toMatchObject({ type: "@xstate.actor", sessionId: agent.actor.sessionId });
		agent.dispose();
	});

	it("forgets an actor detached from with every actor under it, also one announced again after its children", () => {
		const base = { t: 0, rootId: "a", createdAt: "", id: null, _version: "" };
		const actor = (seq: number, sessionId: string, actorId: string, parentId?: string) => ({ ...base, seq, sessionId, type: "@xstate.actor", name: actorId, actorId, parentId, snapshot: { status: "active" } }) as InspectionRecord;
		const live = new LiveActors();
		for (const record of [actor(1, "a", "agent"), actor(2, "b", "tools", "a"), actor(3, "c", "tool:1", "b"), actor(4, "a", "agent"), actor(5, "z", "other")]) live.note(record);
		live.forget("a");
		expect(live.before(100).map((record) => record.sessionId)).toEqual(["z"]);
	});

	it("tells two tool calls with one id apart in the context summary (each by its key)", () => {
		const call = (status: string) => ({ key: "dup", toolCall: { id: "dup", name: "work" }, status });
		const summary = summarizeContext({ messages: [], steeringQueue: [], followUpQueue: [], tools: [], run: { batch: { calls: [call("settled"), { ...call("running"), key: "dup#2" }] } } });
		expect((summary as AgentContextSummary).run?.toolCalls.map((entry) => `${entry.id} ${entry.key} ${entry.status}`)).toEqual(["dup dup settled", "dup dup#2 running"]);
	});

	it("counts every delta of an agent on its direct path, and stops counting when detached", async () => {
		// 4-character chunks of "It is noon." (11 characters) and of the tool call's arguments.
		const scripted = createScriptedModel([{ content: [toolCall("clock", {}, "t1")] }, { content: "It is noon." }, { content: "Still noon, as it happens." }], { chunkSize: 4 });
		const agent = new Agent({ initialState: { model: scripted.model, tools: [clock] }, streamFn: scripted.streamFn });
		const inspector = createAgentInspector();
		const detach = inspector.attach(agent.actor);
		let updates = 0;
		let textChars = 0;
		agent.subscribe((event) => {
			if (event.type !== "message_update") return;
			updates++;
			if (event.assistantMessageEvent.type === "text_delta") textChars += event.assistantMessageEvent.delta.length;
		});
		await agent.prompt("What time is it?");
		await settle();
		const counted = ofType(inspector.history(), "@agentchart.deltas");
		expect(updates).toBeGreaterThan(3);
		expect(counted.reduce((sum, record) => sum + record.count, 0)).toBe(updates);
		expect(counted.reduce((sum, record) => sum + record.chars, 0)).toBeGreaterThanOrEqual(textChars);
		expect(counted.every((record) => record.sessionId === agent.actor.sessionId)).toBe(true);

		detach();
		const before = inspector.history().length;
		const updatesBefore = updates;
		await agent.prompt("And now?");
		await settle();
		expect(updates).toBeGreaterThan(updatesBefore + 3);
		expect(inspector.history().length).toBe(before);
	});

	it("calls each delta tap once per delta, a tap given twice once, and lets a tap untap itself mid-delta", async () => {
		const scripted = createScriptedModel([{ content: "one two three four" }], { chunkSize: 3 });
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		let updates = 0;
		agent.subscribe((event) => {
			if (event.type === "message_update") updates++;
		});
		const seen = { twice: 0, other: 0, leaving: 0 };
		const twice = () => void seen.twice++;
		tapDeltas(agent.actor, twice);
		tapDeltas(agent.actor, twice);
		// Untaps itself at its first delta; the tap after it still gets that delta.
		const untapLeaving = tapDeltas(agent.actor, () => {
			seen.leaving++;
			untapLeaving?.();
		});
		tapDeltas(agent.actor, () => void seen.other++);
		await agent.prompt("count");
		expect(updates).toBeGreaterThan(3);
		expect(seen).toEqual({ twice: updates, other: updates, leaving: 1 });
	});

	it("counts the deltas of a bare machine through actor.on", async () => {
		const scripted = createScriptedModel([{ content: "hello there, world" }], { chunkSize: 3 });
		const inspector = createAgentInspector();
		const actor = createActor(agentMachine, { input: { model: scripted.model, config: { streamFn: scripted.streamFn } } }).start();
		inspector.attach(actor);
		let updates = 0;
		actor.on("message_update", () => updates++);
		const ended = new Promise<void>((resolve) => actor.on("agent_end", () => resolve()));
		actor.send({ type: "prompt", messages: [{ role: "user", content: "hi", timestamp: 0 }] });
		await ended;
		await settle();
		const counted = ofType(inspector.history(), "@agentchart.deltas");
		expect(updates).toBeGreaterThan(3);
		expect(counted.reduce((sum, record) => sum + record.count, 0)).toBe(updates);
		actor.stop();
	});

	it("names every taken transition by its edge id in the statechart graph", async () => {
		const agent = toolRunAgent();
		const inspector = createAgentInspector();
		inspector.attach(agent.actor);
		await agent.prompt("What time is it?");
		await settle();
		const edgeIds = new Set(toStatechartGraph(agentMachine).edges.map((edge) => edge.id));
		const taken = ofType(inspector.history(), "@xstate.microstep").flatMap((record) => record.transitions);
		expect(taken.length).toBeGreaterThan(5);
		for (const transition of taken) expect(edgeIds.has(transition.edgeId), transition.edgeId).toBe(true);
		expect(taken.map((transition) => transition.edgeId)).toContain("agent.idle:prompt:0");
	});

	it("works as the inspect option of createActor", async () => {
		const scripted = createScriptedModel([{ content: "hello" }]);
		const inspector = createAgentInspector();
		const actor = createActor(agentMachine, { input: { model: scripted.model, config: { streamFn: scripted.streamFn } }, inspect: inspector.inspect }).start();
		const ended = new Promise<void>((resolve) => actor.on("agent_end", () => resolve()));
		actor.send({ type: "prompt", messages: [{ role: "user", content: "hi", timestamp: 0 }] });
		await ended;
		await settle();
		const types = new Set(inspector.history().map((record) => record.type));
		expect(types).toEqual(new Set(["@xstate.actor", "@xstate.event", "@xstate.snapshot", "@xstate.microstep", "@agentchart.emitted"]));
		actor.stop();
	});

	it("summarises context: record sizes do not grow with the transcript", async () => {
		const largest = async (transcriptLength: number) => {
			const history: AgentMessage[] = Array.from({ length: transcriptLength }, (_, index) => ({
				role: "user",
				content: `message ${index} ${"x".repeat(500)}`,
				timestamp: index,
			}));
			const agent = toolRunAgent(history);
			const inspector = createAgentInspector();
			inspector.attach(agent.actor);
			await agent.prompt("What time is it?");
			await settle();
			const sizes = inspector.history().map((record) => JSON.stringify(record).length);
			const snapshot = ofType(inspector.history(), "@xstate.snapshot").findLast((record) => record.sessionId === agent.actor.sessionId);
			return { max: Math.max(...sizes), messages: (snapshot?.snapshot.context as { messages?: number } | undefined)?.messages };
		};
		const small = await largest(2);
		const big = await largest(2000);
		expect(big.messages).toBeGreaterThanOrEqual(2000);
		// A thousand times the transcript; the largest record (bounded previews) barely changes.
		expect(big.max).toBeLessThan(small.max + 100);
	});

	it("does constant work per event: a burst beyond capacity drops the oldest and says so", () => {
		let scheduled = 0;
		const inspector = createAgentInspector({ capacity: 4, schedule: () => scheduled++ });
		const batches: (readonly InspectionRecord[])[] = [];
		inspector.subscribe((batch) => batches.push(batch));
		const scripted = createScriptedModel([]);
		const actor = createActor(agentMachine, { input: { model: scripted.model }, inspect: inspector.inspect }).start();
		for (let i = 0; i < 10; i++) actor.send({ type: "queue.mode", queue: "steering", mode: "all" });
		expect(scheduled).toBe(1);
		inspector.flush();
		const records = inspector.history();
		expect(inspector.stats.dropped).toBeGreaterThan(0);
		const dropped = records.filter((record) => record.type === "@agentchart.dropped");
		expect(dropped).toEqual([expect.objectContaining({ count: inspector.stats.dropped })]);
		// Found by reading the listener's JSDoc against the code (2026-12-06): the dropped record
		// came first, with the newest number, so the batch and history() were out of `seq` order.
		expect(batches).toHaveLength(1);
		expect(inOrder(batches[0] ?? [])).toBe(true);
		expect(inOrder(records)).toBe(true);
		actor.stop();
	});

	it("keeps batches and history in seq order when a burst after a flush drops records", () => {
		const inspector = createAgentInspector({ capacity: 4, schedule: () => {} });
		const batches: (readonly InspectionRecord[])[] = [];
		inspector.subscribe((batch) => batches.push(batch));
		const scripted = createScriptedModel([]);
		const actor = createActor(agentMachine, { input: { model: scripted.model }, inspect: inspector.inspect }).start();
		inspector.flush();
		for (let i = 0; i < 10; i++) actor.send({ type: "queue.mode", queue: "steering", mode: "all" });
		inspector.flush();
		expect(batches).toHaveLength(2);
		expect(batches[1]?.at(-1)?.type).toBe("@agentchart.dropped");
		for (const batch of batches) expect(inOrder(batch)).toBe(true);
		// The live actor numbered before the history's first record comes ahead of it, once.
		const history = inspector.history();
		expect(inOrder(history)).toBe(true);
		expect(history.filter((record) => record.type === "@xstate.actor")).toHaveLength(1);
		actor.stop();
	});

	// Found by a probe (2026-12-07): 300 quick runs right after attaching, before any flush, pushed
	// the agent's creation record out with the rest; a page opened after said "no agent seen" and
	// showed an empty chart for the rest of the session, and a recording lacked it too.
	it("keeps an actor's creation record through a burst that drops the rest, in the batch and in history()", () => {
		const inspector = createAgentInspector({ capacity: 4, schedule: () => {} });
		const batches: (readonly InspectionRecord[])[] = [];
		inspector.subscribe((batch) => batches.push(batch));
		const scripted = createScriptedModel([]);
		const actor = createActor(agentMachine, { input: { model: scripted.model }, inspect: inspector.inspect }).start();
		for (let i = 0; i < 10; i++) actor.send({ type: "queue.mode", queue: "steering", mode: "all" });
		inspector.flush();
		const batch = batches[0] ?? [];
		expect(batch[0]).toMatchObject({ type: "@xstate.actor", name: "agent", sessionId: actor.sessionId });
		expect(inOrder(batch)).toBe(true);
		const history = inspector.history();
		expect(history.filter((record) => record.type === "@xstate.actor")).toHaveLength(1);
		expect(inOrder(history)).toBe(true);
		// What the dropped record counts is what was lost: the creation record kept is not in it.
		const kept = batch.filter((record) => record.type !== "@agentchart.dropped").length;
		expect(inspector.stats.dropped).toBe(inspector.stats.seen - kept);
		actor.stop();
	});

	// Found by a probe (2026-12-07): a long-lived inspector (a gateway's visualizer) held every agent
	// it was attached to until the program detached it, disposed or not: 215 KB an agent with a
	// 100 KB reply, in a straight line.
	it("lets a disposed agent go without a detach: it and its actor can be collected", async () => {
		const inspector = createAgentInspector();
		const refs: WeakRef<object>[] = [];
		// In a function of its own: the test's frame holds nothing of the agent.
		const disposedAfterARun = async () => {
			const scripted = createScriptedModel([{ content: "x".repeat(100_000) }]);
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
			inspector.attach(agent.actor);
			await agent.prompt("go");
			agent.dispose();
			refs.push(new WeakRef(agent), new WeakRef(agent.actor));
		};
		for (let i = 0; i < 3; i++) await disposedAfterARun();
		await new Promise((resolve) => setTimeout(resolve, 10));
		for (const ref of refs) expect(await collectGarbage(ref)).toBe(true);
		// What it recorded stays, in its bounded history.
		expect(inspector.history().filter((record) => record.type === "@xstate.actor" && record.name === "agent")).toHaveLength(3);
	});

	it("records to NDJSON and reads the recording back", async () => {
		const path = join(await tempDir(), "run.ndjson");
		const agent = toolRunAgent();
		const inspector = createAgentInspector();
		inspector.attach(agent.actor);
		const recording = recordToNdjson(inspector, path);
		await agent.prompt("What time is it?");
		await recording.close();
		const replayed = await readRecording(path);
		expect(replayed.map((record) => record.seq)).toEqual(inspector.history().map((record) => record.seq));
		expect(replayed[0]?.type).toBe("@xstate.actor");
	});

	it("speaks the @statelyai/inspect wire format", async () => {
		const sent: StatelyInspectionEvent[] = [];
		const stately = createInspector({ send: (event) => sent.push(event) });
		const agent = toolRunAgent();
		const inspector = createAgentInspector();
		inspector.attach(agent.actor);
		forwardToStately(inspector, stately);
		await agent.prompt("What time is it?");
		await settle();
		expect(new Set(sent.map((event) => event.type))).toEqual(new Set(["@xstate.actor", "@xstate.event", "@xstate.snapshot"]));
		const root = sent.find((event) => event.type === "@xstate.actor");
		expect(root).toMatchObject({ name: "agent", sessionId: agent.actor.sessionId, _version: "0.7.2" });
		if (root?.type !== "@xstate.actor") throw new Error("no actor event");
		expect(JSON.parse(root.definition ?? "{}")).toMatchObject({ id: "agent", initial: "idle" });
		const snapshot = sent.find((event) => event.type === "@xstate.snapshot" && event.sessionId === agent.actor.sessionId);
		expect(snapshot).toMatchObject({ snapshot: { status: "active", children: {} } });
		for (const event of sent) expect(typeof event.createdAt).toBe("string");
	});
});

describe("the ring buffer", () => {
	it("keeps the newest entries and counts what it overwrote", () => {
		const buffer = new RingBuffer<number>(3);
		for (let i = 1; i <= 5; i++) buffer.push(i);
		expect(buffer.dropped).toBe(2);
		expect(buffer.toArray()).toEqual([3, 4, 5]);
		expect(buffer.shift()).toBe(3);
		buffer.push(6);
		expect(buffer.drain()).toEqual([4, 5, 6]);
		expect(buffer.size).toBe(0);
	});

	// The buffer's array grows as entries come and wraps once at capacity: its index arithmetic
	// is checked against a plain queue that drops its oldest entry when over capacity. Entries
	// may be undefined (a public RingBuffer<T> may hold any T): drain stopped at one, leaving the
	// entries after it.
	it("holds what a plain bounded queue holds, for random pushes and shifts", () => {
		fc.assert(
			fc.property(fc.integer({ min: 1, max: 6 }), fc.array(fc.oneof(fc.constant("shift" as const), fc.integer({ min: 0, max: 99 }), fc.constant(undefined)), { maxLength: 60 }), (capacity, operations) => {
				const buffer = new RingBuffer<number | undefined>(capacity);
				const model: (number | undefined)[] = [];
				let dropped = 0;
				for (const operation of operations) {
					if (operation === "shift") {
						expect(buffer.shift()).toBe(model.shift());
					} else {
						const overwritten = buffer.push(operation);
						model.push(operation);
						if (model.length > capacity) {
							expect(overwritten).toBe(model.shift());
							dropped++;
						} else {
							expect(overwritten).toBeUndefined();
						}
					}
					expect(buffer.size).toBe(model.length);
					expect(buffer.toArray()).toEqual(model);
					expect(buffer.dropped).toBe(dropped);
				}
				expect(buffer.drain()).toEqual(model);
				expect(buffer.size).toBe(0);
			}),
		);
	});
});

describe("previews keep a model's keys as JSON has them", () => {
	// Parsed JSON holds "__proto__" as an own key; assigning it to a copy sets the copy's prototype instead.
	const args = JSON.parse('{"path": "a.txt", "__proto__": {"x": 1}, "constructor": "c"}') as Record<string, unknown>;

	it("keeps an own \"__proto__\" key in a value's preview and in an event's", () => {
		const preview = previewValue(args) as Record<string, unknown>;
		expect(JSON.stringify(preview)).toBe('{"path":"a.txt","__proto__":{"x":1},"constructor":"c"}');
		expect(Object.getPrototypeOf(preview)).toBe(Object.prototype);
		const event = summarizeEvent({ type: "tool_execution_start", toolCallId: "t1", toolName: "read", args } as { type: string });
		expect(JSON.stringify(event)).toBe(JSON.stringify({ type: "tool_execution_start", toolCallId: "t1", toolName: "read", args: preview }));
		const top = summarizeEvent(JSON.parse('{"type": "custom", "__proto__": {"y": 2}}') as { type: string });
		expect(JSON.stringify(top)).toBe('{"type":"custom","__proto__":{"y":2}}');
		expect(Object.getPrototypeOf(top)).toBe(Object.prototype);
	});

	it("names an actor, and shows data that has an actor's field names as the data", () => {
		const actor = createActor(createMachine({ id: "m" }), { id: "worker" });
		expect(previewValue({ child: actor })).toEqual({ child: "[Actor worker]" });
		const message = { id: "m-1", sessionId: "chat-7", send: true, text: "hi" };
		expect(previewValue(message)).toEqual(message);
	});

	it("previews small JSON data as it is, whatever its keys are named (property)", () => {
		const key = fc.constantFrom("a", "b", "__proto__", "constructor", "toString");
		const { value } = fc.letrec((tie) => ({
			value: fc.oneof({ depthSize: "small" }, fc.integer(), fc.string({ maxLength: 5 }), fc.boolean(), fc.constant(null), fc.array(tie("value"), { maxLength: 3 }), fc.dictionary(key, tie("value"), { maxKeys: 3 })),
		}));
		const wide = { depth: 12, arrayItems: 10, objectKeys: 10, stringLength: 100, characters: 100_000, budget: 100_000 };
		fc.assert(
			fc.property(value, (generated) => {
				const data: unknown = JSON.parse(JSON.stringify(generated));
				expect(JSON.stringify(previewValue(data, wide))).toBe(JSON.stringify(data));
			}),
			{ numRuns: 300 },
		);
	});
});

describe("what the inspector keeps of a conversation", () => {
	it("keeps messages, tool arguments and results whole, and the reply's text as it streamed, in order", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("clock", { zone: "Europe/Paris", verbose: true }, "t1")] }, { content: "It is noon in Paris, as the clock says." }], { chunkSize: 5 });
		const agent = new Agent({ initialState: { model: scripted.model, tools: [clock] }, streamFn: scripted.streamFn });
		const inspector = createAgentInspector();
		inspector.attach(agent.actor);
		await agent.prompt("What time is it in Paris?");
		await settle();
		const records = inspector.history();
		const emittedOf = (type: string) => ofType(records, "@agentchart.emitted").filter((record) => record.event.type === type).map((record) => record.event);
		expect(emittedOf("tool_execution_start")[0]).toMatchObject({ toolName: "clock", args: { zone: "Europe/Paris", verbose: true } });
		expect(emittedOf("tool_execution_end")[0]).toMatchObject({ result: { content: [{ type: "text", text: "12:00" }] }, isError: false });
		const replies = emittedOf("message_end").map((event) => event["message"] as { role: string; content: unknown });
		expect(replies.find((message) => message.role === "user")?.content).toEqual([{ type: "text", text: "What time is it in Paris?" }]);
		expect(replies.at(-1)?.content).toEqual([{ type: "text", text: "It is noon in Paris, as the clock says." }]);
		// The delta records sit between the reply's start and end, and carry its text.
		const answerStart = records.findLastIndex((record) => record.type === "@agentchart.emitted" && record.event.type === "message_start");
		const answerEnd = records.findLastIndex((record) => record.type === "@agentchart.emitted" && record.event.type === "message_end");
		const streamed = ofType(records.slice(answerStart, answerEnd), "@agentchart.deltas").flatMap((record) => record.segments ?? []);
		expect(streamed.map((segment) => segment.text).join("")).toBe("It is noon in Paris, as the clock says.");
		expect(new Set(streamed.map((segment) => `${segment.kind} ${segment.contentIndex}`))).toEqual(new Set(["text 0"]));
		agent.dispose();
	});

	it("keeps a long reply's text whole and in order, block by block, however many deltas it streamed in", async () => {
		// Hundreds of deltas per block: the inspector joins them a few hundred at a time.
		const thinking = Array.from({ length: 700 }, (_, index) => `t${index % 10}`).join("");
		const text = Array.from({ length: 900 }, (_, index) => String.fromCharCode(97 + (index % 26))).join("");
		const scripted = createScriptedModel([{ content: [{ type: "thinking", thinking }, { type: "text", text }] }], { chunkSize: 1 });
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const inspector = createAgentInspector();
		inspector.attach(agent.actor);
		await agent.prompt("Go");
		await settle();
		const segments = ofType(inspector.history(), "@agentchart.deltas").flatMap((record) => record.segments ?? []);
		const byBlock = new Map<string, string>();
		for (const segment of segments) byBlock.set(`${segment.kind} ${segment.contentIndex}`, (byBlock.get(`${segment.kind} ${segment.contentIndex}`) ?? "") + segment.text);
		expect([...byBlock]).toEqual([
			["thinking 0", thinking],
			["text 1", text],
		]);
		agent.dispose();
	});

	it("keeps a long tool result up to the payload limit it is given, and marks where it cut", async () => {
		const long: AgentTool<typeof params> = { ...clock, execute: async () => ({ content: [{ type: "text", text: "x".repeat(10_000) }], details: {} }) };
		const scripted = createScriptedModel([{ content: [toolCall("clock", {}, "t1")] }, { content: "Done." }]);
		const lengths = async (payload?: { stringLength: number; characters: number }) => {
			const agent = new Agent({ initialState: { model: scripted.model, tools: [long] }, streamFn: scripted.streamFn });
			const inspector = createAgentInspector(payload ? { payload } : {});
			inspector.attach(agent.actor);
			await agent.prompt("Go");
			await settle();
			agent.dispose();
			const end = ofType(inspector.history(), "@agentchart.emitted").find((record) => record.event.type === "tool_execution_end");
			return ((end?.event["result"] as { content: { text: string }[] }).content[0]?.text ?? "").length;
		};
		scripted.append({ content: [toolCall("clock", {}, "t2")] }, { content: "Done." });
		const cut = await lengths();
		expect(cut).toBeLessThan(4_100);
		expect(cut).toBeGreaterThan(4_000);
		expect(await lengths({ stringLength: 20_000, characters: 50_000 })).toBe(10_000);
	});
});
