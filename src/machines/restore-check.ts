/**
 * What a stored run's position in the chart needs from the rest of its snapshot, in any snapshot
 * the chart gives (also one taken inside a listener): a state value that is in a state (a compound
 * state is in one of its children); the actors its states wait for (every state the chart is in
 * has started what it invokes: a model call, a compaction, a poll; while tool calls execute,
 * their batch has its actor); a batch marked as started while a call of it runs; and the marker
 * each actor in flight is stored as. (A batch marked as started can be gone in other states: it
 * is stopped as the run moves on.) A snapshot without one was edited or damaged; restored, its
 * run would wait for ever for an event nothing sends.
 */
import { shown } from "../agent-input.js";
import { turnEffectPrefix } from "../durable/journal.js";
import { isRestoredCompactionInput } from "../actors/compaction-protocol.js";
import { isRestoredStreamInput } from "../actors/stream-protocol.js";
import { isRestoredToolBatchInput } from "../actors/tool-batch-protocol.js";
import { TOOL_BATCH_ID } from "./actions/tools.js";
import { isCallKeyOf } from "./run-helpers.js";
import { agentMachine } from "./agent-machine.js";
import { ownValue } from "../util/own-keys.js";

/** The logic the batch of tool calls is spawned with (actions/tools.ts). */
const TOOL_BATCH_SRC = "toolBatchActor";

interface StoredMachine {
	status: string;
	value: unknown;
	children?: Record<string, unknown> | undefined;
	context: { run?: { id: string; turn: number; attempt?: number; batch?: { actorStarted?: boolean; effectPrefix?: string; calls: readonly { key: string; status: string; toolCall: { id: string } }[] } | undefined } | undefined };
}

interface NodeLike {
	path: readonly string[];
	type: string;
	invoke: readonly { id: string; src: unknown }[];
	states: Record<string, NodeLike>;
}

/**
 * Collects into `into` the chart's states `value` is in, outermost first, and returns where it
 * stops short of a state the chart can rest in (a compound state in none of its children, or in
 * two, or in a name every object has), or undefined. Other names the chart does not have are
 * skipped: the restore refuses those itself.
 */
function statesIn(node: NodeLike, value: unknown, into: NodeLike[]): string | undefined {
	const named = typeof value === "string" ? { [value]: undefined } : (value as Record<string, unknown>);
	const keys = Object.keys(named);
	let unfinished = (node.type === "parallel" ? keys.length !== Object.keys(node.states).length : keys.length !== 1) ? node.path.join(".") || "the chart" : undefined;
	for (const key of keys) {
		// A name every object has ("constructor") is no state, though XState's lookup finds one: its
		// restore then takes the value, and the run waits for ever. Other names it refuses itself.
		if (!Object.hasOwn(node.states, key)) {
			if (key in node.states) unfinished ??= node.path.join(".") || "the chart";
			continue;
		}
		const child = node.states[key] as NodeLike;
		into.push(child);
		const inner = named[key];
		if (inner === undefined) {
			if (child.type === "compound" || child.type === "parallel") unfinished ??= child.path.join(".");
		} else if (Object.keys(child.states).length > 0) {
			const below = statesIn(child, inner, into);
			unfinished ??= below;
		}
	}
	return unfinished;
}

/** Whether the stored child runs `src` (a child of another logic is skipped by the restore) and was not stopped (a stopped child is taken out of the chart's snapshot). */
function runs(child: unknown, src: string): boolean {
	const stored = child as { src?: unknown; snapshot?: { status?: unknown } } | undefined;
	return stored?.src === src && stored.snapshot?.status !== "stopped";
}

/**
 * The logics persisted as a marker of work in flight (their input holds the run's functions), and
 * whether a stored input is that marker (each defined beside the actor's protocol).
 */
const MARKED: Record<string, (input: unknown, run: { attempt?: number } | undefined) => boolean> = {
	streamActor: (input, run) => isRestoredStreamInput(input, run?.attempt),
	toolBatchActor: (input) => isRestoredToolBatchInput(input),
	compactionActor: (input) => isRestoredCompactionInput(input),
};

/** The logics the chart makes its children of, by the names its snapshots store (`src`). */
const CHART_ACTORS = agentMachine.implementations.actors;

