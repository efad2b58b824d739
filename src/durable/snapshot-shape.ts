/**
 * The shape a snapshot must have before any of it reaches the engine. A snapshot is data a user
 * stores, moves and may edit or damage; one with a list where an object belongs would otherwise
 * fail deep inside a restore with a `TypeError`, or later, inside the chart, where XState reports
 * the error to the process as an uncaught exception. What is checked is what the engine relies on
 * structurally (lists it iterates, objects it reads, the strings and flags its guards test);
 * messages are checked as transcripts are (`assertTranscript`), where they enter the agent.
 */
import { shown } from "../agent-input.js";
import { effectNumbers, toolEffectId } from "./journal.js";
import { ofLineage } from "./store.js";
import { isRecord } from "../util/json-values.js";

/** Checks a value at a path; throws, naming the path, when it does not fit. */
type Check = (value: unknown, path: string) => void;

/** What a check found; whoever asked names the thing checked (a snapshot, a journal line). */
class ShapeMismatch extends Error {
	constructor(
		readonly path: string,
		readonly expected: string,
	) {
		super(expected);
	}
}

function fail(path: string, expected: string, value: unknown): never {
	throw new ShapeMismatch(path, `${expected}, not ${shown(value)}`);
}

/** Runs `check` on `value`; a mismatch is told with the name `name` gives the path. */
function checkAs(name: (path: string) => string, check: Check, value: unknown): void {
	try {
		check(value, "");
	} catch (error) {
		if (error instanceof ShapeMismatch) throw new Error(`agentchart: ${name(error.path)} must be ${error.expected}`);
		throw error;
	}
}

const text: Check = (value, path) => {
	if (typeof value !== "string") fail(path, "a string", value);
};
const count: Check = (value, path) => {
	if (typeof value !== "number" || !Number.isFinite(value)) fail(path, "a number", value);
};
const flag: Check = (value, path) => {
	if (typeof value !== "boolean") fail(path, "true or false", value);
};
const anObject: Check = (value, path) => {
	if (!isRecord(value)) fail(path, "an object", value);
};

function optional(check: Check): Check {
	return (value, path) => {
		if (value !== undefined) check(value, path);
	};
}

function listOf(check: Check): Check {
	return (value, path) => {
		if (!Array.isArray(value)) fail(path, "a list", value);
		// An index loop: `forEach` would skip the holes of a sparse list.
		for (let index = 0; index < value.length; index++) check(value[index], `${path}[${index}]`);
	};
}

function oneOf(values: readonly string[]): Check {
	return (value, path) => {
		if (typeof value !== "string" || !values.includes(value)) fail(path, values.map((each) => JSON.stringify(each)).join(" or "), value);
	};
}

/** An object whose every field passes `check` (named as `path["key"]`: a key may be any text). */
function recordOf(check: Check): Check {
	return (value, path) => {
		if (!isRecord(value)) fail(path, "an object", value);
		for (const [key, field] of Object.entries(value)) check(field, `${path}[${JSON.stringify(key)}]`);
	};
}

/** A state value: a state's name, or an object of a state's name to its children's value. */
const stateValue: Check = (value, path) => {
	if (typeof value === "string") return;
	if (!isRecord(value)) fail(path, "a state (a name, or an object of names)", value);
	for (const [key, child] of Object.entries(value)) stateValue(child, `${path}.${key}`);
};

function fields(shape: Record<string, Check>): Check {
	return (value, path) => {
		if (!isRecord(value)) fail(path, "an object", value);
		for (const [key, check] of Object.entries(shape)) check(value[key], path ? `${path}.${key}` : key);
	};
}

const callFields = {
	key: text,
	toolCall: fields({ id: text, name: text }),
	status: oneOf(["queued", "announced", "preparing", "prepared", "awaiting-approval", "running", "settled"]),
	started: optional(flag),
	approval: optional(fields({ reason: optional(text), deadline: optional(count) })),
	outcome: optional(anObject),
	message: optional(anObject),
	returned: optional(flag),
	argsProblem: optional(text),
};

const batchFields = {
	assistant: anObject,
	mode: oneOf(["parallel", "sequential", "streaming"]),
	calls: listOf(fields(callFields)),
	truncated: optional(flag),
	actorStarted: optional(flag),
	// Required from format version 3 (below); an older snapshot's is made from its run when it is read.
	effectPrefix: optional(text),
};

const runFields = {
	id: text,
	aborted: optional(flag),
	abandonScheduled: optional(flag),
	failure: optional(text),
	newMessages: listOf(anObject),
	turn: count,
	attempt: count,
	skipInitialSteeringPoll: optional(flag),
	partial: optional(anObject),
	pendingFailedReply: optional(anObject),
	assistant: optional(anObject),
	batch: optional(fields(batchFields)),
	turnEnded: optional(flag),
	toolResults: listOf(anObject),
	overflowRetried: optional(flag),
	outputLimitAttempts: optional(count),
	compactedThisTurn: optional(flag),
	compactionReason: optional(oneOf(["threshold", "overflow", "manual"])),
	compactedSinceCheckpoint: optional(flag),
	compactionInstructions: optional(text),
	steeringPolled: optional(flag),
	followUpsPolled: optional(flag),
	stopAsked: optional(flag),
	stopRequested: optional(flag),
};

