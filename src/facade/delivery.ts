/**
 * Delivering events to an Agent's listeners the way pi 0.73.1 does, microtask for microtask:
 * each event is reduced into the agent's state, then every listener is awaited in turn
 * (`await listener(event, signal)`, even one that returns nothing; for that one a `then` on a
 * settled promise stands in for the `await`, at the same microtask). The next event waits for
 * the previous one. Code written against pi (pi's coding agent forwards events through a
 * promise chain of its own) depends on that timing, so it is kept exactly; what is faster here
 * is everything around it.
 *
 * Events arrive synchronously from the machine (and token deltas from the stream actor); the
 * first one finding the queue idle is delivered at once, so a listener runs in the same tick
 * as the event, as in pi. Steps that are not events (acknowledging a delivery barrier,
 * replacing the transcript after a compaction) queue behind the events before them.
 */
import type { MessageUpdateEvent } from "../actors/stream-protocol.js";
import type { AgentEvent } from "../types/agent.js";
import { describeError } from "../util/describe-error.js";

/**
 * A subscriber: awaited, in subscription order, for every event.
 *
 * @example
 * const listener: AgentListener = async (event, signal) => { if (event.type === "agent_end" && !signal.aborted) await save(); };
 * agent.subscribe(listener);
 */
export type AgentListener = (event: AgentEvent, signal: AbortSignal) => Promise<void> | void;

/** What the delivery needs from its agent. */
export interface DeliveryHost {
	/** The state updates of one event, before its listeners (pi's order). */
	reduce(event: AgentEvent): void;
	/** A listener threw or rejected, or the state update of an event (`reduce`) threw. */
	/** A listener threw or rejected (`event`: the event it was given; none for a step that is no event). */
	listenerFailed(message: string, event?: AgentEvent): void;
	/**
	 * An event that ends something (`agent_end`, `auto_compaction_end`) is being delivered:
	 * `delivery` settles once it has reached every listener.
	 */
	delivered(event: AgentEvent, delivery: Promise<void>): void;
}

const NO_LISTENERS: ReadonlySet<AgentListener> = new Set();

/** The ordered delivery of one agent's events to its listeners. */
export class ListenerDelivery {
	/**
	 * Live, as pi's: a listener removed during delivery is skipped, one added joins the current
	 * event. Made at the first subscription (see docs/performance.md, "Idle agents").
	 */
	#listeners: Set<AgentListener> | undefined;
	/** Listeners added so far: a change of it during a call tells that listeners joined meanwhile. */
	#added = 0;
	/** The lone listener while an event is being delivered to it, until it returns. */
	#deliveringTo: AgentListener | undefined;
	/** Whether that listener was removed meanwhile (so an entry of it now is a new one). */
	#deliveringToLeft = false;
	/**
	 * The listener, while there is exactly one (nearly always): an event reaches it without a set
	 * iterator and its result objects.
	 */
	#sole: AgentListener | undefined;
	/** The event, signal and listener count of a sole listener's call that {@link ListenerDelivery.#afterSole} ends. */
	#soleEvent: AgentEvent | undefined;
	#soleSignal: AbortSignal | undefined;
	#soleAdded = 0;
	/** The signal listeners receive: the run's, set by the agent as its run starts and ends. */
	signal: AbortSignal;
	/** Steps queued or running. */
	#inFlight = 0;
	/** The last step's promise: what the next step waits for. */
	#tail: Promise<void> | undefined;
	/** Events whose delivery has begun: a count that moves while the listeners keep taking events. */
	#begun = 0;

	constructor(
		private readonly host: DeliveryHost,
		signal: AbortSignal,
		/** Where a token delta's one state update goes (the rest is the host's `reduce`). */
		private readonly state: { streamingMessage: unknown },
	) {
		this.signal = signal;
	}

