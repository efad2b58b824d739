/**
 * Restoring never changes where a run ends: for random runs (replies with tool calls, some
 * needing approval, decided by a fixed rule; steering and follow-ups queued), every snapshot the
 * agent saved at a quiet point, restored through JSON into a new agent (with new, equal tools
 * and model) that then finishes the run, gives the same final transcript as the run that was
 * never interrupted. With replay-safe tools, so does every snapshot the agent saved, quiet or
 * not, and each of those, taken as an event reached a listener, is plain JSON already (what JSON
 * makes of it is what it was). And whenever a tool runs, what a slow store holds at that moment (a crash then leaves
 * that) restores a run that answers the call without running it again and keeps every user
 * message the model had seen. A store that fails random writes (rejecting, or throwing) never
 * takes the process down or makes a tool run twice, every failure is reported, and what it kept
 * restores to a valid run; one whose write never answers does not keep `abort()` from ending
 * the run.
 * Some runs' first call overflows the context, and the run compacts and asks again: a snapshot
 * taken while that compaction ran, restored through JSON, once summarised or kept the overflowed
 * reply and retried without the user's question (`test/compaction/probe-round-4.test.ts`).
 * Both interpreters. `PROPERTY_RUNS` sets the runs, `PROPERTY_SEED` replays a seed.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { CompactionSettings } from "../../src/compaction/settings.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { type AgentStore, createMemoryStore } from "../../src/durable/store.js";
import { withInterpreter } from "../../src/machines/agent-logic.js";
import { createScriptedModel, type ScriptedBlock } from "../../src/providers/scripted.js";
import type { AgentEvent, AnyAgentTool, ToolExecutionMode } from "../../src/types/agent.js";
import { emptyUsage } from "../../src/types/content.js";
import type { AgentMessage, AssistantMessage } from "../../src/types/messages.js";
import type { StreamFn } from "../../src/types/stream.js";
import { expectValidTranscript, makeTool, ok, user, watchEscapes } from "../agent/helpers.js";

const NUM_RUNS = Number(process.env["PROPERTY_RUNS"] ?? 25);
const SEED = Number(process.env["PROPERTY_SEED"] ?? Date.now() % 2 ** 31);

/** One reply of the script: the tool calls it makes (by tool), or none (a text answer). */
type ReplyPlan = ("work" | "send")[];

interface Scenario {
	mode: ToolExecutionMode;
	replies: ReplyPlan[];
	steer: boolean;
	followUp: boolean;
	/**
	 * The first call overflows the context, and the run compacts (keeping this many recent tokens)
	 * and asks again; undefined: no overflow, compaction off.
	 */
	overflow: number | undefined;
	/**
	 * The caller adds a note to `agent.state.messages` as the first turn ends: the run does not send
	 * it, and a snapshot that holds it restores a transcript with it in its place.
	 */
	note: boolean;
}

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
	mode: fc.constantFrom<ToolExecutionMode>("parallel", "sequential", "streaming"),
	replies: fc.array(fc.array(fc.constantFrom<"work" | "send">("work", "send"), { maxLength: 3 }), { minLength: 1, maxLength: 4 }),
	steer: fc.boolean(),
	followUp: fc.boolean(),
	overflow: fc.constantFrom(undefined, undefined, 0, 10),
	note: fc.boolean(),
});

/** The caller's note (see `Scenario.note`). */
const NOTE = "a note the app added during the run";

/** Whether a message is the caller's note. */
function isNote(message: AgentMessage): boolean {
	return message.role === "user" && JSON.stringify(message.content).includes(NOTE);
}

/** What the summariser writes: how the model knows the transcript was compacted. */
const SUMMARY = "summary of the run so far";

/** What the session held before the run: where a call overflows, earlier turns a compaction can summarise. */
function earlierOf(scenario: Scenario): AgentMessage[] {
	if (scenario.overflow === undefined) return [];
	const reply = (text: string): AssistantMessage => ({ role: "assistant", content: [{ type: "text", text }], api: "scripted", provider: "scripted", model: "scripted-1", usage: emptyUsage(), stopReason: "stop", timestamp: 1 });
	return [user(`earlier question ${"q".repeat(300)}`), reply(`earlier answer ${"a".repeat(300)}`), user(`another question ${"q".repeat(300)}`), reply(`another answer ${"a".repeat(300)}`)];
}

