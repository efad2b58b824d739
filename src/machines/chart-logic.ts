/**
 * A lean interpreter for a statechart written with XState: the same chart, guards, actions and
 * actors, run as an XState `ActorLogic` of our own. `createActor(chartLogic(machine))` is an
 * XState actor like `createActor(machine)` (mailbox, `on`, `subscribe`, `system.inspect`,
 * children that are XState actors), but a step costs what the chart's own work costs: no
 * snapshot rebuilt per `assign`, no action objects resolved per step, no state value
 * recomputed until someone reads it.
 *
 * Why not XState's interpreter: a 3-tool turn of the agent chart takes 16 events, 28
 * microsteps and 44 assigns, and XState v5 spends ~6 µs per event before any of our code runs
 * (measured then; bench/where-time-goes.ts now splits a run into its parts). The chart stays
 * the XState machine: tests walk its graph, the inspector draws it, `agentchart/machine`
 * embeds it; this module only executes it faster.
 *
 * What it runs is the subset of SCXML the agent chart uses, checked when the logic is built:
 * compound and atomic states, one final state at the top level, entry and exit actions,
 * `invoke` (with `onDone`/`onError`), event and eventless (`always`) transitions with named or
 * `and`/`or`/`not` guards, `assign` and `enqueueActions` actions (assign, emit, raise, cancel,
 * sendTo, spawnChild, stopChild). Parallel and history states, wildcard event descriptors,
 * delayed transitions and parameterised actions are refused with an error naming the state.
 * Timing follows XState's: actions run during the step, effects (emits, sends to children,
 * child starts, scheduled events) after the step, in order, once the snapshot is updated.
 */
import {
	type ActorLogic,
	type AnyActorLogic,
	type AnyActorRef,
	type AnyActorScope,
	type AnyStateMachine,
	type ContextFrom,
	type EmittedFrom,
	type EventFromLogic,
	type EventObject,
	type InputFrom,
	type OutputFrom,
	type Snapshot,
	type StateValue,
	and,
	matchesState,
	not,
	or,
} from "xstate";

import { keepShape } from "../util/keep-shape.js";
import { spawnChild, wantsInspection } from "./lean-actor.js";

type AnyActorSystem = AnyActorScope["system"];

/** XState's state node, as far as the interpreter reads it. */
interface StateNodeLike {
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
	readonly output?: unknown;
}

interface InvokeLike {
	readonly id: string;
	readonly src: unknown;
	readonly input?: unknown;
	readonly systemId?: string | undefined;
	readonly onSnapshot?: unknown;
}

/** XState's transition definition: kept as it is for the inspector's microstep records. */
interface TransitionLike {
	readonly source: StateNodeLike;
	readonly target?: readonly StateNodeLike[] | undefined;
	readonly actions: readonly unknown[];
	readonly guard?: unknown;
	readonly reenter: boolean;
	readonly eventType: string;
}

/** What a guard is asked with: one object per selection of a transition, shared by its guards. */
interface GuardArgs<C> {
	readonly context: C;
	readonly event: EventObject;
}
type Guard<C> = (args: GuardArgs<C>) => boolean;
type Action<C> = (step: Step<C>) => void;

interface Node<C> {
	readonly def: StateNodeLike;
	readonly parent: Node<C> | undefined;
	entry: Action<C>[];
	exit: Action<C>[];
	on: Map<string, Transition<C>[]>;
	always: Transition<C>[];
	/** The initial child, for a compound state. */
	initial: Node<C> | undefined;
	/** Entered directly under the root: entering it ends the machine. */
	readonly final: boolean;
	/** The state's invoked actors (XState's `invoke` getter builds its list on each read). */
	invoke: readonly InvokeLike[];
}

interface Transition<C> {
	readonly def: TransitionLike;
	readonly guard: Guard<C> | undefined;
	readonly actions: Action<C>[];
	/** Targeted transitions: every active state below `domain` is exited; then these are entered, in order. */
	readonly target: { domain: Node<C>; enter: Node<C>[]; leaf: Node<C> } | undefined;
}

interface Chart<C> {
	readonly machine: AnyStateMachine;
	readonly root: Node<C>;
}