	/**
	 * Subscribes a listener (once: adding one that is subscribed changes nothing, as with pi's set).
	 *
	 * @example
	 * delivery.add((event) => console.log(event.type));
	 */
	add(listener: AgentListener): void {
		const listeners = (this.#listeners ??= new Set());
		if (listeners.has(listener)) return;
		listeners.add(listener);
		this.#added++;
		this.#sole = listeners.size === 1 ? listener : undefined;
	}

	/**
	 * Whether any listener is subscribed.
	 *
	 * @example
	 * if (!delivery.listening()) console.log("events only change the agent's state");
	 */
	listening(): boolean {
		return this.#listeners !== undefined && this.#listeners.size > 0;
	}

	/**
	 * Unsubscribes a listener (false: it was not subscribed); one being delivered to finishes that event.
	 *
	 * @example
	 * delivery.remove(listener);
	 */
	remove(listener: AgentListener): boolean {
		const listeners = this.#listeners;
		if (!listeners?.delete(listener)) return false;
		if (listener === this.#deliveringTo) this.#deliveringToLeft = true;
		this.#sole = listeners.size === 1 ? listeners.values().next().value : undefined;
		return true;
	}

	/**
	 * Queues an event; delivered at once when nothing is in flight. Returns what
	 * {@link ListenerDelivery.pending} would return right after.
	 *
	 * @example
	 * delivery.event({ type: "agent_start" });
	 */
	event(event: AgentEvent): Promise<void> | undefined {
		// Nothing in flight (every token delta, when listeners keep up): delivered now, no step queued.
		if (this.#inFlight === 0) {
			this.#inFlight = 1;
			const delivery = this.#listen(event);
			this.#tail = delivery;
			if (endsSomething(event)) this.host.delivered(event, delivery);
			return this.#inFlight > 0 ? delivery : undefined;
		}
		// Not an async wrapper: the step's promise must be the listeners' own, as pi's emit is.
		this.#step(() => {
			const delivery = this.#listen(event);
			if (endsSomething(event)) this.host.delivered(event, delivery);
			return delivery;
		});
		return this.#tail;
	}

	/**
	 * Queues an event behind the steps in flight (a {@link ListenerDelivery.hold}, say) that is
	 * delivered only if `still()` says so when its turn comes.
	 *
	 * @example
	 * delivery.hold(() => save()); delivery.eventIf(question, () => !session.takenOver);
	 */
	eventIf(event: AgentEvent, still: () => boolean): void {
		if (this.#inFlight === 0) {
			if (still()) this.event(event);
			return;
		}
		this.#step(() => (still() ? this.#listen(event) : Promise.resolve()));
	}

