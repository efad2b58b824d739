/**
 * One macrostep of the interpreter: the event's transition, then eventless transitions and
 * raised events until the chart rests, in XState's order (SCXML's: exit, transition actions,
 * entry). Actions change the step's context and children as they run; their effects (emitted
 * events, sends, child starts and stops, scheduled events) go through the actor scope's
 * `actionExecutor` and `defer`, exactly as XState's built-in actions do, so they run once the
 * step's snapshot is set, in order, and inspectors see the same `@xstate.action` records.
 */
import { type AnyActorLogic, type AnyActorRef, type AnyActorScope, type EventObject, createActor } from "xstate";
import { type ActionForm, type Assignment, type EnqueueArgs, MICROSTEP_TRANSITIONS, actionForm, parentOf, relay, sendInspectionEvent } from "../xstate-internals.js";
import { type Action, type Chart, type ChartNode, type ChartTransition, type InvokeLike, actorLogicOf, guardOf, unsupported } from "./compile.js";
import { selectEventlessTransition, selectTransition } from "./select.js";
import { ChartSnapshot } from "./snapshot.js";

type AnyActorSystem = AnyActorScope["system"];

/**
 * Makes a child of `parent` as XState's spawn does.
 *
 * @example
 * const child = createChild(logic, { id: "stream", src: "streamActor", parent: scope.self, input });
 */
export function createChild(logic: AnyActorLogic, options: { id: string; src: string | AnyActorLogic; parent: AnyActorRef; input?: unknown; snapshot?: unknown; systemId?: string | undefined; syncSnapshot?: boolean | undefined }): AnyActorRef {
	return createActor(logic, options as never);
}

/** Children this interpreter started: XState's own start of them skips one that ran already (its status is internal). */
const started = new WeakSet<AnyActorRef>();

/**
 * Starts a child once: a child the parent's start started (and that may have ended since, a
 * promise that settled at once) is not started again by the spawn that made it.
 *
 * @example
 * startChild(child);
 */
export function startChild(child: AnyActorRef): void {
	if (started.has(child)) return;
	started.add(child);
	child.start();
}

/** The options of a send, raise or spawn, as XState's built-ins take them. */
interface DelayOptions {
	delay?: unknown;
	id?: string | undefined;
}

/** Nothing for an effect's action arguments to read (XState's built-ins do not read them). */
const NO_INFO = Object.freeze({}) as never;

/**
 * What a step does once its snapshot is set, in order: an event to emit (the common case, kept
 * as the event itself), or another effect.
 */
type Effect = EventObject | (() => void);

/** Runs a step's effects, in order (one deferred function per step, whatever their number). */
function runEffects(scope: AnyActorScope, effects: readonly Effect[]): void {
	for (const effect of effects) {
		if (typeof effect === "function") effect();
		else scope.emit(effect);
	}
}

/**
 * The `@xstate.action` record handed to XState's system for a built-in action: one object,
 * reused, whose `action` is built only when XState copies the record for an inspector (see
 * {@link inspectMicrostep}). XState's executor reports these as it runs each action; the step
 * reports them at the same point and keeps the effects in its list.
 */
const actionRecord = {
	type: "@xstate.action",
	actorRef: undefined as AnyActorRef | undefined,
	actionType: "",
	/** An emitted event, or another built-in's params. */
	payload: undefined as unknown,
	get action(): { type: string; params: unknown } {
		return { type: this.actionType, params: this.actionType === "xstate.emit" ? { event: this.payload } : this.payload };
	},
};
Object.defineProperty(actionRecord, "actionType", { enumerable: false });
Object.defineProperty(actionRecord, "payload", { enumerable: false });

function reportAction(scope: AnyActorScope, type: string, payload: unknown): void {
	const record = actionRecord;
	record.actorRef = scope.self;
	record.actionType = type;
	record.payload = payload;
	sendInspectionEvent(scope.system, record);
	record.actorRef = undefined;
	record.payload = undefined;
}

