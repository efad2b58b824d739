/**
 * What a stored run's position in the chart needs from the rest of its snapshot: the actors its
 * states wait for. Every state the chart is in has started what it invokes (a model call, a
 * compaction, a poll), and while tool calls execute their batch has its actor, in any snapshot
 * the chart gives, also one taken inside a listener. (A batch marked as started can be gone in
 * other states: it is stopped as the run moves on.) A snapshot without one was edited or damaged;
 * restored, its run would wait for ever for an actor that is not there.
 */
import type { StateValue } from "xstate";
import { TOOL_BATCH_ID } from "./actions/tools.js";
import { agentMachine } from "./agent-machine.js";

/** The logic the batch of tool calls is spawned with (actions/tools.ts). */
const TOOL_BATCH_SRC = "toolBatchActor";

interface StoredMachine {
	status: string;
	value: unknown;
	children?: Record<string, unknown> | undefined;
	context: { run?: { batch?: { actorStarted?: boolean } | undefined } | undefined };
}

interface NodeLike {
	path: readonly string[];
	invoke: readonly { id: string; src: unknown }[];
	states: Record<string, NodeLike>;
}

/** The chart's states a state value is in, outermost first; names the chart does not have are skipped (the restore refuses those itself). */
function statesIn(node: NodeLike, value: StateValue, into: NodeLike[] = []): NodeLike[] {
	if (typeof value === "string") {
		const child = node.states[value];
		if (child) into.push(child);
		return into;
	}
	for (const [key, inner] of Object.entries(value)) {
		const child = node.states[key];
		if (!child) continue;
		into.push(child);
		if (inner !== undefined) statesIn(child, inner as StateValue, into);
	}
	return into;
}

/** Whether the stored child runs `src` (a child of another logic is skipped by the restore) and was not stopped (a stopped child is taken out of the chart's snapshot). */
function runs(child: unknown, src: string): boolean {
	const stored = child as { src?: unknown; snapshot?: { status?: unknown } } | undefined;
	return stored?.src === src && stored.snapshot?.status !== "stopped";
}

/**
 * Throws when an active stored machine lacks an actor its states run, naming the actor and the state.
 *
 * @example
 * assertChildrenOfState(snapshot.machine); // throws 'agentchart: the snapshot's machine.children has no running "stream", ...'
 */
export function assertChildrenOfState(machine: StoredMachine): void {
	if (machine.status !== "active") return;
	const children = machine.children ?? {};
	const states = statesIn(agentMachine.root as unknown as NodeLike, machine.value as StateValue);
	for (const state of states) {
		for (const { id, src } of state.invoke) {
			if (typeof src === "string" && !runs(children[id], src)) throw new Error(`agentchart: the snapshot's machine.children has no running "${id}", which its state ${state.path.join(".")} runs (the chart's own snapshots always have it): it was edited or damaged`);
		}
	}
	// While tools execute the chart waits for the batch actor's reports (elsewhere a batch that ran may be gone already).
	const executing = states.some((state) => state.path.at(-1) === "tool-executing");
	if (executing && machine.context.run?.batch?.actorStarted && !runs(children[TOOL_BATCH_ID], TOOL_BATCH_SRC)) {
		throw new Error(`agentchart: the snapshot's machine.children has no running "${TOOL_BATCH_ID}", which runs the batch of tool calls its state running.tool-executing waits for (the chart's own snapshots always have it): it was edited or damaged`);
	}
}
