/**
 * A run's cancellation. The run's `AbortSignal` is what listeners, tools and `agent.signal`
 * see; the run's own parts (the model call, the tool batch) are told through hooks instead of
 * listeners on that signal, because on Node 20 adding and removing an `abort` listener costs
 * more than a whole tool call's dispatch. The model calls get a signal that is not the run's,
 * so a stalled stream can be cancelled without aborting the run; the run's calls share it, one
 * after the other, until a call is cancelled (Node 20 takes about 2 µs to make an `AbortSignal`,
 * a tenth of a turn's CPU time; pi gives every call the run's signal).
 */

/** What the run's parts see of its cancellation (the actors' inputs carry this). */
export interface RunAbortView {
	/** The run's signal: aborted once, by `abort()` (or dispose, or a failing listener). */
	readonly signal: AbortSignal;
	/** Whether the run was aborted (its signal's `aborted`, without the signal's getters). */
	readonly aborted: boolean;
	/**
	 * Calls `hook` once when the run is aborted, after its signal (at once if it already is; a
	 * function added twice is called once). Returns a function that removes it.
	 */
	onAbort(hook: () => void): () => void;
	/**
	 * A controller for the model call about to be made: aborted with the run; cancel that call
	 * alone with {@link RunAbortView.cancelCall} (not by aborting it: the next call would get it).
	 * Give it back with {@link RunAbortView.endCall} when the call is over. The previous call's,
	 * when that call is over and was not cancelled.
	 */
	callController(): AbortController;
	/** The model call is over: its controller may serve the run's next call. */
	endCall(call: AbortController): void;
	/**
	 * Cancels the model call holding `call` (a stalled stream), not the run: `call` is aborted
	 * with `reason` and serves no later call.
	 */
	cancelCall(call: AbortController, reason: unknown): void;
}

const NOTHING = () => {};

/**
 * The run's cancellation: an `AbortController` for the run (same `signal` and `abort()`), with
 * hooks for the run's own parts and the model call's controller.
 *
 * @example
 * const abort = new RunAbort();
 * const remove = abort.onAbort(() => console.log("stop the tools"));
 * await fetch(url, { signal: abort.signal });
 * abort.abort(); // the signal aborts, then the hook runs
 */
export class RunAbort implements RunAbortView {
	readonly #controller = new AbortController();
	/**
	 * The run's signal. Read once: `AbortController.signal` and `AbortSignal.aborted` are
	 * getters that check their receiver, and the run's parts ask several times per tool call.
	 *
	 * @example await fetch(url, { signal: abort.signal });
	 */
	readonly signal: AbortSignal = this.#controller.signal;
	#aborted = false;
	#hooks: Set<() => void> | undefined;
	/** The model calls' controller: the run's calls take it in turn until one is cancelled. */
	#call: AbortController | undefined;
	/** A call holds {@link RunAbort.#call} now: a call made meanwhile gets a controller of its own. */
	#callInUse = false;
	/** The controllers of calls made while another held {@link RunAbort.#call}, until they end. */
	#ownCalls: Set<AbortController> | undefined;

	/** @example if (abort.aborted) return; */
	get aborted(): boolean {
		return this.#aborted;
	}

	/**
	 * Aborts the run (once): its signal, the model call's, then the hooks.
	 *
	 * @example
	 * abort.abort();
	 */
	abort(reason?: unknown): void {
		if (this.#aborted) return;
		this.#aborted = true;
		this.#controller.abort(reason);
		this.#call?.abort(this.signal.reason);
		if (this.#ownCalls) for (const call of this.#ownCalls) call.abort(this.signal.reason);
		const hooks = this.#hooks;
		this.#hooks = undefined;
		if (hooks) for (const hook of hooks) hook();
	}

	/** @example const remove = abort.onAbort(() => batch.stopAll()); */
	onAbort(hook: () => void): () => void {
		if (this.#aborted) {
			hook();
			return NOTHING;
		}
		(this.#hooks ??= new Set()).add(hook);
		return () => {
			this.#hooks?.delete(hook);
		};
	}

	/** @example const call = abort.callController(); streamFn(model, context, { signal: call.signal }); */
	callController(): AbortController {
		if (this.#callInUse) {
			const own = this.#newCall();
			if (!this.#aborted) (this.#ownCalls ??= new Set()).add(own);
			return own;
		}
		// An aborted one is aborted with the run, as a new one would be: a cancelled call's was dropped.
		this.#call ??= this.#newCall();
		this.#callInUse = true;
		return this.#call;
	}

	/** A controller for a model call: aborted at once when the run already is. */
	#newCall(): AbortController {
		const call = new AbortController();
		if (this.#aborted) call.abort(this.signal.reason);
		return call;
	}

	/** @example abort.endCall(call); */
	endCall(call: AbortController): void {
		if (this.#call === call) this.#callInUse = false;
		else this.#ownCalls?.delete(call);
	}

	/** @example abort.cancelCall(call, new Error("stream stalled")); */
	cancelCall(call: AbortController, reason: unknown): void {
		if (this.#call === call) {
			this.#call = undefined;
			this.#callInUse = false;
		} else this.#ownCalls?.delete(call);
		call.abort(reason);
	}
}
