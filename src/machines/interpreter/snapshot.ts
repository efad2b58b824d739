/**
 * The interpreter's snapshots, shaped field for field as XState's machine snapshots (so an
 * observer, `waitFor`, the inspector, or XState's own error path that copies a snapshot with a
 * spread, sees the same thing), and their persisted form, which is XState's: a snapshot
 * persisted on one interpreter restores on the other.
 */
import { type AnyActorRef, type AnyStateMachine, type EventObject, type Snapshot, type StateValue, matchesState } from "xstate";
import { ACTIVE_NODES } from "../xstate-internals.js";
import type { ChartNode, StateNodeLike } from "./compile.js";
import { selectTransition } from "./select.js";

/** A persisted child, as XState writes it. */
export interface PersistedChild {
	snapshot: unknown;
	src: unknown;
	systemId: string | undefined;
	syncSnapshot: boolean | undefined;
}

/** A persisted chart snapshot, in XState's format. */
export interface PersistedChartSnapshot {
	status: "active" | "done" | "error" | "stopped";
	output: unknown;
	error: unknown;
	value: StateValue;
	historyValue: Record<string, unknown>;
	context: unknown;
	children: Record<string, PersistedChild>;
}

/** Charts without history states have none; one object, never written. */
const NO_HISTORY: Record<string, never> = Object.freeze({}) as Record<string, never>;
/** Charts with tags are refused: every snapshot's tag set is empty. */
const NO_TAGS: ReadonlySet<string> = Object.freeze(new Set<string>());

// XState gives every snapshot these functions as its own properties (so a spread keeps them);
// so does the interpreter, with one function each, shared.
function matches(this: { value: StateValue }, value: StateValue): boolean {
	return matchesState(value, this.value);
}
function hasTag(this: { tags: ReadonlySet<string> }, tag: string): boolean {
	return this.tags.has(tag);
}
function can(this: ChartSnapshot<unknown>, event: EventObject): boolean {
	const transition = selectTransition(this.leaf, this.context, event);
	return transition !== undefined && (transition.target !== undefined || transition.actions.length > 0);
}
function getMeta(this: ChartSnapshot<unknown>): Record<string, unknown> {
	const meta: Record<string, unknown> = {};
	for (const node of this.leaf.nodes) if (node.meta !== undefined) meta[node.id] = node.meta;
	return meta;
}
function toJSON(this: ChartSnapshot<unknown>): object {
	return { status: this.status, output: this.output, error: this.error, context: this.context, value: this.value, children: this.children, historyValue: this.historyValue, tags: [] };
}

/**
 * A snapshot of a chart run by the interpreter: what `actor.getSnapshot()` returns, with
 * XState's fields (`status`, `value`, `context`, `children`, `output`, `error`, `matches()`,
 * `can()`, `hasTag()`, `getMeta()`, `machine`, `_nodes`) and the active leaf (`leaf`, ours).
 *
 * @example
 * const snapshot = actor.getSnapshot();
 * if (snapshot.matches({ running: "streaming" })) console.log(snapshot.context.run?.turn);
 */
export class ChartSnapshot<C, O = unknown> {
	readonly machine: AnyStateMachine;
	/**
	 * Written, never read here: what tools made for XState's snapshots read of the active nodes
	 * (`xstate/graph`, the inspector through `activeNodeIds` in `xstate-internals.ts`).
	 */
	readonly [ACTIVE_NODES]: readonly StateNodeLike[];
	readonly value: StateValue;
	readonly tags: Set<string> = NO_TAGS as Set<string>;
	readonly historyValue: Record<string, never> = NO_HISTORY;
	readonly matches = matches;
	readonly hasTag = hasTag;
	readonly can = can;
	readonly getMeta = getMeta;
	readonly toJSON = toJSON;

	constructor(
		readonly status: "active" | "done" | "error" | "stopped",
		readonly context: C,
		readonly children: Readonly<Record<string, AnyActorRef | undefined>>,
		/** The active atomic state. */
		readonly leaf: ChartNode<C>,
		readonly output: O | undefined,
		readonly error: unknown,
		machine: AnyStateMachine,
		/**
		 * The actor's emitter (its scope's `emit`), for what emits beside the chart (token deltas):
		 * see `emitters.ts`. Not part of the persisted snapshot.
		 */
		readonly emitter: (event: EventObject) => void,
	) {
		this.machine = machine;
		this[ACTIVE_NODES] = leaf.nodes;
		this.value = leaf.value;
	}
}