	/**
	 * {@link ListenerDelivery.event} for a token delta (`message_update`), the event nearly every
	 * one is: its one state update is done here, and it ends nothing.
	 *
	 * @example
	 * const pending = delivery.delta({ type: "message_update", assistantMessageEvent, message });
	 */
	delta(event: MessageUpdateEvent): Promise<void> | undefined {
		if (this.#inFlight !== 0) return this.event(event);
		this.#inFlight = 1;
		this.state.streamingMessage = event.message;
		const delivery = this.#toListeners(event);
		this.#tail = delivery;
		return this.#inFlight > 0 ? delivery : undefined;
	}

	/**
	 * Queues a step that is not an event; it runs once everything before it was delivered.
	 *
	 * @example
	 * delivery.after(() => actor.send({ type: "delivered", barrier }));
	 */
	after(step: () => void): void {
		if (this.#inFlight === 0) {
			step();
			return;
		}
		this.#step(async () => {
			try {
				step();
			} catch (error) {
				// Reported, not rejected: every later step waits on this one.
				this.host.listenerFailed(describeError(error));
			} finally {
				this.#inFlight--;
			}
		});
	}

	/**
	 * Queues a wait: what is queued after it is delivered once `until` settles (a rejection is
	 * reported as a listener's failure).
	 *
	 * @example
	 * delivery.hold(() => session.saveNow(takeSnapshot)); // the next event reaches listeners once stored
	 */
	hold(until: () => Promise<void>): void {
		const wait = async () => {
			try {
				await until();
			} catch (error) {
				this.host.listenerFailed(describeError(error));
			} finally {
				this.#inFlight--;
			}
		};
		if (this.#inFlight === 0) {
			this.#inFlight = 1;
			this.#tail = wait();
			return;
		}
		this.#step(wait);
	}

	/**
	 * Undefined when every queued step is done; otherwise the promise of the last one. The
	 * stream actor waits on it after each event, as pi's loop awaits each `emit`.
	 *
	 * @example
	 * const pending = delivery.pending(); if (pending) await pending;
	 */
	pending(): Promise<void> | undefined {
		return this.#inFlight > 0 ? this.#tail : undefined;
	}

	/**
	 * How many events have begun to reach the listeners so far: unchanged between two readings
	 * while a listener (or a held step) has kept the same event all along.
	 *
	 * @example
	 * const before = delivery.progress(); setTimeout(() => console.log(delivery.progress() === before ? "held" : "moving"), 50);
	 */
	progress(): number {
		return this.#begun;
	}

	/** Queues a step behind the last one. Only called with a step in flight: when none is, callers run theirs at once. */
	#step(run: () => Promise<void>): void {
		this.#inFlight++;
		this.#tail = (this.#tail as Promise<void>).then(run);
	}

	/**
	 * Reduces the event into the agent's state, then awaits its listeners. A state update that
	 * throws is reported as a failure of the delivery (as a listener's is) and the listeners
	 * still get the event: a step's promise never rejects, since every later step waits on it.
	 */
	#listen(event: AgentEvent): Promise<void> {
		try {
			if (event.type === "message_update") this.state.streamingMessage = event.message;
			else this.host.reduce(event);
		} catch (error) {
			this.host.listenerFailed(describeError(error), event);
		}
		return this.#toListeners(event);
	}

	/**
	 * Calls the listeners in turn, each awaited, then ends the step. The sole listener is called
	 * here; what follows its call is {@link ListenerDelivery.#afterSole} when it returned nothing
	 * and no listener joined (nearly every token delta), {@link ListenerDelivery.#rest} otherwise.
	 */
	#toListeners(event: AgentEvent): Promise<void> {
		this.#begun++;
		const signal = this.signal;
		const sole = this.#sole;
		if (sole === undefined) {
			// Nobody listens: the step is over now, as an async `#rest` with nothing to await would
			// end it, and its promise is as settled (see docs/performance.md, "No listener").
			if (this.#listeners === undefined || this.#listeners.size === 0) {
				this.#inFlight--;
				return SETTLED;
			}
			return this.#rest(event, signal, undefined, undefined, 0, false);
		}
		const added = this.#added;
		this.#deliveringTo = sole;
		this.#deliveringToLeft = false;
		let answer: unknown;
		let threw = false;
		try {
			answer = sole(event, signal);
		} catch (error) {
			threw = true;
			this.host.listenerFailed(describeError(error), event);
		}
		// `await` of a value that is not an object takes one microtask, and so does a `then` on a
		// settled promise: the same timing, without an async function's suspended frame (about
		// 500 bytes a delta). An object or a function may be a thenable, whose `await` takes more.
		if (!threw && this.#added === added && typeof answer !== "object" && typeof answer !== "function") {
			this.#soleEvent = event;
			this.#soleSignal = signal;
			this.#soleAdded = added;
			return SETTLED.then((this.#afterSoleCallback ??= () => this.#afterSole()));
		}
		return this.#rest(event, signal, sole, answer, added, !threw);
	}

	/**
	 * Ends a delivery whose sole listener returned nothing, a microtask after its call, where
	 * `await` would have resumed. Listeners that joined within that microtask get the event as
	 * well; the step then settles two microtasks later than pi's would (a `then` that returns a
	 * promise adopts it), the one place where the timing differs, and only ever in that window.
	 */
	#afterSole(): Promise<void> | undefined {
		const event = this.#soleEvent as AgentEvent;
		const signal = this.#soleSignal as AbortSignal;
		const sole = this.#deliveringTo as AgentListener;
		// Not kept past the delivery: an idle agent would hold its last event and run's signal.
		this.#soleEvent = undefined;
		this.#soleSignal = undefined;
		this.#deliveringTo = undefined;
		if (this.#added === this.#soleAdded) {
			this.#inFlight--;
			return undefined;
		}
		return this.#rest(event, signal, sole, undefined, this.#soleAdded, false);
	}

	/** {@link ListenerDelivery.#afterSole} as a callback: made at the first delivery and kept, so an agent that never runs does not hold it. */
	#afterSoleCallback: (() => Promise<void> | undefined) | undefined;

	/**
	 * The delivery from the sole listener's answer on (`sole` undefined: with several listeners,
	 * from the first): awaits the answer when `awaitAnswer` (not when the call threw, or the
	 * answer was waited for already), then every listener not yet called, and ends the step.
	 */
	async #rest(event: AgentEvent, signal: AbortSignal, sole: AgentListener | undefined, answer: unknown, added: number, awaitAnswer: boolean): Promise<void> {
		try {
			// The listener already called, if any.
			let called: AgentListener | undefined;
			if (sole !== undefined) {
				if (awaitAnswer) {
					try {
						await answer;
					} catch (error) {
						this.host.listenerFailed(describeError(error), event);
					}
				}
				this.#deliveringTo = undefined;
				// Listeners subscribed while the only one ran join this event, as they would in an
				// iteration of the set: every entry after its own, which is the first unless it was
				// removed (an entry of it now is a new one, at the end, and gets the event again).
				if (this.#added === added) return;
				if (!this.#deliveringToLeft) called = sole;
			}
			for (const listener of this.#listeners ?? NO_LISTENERS) {
				if (listener === called) continue;
				try {
					await listener(event, signal);
				} catch (error) {
					this.host.listenerFailed(describeError(error), event);
				}
			}
		} finally {
			this.#inFlight--;
		}
	}
}

/** A settled promise: a `then` on it runs its callback a microtask later. */
const SETTLED: Promise<void> = Promise.resolve();

function endsSomething(event: AgentEvent): boolean {
	return event.type === "agent_end" || event.type === "auto_compaction_end";
}
