/**
 * The page's model of a run: plain data built from inspection records by `applyRecord`, read
 * by every view. Plain objects and arrays only (no Map, no DOM), so a model can be copied with
 * `structuredClone` (replay keeps copies to seek back quickly) and checked in Node tests.
 */
import type { ActorStatus, TurnPosition } from "../../src/inspect/records.js";
import type { AgentContextSummary, PreviewJson } from "../../src/inspect/summarize.js";

/** An actor the records told about. */
export interface ActorInfo {
	sessionId: string;
	/** Its id in its parent (`stream`, `tools`, `agent`). */
	actorId: string;
	/** The machine id for machine actors, otherwise the actor id. */
	name: string;
	parentId?: string | undefined;
	src?: string | undefined;
	status: ActorStatus;
	createdT: number;
	/** When it stopped, finished or failed (or its parent dropped it). */
	endedT?: number | undefined;
}

/** Where a bar of the timeline or a row of the transcript stands. */
export type SpanStatus = "open" | "done" | "error" | "stopped";

/** A stretch of time the timeline draws as a bar: a run, a turn, a model call, a tool call, an approval wait… */
export interface Span {
	id: string;
	/** Its lane: `run`, `turn`, `model`, `tool`, `approval`, `compaction` (see SPAN_RULES). */
	kind: string;
	label: string;
	startT: number;
	endT?: number | undefined;
	startSeq: number;
	endSeq?: number | undefined;
	status: SpanStatus;
	/** What it is doing while open, as its bar and row say it (`running`, `waiting for approval`). */
	openWord?: string | undefined;
	/** Held up by another open span (a tool call waiting for its approval): it cannot end first. */
	held?: boolean | undefined;
	/**
	 * Released by a no (a rejected, timed-out or aborted approval): it ends at the next end of its
	 * key, before an open span of its key that runs.
	 */
	endsNext?: boolean | undefined;
	/** What tells it apart among open spans of its kind (a tool call's id). */
	key?: string | undefined;
	/** Its place among the spans of its kind and key in its turn, from 1 (a repeated tool call id). */
	occurrence?: number | undefined;
	/** Moments inside it, e.g. a model call's first token. */
	marks: { t: number; label: string }[];
	/** The run (agent_start … agent_end) and turn it belongs to. */
	run: number;
	turn?: number | undefined;
	/** The transcript entry that shows it, if any. */
	entryId?: string | undefined;
	/** The agent session it belongs to. */
	sessionId: string;
	/** Opened by a record the inspector re-told from the agent's state when it attached. */
	restored?: boolean | undefined;
}

/** One block of an assistant message as the transcript shows it. */
export type AssistantBlock =
	| { type: "text"; text: string }
	| { type: "thinking"; text: string }
	| { type: "toolCall"; id: string; name: string; args: PreviewJson; argsText?: string | undefined };

interface EntryBase {
	id: string;
	/** The record that created it and the last one that changed it. */
	seq: number;
	endSeq: number;
	t: number;
	run: number;
	turn?: number | undefined;
	/** Bumped on every change, so a view redraws only the entries that changed. */
	rev: number;
	/**
	 * Made from a record the inspector re-told from the agent's state when it attached (see
	 * `EmittedRecord.restored`): it happened before then, and its time is the attach time.
	 */
	restored?: boolean | undefined;
}

/** A user message (a prompt, a steering or follow-up message). */
export interface UserEntry extends EntryBase {
	kind: "user";
	text: string;
}

/** An assistant message, growing while it streams. */
export interface AssistantEntry extends EntryBase {
	kind: "assistant";
	blocks: AssistantBlock[];
	streaming: boolean;
	stopReason?: string | undefined;
	errorMessage?: string | undefined;
}

/**
 * A row for a span the transcript shows: a tool call (its arguments and result), an approval
 * wait, a compaction. Which spans get a row, and what it says, is data (SPAN_RULES).
 */
export interface SpanEntry extends EntryBase {
	kind: "span";
	spanKind: string;
	spanId: string;
	title: string;
	status: SpanStatus;
	/** What it is doing while open (see {@link Span.openWord}). */
	openWord?: string | undefined;
	/** What started it (a tool call's arguments) and what ended it (its result). */
	input?: PreviewJson | undefined;
	output?: PreviewJson | undefined;
	startT: number;
	endT?: number | undefined;
}

/** Anything else worth a line: another role's message, lost records, a stopped agent. */
export interface NoteEntry extends EntryBase {
	kind: "note";
	tone: "info" | "warn" | "error";
	text: string;
	detail?: PreviewJson | undefined;
}

export type TranscriptEntry = UserEntry | AssistantEntry | SpanEntry | NoteEntry;

/** A turn: one model call and the tool calls of its reply (turn_start … turn_end). */
export interface TurnInfo {
	/** The page's own count, from the first turn it saw: what selections and entries refer to. */
	index: number;
	/** The turn as the agent counts it (from its `turn_start` record), when the record says. */
	position?: TurnPosition | undefined;
	run: number;
	startSeq: number;
	endSeq?: number | undefined;
	startT: number;
	endT?: number | undefined;
	sessionId: string;
}

/** Everything the page shows, as of the last record applied. */
export interface RunModel {
	machineId: string;
	/** Time of the first record ever applied: every relative time on the page counts from it. */
	origin?: number | undefined;
	lastT?: number | undefined;
	lastSeq?: number | undefined;
	/** Records applied, from the first one received. */
	applied: number;
	actors: Record<string, ActorInfo>;
	/** The agent machine being followed: the newest actor running the chart's machine. */
	agent?: string | undefined;
	/** Active state ids of the agent, root first. */
	activeIds: string[];
	/** Graph edge ids of the agent's latest transitions. */
	lastTaken: string[];
	/** Distinct active leaves in order (consecutive repeats merged; the newest kept). */
	visited: string[];
	context?: AgentContextSummary | undefined;
	/** Runs started (agent_start), and the run and turn the newest records belong to. */
	runs: number;
	currentRun: number;
	currentTurn?: number | undefined;
	turns: TurnInfo[];
	turnCount: number;
	spans: Span[];
	/** Open spans by `<session> <kind> <key>`: what an end event closes. */
	open: Record<string, string>;
	transcript: TranscriptEntry[];
	/** Records an inspector lost in bursts. */
	dropped: number;
	/** True while a restored record is applied: what it makes is marked restored. */
	restoring?: boolean | undefined;
	/** Token deltas seen (counted by the inspector). */
	deltas: { count: number; chars: number };
}