/** The compaction settings of the scenario's agents (on only where a call overflows). */
function compactionOf(scenario: Scenario): CompactionSettings | undefined {
	return scenario.overflow === undefined ? undefined : { enabled: true, keepRecentTokens: scenario.overflow, summarize: async () => SUMMARY };
}

/**
 * The model: its reply depends only on how many assistant messages the transcript has, so a
 * restored agent asking again gets what the first would have.
 */
function scriptedStreamFn(scenario: Scenario): StreamFn {
	const replies = scenario.replies;
	return (model, context, options) => {
		// Until a compaction: the first call's context no longer fits (its reply is dropped once compacted).
		if (scenario.overflow !== undefined && !JSON.stringify(context.messages).includes(SUMMARY)) {
			return createScriptedModel([{ content: [], stopReason: "error", errorMessage: "prompt is too long: 250000 tokens > 200000 maximum" }]).streamFn(model, context, options);
		}
		const answered = context.messages.filter((message) => message.role === "assistant").length;
		const plan = replies[answered];
		const content: ScriptedBlock[] = plan && plan.length > 0 ? plan.map((name, index) => ({ type: "toolCall", name, arguments: { n: index }, id: `t${answered}_${index}` })) : [{ type: "text", text: `answer ${answered}` }];
		return createScriptedModel([{ content }], { chunkSize: 3 }).streamFn(model, context, options);
	};
}

/**
 * Tools as fresh objects (a restored agent gets equal ones, not the same): `send` needs approval.
 * Each run is logged, and `onRun` is called as it starts.
 */
function toolsFor(replaySafe: boolean, ran: string[] = [], onRun: (id: string) => void = () => {}): AnyAgentTool[] {
	const extra = replaySafe ? { replay: "safe" as const } : {};
	return [
		makeTool("work", async (id) => (ran.push(id), onRun(id), await new Promise((resolve) => setTimeout(resolve, 1)), ok(`worked ${id}`)), extra),
		makeTool("send", async (id) => (ran.push(id), onRun(id), ok(`sent ${id}`)), { ...extra, needsApproval: true }),
	];
}

/**
 * The approval rule: calls whose id ends in 0 are approved, the others rejected. The decisions'
 * promises go to `decisions`, when given.
 */
function decide(agent: Agent, decisions?: Promise<unknown>[]): void {
	for (const call of agent.pendingApprovals) {
		const decision = call.toolCallId.endsWith("_0") ? agent.approve(call.toolCallId) : agent.reject(call.toolCallId, "rule");
		decisions?.push(decision.catch(() => undefined));
	}
}

function approver(agent: () => Agent | undefined, decisions?: Promise<unknown>[]): (event: AgentEvent) => void {
	return (event) => {
		if (event.type !== "approval_requested") return;
		const target = agent();
		// Decided once the step that asked is over, as a person would.
		if (target) queueMicrotask(() => target.pendingApprovals.length > 0 && decide(target, decisions));
	};
}

/** A transcript without what differs between runs for no reason (timestamps). */
function normalized(messages: readonly AgentMessage[]): unknown {
	return JSON.parse(JSON.stringify(messages, (key, value: unknown) => (key === "timestamp" ? 0 : value)));
}

/**
 * What a run restored from `snapshot` ends with. A reply interrupted while it streamed, after
 * some of its calls had started (streaming tool execution), is closed with those calls: they
 * stay (answered by the crash rules), the rest of the reply does not (its text, usage and calls
 * that had not started), since the model is not asked for it again. The rest is as uninterrupted.
 */
