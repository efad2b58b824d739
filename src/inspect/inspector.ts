import type { ActorInspectionEvent, InspectableActorRef } from "../types/actor-shapes.js";
import { type DeltaSummaryRecord, type DroppedRecord, type InspectionRecord, toRecord, withBase } from "./records.js";
import { tapDeltas } from "../machines/delta-taps.js";
import { RingBuffer } from "./ring-buffer.js";

/** Options of {@link createAgentInspector}. */
export interface AgentInspectorOptions {
	/** Raw events held between flushes; a burst beyond this drops the oldest (default 20000). */
	capacity?: number | undefined;
	/** Records kept for late subscribers (the visualizer page opened mid-run; default 5000). */
	historySize?: number | undefined;
	/** Clock in epoch milliseconds (default `Date.now`); tests pass a fake one. */
	now?: (() => number) | undefined;
	/** Flush scheduling (default `setImmediate`); tests can flush by hand with `flush()`. */
	schedule?: ((flush: () => void) => void) | undefined;
}

/** Receives records in batches, in `seq` order, after each flush. */
export type InspectionListener = (records: readonly InspectionRecord[]) => void;

/** Counters of an inspector, for tests and for the visualizer's status line. */
export interface InspectorStats {
	/** Raw inspection events accepted. */
	seen: number;
	/** Raw events lost because a burst outran `capacity`. */
	dropped: number;
	/** Records produced. */
	records: number;
}

/**
 * An inspector for agent actors. Its `inspect` function is what XState calls on every
 * event, synchronously: it only stamps a sequence number and a time and pushes into a ring
 * buffer. Turning events into records (summaries of snapshots and events, never the whole
 * transcript) happens at flush time, once per tick, off the hot path.
 */
export interface AgentInspector {
	/**
	 * The observer for XState: `createActor(machine, { inspect: inspector.inspect })`, or
	 * `actor.system.inspect(inspector.inspect)`.
	 */
	readonly inspect: (event: ActorInspectionEvent) => void;
	/**
	 * Inspects an actor that is already running (the `Agent` facade starts its actor in its
	 * constructor): registers with its system and records the actor tree as it is now, so a
	 * viewer can draw it before the next event. Returns a function that detaches.
	 */
	attach(actor: InspectableActorRef): () => void;
	/** Listens for records; returns the unsubscribe function. */
	subscribe(listener: InspectionListener): () => void;
	/** The most recent records (up to `historySize`), oldest first. */
	history(): InspectionRecord[];
	/** Converts whatever is buffered now, synchronously. */
	flush(): void;
	readonly stats: InspectorStats;
}

interface Pending {
	seq: number;
	t: number;
	event: ActorInspectionEvent;
}

/** An actor that emits `message_update` to `on` listeners (the agent machine does). */
interface DeltaSource {
	on(type: "message_update", handler: (event: { assistantMessageEvent?: object }) => void): { unsubscribe(): void };
}

/**
 * Creates an {@link AgentInspector}. It speaks the `@statelyai/inspect` wire format (see
 * {@link forwardToStately}) and feeds the visualizer and NDJSON recordings.
 *
 * @example
 * const inspector = createAgentInspector();
 * const agent = new Agent({ ... });
 * inspector.attach(agent.actor);
 * inspector.subscribe((records) => {
 *   for (const record of records) if (record.type === "@xstate.microstep") console.log(record.transitions);
 * });
 *
 * @example
 * // Or from the start, for a machine you create yourself:
 * const actor = createActor(agentMachine, { input, inspect: inspector.inspect }).start();
 */
