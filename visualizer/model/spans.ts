/**
 * Spans (the timeline's bars) and their transcript rows, opened and closed by emitted events
 * as SPAN_RULES say, plus the model calls, which are the stream actor's life.
 */
import type { PreviewJson } from "../../src/inspect/summarize.js";
import { type EmittedEvent, RULES_BY_EVENT, type SpanRule } from "./span-rules.js";
import type { RunModel, Span, SpanEntry, SpanStatus, TranscriptEntry, TurnInfo } from "./types.js";

/** Spans kept; the oldest closed ones go first (a long session's timeline stays bounded). */
export const MAX_SPANS = 1500;
/** Transcript entries kept. */
export const MAX_ENTRIES = 400;

/** What a record says about where and when. */
export interface RecordPlace {
	seq: number;
	t: number;
	sessionId: string;
}

const openKey = (sessionId: string, kind: string, key: string) => `${sessionId} ${kind} ${key}`;
/**
 * Between a key and the number of a second open span with it (a repeated tool call id): a
 * character no id has, so that no call's own id (`d1#2`) reads as another's repeat.
 */
const REPEAT = "\u0000";

/**
 * A turn's name: as the agent counts it (`Run 3 · Turn 2`) when its record says, else by the
 * page's own count (`Turn 5`, recordings made before records carried it).
 *
 * @example
 * turnLabel({ index: 7, position: { run: 3, turn: 2 }, run: 1, startSeq: 1, startT: 0, sessionId: "x:0" }); // "Run 3 · Turn 2"
 */
export function turnLabel(turn: TurnInfo | undefined): string {
	if (!turn) return "Turn";
	return turn.position ? `Run ${turn.position.run} · Turn ${turn.position.turn}` : `Turn ${turn.index}`;
}

/** Appends a transcript entry, dropping the oldest beyond the bound. */
export function addEntry(model: RunModel, entry: TranscriptEntry): void {
	if (model.restoring) entry.restored = true;
	model.transcript.push(entry);
	if (model.transcript.length > MAX_ENTRIES) model.transcript.splice(0, model.transcript.length - MAX_ENTRIES);
}

/** The entry with this id (recent entries are searched first). */
export function findEntry(model: RunModel, id: string | undefined): TranscriptEntry | undefined {
	if (id === undefined) return undefined;
	for (let index = model.transcript.length - 1; index >= 0; index--) if (model.transcript[index]?.id === id) return model.transcript[index];
	return undefined;
}

/** The span with this id (recent spans are searched first). */
export function findSpan(model: RunModel, id: string | undefined): Span | undefined {
	if (id === undefined) return undefined;
	for (let index = model.spans.length - 1; index >= 0; index--) if (model.spans[index]?.id === id) return model.spans[index];
	return undefined;
}

/** Opens a span (and keys it so its end finds it). */
export function openSpan(model: RunModel, place: RecordPlace, kind: string, key: string, label: string): Span {
	const span: Span = { id: `s${place.seq}-${kind}`, kind, label, startT: place.t, startSeq: place.seq, status: "open", marks: [], run: model.currentRun, turn: model.currentTurn, sessionId: place.sessionId };
	if (model.restoring) span.restored = true;
	model.spans.push(span);
	if (model.spans.length > MAX_SPANS) {
		const drop = model.spans.findIndex((candidate) => candidate.status !== "open");
		if (drop >= 0) model.spans.splice(drop, 1);
	}
	// Two open spans with one key (a repeated tool call id): the first to open is closed first.
	const base = openKey(place.sessionId, kind, key);
	let slot = base;
	for (let n = 2; model.open[slot] !== undefined; n++) slot = `${base}${REPEAT}${n}`;
	model.open[slot] = span.id;
	// Its place among the spans of its key in this turn: the calls of a reply start in source order,
	// so the n-th tool span of an id is the call whose callKey is `id#n`.
	span.key = key;
	span.occurrence = model.spans.filter((other) => other.kind === kind && other.key === key && other.sessionId === place.sessionId && other.run === span.run && other.turn === span.turn).length;
	return span;
}