function expectedFrom(snapshot: AgentSnapshot, transcript: AgentMessage[], received: AgentMessage[]): { expected: AgentMessage[]; received: AgentMessage[] } {
	const ended = new Set(snapshot.journal.flatMap((entry) => (entry.kind === "model" && entry.phase === "outcome" ? [entry.effect] : [])));
	const started = new Set(
		snapshot.journal.flatMap((entry) => ((entry.kind === "tool" && entry.phase === "intent") || (entry.kind === "approval" && entry.phase === "requested")) && entry.streamedFrom !== undefined && !ended.has(entry.streamedFrom) ? [entry.toolCallId] : []),
	);
	if (started.size === 0) return { expected: transcript, received };
	const at = snapshot.machine.context.messages.length;
	// The replies after it are asked with a shorter context: their input token counts differ.
	const usageFrom = (messages: AgentMessage[]) => messages.map((message, index) => (index >= at && message.role === "assistant" ? { ...message, usage: emptyUsage() } : message));
	const reply = transcript[at] as AssistantMessage;
	const dropped = new Set(reply.content.flatMap((block) => (block.type === "toolCall" && !started.has(block.id) ? [block.id] : [])));
	const expected = transcript.flatMap((message, index): AgentMessage[] => {
		if (index === at) return [{ ...reply, content: reply.content.filter((block) => block.type === "toolCall" && started.has(block.id)) }];
		if (message.role === "toolResult" && dropped.has(message.toolCallId)) return [];
		return [message];
	});
	return { expected: usageFrom(expected), received: usageFrom(received) };
}

/** Whether nothing was in flight when the snapshot was taken: no model call, no tool call running. */
function quiet(snapshot: AgentSnapshot): boolean {
	const children = snapshot.machine.children;
	if ("stream" in children || "compaction" in children) return false;
	return !(snapshot.machine.context.run?.batch?.calls ?? []).some((call) => call.status === "running" || call.status === "preparing");
}

/** Whether the stored session has anything of its second run (a later prompt or `continue()`). */
function reachesSecondRun(snapshot: AgentSnapshot): boolean {
	return (snapshot.machine.context.runs ?? 0) >= 2 || snapshot.journal.some((entry) => entry.effect === "r2" || entry.effect.startsWith("r2."));
}

/** Whether the journal after the snapshot has a model or tool call in flight (its intent journaled, not its outcome). */
function inFlight(snapshot: AgentSnapshot, kind: "model" | "tool"): boolean {
	const ended = new Set(snapshot.journal.flatMap((entry) => (entry.kind === kind && entry.phase === "outcome" ? [entry.effect] : [])));
	return snapshot.journal.some((entry) => entry.kind === kind && entry.phase === "intent" && !ended.has(entry.effect));
}

/**
 * Runs the scenario without interruption; returns its final transcript and what the store held at
 * each event once the agent's writes so far had landed (`agent.saved()`), from the point the run
 * is in the store: its snapshot, with the journal after it (what a crash then leaves). Not while a
 * model call was in flight there (a restore asks again; see `viewsAtEachTool` for those). With
 * `everyEvent`, also a snapshot taken as each event reached a listener (a model call or tool calls
 * in flight).
 */
