/**
 * XState's callback actor logic (`fromCallback`) with the same contract, minus a process-wide
 * `WeakMap`. XState keeps each running callback actor's receivers and teardown in a `WeakMap`
 * keyed by the actor; the stream actor and the tool batch actor start one per model call and per
 * tool batch, and with a thousand agents in flight those `set`s and `delete`s took 3–4 % of the
 * CPU time (a weak map's entries are ephemerons, which every collection has to trace). Here the
 * instance's state lives on its own snapshot, which is the actor's alone.
 */
import type { ActorRefFrom, AnyActorScope, AnyEventObject, CallbackActorLogic, CallbackLogicFunction, CallbackSnapshot, EventObject, NonReducibleUnknown } from "xstate";

/** Where a snapshot keeps its running instance (a symbol: `getPersistedSnapshot` leaves it out). */
const INSTANCE = Symbol("agentchart.callbackInstance");

/** A running callback's listeners for the events it receives, and its teardown. */
interface Instance {
	receivers: Array<(event: EventObject) => void> | undefined;
	dispose: (() => void) | void;
}

type Snapshot<TInput> = CallbackSnapshot<TInput> & { [INSTANCE]: Instance | undefined };

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
		start(state: Snapshot<TInput>, scope: Scope): void {
			const { self, system, emit } = scope;
			const instance: Instance = { receivers: undefined, dispose: undefined };
			state[INSTANCE] = instance;
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
		transition(state: Snapshot<TInput>, event: EventObject): Snapshot<TInput> {
			const instance = state[INSTANCE];
			if (event.type === "xstate.stop") {
				const stopped = { status: "stopped", output: undefined, error: undefined, input: state.input, [INSTANCE]: undefined } as Snapshot<TInput>;
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
		getInitialSnapshot(_scope: unknown, input: TInput): Snapshot<TInput> {
			// The instance's slot is there from the start: one object shape before and after `start`.
			return { status: "active", output: undefined, error: undefined, input, [INSTANCE]: undefined } as Snapshot<TInput>;
		},
		getPersistedSnapshot(state: Snapshot<TInput>): CallbackSnapshot<TInput> {
			return { status: state.status, output: state.output, error: state.error, input: state.input } as CallbackSnapshot<TInput>;
		},
		restoreSnapshot(state: CallbackSnapshot<TInput>): Snapshot<TInput> {
			return { status: state.status, output: state.output, error: state.error, input: state.input, [INSTANCE]: undefined } as unknown as Snapshot<TInput>;
		},
	};
	return logic as unknown as CallbackActorLogic<TEvent, TInput, TEmitted>;
}