/** The snapshot type agentchart documents: XState's `Snapshot` with the machine's fields. */
export type ChartSnapshotOf<C, O = unknown> = Snapshot<O> & ChartSnapshot<C, O>;

/** An actor ref in a context, as XState persists it. */
interface PersistedRef {
	xstate$$type: 1;
	id: string;
}

function isActorRef(value: object): value is AnyActorRef {
	return "sessionId" in value && "send" in value && "ref" in value;
}

/**
 * The context with every actor ref in it replaced by XState's marker (`{ xstate$$type: 1, id }`),
 * copying only the objects on the way to a ref.
 *
 * @example
 * persistContext({ child: childRef }); // { child: { xstate$$type: 1, id: "child" } }
 */
export function persistContext(part: unknown): unknown {
	if (!part || typeof part !== "object") return part;
	let copy: Record<string, unknown> | unknown[] | undefined;
	const record = part as Record<string, unknown>;
	for (const key in record) {
		const value = record[key];
		if (!value || typeof value !== "object") continue;
		const persisted: unknown = isActorRef(value) ? ({ xstate$$type: 1, id: value.id } satisfies PersistedRef) : persistContext(value);
		if (persisted === value) continue;
		copy ??= Array.isArray(part) ? part.slice() : { ...record };
		(copy as Record<string, unknown>)[key] = persisted;
	}
	return copy ?? part;
}

/**
 * Puts the restored children back where the persisted context has their markers (in place, as
 * XState does).
 *
 * @example
 * reviveContext(persisted.context, children);
 */
export function reviveContext(part: unknown, children: Readonly<Record<string, AnyActorRef | undefined>>, seen = new Set<unknown>()): void {
	if (!part || typeof part !== "object" || seen.has(part)) return;
	seen.add(part);
	const record = part as Record<string, unknown>;
	for (const key in record) {
		const value = record[key];
		if (!value || typeof value !== "object") continue;
		if ((value as Partial<PersistedRef>).xstate$$type === 1) {
			record[key] = children[(value as PersistedRef).id];
			continue;
		}
		reviveContext(value, children, seen);
	}
}

/**
 * A snapshot in XState's persisted format.
 *
 * @example
 * JSON.stringify(persistSnapshot(actor.getSnapshot()));
 */
export function persistSnapshot<C>(snapshot: ChartSnapshot<C>, options?: unknown, persist: (context: C) => unknown = persistContext): PersistedChartSnapshot {
	const children: Record<string, PersistedChild> = {};
	// XState persists an invoked child with `syncSnapshot: false`, a spawned one without it.
	const invoked = new Set<string>();
	for (let node: ChartNode<C> | undefined = snapshot.leaf; node; node = node.parent) for (const invoke of node.invoke) invoked.add(invoke.id);
	for (const id in snapshot.children) {
		const child = snapshot.children[id];
		if (!child) continue;
		children[id] = {
			snapshot: (child.getPersistedSnapshot as (options?: unknown) => unknown).call(child, options),
			src: child.src,
			systemId: (child as { systemId?: string }).systemId,
			syncSnapshot: invoked.has(id) ? false : undefined,
		};
	}
	return {
		status: snapshot.status,
		output: snapshot.output,
		error: snapshot.error,
		value: snapshot.value,
		historyValue: {},
		context: persist(snapshot.context),
		children,
	};
}

/**
 * The active leaf a persisted state value names (a compound state's initial descendants when it
 * stops short of a leaf).
 *
 * @example
 * leafOf(chart.root, { running: "streaming" });
 */
export function leafOf<C>(root: ChartNode<C>, nodes: ReadonlyMap<string, ChartNode<C>>, value: StateValue): ChartNode<C> {
	let node = root;
	let rest: StateValue | undefined = value;
	while (rest !== undefined) {
		const key: string | undefined = typeof rest === "string" ? rest : Object.keys(rest)[0];
		if (key === undefined) break;
		const childDef = node.def.states[key];
		const child = childDef ? nodes.get(childDef.id) : undefined;
		// XState's own words for it: a restore fails the same on either interpreter.
		if (!child) throw new Error(`${typeof rest === "string" ? "State" : "Child state"} '${key}' does not exist on '${node.def.id}'`);
		node = child;
		rest = typeof rest === "string" ? undefined : (rest as Record<string, StateValue | undefined>)[key];
	}
	while (node.initial) node = node.initial;
	return node;
}
