/**
 * Runs user callbacks so that their failures never reach the agent: sync throws and async
 * rejections are reported to `onError` and swallowed. Deliveries can be tracked, so that a
 * flush can wait until every async block reply has settled.
 */
import type { SerialEventQueue } from "./serial-event-queue.js";
import type { MaybePromise } from "./types.js";

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
	return typeof (value as PromiseLike<unknown> | undefined)?.then === "function";
}

/**
 * A guard around callbacks.
 *
 * @example
 * const runner = new CallbackRunner((error, name) => console.warn(name, error));
 * runner.call("onBlockReply", () => channel.send("hi"), { track: true });
 * await runner.settleTracked(); // the send has settled (or failed and was reported)
 * runner.callMaybeAsync("onBlockReplyFlush", () => {}); // undefined: it ran synchronously
 */
export class CallbackRunner {
	readonly #onError: ((error: unknown, callback: string) => MaybePromise<void>) | undefined;
	readonly #tracked = new Set<Promise<unknown>>();

	constructor(onError?: (error: unknown, callback: string) => MaybePromise<void>) {
		this.#onError = onError;
	}

	/** True while tracked callbacks are unsettled. */
	get hasTracked(): boolean {
		return this.#tracked.size > 0;
	}

	/** Calls a callback without waiting for it; with `track`, `settleTracked()` will. */
	call(name: string, callback: () => unknown, options: { track?: boolean } = {}): void {
		try {
			const result = callback();
			if (!isPromiseLike(result)) return;
			const settled = Promise.resolve(result).catch((error: unknown) => this.report(error, name));
			if (!options.track) return;
			this.#tracked.add(settled);
			void settled.finally(() => this.#tracked.delete(settled));
		} catch (error) {
			this.report(error, name);
		}
	}

	/**
	 * Calls a callback; if it returned a promise, returns one that settles with it and never
	 * rejects. A synchronous callback gives `undefined`: nothing to wait for, not even a microtask.
	 */
	callMaybeAsync(name: string, callback: () => MaybePromise<void>): Promise<void> | undefined {
		try {
			const result = callback();
			if (!isPromiseLike(result)) return undefined;
			return Promise.resolve(result).then(
				() => undefined,
				(error: unknown) => this.report(error, name),
			);
		} catch (error) {
			this.report(error, name);
			return undefined;
		}
	}

	/**
	 * Hands a delivery to `queue`, behind what waits there, tracked (`settleTracked()` waits for
	 * it). With nothing waiting it is called at once and queued only if it answers with a promise
	 * (a synchronous callback costs one call: see docs/performance.md). `open` is asked when its
	 * turn comes: false drops it (the subscriber is gone).
	 *
	 * @example
	 * runner.deliverInOrder("onBlockReply", channel, () => chat.send(text), () => !unsubscribed);
	 */
	deliverInOrder(name: string, queue: SerialEventQueue, callback: () => MaybePromise<void>, open: () => boolean = () => true): void {
		if (!queue.busy) {
			if (!open()) return;
			const delivering = this.callMaybeAsync(name, callback);
			if (delivering) this.call(name, () => queue.run(() => delivering), { track: true });
			return;
		}
		this.call(name, () => queue.run(() => (open() ? this.callMaybeAsync(name, callback) : undefined)), { track: true });
	}

	/** Calls a callback and resolves when it has settled; never rejects. */
	async callAsync(name: string, callback: () => MaybePromise<void>): Promise<void> {
		await this.callMaybeAsync(name, callback);
	}

	/** Resolves when every tracked callback has settled, including ones tracked meanwhile. */
	async settleTracked(): Promise<void> {
		while (this.#tracked.size > 0) await Promise.allSettled([...this.#tracked]);
	}

	/** Reports an error; a reporter that throws, or rejects (an async logger whose request failed), is ignored. */
	report(error: unknown, callback: string): void {
		try {
			const reported: unknown = this.#onError?.(error, callback);
			// An error reporter that fails has nowhere left to report to; unhandled, its rejection would end the process.
			if (isPromiseLike(reported)) Promise.resolve(reported).catch(() => {});
		} catch {
			// See above.
		}
	}
}
