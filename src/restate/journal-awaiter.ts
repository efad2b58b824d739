/**
 * The one place a session handler waits for Restate.
 *
 * The Restate SDK (1.15 and later, up to 1.17 at least) lets one awaited journal operation
 * wait for the runtime at a time: two `ctx.run` promises awaited side by side (parallel tool
 * calls, each awaited by its own tool actor) or a detached `ctx.cancellation().then(...)` make
 * the next await fail with "awaitNext already pending" (sdk-typescript issues #743 and #790),
 * and the invocation retries for ever. The SDK's answer is its combinators, which are also what
 * keeps a replay deterministic: `RestatePromise.race` resolves with the child whose completion
 * comes first in the journal, during the first execution and on every replay alike.
 *
 * So every journal operation of a session handler (each step's `ctx.run`, the inbox call, the
 * checkpoints) is awaited here: the awaiter races everything pending, plus the invocation's
 * cancellation, hands the winner to whoever waits for it, and races the rest again. A `ctx.run`
 * closure only starts when the runtime is awaited on it, so the race also starts every pending
 * step: parallel tool calls run in parallel. A race starts one macrotask after the last one
 * ended, so the steps that the winner's reaction creates (the next call of a batch) join it.
 * Signals from outside (the cancellation, the session's mailbox) are raced beside the steps
 * (`watch`), so they too are seen in journal order.
 */
import type { RestatePromise, TerminalError, internal } from "@restatedev/restate-sdk";
import type { RestateSdk } from "./sdk.js";

interface Waiting {
	readonly promise: RestatePromise<unknown>;
	readonly resolve: (value: unknown) => void;
	readonly reject: (error: unknown) => void;
}

/** A promise raced beside the steps without keeping the races going (a signal from outside). */
interface Standing {
	readonly promise: RestatePromise<unknown>;
	readonly onSettle: (value: unknown, failure: TerminalError | undefined) => void;
}

/** What one race returns: which entry settled, and how. */
interface Settled {
	index: number;
	standing: boolean;
	value?: unknown;
	failure?: TerminalError | undefined;
}

/**
 * Awaits a handler's journal operations one race at a time (see the module comment).
 *
 * @example
 * const awaiter = new JournalAwaiter(ctx as restate.internal.ContextInternal, restate.RestatePromise, () => controller.abort());
 * const [a, b] = await Promise.all([awaiter.await(ctx.run("a", stepA)), awaiter.await(ctx.run("b", stepB))]);
 */
export class JournalAwaiter {
	readonly #pending: Waiting[] = [];
	readonly #standing: Standing[] = [];
	readonly #promises: RestateSdk["RestatePromise"];
	#racing = false;
	#cancelled = false;

	/**
	 * @param ctx the handler's context (its `cancellation()` needs the handler option `explicitCancellation: true`)
	 * @param promises the `RestatePromise` of the SDK build that made `ctx` (its combinators know only their own build's promises)
	 * @param onCancel called once, when Restate cancels the invocation (`abort`)
	 */
	constructor(ctx: internal.ContextInternal, promises: RestateSdk["RestatePromise"], onCancel: () => void) {
		this.#promises = promises;
		this.watch(ctx.cancellation(), () => {
			this.#cancelled = true;
			onCancel();
		});
	}

	/** Whether the invocation was cancelled (as far as the races so far saw). */
	get cancelled(): boolean {
		return this.#cancelled;
	}

	/**
	 * Resolves with what `promise` resolves with, once a race of this awaiter saw it settle.
	 *
	 * @example
	 * const message = await awaiter.await(ctx.run("model 1", callTheModel));
	 */
	await<T>(promise: RestatePromise<T>): Promise<T> {
		return new Promise<T>((resolve, reject) => {
			this.#pending.push({ promise, resolve: resolve as (value: unknown) => void, reject });
			if (!this.#racing) {
				this.#racing = true;
				setImmediate(() => void this.#race());
			}
		});
	}

	/**
	 * Races `promise` beside the steps from now on (it does not keep a race going by itself):
	 * when it settles first, `onSettle` is called, in journal order with the steps' outcomes.
	 *
	 * @example
	 * awaiter.watch(mailbox.promise, () => (mailArrived = true));
	 */
	watch<T>(promise: RestatePromise<T>, onSettle: (value: T | undefined, failure: TerminalError | undefined) => void): void {
		this.#standing.push({ promise, onSettle: onSettle as Standing["onSettle"] });
	}

	async #race(): Promise<void> {
		try {
			while (this.#pending.length > 0) {
				const entries = this.#pending.slice();
				const standing = this.#standing.slice();
				const racers: RestatePromise<Settled>[] = [
					...entries.map((entry, index) => entry.promise.map((value, failure): Settled => ({ index, standing: false, value, failure }))),
					...standing.map((entry, index) => entry.promise.map((value, failure): Settled => ({ index, standing: true, value, failure }))),
				];
				const settled = await this.#promises.race(racers);
				if (settled.standing) {
					const entry = standing[settled.index] as Standing;
					this.#standing.splice(this.#standing.indexOf(entry), 1);
					entry.onSettle(settled.value, settled.failure);
					continue;
				}
				const entry = entries[settled.index] as Waiting;
				this.#pending.splice(this.#pending.indexOf(entry), 1);
				if (settled.failure) entry.reject(settled.failure);
				else entry.resolve(settled.value);
				// The winner's waiter reacts first (it may start the next step of a batch).
				await new Promise((resolve) => setImmediate(resolve));
			}
		} catch (error) {
			// The attempt is over (suspended, or the runtime failed it): nobody waits any more.
			for (const entry of this.#pending.splice(0)) entry.reject(error);
		} finally {
			this.#racing = false;
		}
	}
}
