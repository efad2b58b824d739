/**
 * The walk's plan: `xstate/graph`'s adjacency map of the agent chart over a configuration's
 * alphabet, the definition transitions each edge takes, and a small set of shortest paths that
 * together take every transition the configuration can take (and, optionally, every restore
 * edge). A path that a real run leaves (your code answered otherwise than planned) is planned
 * again from where the run is.
 */
import { type AnyMachineSnapshot, createEmptyActor } from "xstate";
import { getAdjacencyMap } from "xstate/graph";
import { agentMachine } from "../../machines/agent-machine.js";
import type { AgentMachineEvent } from "../../machines/types.js";
import { alphabetOf, isRestore } from "./alphabet.js";
import type { ModelConfig } from "./config.js";
import { type DefinedTransition, definedTransitions } from "./definition.js";
import { awaitsDelivery, eventLabel, project } from "./projection.js";
import { journaledCallsOfStreamingReply } from "./journaled-calls.js";
import { closedAfterAbort, replayAsksHookAgain, restoreEvents } from "./restore-events.js";
import { microstepTransitions } from "../../machines/xstate-internals.js";

/** Every transition of the agent chart's definition. */
export const definitions: Map<object, DefinedTransition> = definedTransitions(agentMachine);

/** One step of a path: the event, the abstract states around it, the definition transitions it takes. */
export interface WalkStep {
	event: AgentMachineEvent;
	label: string;
	from: AnyMachineSnapshot;
	fromKey: string;
	to: AnyMachineSnapshot;
	toKey: string;
	takes: readonly string[];
}

/** A path of the walk: steps from the initial state, planned to take the edge `goal`. */
export interface WalkPath {
	steps: WalkStep[];
	goal: { fromKey: string; label: string };
}

interface Edge {
	event: AgentMachineEvent;
	label: string;
	toKey: string;
	takes: readonly string[];
}

interface GraphNode {
	state: AnyMachineSnapshot;
	depth: number;
	edges: Map<string, Edge>;
}

/** The planned walk of one configuration. */
export interface WalkPlan {
	config: ModelConfig;
	initial: AnyMachineSnapshot;
	initialKey: string;
	/** Abstract states and edges. */
	states: number;
	edges: number;
	/** Definition transitions (keys) some edge takes, restores left out: what the configuration can take where the walk sees it. */
	reachable: Set<string>;
	paths: WalkPath[];
	/** With restores: a path to a restore from every kind of state a run can be stored in (see `stateShape`). */
	restorePaths: WalkPath[];
	/** The kinds of state the model can restore from (see {@link restoreKind}). */
	restoreKinds: ReadonlySet<string>;
	/** Abstract states by key. */
	nodes: ReadonlyMap<string, GraphNode>;
	/**
	 * The shortest steps from a state to taking the goal edge (undefined: not reachable from there),
	 * avoiding `refused` edges (`fromKey + "\n" + label`: steps your code answered otherwise).
	 */
	replan(fromKey: string, goal: WalkPath["goal"], refused?: ReadonlySet<string>): WalkStep[] | undefined;
	/** The path whose step labels are these (undefined when no such path exists). */
	pathOf(labels: readonly string[]): WalkPath | undefined;
	/** The step with this label from this state (undefined when the model has none). */
	stepFrom(key: string, label: string): WalkStep | undefined;
	/** An event with this label, from any state (a reply's label says all the puppet stream needs). */
	eventOf(label: string): AgentMachineEvent | undefined;
}

/**
 * A mock actor scope (as xstate/graph's) whose system reports microsteps to `onTransitions`, and
 * that counts the AgentEvents the chart emits (what its listeners are given).
 */
function recordingScope(onTransitions: (transitions: readonly object[]) => void) {
	const empty = createEmptyActor();
	empty.system.inspect({
		next: (event) => {
			if (event.type === "@xstate.microstep") onTransitions(microstepTransitions(event) as object[]);
		},
	});
	const scope = {
		self: empty,
		logger: () => {},
		id: "",
		sessionId: "walk",
		defer: () => {},
		system: empty.system,
		stopChild: () => {},
		emit: () => {},
		/** AgentEvents emitted so far (not the chart's own `agentchart.*` ones). */
		emitted: 0,
		actionExecutor: (action: { type: string; params?: { event?: { type?: string } } }) => {
			if (action.type === "xstate.emit" && !String(action.params?.event?.type).startsWith("agentchart.")) scope.emitted++;
		},
	};
	return scope;
}

