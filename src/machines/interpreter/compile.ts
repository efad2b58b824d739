/**
 * A state machine's chart compiled for the interpreter: every state node with its guards and
 * actions turned into plain functions, every targeted transition with the states it exits and
 * enters worked out once. Compiling is where the interpreter refuses a machine outside the
 * subset it runs (see `chart-logic.ts`), with an error naming the state and the feature.
 */
import type { AnyActorLogic, AnyStateMachine, EventObject, StateValue } from "xstate";
import { type ActionForm, actionForm, guardForm } from "../xstate-internals.js";
import type { Step } from "./step.js";

/** XState's state node, as far as the interpreter reads it. */
export interface StateNodeLike {
	readonly id: string;
	readonly key: string;
	readonly type: "atomic" | "compound" | "parallel" | "final" | "history";
	readonly order: number;
	readonly parent?: StateNodeLike | undefined;
	readonly states: Record<string, StateNodeLike>;
	readonly entry: readonly unknown[];
	readonly exit: readonly unknown[];
	readonly invoke: readonly InvokeLike[];
	readonly transitions: Map<string, readonly TransitionLike[]>;
	readonly always?: readonly TransitionLike[] | undefined;
	readonly initial: { readonly target: readonly StateNodeLike[]; readonly actions: readonly unknown[] };
	readonly after: readonly unknown[];
	readonly tags: readonly string[];
	readonly output?: unknown;
	readonly meta?: unknown;
}

/** XState's invoke definition. */
export interface InvokeLike {
	readonly id: string;
	readonly src: unknown;
	readonly input?: unknown;
	readonly systemId?: string | undefined;
	readonly onSnapshot?: unknown;
}

/** XState's transition definition: kept as it is for the inspector's microstep records. */
export interface TransitionLike {
	readonly source: StateNodeLike;
	readonly target?: readonly StateNodeLike[] | undefined;
	readonly actions: readonly unknown[];
	readonly guard?: unknown;
	readonly reenter: boolean;
	readonly eventType: string;
}

/** What a guard is asked with: one object per selection of a transition, shared by its guards. */
export interface GuardArgs<C> {
	readonly context: C;
	readonly event: EventObject;
}

/** A compiled guard. */
export type Guard<C> = (args: GuardArgs<C>) => boolean;
/** A compiled action: it acts on the step in progress. */
export type Action<C> = (step: Step<C>) => void;

/** A state of the compiled chart. */
export interface ChartNode<C> {
	readonly def: StateNodeLike;
	readonly parent: ChartNode<C> | undefined;
	entry: Action<C>[];
	exit: Action<C>[];
	on: Map<string, ChartTransition<C>[]>;
	always: ChartTransition<C>[];
	/** The initial child, for a compound state. */
	initial: ChartNode<C> | undefined;
	/** The state's invoked actors. */
	readonly invoke: readonly InvokeLike[];
	/** The chart's state value while this state is the active leaf (one object, shared by every snapshot). */
	readonly value: StateValue;
	/** The active state nodes while this state is the active leaf, root first (XState's `_nodes`). */
	readonly nodes: readonly StateNodeLike[];
}

/** A compiled transition. */
export interface ChartTransition<C> {
	readonly def: TransitionLike;
	readonly guard: Guard<C> | undefined;
	/** The guard's name in XState's error message when it throws. */
	readonly guardName: string | undefined;
	readonly actions: Action<C>[];
	/** A targeted transition exits every active state below `domain`, then enters `enter`, in order, ending in `leaf`. */
	readonly target: { readonly domain: ChartNode<C>; readonly enter: readonly ChartNode<C>[]; readonly leaf: ChartNode<C> } | undefined;
}

/** A compiled chart. */
export interface Chart<C> {
	readonly machine: AnyStateMachine;
	readonly root: ChartNode<C>;
	/** Every state by id. */
	readonly nodes: ReadonlyMap<string, ChartNode<C>>;
	/** Guards `check`ed by name in `enqueueActions` bodies, compiled once each. */
	readonly checkedGuards: Map<string, Guard<C>>;
}

/**
 * The error for a machine outside the interpreter's subset.
 *
 * @example
 * throw unsupported("a parallel state", "agent.running");
 */
export function unsupported(what: string, where: string): Error {
	return new Error(`agentchart interpreter: ${what} (in '${where}') is not supported; run this chart with XState's createActor(machine)`);
}

/** How XState names an actor given inline in `invoke` (not in `setup({ actors })`). */
const INLINE_INVOKE = /^xstate\.invoke\.\d+\./;

