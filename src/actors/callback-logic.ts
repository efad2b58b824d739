/**
 * XState's callback actor logic (`fromCallback`) with the same contract, minus a process-wide
 * `WeakMap`. XState keeps each running callback actor's receivers and teardown in a `WeakMap`
 * keyed by the actor; the stream actor and the tool batch actor start one per model call and per
 * tool batch, and with a thousand agents in flight those `set`s and `delete`s took 3–4 % of the
 * CPU time (a weak map's entries are ephemerons, which every collection has to trace). Here the
 * instance's state lives on its own snapshot, which is the actor's alone.
 */
import type { ActorRefFrom, AnyActorScope, AnyEventObject, CallbackActorLogic, CallbackLogicFunction, CallbackSnapshot, EventObject, NonReducibleUnknown } from "xstate";
import { keepShape } from "../util/keep-shape.js";

/** A running callback's listeners for the events it receives, and its teardown. */
interface Instance {
	receivers: Array<(event: EventObject) => void> | undefined;
	dispose: (() => void) | void;
}

/**
 * A callback actor's snapshot: XState's fields, and the running instance (a class: one hidden
 * class for every snapshot, made without the runtime calls an object literal with a computed
 * key takes).
 */
class CallbackState<TInput> {
	/** The running instance, set by `start`: private, so no snapshot reader, JSON or persisting sees it. */
	#instance: Instance | undefined;
	readonly output: undefined = undefined;
	readonly error: unknown = undefined;
	constructor(
		readonly status: "active" | "done" | "error" | "stopped",
		readonly input: TInput,
	) {}

	get instance(): Instance | undefined {
		return this.#instance;
	}

	/** @example state.run({ receivers: undefined, dispose: undefined }); */
	run(instance: Instance): void {
		this.#instance = instance;
	}

	static {
		// Kept so that V8 keeps the map through a full collection while no actor runs (util/keep-shape.ts).
		keepShape(new CallbackState("stopped", undefined));
	}
}

/** What a callback actor's scope offers that the callback uses. */
interface Scope {
	self: { getSnapshot(): { status: string }; _parent?: unknown };
	system: AnyActorScope["system"];
	emit: (event: EventObject) => void;
}

/**
 * Actor logic for a callback, as XState's `fromCallback`: the callback gets `input`, `system`,
 * `self`, `sendBack` (events to the parent, dropped once the actor stopped), `receive` (events
 * sent to the actor) and `emit`, and returns its teardown, called when the actor stops.
 * Snapshots read as XState's (`status`, `output`, `error`, `input`); a persisted one leaves out
 * the running instance, and a restored actor's callback starts afresh.
 *
 * @example
 * const ticker = callbackLogic<{ type: "stop" }, { ms: number }>(({ input, sendBack, receive }) => {
 *   const timer = setInterval(() => sendBack({ type: "tick" }), input.ms);
 *   receive(() => clearInterval(timer));
 *   return () => clearInterval(timer);
 * });
 */
export function callbackLogic<TEvent extends EventObject, TInput = NonReducibleUnknown, TEmitted extends EventObject = EventObject>(
	callback: CallbackLogicFunction<TEvent, AnyEventObject, TInput, TEmitted>,
): CallbackActorLogic<TEvent, TInput, TEmitted> {
	const logic = {
		config: callback,
		start(state: CallbackState<TInput>, scope: Scope): void {
			const { self, system, emit } = scope;
			const instance: Instance = { receivers: undefined, dispose: undefined };
			state.run(instance);
			instance.dispose = callback({
				input: state.input,
				system,
				self: self as unknown as ActorRefFrom<CallbackActorLogic<TEvent, TInput, TEmitted>>,
				sendBack: (event) => {
					if (self.getSnapshot().status === "stopped") return;
					if (self._parent) (system as unknown as { _relay(from: unknown, to: unknown, event: EventObject): void })._relay(self, self._parent, event);
				},
				receive: (listener) => {
					(instance.receivers ??= []).push(listener as (event: EventObject) => void);
				},
				emit: emit as (event: TEmitted) => void,
			});
		},
		transition(state: CallbackState<TInput>, event: EventObject): CallbackState<TInput> {
			const instance = state.instance;
			if (event.type === "xstate.stop") {
				const stopped = new CallbackState("stopped", state.input);
				if (instance) {
					instance.receivers = undefined;
					instance.dispose?.();
				}
				return stopped;
			}
			const receivers = instance?.receivers;
			if (receivers) for (const receiver of receivers) receiver(event);
			return state;
		},
		getInitialSnapshot(_scope: unknown, input: TInput): CallbackState<TInput> {
			return new CallbackState("active", input);
		},
		getPersistedSnapshot(state: CallbackState<TInput>): CallbackSnapshot<TInput> {
			return { status: state.status, output: state.output, error: state.error, input: state.input } as CallbackSnapshot<TInput>;
		},
		restoreSnapshot(state: CallbackSnapshot<TInput>): CallbackState<TInput> {
			return new CallbackState(state.status, state.input);
		},
	};
	return logic as unknown as CallbackActorLogic<TEvent, TInput, TEmitted>;
}
