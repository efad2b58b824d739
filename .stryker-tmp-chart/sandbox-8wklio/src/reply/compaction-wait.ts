/**
 * `waitForCompactionRetry()` over the lifecycle machine: waiters resolve when the compaction
 * region returns to idle and are rejected with an `AbortError` when the subscription ends.
 */
// @ts-nocheck

import type { Actor } from "xstate";
import { ReplySubscriptionAbortedError } from "./errors.js";
import { isCompactingSnapshot, type replySubscriberMachine } from "./subscriber-machine.js";

/**
 * The waiters of one subscription.
 *
 * @example
 * const wait = new CompactionWait(lifecycle);
 * await wait.whenSettled(); // resolves when no compaction is in flight or pending
 */
export class CompactionWait {
	readonly #lifecycle: Actor<typeof replySubscriberMachine>;
	#waiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];

	constructor(lifecycle: Actor<typeof replySubscriberMachine>) {
		this.#lifecycle = lifecycle;
		lifecycle.subscribe(() => this.#settle());
	}

	/** See `ReplySubscription.waitForCompactionRetry`. */
	whenSettled(): Promise<void> {
		if (this.#ended()) return Promise.reject(new ReplySubscriptionAbortedError());
		return new Promise<void>((resolve, reject) => {
			if (this.#compacting()) {
				this.#waiters.push({ resolve, reject });
				return;
			}
			// A compaction may start synchronously right after the call: look once more.
			queueMicrotask(() => {
				if (this.#ended()) reject(new ReplySubscriptionAbortedError());
				else if (this.#compacting()) this.#waiters.push({ resolve, reject });
				else resolve();
			});
		});
	}

	#ended(): boolean {
		return this.#lifecycle.getSnapshot().status === "done";
	}

	#compacting(): boolean {
		return isCompactingSnapshot(this.#lifecycle.getSnapshot());
	}

	#settle(): void {
		if (this.#waiters.length === 0) return;
		const ended = this.#ended();
		if (!ended && this.#compacting()) return;
		const waiters = this.#waiters;
		this.#waiters = [];
		for (const waiter of waiters) {
			// Never resolve on unsubscribe: resolving would tell the caller the retry finished.
			if (ended) waiter.reject(new ReplySubscriptionAbortedError());
			else waiter.resolve();
		}
	}
}