/** The system's methods XState keeps internal but its own interpreter calls. */
interface SystemInternals {
	_sendInspectionEvent(event: Record<string, unknown>): void;
	_relay(source: AnyActorRef | undefined, target: AnyActorRef, event: EventObject): void;
}

/** How XState names an actor given inline in `invoke` (not in `setup({ actors })`). */
const INLINE_INVOKE = /^xstate\.invoke\.\d+\./;

const AND_CHECK = (and([]) as unknown as { check: unknown }).check;
const OR_CHECK = (or([]) as unknown as { check: unknown }).check;
const NOT_CHECK = (not("never") as unknown as { check: unknown }).check;

/** An actor's processing status, as XState's actors (and lean ones) keep it. */
const NOT_STARTED = 0;
const STOPPED = 2;
function processingStatus(actor: AnyActorRef): number | undefined {
	return (actor as { _processingStatus?: number })._processingStatus;
}

/**
 * A snapshot of a chart run by {@link chartLogic}: what `actor.getSnapshot()` returns. Shaped as
 * XState's machine snapshot for the fields agentchart documents (`status`, `value`, `context`,
 * `children`, `output`, `error`, `matches`); `value` is computed on first read.
 *
 * @example
 * const snapshot = actor.getSnapshot();
 * if (snapshot.matches({ running: "streaming" })) console.log(snapshot.context.run?.turn);
 */
export type ChartSnapshot<C, O = unknown> = Snapshot<O> & {
	readonly context: C;
	readonly value: StateValue;
	readonly children: Readonly<Record<string, AnyActorRef | undefined>>;
	matches(value: StateValue): boolean;
};

class ChartState<C, O = unknown> {
	#value: StateValue | undefined;
	constructor(
		readonly status: "active" | "done" | "error" | "stopped",
		readonly context: C,
		readonly children: Readonly<Record<string, AnyActorRef | undefined>>,
		/** The active atomic state (internal: read `value`). */
		readonly _leaf: Node<C>,
		readonly output: O | undefined,
		readonly error: unknown,
	) {}

	/** The active states as XState writes them: `"idle"`, `{ running: "streaming" }`, ... */
	get value(): StateValue {
		this.#value ??= stateValueOf(this._leaf);
		return this.#value;
	}

	/** The active state nodes, root first (XState's `_nodes`, read by the inspector). */
	get _nodes(): StateNodeLike[] {
		const nodes: StateNodeLike[] = [];
		for (let node: Node<C> | undefined = this._leaf; node; node = node.parent) nodes.unshift(node.def);
		return nodes;
	}

	/** True when the chart is in this state. @example snapshot.matches("idle") */
	matches(value: StateValue): boolean {
		return matchesState(value, this.value);
	}

	/** @example JSON.stringify(actor.getSnapshot()) */
	toJSON(): { status: string; value: StateValue; context: C; output: O | undefined; error: unknown } {
		return { status: this.status, value: this.value, context: this.context, output: this.output, error: this.error };
	}
}

function stateValueOf<C>(leaf: Node<C>): StateValue {
	let value: StateValue = leaf.def.key;
	for (let node = leaf.parent; node?.parent; node = node.parent) value = { [node.def.key]: value };
	return value;
}

/** One macrostep's working state: the context and children as actions change them. */
class Step<C> {
	context: C;
	children: Record<string, AnyActorRef | undefined>;
	childrenCopied = false;
	leaf: Node<C>;
	status: "active" | "done" | "error" | "stopped" = "active";
	output: unknown = undefined;
	event: EventObject;
	changed = false;
	readonly internal: EventObject[] = [];
	readonly enqueue: StepEnqueue<C>;

	constructor(
		readonly chart: Chart<C>,
		readonly scope: AnyActorScope,
		snapshot: { context: C; children: Readonly<Record<string, AnyActorRef | undefined>>; _leaf: Node<C> },
		event: EventObject,
		/** The chart's context copier ({@link ChartLogicOptions.copyContext}), if it has one. */
		readonly copyContext: ((context: C) => C) | undefined,
	) {
		this.context = snapshot.context;
		this.children = snapshot.children as Record<string, AnyActorRef | undefined>;
		this.leaf = snapshot._leaf;
		this.event = event;
		this.enqueue = new StepEnqueue(this);
	}