/** One macrostep's working state: the context and children as actions change them. */
export class Step<C> {
	context: C;
	children: Record<string, AnyActorRef | undefined>;
	childrenCopied = false;
	leaf: ChartNode<C>;
	status: "active" | "done" | "error" | "stopped" = "active";
	output: unknown = undefined;
	event: EventObject;
	/** Set when an action changed the snapshot (context or children) or the active states changed. */
	changed = false;
	/** Events raised in this step, not taken yet (made at the first raise). */
	internal: EventObject[] | undefined = undefined;
	/** What the step does once its snapshot is set (see {@link Step.flush}). */
	effects: Effect[] | undefined = undefined;
	/**
	 * True while the actor is made (its initial state is entered): XState runs no action's effect
	 * before the actor starts, so the step hands them to the actor's executor then, as XState's
	 * built-ins do; afterwards it keeps them in its own list.
	 */
	starting = false;
	/** The invoke ids of the state being entered: a send to one of them waits until it is spawned. */
	enteringInvokes: readonly InvokeLike[] | undefined = undefined;
	/** Sends to a child of the state being entered, resolved once its invokes have spawned. */
	retries: (() => void)[] | undefined = undefined;
	/** Children spawned in this step: not started until it is over. */
	spawned: AnyActorRef[] | undefined = undefined;
	/** Children spawned and stopped in this step: they are never started (as XState never starts them). */
	stoppedEarly: AnyActorRef[] | undefined = undefined;

	constructor(
		readonly chart: Chart<C>,
		readonly scope: AnyActorScope,
		context: C,
		children: Readonly<Record<string, AnyActorRef | undefined>>,
		leaf: ChartNode<C>,
		event: EventObject,
	) {
		this.context = context;
		this.children = children as Record<string, AnyActorRef | undefined>;
		this.leaf = leaf;
		this.event = event;
	}

	get self(): AnyActorRef {
		return this.scope.self;
	}

	get system(): AnyActorSystem {
		return this.scope.system;
	}

	/** XState's `assign`: a function of the action's arguments, or a map of values and property assigners. */
	assign(assignment: Assignment | object): void {
		if (this.context === undefined) throw new Error("Cannot assign to undefined `context`. Ensure that `context` is defined in the machine config.");
		let patch: object;
		if (typeof assignment === "function") patch = (assignment as (args: object, params: undefined) => object)(this.#assignArgs(), undefined);
		else {
			patch = assignment;
			const record = assignment as Record<string, unknown>;
			for (const key in record) {
				if (typeof record[key] !== "function") continue;
				// A property assigner: every value is resolved, in order, on a copy.
				const resolved: Record<string, unknown> = {};
				const args = this.#assignArgs();
				for (const name of Object.keys(record)) {
					const value = record[name];
					resolved[name] = typeof value === "function" ? (value as (args: object, params: undefined) => unknown)(args, undefined) : value;
				}
				patch = resolved;
				break;
			}
		}
		this.context = { ...this.context, ...patch } as C;
		this.changed = true;
	}

	#assignArgs(): object {
		return {
			context: this.context,
			event: this.event,
			self: this.scope.self,
			system: this.scope.system,
			spawn: () => {
				throw unsupported("spawn inside assign (use spawnChild)", this.leaf.def.id);
			},
		};
	}

	writableChildren(): Record<string, AnyActorRef | undefined> {
		if (!this.childrenCopied) {
			this.children = { ...this.children };
			this.childrenCopied = true;
		}
		this.changed = true;
		return this.children;
	}