/**
 * Events offered whatever XState's `can()` says: `delivered` (read by the eventless transitions of
 * the state waiting for it) and `tools.interrupted` (streaming takes it with a transition that does
 * nothing, which `can()` does not count).
 */
const ALWAYS_OFFERED = new Set(["delivered", "tools.interrupted"]);

/** Runs `make` with the clock past every approval deadline: `approval.timeout` rejects what waits. */
export function withClockPastDeadlines<T>(make: () => T): T {
	const now = Date.now;
	Date.now = () => 8.64e15;
	try {
		return make();
	} finally {
		Date.now = now;
	}
}

/**
 * The kind of state a restore starts from: where the chart is, whether it waits for delivery,
 * the run's flags and its calls' statuses (queue lengths and the transcript's tail left out).
 */
function stateShape(key: string): string {
	const state = JSON.parse(key) as { v: string; wait: boolean; run?: { ab: boolean; p: boolean; cr: string; b?: { c: string } } };
	return JSON.stringify([state.v, state.wait, state.run?.ab, state.run?.p, state.run?.cr, state.run?.b?.c]);
}

/**
 * The kind of state a restore starts from (see `stateShape`), as a report names it: the chart's
 * state, the run's flags, its calls, and whether the restore closes a streaming reply with the
 * calls it had started.
 *
 * @example
 * restoreKind(config, snapshot); // "running.streaming, reply streaming, calls: runnings settledsj (closed with its started calls)"
 */
export function restoreKind(config: ModelConfig, snapshot: AnyMachineSnapshot): string {
	const [value, wait, aborted, partial, compaction, calls] = JSON.parse(stateShape(project(config, snapshot))) as [string, boolean, boolean?, boolean?, string?, string?];
	const name = value.startsWith("{") ? stateName(JSON.parse(value) as StateValue) : value;
	const notes = [name, wait ? "waiting for delivery" : "", aborted ? "aborted" : "", partial ? "reply streaming" : "", compaction ? `compaction (${compaction})` : "", calls ? `calls: ${calls}` : ""];
	const closed = journaledCallsOfStreamingReply(snapshot).length > 0 ? ` ${CLOSED_WITH_STARTED_CALLS}` : "";
	return `${notes.filter(Boolean).join(", ")}${closed}`;
}

/** How a restore kind says that the restore closes a streaming reply with the calls it had started. */
export const CLOSED_WITH_STARTED_CALLS = "(closed with its started calls)";

type StateValue = string | { [key: string]: StateValue };

function stateName(value: StateValue): string {
	if (typeof value === "string") return value;
	return Object.entries(value)
		.map(([key, child]) => `${key}.${stateName(child)}`)
		.join(" + ");
}

/**
 * Plans the walk of a configuration. `goals`: the definition transitions the paths must take
 * together, and with `"restores"` a restore from every kind of state a run can be stored in too
 * (see `stateShape`).
 */
