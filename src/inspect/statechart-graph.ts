import type { StateMachineLike, StateNodeLike, TransitionDefinitionLike } from "../types/actor-shapes.js";

/**
 * The kind of a state node, as XState names it.
 *
 * @example
 * const finals = graph.nodes.filter((node) => node.type === ("final" satisfies StatechartNodeType)).map((node) => node.id);
 */
export type StatechartNodeType = "atomic" | "compound" | "parallel" | "final" | "history";

/**
 * One state of the statechart.
 *
 * @example
 * const leaves = toStatechartGraph(agentMachine).nodes.filter((node: StatechartNode) => node.childIds.length === 0);
 */
export interface StatechartNode {
	/** Full XState id, e.g. `agent.running.streaming`. */
	id: string;
	/** Its key in the parent, e.g. `streaming`. */
	key: string;
	/** Id of the parent state; undefined for the root. */
	parentId?: string | undefined;
	type: StatechartNodeType;
	/** Id of the initial child of a compound state. */
	initialId?: string | undefined;
	description?: string | undefined;
	/** Actors invoked while in this state (`{ id, src }`). */
	invokes: { id: string; src: string }[];
	/** Ids of the child states, in definition order. */
	childIds: string[];
	/** Depth below the root (root = 0). */
	depth: number;
}

/**
 * How a transition is triggered.
 *
 * @example
 * const timers = graph.edges.filter((edge) => edge.kind === ("after" satisfies StatechartEdgeKind));
 */
export type StatechartEdgeKind = "event" | "always" | "after" | "done";

/**
 * One transition. Targetless transitions (actions only) have no `targetId`.
 *
 * @example
 * const guarded = toStatechartGraph(agentMachine).edges.filter((edge: StatechartEdge) => edge.guard !== undefined);
 * console.log(guarded.map((edge) => `${edge.sourceId} --${edge.label}--> ${edge.targetId}`));
 */
export interface StatechartEdge {
	/** Unique and stable: `<sourceId>:<eventType or "always">:<index>`. */
	id: string;
	sourceId: string;
	targetId?: string | undefined;
	/** The event type; `""` for eventless (`always`) transitions. */
	eventType: string;
	kind: StatechartEdgeKind;
	/** The guard, readable: `eventsDelivered && runAborted`. */
	guard?: string | undefined;
	/** What a diagram prints: the event type, or `[guard]` for eventless transitions. */
	label: string;
}

/**
 * The statechart as plain, JSON-serialisable data: what diagrams and the visualizer draw.
 *
 * @example
 * const graph: StatechartGraph = toStatechartGraph(agentMachine);
 * console.log(graph.rootId, graph.nodes.length, graph.edges.length);
 */
export interface StatechartGraph {
	machineId: string;
	rootId: string;
	/** Every state, parents before children. */
	nodes: StatechartNode[];
	/** Every transition, in definition order (guarded alternatives in priority order). */
	edges: StatechartEdge[];
}

/**
 * Guard references as XState stores them: a name, `{ type }`, or a combinator function.
 *
 * @example
 * const guard: GuardReference = { type: "eventsDelivered" };
 * describeGuard(guard); // "eventsDelivered"
 */
export type GuardReference = string | { type?: string } | ((...args: never[]) => unknown) | undefined | null;

/**
 * A readable form of a guard: named guards by name, `and`/`or`/`not` combinators as
 * `a && b`, `a || b`, `!a`. XState keeps the operands of its combinators on the function's
 * `guards` property, which is how this reads them without evaluating anything.
 *
 * @example
 * describeGuard("eventsDelivered"); // "eventsDelivered"
 * describeGuard(and(["eventsDelivered", not("runAborted")])); // "eventsDelivered && !runAborted"
 */
export function describeGuard(guard: GuardReference): string | undefined {
	if (guard === undefined || guard === null) return undefined;
	if (typeof guard === "string") return guard;
	if (typeof guard === "function") {
		const operands = (guard as { guards?: GuardReference[] }).guards;
		if (!Array.isArray(operands)) return guard.name || "guard";
		const parts = operands.map((operand) => {
			const text = describeGuard(operand) ?? "?";
			// Parenthesise nested combinators so precedence survives.
			return typeof operand === "function" && operand.name !== "not" && operands.length > 1 ? `(${text})` : text;
		});
		if (guard.name === "not") return `!${parts[0] ?? "?"}`;
		return parts.join(guard.name === "or" ? " || " : " && ");
	}
	return guard.type ?? "guard";
}