/** `awaitDelivery`: true, false, or "start" (a run that waits only at its start, still there). */
const flagOrStart: Check = (value, path) => {
	if (value !== "start" && typeof value !== "boolean") fail(path, 'true, false or "start"', value);
};

const queueMode = oneOf(["all", "one-at-a-time"]);

const contextFields = {
	systemPrompt: text,
	model: fields({ id: text, api: text, provider: text }),
	thinkingLevel: text,
	tools: listOf(fields({ name: text })),
	messages: listOf(anObject),
	config: anObject,
	steeringQueue: listOf(anObject),
	followUpQueue: listOf(anObject),
	steeringMode: queueMode,
	followUpMode: queueMode,
	run: optional(fields(runFields)),
	awaitDelivery: optional(flagOrStart),
	barrier: optional(count),
	lastCompaction: optional(anObject),
	commandSeq: optional(count),
	runs: optional(count),
};
const context = fields(contextFields);

/**
 * The fields the check reads, per part of the chart's context: a test compares them with the
 * chart's types, so a field added to the context is checked or said not to need it.
 *
 * @example
 * SNAPSHOT_CHECKED_FIELDS.run.includes("turn"); // true
 */
export const SNAPSHOT_CHECKED_FIELDS = {
	context: Object.keys(contextFields),
	run: Object.keys(runFields),
	batch: Object.keys(batchFields),
	call: Object.keys(callFields),
} as const;

/**
 * The fields each kind of journal entry must have, by kind and phase (see `journal.ts`): what a
 * restore reads of it. A tool's progress is what the tool reported, and is read as loosely.
 */
const entryFields = {
	run: { start: { messages: listOf(anObject) }, end: { messages: listOf(anObject) } },
	model: { intent: { model: text, messages: count }, outcome: { message: anObject } },
	tool: {
		intent: { toolCallId: text, toolName: text, replay: oneOf(["safe", "unsafe"]), streamedFrom: optional(text), call: optional(fields({ id: text, name: text })), reasoning: optional(listOf(anObject)) },
		update: {},
		outcome: { result: fields({ content: listOf(anObject) }), isError: flag },
	},
	approval: {
		requested: { toolCallId: text, toolName: text, call: fields({ id: text, name: text }), streamedFrom: optional(text), reasoning: optional(listOf(anObject)), deadline: optional(count) },
		decided: { toolCallId: text, decision: oneOf(["approved", "rejected"]), reason: optional(text), decidedAt: optional(count) },
	},
	compaction: { start: { instructions: optional(text) }, end: { outcome: oneOf(["failed", "aborted"]), errorMessage: optional(text) } },
} satisfies Record<string, Record<string, Record<string, Check>>>;

/** The fields every stored entry has, whatever its kind (see `StoredJournalEntry`). */
const storedEntryFields = { seq: count, effect: text, lineage: optional(text) };

/**
 * The fields the check reads, per kind and phase of journal entry (`kind`, `phase` and those of
 * every entry besides): a test compares them with the entries `journal.ts` declares.
 *
 * @example
 * JOURNAL_ENTRY_CHECKED_FIELDS["tool.intent"]?.includes("replay"); // true
 */
export const JOURNAL_ENTRY_CHECKED_FIELDS: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
	Object.entries(entryFields).flatMap(([kind, phases]) => Object.entries(phases).map(([phase, shape]) => [`${kind}.${phase}`, ["kind", "phase", ...Object.keys(storedEntryFields), ...Object.keys(shape)]])),
);

const journalEntry: Check = (value, path) => {
	fields({ ...storedEntryFields, kind: oneOf(Object.keys(entryFields)) })(value, path);
	// The check above took only the table's own names.
	const entry = value as { kind: keyof typeof entryFields; phase: unknown };
	const phases: Record<string, Record<string, Check>> = entryFields[entry.kind];
	const at = path ? `${path}.` : "";
	oneOf(Object.keys(phases))(entry.phase, `${at}phase`);
	fields(phases[entry.phase as string] as Record<string, Check>)(value, path);
};

/**
 * Throws, naming the first field that does not fit, when `snapshot` (already known to be an
 * agentchart snapshot of a version this agentchart reads) lacks the shape a restore relies on.
 *
 * @example
 * checkSnapshotShape(JSON.parse(text)); // throws "agentchart: the snapshot's machine.context.tools must be a list, not null"
 */
export function checkSnapshotShape(snapshot: Record<string, unknown>): void {
	checkAs((path) => `the snapshot's ${path}`, snapshotShape, snapshot);
}

