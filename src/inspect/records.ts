import { activeNodeIds, microstepTransitions, parentOf } from "../machines/xstate-internals.js";
import type { ActorInspectionEvent, InspectableActorRef } from "../types/actor-shapes.js";
import { type AgentContextSummary, type PreviewJson, type PreviewLimits, previewValue, summarizeContext, summarizeEvent } from "./summarize.js";

/**
 * The `@statelyai/inspect` protocol version our records claim. Records are that package's
 * wire format (`@xstate.actor` / `@xstate.event` / `@xstate.snapshot`), so a Stately
 * inspector accepts them as they are; the extra fields (`seq`, `t`, ...) are ignored there.
 *
 * @example
 * console.log(`records in @statelyai/inspect ${STATELY_PROTOCOL_VERSION} format`);
 */
export const STATELY_PROTOCOL_VERSION = "0.7.2";

/**
 * Fields every record has. `sessionId` identifies the actor (`x:0`), `seq` orders records.
 *
 * @example
 * const order = (a: RecordBase, b: RecordBase) => a.seq - b.seq;
 */
export interface RecordBase {
	/** Strictly increasing per inspector, from 1. */
	seq: number;
	/** Epoch milliseconds when the event happened (not when it was serialised). */
	t: number;
	sessionId: string;
	rootId: string | undefined;
	/** Stately wire-format fields: `createdAt` is a string of epoch ms, `id` is always null. */
	createdAt: string;
	id: null;
	_version: string;
}

/**
 * An actor's status, as XState reports it.
 *
 * @example
 * const status: ActorStatus = summarizeSnapshot(agent.actor.getSnapshot()).status; // "active"
 */
export type ActorStatus = "active" | "done" | "error" | "stopped";

/**
 * A summarised snapshot: value and status exactly, the context summarised.
 *
 * @example
 * const summary: SnapshotSummary = summarizeSnapshot(agent.actor.getSnapshot());
 * console.log(summary.status, summary.value);
 */
export interface SnapshotSummary {
	status: ActorStatus;
	value?: PreviewJson | undefined;
	context?: AgentContextSummary | PreviewJson | undefined;
	/** Child actor ids (`stream`, `tools`). */
	children?: string[] | undefined;
	output?: PreviewJson | undefined;
	error?: PreviewJson | undefined;
}

/**
 * An actor was created (or found running when the inspector attached).
 *
 * @example
 * const actors = inspector.history().filter((record): record is ActorRecord => record.type === "@xstate.actor");
 * console.log(actors.map((actor) => `${actor.name} (${actor.snapshot.status})`));
 */
export interface ActorRecord extends RecordBase {
	type: "@xstate.actor";
	/** The machine id for machine actors, otherwise the actor id. */
	name: string;
	/** The actor's id in its parent (`stream`, `tools`). */
	actorId: string;
	parentId?: string | undefined;
	/** The implementation's name in `setup({ actors })`, when known. */
	src?: string | undefined;
	/** `JSON.stringify` of a machine's config, once per actor (what Stately draws). */
	definition?: string | undefined;
	snapshot: SnapshotSummary;
}

/**
 * An event was delivered to an actor.
 *
 * @example
 * const sent = inspector.history().filter((record): record is EventRecord => record.type === "@xstate.event");
 * console.log(sent.map((record) => record.event.type)); // ["prompt", "stream.start", ...]
 */
export interface EventRecord extends RecordBase {
	type: "@xstate.event";
	sourceId?: string | undefined;
	event: { type: string; [key: string]: PreviewJson };
}

/**
 * An actor's snapshot after it processed an event.
 *
 * @example
 * const last = inspector.history().findLast((record): record is SnapshotRecord => record.type === "@xstate.snapshot");
 * console.log(last?.activeIds, last?.snapshot.value);
 */
export interface SnapshotRecord extends RecordBase {
	type: "@xstate.snapshot";
	event: { type: string };
	snapshot: SnapshotSummary;
	/** Ids of the active state nodes, root first (machines only). */
	activeIds?: string[] | undefined;
}