export function planWalk(config: ModelConfig, goals: "transitions" | "restores" = "transitions"): WalkPlan {
	let taken: string[] = [];
	const scope = recordingScope((transitions) => {
		for (const t of transitions) {
			const definition = definitions.get(t);
			if (definition) taken.push(definition.key);
		}
	});
	const keyOf = new WeakMap<object, string>();
	const serializeState = (snapshot: AnyMachineSnapshot): string => {
		const known = keyOf.get(snapshot);
		if (known !== undefined) return known;
		const key = project(config, snapshot);
		keyOf.set(snapshot, key);
		return key;
	};
	const takesOf = new Map<string, readonly string[]>();
	const step = (from: AnyMachineSnapshot, event: AgentMachineEvent): AnyMachineSnapshot => {
		if (isRestore(event)) {
			let current = from;
			const before = scope.emitted;
			for (const next of restoreEvents(from, () => scope.emitted - before)) for (const each of next(current)) current = agentMachine.transition(current as never, each as never, scope as never) as AnyMachineSnapshot;
			return current;
		}
		if (event.type === "approval.timeout") return withClockPastDeadlines(() => agentMachine.transition(from as never, event as never, scope as never) as AnyMachineSnapshot);
		if (event.type === "stream.interrupted") {
			let current = agentMachine.transition(from as never, event as never, scope as never) as AnyMachineSnapshot;
			for (const each of closedAfterAbort(from)(current)) current = agentMachine.transition(current as never, each as never, scope as never) as AnyMachineSnapshot;
			return current;
		}
		return agentMachine.transition(from as never, event as never, scope as never) as AnyMachineSnapshot;
	};
	const logic = {
		getInitialSnapshot: (_scope: unknown, input: unknown) => agentMachine.getInitialSnapshot(scope as never, input as never) as AnyMachineSnapshot,
		transition: (from: AnyMachineSnapshot, event: AgentMachineEvent) => {
			taken = [];
			const next = step(from, event);
			takesOf.set(`${serializeState(from)}\n${eventLabel(config, event)}`, [...new Set(taken)]);
			return next;
		},
	};
	const alphabet = alphabetOf(config);
	const map = getAdjacencyMap(logic as never, {
		input: config.input,
		events: alphabet as never,
		// The restore is the walk's own step.
		filterEvents: ((snapshot: AnyMachineSnapshot, event: AgentMachineEvent) => ALWAYS_OFFERED.has(event.type) || (isRestore(event) ? !replayAsksHookAgain(snapshot) : snapshot.can(event as never))) as never,
		serializeState: serializeState as never,
		serializeEvent: ((event: AgentMachineEvent) => eventLabel(config, event)) as never,
	} as never) as unknown as Record<string, { state: AnyMachineSnapshot; transitions: Record<string, { event: AgentMachineEvent; state: AnyMachineSnapshot }> }>;

	// Breadth first from the initial state: each state's depth and shortest path.
	const initial = logic.getInitialSnapshot(undefined, config.input);
	const initialKey = serializeState(initial);
	const nodes = new Map<string, GraphNode>();
	const parent = new Map<string, { key: string; label: string } | null>([[initialKey, null]]);
	const order = [initialKey];
	let edgeCount = 0;
	const reachable = new Set<string>();
	for (let i = 0; i < order.length; i++) {
		const key = order[i] as string;
		const entry = map[key];
		if (!entry) continue;
		const edges = new Map<string, Edge>();
		for (const [label, { event, state }] of Object.entries(entry.transitions)) {
			const toKey = serializeState(state);
			const takes = takesOf.get(`${key}\n${label}`) ?? [];
			// What a restore takes happens inside Agent.restore, where no run of the walk sees it.
			if (!isRestore(event)) for (const t of takes) reachable.add(t);
			edges.set(label, { event, label, toKey, takes });
			edgeCount++;
			if (!parent.has(toKey)) {
				parent.set(toKey, { key, label });
				order.push(toKey);
			}
		}
		nodes.set(key, { state: entry.state, depth: 0, edges });
	}
	const pathTo = (key: string): { key: string; label: string }[] => {
		const hops: { key: string; label: string }[] = [];
		for (let link = parent.get(key); link; link = parent.get(link.key)) hops.unshift(link);
		return hops;
	};
	for (const [key, node] of nodes) node.depth = pathTo(key).length;
	const stepsOf = (hops: readonly { key: string; label: string }[]): WalkStep[] =>
		hops.map(({ key, label }) => {
			const node = nodes.get(key) as GraphNode;
			const edge = node.edges.get(label) as Edge;
			const to = (nodes.get(edge.toKey) as GraphNode).state;
			return { event: edge.event, label, from: node.state, fromKey: key, to, toKey: edge.toKey, takes: edge.takes };
		});

	// Greedy cover, shallow edges first: the shortest path through an edge that takes something not taken yet.
	const all: { key: string; label: string; takes: readonly string[]; depth: number; restore: boolean }[] = [];
	for (const [key, node] of nodes) for (const edge of node.edges.values()) all.push({ key, label: edge.label, takes: edge.takes, depth: node.depth, restore: isRestore(edge.event) });
	all.sort((a, b) => a.depth - b.depth);
	const covered = new Set<string>();
	const paths: WalkPath[] = [];
	const pathThrough = (edge: { key: string; label: string }): WalkPath => ({ steps: stepsOf([...pathTo(edge.key), { key: edge.key, label: edge.label }]), goal: { fromKey: edge.key, label: edge.label } });
	// A restore's transitions happen inside Agent.restore, before the walk can watch the restored
	// chart: they count as taken only when a step of the walk's own takes them.
	for (const edge of all) {
		if (edge.restore || edge.takes.every((t) => covered.has(t))) continue;
		const path = pathThrough(edge);
		for (const each of path.steps) if (!isRestore(each.event)) for (const t of each.takes) covered.add(t);
		paths.push(path);
	}
	// Every call of `calls` made at least once: calls of one tool take the same transitions, so the
	// cover above runs the first and never the others (whose arguments your tool may fail on).
	if (config.samples.length > 1) {
		const calledIn = (label: string) => /^stream\.done\(tools\d+:([\d,]+)\)$/.exec(label)?.[1]?.split(",").map(Number) ?? [];
		const called = new Set(paths.flatMap((path) => path.steps.flatMap((step) => calledIn(step.label))));
		for (const edge of all) {
			const fresh = calledIn(edge.label).filter((sample) => !called.has(sample));
			if (edge.restore || fresh.length === 0) continue;
			const path = pathThrough(edge);
			for (const step of path.steps) for (const sample of calledIn(step.label)) called.add(sample);
			paths.push(path);
		}
	}
	// A restore from every kind of state a run can be stored in.
	const restoredFrom = new Set<string>();
	const restorePaths: WalkPath[] = [];
	const restoreKinds = new Set<string>();
	for (const edge of all) {
		if (!edge.restore) continue;
		const shape = stateShape(edge.key);
		if (restoredFrom.has(shape)) continue;
		restoredFrom.add(shape);
		restoreKinds.add(restoreKind(config, (nodes.get(edge.key) as GraphNode).state));
		restorePaths.push(pathThrough(edge));
	}

	const replan = (fromKey: string, goal: WalkPath["goal"], refused: ReadonlySet<string> = new Set()): WalkStep[] | undefined => {
		if (!nodes.has(fromKey)) return undefined;
		// The goal is what its edge takes: when your code refuses that edge (a hook asks approval for
		// one tool only), another edge that takes the same transitions does as well.
		const goalTakes = nodes.get(goal.fromKey)?.edges.get(goal.label)?.takes ?? [];
		const reachesGoal = (key: string, edge: Edge) => (key === goal.fromKey && edge.label === goal.label) || (goalTakes.length > 0 && goalTakes.every((t) => edge.takes.includes(t)));
		const back = new Map<string, { key: string; label: string } | null>([[fromKey, null]]);
		const queue = [fromKey];
		for (let i = 0; i < queue.length; i++) {
			const key = queue[i] as string;
			const edges = [...(nodes.get(key)?.edges.values() ?? [])].filter((edge) => !refused.has(`${key}\n${edge.label}`));
			const last = edges.find((edge) => reachesGoal(key, edge));
			if (last) {
				const hops: { key: string; label: string }[] = [];
				for (let link = back.get(key); link; link = back.get(link.key)) hops.unshift(link);
				return stepsOf([...hops, { key, label: last.label }]);
			}
			for (const edge of edges) {
				if (back.has(edge.toKey)) continue;
				back.set(edge.toKey, { key, label: edge.label });
				queue.push(edge.toKey);
			}
		}
		return undefined;
	};
	const pathOf = (labels: readonly string[]): WalkPath | undefined => {
		const hops: { key: string; label: string }[] = [];
		let key = initialKey;
		for (const label of labels) {
			const edge = nodes.get(key)?.edges.get(label);
			if (!edge) return undefined;
			hops.push({ key, label });
			key = edge.toKey;
		}
		const last = hops.at(-1);
		return last ? { steps: stepsOf(hops), goal: { fromKey: last.key, label: last.label } } : undefined;
	};
	const stepFrom = (key: string, label: string): WalkStep | undefined => (nodes.get(key)?.edges.has(label) ? stepsOf([{ key, label }])[0] : undefined);
	const byLabel = new Map<string, AgentMachineEvent>();
	for (const node of nodes.values()) for (const edge of node.edges.values()) if (!byLabel.has(edge.label)) byLabel.set(edge.label, edge.event);
	return { config, initial, initialKey, states: nodes.size, edges: edgeCount, reachable, paths: goals === "restores" ? [...paths, ...restorePaths] : paths, restorePaths, restoreKinds, nodes, replan, pathOf, stepFrom, eventOf: (label) => byLabel.get(label) };
}

/** One line per step, for reports. */
export function describeSteps(steps: readonly Pick<WalkStep, "label">[]): string {
	return steps.map((step) => step.label).join(" → ");
}

/** True when the abstract state waits for a delivery acknowledgement. */
export { awaitsDelivery };
