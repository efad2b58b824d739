import type { ActorInspectionEvent, InspectableActorRef } from "../types/actor-shapes.js";
import { type DeltaSegment, type DeltaSummaryRecord, type DroppedRecord, type InspectionRecord, type TurnPosition, toRecord, withBase } from "./records.js";
import { type RestoredEvent, restoredEvents } from "./restore.js";
import type { AgentContextSummary } from "./summarize.js";
import { tapDeltas } from "../machines/delta-taps.js";
import { LiveActors } from "./live-actors.js";
import { BoundedLog, RingBuffer, approximateJsonBytes } from "./ring-buffer.js";
import type { PreviewLimits } from "./summarize.js";
import { parentOf } from "../machines/xstate-internals.js";
import { checkInspectorOptions } from "./options.js";
import { shown } from "../agent-input.js";

/** The default bound of an inspector's kept records, in bytes (`historyBytes`). */
const DEFAULT_HISTORY_BYTES = 64 * 1024 * 1024;

/**
 * Options of {@link createAgentInspector}.
 *
 * @example
 * const options: AgentInspectorOptions = { historySize: 5_000, payload: { stringLength: 200 } };
 * const inspector = createAgentInspector(options);
 */
export interface AgentInspectorOptions {
	/** Raw events held between flushes; a burst beyond this drops the oldest (default 20000). */
	capacity?: number | undefined;
	/** Records kept for late subscribers (the visualizer page opened mid-run; default 5000). */
	historySize?: number | undefined;
	/**
	 * The most the kept records may take, in bytes of their JSON, about (default 64 MiB): a long
	 * session whose records carry large tool results keeps fewer of them rather than growing to
	 * `historySize` times the largest record (32,000 characters each by the default `payload`).
	 */
	historyBytes?: number | undefined;
	/** Clock in epoch milliseconds (default `Date.now`); tests pass a fake one. */
	now?: (() => number) | undefined;
	/** Flush scheduling (default `setImmediate`); tests can flush by hand with `flush()`. */
	schedule?: ((flush: () => void) => void) | undefined;
	/**
	 * How much of each event's payload (messages, tool arguments and results) a record keeps;
	 * the default (`EVENT_PREVIEW_LIMITS`: strings up to 4,000 characters, 8 levels deep) shows
	 * a conversation whole. Raise it to read longer tool results in the visualizer.
	 */
	payload?: Partial<PreviewLimits> | undefined;
}

/**
 * Receives records in batches, in `seq` order, after each flush.
 *
 * @example
 * const log: InspectionListener = (records) => { for (const record of records) console.log(record.seq, record.type); };
 * const unsubscribe = inspector.subscribe(log);
 */
export type InspectionListener = (records: readonly InspectionRecord[]) => void;

/**
 * Counters of an inspector, for tests and for the visualizer's status line.
 *
 * @example
 * const { seen, dropped, records }: InspectorStats = inspector.stats;
 * if (dropped > 0) console.warn(`${dropped} of ${seen} inspection events dropped`);
 */
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
 *
 * @example
 * const inspector: AgentInspector = createAgentInspector();
 * const detach = inspector.attach(agent.actor);
 * inspector.subscribe((records) => console.log(records.map((record) => record.type)));
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
	 * viewer can draw it before the next event. An agent that already holds a transcript or a
	 * run in progress (restored with `Agent.load`, waiting for approval) has it told as records
	 * marked `restored`: its last 200 messages, the run's start and turns, and its calls still
	 * open, waiting for approval asked again (timed from now). Returns a function that detaches.
	 * Attached to an actor it already inspects, it does not inspect it twice: it stays attached
	 * until every function returned has been called. Attached again after a detach, it tells only
	 * what the agent did meanwhile.
	 *
	 * @example
	 * const agent = await Agent.load({ store, sessionId: "ops-7", initialState: { tools } });
	 * const detach = inspector.attach(agent.actor); // the transcript and `approval_requested` for each waiting call
	 */
	attach(actor: InspectableActorRef): () => void;
	/** Listens for records; returns the unsubscribe function. */
	subscribe(listener: InspectionListener): () => void;
	/**
	 * The most recent records (up to `historySize`), oldest first, preceded by the creation
	 * record and latest snapshot of each actor still alive whose records are older: a page that
	 * connects late still knows the agent and where it is.
	 */
	history(): InspectionRecord[];
	/** Converts whatever is buffered now, synchronously. */
	flush(): void;
	readonly stats: InspectorStats;
}

