/**
 * The emitters of agent chart actors: the function an actor's logic is given to emit events to
 * the actor's `actor.on(...)` listeners (the public `emit` of XState's actor scope), kept in
 * the snapshots of agentchart's interpreter, or recorded here by other logic. Token deltas take this path beside the chart: the chart
 * has nothing to decide per token, and a transition per token would cost more than the token.
 * An actor without one (the agent machine run directly by XState's interpreter, embedded by a
 * user) gets its deltas through the chart instead (`stream.delta` events).
 */
import type { EventObject } from "xstate";

const emitters = new WeakMap<object, (event: EventObject) => void>();

/**
 * Records the emitter an actor's logic was given (`scope.emit`).
 *
 * @example
 * getInitialSnapshot(scope, input) { registerEmitter(scope.self, scope.emit); ... }
 */
export function registerEmitter(actor: object, emit: (event: EventObject) => void): void {
	emitters.set(actor, emit);
}

/**
 * The emitter of `actor`: the one agentchart's interpreter keeps in its snapshots, or one
 * recorded for it, if any.
 *
 * @example
 * emitterOf(self)?.({ type: "message_update", message, assistantMessageEvent });
 */
export function emitterOf(actor: { getSnapshot(): unknown }): ((event: EventObject) => void) | undefined {
	const kept = (actor.getSnapshot() as { emitter?: unknown } | undefined)?.emitter;
	return typeof kept === "function" ? (kept as (event: EventObject) => void) : emitters.get(actor);
}