	/**
	 * A built-in action's effect: reported to inspectors now and run after the step, in order; or,
	 * while the actor is being made, handed to its executor (which runs it when the actor starts).
	 */
	#effect(type: string, payload: unknown, effect: Effect): void {
		const scope = this.scope;
		if (this.starting) {
			const run = typeof effect === "function" ? effect : () => scope.emit(effect);
			scope.actionExecutor({ type, info: NO_INFO, params: type === "xstate.emit" ? { event: payload } : payload, exec: () => scope.defer(run) });
			return;
		}
		reportAction(scope, type, payload);
		(this.effects ??= []).push(effect);
	}

	/**
	 * Hands the step's effects to the actor, to run once its snapshot is set (XState's `defer`).
	 *
	 * @example
	 * step.flush(); return step.snapshot();
	 */
	flush(): void {
		const effects = this.effects;
		if (!effects) return;
		this.effects = undefined;
		const scope = this.scope;
		scope.defer(() => runEffects(scope, effects));
	}

	/** XState's `spawnChild`: made now, started once the step is over. */
	spawn(src: string | AnyActorLogic, id: string | undefined, input: unknown, syncSnapshot?: boolean): void {
		if (id === undefined) throw unsupported("spawnChild without an id (XState stores such a child under 'undefined')", this.leaf.def.id);
		const logic = actorLogicOf(this.chart, src);
		const scope = this.scope;
		const child = createChild(logic, { id, src, parent: scope.self, input, syncSnapshot });
		this.writableChildren()[id] = child;
		(this.spawned ??= []).push(child);
		// Spawned as the actor starts: the actor's start (chartLogic's `start`) may have started it already.
		const starting = this.starting;
		this.#effect("xstate.spawnChild", { id, systemId: undefined, actorRef: child, src, input }, () => {
			if (this.stoppedEarly?.includes(child)) return;
			if (starting) startChild(child);
			else child.start();
		});
	}

	/** XState's `stopChild`, by id or by ref: gone from the snapshot now, stopped after events already sent to it. */
	stopChild(target: string | AnyActorRef | undefined): void {
		const children = this.children;
		const child = typeof target === "string" ? children[target] : target;
		// XState copies the children even when there is nothing to remove: the snapshot changed.
		this.changed = true;
		if (child) {
			// A copy without it, not `delete`: deleting a key turns an object into a slow dictionary.
			const rest: Record<string, AnyActorRef | undefined> = {};
			for (const key in children) if (key !== child.id) rest[key] = children[key];
			this.children = rest;
			this.childrenCopied = true;
		}
		const scope = this.scope;
		const early = child !== undefined && this.spawned?.includes(child) === true;
		if (early) (this.stoppedEarly ??= []).push(child);
		if (early && !this.starting) {
			// Not started yet: it never will be (XState stops such a child at once).
			reportAction(scope, "xstate.stopChild", child);
			scope.stopChild(child);
			return;
		}
		// Events already sent to it are delivered first.
		this.#effect("xstate.stopChild", child, () => {
			if (child) scope.stopChild(child);
		});
	}

	emit(event: EventObject): void {
		this.#effect("xstate.emit", event, event);
	}

	/** XState's `raise`: into this step's queue, or scheduled (a number of ms, or a delay the machine names). */
	raise(event: EventObject, options: DelayOptions | undefined): void {
		const delay = this.#delay(options?.delay);
		if (delay === undefined) (this.internal ??= []).push(event);
		const scope = this.scope;
		const id = options?.id;
		this.#effect("xstate.raise", { event, id, delay }, () => {
			if (delay !== undefined) scope.system.scheduler.schedule(scope.self, scope.self, event, delay, id);
		});
	}

	cancel(id: string): void {
		const scope = this.scope;
		this.#effect("xstate.cancel", { sendId: id }, () => scope.system.scheduler.cancel(scope.self, id));
	}

	/** XState's `sendTo`: a child by id or ref, after the step (or scheduled, with a delay). */
	sendTo(target: string | AnyActorRef | undefined, event: EventObject, options: DelayOptions | undefined): void {
		const scope = this.scope;
		let to: AnyActorRef | undefined;
		let pending = false;
		if (typeof target === "string") {
			if (target === "#_parent") to = parentOf(scope.self);
			else if (target === "#_internal") to = scope.self;
			else if (target.startsWith("#_")) to = this.children[target.slice(2)];
			else {
				to = this.children[target];
				pending = !to && (this.enteringInvokes?.some((invoke) => invoke.id === target) ?? false);
			}
			if (!to && !pending) throw new Error(`Unable to send event to actor '${target}' from machine '${this.chart.machine.id}'.`);
		} else to = target ?? scope.self;
		const delay = this.#delay(options?.delay);
		const id = options?.id;
		const params = { to, targetId: typeof target === "string" ? target : undefined, event, id, delay };
		// A child of the state being entered: found once the state's invokes have spawned.
		if (pending) (this.retries ??= []).push(() => (params.to = this.children[target as string]));
		this.#effect("xstate.sendTo", params, () => {
			const recipient = params.to as AnyActorRef;
			if (params.delay !== undefined) scope.system.scheduler.schedule(scope.self, recipient, event, params.delay, params.id);
			else relay(scope.system, scope.self, recipient, event);
		});
	}

	#delay(delay: unknown): number | undefined {
		const resolved = typeof delay === "string" ? (this.chart.machine.implementations.delays as Record<string, unknown>)[delay] : delay;
		const value = typeof resolved === "function" ? (resolved as (args: object, params: undefined) => unknown)({ context: this.context, event: this.event, self: this.scope.self, system: this.scope.system }, undefined) : resolved;
		return typeof value === "number" ? value : undefined;
	}

	/** A custom action (a function of the chart's or one it names): run through the actor's executor, as XState runs it. */
	execute(name: string, exec: (args: { context: C; event: EventObject; self: AnyActorRef; system: AnyActorSystem }, params: undefined) => void): void {
		const info = { context: this.context, event: this.event, self: this.scope.self, system: this.scope.system };
		this.scope.actionExecutor({ type: name, info: info as never, params: undefined, exec: exec as never });
	}

	snapshot(): ChartSnapshot<C> {
		return new ChartSnapshot(this.status, this.context, this.children, this.leaf, this.output, undefined, this.chart.machine, this.scope.emit);
	}
}