async function uninterrupted(scenario: Scenario, interpreter: "agentchart" | "xstate", replaySafe: boolean, everyEvent: boolean, then: Then = "none") {
	const durable = createMemoryStore();
	const saved: AgentSnapshot[] = [];
	// Before the run's start is in the store, a crash loses the prompt: prompt() had not returned.
	let runStored = false;
	const store: AgentStore = {
		load: (id) => durable.load(id),
		saveSnapshot(id, snapshot) {
			runStored ||= snapshot.machine.context.run !== undefined;
			return durable.saveSnapshot(id, snapshot);
		},
		appendJournal(id, entry) {
			runStored ||= entry.kind === "run";
			return durable.appendJournal(id, entry);
		},
	};
	const held = async () => {
		const loaded = (await durable.load("s"))?.snapshot;
		if (runStored && loaded && !inFlight(loaded, "model")) saved.push(JSON.parse(JSON.stringify(loaded)) as AgentSnapshot);
	};
	let agent: Agent | undefined;
	agent = withInterpreter(interpreter, () =>
		new Agent({ initialState: { model: createScriptedModel([]).model, messages: earlierOf(scenario), tools: toolsFor(replaySafe) }, streamFn: scriptedStreamFn(scenario), compaction: compactionOf(scenario), toolExecution: scenario.mode, store, sessionId: "s", listeners: [approver(() => agent)] }),
	);
	agent.subscribe(async () => {
		await (agent as Agent).saved();
		await held();
	});
	// agent.snapshot() is plain JSON at any moment: what JSON makes of it is what it was (a function, a
	// symbol, a non-finite number, a Date, an object with a toJSON would each read differently).
	const notPlain: string[] = [];
	/** Snapshots taken by hand once the caller's note was in `agent.state.messages`: each must hold it. */
	const noteHeld = new Set<AgentSnapshot>();
	let noted = false;
	if (everyEvent) {
		agent.subscribe((event) => {
			const snapshot = (agent as Agent).snapshot();
			const json = JSON.parse(JSON.stringify(snapshot)) as AgentSnapshot;
			try {
				expect(snapshot).toEqual(json);
			} catch (error) {
				notPlain.push(`at ${event.type} in ${JSON.stringify(json.machine.value)}: ${String(error).slice(0, 400)}`);
			}
			saved.push(json);
			if (noted) noteHeld.add(json);
		});
	}
	if (scenario.note) {
		agent.subscribe((event) => {
			if (event.type !== "turn_end" || noted) return;
			noted = true;
			(agent as Agent).state.messages = [...(agent as Agent).state.messages, user(NOTE)];
		});
	}
	pinFor(agent, then);
	if (scenario.followUp) agent.followUp(user("follow-up"));
	const run = agent.prompt("go");
	if (scenario.steer) agent.steer(user("steer"));
	await run;
	const firstRun = agent.state.messages.slice();
	// A session goes on: a restore applies the runs its journal ended.
	await goOn(agent, then);
	await agent.saved();
	await held();
	await agent.save();
	expect(notPlain, "snapshots that were not plain JSON").toEqual([]);
	return { transcript: agent.state.messages, firstRun, saved, noteHeld };
}

/** Restores the snapshot in a new agent (through JSON) and lets it finish; `ran` gets the tool calls it runs. */
async function finishedFrom(snapshot: AgentSnapshot, scenario: Scenario, interpreter: "agentchart" | "xstate", replaySafe: boolean, ran: string[]): Promise<AgentMessage[]> {
	let agent: Agent | undefined;
	agent = withInterpreter(interpreter, () =>
		Agent.restore(JSON.parse(JSON.stringify(snapshot)) as AgentSnapshot, {
			initialState: { tools: toolsFor(replaySafe, ran) },
			streamFn: scriptedStreamFn(scenario),
			compaction: compactionOf(scenario),
			toolExecution: scenario.mode,
			listeners: [approver(() => agent)],
		}),
	);
	decide(agent);
	await agent.waitForIdle();
	// A snapshot taken between the prompt and its run's end with queued messages: the run took them.
	if (agent.hasQueuedMessages()) await agent.continue();
	return agent.state.messages;
}

/**
 * How a session goes on after its first run, when it does; `pinned-` first reads `agent.actor`, so
 * the machine, its run count and its queues stay between runs (`queue-prompt`: a follow-up queued,
 * saved, then a prompt).
 */
type Then = "none" | "prompt" | "continue" | "queue-prompt" | "pinned-prompt" | "pinned-continue" | "pinned-queue-prompt";
const THENS: Then[] = ["none", "prompt", "continue", "queue-prompt", "pinned-prompt", "pinned-continue", "pinned-queue-prompt"];

/** Pins the agent's machine, from its first run on, when `then` says so. */
function pinFor(agent: Agent, then: Then): void {
	if (then.startsWith("pinned-")) void agent.actor;
}

async function goOn(agent: Agent, then: Then): Promise<void> {
	const next = then.replace("pinned-", "");
	if (next === "prompt") await agent.prompt("again");
	else if (next === "continue") {
		agent.followUp(user("later"));
		await agent.continue();
	} else if (next === "queue-prompt") {
		agent.followUp(user("later"));
		await agent.saved();
		await agent.prompt("again");
	}
}

