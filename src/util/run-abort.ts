/**
 * A run's cancellation. The run's `AbortSignal` is what listeners and `agent.signal` see; the
 * run's own parts hear of an abort through the controllers it aborts (its calls') and through
 * hooks (the stream actor's grace for a provider that ignores the abort), not through listeners
 * on that signal: on Node 20 adding and removing an `abort` listener costs more than a whole
 * tool call's dispatch.
 *
 * The run's calls (model calls and tool calls) get signals that are not the run's, so one call
 * can be cancelled alone (a stalled stream, a tool's timeout, a failing sibling) without
 * aborting the run. A call's controller is its own while the call is in progress; once the call
 * has ended without being cancelled, the run's next call takes it (a tool call's, only if no
 * `abort` listener is left on it). Node 20 takes 1–5 µs to make an `AbortSignal` (it builds new
 * hidden classes for every one), more than a turn's chart steps; pi gives every call the run's
 * signal.
 */

import { getEventListeners } from "node:events";
import { keepShape } from "./keep-shape.js";
import { runLivedList } from "./run-lived.js";

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
	 * A controller for the call (a model call or a tool call) about to be made: aborted with the
	 * run; cancel that call alone with {@link RunAbortView.cancelCall} (not by aborting it: a
	 * later call could get it). Give it back with {@link RunAbortView.endCall} when the call is
	 * over. One that an earlier call of the run left clean, if there is one.
	 */
	callController(): AbortController;
	/**
	 * The call is over: its controller serves the run's next call. When the call's work may
	 * outlive it (`workMayOutlive`: a tool's, which may leave a child process or a request
	 * running), only if nothing listens for its abort when a later call wants it, so that the
	 * later call's cancel cannot stop that work. A model call's listener is its request's, over
	 * with the call (the SDKs remove theirs), and is not looked for.
	 */
	endCall(call: AbortController, workMayOutlive?: boolean): void;
	/**
	 * Cancels the call holding `call` (a stalled stream, a tool's timeout), not the run: `call`
	 * is aborted with `reason` and serves no later call.
	 */
	cancelCall(call: AbortController, reason: unknown): void;
}

const NOTHING = () => {};

/**
 * The run's cancellation: an `AbortController` for the run (same `signal` and `abort()`), with
 * hooks for the run's own parts and the controllers of its calls.
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
	/** The controllers of the calls in progress (a few at most: a list). */
	#held: AbortController[] | undefined;
	/** Controllers that calls left clean, for the run's next calls. */
	#free: AbortController[] | undefined;
	/**
	 * Controllers of calls whose work may outlive them (tool calls): handed on only if nothing
	 * listens on them by then. Looked at when one is wanted, not when its call ends: a run's last
	 * calls are never followed, and the look costs about a microsecond.
	 */
	#freeIfUnheard: AbortController[] | undefined;

	/** @example if (abort.aborted) return; */
	get aborted(): boolean {
		return this.#aborted;
	}

	/**
	 * Aborts the run (once): its signal, its calls' controllers (also the ones waiting for a
	 * call), then the hooks.
	 *
	 * @example
	 * abort.abort();
	 */
	abort(reason?: unknown): void {
		if (this.#aborted) return;
		this.#aborted = true;
		this.#controller.abort(reason);
		const runReason: unknown = this.signal.reason;
		if (this.#held) for (const call of this.#held) call.abort(runReason);
		if (this.#free) for (const call of this.#free) call.abort(runReason);
		if (this.#freeIfUnheard) for (const call of this.#freeIfUnheard) call.abort(runReason);
		this.#free = undefined;
		this.#freeIfUnheard = undefined;
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
		const call = this.#free?.pop() ?? this.#unheard() ?? this.#newCall();
		(this.#held ??= runLivedList()).push(call);
		return call;
	}

	/** A controller for a call: aborted at once when the run already is. */
	#newCall(): AbortController {
		const call = new AbortController();
		if (this.#aborted) call.abort(this.signal.reason);
		return call;
	}

	/** @example abort.endCall(call, true); */
	endCall(call: AbortController, workMayOutlive = false): void {
		// Not aborted: only the run's abort and cancelCall abort a call's controller, and neither
		// leaves it held (reading `signal.aborted` costs more than the rest: every signal has a
		// hidden class of its own, so no property read of one is ever cached).
		if (!this.#release(call) || this.#aborted) return;
		if (workMayOutlive) (this.#freeIfUnheard ??= runLivedList()).push(call);
		else (this.#free ??= runLivedList()).push(call);
	}

	/** A controller a tool call left that nothing listens on any more, if there is one (the others are let go). */
	#unheard(): AbortController | undefined {
		const waiting = this.#freeIfUnheard;
		if (!waiting) return undefined;
		for (let call = waiting.pop(); call; call = waiting.pop()) if (getEventListeners(call.signal, "abort").length === 0) return call;
		return undefined;
	}

	/** @example abort.cancelCall(call, new Error("stream stalled")); */
	cancelCall(call: AbortController, reason: unknown): void {
		// A call already over may have left its controller for the next one: it must not get it aborted.
		if (!this.#release(call) && !takeOut(this.#free, call)) takeOut(this.#freeIfUnheard, call);
		call.abort(reason);
	}

	/** Takes `call` off the calls in progress; false if it was not on them (ended already). */
	#release(call: AbortController): boolean {
		return takeOut(this.#held, call);
	}

	static {
		// Kept so that V8 keeps the map through a full collection while no run is in progress (keep-shape.ts).
		keepShape(new RunAbort());
	}
}

/** Takes `call` out of `list`; false if it is not there. Order does not matter: the last entry takes its place. */
function takeOut(list: AbortController[] | undefined, call: AbortController): boolean {
	const index = list ? list.indexOf(call) : -1;
	if (index < 0) return false;
	const entries = list as AbortController[];
	const last = entries.pop() as AbortController;
	if (index < entries.length) entries[index] = last;
	return true;
}