/** The step whose `enqueueActions` body is running (bodies run one at a time, synchronously). */
let enqueuing: Step<unknown> | undefined;
/**
 * What the running body has enqueued, to act on once it returns (as XState does): four slots an
 * action, its kind and up to three arguments, in a list reused from body to body (the agent's
 * chart runs a body at every step, and a closure per action would be garbage at every step).
 */
let enqueued: Enqueued | undefined;
/** Lists of bodies that returned, for the next ones (a body may run inside another's custom action). */
const spareLists: Enqueued[] = [];

/** A body's list: `size` slots of `items` in use (the array keeps its length, so that it is not allocated again). */
interface Enqueued {
	items: unknown[];
	size: number;
}

const enum Op {
	Assign,
	Emit,
	Raise,
	Cancel,
	SendTo,
	SpawnChild,
	StopChild,
	Custom,
}

/** Acts on one action a body enqueued. */
function act(step: Step<unknown>, op: Op, a: unknown, b: unknown, c: unknown): void {
	switch (op) {
		case Op.Assign:
			return step.assign(a as Assignment | object);
		case Op.Emit:
			return step.emit(resolve(a as Resolvable<EventObject>, step));
		case Op.Raise:
			return step.raise(resolve(a as Resolvable<EventObject>, step), b as DelayOptions | undefined);
		case Op.Cancel:
			return step.cancel(resolve(a as Resolvable<string>, step));
		case Op.SendTo:
			return step.sendTo(resolve(a as Resolvable<string | AnyActorRef>, step), resolve(b as Resolvable<EventObject>, step), c as DelayOptions | undefined);
		case Op.SpawnChild: {
			const options = b as { id?: string | ((args: object) => string); input?: unknown } | undefined;
			const id = typeof options?.id === "function" ? options.id(argsOf(step)) : options?.id;
			const input = typeof options?.input === "function" ? (options.input as (args: object) => unknown)({ context: step.context, event: step.event, self: step.self }) : options?.input;
			return step.spawn(a as string | AnyActorLogic, id, input);
		}
		case Op.StopChild:
			return step.stopChild(resolve(a as Resolvable<string | AnyActorRef>, step));
		case Op.Custom:
			return (a as Action<unknown>)(step);
	}
}

function later(op: Op, a: unknown, b?: unknown, c?: unknown): void {
	enqueuingStep();
	const list = enqueued as Enqueued;
	const items = list.items;
	const at = list.size;
	items[at] = op;
	items[at + 1] = a;
	items[at + 2] = b;
	items[at + 3] = c;
	list.size = at + 4;
}

function enqueuingStep(): Step<unknown> {
	if (!enqueuing) throw new Error("agentchart interpreter: enqueue was called after its enqueueActions body returned");
	return enqueuing;
}

function argsOf(step: Step<unknown>): { context: unknown; event: EventObject; self: AnyActorRef; system: AnyActorSystem } {
	return { context: step.context, event: step.event, self: step.self, system: step.system };
}

