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