function kindOf(eventType: string): StatechartEdgeKind {
	if (eventType === "") return "always";
	if (eventType.startsWith("xstate.after.")) return "after";
	if (eventType.startsWith("xstate.done.")) return "done";
	return "event";
}

function srcName(src: unknown): string {
	if (typeof src === "string") return src;
	if (src && typeof src === "object" && "id" in src && typeof src.id === "string") return src.id;
	return "anonymous";
}

/**
 * Reads a machine's states and transitions from its definition, so diagrams and the
 * visualizer never drift from the code. Unlike `toDirectedGraph` from `xstate/graph`, it keeps
 * eventless (`always`) transitions, guards, and targetless transitions (as edges without a
 * target), which is most of an agent loop's control flow.
 *
 * @example
 * import { agentMachine } from "agentchart/machine";
 * const graph = toStatechartGraph(agentMachine);
 * graph.nodes.map((node) => node.id); // ["agent", "agent.idle", "agent.compacting", "agent.running", ...]
 */
export function toStatechartGraph(machine: StateMachineLike): StatechartGraph {
	const nodes: StatechartNode[] = [];
	const edges: StatechartEdge[] = [];

	const visit = (stateNode: StateNodeLike, depth: number): void => {
		const children = Object.values(stateNode.states);
		const initial = stateNode.initial?.target?.[0];
		const node: StatechartNode = {
			id: stateNode.id,
			key: stateNode.key,
			type: stateNode.type as StatechartNodeType,
			invokes: stateNode.invoke.map((invoke) => ({ id: invoke.id, src: srcName(invoke.src) })),
			childIds: children.map((child) => child.id),
			depth,
		};
		if (stateNode.parent) node.parentId = stateNode.parent.id;
		if (initial) node.initialId = initial.id;
		if (stateNode.description) node.description = stateNode.description;
		nodes.push(node);

		const addEdge = (eventType: string, transition: TransitionDefinitionLike, index: number) => {
			const kind = kindOf(eventType);
			const guard = describeGuard(transition.guard as GuardReference);
			const targets = transition.target ?? [];
			const base = `${stateNode.id}:${eventType || "always"}:${index}`;
			const label = kind === "always" ? (guard ? `[${guard}]` : "always") : eventType;
			const shared = { sourceId: stateNode.id, eventType, kind, label, ...(guard ? { guard } : {}) };
			if (targets.length === 0) {
				edges.push({ id: base, ...shared });
				return;
			}
			targets.forEach((target, targetIndex) => {
				edges.push({ id: targets.length > 1 ? `${base}.${targetIndex}` : base, targetId: target.id, ...shared });
			});
		};
		for (const [eventType, transitions] of stateNode.transitions) {
			transitions.forEach((transition, index) => addEdge(eventType, transition, index));
		}
		(stateNode.always ?? []).forEach((transition, index) => addEdge("", transition, index));

		for (const child of children) visit(child, depth + 1);
	};
	visit(machine.root, 0);
	return { machineId: machine.id, rootId: machine.root.id, nodes, edges };
}

/**
 * The ids of a state and all its ancestors, innermost last, for highlighting a snapshot
 * whose `value` is known (`{ running: "streaming" }` → `agent`, `agent.running`,
 * `agent.running.streaming`).
 *
 * @example
 * activeStateIds("agent", { running: "streaming" }); // ["agent", "agent.running", "agent.running.streaming"]
 */
export function activeStateIds(rootId: string, value: unknown): string[] {
	const ids = [rootId];
	const walk = (prefix: string, current: unknown): void => {
		if (typeof current === "string") {
			ids.push(`${prefix}.${current}`);
			return;
		}
		if (current && typeof current === "object") {
			for (const [key, child] of Object.entries(current)) {
				ids.push(`${prefix}.${key}`);
				walk(`${prefix}.${key}`, child);
			}
		}
	};
	walk(rootId, value);
	return ids;
}
