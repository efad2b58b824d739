/**
 * What a click selects, in terms every view understands: ranges of record sequence numbers
 * (log rows light up), states (the chart lights them up), turns (transcript entries and
 * timeline bars light up). A transcript message selects its turn; a log row its record; a
 * state the steps that entered it; a timeline bar its stretch of the run.
 */
import type { InspectionRecord } from "../../src/inspect/records.js";
import { type ChartIndex, activeAfter, afterTransitions } from "./chart-index.js";
import type { RunModel, Span } from "./types.js";

/** A selection shared by all views. */
export interface Selection {
	/** What was clicked, for the status line: `turn 2`, `state streaming`. */
	label: string;
	/** Inclusive ranges of record `seq`. */
	ranges: [number, number][];
	/** States to light up in the chart. */
	stateIds: string[];
	/** Turns to light up in the transcript and the timeline. */
	turns: number[];
	/** The one span or entry clicked, if any. */
	spanId?: string | undefined;
	entryId?: string | undefined;
}

/** Whether a seq falls in one of the selection's ranges. */
export function selects(selection: Selection | undefined, seq: number): boolean {
	return selection !== undefined && selection.ranges.some(([from, to]) => seq >= from && seq <= to);
}

/** Whether `[from, to]` overlaps one of the selection's ranges. */
export function overlaps(selection: Selection | undefined, from: number, to: number): boolean {
	return selection !== undefined && selection.ranges.some(([start, end]) => from <= end && to >= start);
}

/** States the agent entered during `[from, to]` (or, if none, the one it was in at `from`). */
function statesDuring(records: readonly InspectionRecord[], chart: ChartIndex, agent: string | undefined, from: number, to: number): string[] {
	let active: string[] = [];
	let atFrom: string[] = [];
	const seen = new Set<string>();
	for (const record of records) {
		if (record.seq > to) break;
		if (record.sessionId !== agent) continue;
		if (record.type === "@xstate.snapshot" && record.activeIds && record.snapshot.status === "active") active = record.activeIds;
		else if (record.type === "@xstate.microstep") active = afterTransitions(chart, active, record.transitions.filter((transition) => transition.targetIds.length > 0));
		else continue;
		if (record.seq < from) atFrom = active;
		else for (const id of active) seen.add(id);
	}
	// Where it was at `from`, when it entered nothing during the range.
	if (seen.size === 0) for (const id of atFrom) seen.add(id);
	return [...seen].filter((id) => id !== chart.graph.rootId);
}

/** The turn a record belongs to, by seq. */
export function turnAt(model: RunModel, seq: number): number | undefined {
	for (let index = model.turns.length - 1; index >= 0; index--) {
		const turn = model.turns[index];
		if (turn && turn.startSeq <= seq && (turn.endSeq === undefined || seq <= turn.endSeq)) return turn.index;
	}
	return undefined;
}

/**
 * Selects a turn: its records, the states it went through, its transcript entries.
 *
 * @example
 * const selection = selectTurn(model, store.slice(0, cursor), chart, 2);
 */
export function selectTurn(model: RunModel, records: readonly InspectionRecord[], chart: ChartIndex, turnIndex: number, entryId?: string): Selection | undefined {
	const turn = model.turns.find((candidate) => candidate.index === turnIndex);
	if (!turn) return undefined;
	let to = turn.endSeq ?? model.lastSeq ?? turn.startSeq;
	// turn_end is emitted as the machine leaves the turn's last state: the steps that finish
	// that move (into the decision after the turn) follow it, before anything else happens.
	const after = records.findIndex((record) => record.seq > to);
	for (let index = after; index >= 0 && index < records.length; index++) {
		const record = records[index];
		if (!record || record.sessionId !== turn.sessionId || (record.type !== "@xstate.microstep" && record.type !== "@xstate.snapshot")) break;
		to = record.seq;
	}
	return { label: `turn ${turnIndex}`, ranges: [[turn.startSeq, to]], stateIds: statesDuring(records, chart, turn.sessionId, turn.startSeq, to), turns: [turnIndex], entryId };
}

/** Selects one record: the state the agent was in then, and its turn. */
export function selectRecord(model: RunModel, records: readonly InspectionRecord[], chart: ChartIndex, seq: number): Selection {
	const turn = turnAt(model, seq);
	return { label: `event #${seq}`, ranges: [[seq, seq]], stateIds: statesDuring(records, chart, model.agent, seq, seq), turns: turn === undefined ? [] : [turn] };
}

/** Selects a state: every step that entered it, and the turns they were in. */
export function selectState(model: RunModel, records: readonly InspectionRecord[], chart: ChartIndex, stateId: string): Selection {
	const ranges: [number, number][] = [];
	const turns = new Set<number>();
	for (const record of records) {
		if (record.type !== "@xstate.microstep" || record.sessionId !== model.agent) continue;
		const entered = record.transitions.some((transition) => transition.targetIds.length > 0 && activeAfter(chart, transition.targetIds).includes(stateId));
		if (!entered) continue;
		ranges.push([record.seq, record.seq]);
		const turn = turnAt(model, record.seq);
		if (turn !== undefined) turns.add(turn);
	}
	return { label: `state ${stateId.replace(`${chart.graph.rootId}.`, "")}`, ranges, stateIds: [stateId], turns: [...turns] };
}

/** Selects a timeline bar: its stretch of the run. */
export function selectSpan(model: RunModel, records: readonly InspectionRecord[], chart: ChartIndex, span: Span): Selection {
	const to = span.endSeq ?? model.lastSeq ?? span.startSeq;
	const turns = span.kind === "run" ? model.turns.filter((turn) => turn.run === span.run).map((turn) => turn.index) : span.turn !== undefined ? [span.turn] : [];
	return { label: span.label, ranges: [[span.startSeq, to]], stateIds: statesDuring(records, chart, span.sessionId, span.startSeq, to), turns, spanId: span.id, entryId: span.entryId };
}