/**
 * Throws when an active stored machine's run cannot go on: its state value in no state, an actor
 * its states run missing or not stored as the chart stores it, a batch of calls made in another
 * turn than the run's counters say or a call keyed otherwise than by its id (the journal would
 * not be found under either), or a call running in a batch not marked as started. Names the
 * field, actor or call, and the state.
 *
 * @example
 * assertRestorableRun(snapshot.machine); // throws 'agentchart: the snapshot's machine.children has no running "stream", ...'
 */
export function assertRestorableRun(machine: StoredMachine): void {
	if (machine.status !== "active") return;
	const states: NodeLike[] = [];
	// A machine in none of a compound state's children takes no event: its run would wait for ever.
	const unfinished = statesIn(agentMachine.root as unknown as NodeLike, machine.value, states);
	if (unfinished) throw new Error(`agentchart: the snapshot's machine.value (${JSON.stringify(machine.value)}) is in no state of ${unfinished} (the chart's own snapshots are always in one): it was edited or damaged`);
	const children = machine.children ?? {};
	for (const state of states) {
		for (const { id, src } of state.invoke) {
			if (typeof src === "string" && !runs(children[id], src)) throw new Error(`agentchart: the snapshot's machine.children has no running "${id}", which its state ${state.path.join(".")} runs (the chart's own snapshots always have it): it was edited or damaged`);
		}
	}
	const run = machine.context.run;
	const batch = run?.batch;
	// A call's journal entries are looked up under an id made from the run's counters: a batch made under others would not find them, and a call that ran would run again.
	if (run && batch?.effectPrefix !== undefined && batch.effectPrefix !== turnEffectPrefix(run.id, run.turn)) {
		throw new Error(`agentchart: the snapshot's machine.context.run.batch.effectPrefix (${shown(batch.effectPrefix)}) is not the one machine.context.run.id and .turn make (${shown(turnEffectPrefix(run.id, run.turn))}; the chart's own snapshots always agree): it was edited or damaged`);
	}
	// A call's key, the last part of its id, is its tool call's id (`id#2` for the second call with one id: `callKeyFor`).
	for (const [index, call] of (batch?.calls ?? []).entries()) {
		if (!isCallKeyOf(call.key, call.toolCall.id)) {
			throw new Error(`agentchart: the snapshot's machine.context.run.batch.calls[${index}].key (${shown(call.key)}) is not made from its tool call's id (${shown(call.toolCall.id)}; the chart's own snapshots always make it so): it was edited or damaged`);
		}
	}
	// A restore sends the calls in flight to a new batch actor only from a batch marked as started.
	// (A call being prepared may be the chart's own work, with no actor: it is prepared again.)
	const inFlight = batch?.calls.find((call) => call.status === "running");
	if (batch && inFlight && batch.actorStarted !== true) {
		throw new Error(`agentchart: the snapshot's machine.context.run.batch.actorStarted must be true, as its call "${inFlight.key}" is ${inFlight.status} (the chart's own snapshots always say so), not ${String(batch.actorStarted)}: it was edited or damaged`);
	}
	// While tools execute the chart waits for the batch actor's reports (elsewhere a batch that ran may be gone already).
	const executing = states.some((state) => state.path.at(-1) === "tool-executing");
	if (executing && batch?.actorStarted && !runs(children[TOOL_BATCH_ID], TOOL_BATCH_SRC)) {
		throw new Error(`agentchart: the snapshot's machine.children has no running "${TOOL_BATCH_ID}", which runs the batch of tool calls its state running.tool-executing waits for (the chart's own snapshots always have it): it was edited or damaged`);
	}
	for (const [id, child] of Object.entries(children)) {
		const { src, snapshot } = child as { src: string; snapshot: { status: string; input?: unknown } };
		// XState looks a child's logic up by its name as any property is read: a name every object has
		// ("constructor", "toString") restores a child of that function, and every later snapshot throws.
		if (typeof src === "string" && !Object.hasOwn(CHART_ACTORS, src) && src in CHART_ACTORS) {
			throw new Error(`agentchart: the snapshot's machine.children["${id}"].src (${shown(src)}) names none of the chart's actors (${Object.keys(CHART_ACTORS).join(", ")}): it was edited or damaged`);
		}
		// A stopped child is not restored.
		const marked = snapshot.status === "stopped" ? undefined : ownValue(MARKED, src);
		const input = snapshot.input;
		if (marked && !marked(input, run)) {
			throw new Error(`agentchart: the snapshot's machine.children["${id}"].snapshot.input is not what the chart stores for a ${src} in flight (${shown(input)}): it was edited or damaged`);
		}
	}
}
