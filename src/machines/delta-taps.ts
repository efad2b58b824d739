/**
 * Token delta taps: what the inspector counts deltas with, beside an agent's listeners.
 */
import type { MessageUpdateEvent } from "../actors/stream-protocol.js";

/** A function that counts or records token deltas (`message_update` events); it must not throw. */
export type DeltaTap = (event: MessageUpdateEvent) => void;

/**
 * The taps a facade calls with each delta of its machine. The list is replaced, never changed
 * in place, when a tap comes or goes: a delta in flight finishes with the list it started with,
 * and the facade reads it with an indexed loop (no iterator per delta).
 */
export interface DeltaTaps {
	list: readonly DeltaTap[];
}

// Per agent machine actor: the taps its facade calls with every delta. An actor is in the map
// only when a facade feeds it (a bare machine's deltas go to `actor.on` listeners instead).
const deltaTaps = new WeakMap<object, DeltaTaps>();

/**
 * Called by the facade for each machine it creates: the returned holder is where it finds the
 * taps to call with each delta (usually none: a `length` check per delta).
 *
 * @example
 * const taps = acceptDeltaTaps(machine);
 * for (const tap of taps.list) tap(event);
 */
export function acceptDeltaTaps(actor: object): DeltaTaps {
	let taps = deltaTaps.get(actor);
	if (!taps) {
		taps = { list: [] };
		deltaTaps.set(actor, taps);
	}
	return taps;
}

/**
 * Taps the token deltas of an agent's machine beside its listeners, for observers that only
 * count them (the inspector). An `actor.on("message_update")` listener would do, but it moves
 * every delta onto XState's emitter (see {@link othersListenOn}); a tap leaves the direct
 * path alone. Returns undefined when `actor` is not fed by a facade: use `actor.on` then. A
 * tap given twice is tapped once (and untapped by either function returned).
 *
 * @example
 * const untap = tapDeltas(agent.actor, () => count++) ?? agent.actor.on("message_update", () => count++).unsubscribe;
 */
export function tapDeltas(actor: object, tap: DeltaTap): (() => void) | undefined {
	const taps = deltaTaps.get(actor);
	if (!taps) return undefined;
	if (!taps.list.includes(tap)) taps.list = [...taps.list, tap];
	return () => {
		taps.list = taps.list.filter((each) => each !== tap);
	};
}