/**
 * A memory store whose writes arrive late (each after its own delay, in ms; 0: at once, as a
 * synchronous store): `durable` holds what it finished writing, which is what a crash leaves.
 */
function slowStore(delays: readonly number[]): { store: AgentStore; durable: AgentStore } {
	const durable = createMemoryStore();
	let write = 0;
	const delay = () => delays[write++ % delays.length] ?? 0;
	const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
	const store: AgentStore = {
		load: (id) => durable.load(id),
		async saveSnapshot(id, snapshot) {
			await sleep(delay());
			await durable.saveSnapshot(id, snapshot);
		},
		appendJournal(id, entry) {
			const ms = delay();
			if (ms === 0) return durable.appendJournal(id, entry);
			return sleep(ms).then(() => durable.appendJournal(id, entry));
		},
	};
	return { store, durable };
}

/**
 * Runs the scenario on a slow store; as each tool starts, takes what the store holds then, with
 * the user messages the agent had.
 */
async function viewsAtEachTool(scenario: Scenario, interpreter: "agentchart" | "xstate", delays: readonly number[], then: Then) {
	const { store, durable } = slowStore(delays);
	const views: Array<{ toolCallId: string; stored: Promise<AgentSnapshot | undefined>; users: string[] }> = [];
	let agent: Agent | undefined;
	const onRun = (toolCallId: string) => {
		// Read now: the memory store answers with what it holds at the call.
		const stored = durable.load("s").then((loaded) => (loaded?.snapshot ? (JSON.parse(JSON.stringify(loaded.snapshot)) as AgentSnapshot) : undefined));
		views.push({ toolCallId, stored, users: (agent?.state.messages ?? []).filter((message) => message.role === "user").map((message) => JSON.stringify(message.content)) });
	};
	agent = withInterpreter(interpreter, () =>
		new Agent({ initialState: { model: createScriptedModel([]).model, messages: earlierOf(scenario), tools: toolsFor(false, [], onRun) }, streamFn: scriptedStreamFn(scenario), compaction: compactionOf(scenario), toolExecution: scenario.mode, store, sessionId: "s", listeners: [approver(() => agent)] }),
	);
	pinFor(agent, then);
	if (scenario.followUp) agent.followUp(user("follow-up"));
	const run = agent.prompt("go");
	if (scenario.steer) agent.steer(user("steer"));
	await run;
	await goOn(agent, then);
	await agent.saved();
	return Promise.all(views.map(async (view) => ({ ...view, stored: await view.stored })));
}

/** One write of a failing store: whether it fails (rejecting, or throwing as a synchronous store would) and after how long (ms). */
interface WritePlan {
	outcome: "ok" | "reject" | "throw";
	ms: 0 | 1;
}

/**
 * A memory store whose writes go as `plan` says, in turn (cycling): `durable` holds the writes
 * that succeeded, which is what a crash leaves; `failures` counts those that did not.
 */
function failingStore(plan: readonly WritePlan[]): { store: AgentStore; durable: AgentStore; failures: () => number } {
	const durable = createMemoryStore();
	let write = 0;
	let failures = 0;
	const go = (what: string, done: () => void | Promise<void>): void | Promise<void> => {
		const step = plan[write++ % plan.length] ?? { outcome: "ok", ms: 0 };
		const act = () => {
			if (step.outcome === "ok") return done();
			failures++;
			const error = new Error(`store down (${what})`);
			if (step.outcome === "throw") throw error;
			return Promise.reject(error);
		};
		return step.ms === 0 ? act() : new Promise<void>((resolve) => setTimeout(resolve, step.ms)).then(act);
	};
	const store: AgentStore = {
		load: (id) => durable.load(id),
		saveSnapshot: async (id, snapshot) => go("snapshot", () => durable.saveSnapshot(id, snapshot)),
		appendJournal: (id, entry) => go(`${entry.kind} ${entry.phase}`, () => durable.appendJournal(id, entry)),
	};
	return { store, durable, failures: () => failures };
}