	get system(): SystemInternals {
		return this.scope.system as unknown as SystemInternals;
	}

	assign(patch: Partial<C>): void {
		const copy = this.copyContext;
		if (copy) this.context = Object.assign(copy(this.context) as object, patch) as C;
		else this.context = { ...this.context, ...patch };
		this.changed = true;
	}

	writableChildren(): Record<string, AnyActorRef | undefined> {
		if (!this.childrenCopied) {
			this.children = { ...this.children };
			this.childrenCopied = true;
		}
		this.changed = true;
		return this.children;
	}

	spawn(src: string, id: string, input: unknown): void {
		const logic = (this.chart.machine.implementations.actors as Record<string, AnyActorLogic | undefined>)[src];
		if (!logic) throw new Error(`agentchart interpreter: actor '${src}' is not implemented`);
		const child = spawnChild(logic, { id, src, parent: this.scope.self, input });
		this.writableChildren()[id] = child;
		this.scope.defer(() => {
			// Stopped in the step that spawned it (XState's actors would start all the same).
			if (processingStatus(child) === STOPPED) return;
			child.start();
		});
	}

	stopChild(id: string): void {
		const children = this.children;
		const child = children[id];
		if (!child) return;
		// A copy without it, not `delete`: deleting a key turns an object into a slow dictionary.
		const rest: Record<string, AnyActorRef | undefined> = {};
		for (const key in children) if (key !== id) rest[key] = children[key];
		this.children = rest;
		this.childrenCopied = true;
		this.changed = true;
		const scope = this.scope;
		// Stopped within the step that spawned it: it never starts (XState does the same).
		if (processingStatus(child) === NOT_STARTED) {
			scope.stopChild(child);
			return;
		}
		// Events already sent to it are delivered first.
		scope.defer(() => scope.stopChild(child));
	}

	emit(event: EventObject): void {
		const scope = this.scope;
		if (wantsInspection(this.system)) this.system._sendInspectionEvent({ type: "@xstate.action", actorRef: scope.self, action: { type: "xstate.emit", params: { event } } });
		// A lean actor queues the event itself; XState's scope takes an effect to run.
		const lean = scope as { deferEmit?: (event: EventObject) => void };
		if (lean.deferEmit) lean.deferEmit(event);
		else scope.defer(() => scope.emit(event));
	}

	snapshot(): ChartState<C> {
		return new ChartState(this.status, this.context, this.children, this.leaf, this.output, undefined);
	}
}

/** The `enqueue` of `enqueueActions` bodies, acting on the step directly. */
class StepEnqueue<C> {
	constructor(readonly step: Step<C>) {}

	assign(patch: Partial<C> | ((args: { context: C; event: EventObject }) => Partial<C>)): void {
		const step = this.step;
		step.assign(typeof patch === "function" ? patch({ context: step.context, event: step.event }) : patch);
	}

	emit(event: EventObject): void {
		this.step.emit(event);
	}

	raise(event: EventObject, options?: { delay?: number; id?: string }): void {
		const step = this.step;
		if (typeof options?.delay !== "number") {
			step.internal.push(event);
			return;
		}
		const { delay, id } = options;
		const scope = step.scope;
		scope.defer(() => scope.system.scheduler.schedule(scope.self, scope.self, event, delay, id));
	}

	cancel(id: string): void {
		const scope = this.step.scope;
		scope.defer(() => scope.system.scheduler.cancel(scope.self, id));
	}

	sendTo(target: string, event: EventObject): void {
		const step = this.step;
		const child = step.children[target];
		if (!child) throw new Error(`Unable to send event to actor '${target}' from machine '${step.chart.machine.id}'.`);
		step.scope.defer(() => step.system._relay(step.scope.self, child, event));
	}

	spawnChild(src: string, options: { id: string; input?: unknown }): void {
		this.step.spawn(src, options.id, options.input);
	}

	stopChild(id: string): void {
		this.step.stopChild(id);
	}
}