function compileGuard<C>(machine: AnyStateMachine, guard: unknown, where: string): Guard<C> {
	if (typeof guard === "string") {
		const impl = (machine.implementations.guards as Record<string, unknown>)[guard];
		if (impl === undefined) throw new Error(`Guard '${guard}' is not implemented.'.`);
		return compileGuard(machine, impl, where);
	}
	if (typeof guard !== "function") throw unsupported("a guard with params", where);
	const form = guardForm(guard as (...args: never[]) => unknown);
	if (form.kind === "function") return form.check as unknown as Guard<C>;
	if (form.kind === "other-builtin") throw unsupported("a built-in guard other than and/or/not", where);
	// Loops, not every/some with a callback: guards run at every step, a closure per call adds up.
	const parts = form.guards.map((part) => compileGuard<C>(machine, part, where));
	if (form.kind === "and") {
		return (args) => {
			for (const part of parts) if (!part(args)) return false;
			return true;
		};
	}
	if (form.kind === "or") {
		return (args) => {
			for (const part of parts) if (part(args)) return true;
			return false;
		};
	}
	const negated = parts[0];
	if (!negated) throw unsupported("`not` without a guard", where);
	return (args) => !negated(args);
}

/** How XState names a guard in the error it throws when the guard throws. */
function guardNameOf(guard: unknown): string | undefined {
	if (typeof guard === "string") return guard;
	if (typeof guard === "object" && guard !== null) return String((guard as { type?: unknown }).type);
	return undefined;
}

function compileAction<C>(machine: AnyStateMachine, action: unknown, where: string, compileForm: (form: ActionForm, name: string) => Action<C>): Action<C> {
	if (typeof action === "object" && action !== null) throw unsupported("an action with params", where);
	const impl = typeof action === "string" ? (machine.implementations.actions as Record<string, unknown>)[action] : action;
	if (typeof impl !== "function") throw new Error(`agentchart interpreter: action '${String(action)}' is not implemented`);
	const form = actionForm(impl as (...args: never[]) => unknown);
	if (form.kind === "other-builtin") throw unsupported(`the built-in action '${form.type}' outside enqueueActions (assign and enqueueActions are supported)`, where);
	return compileForm(form, typeof action === "string" ? action : (impl as { name?: string }).name || "(anonymous)");
}

function isDescendant(node: StateNodeLike, ancestor: StateNodeLike): boolean {
	for (let parent = node.parent; parent; parent = parent.parent) if (parent === ancestor) return true;
	return false;
}

/** XState's transition domain for a single-target transition without history states. */
function domainOf(transition: TransitionLike, target: StateNodeLike): StateNodeLike | undefined {
	const source = transition.source;
	if (!transition.reenter && (target === source || isDescendant(target, source))) return source;
	for (let ancestor = target.parent; ancestor; ancestor = ancestor.parent) if (isDescendant(source, ancestor)) return ancestor;
	return undefined;
}

function stateValueOf(def: StateNodeLike): StateValue {
	if (!def.parent) return {};
	let value: StateValue = def.key;
	for (let node = def.parent; node?.parent; node = node.parent) value = { [node.key]: value };
	return value;
}

function activeNodesOf(def: StateNodeLike): StateNodeLike[] {
	const nodes: StateNodeLike[] = [];
	for (let node: StateNodeLike | undefined = def; node; node = node.parent) nodes.unshift(node);
	return nodes;
}

/**
 * Compiles `machine`, or throws {@link unsupported} for the first feature outside the subset.
 * `compileForm` turns an action's form into what the step runs (see `step.ts`).
 *
 * @example
 * const chart = compileChart(agentMachine, compileActionForm);
 */