export function createAgentInspector(options: AgentInspectorOptions = {}): AgentInspector {
	const now = options.now ?? Date.now;
	const schedule =
		options.schedule ?? ((flush: () => void) => (typeof setImmediate === "function" ? setImmediate(flush) : setTimeout(flush, 0)));
	const pending = new RingBuffer<Pending>(options.capacity ?? 20_000);
	const history = new RingBuffer<InspectionRecord>(options.historySize ?? 5000);
	const listeners = new Set<InspectionListener>();
	const stats: InspectorStats = { seen: 0, dropped: 0, records: 0 };
	let seq = 0;
	let flushScheduled = false;
	let reportedDrops = 0;
	// Deltas are counted, not recorded: constant cost per delta, nothing at all when detached.
	const deltas = { count: 0, chars: 0, sessionId: "" };

	const flush = (): void => {
		flushScheduled = false;
		const batch: InspectionRecord[] = [];
		if (pending.dropped > reportedDrops) {
			const count = pending.dropped - reportedDrops;
			reportedDrops = pending.dropped;
			stats.dropped += count;
			batch.push(withBase<DroppedRecord>({ seq: ++seq, t: now(), sessionId: "", rootId: undefined }, { type: "@agentchart.dropped", count }));
		}
		for (let item = pending.shift(); item !== undefined; item = pending.shift()) {
			const record = toRecord(item.event, item.seq, item.t);
			if (record) batch.push(record);
		}
		if (deltas.count > 0) {
			batch.push(withBase<DeltaSummaryRecord>({ seq: ++seq, t: now(), sessionId: deltas.sessionId, rootId: undefined }, { type: "@agentchart.deltas", count: deltas.count, chars: deltas.chars }));
			deltas.count = 0;
			deltas.chars = 0;
		}
		if (batch.length === 0) return;
		stats.records += batch.length;
		for (const record of batch) history.push(record);
		for (const listener of listeners) {
			try {
				listener(batch);
			} catch (error) {
				// A broken sink (a closed socket, a full disk) must not stop the others.
				console.error("agentchart inspector: a listener failed", error);
			}
		}
	};

	const onDelta = (sessionId: string, event: { assistantMessageEvent?: object }): void => {
		deltas.count++;
		deltas.sessionId = sessionId;
		const delta = (event.assistantMessageEvent as { delta?: unknown } | undefined)?.delta;
		if (typeof delta === "string") deltas.chars += delta.length;
		if (!flushScheduled) {
			flushScheduled = true;
			schedule(flush);
		}
	};

	const inspect = (event: ActorInspectionEvent): void => {
		// Only emit actions are kept: the rest (assign is not even reported) would be noise.
		if (event.type === "@xstate.action" && event.action?.type !== "xstate.emit") return;
		stats.seen++;
		pending.push({ seq: ++seq, t: now(), event });
		if (!flushScheduled) {
			flushScheduled = true;
			schedule(flush);
		}
	};

	const announce = (actor: InspectableActorRef, rootId: string): void => {
		inspect({ type: "@xstate.actor", actorRef: actor, rootId });
		const snapshot = actor.getSnapshot() as { children?: Record<string, InspectableActorRef | undefined> };
		inspect({
			type: "@xstate.snapshot",
			actorRef: actor,
			rootId,
			snapshot: actor.getSnapshot(),
			event: { type: "@agentchart.attach" },
		});
		for (const child of Object.values(snapshot.children ?? {})) if (child) announce(child, rootId);
	};

	return {
		inspect,
		attach(actor) {
			const subscription = actor.system.inspect(inspect);
			// XState stamps rootId with the system's root; walk up to match it for our synthetic events.
			let root = actor;
			while (root._parent) root = root._parent;
			announce(actor, root.sessionId);
			// Token deltas travel beside the chart, without an inspection event. An Agent's machine
			// lets them be counted on its direct path (a tap); an `actor.on` listener would move every
			// delta onto XState's emitter. A bare machine has only that path, so it gets a listener.
			const sessionId = actor.sessionId;
			const onMachineDelta = (event: { assistantMessageEvent?: object }) => onDelta(sessionId, event);
			// A tap is only ever given deltas (message_update).
			const untap = tapDeltas(actor, onMachineDelta) ?? (actor as unknown as Partial<DeltaSource>).on?.("message_update", onMachineDelta).unsubscribe;
			return () => {
				subscription.unsubscribe();
				untap?.();
			};
		},
		subscribe(listener) {
			listeners.add(listener);
			return () => listeners.delete(listener);
		},
		history: () => history.toArray(),
		flush,
		stats,
	};
}