type Resolvable<T> = T | ((args: object, params: undefined) => T);

function resolve<T>(value: Resolvable<T>, step: Step<unknown>): T {
	return typeof value === "function" ? (value as (args: object, params: undefined) => T)(argsOf(step), undefined) : value;
}

/** XState's `enqueue`: a function (`enqueue("action")`) with a method per built-in action. */
export interface Enqueue {
	(action: unknown): void;
	assign(assignment: Assignment | object): void;
	emit(event: Resolvable<EventObject>): void;
	raise(event: Resolvable<EventObject>, options?: DelayOptions): void;
	cancel(id: Resolvable<string>): void;
	sendTo(target: Resolvable<string | AnyActorRef>, event: Resolvable<EventObject>, options?: DelayOptions): void;
	sendParent(event: Resolvable<EventObject>, options?: DelayOptions): void;
	spawnChild(src: string | AnyActorLogic, options?: { id?: string | ((args: object) => string); input?: unknown; systemId?: string; syncSnapshot?: boolean }): void;
	stopChild(target: Resolvable<string | AnyActorRef>): void;
}

/**
 * The `enqueue` of `enqueueActions` bodies: one for every step, acting on the step whose body
 * is running. As XState does, it only records what the body enqueues; the actions are resolved
 * and run, in order, once the body has returned (nothing, if it threw).
 */
const enqueue: Enqueue = Object.assign(
	(action: unknown) => {
		const step = enqueuingStep();
		const named = typeof action === "object" && action !== null && typeof (action as { type?: unknown }).type === "string" ? (action as { type: string; params?: unknown }) : undefined;
		if (named?.params !== undefined) throw unsupported(`an action with params inside enqueueActions ('${named.type}')`, step.leaf.def.id);
		const name = named ? named.type : action;
		const impl = typeof name === "string" ? (step.chart.machine.implementations.actions as Record<string, unknown>)[name] : name;
		if (typeof impl !== "function") throw unsupported(`an action inside enqueueActions that is not a custom action (${typeof name === "string" ? `'${name}' is not implemented` : "a built-in action object: use enqueue.emit, enqueue.raise, ..."})`, step.leaf.def.id);
		const form = actionForm(impl as (...args: never[]) => unknown);
		if (form.kind === "other-builtin") throw unsupported(`the built-in action '${form.type}' inside enqueueActions (use enqueue.emit, enqueue.raise, enqueue.sendTo, ...)`, step.leaf.def.id);
		later(Op.Custom, compileActionForm<unknown>(form, typeof name === "string" ? name : (impl as { name?: string }).name || "(anonymous)"));
	},
	{
		assign: (assignment: Assignment | object) => later(Op.Assign, assignment),
		emit: (event: Resolvable<EventObject>) => later(Op.Emit, event),
		raise: (event: Resolvable<EventObject>, options?: DelayOptions) => later(Op.Raise, event, options),
		cancel: (id: Resolvable<string>) => later(Op.Cancel, id),
		sendTo: (target: Resolvable<string | AnyActorRef>, event: Resolvable<EventObject>, options?: DelayOptions) => later(Op.SendTo, target, event, options),
		sendParent: (event: Resolvable<EventObject>, options?: DelayOptions) => later(Op.SendTo, "#_parent", event, options),
		spawnChild: (src: string | AnyActorLogic, options?: { id?: string | ((args: object) => string); input?: unknown; systemId?: string; syncSnapshot?: boolean }) => {
			if (options?.systemId !== undefined || options?.syncSnapshot) throw unsupported("spawnChild with systemId or syncSnapshot", enqueuingStep().leaf.def.id);
			later(Op.SpawnChild, src, options);
		},
		stopChild: (target: Resolvable<string | AnyActorRef>) => later(Op.StopChild, target),
	},
);

/**
 * What the step runs for an action's form: `assign` and `enqueueActions` act on the step; a
 * custom action runs through the actor's executor.
 *
 * @example
 * const action = compileActionForm(actionForm(assign({ n: 1 })), "inc");
 */