/**
 * One transition the machine took. `edgeId` matches {@link StatechartEdge.id}.
 *
 * @example
 * if (record.type === "@xstate.microstep") {
 *   for (const transition of record.transitions) console.log(transition.eventType, transition.edgeId);
 * }
 */
export interface TakenTransition {
	edgeId: string;
	sourceId: string;
	targetIds: string[];
	eventType: string;
}

/**
 * A microstep: the transitions taken for one event or one eventless step (not in Stately's protocol).
 *
 * @example
 * const steps = inspector.history().filter((record): record is MicrostepRecord => record.type === "@xstate.microstep");
 * console.log(steps.flatMap((step) => step.transitions.map((transition) => `${transition.sourceId} → ${transition.targetIds.join(",")}`)));
 */
export interface MicrostepRecord extends RecordBase {
	type: "@xstate.microstep";
	event: { type: string };
	transitions: TakenTransition[];
}

/**
 * Where a turn stands as the agent counts it: the run (counted per session, the `N` of the run
 * id `rN`, so it carries on across `Agent.load`) and the turn within that run (from 1).
 *
 * @example
 * if (record.type === "@agentchart.emitted" && record.turn) {
 *   const { run, turn }: TurnPosition = record.turn;
 * }
 */
export interface TurnPosition {
	run: number;
	turn: number;
}

/**
 * An event the machine emitted (an AgentEvent, or a delivery barrier). Not in Stately's protocol.
 *
 * @example
 * const emitted = inspector.history().filter((record): record is EmittedRecord => record.type === "@agentchart.emitted");
 * console.log(emitted.map((record) => `${record.turn?.run}.${record.turn?.turn} ${record.event.type}`));
 */
export interface EmittedRecord extends RecordBase {
	type: "@agentchart.emitted";
	event: { type: string; [key: string]: PreviewJson };
	/**
	 * On `turn_start`: the turn it starts, read from the machine's context as the step that
	 * emitted it left it. A viewer numbers turns by it, whatever records it holds (absent in
	 * older recordings, or when a burst lost that step's snapshot).
	 */
	turn?: TurnPosition | undefined;
	/**
	 * True for an event the inspector re-told from the actor's state when it attached (the
	 * transcript and the calls of the run in progress of an agent restored with `Agent.load`),
	 * not one emitted then: its time is the attach time.
	 */
	restored?: true | undefined;
}

/**
 * Records were lost because a burst outran the buffer before a flush.
 *
 * @example
 * inspector.subscribe((records) => {
 *   for (const record of records) if (record.type === "@agentchart.dropped") console.warn(`${record.count} records dropped`);
 * });
 */
export interface DroppedRecord extends RecordBase {
	type: "@agentchart.dropped";
	count: number;
}

/**
 * Text that streamed into one content block of the reply (see {@link DeltaSummaryRecord}).
 *
 * @example
 * if (record.type === "@agentchart.deltas") {
 *   const text = (record.segments ?? []).filter((segment: DeltaSegment) => segment.kind === "text").map((segment) => segment.text).join("");
 * }
 */
export interface DeltaSegment {
	/** `text`, `thinking` or `toolcall` (tool-call arguments as JSON text). */
	kind: "text" | "thinking" | "toolcall";
	/** The block's index in the assistant message (`contentIndex`). */
	contentIndex: number;
	text: string;
}

/**
 * The token deltas of a stretch of a reply, summed: they reach listeners beside the chart
 * (no transition, no inspection event), and a record per delta would cost more than the
 * delta. One record per stretch between two inspection events (at most one per flush) says
 * how many there were and carries their text, so the visualizer's transcript grows as the
 * reply streams.
 *
 * @example
 * const deltas = inspector.history().filter((record): record is DeltaSummaryRecord => record.type === "@agentchart.deltas");
 * console.log(deltas.reduce((sum, record) => sum + record.chars, 0), "characters streamed");
 */
