/**
 * Which transition a state takes: the first enabled one of the active leaf, else of its
 * parent, and so on up (XState's order for a chart without parallel states).
 */
import type { EventObject } from "xstate";
import type { ChartNode, ChartTransition, GuardArgs } from "./compile.js";

/**
 * The transition `event` takes from `leaf`, if any. A guard that throws fails the step with
 * XState's message for it, which names the guard, the event and the state.
 *
 * @example
 * const transition = selectTransition(snapshot.leaf, snapshot.context, { type: "prompt" });
 */
export function selectTransition<C>(leaf: ChartNode<C>, context: C, event: EventObject): ChartTransition<C> | undefined {
	let args: GuardArgs<C> | undefined;
	for (let node: ChartNode<C> | undefined = leaf; node; node = node.parent) {
		const candidates = node.on.get(event.type);
		if (!candidates) continue;
		for (const transition of candidates) {
			const guard = transition.guard;
			if (!guard) return transition;
			let passed: boolean;
			try {
				passed = guard((args ??= { context, event }));
			} catch (error) {
				const name = transition.guardName;
				throw new Error(`Unable to evaluate guard ${name ? `'${name}' ` : ""}in transition for event '${event.type}' in state node '${node.def.id}':\n${(error as { message?: unknown } | undefined)?.message}`);
			}
			if (passed) return transition;
		}
	}
	return undefined;
}

/**
 * The eventless transition (`always`) `leaf` takes now, if any. Its guards' errors are not
 * wrapped (XState does not wrap them either).
 *
 * @example
 * const next = selectEventlessTransition(step.leaf, step.context, step.event);
 */
export function selectEventlessTransition<C>(leaf: ChartNode<C>, context: C, event: EventObject): ChartTransition<C> | undefined {
	let args: GuardArgs<C> | undefined;
	for (let node: ChartNode<C> | undefined = leaf; node; node = node.parent) {
		for (const transition of node.always) if (!transition.guard || transition.guard((args ??= { context, event }))) return transition;
	}
	return undefined;
}
