/**
 * Snapshots and restore: an agent stored as JSON at any moment continues in another agent (as
 * it would in another process), and what a crash interrupted follows the journal's rules: a
 * call that ended is not made again, an interrupted model request is made again (what had
 * streamed never reaches the model), an interrupted tool call runs again only if its tool is
 * replay-safe, otherwise the model is told it was interrupted.
 */
import { describe, expect, it } from "vitest";
import { Agent, type AgentOptions } from "../../src/agent.js";
import { SNAPSHOT_VERSION, type AgentSnapshot, type PersistedAgentMachine, persistAgentContext } from "../../src/durable/snapshot.js";
import { type AgentStore, createMemoryStore } from "../../src/durable/store.js";
import { withInterpreter } from "../../src/machines/agent-logic.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent, AgentToolResult, AnyAgentTool } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { assistant, deferred, expectValidTranscript, expectWellFormedRun, makeTool, manualStream, ok, textOf, throughJson, thrownBy, user, watchEscapes } from "../agent/helpers.js";

function toolResults(messages: readonly AgentMessage[]): string[] {
	return messages.filter((message) => message.role === "toolResult").map((message) => `${(message as { toolCallId: string }).toolCallId}: ${textOf(message)}`);
}

/** A tool the test holds until it lets it go; counts its runs. */
function heldTool(name: string, extra: Partial<AnyAgentTool> = {}) {
	const runs: string[] = [];
	let release = deferred<void>();
	const started = { next: deferred<void>() };
	const tool = makeTool(
		name,
		async (id, _args, _signal, onUpdate) => {
			runs.push(id);
			onUpdate?.(ok("halfway") as AgentToolResult<unknown>);
			started.next.resolve();
			await release.promise;
			return ok(`${name} finished`);
		},
		extra,
	);
	return {
		tool,
		runs,
		started,
		release: () => {
			release.resolve();
			release = deferred<void>();
		},
	};
}

/** A new process loads the session and lets its run end with one more reply, "done". */
async function finishInNewProcess(store: AgentStore, sessionId: string, options: AgentOptions) {
	const again = createScriptedModel([{ content: "done" }]);
	const second = await Agent.load({ ...options, store, sessionId, streamFn: again.streamFn });
	await second.waitForIdle();
	return { again, second };
}

/** What a crash in the middle of a run of the tools `work` (call "a", ended) and `wait` (call "b", in flight) ends with. */
function expectWorkKeptWaitInterrupted(second: Agent, runs: string[], waitRuns: string[]): void {
	expect(runs).toEqual(["a"]);
	expect(waitRuns).toEqual(["b"]);
	expect(toolResults(second.state.messages).map((line) => line.slice(0, 40))).toEqual(["a: worked", 'b: Tool "wait" was interrupted by a rest']);
	expectValidTranscript(second.state.messages);
}

async function until(check: () => boolean, what: string): Promise<void> {
	for (let i = 0; i < 500; i++) {
		if (check()) return;
		await new Promise((resolve) => setTimeout(resolve, 1));
	}
	throw new Error(`timed out waiting for ${what}`);
}

