/**
 * Delivering a loop run's events to the caller's sink the way pi 0.73.1's loop does: the sink is
 * called synchronously when its event is produced, and the loop awaits exactly what the sink
 * returned (`await emit(event)`), nothing wrapped around it. A JSON client that prints each event
 * as it comes therefore sees the same `message_update` snapshots as on pi, since the provider
 * keeps mutating its partial message while the loop is suspended, and the number of microtasks
 * per event decides how far it got.
 */
import type { AgentEvent } from "../types/agent.js";

/**
 * pi's event sink.
 *
 * @example
 * const sink: EventSink = (event) => console.log(event.type);
 */
export type EventSink = (event: AgentEvent) => Promise<void> | void;

function isThenable(value: unknown): value is PromiseLike<void> {
	return typeof (value as { then?: unknown } | null | undefined)?.then === "function";
}

/** The ordered delivery of one loop run's events to its sink. */
export class SinkDelivery {
	/** Steps queued or running. */
	#inFlight = 0;
	/** The last step's promise: what the next step waits for. Never rejects. */
	#tail: PromiseLike<void> | undefined;
	/** What the sink returned for the last event, when it returned a promise that has not settled. */
	#awaited: PromiseLike<void> | undefined;

	/**
	 * @param sink the caller's sink
	 * @param failed called once per event whose sink threw or rejected
	 * @param delivered called when an event's sink call has settled
	 */
	constructor(
		private readonly sink: EventSink,
		private readonly failed: (error: unknown) => void,
		private readonly delivered: (event: AgentEvent) => void,
	) {}

	/**
	 * Queues an event; the sink is called at once when nothing is in flight.
	 *
	 * @example
	 * delivery.event({ type: "agent_start" });
	 */
	event(event: AgentEvent): void {
		this.#step(() => this.#call(event));
	}

	/**
	 * Queues a step that is not an event; it runs once everything before it was delivered.
	 *
	 * @example
	 * delivery.after(() => actor.send({ type: "delivered", barrier }));
	 */
	after(step: () => void): void {
		this.#step(() => {
			step();
			return undefined;
		});
	}

	/**
	 * What the stream actor awaits after each event: the sink's own promise while it is pending
	 * (so the await takes the sink's time, as pi's `await emit(event)` does), or nothing.
	 * It may reject; the failure has already been reported through `failed`.
	 *
	 * @example
	 * await delivery.pending();
	 */
	pending(): PromiseLike<void> | undefined {
		if (this.#inFlight === 0) return undefined;
		return this.#awaited ?? this.#tail;
	}

	#step(run: () => PromiseLike<void> | undefined): void {
		if (this.#inFlight === 0) {
			const result = run();
			if (result === undefined) return;
			this.#inFlight++;
			this.#tail = this.#settled(result);
			return;
		}
		this.#inFlight++;
		this.#awaited = undefined;
		const previous = this.#tail ?? Promise.resolve();
		this.#tail = previous.then(() => {
			this.#inFlight--;
			const result = run();
			if (result === undefined) return undefined;
			this.#inFlight++;
			return this.#settled(result);
		});
	}

	/** A promise that settles with `result` but never rejects, and counts the step done. */
	#settled(result: PromiseLike<void>): PromiseLike<void> {
		return result.then(
			() => {
				this.#inFlight--;
				if (this.#awaited === result) this.#awaited = undefined;
			},
			() => {
				this.#inFlight--;
				if (this.#awaited === result) this.#awaited = undefined;
			},
		);
	}

	#call(event: AgentEvent): PromiseLike<void> | undefined {
		let result: unknown;
		try {
			result = this.sink(event);
		} catch (error) {
			this.failed(error);
			this.delivered(event);
			return undefined;
		}
		if (!isThenable(result)) {
			this.delivered(event);
			return undefined;
		}
		this.#awaited = result;
		result.then(
			() => this.delivered(event),
			(error: unknown) => {
				this.failed(error);
				this.delivered(event);
			},
		);
		return result;
	}
}