export interface DeltaSummaryRecord extends RecordBase {
	type: "@agentchart.deltas";
	/** `message_update` events since the last record. */
	count: number;
	/** Characters of text, thinking and tool-argument deltas among them. */
	chars: number;
	/** Their text, one segment per run of deltas into the same block (absent in older recordings). */
	segments?: DeltaSegment[] | undefined;
}

/**
 * One record of an inspector, in the `@statelyai/inspect` wire format plus agentchart's own
 * kinds: what `subscribe` delivers in batches, `recordToNdjson` writes one per line, and the
 * visualizer replays.
 *
 * @example
 * inspector.subscribe((records: InspectionRecord[]) => {
 *   for (const record of records) if (record.type === "@agentchart.emitted") console.log(record.event.type);
 * });
 */
export type InspectionRecord = ActorRecord | EventRecord | SnapshotRecord | MicrostepRecord | EmittedRecord | DroppedRecord | DeltaSummaryRecord;

/** The parts of an actor ref that inspection reads; XState's public type hides `_parent` and `src`. */

/** Transition definitions as microsteps carry them. */
interface TransitionLike {
	source: { id: string; transitions: Map<string, unknown[]>; always?: unknown[] };
	target?: readonly { id: string }[] | undefined;
	eventType: string;
}

const definitions = new WeakMap<object, string | undefined>();

/** Functions in a machine config become `{ type: name }`, as Stately's serializer does. */
function definitionReplacer(_key: string, value: unknown): unknown {
	if (typeof value === "function") return { type: value.name || "anonymous" };
	return value;
}

function definitionOf(actor: InspectableActorRef): string | undefined {
	const config = (actor.logic as { config?: unknown } | undefined)?.config;
	if (!config || typeof config !== "object") return undefined;
	if (definitions.has(config)) return definitions.get(config);
	let text: string | undefined;
	try {
		text = JSON.stringify(config, definitionReplacer);
	} catch {
		text = undefined;
	}
	definitions.set(config, text);
	return text;
}

function machineId(actor: InspectableActorRef): string | undefined {
	const config = (actor.logic as { config?: { id?: unknown } } | undefined)?.config;
	return typeof config?.id === "string" ? config.id : undefined;
}

/**
 * Summarises any actor snapshot: machine snapshots keep `value` and `status` and get a
 * context summary; callback and promise actors keep their status and a preview of output or
 * error.
 *
 * @example
 * summarizeSnapshot(actor.getSnapshot()); // { status: "active", value: { running: "streaming" }, context: { kind: "agent", ... } }
 */
export function summarizeSnapshot(snapshot: unknown): SnapshotSummary {
	const source = (snapshot ?? {}) as {
		status?: ActorStatus | undefined;
		value?: unknown | undefined;
		context?: unknown | undefined;
		children?: Record<string, unknown> | undefined;
		output?: unknown | undefined;
		error?: unknown | undefined;
	};
	const summary: SnapshotSummary = { status: source.status ?? "active" };
	if (source.value !== undefined) summary.value = previewValue(source.value, { depth: 6 });
	if (source.context !== undefined) summary.context = summarizeContext(source.context);
	if (source.children) summary.children = Object.keys(source.children);
	if (source.output !== undefined) summary.output = previewValue(source.output, { depth: 2 });
	if (source.error !== undefined) summary.error = previewValue(source.error, { depth: 2 });
	return summary;
}

/** The id of a taken transition in {@link toStatechartGraph}'s numbering. */
function edgeIdOf(transition: TransitionLike): string {
	const { source, eventType } = transition;
	const list = eventType === "" ? source.always ?? [] : source.transitions.get(eventType) ?? [];
	const index = Math.max(0, list.indexOf(transition));
	const base = `${source.id}:${eventType || "always"}:${index}`;
	return transition.target && transition.target.length > 1 ? `${base}.0` : base;
}

/**
 * Options of {@link toRecord}.
 *
 * @example
 * const options: ToRecordOptions = { payload: { stringLength: 80 } };
 * const record = toRecord(event, 1, Date.now(), options);
 */