// A snapshot and a step (with its enqueue) that hold nothing, kept so that V8 keeps their maps,
// and the code built for them, through a full collection while no chart runs
// (util/keep-shape.ts). Built without a chart: nothing ever reads their fields. Statements here,
// not static blocks: a step makes its StepEnqueue, which is declared after Step.
keepShape(Reflect.construct(ChartState, ["stopped", undefined, {}, undefined, undefined, undefined]) as object);
const keptStep = keepShape(Reflect.construct(Step, [undefined, undefined, { context: undefined, children: {}, _leaf: undefined }, { type: "" }, undefined]) as Step<unknown>);
keepShape(keptStep.enqueue);

function unsupported(what: string, where: string): Error {
	return new Error(`agentchart interpreter: ${what} (in '${where}') is not supported; run this chart with XState's createActor(machine)`);
}

function compileGuard<C>(machine: AnyStateMachine, guard: unknown, where: string): Guard<C> {
	if (typeof guard === "string") {
		const impl = (machine.implementations.guards as Record<string, unknown>)[guard];
		if (impl === undefined) throw new Error(`Guard '${guard}' is not implemented.'.`);
		return compileGuard(machine, impl, where);
	}
	if (typeof guard !== "function") throw unsupported("a guard with params", where);
	const builtin = guard as { check?: unknown; guards?: readonly unknown[] };
	// A plain guard is called as it is: its params are undefined (a guard with params is refused above).
	if (builtin.check === undefined) return guard as Guard<C>;
	// Loops, not every/some with a callback: guards run at every step, a closure per call adds up.
	const parts = (builtin.guards ?? []).map((part) => compileGuard<C>(machine, part, where));
	if (builtin.check === AND_CHECK) {
		return (args) => {
			for (const part of parts) if (!part(args)) return false;
			return true;
		};
	}
	if (builtin.check === OR_CHECK) {
		return (args) => {
			for (const part of parts) if (part(args)) return true;
			return false;
		};
	}
	const [negated] = parts;
	if (builtin.check === NOT_CHECK && negated) return (args) => !negated(args);
	throw unsupported("a built-in guard other than and/or/not", where);
}

function compileAction<C>(machine: AnyStateMachine, action: unknown, where: string): Action<C> {
	const impl = typeof action === "string" ? (machine.implementations.actions as Record<string, unknown>)[action] : action;
	if (impl === undefined) throw new Error(`agentchart interpreter: action '${String(action)}' is not implemented`);
	const builtin = impl as { type?: unknown; assignment?: unknown; collect?: unknown };
	if (builtin.type === "xstate.assign") {
		const assignment = builtin.assignment;
		if (typeof assignment === "function") {
			const assigner = assignment as (args: { context: C; event: EventObject }, params: undefined) => Partial<C>;
			return (step) => step.assign(assigner({ context: step.context, event: step.event }, undefined));
		}
		const properties = Object.entries(assignment as Record<string, unknown>);
		return (step) => {
			const patch: Record<string, unknown> = {};
			for (const [key, value] of properties) {
				patch[key] = typeof value === "function" ? (value as (args: { context: C; event: EventObject }) => unknown)({ context: step.context, event: step.event }) : value;
			}
			step.assign(patch as Partial<C>);
		};
	}
	if (builtin.type === "xstate.enqueueActions") {
		type Collect = (args: { context: C; event: EventObject; self: AnyActorRef; system: AnyActorSystem; enqueue: StepEnqueue<C> }, params: undefined) => void;
		const collect = builtin.collect as Collect;
		return (step) => collect({ context: step.context, event: step.event, self: step.scope.self, system: step.scope.system, enqueue: step.enqueue }, undefined);
	}
	throw unsupported(`action '${String(typeof action === "string" ? action : builtin.type)}' (only assign and enqueueActions are)`, where);
}

function isDescendant(node: StateNodeLike, ancestor: StateNodeLike): boolean {
	for (let parent = node.parent; parent; parent = parent.parent) if (parent === ancestor) return true;
	return false;
}

/** XState's transition domain for a single-target transition without history states. */
function domainOf(transition: TransitionLike, root: StateNodeLike): StateNodeLike {
	const [target] = transition.target ?? [];
	const source = transition.source;
	if (!target) return source;
	if (!transition.reenter && (target === source || isDescendant(target, source))) return source;
	for (let ancestor = target.parent; ancestor; ancestor = ancestor.parent) if (isDescendant(source, ancestor)) return ancestor;
	return root;
}