/**
 * Runs the scenario on a store that fails some writes; returns what its agent did and what the
 * store holds after, once the agent's writes landed. Rejections and exceptions that reached the
 * process's last-resort handlers meanwhile are in `escaped`.
 */
async function onFailingStore(scenario: Scenario, interpreter: "agentchart" | "xstate", plan: readonly WritePlan[], then: Then) {
	const { store, durable, failures } = failingStore(plan);
	const escapes = watchEscapes();
	const ran: string[] = [];
	let agent: Agent | undefined;
	try {
		agent = withInterpreter(interpreter, () =>
			new Agent({ initialState: { model: createScriptedModel([]).model, messages: earlierOf(scenario), tools: toolsFor(false, ran) }, streamFn: scriptedStreamFn(scenario), compaction: compactionOf(scenario), toolExecution: scenario.mode, store, sessionId: "s", listeners: [approver(() => agent)] }),
		);
		pinFor(agent, then);
		if (scenario.followUp) agent.followUp(user("follow-up"));
		const run = agent.prompt("go");
		if (scenario.steer) agent.steer(user("steer"));
		await run;
		// `queue-prompt` waits for saved() between the runs: a failure before it is reported there.
		let reported = 0;
		await goOn(agent, then).catch((error: unknown) => {
			if (!(error instanceof Error && /store down/.test(error.message))) throw error;
			reported++;
		});
		const last = await agent.saved().then(
			() => undefined,
			(error: unknown) => error,
		);
		// Node reports a rejection nobody handled once the microtasks are done.
		await new Promise((resolve) => setTimeout(resolve, 5));
		const stored = (await durable.load("s"))?.snapshot;
		return { agent, ran, escaped: escapes.caught, failures: failures(), last, reported, stored: stored && (JSON.parse(JSON.stringify(stored)) as AgentSnapshot) };
	} finally {
		escapes.stop();
	}
}

/** `stored` restores to a run that ends with a valid transcript and runs none of the calls in `ran` again. */
async function expectRestoresWithoutRerun(stored: AgentSnapshot, scenario: Scenario, interpreter: "agentchart" | "xstate", ran: readonly string[]): Promise<void> {
	const again: string[] = [];
	expectValidTranscript(await finishedFrom(stored, scenario, interpreter, false, again));
	expect(
		again.filter((id) => ran.includes(id)),
		"run again after the restore",
	).toEqual([]);
}

/**
 * Runs the scenario's first prompt on a store whose `hangAt`-th write never answers; aborts the
 * run if it has not ended 100 ms in (it waits for that write), and gives the abort 1 s.
 */
async function onHangingStore(scenario: Scenario, interpreter: "agentchart" | "xstate", hangAt: number) {
	const durable = createMemoryStore();
	let write = 0;
	const never = new Promise<void>(() => {});
	const go = (done: () => void | Promise<void>) => (write++ === hangAt ? never : done());
	const store: AgentStore = {
		load: (id) => durable.load(id),
		saveSnapshot: (id, snapshot) => Promise.resolve(go(() => durable.saveSnapshot(id, snapshot))),
		appendJournal: (id, entry) => go(() => durable.appendJournal(id, entry)),
	};
	const escapes = watchEscapes();
	const ran: string[] = [];
	const decisions: Promise<unknown>[] = [];
	try {
		let agent: Agent | undefined;
		agent = withInterpreter(interpreter, () =>
			new Agent({ initialState: { model: createScriptedModel([]).model, messages: earlierOf(scenario), tools: toolsFor(false, ran) }, streamFn: scriptedStreamFn(scenario), compaction: compactionOf(scenario), toolExecution: scenario.mode, store, sessionId: "s", listeners: [approver(() => agent, decisions)] }),
		);
		if (scenario.followUp) agent.followUp(user("follow-up"));
		let ended = false;
		const run = agent.prompt("go").finally(() => (ended = true));
		if (scenario.steer) agent.steer(user("steer"));
		const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
		await Promise.race([run, sleep(100)]);
		if (!ended) agent.abort();
		// Less than the grace a stream that ignores the abort gets (2 s): the store's write is not such a stream.
		await Promise.race([run, sleep(1_000)]);
		const endedInTime = ended;
		// Every approve() and reject() settles once the run ended, stored or not (one whose write never
		// answered waited for ever).
		const decided = await Promise.race([Promise.all(decisions).then(() => true), sleep(1_000).then(() => false)]);
		await sleep(5);
		const stored = (await durable.load("s"))?.snapshot;
		return { agent, ended: endedInTime, decided, ran, escaped: escapes.caught, stored: stored && (JSON.parse(JSON.stringify(stored)) as AgentSnapshot) };
	} finally {
		escapes.stop();
	}
}