export function compileActionForm<C>(form: ActionForm, name: string): Action<C> {
	if (form.kind === "assign") {
		const assignment = form.assignment;
		return (step) => step.assign(assignment);
	}
	if (form.kind === "enqueueActions") {
		const collect = form.collect as (args: EnqueueArgs<Enqueue>, params: undefined) => void;
		return (step) => {
			const context = step.context;
			const event = step.event;
			const outer = enqueuing;
			const outerList = enqueued;
			const list = spareLists.pop() ?? { items: [], size: 0 };
			enqueuing = step as Step<unknown>;
			enqueued = list;
			const items = list.items;
			try {
				collect({ context, event, enqueue, check: (guard) => checkIn(step, guard, context, event), self: step.self, system: step.system }, undefined);
				// Still the body's list while its actions run: a custom action that kept `enqueue` adds to it, as in XState.
				for (let index = 0; index < list.size; index += 4) {
					const op = items[index] as Op;
					const a = items[index + 1];
					const b = items[index + 2];
					const c = items[index + 3];
					// What the action holds is let go: the slots are reused by the next body.
					items[index + 1] = items[index + 2] = items[index + 3] = undefined;
					act(step as Step<unknown>, op, a, b, c);
				}
				list.size = 0;
			} finally {
				enqueuing = outer;
				enqueued = outerList;
				// A body or an action that threw leaves slots behind.
				if (list.size > 0) {
					items.fill(undefined, 0, list.size);
					list.size = 0;
				}
				spareLists.push(list);
			}
		};
	}
	if (form.kind === "function") {
		const exec = form.exec;
		return (step) => step.execute(name, exec as never);
	}
	throw new Error(`agentchart interpreter: the built-in action '${form.type}' is not supported`);
}

/** `check` inside an `enqueueActions` body: a guard the interpreter cannot take is refused naming the state. */
function checkIn<C>(step: Step<C>, guard: unknown, context: C, event: EventObject): boolean {
	let compiled: ReturnType<typeof guardOf<C>>;
	try {
		compiled = guardOf(step.chart, guard);
	} catch {
		throw unsupported("check inside enqueueActions with a guard the interpreter cannot take (not implemented, with params, or a built-in other than and/or/not)", step.leaf.def.id);
	}
	return compiled({ context, event });
}

function exitNode<C>(step: Step<C>, node: ChartNode<C>): void {
	for (const action of node.exit) action(step);
	for (const invoke of node.invoke) step.stopChild(invoke.id);
}

function resolveOutput<C>(step: Step<C>, mapper: unknown, event: EventObject): unknown {
	return typeof mapper === "function" ? (mapper as (args: { context: C; event: EventObject; self: AnyActorRef }) => unknown)({ context: step.context, event, self: step.self }) : mapper;
}

/**
 * Enters a state: its entry actions, then its invoked actors (a send to one of them from the
 * entry actions reaches it once spawned); for a final state, the done event of its parent, or,
 * directly under the root, the end of the machine with its output.
 *
 * @example
 * enterNode(step, node);
 */
export function enterNode<C>(step: Step<C>, node: ChartNode<C>): void {
	const invokes = node.invoke;
	step.enteringInvokes = invokes.length > 0 ? invokes : undefined;
	for (const action of node.entry) action(step);
	for (const invoke of invokes) {
		const input = typeof invoke.input === "function" ? (invoke.input as (args: { context: C; event: EventObject; self: AnyActorRef }) => unknown)({ context: step.context, event: step.event, self: step.self }) : invoke.input;
		// XState spawns an invoked actor with `syncSnapshot` false (it has no onSnapshot here).
		step.spawn(invoke.src as string, invoke.id, input, false);
	}
	step.enteringInvokes = undefined;
	const retries = step.retries;
	if (retries) {
		step.retries = undefined;
		for (const retry of retries) retry();
	}
	const def = node.def;
	if (def.type !== "final") return;
	const parent = node.parent;
	if (!parent) return;
	const event = step.event;
	(step.internal ??= []).push({ type: `xstate.done.state.${parent.def.id}`, output: def.output === undefined ? undefined : resolveOutput(step, def.output, event) } as EventObject);
	if (parent.parent) return;
	step.status = "done";
	const rootOutput = step.chart.root.def.output;
	if (rootOutput === undefined) return;
	const done = { type: `xstate.done.state.${def.id}`, output: def.output === undefined ? undefined : resolveOutput(step, def.output, event) };
	step.output = resolveOutput(step, rootOutput, done);
}