for (const interpreter of ["agentchart", "xstate"] as const) {
	describe(`snapshot and restore (${interpreter} interpreter)`, () => {
		const make = (options: ConstructorParameters<typeof Agent>[0]) => withInterpreter(interpreter, () => new Agent(options));
		const restore = (snapshot: AgentSnapshot, options: Parameters<typeof Agent.restore>[1]) => withInterpreter(interpreter, () => Agent.restore(snapshot, options));
		/** An agent's snapshot before its prompt, and while the run waits for approval of its one call ("a", to `tool`); the run is then aborted. */
		const snapshotsOfAWait = async (tool: AnyAgentTool) => {
			const scripted = createScriptedModel([{ content: [toolCall(tool.name, {}, "a")] }, { content: "done" }]);
			const agent = make({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn });
			const idle = throughJson(agent.snapshot());
			const run = agent.prompt("go");
			for (let i = 0; i < 200 && agent.pendingApprovals.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 1));
			const waiting = throughJson(agent.snapshot());
			agent.abort();
			await run;
			return { idle, waiting, streamFn: scripted.streamFn };
		};

		it("keeps an idle agent whole: transcript, queues and their modes, the last error; the next prompt goes on from it", async () => {
			const scripted = createScriptedModel([{ content: "first" }, { content: "second" }, { content: "third" }]);
			const agent = make({ initialState: { model: scripted.model, systemPrompt: "be brief" }, streamFn: scripted.streamFn, followUpMode: "all" });
			await agent.prompt("one");
			agent.steer(user("steered"));
			agent.followUp(user("later"));
			const snapshot = throughJson(agent.snapshot());
			expect(snapshot.version).toBe(SNAPSHOT_VERSION);
			expect(snapshot.machine.value).toBe("idle");
			const again = restore(snapshot, { streamFn: scripted.streamFn });
			expect(again.state.messages).toEqual(agent.state.messages);
			expect(again.state.systemPrompt).toBe("be brief");
			expect(again.followUpMode).toBe("all");
			expect(again.hasQueuedMessages()).toBe(true);
			await again.continue();
			expect(again.state.messages.map((message) => textOf(message))).toEqual(["one", "first", "steered", "second", "later", "third"]);
		});

		it("persists an idle agent as its idle machine persists itself (made without one)", async () => {
			const scripted = createScriptedModel([{ content: "first" }]);
			const agent = make({ initialState: { model: scripted.model, systemPrompt: "be brief", tools: [makeTool("read", async () => ok("read"))] }, streamFn: scripted.streamFn, followUpMode: "all", toolExecution: "sequential", sessionId: "s1", store: createMemoryStore() });
			await agent.prompt("one");
			agent.steer(user("steered"));
			agent.followUp(user("later"));
			const persisted = agent.snapshot().machine;
			// The machine an agent starts from its state (`actor` starts it, idle, on first use).
			const made = (agent.actor as unknown as { getPersistedSnapshot(): PersistedAgentMachine }).getPersistedSnapshot();
			expect(JSON.parse(JSON.stringify(persisted))).toEqual(JSON.parse(JSON.stringify({ ...made, context: persistAgentContext(made.context) })));
			expect(persisted.context.messages).not.toBe(agent.state.messages);
		});

		it("continues a run that waits for approval in another agent, after the first is gone", async () => {
			const sends: string[] = [];
			const send = makeTool("send", async (_id, args) => (sends.push(JSON.stringify(args)), ok("sent")), { needsApproval: true });
			const scripted = createScriptedModel([{ content: [toolCall("send", { to: "bob" }, "a")] }, { content: "sent it" }]);
			const first = make({ initialState: { model: scripted.model, tools: [send] }, streamFn: scripted.streamFn });
			void first.prompt("go");
			await until(() => first.pendingApprovals.length === 1, "the approval request");
			const snapshot = throughJson(first.snapshot());
			first.dispose();
			const events: AgentEvent[] = [];
			const second = restore(snapshot, { initialState: { tools: [send] }, streamFn: scripted.streamFn, listeners: [(event) => void events.push(event)] });
			expect(second.state.isStreaming).toBe(true);
			expect(second.pendingApprovals.map((call) => call.toolCallId)).toEqual(["a"]);
			second.approve("a");
			await second.waitForIdle();
			expect(sends).toEqual(['{"to":"bob"}']);
			expect(textOf(second.state.messages.at(-1))).toBe("sent it");
			expectValidTranscript(second.state.messages);
			expect(events.map((event) => event.type)).toContain("agent_end");
		});

		it("answers an interrupted tool call that is not replay-safe without running it again (with what it reported), runs a replay-safe one again, and keeps a finished sibling's result", async () => {
			const unsafe = heldTool("charge");
			const safe = heldTool("lookup", { replay: "safe" });
			const quick = heldTool("note");
			const scripted = createScriptedModel([{ content: [toolCall("charge", {}, "a"), toolCall("lookup", {}, "b"), toolCall("note", {}, "c")] }, { content: "done" }]);
			const tools = [unsafe.tool, safe.tool, quick.tool];
			const first = make({ initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn });
			void first.prompt("go");
			await until(() => unsafe.runs.length === 1 && safe.runs.length === 1 && quick.runs.length === 1, "the three calls");
			quick.release();
			await until(() => toolResults(first.state.messages).length === 0 && first.actor.getSnapshot().context.run?.batch?.calls[2]?.status === "settled", "the note to settle");
			const snapshot = throughJson(first.snapshot());
			// The first process dies here: its calls never finish.
			first.dispose();
			const second = restore(snapshot, { initialState: { tools }, streamFn: scripted.streamFn });
			await until(() => safe.runs.length === 2, "the replay-safe call to run again");
			safe.release();
			await second.waitForIdle();
			expect(unsafe.runs).toEqual(["a"]);
			expect(quick.runs).toEqual(["c"]);
			const results = toolResults(second.state.messages);
			expect(results[0]).toMatch(/^a: Tool "charge" was interrupted by a restart and not run again .*Its output before the restart:\nhalfway$/s);
			expect(results.slice(1)).toEqual(["b: lookup finished", "c: note finished"]);
			expectValidTranscript(second.state.messages);
		});

		it("makes an interrupted model request again; what had streamed never reaches the transcript or the model", async () => {
			const hand = manualStream();
			const first = make({ initialState: { model: createScriptedModel([]).model }, streamFn: hand.streamFn });
			void first.prompt("go");
			await hand.opened;
			hand.start();
			hand.text("half an ans");
			await until(() => first.state.streamingMessage !== undefined, "the partial reply");
			const snapshot = throughJson(first.snapshot());
			first.dispose();
			const scripted = createScriptedModel([{ content: "the whole answer" }]);
			const events: AgentEvent[] = [];
			const second = restore(snapshot, { streamFn: scripted.streamFn, listeners: [(event) => void events.push(event)] });
			await second.waitForIdle();
			expect(scripted.calls).toHaveLength(1);
			// The request made again is the one that was interrupted: the transcript up to the prompt.
			expect(scripted.calls[0]?.messages.map((message) => textOf(message))).toEqual(["go"]);
			expect(second.state.messages.map((message) => textOf(message))).toEqual(["go", "the whole answer"]);
		});

		it("takes a snapshot that stays as it was when the agent changes after (it shares nothing that changes)", async () => {
			const scripted = createScriptedModel([{ content: "hi" }]);
			const agent = make({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
			agent.followUp(user("one"));
			const snapshot = agent.snapshot();
			const before = JSON.stringify(snapshot);
			agent.followUp(user("two"));
			agent.steer(user("three"));
			await agent.prompt("go");
			expect(JSON.stringify(snapshot)).toBe(before);
		});

		it("refuses, naming it, a tool the snapshot uses that is not given", async () => {
			const scripted = createScriptedModel([{ content: "hi" }]);
			const agent = make({ initialState: { model: scripted.model, tools: [makeTool("search", async () => ok("x"))] }, streamFn: scripted.streamFn });
			expect(thrownBy(() => restore(throughJson(agent.snapshot()), { streamFn: scripted.streamFn }))).toMatch(/the snapshot's tool "search" is not among the tools given/);
		});

		it("refuses a snapshot newer than this agentchart, and what is not a snapshot", () => {
			const agent = make({});
			const newer = { ...throughJson(agent.snapshot()), version: SNAPSHOT_VERSION + 1 };
			expect(thrownBy(() => restore(newer, {}))).toMatch(new RegExp(`version ${SNAPSHOT_VERSION + 1}, newer than this agentchart reads \\(${SNAPSHOT_VERSION}\\); upgrade agentchart`));
			expect(thrownBy(() => restore({ nope: true } as never, {}))).toMatch(/not an agentchart snapshot/);
		});

		// A snapshot is data a user stores and may edit or damage; restoring one must say what is
		// wrong with it (a run in a state the chart lacks was a TypeError from deep inside).
		it("refuses, saying what is wrong, a damaged snapshot: an unknown status, no context, a journal that is not a list, a run in a state the chart does not have", async () => {
			const tool = makeTool("send", async () => ok("sent"), { needsApproval: true });
			const { idle, waiting, streamFn } = await snapshotsOfAWait(tool);
			type Editable = { machine: { status?: unknown; context?: unknown; value?: unknown }; journal?: unknown };
			const damaged = (edit: (snapshot: Editable) => void, base = waiting): AgentSnapshot => {
				const copy = throughJson(base);
				edit(copy as unknown as Editable);
				return copy;
			};
			const options = { initialState: { tools: [tool] }, streamFn };
			expect(thrownBy(() => restore(damaged((snapshot) => (snapshot.machine.status = "weird")), options))).toMatch(/the snapshot's machine\.status must be "active" or "done" or "error" or "stopped", not "weird"/);
			expect(thrownBy(() => restore(damaged((snapshot) => delete snapshot.machine.context), options))).toMatch(/the snapshot's machine\.context must be an object, not undefined/);
			expect(thrownBy(() => restore(damaged((snapshot) => (snapshot.journal = 5)), options))).toMatch(/the snapshot's journal must be a list, not 5/);
			for (const value of ["nowhere", { running: "nowhere" }]) {
				expect(thrownBy(() => restore(damaged((snapshot) => (snapshot.machine.value = value)), options))).toMatch(/the snapshot's run cannot be restored: .*nowhere/);
			}
			// Between runs the value is not read by the restore: a state that is not idle is refused too.
			for (const value of ["nowhere", { running: "streaming" }]) {
				expect(thrownBy(() => restore(damaged((snapshot) => (snapshot.machine.value = value), idle), options))).toMatch(/the snapshot's machine\.value must be "idle" \(the snapshot has no run\), not /);
			}
			// The snapshot as it was still restores.
			const restored = restore(waiting, options);
			expect(restored.pendingApprovals.map((call) => call.toolCallId)).toEqual(["a"]);
			restored.dispose();
		});

		// A snapshot of the right shape can still be one the chart cannot go on from: here its batch
		// says the batch actor runs where it does not, and approving makes the chart send to it.
		it("ends a run the chart throws in (a well-formed but inconsistent snapshot) as pi ends a failed run, with nothing escaping to the process", async () => {
			const escapes = watchEscapes();
			try {
				const log: string[] = [];
				const tool = makeTool("send", async () => (log.push("send"), ok("sent")), { needsApproval: true });
				const inconsistent = (await snapshotsOfAWait(tool)).waiting;
				const batch = inconsistent.machine.context.run?.batch;
				if (!batch) throw new Error("the snapshot has no batch");
				batch.actorStarted = true;
				const after = createScriptedModel([{ content: "again" }]);
				const restored = restore(inconsistent, { initialState: { tools: [tool] }, streamFn: after.streamFn });
				const events: AgentEvent[] = [];
				restored.subscribe((event) => void events.push(event));
				restored.approve("a");
				await restored.waitForIdle();
				await new Promise((resolve) => setTimeout(resolve, 10));
				expect(escapes.caught).toEqual([]);
				expect(restored.state.isStreaming).toBe(false);
				expect(restored.state.errorMessage).toMatch(/^agentchart: the run stopped on an internal error: .*tools/);
				// As pi's handleRunFailure: agent_end alone, with what the failure added.
				expect(events.map((event) => event.type)).toEqual(["agent_end"]);
				expect((events[0] as Extract<AgentEvent, { type: "agent_end" }>).messages.map((message) => message.role)).toEqual(["toolResult", "assistant"]);
				const last = restored.state.messages.at(-1) as AgentMessage & { stopReason?: string };
				expect(last.role).toBe("assistant");
				expect(last.stopReason).toBe("error");
				// The call the chart could not run is answered: the transcript stays valid for a provider.
				expectValidTranscript(restored.state.messages);
				expect(toolResults(restored.state.messages)).toEqual([expect.stringMatching(/^a: agentchart: the run stopped on an internal error/)]);
				expect(log).toEqual([]);
				// The agent goes on.
				await restored.prompt("and now?");
				expect(textOf(restored.state.messages.at(-1) as AgentMessage)).toBe("again");
				expectValidTranscript(restored.state.messages);
			} finally {
				escapes.stop();
			}
		});

		// The class of the test above: every field of an idle and of a waiting snapshot (five levels
		// deep, transcripts aside), damaged one at a time with each kind of wrong value.
		it("restores, or refuses with an agentchart error that names what is wrong, a snapshot with any one field damaged (never a TypeError from inside)", async () => {
			const tool = makeTool("send", async () => ok("sent"), { needsApproval: true });
			const { idle, waiting, streamFn } = await snapshotsOfAWait(tool);
			type Node = Record<string, unknown> | unknown[];
			const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null;
			/** Every path below `value`, down to `depth` levels (a transcript's messages are checked as transcripts are, elsewhere). */
			const pathsOf = (value: unknown, prefix: string[], depth: number): string[][] => {
				if (depth === 0 || !isNode(value)) return [];
				return Object.keys(value).flatMap((key) => (key === "messages" && prefix.length > 1 ? [] : [[...prefix, key], ...pathsOf((value as Record<string, unknown>)[key], [...prefix, key], depth - 1)]));
			};
			const wrongValues: unknown[] = [null, 5, "x", [], {}, true, undefined];
			const unclear: string[] = [];
			let refused = 0;
			for (const base of [idle, waiting]) {
				for (const path of pathsOf(base, [], 5)) {
					for (const wrong of wrongValues) {
						const damaged = throughJson(base) as unknown as Record<string, unknown>;
						let parent: Node = damaged;
						for (const key of path.slice(0, -1)) parent = (parent as Record<string, unknown>)[key] as Node;
						const last = path[path.length - 1] as string;
						if (wrong === undefined) delete (parent as Record<string, unknown>)[last];
						else (parent as Record<string, unknown>)[last] = wrong;
						try {
							restore(damaged as unknown as AgentSnapshot, { initialState: { tools: [tool] }, streamFn }).dispose();
						} catch (error) {
							refused++;
							const message = (error as Error).message;
							// Ours: "agentchart: ..." for the snapshot, "initialState.messages...: expected ..." for a transcript.
							if (!(error instanceof Error) || error instanceof TypeError || !/^(agentchart: |initialState\.)/.test(message)) unclear.push(`${path.join(".")} = ${JSON.stringify(wrong)}: ${message}`);
						}
					}
				}
			}
			expect(unclear).toEqual([]);
			// The sweep reached the checks (not every damage is refused: a changed prompt text restores).
			expect(refused).toBeGreaterThan(200);
		});
	});
}

describe("a stored session: the journal after the snapshot", () => {
	it("replays a model call and a tool call the journal says ended after the last snapshot, instead of making them again", async () => {
		const store = createMemoryStore();
		const runs: string[] = [];
		const work = makeTool("work", async (id) => (runs.push(id), ok("worked")));
		const wait = heldTool("wait");
		const scripted = createScriptedModel([{ content: [toolCall("work", {}, "a"), toolCall("wait", {}, "b")] }, { content: "done" }]);
		const tools = [work, wait.tool];
		const first = new Agent({ initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn, store, sessionId: "s1" });
		void first.prompt("go");
		await until(() => runs.length === 1 && wait.runs.length === 1, "both calls");
		await until(() => toolResults(first.state.messages).length === 0 && first.actor.getSnapshot().context.run?.batch?.calls[0]?.status === "settled", "work to settle");
		// The last snapshot the store has is the agent as the prompt found it; the journal has the
		// prompt and the rest.
		await new Promise((resolve) => setTimeout(resolve, 5));
		const loaded = await store.load("s1");
		expect(loaded?.snapshot?.machine.context.run?.batch).toBeUndefined();
		expect(loaded?.snapshot?.journal.map((entry) => `${entry.effect} ${entry.kind} ${entry.phase}`).sort()).toEqual([
			"r1 run start",
			"r1.m1 model intent",
			"r1.m1 model outcome",
			"r1.t1.a tool intent",
			"r1.t1.a tool outcome",
			"r1.t1.b tool intent",
			"r1.t1.b tool update",
		]);
		first.dispose();
		const { again, second } = await finishInNewProcess(store, "s1", { initialState: { tools } });
		// The first reply came from the journal; only the reply after the tools was asked for.
		expect(again.calls).toHaveLength(1);
		expectWorkKeptWaitInterrupted(second, runs, wait.runs);
		// The session ended: the store keeps an idle snapshot and no journal.
		await second.save();
		const final = await store.load("s1");
		expect(final?.snapshot?.machine.value).toBe("idle");
		expect(final?.snapshot?.journal).toEqual([]);
	});

	it("saves no turn's end the journal carries: a crash in the next turn goes on from the run's start without making the first turn's calls again", async () => {
		const store = createMemoryStore();
		const runs: string[] = [];
		const work = makeTool("work", async (id) => (runs.push(id), ok("worked")));
		const wait = heldTool("wait");
		const tools = [work, wait.tool];
		const scripted = createScriptedModel([{ content: [toolCall("work", {}, "a")] }, { content: [toolCall("wait", {}, "b")] }, { content: "done" }]);
		const first = new Agent({ initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn, store, sessionId: "s4" });
		void first.prompt("go");
		await until(() => wait.runs.length === 1, "the second turn's call");
		await new Promise((resolve) => setTimeout(resolve, 5));
		const loaded = await store.load("s4");
		// The prompt is journaled, after the agent as it found it.
		expect(loaded?.snapshot?.machine.context.messages).toEqual([]);
		expect(loaded?.snapshot?.journal.filter((entry) => entry.phase === "outcome").map((entry) => entry.effect)).toEqual(["r1.m1", "r1.t1.a", "r1.m2"]);
		first.dispose();

		const { again, second } = await finishInNewProcess(store, "s4", { initialState: { tools } });
		expect(again.calls).toHaveLength(1);
		expectWorkKeptWaitInterrupted(second, runs, wait.runs);
	});

	it("saves the end of a turn that compacted (the journal does not carry a compaction): a crash after it keeps the compacted transcript", async () => {
		const store = createMemoryStore();
		const work = makeTool("work", async () => ok("worked"));
		const wait = heldTool("wait");
		const tools = [work, wait.tool];
		let summaries = 0;
		const long = (label: string) => `${label} ${"x".repeat(400)}`;
		const scripted = createScriptedModel([{ content: [toolCall("work", {}, "a")] }, { content: [toolCall("wait", {}, "b")] }, { content: "done" }]);
		const model = { ...scripted.model, contextWindow: 150 };
		const compaction = { enabled: true, reserveTokens: 0, keepRecentTokens: 1, summarize: async () => (summaries++, "summary") };
		const first = new Agent({ initialState: { model, tools, messages: [user(long("u1")), assistant(long("a1"))] }, streamFn: scripted.streamFn, compaction, store, sessionId: "s5" });
		void first.prompt(long("u2"));
		// The first turn compacted before its call; the process dies in the second.
		await until(() => wait.runs.length === 1, "the second turn's call");
		await new Promise((resolve) => setTimeout(resolve, 5));
		expect(summaries).toBe(1);
		first.dispose();

		const stored = JSON.stringify((await store.load("s5"))?.snapshot?.machine.context.messages);
		expect(stored).toContain("summary");
		expect(stored).not.toContain("u1 x");
		const { again, second } = await finishInNewProcess(store, "s5", { initialState: { tools }, compaction });
		expect(again.calls).toHaveLength(1);
		expectValidTranscript(second.state.messages);
	});

	it.each([
		["the last snapshot from before the reply", false],
		["a snapshot saved while the reply streamed", true],
	])("keeps the calls that started while their reply streamed when the reply never ended (streaming tool execution; %s)", async (_name, snapshotMidStream) => {
		const store = createMemoryStore();
		const lookup = heldTool("lookup", { replay: "safe" });
		const charge = heldTool("charge");
		const tools = [lookup.tool, charge.tool];
		const stream = manualStream();
		const first = new Agent({ initialState: { model: createScriptedModel([]).model, tools }, streamFn: stream.streamFn, toolExecution: "streaming", store, sessionId: "s3" });
		void first.prompt("go");
		await stream.opened;
		stream.start();
		if (snapshotMidStream) {
			// A command while the reply streams: the agent saves a snapshot of the run there.
			first.followUp(user("later"));
			await until(() => store.load("s3") !== undefined && first.actor.getSnapshot().context.followUpQueue.length === 1, "the follow-up");
			await new Promise((resolve) => setTimeout(resolve, 10));
			expect((await store.load("s3"))?.snapshot?.machine.context.followUpQueue).toHaveLength(1);
		}
		stream.toolCallEnd({ type: "toolCall", id: "a", name: "charge", arguments: {} });
		stream.toolCallEnd({ type: "toolCall", id: "b", name: "lookup", arguments: {} });
		await until(() => charge.runs.length === 1 && lookup.runs.length === 1, "both calls to start while the reply streams");
		// The process dies here: the reply never ended, the calls it streamed are running.
		first.dispose();

		const again = createScriptedModel([{ content: "done" }, { content: "later done" }]);
		const second = await Agent.load({ store, sessionId: "s3", initialState: { tools }, streamFn: again.streamFn });
		// The replay-safe call runs again (the restored run starts once the caller's code after load() ran).
		await until(() => lookup.runs.length === 2, "the replay-safe call to run again");
		lookup.release();
		await second.waitForIdle();
		// The calls that ran stay in the transcript, answered by the crash rules; the reply is not
		// asked for again (it would bring calls with new ids, and the started ones would be lost).
		expect(again.calls).toHaveLength(snapshotMidStream ? 2 : 1);
		expect(charge.runs).toEqual(["a"]);
		expect(lookup.runs).toEqual(["b", "b"]);
		expect(toolResults(second.state.messages).map((line) => line.slice(0, 40))).toEqual(['a: Tool "charge" was interrupted by a re', "b: lookup finished"]);
		expect(second.state.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "toolResult", "assistant", ...(snapshotMidStream ? ["user", "assistant"] : [])]);
		expectValidTranscript(second.state.messages);
	});

	it("a call announced while its start's listener was busy (streaming tool execution) never ran: after a restore from that moment the reply is asked for again, and only its call runs", async () => {
		const runs: string[] = [];
		const work = makeTool("work", async (id) => {
			runs.push(id);
			return ok("worked");
		});
		const held = deferred<void>();
		const model = createScriptedModel([{ content: [toolCall("work", {}, "a")] }]);
		const first = new Agent({ initialState: { model: model.model, tools: [work] }, streamFn: model.streamFn, toolExecution: "streaming" });
		let announced = false;
		first.subscribe(async (event) => {
			if (event.type !== "tool_execution_start") return;
			announced = true;
			await held.promise;
		});
		void first.prompt("go");
		await until(() => announced, "the call to be announced");
		// The listener holds the reply too (each stream event waits for the listeners, as in pi).
		expect(first.actor.getSnapshot().matches({ running: "streaming" })).toBe(true);
		const snapshot = throughJson(first.snapshot());
		expect(snapshot.machine.context.run?.batch?.calls.map((call) => call.status)).toEqual(["announced"]);
		// The process dies here: the call was announced, and never ran.
		first.dispose();
		held.resolve();
		expect(runs).toEqual([]);
		const again = createScriptedModel([{ content: [toolCall("work", {}, "b")] }, { content: "done" }]);
		const second = Agent.restore(snapshot, { initialState: { tools: [work] }, streamFn: again.streamFn, toolExecution: "streaming" });
		await second.waitForIdle();
		expect(runs).toEqual(["b"]);
		expect(toolResults(second.state.messages)).toEqual(["b: worked"]);
		expect(second.state.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
		expectValidTranscript(second.state.messages);
	});

	it("holds the reply it closes with its started calls until the listeners took its end (streaming tool execution)", async () => {
		const store = createMemoryStore();
		const lookup = heldTool("lookup", { replay: "safe" });
		const tools = [lookup.tool];
		const stream = manualStream();
		const first = new Agent({ initialState: { model: createScriptedModel([]).model, tools }, streamFn: stream.streamFn, toolExecution: "streaming", store, sessionId: "s6" });
		void first.prompt("go");
		await stream.opened;
		stream.start();
		stream.toolCallEnd({ type: "toolCall", id: "a", name: "lookup", arguments: {} });
		await until(() => lookup.runs.length === 1, "the call to start while the reply streams");
		lookup.release();
		await until(() => first.state.pendingToolCalls.size === 0, "the call to end while the reply streams");
		await first.saved();
		first.dispose();

		// The restored agent closes the reply with the call; a listener takes its time with the reply's end.
		const held = deferred<void>();
		let reached = false;
		const again = createScriptedModel([{ content: "done" }]);
		const second = await Agent.load({
			store,
			sessionId: "s6",
			initialState: { tools },
			streamFn: again.streamFn,
			listeners: [
				async (event: AgentEvent) => {
					if (event.type !== "message_end" || event.message.role !== "assistant" || reached) return;
					reached = true;
					await held.promise;
				},
			],
		});
		await until(() => reached, "the replayed reply's end to reach the listener");
		await new Promise((resolve) => setTimeout(resolve, 10));
		// pi's loop awaits the listeners of message_end before it runs or answers a call: so does the chart.
		expect(second.actor.getSnapshot().value).toEqual({ running: "after-stream" });
		expect(again.calls).toHaveLength(0);
		held.resolve();
		await second.waitForIdle();
		expect(lookup.runs).toEqual(["a"]);
		expect(toolResults(second.state.messages)).toEqual(["a: lookup finished"]);
		expectValidTranscript(second.state.messages);
	});

	it("never starts a tool whose run was aborted while its intent was being stored", async () => {
		const inner = createMemoryStore();
		const intentWritten = deferred<void>();
		const release = deferred<void>();
		const store = {
			load: (id: string) => inner.load(id),
			saveSnapshot: (id: string, snapshot: AgentSnapshot) => inner.saveSnapshot(id, snapshot),
			appendJournal: async (id: string, entry: Parameters<typeof inner.appendJournal>[1]) => {
				if (entry.kind === "tool" && entry.phase === "intent") {
					intentWritten.resolve();
					await release.promise;
				}
				await inner.appendJournal(id, entry);
			},
		};
		const runs: string[] = [];
		const work = makeTool("work", async (id) => (runs.push(id), ok("worked")));
		const scripted = createScriptedModel([{ content: [toolCall("work", {}, "a")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [work] }, streamFn: scripted.streamFn, store, sessionId: "s5" });
		const run = agent.prompt("go");
		await intentWritten.promise;
		agent.abort();
		release.resolve();
		await run;
		expect(runs).toEqual([]);
		expect(toolResults(agent.state.messages)).toEqual([expect.stringMatching(/^a: /)]);
		expectValidTranscript(agent.state.messages);
	});

	it("keeps only a tool's latest progress in the journal, however often it reports, and quotes it when the call is interrupted", async () => {
		const release = deferred<void>();
		const reported = deferred<void>();
		const chatty = makeTool("chatty", async (_id, _args, _signal, onUpdate) => {
			for (let line = 1; line <= 50; line++) onUpdate?.(ok(`line ${line}`) as AgentToolResult<unknown>);
			reported.resolve();
			await release.promise;
			return ok("done");
		});
		const scripted = createScriptedModel([{ content: [toolCall("chatty", {}, "a")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [chatty] }, streamFn: scripted.streamFn });
		void agent.prompt("go");
		await reported.promise;
		const snapshot = throughJson(agent.snapshot());
		release.resolve();
		await agent.waitForIdle();
		expect(snapshot.journal.filter((entry) => entry.phase === "update")).toHaveLength(1);
		const again = Agent.restore(snapshot, { initialState: { tools: [chatty] }, streamFn: createScriptedModel([{ content: "done" }]).streamFn });
		await again.waitForIdle();
		expect(toolResults(again.state.messages)).toEqual([expect.stringMatching(/^a: [\s\S]*before the restart:\nline 50$/)]);
	});

	it("saves after each command and at every quiet point, and a restored agent goes on saving", async () => {
		const store = createMemoryStore();
		const scripted = createScriptedModel([{ content: "hi" }, { content: "again" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, store, sessionId: "s2" });
		agent.followUp(user("queued"));
		await new Promise((resolve) => setTimeout(resolve, 0));
		expect((await store.load("s2"))?.snapshot?.machine.context.followUpQueue).toHaveLength(1);
		await agent.prompt("go");
		await agent.save();
		const stored = await store.load("s2");
		expect(stored?.snapshot?.machine.context.messages.map((message) => textOf(message))).toEqual(["go", "hi", "queued", "again"]);
		const events: AgentEvent[] = [];
		const again = await Agent.load({ store, sessionId: "s2", streamFn: createScriptedModel([{ content: "third" }]).streamFn, listeners: [(event) => void events.push(event)] });
		await again.prompt("more");
		await again.save();
		expectWellFormedRun(events);
		expect((await store.load("s2"))?.snapshot?.machine.context.messages).toHaveLength(6);
	});
});
