import type { AgentMachineEmitted } from "./types.js";

/**
 * The function that emits an event on an XState actor, to its `actor.on(...)` listeners,
 * outside any transition. Token deltas take this path beside the chart: the chart has nothing
 * to decide per token, and a transition per token (a snapshot, an action object, an inspection
 * record) costs more than the token. XState keeps this function on the actor's scope (it is
 * what its own `emit` action calls); it is read once per LLM call.
 *
 * @example
 * const relay = emitterOf(self);
 * relay({ type: "message_update", assistantMessageEvent, message });
 */
export function emitterOf(actor: unknown): (event: AgentMachineEmitted) => void {
	const emit = (actor as { _actorScope?: { emit?: unknown } })._actorScope?.emit;
	if (typeof emit !== "function") {
		throw new Error("agentchart: this XState version has no actor-scope emit (agentchart needs xstate ^5.33)");
	}
	return emit as (event: AgentMachineEmitted) => void;
}

/**
 * Whether anyone besides the agent's own facade listens for emitted events on `actor`
 * (`actor.on(...)`). The facade registers exactly one wildcard handler; while that is all,
 * token deltas can go straight to the facade's delivery and skip XState's emitter, which
 * copies its listener lists for every event. Reads the actor's listener table (XState keeps it
 * as `eventListeners`, a map from type to a set of handlers); if that is not there, it answers
 * true, and deltas take the emitter, which is always correct.
 *
 * @example
 * if (othersListenOn(machine)) emitterOf(machine)(event); else delivery.event(event);
 */
export function othersListenOn(actor: unknown): boolean {
	const table = (actor as { eventListeners?: unknown }).eventListeners;
	if (!(table instanceof Map)) return true;
	for (const [type, handlers] of table as Map<string, Set<unknown>>) {
		if (handlers.size > (type === "*" ? 1 : 0)) return true;
	}
	return false;
}