const snapshotShape: Check = (snapshot, path) => {
	fields({
		machine: fields({
			status: oneOf(["active", "done", "error", "stopped"]),
			value: stateValue,
			// XState's record of history states (the chart has none): its restore iterates each entry.
			historyValue: optional(recordOf(listOf(fields({ id: text })))),
			context,
			// A child the chart had running (a model call, a batch of tool calls): restored by its logic's name.
			children: optional(recordOf(fields({ src: text, snapshot: fields({ status: oneOf(["active", "done", "error", "stopped"]) }) }))),
		}),
		journal: optional(listOf(journalEntry)),
		journalSeq: optional(count),
		lineage: optional(text),
		agent: optional(fields({ errorMessage: optional(text), abortPending: optional(flag), transcript: optional(listOf(anObject)) })),
	})(snapshot, path);
	// Between runs the chart is idle: a restore reads nothing else of the value then, so it says so here.
	const machine = (snapshot as { machine: { status: string; value: unknown; context: Record<string, unknown> } }).machine;
	if (machine.status === "active" && machine.context["run"] === undefined && machine.value !== "idle") fail("machine.value", '"idle" (the snapshot has no run)', machine.value);
	const batch = (machine.context["run"] as { batch?: { effectPrefix?: string } } | undefined)?.batch;
	if (batch && batch.effectPrefix === undefined && Number((snapshot as { version?: unknown }).version) >= 3) fail("machine.context.run.batch.effectPrefix", "a string (every batch of a snapshot of format version 3 or later has it)", undefined);
	if (machine.status === "active") countersCoverJournal(snapshot as unknown as CountedSnapshot);
};

/** What {@link countersCoverJournal} reads, its shape checked by then. */
interface CountedSnapshot {
	machine: { context: { runs?: number; run?: { id: string; attempt: number; turn: number; batch?: { calls: { key: string }[] } | undefined } } };
	journal?: { seq: number; effect: string; lineage?: string | undefined }[];
	journalSeq?: number;
	lineage?: string | undefined;
}

/**
 * The chart's counters name the effects it makes next (`r3.m2`: run 3's second model call), so
 * the journal's entries of the run must agree with them. An entry past them is of an effect the
 * run is yet to make (a store's entry written after the snapshot, a restored run's replay to
 * come), and those come after every effect the run has made: a model call past `attempt`
 * followed by an effect the run has made (a model call within `attempt`, a call of an earlier
 * turn, a call of this turn's batch) means `attempt` was set back; a call of a later turn than
 * `turn` before any such model call means `turn` was. A counter set back makes a used id again,
 * and the journal answers it with the old outcome (a replayed reply asks for the same approval
 * again, for ever). A later run than the snapshot counts (a run numbered again applies its
 * messages twice) is refused among the entries it had seen; a store's later ones are left out by
 * the restore. Another line's later entries are not read (`ofLineage`).
 */
function countersCoverJournal(snapshot: CountedSnapshot): void {
	const { runs = 0, run } = snapshot.machine.context;
	if (run && run.id !== `r${runs}`) fail("machine.context.run.id", `"r${runs}", the run machine.context.runs counts`, run.id);
	const seen = snapshot.journalSeq ?? 0;
	const batchEffects = new Set(run?.batch?.calls.map((call) => toolEffectId(run.id, run.turn, call.key)));
	let ahead: { effect: string; number: number } | undefined;
	for (const entry of snapshot.journal ?? []) {
		const later = entry.seq > seen;
		const numbers = later && !ofLineage(snapshot, entry) ? undefined : effectNumbers(entry.effect);
		if (!numbers) continue;
		const { run: ofRun, step, number = 0 } = numbers;
		if (!later && ofRun > runs) fail("machine.context.runs", `at least ${ofRun} (its journal holds ${entry.effect})`, runs);
		// A run's own entries (its start and end, a compaction) say nothing of its counters.
		if (!run || ofRun !== runs || step === undefined) continue;
		if (step === "m" && number > run.attempt) {
			ahead ??= { effect: entry.effect, number };
			continue;
		}
		if (step === "t" && number > run.turn) {
			if (ahead === undefined) fail("machine.context.run.turn", `at least ${number} (its journal holds ${entry.effect}, a call of turn ${number}, with no model call past the run's attempt before it)`, run.turn);
			continue;
		}
		const made = step === "m" || number < run.turn || batchEffects.has(entry.effect);
		if (made && ahead !== undefined) fail("machine.context.run.attempt", `at least ${ahead.number} (its journal holds the model call ${ahead.effect} before ${entry.effect}, an effect the run has made)`, run.attempt);
	}
}

/**
 * Throws, naming the first field that does not fit, when `entry` (one journal entry as a store
 * gives it back) lacks the shape a restore relies on for its kind and phase. `subject` names the
 * entry in the message.
 *
 * @example
 * checkJournalEntryShape(JSON.parse(line), "line 3 of journal"); // throws 'agentchart: line 3 of journal: its kind must be "run" or ...'
 */
export function checkJournalEntryShape(entry: unknown, subject: string): void {
	checkAs((path) => (path ? `${subject}: its ${path}` : `${subject}: it`), journalEntry, entry);
}