export interface ToRecordOptions {
	/** How much of event payloads to keep (default {@link EVENT_PREVIEW_LIMITS}). */
	payload?: Partial<PreviewLimits> | undefined;
	/**
	 * For `@xstate.actor`: the actor's snapshot when the event happened. XState reports an actor
	 * before it has a snapshot; read at flush time, the snapshot can be a later one (a stream
	 * actor recorded as `stopped` at its creation).
	 */
	actorSnapshot?: unknown;
}

/**
 * Turns one raw XState inspection event into a record, or undefined for events the
 * inspector does not keep. Called at flush time, off the hot path.
 *
 * @example
 * const record = toRecord(inspectionEvent, 1, Date.now());
 */
export function toRecord(event: ActorInspectionEvent, seq: number, t: number, options: ToRecordOptions = {}): InspectionRecord | undefined {
	const actor = event.actorRef as InspectableActorRef;
	const base = { seq, t, sessionId: actor.sessionId, rootId: event.rootId };
	const cause = { type: event.event?.type ?? "" };
	switch (event.type) {
		case "@xstate.actor": {
			const record = withBase<ActorRecord>(base, {
				type: "@xstate.actor",
				name: machineId(actor) ?? actor.id,
				actorId: actor.id,
				snapshot: summarizeSnapshot("actorSnapshot" in options ? options.actorSnapshot : actor.getSnapshot()),
			});
			const parent = parentOf(actor as never);
			if (parent) record.parentId = parent.sessionId;
			if (typeof actor.src === "string") record.src = actor.src;
			const definition = definitionOf(actor);
			if (definition !== undefined) record.definition = definition;
			return record;
		}
		case "@xstate.event": {
			if (!event.event) return undefined;
			const record = withBase<EventRecord>(base, { type: "@xstate.event", event: summarizeEvent(event.event, options.payload) });
			if (event.sourceRef) record.sourceId = event.sourceRef.sessionId;
			return record;
		}
		case "@xstate.snapshot": {
			const record = withBase<SnapshotRecord>(base, { type: "@xstate.snapshot", event: cause, snapshot: summarizeSnapshot(event.snapshot) });
			const activeIds = activeNodeIds(event.snapshot);
			if (activeIds) record.activeIds = activeIds;
			return record;
		}
		case "@xstate.microstep": {
			const transitions = (microstepTransitions(event) as TransitionLike[]).map((transition) => ({
				edgeId: edgeIdOf(transition),
				sourceId: transition.source.id,
				targetIds: (transition.target ?? []).map((target) => target.id),
				eventType: transition.eventType,
			}));
			return withBase<MicrostepRecord>(base, { type: "@xstate.microstep", event: cause, transitions });
		}
		case "@xstate.action": {
			if (event.action?.type !== "xstate.emit") return undefined;
			const emitted = (event.action.params as { event?: { type: string } } | undefined)?.event;
			if (!emitted || typeof emitted.type !== "string") return undefined;
			return withBase<EmittedRecord>(base, { type: "@agentchart.emitted", event: summarizeEvent(emitted, options.payload) });
		}
		default:
			return undefined;
	}
}

/**
 * A record of the fields every record has, then `fields`, in the protocol's key order. Assigned,
 * not spread: an object spread that adds keys is V8's slow path, about 1.7 µs a record, the most
 * of what a flush cost.
 *
 * @example
 * withBase<DroppedRecord>({ seq: 1, t: Date.now(), sessionId: "", rootId: undefined }, { type: "@agentchart.dropped", count: 3 });
 */
export function withBase<R extends InspectionRecord>(base: Pick<RecordBase, "seq" | "t" | "sessionId" | "rootId">, fields: Omit<R, keyof RecordBase>): R {
	const head: RecordBase = { seq: base.seq, t: base.t, sessionId: base.sessionId, rootId: base.rootId, createdAt: String(Math.round(base.t)), id: null, _version: STATELY_PROTOCOL_VERSION };
	return Object.assign(head, fields) as R;
}
