/**
 * A run's cancellation. The run's `AbortSignal` is what listeners and `agent.signal` see; the
 * run's own parts hear of an abort through the controllers it aborts (its calls') and through
 * hooks (the stream actor's grace for a provider that ignores the abort), not through listeners
 * on that signal. Each call (a model call, a tool call) gets a controller of its own, aborted
 * with the run, so one call can be cancelled alone (a stalled stream, a tool's timeout, a
 * failing sibling) without aborting the run.
 */


/**
 * What the run's parts see of its cancellation (the actors' inputs carry this).
 *
 * @example
 * const onStop = (abort: RunAbortView) => abort.onAbort(() => console.log("run aborted"));
 */
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
	 * A controller of its own for the call (a model call or a tool call) about to be made,
	 * aborted with the run, also after the call is over, as pi's shared signal is (at once, if
	 * the run already is). Cancel that call alone with {@link RunAbortView.cancelCall}.
	 */
	callController(): AbortController;
	/** Cancels one call (a stalled stream, a tool's timeout), not the run: `call` is aborted with `reason`. */
	cancelCall(call: AbortController, reason: unknown): void;
}

const NOTHING = () => {};

/**
 * The run's cancellation: an `AbortController` for the run (same `signal` and `abort()`), with
 * hooks for the run's own parts and the controllers of its calls.
 *
 * @example
 * const abort: RunAbort | undefined = agent.actor.getSnapshot().context.run?.controller;
 * const remove = abort?.onAbort(() => console.log("stop the tools"));
 */
export class RunAbort implements RunAbortView {
	readonly #controller = new AbortController();
	/**
	 * The run's signal.
	 *
	 * @example await fetch(url, { signal: abort.signal });
	 */
	readonly signal: AbortSignal = this.#controller.signal;
	#aborted = false;
	#hooks: Set<() => void> | undefined;
	/** The controllers of the run's calls. */
	#calls: AbortController[] | undefined;

	/** Not data: a stored run gets a new one when it is restored (JSON leaves it out). */
	toJSON(): undefined {
		return undefined;
	}

	/** @example const stopped: boolean = abort.aborted; */
	get aborted(): boolean {
		return this.#aborted;
	}

	/**
	 * Aborts the run (once): its signal, its calls' controllers, then the hooks.
	 *
	 * @example
	 * abort.abort();
	 */
	abort(reason?: unknown): void {
		if (this.#aborted) return;
		this.#aborted = true;
		this.#controller.abort(reason);
		const runReason: unknown = this.signal.reason;
		if (this.#calls) for (const call of this.#calls) call.abort(runReason);
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
		const call = new AbortController();
		if (this.#aborted) call.abort(this.signal.reason);
		else (this.#calls ??= []).push(call);
		return call;
	}

	/** @example abort.cancelCall(call, new Error("stream stalled")); */
	cancelCall(call: AbortController, reason: unknown): void {
		call.abort(reason);
	}
}
