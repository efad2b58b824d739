/**
 * Delivering events to an Agent's listeners the way pi 0.73.1 does, microtask for microtask:
 * each event is reduced into the agent's state, then every listener is awaited in turn
 * (`await listener(event, signal)`, even one that returns nothing). The next event waits for
 * the previous one. Code written against pi (pi's coding agent forwards events through a
 * promise chain of its own) depends on that timing, so it is kept exactly; what is faster here
 * is everything around it.
 *
 * Events arrive synchronously from the machine (and token deltas from the stream actor); the
 * first one finding the queue idle is delivered at once, so a listener runs in the same tick
 * as the event, as in pi. Steps that are not events (acknowledging a delivery barrier,
 * replacing the transcript after a compaction) queue behind the events before them.
 */
import type { AgentEvent } from "../types/agent.js";
import { describeError } from "../util/describe-error.js";

/** A subscriber: awaited, in subscription order, for every event. */
export type AgentListener = (event: AgentEvent, signal: AbortSignal) => Promise<void> | void;

/** What the delivery needs from its agent. */
export interface DeliveryHost {
	/** The state updates of one event, before its listeners (pi's order). */
	reduce(event: AgentEvent): void;
	/** The signal listeners receive. */
	signal(): AbortSignal;
	/** A listener threw or rejected. */
	listenerFailed(message: string): void;
	/** An event has reached every listener (its delivery promise is about to settle). */
	delivered(event: AgentEvent, delivery: Promise<void>): void;
}

/** The ordered delivery of one agent's events to its listeners. */
export class ListenerDelivery {
	/** Live, as pi's: a listener removed during delivery is skipped, one added joins the current event. */
	readonly listeners = new Set<AgentListener>();
	/** Steps queued or running. */
	#inFlight = 0;
	/** The last step's promise: what the next step waits for. */
	#tail: Promise<void> | undefined;

	constructor(private readonly host: DeliveryHost) {}

	/**
	 * Queues an event; delivered at once when nothing is in flight.
	 *
	 * @example
	 * delivery.event({ type: "agent_start" });
	 */
	event(event: AgentEvent): void {
		// Not an async wrapper: the step's promise must be the listeners' own, as pi's emit is.
		this.#step(() => {
			const delivery = this.#listen(event);
			this.host.delivered(event, delivery);
			return delivery;
		});
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
			} finally {
				this.#inFlight--;
			}
		});
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

	#step(run: () => Promise<void>): void {
		this.#inFlight++;
		const previous = this.#tail;
		this.#tail = this.#inFlight === 1 || previous === undefined ? run() : previous.then(run);
	}

	async #listen(event: AgentEvent): Promise<void> {
		try {
			this.host.reduce(event);
			const signal = this.host.signal();
			for (const listener of this.listeners) {
				try {
					await listener(event, signal);
				} catch (error) {
					this.host.listenerFailed(describeError(error));
				}
			}
		} finally {
			this.#inFlight--;
		}
	}
}