/** A raw event waiting for the flush, or the deltas that streamed before the next one. */
type Pending =
	| { seq: number; t: number; event: ActorInspectionEvent; actorSnapshot?: unknown; deltas?: undefined; restored?: { turn?: TurnPosition | undefined } | undefined }
	| { seq: number; t: number; event?: undefined; deltas: DeltaTotals };

/** Deltas summed since the last inspection event (see {@link DeltaSummaryRecord}). */
interface DeltaTotals {
	sessionId: string;
	count: number;
	chars: number;
	segments: DeltaSegment[];
	/** Deltas of the last segment not yet joined to its text (see {@link joinDeltas}). */
	parts: string[];
	/** The last segment's update type and content index, as the deltas carry them. */
	lastType?: unknown;
	lastIndex?: unknown;
}

/** Deltas joined at a time: a segment's text is then a few flat strings, not one string node per delta. */
const JOIN_EVERY = 256;

/**
 * Joins the deltas waiting to the last segment's text. Appending each delta to the text would make
 * one string node per delta, all alive until the next flush, which every young-generation
 * collection while the message streams copies again (see docs/performance.md, "Inspector").
 */
function joinDeltas(deltas: DeltaTotals): void {
	const last = deltas.segments[deltas.segments.length - 1];
	if (!last || deltas.parts.length === 0) return;
	last.text += deltas.parts.join("");
	deltas.parts.length = 0;
}

/** An actor's snapshot, or undefined while XState is still creating it (its development build throws then). */
function snapshotNow(actor: { getSnapshot(): unknown }): unknown {
	try {
		return actor.getSnapshot();
	} catch {
		return undefined;
	}
}

function contextOf(actor: { getSnapshot(): unknown }): unknown {
	return (snapshotNow(actor) as { context?: unknown } | undefined)?.context;
}

function isAgentSummary(value: unknown): value is AgentContextSummary {
	return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "agent";
}

/**
 * Stamps each `turn_start` with the turn it started, from the snapshot that ends its step (the
 * next snapshot of the same actor: XState reports a step's emitted events before its
 * snapshot, and a step's records all reach one flush). A viewer then numbers turns as the
 * agent does, not by counting the `turn_start`s it happens to hold.
 */
function numberTurns(batch: readonly InspectionRecord[]): void {
	const next = new Map<string, AgentContextSummary>();
	for (let index = batch.length - 1; index >= 0; index--) {
		const record = batch[index];
		if (record?.type === "@xstate.snapshot" && isAgentSummary(record.snapshot.context)) next.set(record.sessionId, record.snapshot.context);
		if (record?.type !== "@agentchart.emitted" || record.event.type !== "turn_start" || record.turn !== undefined) continue;
		const context = next.get(record.sessionId);
		const turn = context?.run?.turn;
		if (context?.runs !== undefined && turn !== undefined) record.turn = { run: context.runs, turn };
	}
}

/** An actor attached: what ends its inspection, and how many attachments hold it. */
interface Attachment {
	actor: InspectableActorRef;
	holders: number;
	end: () => void;
}

/** Creation events of actors a burst pushed out, kept at most until the next flush. */
const MAX_EVICTED_ACTORS = 1000;

