import { LeanActor } from "./lean-actor.js";
import type { MessageUpdateEvent } from "../actors/stream-protocol.js";
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
	// A lean actor makes its table when a second handler comes; the facade's own handler comes first.
	if (table === undefined && actor instanceof LeanActor) return false;
	if (!(table instanceof Map)) return true;
	for (const [type, handlers] of table as Map<string, Set<unknown>>) {
		if (handlers.size > (type === "*" ? 1 : 0)) return true;
	}
	return false;
}

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

interface MailboxNode {
	value: unknown;
	next: MailboxNode | null;
}

/**
 * Events sent to `actor` that it has not taken yet: a listener runs while the machine is still
 * taking the step that emitted its event, so what the listener sends waits in XState's mailbox
 * (a linked list whose head is the event being taken). The facade adds them to what it reads
 * back (queues, queue modes), so a listener that queues a message sees it queued at once, as
 * with pi. Reads an XState internal (`mailbox._current`, `_active`); if that is not there, it
 * answers none, and reads are as stale as the snapshot.
 *
 * @example
 * for (const event of eventsWaitingIn(machine)) if (event.type === "steer") steering.push(event.message);
 */
export function eventsWaitingIn<E>(actor: unknown): E[] {
	const mailbox = (actor as { mailbox?: { _current?: MailboxNode | null; _active?: boolean } }).mailbox;
	// A started mailbox holding an event is taking it; one not started yet (an actor taking over a
	// run, see LeanActor.handOver) holds only waiting events.
	const first = mailbox?._active === false ? (mailbox._current ?? null) : (mailbox?._current?.next ?? null);
	const waiting: E[] = [];
	for (let node = first; node; node = node.next) waiting.push(node.value as E);
	return waiting;
}
