/**
 * A lean actor: XState's `Actor` semantics (mailbox, deferred effects, snapshots, observers,
 * emitted events, children's done and error events, stop) for the actors a run creates by the
 * dozen, without what each of XState's actors costs on creation: an options object merged by a
 * spread that V8 takes its slow path for, a mailbox and an actor scope of closures, a bound
 * `send`, a system of its own for a root (four maps, a scheduler, fifteen closures).
 *
 * It runs any actor logic that does not spawn children of its own through XState's machine
 * interpreter: XState's callback and promise logic (the stream actor, the tool batch, the
 * hooks' polls, compaction) and agentchart's chart logic (`chartLogic`), which spawns its
 * children with {@link spawnChild}. As a child it joins its parent's system (XState's or a lean
 * root's); as a root it brings a {@link LeanSystem}. `agent.actor` is always XState's `Actor`:
 * an Agent uses a lean root only for a run nobody asked to see (see `Agent.actor`).
 */
import { type AnyActorLogic, type AnyActorRef, type AnyActorScope, type EventObject, type Observer, createActor, fromTransition } from "xstate";
import { keepShape } from "../util/keep-shape.js";
import { runLivedList } from "../util/run-lived.js";

/** The system's methods XState keeps internal and its actors call (a lean system has them too). */
interface SystemInternals {
	_bookId(): string;
	_sendInspectionEvent(event: Record<string, unknown>): void;
	_relay(source: AnyActorRef | undefined, target: AnyActorRef, event: EventObject): void;
	_unregister(actor: AnyActorRef): void;
}

type AnyActorSystem = AnyActorScope["system"] & SystemInternals;

/** What a snapshot of any actor logic has. */
interface AnySnapshot {
	readonly status: "active" | "done" | "error" | "stopped";
	readonly output?: unknown;
	readonly error?: unknown;
}

interface MailboxNode {
	value: EventObject;
	next: MailboxNode | null;
}

/** XState's mailbox shape; a class, as it lives as long as its actor (util/run-lived.ts). */
class LeanMailbox {
	_current: MailboxNode | null = null;
	_last: MailboxNode | null = null;
	_active = false;
}

const NOT_STARTED = 0;
const RUNNING = 1;
const STOPPED = 2;

const STOP_EVENT: EventObject = { type: "xstate.stop" };

/** As XState reports an error nobody handles: thrown on a later task, so it is not swallowed. */
function reportUnhandledError(error: unknown): void {
	setTimeout(() => {
		throw error;
	});
}

interface FullObserver<T> {
	next?: ((value: T) => void) | undefined;
	error?: ((error: unknown) => void) | undefined;
	complete?: (() => void) | undefined;
}

function toObserver<T>(next: Observer<T> | ((value: T) => void), error?: (error: unknown) => void, complete?: () => void): FullObserver<T> {
	if (typeof next === "object") return { next: next.next?.bind(next), error: next.error?.bind(next), complete: next.complete?.bind(next) };
	return { next, error, complete };
}

let sessionCounter = 0;

interface ScheduledEvent {
	source: AnyActorRef;
	target: AnyActorRef;
	event: EventObject;
	delay: number;
	id: string;
	startedAt: number;
	timer: ReturnType<typeof setTimeout>;
}

/**
 * The actor system of a lean root: what actor logic reaches through `scope.system` (ids,
 * relaying events between actors, delayed events, inspection), and nothing it does not.
 * Inspection events are only built for observers that asked for them (`inspecting`).
 */
export class LeanSystem {
	/** True while an inspection observer is attached: chart steps build their records only then. */
	inspecting = false;
	#observers: Set<FullObserver<Record<string, unknown>>> | undefined;
	/** Made when an event is first delayed (only an abort with tools running does that). */
	#scheduler: LeanScheduler | undefined;