/** The slots of the open spans of a kind and key (`d1`, then `d1#2`, `d1#3`… in the order they opened). */
function slotsOf(model: RunModel, sessionId: string, kind: string, key: string): string[] {
	const base = openKey(sessionId, kind, key);
	const startOf = (slot: string) => findSpan(model, model.open[slot])?.startSeq ?? 0;
	return Object.keys(model.open)
		.filter((slot) => slot === base || slot.startsWith(`${base}${REPEAT}`))
		.sort((a, b) => startOf(a) - startOf(b));
}

/** The open span of a kind and key, and its slot in `model.open`. */
function openSlot(model: RunModel, sessionId: string, kind: string, key: string): string | undefined {
	const base = openKey(sessionId, kind, key);
	return model.open[base] !== undefined ? base : Object.keys(model.open).find((slot) => slot.startsWith(`${base}${REPEAT}`));
}

/** Closes a span and its transcript row. */
export function closeSpan(model: RunModel, span: Span, place: { seq: number; t: number }, status: SpanStatus, output?: PreviewJson): void {
	if (span.status !== "open") return;
	span.status = status;
	span.endT = place.t;
	span.endSeq = place.seq;
	for (const [slot, id] of Object.entries(model.open)) if (id === span.id) delete model.open[slot];
	const entry = findEntry(model, span.entryId);
	if (entry?.kind === "span") {
		entry.status = status;
		entry.endT = place.t;
		entry.endSeq = place.seq;
		if (output !== undefined) entry.output = output;
		entry.rev++;
	}
}

/**
 * Closes the open span of a kind and key, if any. Returns it. Of two open spans with one key (a
 * repeated tool call id), one held up by another span (waiting for its approval) cannot be the one
 * that ended; otherwise the first to open is closed first.
 */
export function closeOpen(model: RunModel, place: RecordPlace, kind: string, key: string, status: SpanStatus, output?: PreviewJson): Span | undefined {
	const slots = slotsOf(model, place.sessionId, kind, key);
	const spanAt = (candidate: string) => findSpan(model, model.open[candidate]);
	const slot = slots.find((candidate) => spanAt(candidate)?.endsNext === true) ?? slots.find((candidate) => spanAt(candidate)?.held !== true) ?? openSlot(model, place.sessionId, kind, key);
	const span = findSpan(model, slot === undefined ? undefined : model.open[slot]);
	if (slot !== undefined && !span) delete model.open[slot];
	if (span) closeSpan(model, span, place, status, output);
	return span;
}

/** Closes every open span of a session (of one kind, or all), e.g. when the agent stops. */
export function closeAllOpen(model: RunModel, place: RecordPlace, status: SpanStatus, kind?: string): void {
	const prefix = kind === undefined ? `${place.sessionId} ` : `${place.sessionId} ${kind} `;
	for (const [slot, id] of Object.entries(model.open)) {
		if (!slot.startsWith(prefix)) continue;
		const span = findSpan(model, id);
		if (span) closeSpan(model, span, place, status);
		else delete model.open[slot];
	}
}

/** The open span of a kind (the first one, when a key is not known). */
export function openOf(model: RunModel, sessionId: string, kind: string, key: string): Span | undefined {
	const slot = openSlot(model, sessionId, kind, key);
	return slot === undefined ? undefined : findSpan(model, model.open[slot]);
}

/** Says what an open span is doing, on its bar and its transcript row. */
function setOpenWord(model: RunModel, span: Span, word: string | undefined): void {
	span.openWord = word;
	const entry = findEntry(model, span.entryId);
	if (entry?.kind !== "span") return;
	entry.openWord = word;
	entry.rev++;
}

/** The open span a rule holds up while it is open (a tool call waiting for its approval) says so, or stops saying so. */
function holdUp(model: RunModel, place: RecordPlace, rule: SpanRule, event: EmittedEvent, holding: boolean): void {
	if (!rule.holds) return;
	const { key, occurrence } = rule.holds.target(event);
	const open = slotsOf(model, place.sessionId, rule.holds.kind, key).flatMap((slot) => findSpan(model, model.open[slot]) ?? []);
	const held = open.find((span) => span.occurrence === occurrence) ?? open[0];
	if (!held) return;
	held.held = holding || undefined;
	setOpenWord(model, held, holding ? rule.holds.openWord : undefined);
	if (holding) return;
	const released = rule.holds.release?.(event);
	if (released?.endsNext) held.endsNext = true;
	const entry = findEntry(model, held.entryId);
	if (released?.input !== undefined && entry?.kind === "span") {
		entry.input = released.input;
		entry.rev++;
	}
}