for (const interpreter of ["agentchart", "xstate"] as const) {
	describe(`restoring a run (${interpreter} interpreter)`, () => {
		for (const replaySafe of [false, true]) {
			it(`ends where the uninterrupted run ends, restored at ${replaySafe ? "every snapshot, with replay-safe tools" : "every quiet point"}`, async () => {
				console.log(`property seed (restore, ${interpreter}, ${replaySafe ? "safe" : "quiet"}): ${SEED}  (PROPERTY_SEED=${SEED} to replay)`);
				await fc.assert(
					fc.asyncProperty(scenarioArb, fc.constantFrom<Then>(...THENS), async (scenario, then) => {
						const { transcript, firstRun, saved, noteHeld } = await uninterrupted(scenario, interpreter, replaySafe, replaySafe, then);
						const points = replaySafe ? saved : saved.filter((snapshot) => quiet(snapshot) && !inFlight(snapshot, "tool"));
						expect(points.length).toBeGreaterThan(0);
						for (const snapshot of points) {
							const ran: string[] = [];
							const messages = await finishedFrom(snapshot, scenario, interpreter, replaySafe, ran);
							const where = `restored at ${JSON.stringify(snapshot.machine.value)}`;
							expectValidTranscript(messages);
							// Stored before the session's second run started, it ends where the first run did.
							const whole = reachesSecondRun(snapshot) ? transcript : firstRun;
							// The caller's note: where a snapshot holds it, the restored transcript has it where the
							// uninterrupted one does; where it does not (taken before it, or stored before a save
							// carried it), nowhere.
							const noted = JSON.stringify(snapshot).includes(NOTE);
							if (noteHeld.has(snapshot)) expect(noted, `${where}: a snapshot taken after the caller's note does not hold it`).toBe(true);
							expect(messages.filter(isNote).length, `${where}: the caller's note`).toBe(noted ? 1 : 0);
							// Compared without it, aligned with the machine's transcript (which has it from the run after).
							const machineHasNote = snapshot.machine.context.messages.some(isNote);
							const withoutNote = (list: AgentMessage[]) => (machineHasNote ? list : list.filter((message) => !isNote(message)));
							const compared = expectedFrom(snapshot, withoutNote(whole), withoutNote(messages));
							expect(normalized(compared.received.filter((message) => !isNote(message))), where).toEqual(normalized(compared.expected.filter((message) => !isNote(message))));
							if (noted) expect(messages.findIndex(isNote), `${where}: the caller's note moved`).toBe(whole.findIndex(isNote));
							// A call whose outcome the snapshot's journal has is not run again.
							const ended = snapshot.journal.flatMap((entry) => (entry.kind === "tool" && entry.phase === "outcome" ? [entry.effect.split(".").at(-1)] : []));
							expect(ran.filter((id) => ended.includes(id)), where).toEqual([]);
						}
					}),
					{ numRuns: NUM_RUNS, seed: SEED },
				);
			}, Math.max(120_000, NUM_RUNS * 1_000));
		}

		it("restores, from what a slow store holds as any tool starts, a run that answers that call without running it again", async () => {
			console.log(`property seed (store at each tool, ${interpreter}): ${SEED}  (PROPERTY_SEED=${SEED} to replay)`);
			const delaysArb = fc.array(fc.constantFrom(0, 0, 1, 2, 4), { minLength: 1, maxLength: 8 });
			const thenArb = fc.constantFrom<Then>(...THENS);
			await fc.assert(
				fc.asyncProperty(scenarioArb, delaysArb, thenArb, async (scenario, delays, then) => {
					for (const view of await viewsAtEachTool(scenario, interpreter, delays, then)) {
						const where = `as call ${view.toolCallId} started`;
						// Nothing stored: a crash then would leave no trace of the run whose tool ran.
						expect(view.stored, where).toBeDefined();
						const ran: string[] = [];
						const messages = await finishedFrom(view.stored as AgentSnapshot, scenario, interpreter, false, ran);
						expectValidTranscript(messages);
						// It had started: not replay-safe, it is answered as interrupted, never run again.
						expect(ran, `${where}: run again after the restore`).not.toContain(view.toolCallId);
						const calls = messages.flatMap((message) => (message.role === "assistant" ? message.content.flatMap((block) => (block.type === "toolCall" ? [block.id] : [])) : []));
						expect(calls, `${where}: the restored run does not have the call`).toContain(view.toolCallId);
						const users = messages.filter((message) => message.role === "user").map((message) => JSON.stringify(message.content));
						for (const seen of view.users) expect(users, `${where}: a user message lost`).toContain(seen);
					}
				}),
				{ numRuns: NUM_RUNS, seed: SEED },
			);
		}, Math.max(120_000, NUM_RUNS * 1_000));

		it("survives a store that fails random writes: the session goes on, every failure is reported, nothing runs twice, and what the store kept restores", async () => {
			console.log(`property seed (failing store, ${interpreter}): ${SEED}  (PROPERTY_SEED=${SEED} to replay)`);
			const planArb = fc.array(fc.record({ outcome: fc.constantFrom<WritePlan["outcome"]>("ok", "ok", "ok", "reject", "throw"), ms: fc.constantFrom<WritePlan["ms"]>(0, 0, 1) }), { minLength: 1, maxLength: 8 });
			await fc.assert(
				fc.asyncProperty(scenarioArb, planArb, fc.constantFrom<Then>(...THENS), async (scenario, plan, then) => {
					const session = await onFailingStore(scenario, interpreter, plan, then);
					expect(session.escaped, "reached the process's last-resort handlers").toEqual([]);
					expectValidTranscript(session.agent.state.messages);
					expect(new Set(session.ran).size, "a tool ran twice").toBe(session.ran.length);
					// Each failed write is a problem of its own, and the agent said so where it was asked.
					expect(session.agent.storeProblems).toHaveLength(session.failures);
					if (session.failures > 0) expect(session.reported > 0 || session.last instanceof Error, "failures not reported by saved()").toBe(true);
					else expect(session.last).toBeUndefined();
					// A crash now leaves what the store holds: it restores, and nothing runs again.
					if (session.stored) await expectRestoresWithoutRerun(session.stored, scenario, interpreter, session.ran);
				}),
				{ numRuns: NUM_RUNS, seed: SEED },
			);
		}, Math.max(120_000, NUM_RUNS * 1_000));

		it("ends a run on abort() whatever single write of the store never answers, and what the store kept restores", async () => {
			console.log(`property seed (hanging store, ${interpreter}): ${SEED}  (PROPERTY_SEED=${SEED} to replay)`);
			await fc.assert(
				fc.asyncProperty(scenarioArb, fc.nat(14), async (scenario, hangAt) => {
					const session = await onHangingStore(scenario, interpreter, hangAt);
					expect(session.ended, "the run did not end after abort()").toBe(true);
					expect(session.decided, "an approve() or reject() never settled").toBe(true);
					expect(session.agent.state.isStreaming).toBe(false);
					expect(session.escaped, "reached the process's last-resort handlers").toEqual([]);
					expectValidTranscript(session.agent.state.messages);
					expect(new Set(session.ran).size, "a tool ran twice").toBe(session.ran.length);
					if (session.stored) await expectRestoresWithoutRerun(session.stored, scenario, interpreter, session.ran);
				}),
				{ numRuns: NUM_RUNS, seed: SEED },
			);
		}, Math.max(120_000, NUM_RUNS * 1_000));
	});
}