/** Characters of delta text one record carries; beyond it deltas are only counted. */
const MAX_DELTA_TEXT = 64_000;

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
 * const agent = new Agent({ initialState: { model, tools }, streamFn });
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
	checkInspectorOptions(options);
	const now = options.now ?? Date.now;
	const schedule =
		options.schedule ?? ((flush: () => void) => (typeof setImmediate === "function" ? setImmediate(flush) : setTimeout(flush, 0)));
	const pending = new RingBuffer<Pending>(options.capacity ?? 20_000);
	// Actors' creation events a burst pushed out of `pending` before a flush: kept, since without
	// its creation record a page or recording cannot tell which actor is the agent (it showed "no
	// agent seen" for the rest of the session). Older than everything pending, they lead the next
	// batch; a burst that spawns without end keeps the newest (dead children are the oldest).
	const evictedActors: Pending[] = [];
	const hold = (item: Pending): void => {
		const overwritten = pending.push(item);
		if (overwritten?.event?.type !== "@xstate.actor") return;
		if (evictedActors.push(overwritten) > MAX_EVICTED_ACTORS) evictedActors.shift();
	};
	const history = new BoundedLog<InspectionRecord>(options.historySize ?? 5000, options.historyBytes ?? DEFAULT_HISTORY_BYTES, approximateJsonBytes);
	const live = new LiveActors();
	const listeners = new Set<InspectionListener>();
	const stats: InspectorStats = { seen: 0, dropped: 0, records: 0 };
	// Actors detached from while records of theirs wait for the flush: forgotten as live once
	// those are noted (see LiveActors.forget).
	const detached = new Set<string>();
	const forgetDetached = (): void => {
		for (const sessionId of detached) live.forget(sessionId);
		detached.clear();
	};
	let seq = 0;
	let flushScheduled = false;
	let reportedDrops = 0;
	// Deltas are summed, not recorded one by one: constant cost per delta, nothing at all when
	// detached. A sum is closed when the next inspection event comes, so records stay in order.
	let deltas: DeltaTotals | undefined;
	let deltaText = 0;
	const toDeltaRecord = (item: { seq: number; t: number; deltas: DeltaTotals }): DeltaSummaryRecord =>
		withBase<DeltaSummaryRecord>(
			{ seq: item.seq, t: item.t, sessionId: item.deltas.sessionId, rootId: undefined },
			{ type: "@agentchart.deltas", count: item.deltas.count, chars: item.deltas.chars, segments: item.deltas.segments },
		);
	const closeDeltas = (): void => {
		if (!deltas) return;
		joinDeltas(deltas);
		hold({ seq: ++seq, t: now(), deltas });
		deltas = undefined;
		deltaText = 0;
	};

	const flush = (): void => {
		flushScheduled = false;
		const batch: InspectionRecord[] = [];
		closeDeltas();
		const kept = evictedActors.splice(0);
		const droppedSince = pending.dropped - reportedDrops - kept.length;
		reportedDrops = pending.dropped;
		for (let item = kept.shift() ?? pending.shift(); item !== undefined; item = kept.shift() ?? pending.shift()) {
			if (item.deltas) {
				batch.push(toDeltaRecord(item));
				continue;
			}
			const record = toRecord(item.event, item.seq, item.t, "actorSnapshot" in item ? { payload: options.payload, actorSnapshot: item.actorSnapshot } : { payload: options.payload });
			if (record?.type === "@agentchart.emitted" && item.restored) {
				record.restored = true;
				if (item.restored.turn) record.turn = item.restored.turn;
			}
			if (record) batch.push(record);
		}
		// After the records kept: its number is the next one, and a batch (like `history()`, which
		// puts the live actors numbered before its first record ahead of it) is in `seq` order.
		if (droppedSince > 0) {
			stats.dropped += droppedSince;
			batch.push(withBase<DroppedRecord>({ seq: ++seq, t: now(), sessionId: "", rootId: undefined }, { type: "@agentchart.dropped", count: droppedSince }));
		}
		if (batch.length === 0) {
			forgetDetached();
			return;
		}
		numberTurns(batch);
		stats.records += batch.length;
		for (const record of batch) {
			history.push(record);
			live.note(record);
			// An attached actor that ended (a disposed agent) is let go: held, it kept its whole
			// transcript alive in a long-lived inspector until the program detached it.
			if (record.type === "@xstate.snapshot" && record.snapshot.status !== "active") release(attachments.get(record.sessionId));
		}
		forgetDetached();
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
		let open = deltas;
		if (open === undefined || open.sessionId !== sessionId) {
			if (open) closeDeltas();
			open = deltas = { sessionId, count: 0, chars: 0, segments: [], parts: [], lastType: undefined, lastIndex: undefined };
		}
		open.count++;
		const update = event.assistantMessageEvent as { type?: unknown; delta?: unknown; contentIndex?: unknown } | undefined;
		const delta = update?.delta;
		if (typeof delta === "string") {
			open.chars += delta.length;
			if (deltaText < MAX_DELTA_TEXT) {
				deltaText += delta.length;
				const type = update?.type;
				const contentIndex = update?.contentIndex;
				// Consecutive deltas of a block are joined, a few hundred at a time.
				if (type === open.lastType && contentIndex === open.lastIndex && open.segments.length > 0) {
					if (open.parts.push(delta) === JOIN_EVERY) joinDeltas(open);
				} else {
					joinDeltas(open);
					open.lastType = type;
					open.lastIndex = contentIndex;
					const kind = type === "thinking_delta" ? "thinking" : type === "toolcall_delta" ? "toolcall" : "text";
					open.segments.push({ kind, contentIndex: typeof contentIndex === "number" ? contentIndex : 0, text: delta });
				}
			}
		}
		if (!flushScheduled) {
			flushScheduled = true;
			schedule(flush);
		}
	};

	const inspect = (event: ActorInspectionEvent): void => {
		// Only emit actions are kept: the rest (assign is not even reported) would be noise.
		if (event.type === "@xstate.action" && event.action?.type !== "xstate.emit") return;
		stats.seen++;
		if (deltas) closeDeltas();
		// XState reports an actor before its first snapshot: keep what it has now (usually nothing),
		// not what it has at flush time.
		if (event.type === "@xstate.actor") hold({ seq: ++seq, t: now(), event, actorSnapshot: snapshotNow(event.actorRef) });
		else hold({ seq: ++seq, t: now(), event });
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

	// Each actor this inspector detached from, with its context then: attached again, it re-tells
	// only what came since (what it heard before is in its history, its pages and recordings).
	const toldOnDetach = new WeakMap<InspectableActorRef, unknown>();

	// An agent found with a transcript, or mid-run (restored by `Agent.load`, waiting for a
	// person), emits nothing until something happens: what it holds is told now, as the events
	// that would have shown it, marked restored.
	const tell = (actor: InspectableActorRef, rootId: string, restored: readonly RestoredEvent[]): void => {
		for (const { event, turn, streamed } of restored) {
			stats.seen++;
			if (deltas) closeDeltas();
			hold({ seq: ++seq, t: now(), event: { type: "@xstate.action", actorRef: actor, rootId, action: { type: "xstate.emit", params: { event } } }, restored: { turn } });
			// What a reply streaming now had streamed, told as the delta record that would have carried it.
			if (streamed && streamed.length > 0) {
				let chars = 0;
				for (const segment of streamed) chars += segment.text.length;
				hold({ seq: ++seq, t: now(), deltas: { sessionId: actor.sessionId, count: 0, chars, segments: streamed, parts: [], lastType: undefined, lastIndex: undefined } });
			}
		}
	};

	// Attaches for real: the system's inspection, the actor tree and what it holds, its deltas.
	const start = (actor: InspectableActorRef): (() => void) => {
		detached.delete(actor.sessionId);
		const subscription = actor.system.inspect(inspect);
		// XState stamps rootId with the system's root; walk up to match it for our synthetic events.
		let root = actor;
		for (let parent = parentOf(root as never); parent; parent = parentOf(parent)) root = parent as never;
		const restored = restoredEvents(contextOf(actor), toldOnDetach.get(actor));
		tell(actor, root.sessionId, restored.filter((told) => told.ending === true));
		announce(actor, root.sessionId);
		tell(actor, root.sessionId, restored.filter((told) => told.ending !== true));
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
			toldOnDetach.set(actor, contextOf(actor));
			if (flushScheduled) detached.add(sessionId);
			else live.forget(sessionId);
		};
	};

	// Each actor attached (by its session id, unique in the process, which its records carry), with
	// how many attachments hold it: attached again (attachVisualizer given an inspector the program
	// attached already, for a recording), it is inspected once, not twice.
	const attachments = new Map<string, Attachment>();
	const release = (attachment: Attachment | undefined): void => {
		if (!attachment || attachments.get(attachment.actor.sessionId) !== attachment) return;
		attachments.delete(attachment.actor.sessionId);
		attachment.end();
	};

	return {
		inspect,
		attach(actor) {
			if (typeof actor !== "object" || actor === null || typeof (actor as { system?: { inspect?: unknown } }).system?.inspect !== "function") {
				throw new TypeError(`inspector.attach(actor): expected an XState actor (an Agent's agent.actor, or createActor(...) of a machine), got ${shown(actor)}`);
			}
			let attachment = attachments.get(actor.sessionId);
			if (attachment?.actor !== actor) {
				attachment = { actor, holders: 0, end: start(actor) };
				attachments.set(actor.sessionId, attachment);
			}
			attachment.holders++;
			const held = attachment;
			let holding = true;
			return () => {
				if (!holding) return;
				holding = false;
				if (--held.holders === 0) release(held);
			};
		},
		subscribe(listener) {
			// Checked here, not when the next batch fails to call it inside a flush.
			if (typeof listener !== "function") throw new TypeError(`inspector.subscribe takes a function of the records, got ${listener === null ? "null" : typeof listener}`);
			listeners.add(listener);
			return () => listeners.delete(listener);
		},
		history: () => {
			const records = history.toArray();
			const first = records[0];
			return first ? [...live.before(first.seq), ...records] : records;
		},
		flush,
		stats,
	};
}
