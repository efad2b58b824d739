/**
 * Runs event handlers strictly in order. A handler runs synchronously when nothing is pending;
 * if it returns a promise, later events queue behind it. The queue's promise is what an `Agent`
 * awaits, so a handler that waits (a flush before a tool) holds the agent back as well.
 */

/**
 * An in-order handler queue.
 *
 * @example
 * const queue = new SerialEventQueue((error) => console.warn(error));
 * queue.run(() => flushThenStartTool()); // returns a promise while the flush is pending
 * queue.run(() => recordToolEnd());      // runs after it
 */
export class SerialEventQueue {
	readonly #onError: (error: unknown) => void;
	#pending: Promise<void> | undefined;

	constructor(onError: (error: unknown) => void) {
		this.#onError = onError;
	}

	/** True while a handler's promise has not settled: a new handler would wait for it. */
	get busy(): boolean {
		return this.#pending !== undefined;
	}

	/** Runs a handler in order; returns the promise the caller may await, if one is pending. */
	run(handler: () => Promise<void> | undefined): Promise<void> | undefined {
		if (this.#pending) return this.#track(this.#pending.then(() => this.#safely(handler)));
		const result = this.#safely(handler);
		return result ? this.#track(result) : undefined;
	}

	#safely(handler: () => Promise<void> | undefined): Promise<void> | undefined {
		try {
			return handler();
		} catch (error) {
			this.#onError(error);
			return undefined;
		}
	}

	#track(task: Promise<void>): Promise<void> {
		const tracked: Promise<void> = task
			.catch((error: unknown) => this.#onError(error))
			.finally(() => {
				if (this.#pending === tracked) this.#pending = undefined;
			});
		this.#pending = tracked;
		return tracked;
	}
}