export function compileChart<C>(machine: AnyStateMachine, compileForm: (form: ActionForm, name: string) => Action<C>): Chart<C> {
	const rootDef = machine.root as unknown as StateNodeLike;
	const nodes = new Map<string, ChartNode<C>>();
	const build = (def: StateNodeLike, parent: ChartNode<C> | undefined): void => {
		if (def.type === "parallel" || def.type === "history") throw unsupported(`a ${def.type} state`, def.id);
		if (def.after.length > 0) throw unsupported("a delayed transition (after)", def.id);
		if (def.tags.length > 0) throw unsupported("tags", def.id);
		const node: ChartNode<C> = {
			def,
			parent,
			entry: [],
			exit: [],
			on: new Map(),
			always: [],
			initial: undefined,
			invoke: def.invoke,
			value: Object.freeze(stateValueOf(def)) as StateValue,
			nodes: Object.freeze(activeNodesOf(def)),
		};
		nodes.set(def.id, node);
		for (const child of Object.values(def.states)) build(child, node);
	};
	build(rootDef, undefined);
	const nodeOf = (def: StateNodeLike): ChartNode<C> => {
		const node = nodes.get(def.id);
		if (!node) throw new Error(`agentchart interpreter: unknown state '${def.id}'`);
		return node;
	};
	const actionsOf = (list: readonly unknown[], where: string) => list.map((action) => compileAction<C>(machine, action, where, compileForm));
	const transition = (def: TransitionLike): ChartTransition<C> => {
		const where = def.source.id;
		if ((def.target?.length ?? 0) > 1) throw unsupported("a transition with several targets", where);
		const guard = def.guard === undefined ? undefined : compileGuard<C>(machine, def.guard, where);
		const guardName = guardNameOf(def.guard);
		const actions = actionsOf(def.actions, where);
		const [targetDef] = def.target ?? [];
		if (!targetDef) return { def, guard, guardName, actions, target: undefined };
		const domainDef = domainOf(def, targetDef);
		if (!domainDef) throw unsupported("a reentering transition whose source is the root", where);
		const domain = nodeOf(domainDef);
		const targetNode = nodeOf(targetDef);
		const enter: ChartNode<C>[] = [];
		// The target's ancestors below the domain, then the target itself unless the transition
		// stays in its own source without reentering it, then the target's initial descendants.
		if (targetNode !== domain) for (let node = targetNode.parent; node && node !== domain; node = node.parent) enter.unshift(node);
		if (targetDef !== def.source || def.reenter) enter.push(targetNode);
		let leaf = targetNode;
		while (leaf.initial) {
			leaf = leaf.initial;
			enter.push(leaf);
		}
		return { def, guard, guardName, actions, target: { domain, enter, leaf } };
	};
	// Initial children first: a transition's entry list follows them down to a leaf.
	for (const node of nodes.values()) {
		const [initialDef] = node.def.initial.target;
		if (node.def.type === "compound" && initialDef) node.initial = nodeOf(initialDef);
	}
	for (const node of nodes.values()) {
		const def = node.def;
		const where = def.id;
		if (def.initial.actions.length > 0) throw unsupported("initial actions", where);
		node.entry = actionsOf(def.entry, where);
		node.exit = actionsOf(def.exit, where);
		for (const invoke of def.invoke) {
			// XState names an inline actor `xstate.invoke.<index>.<state id>` and finds its logic in
			// the state's config when it starts; this interpreter looks actors up by name only.
			if (typeof invoke.src !== "string" || (INLINE_INVOKE.test(invoke.src) && !(invoke.src in machine.implementations.actors))) throw unsupported("an inline invoked actor", where);
			if (invoke.systemId !== undefined || invoke.onSnapshot !== undefined) throw unsupported("invoke with systemId or onSnapshot", where);
		}
		for (const [eventType, list] of def.transitions) {
			if (eventType.includes("*")) throw unsupported(`the wildcard event descriptor '${eventType}'`, where);
			node.on.set(eventType, list.map(transition));
		}
		node.always = (def.always ?? []).map(transition);
	}
	return { machine, root: nodeOf(rootDef), nodes, checkedGuards: new Map() };
}

/**
 * A guard as `check` in an `enqueueActions` body takes it: a name, a function, `and`/`or`/`not`.
 *
 * @example
 * guardOf(chart, "hasQueuedCall")({ context, event });
 */
export function guardOf<C>(chart: Chart<C>, guard: unknown): Guard<C> {
	if (typeof guard !== "string") return compileGuard<C>(chart.machine, guard, "enqueueActions");
	let compiled = chart.checkedGuards.get(guard);
	if (!compiled) {
		compiled = compileGuard<C>(chart.machine, guard, "enqueueActions");
		chart.checkedGuards.set(guard, compiled);
	}
	return compiled;
}

/**
 * The logic of an actor the chart names (`invoke: { src }`, `spawnChild(src)`), or logic given
 * inline to `spawnChild`.
 *
 * @example
 * const logic = actorLogicOf(chart, "streamActor");
 */
export function actorLogicOf<C>(chart: Chart<C>, src: string | AnyActorLogic): AnyActorLogic {
	if (typeof src !== "string") return src;
	const logic = (chart.machine.implementations.actors as Record<string, AnyActorLogic | undefined>)[src];
	if (!logic) throw new Error(`agentchart interpreter: actor '${src}' is not implemented`);
	return logic;
}