function startRule(model: RunModel, place: RecordPlace, rule: SpanRule, event: EmittedEvent): void {
	const span = openSpan(model, place, rule.kind, rule.key(event), rule.label(event));
	span.openWord = rule.openWord;
	if (rule.kind === "turn") span.label = turnLabel(model.turns[model.turns.length - 1]).toLowerCase();
	holdUp(model, place, rule, event, true);
	if (!rule.transcript) return;
	const entry: SpanEntry = {
		id: `e${place.seq}-${rule.kind}`,
		kind: "span",
		spanKind: rule.kind,
		spanId: span.id,
		title: rule.transcript.title(event),
		status: "open",
		openWord: rule.openWord,
		input: rule.transcript.input?.(event),
		seq: place.seq,
		endSeq: place.seq,
		t: place.t,
		startT: place.t,
		run: model.currentRun,
		turn: model.currentTurn,
		rev: 0,
	};
	span.entryId = entry.id;
	addEntry(model, entry);
}

/**
 * Applies the span rules to an emitted event: opens, updates or closes spans and their rows.
 *
 * @example
 * applySpanRules(model, { seq: 9, t: 1000, sessionId: "x:0" }, { type: "tool_execution_start", toolCallId: "w1", toolName: "get_weather", args: {} });
 */
export function applySpanRules(model: RunModel, place: RecordPlace, event: EmittedEvent): void {
	for (const { rule, role } of RULES_BY_EVENT.get(event.type) ?? []) {
		if (role === "start") {
			startRule(model, place, rule, event);
		} else if (role === "end") {
			const output = rule.transcript?.output?.(event);
			const closed = closeOpen(model, place, rule.kind, rule.key(event), rule.outcome(event), output);
			// An end without its start (the page joined late): a finished span of no length.
			if (!closed && rule.kind !== "run" && rule.kind !== "turn") {
				startRule(model, place, rule, event);
				closeOpen(model, place, rule.kind, rule.key(event), rule.outcome(event), output);
			}
			holdUp(model, place, rule, event, false);
		} else {
			const span = openOf(model, place.sessionId, rule.kind, rule.key(event));
			const entry = findEntry(model, span?.entryId);
			const output = rule.transcript?.output?.(event);
			if (entry?.kind === "span" && output !== undefined) {
				entry.output = output;
				entry.endSeq = place.seq;
				entry.rev++;
			}
		}
	}
}

/** Whether an actor id names a model call (`stream`, `stream:2`). */
export const isStreamActor = (actorId: string) => actorId === "stream" || actorId.startsWith("stream:");
/** Whether an actor id names tool work (the batch `tools`, or one call's `tool:<id>`). */
export const isToolActor = (actorId: string) => actorId === "tools" || actorId.startsWith("tool:");

/** A model call starts with its stream actor. */
export function openModelCall(model: RunModel, place: RecordPlace, streamSession: string): void {
	const name = model.context?.model;
	openSpan(model, place, "model", streamSession, name ? `model call · ${name}` : "model call");
}

/** The reply's first event: the wait for the model is over, streaming starts. */
export function markFirstToken(model: RunModel, sessionId: string, t: number, entryId: string): void {
	const span = openModelOf(model, sessionId);
	if (!span) return;
	span.marks.push({ t, label: "first token" });
	span.entryId = entryId;
}

/** The session's open model call (there is at most one at a time). */
export function openModelOf(model: RunModel, sessionId: string): Span | undefined {
	const prefix = `${sessionId} model `;
	const slot = Object.keys(model.open).find((candidate) => candidate.startsWith(prefix));
	return slot === undefined ? undefined : findSpan(model, model.open[slot]);
}