function compile<C>(machine: AnyStateMachine): Chart<C> {
	const rootDef = machine.root as unknown as StateNodeLike;
	const byId = new Map<string, Node<C>>();
	const build = (def: StateNodeLike, parent: Node<C> | undefined): Node<C> => {
		if (def.type === "parallel" || def.type === "history") throw unsupported(`a ${def.type} state`, def.id);
		if (def.type === "final" && parent?.parent) throw unsupported("a final state below the top level", def.id);
		if (def.after.length > 0) throw unsupported("a delayed transition", def.id);
		const node: Node<C> = {
			def,
			parent,
			entry: [],
			exit: [],
			on: new Map(),
			always: [],
			initial: undefined,
			final: def.type === "final",
			invoke: def.invoke,
		};
		byId.set(def.id, node);
		for (const child of Object.values(def.states)) build(child, node);
		return node;
	};
	const root = build(rootDef, undefined);
	const nodeOf = (def: StateNodeLike): Node<C> => {
		const node = byId.get(def.id);
		if (!node) throw new Error(`agentchart interpreter: unknown state '${def.id}'`);
		return node;
	};
	const defaultLeaf = (node: Node<C>, enter: Node<C>[]): Node<C> => {
		let leaf = node;
		while (leaf.initial) {
			leaf = leaf.initial;
			enter.push(leaf);
		}
		return leaf;
	};
	const transition = (def: TransitionLike): Transition<C> => {
		const where = def.source.id;
		if ((def.target?.length ?? 0) > 1) throw unsupported("a transition with several targets", where);
		const guard = def.guard === undefined ? undefined : compileGuard<C>(machine, def.guard, where);
		const actions = def.actions.map((action) => compileAction<C>(machine, action, where));
		const [targetDef] = def.target ?? [];
		if (!targetDef) return { def, guard, actions, target: undefined };
		const domainDef = domainOf(def, rootDef);
		const domain = nodeOf(domainDef);
		const targetNode = nodeOf(targetDef);
		const enter: Node<C>[] = [];
		// The target's ancestors below the domain. None when the target is the domain itself (a
		// transition to its own source without reenter): walking up from it would never meet the
		// domain and would enter every ancestor up to the root again.
		if (targetNode !== domain) for (let node = targetNode.parent; node && node !== domain; node = node.parent) enter.unshift(node);
		if (targetDef !== def.source || def.reenter) enter.push(targetNode);
		const leaf = defaultLeaf(targetNode, enter);
		// With reenter the domain is a proper ancestor of the source (see domainOf): the source is exited and entered again.
		return { def, guard, actions, target: { domain, enter, leaf } };
	};
	// Initial children first: a transition's entry list follows them down to a leaf.
	for (const node of byId.values()) {
		const [initialDef] = node.def.initial.target;
		if (node.def.type === "compound" && initialDef) node.initial = nodeOf(initialDef);
	}
	for (const node of byId.values()) {
		const def = node.def;
		const where = def.id;
		node.entry = [...def.entry, ...def.initial.actions].map((action) => compileAction<C>(machine, action, where));
		if (def.initial.actions.length > 0) throw unsupported("initial actions", where);
		node.exit = def.exit.map((action) => compileAction<C>(machine, action, where));
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
	return { machine, root };
}

function select<C>(leaf: Node<C>, context: C, event: EventObject): Transition<C> | undefined {
	let args: GuardArgs<C> | undefined;
	for (let node: Node<C> | undefined = leaf; node; node = node.parent) {
		const candidates = node.on.get(event.type);
		if (!candidates) continue;
		for (const transition of candidates) if (!transition.guard || transition.guard((args ??= { context, event }))) return transition;
	}
	return undefined;
}

function selectEventless<C>(leaf: Node<C>, context: C, event: EventObject): Transition<C> | undefined {
	let args: GuardArgs<C> | undefined;
	for (let node: Node<C> | undefined = leaf; node; node = node.parent) {
		for (const transition of node.always) if (!transition.guard || transition.guard((args ??= { context, event }))) return transition;
	}
	return undefined;
}

function exitNode<C>(step: Step<C>, node: Node<C>): void {
	for (const action of node.exit) action(step);
	for (const invoke of node.invoke) step.stopChild(invoke.id);
}

function enterNode<C>(step: Step<C>, node: Node<C>): void {
	for (const action of node.entry) action(step);
	for (const invoke of node.invoke) {
		const input = typeof invoke.input === "function"
			? (invoke.input as (args: { context: C; event: EventObject; self: AnyActorRef }) => unknown)({ context: step.context, event: step.event, self: step.scope.self })
			: invoke.input;
		step.spawn(invoke.src as string, invoke.id, input);
	}
	if (node.final) {
		step.status = "done";
		const output = step.chart.root.def.output;
		step.output = typeof output === "function"
			? (output as (args: { context: C; event: EventObject; self: AnyActorRef }) => unknown)({ context: step.context, event: { type: `xstate.done.state.${node.def.id}` }, self: step.scope.self })
			: output;
	}
}

/** One microstep: exit, the transition's actions, entry (SCXML's order, as XState runs it). */
function microstep<C>(step: Step<C>, transition: Transition<C>): void {
	const target = transition.target;
	if (target) {
		for (let node: Node<C> | undefined = step.leaf; node && node !== target.domain; node = node.parent) exitNode(step, node);
		step.changed = true;
	}
	for (const action of transition.actions) action(step);
	if (target) {
		for (const node of target.enter) enterNode(step, node);
		step.leaf = target.leaf;
	}
	if (step.status === "done") {
		for (let node: Node<C> | undefined = step.leaf; node; node = node.parent) for (const action of node.exit) action(step);
	}
}

function inspectMicrostep<C>(step: Step<C>, event: EventObject, transition: Transition<C> | undefined): void {
	if (!wantsInspection(step.system)) return;
	step.system._sendInspectionEvent({ type: "@xstate.microstep", actorRef: step.scope.self, event, snapshot: step.snapshot(), _transitions: transition ? [transition.def] : [] });
}

/** Eventless transitions and raised events until the chart rests (XState's macrostep loop). */
function settle<C>(step: Step<C>): void {
	let eventless = true;
	let iterations = 0;
	while (step.status === "active") {
		if (++iterations > 10_000) throw new Error(`agentchart interpreter: more than 10,000 microsteps without the chart coming to rest (in '${step.leaf.def.id}')`);
		let transition: Transition<C> | undefined = eventless ? selectEventless(step.leaf, step.context, step.event) : undefined;
		const fromEventless: boolean = transition !== undefined;
		if (!transition) {
			const next = step.internal.shift();
			if (!next) break;
			step.event = next;
			transition = select(step.leaf, step.context, next);
			if (!transition) {
				eventless = true;
				continue;
			}
		}
		step.changed = false;
		microstep(step, transition);
		eventless = !fromEventless || step.changed;
		inspectMicrostep(step, step.event, transition);
	}
	if (step.status !== "active") {
		// Stopped, yet still listed in the final snapshot: XState's macrostep drops the children it
		// stops here from its result, and snapshots must read the same on both interpreters.
		const listed = { ...step.children };
		for (const id of Object.keys(listed)) step.stopChild(id);
		step.children = listed;
	}
}

const charts = new WeakMap<AnyStateMachine, Chart<unknown>>();

/** The compiled chart of a machine (compiled once per machine). */
function chartOf<C>(machine: AnyStateMachine): Chart<C> {
	let chart = charts.get(machine);
	if (!chart) {
		chart = compile<unknown>(machine);
		charts.set(machine, chart);
	}
	return chart as Chart<C>;
}

/** Options of {@link chartLogic}. */
export interface ChartLogicOptions<C> {
	/**
	 * Returns a new object with every field of `context`, written out as an object literal; an
	 * `assign` then patches the copy. Without it, an `assign` copies with a spread. Why it pays:
	 * a spread copy is fast only while the one place that makes it has seen at most four object
	 * shapes, and a chart's context passes through several as V8 settles its field types (the
	 * agent's saw six in its first prompt); from then on every copy takes V8's slow path, about
	 * 0.3 µs instead of 0.05. A literal in a function of the chart's own has one shape.
	 * It must copy every field (a field it leaves out is lost at the next `assign`).
	 *
	 * @example
	 * const logic = chartLogic(machine, { copyContext: (c) => ({ count: c.count, items: c.items }) });
	 */
	copyContext?: ((context: C) => C) | undefined;
}

/** The actor logic {@link chartLogic} returns. */
export type ChartLogic<C, E extends EventObject, I, O, Emitted extends EventObject> = ActorLogic<ChartSnapshot<C, O>, E, I, AnyActorSystem, Emitted>;

/**
 * The actor logic that runs `machine`'s chart with agentchart's interpreter: give it to
 * XState's `createActor` (or `invoke`/`spawn` it) where you would give the machine. Same
 * states, transitions, guards, actions, children and event order; snapshots carry `status`,
 * `value`, `context`, `children`, `output`, `error` and `matches()`. Throws when the machine
 * uses a feature outside the supported subset (see the module comment).
 *
 * @example
 * import { createActor } from "xstate";
 * const actor = createActor(chartLogic(agentMachine), { input: { config: { streamFn } } }).start();
 * actor.send({ type: "prompt", messages: [{ role: "user", content: "hi", timestamp: Date.now() }] });
 */
export function chartLogic<TMachine extends AnyStateMachine>(
	machine: TMachine,
	options: ChartLogicOptions<ContextFrom<TMachine>> = {},
): ChartLogic<ContextFrom<TMachine>, EventFromLogic<TMachine>, InputFrom<TMachine>, OutputFrom<TMachine>, EmittedFrom<TMachine>> {
	type C = ContextFrom<TMachine>;
	const chart = chartOf<C>(machine);
	const copyContext = options.copyContext;
	type Scope = AnyActorScope;
	const logic = {
		config: machine.config,
		getInitialSnapshot(scope: Scope, input: unknown): ChartState<C> {
			const init = { type: "xstate.init", input };
			const contextConfig = machine.config.context as unknown;
			const context = (typeof contextConfig === "function"
				? (contextConfig as (args: { input: unknown; self: AnyActorRef; spawn: () => never }) => C)({
						input,
						self: scope.self,
						spawn: () => {
							throw unsupported("spawn in the initial context", machine.id);
						},
					})
				: (contextConfig ?? {})) as C;
			const step = new Step<C>(chart, scope, { context, children: {}, _leaf: chart.root }, init, copyContext);
			const enter: Node<C>[] = [chart.root];
			let leaf = chart.root;
			while (leaf.initial) {
				leaf = leaf.initial;
				enter.push(leaf);
			}
			for (const node of enter) enterNode(step, node);
			step.leaf = leaf;
			settle(step);
			return step.snapshot();
		},
		transition(snapshot: ChartState<C>, event: EventObject, scope: Scope): ChartState<C> {
			if (snapshot.status !== "active") return snapshot;
			const step = new Step<C>(chart, scope, snapshot, event, copyContext);
			if (event.type === "xstate.stop") {
				for (const id of Object.keys(step.children)) step.stopChild(id);
				return new ChartState("stopped", step.context, step.children, step.leaf, snapshot.output, snapshot.error);
			}
			const transition = select(step.leaf, step.context, event);
			if (!transition && event.type.startsWith("xstate.error.actor")) {
				// A child failed and nothing handles it: the chart fails with its error (as XState's does).
				for (const id of Object.keys(step.children)) step.stopChild(id);
				return new ChartState("error", step.context, step.children, step.leaf, undefined, (event as { error?: unknown }).error);
			}
			if (transition) microstep(step, transition);
			inspectMicrostep(step, event, transition);
			settle(step);
			if (step.status === "active" && step.context === snapshot.context && step.children === snapshot.children && step.leaf === snapshot._leaf) return snapshot;
			return step.snapshot();
		},
		getPersistedSnapshot(snapshot: ChartState<C>) {
			const children: Record<string, unknown> = {};
			for (const [id, child] of Object.entries(snapshot.children)) {
				if (child) children[id] = { snapshot: child.getPersistedSnapshot?.(), src: (child as { src?: unknown }).src, syncSnapshot: false };
			}
			return { status: snapshot.status, value: snapshot.value, context: snapshot.context, children, output: snapshot.output, error: snapshot.error };
		},
	};
	return logic as unknown as ChartLogic<C, EventFromLogic<TMachine>, InputFrom<TMachine>, OutputFrom<TMachine>, EmittedFrom<TMachine>>;
}