	get _clock(): typeof CLOCK {
		return CLOCK;
	}
	get _logger(): (...args: unknown[]) => void {
		return LOGGER;
	}
	get _snapshot(): { _scheduledEvents: Record<string, Omit<ScheduledEvent, "timer">> } {
		return { _scheduledEvents: this.#scheduler?.persisted() ?? {} };
	}
	/** Delayed events (XState's scheduler interface), relayed when they come due. */
	get scheduler(): LeanScheduler {
		return (this.#scheduler ??= new LeanScheduler(this));
	}
	/** Whether anything was ever delayed here (an actor stopping need not look otherwise). */
	get hasScheduler(): boolean {
		return this.#scheduler !== undefined;
	}

	/** After a hand-over (see {@link LeanActor.handOver}): the system that now runs the chart. */
	#successor: { system: AnyActorSystem; root: AnyActorRef } | undefined;

	constructor(readonly root: LeanActor) {}

	/** Inspection goes to the successor's system from now on (its delayed events once it runs). */
	handOver(successor: AnyActorRef): void {
		const system = successor.system as AnyActorSystem;
		this.#successor = { system, root: successor };
		this.inspecting = true;
	}

	/**
	 * The successor runs: delayed events move to its scheduler, and later ones go there. Not
	 * before: XState's root schedules again, as it starts, every event its system already holds.
	 */
	successorStarted(): void {
		const successor = this.#successor;
		if (successor) this.scheduler.handOver(successor.system.scheduler, (actor) => this.#translate(actor));
	}

	/** The actor as its successor knows it: the lean root becomes the actor that took over from it. */
	#translate(actor: AnyActorRef): AnyActorRef {
		const successor = this.#successor;
		return successor && actor === (this.root as unknown as AnyActorRef) ? successor.root : actor;
	}

	_bookId(): string {
		return `lean:${sessionCounter++}`;
	}
	_register(sessionId: string): string {
		return sessionId;
	}
	_unregister(): void {}
	_set(): void {
		throw new Error("agentchart: actors with a systemId need XState's createActor");
	}
	get(): undefined {
		return undefined;
	}
	getAll(): Record<string, AnyActorRef> {
		return {};
	}

	/** @example system.inspect((event) => console.log(event.type)); */
	inspect(observerOrFn: Observer<Record<string, unknown>> | ((event: Record<string, unknown>) => void)): { unsubscribe(): void } {
		const observer = toObserver(observerOrFn);
		const observers = (this.#observers ??= new Set());
		observers.add(observer);
		this.inspecting = true;
		return {
			unsubscribe: () => {
				observers.delete(observer);
				this.inspecting = observers.size > 0;
			},
		};
	}

	_sendInspectionEvent(event: Record<string, unknown>): void {
		if (this.#successor) {
			this.#successor.system._sendInspectionEvent(event);
			return;
		}
		const observers = this.#observers;
		if (!observers || observers.size === 0) return;
		// Copied, then extended: a spread that adds a key is V8's slow path (about 1.7 µs an event).
		const resolved: Record<string, unknown> = Object.assign({}, event);
		resolved["rootId"] = this.root.sessionId;
		for (const observer of observers) observer.next?.(resolved);
	}

	_relay(source: AnyActorRef | undefined, target: AnyActorRef, event: EventObject): void {
		if (this.inspecting) this._sendInspectionEvent({ type: "@xstate.event", sourceRef: source, actorRef: target, event });
		(target as unknown as { _send(event: EventObject): void })._send(event);
	}

	getSnapshot(): { _scheduledEvents: Record<string, unknown> } {
		return this._snapshot;
	}

	start(): void {}
}

/**
 * Whether an actor system wants inspection records: a lean system says; XState's system does
 * not, so records are always built for it (and dropped by it when nobody inspects).
 *
 * @example
 * if (wantsInspection(scope.system)) scope.system._sendInspectionEvent(record);
 */
export function wantsInspection(system: unknown): boolean {
	return (system as { inspecting?: boolean }).inspecting !== false;
}

/** What a lean root hands its run over to: an XState actor, not started yet. */
export interface HandOverTarget {
	start(): unknown;
	_send(event: EventObject): void;
}

const CLOCK = { setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms), clearTimeout: (id: ReturnType<typeof setTimeout>) => clearTimeout(id) };
const LOGGER = (...args: unknown[]) => console.log(...args);

type Scheduler = AnyActorScope["system"]["scheduler"];

/** A lean system's delayed events: a timer each, relayed through the system when due. */
class LeanScheduler {
	readonly #timers = new Map<string, ScheduledEvent>();
	/** After a hand-over: where delayed events go, and how actors are named there. */
	#successor: { scheduler: Scheduler; translate: (actor: AnyActorRef) => AnyActorRef } | undefined;

	constructor(readonly system: LeanSystem) {}

	schedule(source: AnyActorRef, target: AnyActorRef, event: EventObject, delay: number, id = Math.random().toString(36).slice(2)): void {
		const successor = this.#successor;
		if (successor) {
			successor.scheduler.schedule(successor.translate(source), successor.translate(target), event, delay, id);
			return;
		}
		const key = `${source.sessionId}.${id}`;
		// XState forgets (without clearing) a timer scheduled again under the same id; clearing it
		// here is the safer of the two, and the chart never reuses a live id.
		const previous = this.#timers.get(key);
		if (previous) clearTimeout(previous.timer);
		const timer = setTimeout(() => {
			this.#timers.delete(key);
			this.system._relay(source, target, event);
		}, delay);
		this.#timers.set(key, { source, target, event, delay, id, startedAt: Date.now(), timer });
	}

	cancel(source: AnyActorRef, id: string): void {
		const successor = this.#successor;
		if (successor) successor.scheduler.cancel(successor.translate(source), id);
		const key = `${source.sessionId}.${id}`;
		const scheduled = this.#timers.get(key);
		if (!scheduled) return;
		clearTimeout(scheduled.timer);
		this.#timers.delete(key);
	}

	cancelAll(actor: AnyActorRef): void {
		for (const scheduled of [...this.#timers.values()]) if (scheduled.source === actor) this.cancel(actor, scheduled.id);
	}

	/** The pending events as XState persists them. */
	persisted(): Record<string, Omit<ScheduledEvent, "timer">> {
		const events: Record<string, Omit<ScheduledEvent, "timer">> = {};
		for (const [key, { timer: _timer, ...scheduled }] of this.#timers) events[key] = scheduled;
		return events;
	}

	/** Moves the pending events, with the time they have left, to the successor's scheduler. */
	handOver(scheduler: Scheduler, translate: (actor: AnyActorRef) => AnyActorRef): void {
		this.#successor = { scheduler, translate };
		const moving = [...this.#timers.values()];
		this.#timers.clear();
		for (const scheduled of moving) {
			clearTimeout(scheduled.timer);
			const left = Math.max(0, scheduled.delay - (Date.now() - scheduled.startedAt));
			scheduler.schedule(translate(scheduled.source), translate(scheduled.target), scheduled.event, left, scheduled.id);
		}
	}
}

/** Options of a {@link LeanActor}. */
export interface LeanActorOptions {
	id?: string | undefined;
	src?: string | undefined;
	/** The parent: the child joins its system (XState's or a lean root's). */
	parent?: AnyActorRef | undefined;
	input?: unknown;
}

/**
 * An actor with XState's `Actor` behaviour, lean to create (see the module comment).
 *
 * @example
 * const actor = new LeanActor(agentLogic, { input: { config: { streamFn } } }).start();
 * actor.on("agent_end", () => console.log("done"));
 * actor.send({ type: "prompt", messages: [user("hi")] });
 */
export class LeanActor {
	readonly logic: AnyActorLogic;
	readonly id: string;
	readonly sessionId: string;
	readonly src: AnyActorLogic | string;
	readonly system: AnyActorSystem;
	/** The input, until the start has announced it (the logic keeps what it needs of it). */
	#input: unknown;
	readonly ref: this = this;
	_parent: AnyActorRef | undefined;
	_snapshot: AnySnapshot;
	_processingStatus: number = NOT_STARTED;
	/** XState's mailbox shape (`_current` is the event being taken): the facade reads what waits in it. */
	readonly mailbox: LeanMailbox = new LeanMailbox();
	/** Effects of the step being taken, run once its snapshot is set: functions, or events to emit. */
	_deferred: ((() => void) | EventObject)[] = runLivedList();
	observers: Set<FullObserver<unknown>> | undefined;
	/**
	 * XState's name for the emitted-event listeners, made when a second handler comes (children
	 * have none; an agent's machine has only its facade's, kept in {@link LeanActor.#soleWildcard}).
	 */
	eventListeners: Map<string, Set<(event: EventObject) => void>> | undefined;
	/** The one `"*"` handler while it is the only handler: a map and a set for it would outweigh it. */
	#soleWildcard: ((event: EventObject) => void) | undefined;
	readonly _actorScope: AnyActorScope;
	_doneEvent: EventObject | undefined;
	/** The actor this root handed its run over to (see {@link LeanActor.handOver}). */
	successor: HandOverTarget | undefined;
	/** True while a step is being taken (the start's, or one from the mailbox). */
	#busy = false;
	/** The mailbox entry being taken, if any. */
	#taking: MailboxNode | null = null;
	#successorStarted = false;

	constructor(logic: AnyActorLogic, options: LeanActorOptions = {}) {
		this.logic = logic;
		this.#input = options.input;
		const parent = options.parent;
		this._parent = parent;
		this.system = (parent ? parent.system : new LeanSystem(this)) as AnyActorSystem;
		this.sessionId = this.system._bookId();
		this.id = options.id ?? this.sessionId;
		this.src = options.src ?? logic;
		// XState binds it, so that `const { send } = actor` works; nobody takes a child's apart.
		if (!parent) this.send = this.send.bind(this);
		this._actorScope = new LeanScope(this) as unknown as AnyActorScope;
		if (this.#inspected()) this.system._sendInspectionEvent({ type: "@xstate.actor", actorRef: this });
		try {
			this._snapshot = logic.getInitialSnapshot(this._actorScope, options.input) as AnySnapshot;
		} catch (error) {
			this._snapshot = { status: "error", output: undefined, error };
		}
	}

	/** Starts the actor (a second call does nothing). @example actor.start(); */
	start(): this {
		if (this._processingStatus === RUNNING) return this;
		this._processingStatus = RUNNING;
		const initEvent = { type: "xstate.init", input: this.#input };
		this.#input = undefined;
		if (this.#inspected()) this.system._sendInspectionEvent({ type: "@xstate.event", sourceRef: this._parent, actorRef: this, event: initEvent });
		switch (this._snapshot.status) {
			case "done":
				this.update(this._snapshot, initEvent);
				return this;
			case "error":
				this._error(this._snapshot.error);
				return this;
		}
		if (this.logic.start) {
			try {
				this.logic.start(this._snapshot, this._actorScope);
			} catch (error) {
				this._snapshot = { ...this._snapshot, status: "error", error };
				this._error(error);
				return this;
			}
		}
		this.#busy = true;
		this.update(this._snapshot, initEvent);
		this.#busy = false;
		if (this.successor) this.#startSuccessor();
		else {
			this.mailbox._active = true;
			this.#flush();
		}
		return this;
	}

	/** Sends an event (through the system, as XState's actors do). @example actor.send({ type: "abort" }); */
	send(event: EventObject): void {
		this.system._relay(undefined, this as unknown as AnyActorRef, event);
	}

	_send(event: EventObject): void {
		if (this.successor) {
			this.successor._send(event);
			return;
		}
		if (this._processingStatus === STOPPED) return;
		const node: MailboxNode = { value: event, next: null };
		const mailbox = this.mailbox;
		if (mailbox._current) {
			(mailbox._last as MailboxNode).next = node;
			mailbox._last = node;
			return;
		}
		mailbox._current = node;
		mailbox._last = node;
		if (mailbox._active) this.#flush();
	}

	#flush(): void {
		const mailbox = this.mailbox;
		this.#busy = true;
		while (mailbox._current) {
			const consumed = mailbox._current;
			this.#taking = consumed;
			this._process(consumed.value);
			mailbox._current = consumed.next;
		}
		this.#taking = null;
		this.#busy = false;
		mailbox._last = null;
		// Handed over while taking a step: the successor takes the next ones.
		if (this.successor) this.#startSuccessor();
	}

	/** Starts the successor (once) and moves the delayed events to it. */
	#startSuccessor(): void {
		if (this.#successorStarted) return;
		this.#successorStarted = true;
		this.successor?.start();
		(this.system as unknown as LeanSystem).successorStarted();
	}

	/**
	 * Hands this root's run over to `successor`, an XState actor created (not started) from this
	 * actor's snapshot and logic: the facade does this when `agent.actor` is asked for in the
	 * middle of a run. The children report to the successor, delayed events and inspection go to
	 * its system, the events waiting here (and any sent here later) go to it in order, and it
	 * starts once the step this actor is taking, if any, is done (its effects still run here).
	 *
	 * @example
	 * const actor = createActor(agentLogic, { input, snapshot: lean.getSnapshot() });
	 * lean.handOver(actor);
	 */
	handOver(successor: HandOverTarget): void {
		const successorRef = successor as unknown as AnyActorRef;
		this.successor = successor;
		const children = (this._snapshot as { children?: Record<string, AnyActorRef | undefined> }).children ?? {};
		for (const child of Object.values(children)) if (child) (child as { _parent: AnyActorRef | undefined })._parent = successorRef;
		(this.system as unknown as LeanSystem).handOver(successorRef);
		// What waits in the mailbox (behind the entry being taken, if one is) moves, in order.
		const mailbox = this.mailbox;
		const taking = this.#taking;
		let waiting = taking ? taking.next : mailbox._current;
		if (taking) {
			taking.next = null;
			mailbox._last = taking;
		} else {
			mailbox._current = null;
			mailbox._last = null;
		}
		for (; waiting; waiting = waiting.next) successor._send(waiting.value);
		if (!this.#busy) this.#startSuccessor();
	}

	_process(event: EventObject): void {
		let next: AnySnapshot;
		try {
			next = this.logic.transition(this._snapshot, event, this._actorScope) as AnySnapshot;
		} catch (error) {
			this._snapshot = { ...this._snapshot, status: "error", error };
			this._error(error);
			return;
		}
		this.update(next, event);
		if (event.type === "xstate.stop") {
			this._stopProcedure();
			this._complete();
		}
	}

	update(snapshot: AnySnapshot, event: EventObject): void {
		this._snapshot = snapshot;
		const deferred = this._deferred;
		// Effects may defer more effects; each runs once, in order.
		for (let index = 0; index < deferred.length; index++) {
			const effect = deferred[index] as (() => void) | EventObject;
			try {
				if (typeof effect === "function") effect();
				else this._emit(effect);
			} catch (error) {
				deferred.length = 0;
				this._snapshot = { ...snapshot, status: "error", error };
				break;
			}
		}
		// Setting an array's length is a call into V8's runtime even when it is 0 already.
		if (deferred.length !== 0) deferred.length = 0;
		switch (this._snapshot.status) {
			case "active":
				if (this.observers) for (const observer of this.observers) this.#notify(observer, snapshot);
				break;
			case "done":
				if (this.observers) for (const observer of this.observers) this.#notify(observer, snapshot);
				this._stopProcedure();
				this._complete();
				this._doneEvent = { type: `xstate.done.actor.${this.id}`, output: this._snapshot.output, actorId: this.id } as EventObject;
				if (this._parent) this.system._relay(this as unknown as AnyActorRef, this._parent, this._doneEvent);
				break;
			case "error":
				this._error(this._snapshot.error);
				break;
		}
		if (this.#inspected()) this.system._sendInspectionEvent({ type: "@xstate.snapshot", actorRef: this, event, snapshot });
	}

	#inspected(): boolean {
		return wantsInspection(this.system);
	}

	#notify(observer: FullObserver<unknown>, snapshot: AnySnapshot): void {
		try {
			observer.next?.(snapshot);
		} catch (error) {
			reportUnhandledError(error);
		}
	}

	_stop(): this {
		if (this._processingStatus === STOPPED) return this;
		this.#clearMailbox();
		if (this._processingStatus === NOT_STARTED) {
			this._processingStatus = STOPPED;
			return this;
		}
		this._send(STOP_EVENT);
		return this;
	}

	/** Stops a root actor (and, through its logic, its children). @example actor.stop(); */
	stop(): this {
		if (this._parent) throw new Error("A non-root actor cannot be stopped directly.");
		return this._stop();
	}

	#clearMailbox(): void {
		const mailbox = this.mailbox;
		if (mailbox._current) {
			mailbox._current.next = null;
			mailbox._last = mailbox._current;
		}
	}

	_complete(): void {
		if (this.observers) {
			for (const observer of this.observers) {
				try {
					observer.complete?.();
				} catch (error) {
					reportUnhandledError(error);
				}
			}
			this.observers.clear();
		}
		this.#dropListeners();
	}

	_error(error: unknown): void {
		this._stopProcedure();
		this.#reportError(error);
		if (this._parent) this.system._relay(this as unknown as AnyActorRef, this._parent, { type: `xstate.error.actor.${this.id}`, error, actorId: this.id } as EventObject);
	}

	#reportError(error: unknown): void {
		const observers = this.observers;
		if (!observers || observers.size === 0) {
			if (!this._parent) reportUnhandledError(error);
			this.#dropListeners();
			return;
		}
		let report = false;
		for (const observer of observers) {
			report ||= !observer.error;
			try {
				observer.error?.(error);
			} catch (thrown) {
				reportUnhandledError(thrown);
			}
		}
		observers.clear();
		this.#dropListeners();
		if (report) reportUnhandledError(error);
	}

	_stopProcedure(): this {
		if (this._processingStatus !== RUNNING) return this;
		const system = this.system as unknown as LeanSystem;
		if (!(system instanceof LeanSystem) || system.hasScheduler) this.system.scheduler.cancelAll(this as unknown as AnyActorRef);
		this.#clearMailbox();
		// Events sent after the stop wait in a fresh mailbox that nothing flushes (as in XState).
		(this as { mailbox: LeanActor["mailbox"] }).mailbox = new LeanMailbox();
		this._processingStatus = STOPPED;
		this.system._unregister(this as unknown as AnyActorRef);
		return this;
	}

	/** @example const { unsubscribe } = actor.subscribe((snapshot) => console.log(snapshot.status)); */
	subscribe(next: Observer<unknown> | ((snapshot: unknown) => void), error?: (error: unknown) => void, complete?: () => void): { unsubscribe(): void } {
		const observer = toObserver(next, error, complete);
		if (this._processingStatus !== STOPPED) (this.observers ??= new Set()).add(observer);
		else if (this._snapshot.status === "done") {
			try {
				observer.complete?.();
			} catch (thrown) {
				reportUnhandledError(thrown);
			}
		} else if (this._snapshot.status === "error") {
			if (!observer.error) reportUnhandledError(this._snapshot.error);
			else {
				try {
					observer.error(this._snapshot.error);
				} catch (thrown) {
					reportUnhandledError(thrown);
				}
			}
		}
		return {
			unsubscribe: () => {
				this.observers?.delete(observer);
			},
		};
	}

	/** Listens for emitted events of a type, or all of them with `"*"`. @example actor.on("agent_end", () => {}); */
	on(type: string, handler: (event: EventObject) => void): { unsubscribe(): void } {
		if (type === "*" && !this.eventListeners && !this.#soleWildcard) {
			const sole = (event: EventObject) => handler(event);
			this.#soleWildcard = sole;
			return {
				unsubscribe: () => {
					if (this.#soleWildcard === sole) this.#soleWildcard = undefined;
					else this.eventListeners?.get("*")?.delete(sole);
				},
			};
		}
		const table = this.#listenerTable();
		let listeners = table.get(type);
		if (!listeners) {
			listeners = new Set();
			table.set(type, listeners);
		}
		const wrapped = (event: EventObject) => handler(event);
		listeners.add(wrapped);
		return {
			unsubscribe: () => {
				listeners.delete(wrapped);
			},
		};
	}

	/** The listener table, made now if it was not (with the sole `"*"` handler, if any, moved in). */
	#listenerTable(): Map<string, Set<(event: EventObject) => void>> {
		let table = this.eventListeners;
		if (!table) {
			table = this.eventListeners = new Map();
			const sole = this.#soleWildcard;
			if (sole) table.set("*", new Set([sole]));
			this.#soleWildcard = undefined;
		}
		return table;
	}

	#dropListeners(): void {
		this.eventListeners?.clear();
		this.#soleWildcard = undefined;
	}

	_emit(event: EventObject): void {
		const sole = this.#soleWildcard;
		if (sole) {
			this.#callHandler(sole, event);
			return;
		}
		const table = this.eventListeners;
		if (!table) return;
		const listeners = table.get(event.type);
		const wildcard = table.get("*");
		const count = (listeners?.size ?? 0) + (wildcard?.size ?? 0);
		if (count === 0) return;
		// A single handler (the Agent's own) is called as it is; several are copied first, as XState
		// does, since a handler may add or remove handlers.
		if (count === 1) {
			const [handler] = (listeners?.size ? listeners : wildcard) as Set<(event: EventObject) => void>;
			this.#callHandler(handler as (event: EventObject) => void, event);
			return;
		}
		for (const handler of [...(listeners ?? []), ...(wildcard ?? [])]) this.#callHandler(handler, event);
	}

	#callHandler(handler: (event: EventObject) => void, event: EventObject): void {
		try {
			handler(event);
		} catch (error) {
			reportUnhandledError(error);
		}
	}

	/** @example actor.getSnapshot().status; */
	getSnapshot(): AnySnapshot {
		return this._snapshot;
	}

	/** @example const persisted = actor.getPersistedSnapshot(); */
	getPersistedSnapshot(options?: unknown): unknown {
		return this.logic.getPersistedSnapshot(this._snapshot, options);
	}

	/** @example JSON.stringify(actor); // {"xstate$$type":1,"id":"stream"} */
	toJSON(): { xstate$$type: 1; id: string } {
		return { xstate$$type: 1, id: this.id };
	}

}

// XState's actors are interop observables (`Symbol.observable`, or "@@observable" without it).
const symbolObservable: string | symbol = (typeof Symbol === "function" && (Symbol as { observable?: symbol }).observable) || "@@observable";
Object.defineProperty(LeanActor.prototype, symbolObservable, {
	value(this: LeanActor) {
		return this;
	},
});

/** The actor scope a lean actor gives its logic. */
class LeanScope {
	#emit: ((event: EventObject) => void) | undefined;

	constructor(readonly self: LeanActor) {}

	get id(): string {
		return this.self.id;
	}
	get sessionId(): string {
		return this.self.sessionId;
	}
	get system(): AnyActorSystem {
		return this.self.system;
	}
	get logger(): (...args: unknown[]) => void {
		return (this.self.system as unknown as { _logger: (...args: unknown[]) => void })._logger;
	}
	/** A function of its own: XState's callback logic takes it out of the scope. */
	get emit(): (event: EventObject) => void {
		const self = this.self;
		return (this.#emit ??= (event) => self._emit(event));
	}
	defer(effect: () => void): void {
		this.self._deferred.push(effect);
	}
	/** Emits `event` once the step's snapshot is set, in order with the other effects (no closure per event). */
	deferEmit(event: EventObject): void {
		this.self._deferred.push(event);
	}
	stopChild(child: AnyActorRef): void {
		const parent = child._parent as unknown;
		if (parent !== this.self && (parent === undefined || parent !== this.self.successor)) throw new Error(`Cannot stop child actor ${child.id} of ${this.self.id} because it is not a child`);
		(child as unknown as { _stop(): void })._stop();
	}
	actionExecutor(): void {
		throw new Error("agentchart: XState's built-in actions need XState's createActor");
	}
}

/**
 * Creates a child of `parent` for `logic`: a lean actor for logic that spawns no children
 * through XState's machine interpreter (callback, promise and agentchart's chart logic), XState's
 * `createActor` for a state machine.
 *
 * @example
 * const child = spawnChild(streamActor, { id: "stream", src: "streamActor", parent: scope.self, input });
 * scope.defer(() => child.start());
 */
export function spawnChild(logic: AnyActorLogic, options: { id: string; src: string; parent: AnyActorRef; input: unknown }): AnyActorRef {
	if (isStateMachine(logic)) return createActor(logic, options);
	return new LeanActor(logic, options) as unknown as AnyActorRef;
}

function isStateMachine(logic: AnyActorLogic): boolean {
	return typeof (logic as { root?: unknown }).root === "object" && typeof (logic as { resolveState?: unknown }).resolveState === "function";
}

// One root and one child (a root has its own `send`: a map of its own), a mailbox, their scopes
// and the root's system and scheduler, never started: V8 keeps their maps through an idle full
// collection, and the code built for them (util/keep-shape.ts). A statement here, not a static
// block of LeanActor: LeanScope is declared after it.
{
	const inert = fromTransition((state: undefined) => state, undefined);
	const root = keepShape(new LeanActor(inert));
	const child = keepShape(new LeanActor(inert, { parent: root as unknown as AnyActorRef, id: "kept" }));
	keepShape(root.mailbox);
	keepShape(root._actorScope);
	keepShape(child._actorScope);
	keepShape(root.system);
	keepShape(root.system.scheduler);
}
