/**
 * The abstract graph of the agent machine (`getAdjacencyMap` over the alphabet of
 * abstract-model.ts), the definition transitions each graph edge takes, and a small set of
 * shortest paths that together take every reachable definition transition.
 */
// @ts-nocheck

import { createEmptyActor, type AnyMachineSnapshot } from "xstate";
import { getAdjacencyMap } from "xstate/graph";
import { agentMachine } from "../../src/machines/agent-machine.js";
import type { AgentMachineEvent } from "../../src/machines/types.js";
import type { ToolExecutionMode } from "../../src/types/agent.js";
import { abstractInput, alphabet, eventLabel, type ModelVariant, project } from "./abstract-model.js";
import { definedTransitions, type DefinedTransition } from "./definition.js";

export interface PathStep {
	event: AgentMachineEvent;
	from: AnyMachineSnapshot;
	to: AnyMachineSnapshot;
	/** Definition transitions (keys) this step takes in the model. */
	takes: string[];
}

export interface ModelPath {
	mode: ToolExecutionMode;
	/** True when the Agent has a beforeToolCall hook. */
	hook: boolean;
	/** Run through pi's loop API rather than the Agent. */
	loop: boolean;
	initial: AnyMachineSnapshot;
	steps: PathStep[];
}

export interface ModeGraph {
	mode: ToolExecutionMode;
	hook: boolean;
	loop: boolean;
	states: number;
	edges: number;
	/** Definition transitions (keys) some graph edge takes. */
	reachable: Set<string>;
	paths: ModelPath[];
}

export const definitions: Map<object, DefinedTransition> = definedTransitions(agentMachine);

/** A mock actor scope (as xstate/graph's) whose system reports microsteps to `onTransitions`. */
function recordingScope(onTransitions: (transitions: readonly object[]) => void) {
	const empty = createEmptyActor();
	empty.system.inspect({
		next: (event) => {
			if (event.type === "@xstate.microstep") onTransitions((event as unknown as { _transitions: object[] })._transitions);
		},
	});
	return {
		self: empty,
		logger: () => {},
		id: "",
		sessionId: "model",
		defer: () => {},
		system: empty.system,
		stopChild: () => {},
		emit: () => {},
		actionExecutor: () => {},
	};
}

const serializeEvent = (event: AgentMachineEvent) => eventLabel(event);

/** Builds the graph of one mode and picks the paths. */
export function buildModeGraph(variant: ModelVariant): ModeGraph {
	const { mode, hook } = variant;
	const loop = variant.loop === true;
	const input = abstractInput(variant);
	const map = getAdjacencyMap(agentMachine as never, {
		input,
		events: alphabet as never,
		// `delivered` has no transition of its own (XState's can() says no): the decision state waiting
		// for it reads it in its eventless transitions (eventsDelivered). The alphabet offers it only then.
		filterEvents: (snapshot: AnyMachineSnapshot, event: AgentMachineEvent) => event.type === "delivered" || snapshot.can(event as never),
		serializeState: ((snapshot: AnyMachineSnapshot) => project(snapshot)) as never,
		serializeEvent: serializeEvent as never,
	} as never) as unknown as Record<string, { state: AnyMachineSnapshot; transitions: Record<string, { event: AgentMachineEvent; state: AnyMachineSnapshot }> }>;

	let taken: string[] = [];
	const scope = recordingScope((transitions) => {
		for (const t of transitions) {
			const definition = definitions.get(t);
			if (definition) taken.push(definition.key);
		}
	});
	const initial = agentMachine.getInitialSnapshot(scope as never, input) as AnyMachineSnapshot;
	const takesOf = (from: AnyMachineSnapshot, event: AgentMachineEvent): string[] => {
		taken = [];
		agentMachine.transition(from as never, event as never, scope as never);
		return [...new Set(taken)];
	};

	// Breadth-first: the shortest path to every state.
	const startKey = project(initial);
	const parent = new Map<string, { key: string; event: AgentMachineEvent } | null>([[startKey, null]]);
	const order: string[] = [startKey];
	for (let i = 0; i < order.length; i++) {
		const key = order[i] as string;
		for (const { event, state } of Object.values(map[key]?.transitions ?? {})) {
			const next = project(state);
			if (parent.has(next)) continue;
			parent.set(next, { key, event });
			order.push(next);
		}
	}
	const pathTo = (key: string): { key: string; event: AgentMachineEvent }[] => {
		const hops: { key: string; event: AgentMachineEvent }[] = [];
		for (let link = parent.get(key); link; link = parent.get(link.key)) hops.unshift(link);
		return hops;
	};

	// Every edge with the transitions it takes, shallow edges first.
	const depth = new Map(order.map((key, index) => [key, pathTo(key).length + index * 0]));
	const edges: { from: string; event: AgentMachineEvent; takes: string[] }[] = [];
	const reachable = new Set<string>();
	for (const key of order) {
		const node = map[key];
		if (!node) continue;
		for (const { event } of Object.values(node.transitions)) {
			const takes = takesOf(node.state, event);
			for (const t of takes) reachable.add(t);
			edges.push({ from: key, event, takes });
		}
	}
	edges.sort((a, b) => (depth.get(a.from) ?? 0) - (depth.get(b.from) ?? 0));

	// Greedy cover: the shortest path through an edge that takes a transition not taken yet.
	const covered = new Set<string>();
	const paths: ModelPath[] = [];
	for (const edge of edges) {
		if (edge.takes.every((t) => covered.has(t))) continue;
		const hops = [...pathTo(edge.from), { key: edge.from, event: edge.event }];
		const steps: PathStep[] = [];
		let from = initial;
		for (const hop of hops) {
			const takes = takesOf(from, hop.event);
			const to = agentMachine.transition(from as never, hop.event as never, recordingScope(() => {}) as never) as AnyMachineSnapshot;
			steps.push({ event: hop.event, from, to, takes });
			for (const t of takes) covered.add(t);
			from = to;
		}
		paths.push({ mode, hook, loop, initial, steps });
	}
	let edgeCount = 0;
	for (const key of Object.keys(map)) edgeCount += Object.keys(map[key]?.transitions ?? {}).length;
	return { mode, hook, loop, states: Object.keys(map).length, edges: edgeCount, reachable, paths };
}

/** One line per step, for failure messages. */
export function describePath(path: ModelPath): string {
	return `[${path.loop ? "loop API, " : ""}${path.mode}${path.hook ? "" : ", no hook"}] ${path.steps.map((step) => eventLabel(step.event)).join(" → ")}`;
}