/** One microstep: exit, the transition's actions, entry (SCXML's order, as XState runs it). */
export function microstep<C>(step: Step<C>, transition: ChartTransition<C>): void {
	const target = transition.target;
	if (target) {
		for (let node: ChartNode<C> | undefined = step.leaf; node && node !== target.domain; node = node.parent) exitNode(step, node);
	}
	for (const action of transition.actions) action(step);
	if (target) {
		const leaf = step.leaf;
		for (const node of target.enter) {
			step.leaf = node;
			enterNode(step, node);
		}
		step.leaf = target.leaf;
		if (target.leaf !== leaf) step.changed = true;
	}
	exitAllWhenDone(step);
}

/** The machine reached its top-level final state: every active state exits, innermost first (as XState's last microstep does). */
export function exitAllWhenDone<C>(step: Step<C>): void {
	if (step.status !== "done") return;
	for (let node: ChartNode<C> | undefined = step.leaf; node; node = node.parent) for (const action of node.exit) action(step);
}

/**
 * The microstep record handed to XState's system: one object, reused. XState copies a record
 * (`{ ...record, rootId }`) before any inspector sees it, and only when someone inspects; the
 * copy reads the snapshot and the transitions through these getters, so they are built only
 * then. With nobody inspecting, a microstep costs three field writes.
 */
const microstepRecord = {
	type: "@xstate.microstep",
	actorRef: undefined as AnyActorRef | undefined,
	event: undefined as EventObject | undefined,
	step: undefined as Step<unknown> | undefined,
	transition: undefined as ChartTransition<unknown> | undefined,
	get snapshot(): ChartSnapshot<unknown> | undefined {
		return this.step?.snapshot();
	},
	get [MICROSTEP_TRANSITIONS](): unknown[] {
		return this.transition ? [this.transition.def] : [];
	},
};
// The working fields are not part of the record inspectors see.
Object.defineProperty(microstepRecord, "step", { enumerable: false });
Object.defineProperty(microstepRecord, "transition", { enumerable: false });

/** Reports a microstep to inspectors (see {@link microstepRecord}). */
export function inspectMicrostep<C>(step: Step<C>, event: EventObject, transition: ChartTransition<C> | undefined): void {
	const record = microstepRecord;
	record.actorRef = step.self;
	record.event = event;
	record.step = step as Step<unknown>;
	record.transition = transition as ChartTransition<unknown> | undefined;
	sendInspectionEvent(step.system, record);
	record.step = undefined;
	record.transition = undefined;
	record.event = undefined;
	record.actorRef = undefined;
}

/** Eventless transitions and raised events until the chart rests (XState's macrostep loop). */
export function settle<C>(step: Step<C>): void {
	let eventless = true;
	const maxIterations = (step.chart.machine.options as { maxIterations?: number } | undefined)?.maxIterations ?? Number.POSITIVE_INFINITY;
	let iterations = 0;
	while (step.status === "active") {
		if (++iterations > maxIterations) {
			throw new Error(
				`Infinite loop detected: the machine has processed more than ${maxIterations} microsteps without reaching a stable state. This usually happens when there's a cycle of transitions (e.g., eventless transitions or raised events causing state A -> B -> C -> A).`,
			);
		}
		let transition: ChartTransition<C> | undefined = eventless ? selectEventlessTransition(step.leaf, step.context, step.event) : undefined;
		const fromEventless: boolean = transition !== undefined;
		if (!transition) {
			const next = step.internal?.shift();
			if (!next) break;
			step.event = next;
			transition = selectTransition(step.leaf, step.context, next);
		}
		step.changed = false;
		if (transition) microstep(step, transition);
		// XState looks for eventless transitions again after an event, and after an eventless
		// transition that changed the snapshot; one that changed nothing would only be taken again.
		eventless = !fromEventless || step.changed;
		inspectMicrostep(step, step.event, transition);
	}
	if (step.status !== "active") {
		// Stopped, yet still listed in the final snapshot: XState's macrostep stops them here and
		// keeps them in its result.
		const listed = step.children;
		for (const id of Object.keys(listed)) step.stopChild(id);
		step.children = listed;
	}
}
