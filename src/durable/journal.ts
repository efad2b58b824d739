/**
 * The effect journal: what a run did to the world, one entry per step of each effect, so that a
 * run restored after a crash never repeats an effect by accident.
 *
 * Every effect has a stable id, made from the run, the turn and the call (`r3`: run 3's start, or
 * the manual compaction that is run 3; `r3.m2`: run 3's second model call; `r3.t2.toolu_01`: the
 * call `toolu_01` of run 3's second turn). An effect
 * records its intent before it acts and its outcome after; a tool its progress too. Whoever runs
 * an effect asks the journal first, by id (as XState v6's `xstate/durable` memoises an effect's
 * result by its id):
 *
 * - an outcome is there: the effect is over; its outcome is used, and nothing runs again;
 * - only the intent is there: the effect was interrupted (a crash between intent and outcome).
 *   A model request is made again; a tool call runs again only if its tool says
 *   `replay: "safe"`, otherwise it is answered with an error that says so;
 * - nothing is there: the effect runs, intent first.
 *
 * The journal is the run's; an `AgentStore` makes it durable (see `store.ts`).
 */
import type { AgentToolCall, AgentToolResult } from "../types/agent.js";
import type { ThinkingContent } from "../types/content.js";
import type { AgentMessage, AssistantMessage } from "../types/messages.js";
import { unwritableJson } from "../util/json-writable.js";

/**
 * A model call's intent: which model, asked with how many transcript messages.
 *
 * @example
 * const calls = agent.snapshot().journal.filter((entry): entry is StoredJournalEntry & ModelIntent => entry.kind === "model" && entry.phase === "intent");
 * for (const call of calls) console.log(call.model, call.messages); // the model, and how many messages it was sent
 */
export interface ModelIntent {
	kind: "model";
	phase: "intent";
	effect: string;
	model: string;
	messages: number;
}

/**
 * A model call's outcome: the final assistant message.
 *
 * @example
 * const replies = agent.snapshot().journal.filter((entry): entry is StoredJournalEntry & ModelOutcome => entry.kind === "model" && entry.phase === "outcome");
 * console.log(replies.map((entry) => entry.message.stopReason));
 */
export interface ModelOutcome {
	kind: "model";
	phase: "outcome";
	effect: string;
	message: AssistantMessage;
}

/**
 * Whether a tool may run again after a crash interrupted it. pi 1.x's field name and values.
 *
 * @example
 * const replay: ReplayPolicy = "safe"; // it only reads: a call cut off by a restart runs again
 * const tool: AnyAgentTool = { ...readTool, replay };
 */
export type ReplayPolicy = "safe" | "unsafe";

type ReplyBlock = AssistantMessage["content"][number];

/** The thinking blocks of `content` before `call` (all of them when the call is not in it), copied. */
function reasoningBefore(content: readonly ReplyBlock[], call: AgentToolCall): ThinkingContent[] {
	let end = content.indexOf(call);
	if (end === -1) end = content.findIndex((block) => block.type === "toolCall" && block.id === call.id);
	const before = end === -1 ? content : content.slice(0, end);
	return before.filter((block): block is ThinkingContent => block.type === "thinking").map((block) => ({ ...block }));
}

/**
 * The reasoning (thinking blocks) a streaming reply had before one of its calls that the
 * journal does not hold yet with an earlier call of the reply, for the call's journal entry: a
 * restart that closes the reply with the calls that had started keeps it (see
 * {@link EffectJournal.startedDuring}). A provider that reasons with signed thinking (Anthropic
 * with thinking on) refuses the next request when the reply answered by tool results does not
 * start with its thinking block.
 *
 * @example
 * streamedReasoning(journal, "r1.m1", partial.content, call); // [{ type: "thinking", thinking: "…", thinkingSignature: "…" }]
 */
export function streamedReasoning(journal: EffectJournal, modelEffect: string, content: readonly ReplyBlock[], call: AgentToolCall): ThinkingContent[] | undefined {
	const recorded = (journal.startedDuring?.(modelEffect) ?? []).filter((block) => block.type === "thinking").length;
	const fresh = reasoningBefore(content, call).slice(recorded);
	return fresh.length > 0 ? fresh : undefined;
}

/**
 * The started calls of a reply, in order, each after the reasoning the reply had before it that
 * no earlier call brought: the reply a restart closes with them, when no journal holds it (a bare
 * machine restored from its own snapshot keeps the partial reply).
 *
 * @example
 * withReasoning(partial.content, startedCalls); // [thinking, call 1, thinking, call 2]
 */
export function withReasoning(content: readonly ReplyBlock[], calls: readonly AgentToolCall[]): (AgentToolCall | ThinkingContent)[] {
	const reply: (AgentToolCall | ThinkingContent)[] = [];
	let reasoned = 0;
	for (const call of calls) {
		const reasoning = reasoningBefore(content, call);
		if (reasoning.length > reasoned) {
			reply.push(...reasoning.slice(reasoned));
			reasoned = reasoning.length;
		}
		reply.push(call);
	}
	return reply;
}

/**
 * A tool call's intent: recorded before the tool runs, with the arguments it runs with.
 *
 * @example
 * const started = agent.snapshot().journal.filter((entry): entry is StoredJournalEntry & ToolIntent => entry.kind === "tool" && entry.phase === "intent");
 * for (const call of started) console.log(call.toolName, call.args, call.replay);
 */
export interface ToolIntent {
	kind: "tool";
	phase: "intent";
	effect: string;
	toolCallId: string;
	toolName: string;
	/** The final arguments (after validation, `beforeToolCall` and an approval's changes). */
	args: unknown;
	replay: ReplayPolicy;
	/**
	 * A call that started while its reply was still streaming (streaming tool execution): the
	 * model call's effect id, and the call as the model sent it. A restart before the reply
	 * ended closes the reply with the calls that had started (see {@link EffectJournal.startedDuring}).
	 */
	streamedFrom?: string | undefined;
	call?: AgentToolCall | undefined;
	/** With `streamedFrom`: the reply's reasoning (thinking blocks) before the call that no earlier call's entry holds (see {@link streamedReasoning}). */
	reasoning?: ThinkingContent[] | undefined;
}

/**
 * Progress a running tool reported (`onUpdate`): what the model is told if the call is interrupted.
 *
 * @example
 * const updates = agent.snapshot().journal.filter((entry): entry is StoredJournalEntry & ToolProgress => entry.kind === "tool" && entry.phase === "update");
 * console.log(updates.map((entry) => entry.partialResult.details));
 */
export interface ToolProgress {
	kind: "tool";
	phase: "update";
	effect: string;
	partialResult: AgentToolResult<unknown>;
}

/**
 * A tool call's outcome.
 *
 * @example
 * const failed = agent.snapshot().journal.filter((entry): entry is StoredJournalEntry & ToolOutcomeEntry => entry.kind === "tool" && entry.phase === "outcome" && entry.isError);
 */
export interface ToolOutcomeEntry {
	kind: "tool";
	phase: "outcome";
	effect: string;
	result: AgentToolResult<unknown>;
	isError: boolean;
}

/**
 * A person's decision on a call that needed approval.
 *
 * @example
 * const decisions = agent.snapshot().journal.filter((entry): entry is StoredJournalEntry & ApprovalDecision => entry.kind === "approval" && entry.phase === "decided");
 * for (const entry of decisions) console.log(entry.toolCallId, entry.decision, entry.reason);
 */
export interface ApprovalDecision {
	kind: "approval";
	phase: "decided";
	effect: string;
	toolCallId: string;
	decision: "approved" | "rejected";
	/** Approved with changed arguments. */
	args?: unknown;
	/** Why it was rejected. */
	reason?: string | undefined;
	/**
	 * When it was decided (ms since the epoch): a decision replayed after a restart counts by it,
	 * not by when the restored run gets it (older journals have none: a stored decision was in time).
	 */
	decidedAt?: number | undefined;
}

/**
 * A person was asked about a call (the request is stored before they are asked).
 *
 * @example
 * const asked = (entry: JournalEntry): entry is ApprovalRequest => entry.kind === "approval" && entry.phase === "requested";
 */
export interface ApprovalRequest {
	kind: "approval";
	phase: "requested";
	effect: string;
	toolCallId: string;
	toolName: string;
	/** The validated arguments the call would run with. */
	args: unknown;
	/** The call as the model sent it. */
	call: AgentToolCall;
	/** While its reply still streams (streaming tool execution): the model call's effect id. */
	streamedFrom?: string | undefined;
	/** With `streamedFrom`: the reply's reasoning (thinking blocks) before the call that no earlier call's entry holds (see {@link streamedReasoning}). */
	reasoning?: ThinkingContent[] | undefined;
	/**
	 * When its `approvalTimeoutMs` runs out (ms since the epoch), if it has one: a call asked again
	 * after a restart keeps it.
	 */
	deadline?: number | undefined;
}

/**
 * A run started by a prompt, on the agent as the session's last snapshot has it: the prompt is
 * journaled instead of a snapshot at the run's start. A restore from that snapshot starts the run
 * again with it (the run's id is `effect`), and its effects follow the journal.
 *
 * @example
 * const starts = agent.snapshot().journal.filter((entry): entry is StoredJournalEntry & RunStart => entry.kind === "run" && entry.phase === "start");
 * console.log(starts.map((entry) => [entry.effect, entry.messages[0]?.role]));
 */
export interface RunStart {
	kind: "run";
	phase: "start";
	effect: string;
	/** The messages the run was prompted with. */
	messages: AgentMessage[];
}

/**
 * A run that started with a journaled prompt ended as the journal says, without a snapshot: the
 * messages it added after its prompt. A restore applies it to the transcript (prompt, then these)
 * and goes on to the next run; it does not start the run again. An ongoing session thereby
 * journals its runs and saves a snapshot only now and then (see `DurableSession`).
 *
 * @example
 * // Written once the run is over, so in the store's journal, not in a snapshot of the agent (whose journal is its run's):
 * const stored = await store.load("user-42");
 * const ends = (stored?.snapshot?.journal ?? []).filter((entry): entry is StoredJournalEntry & RunEnd => entry.kind === "run" && entry.phase === "end");
 * console.log(ends.map((entry) => entry.messages.length));
 */
export interface RunEnd {
	kind: "run";
	phase: "end";
	effect: string;
	/** What the run added to the transcript after its prompt. */
	messages: AgentMessage[];
}

/**
 * A manual compaction (`agent.compact()`) started, on the agent as the session's last snapshot has
 * it (with the runs journaled since): journaled before it starts, with its instructions. The
 * compaction takes a run's number (`effect` is that run's id). A restore from that snapshot that
 * finds no {@link CompactionEnd} makes it again: its listeners hear `auto_compaction_start`, then
 * `auto_compaction_end`. A compaction that compacted needs no end: the snapshot saved after it
 * holds the compacted transcript, and the store drops the entries it covers.
 *
 * @example
 * const started = agent.snapshot().journal.filter((entry): entry is StoredJournalEntry & CompactionStart => entry.kind === "compaction" && entry.phase === "start");
 * console.log(started.map((entry) => [entry.effect, entry.instructions]));
 */
export interface CompactionStart {
	kind: "compaction";
	phase: "start";
	effect: string;
	/** What `compact(instructions)` was given. */
	instructions?: string | undefined;
}

/**
 * A manual compaction that ended without compacting (it failed, or was aborted): the transcript is
 * as it was, and a restore does not make it again (the compaction's run number is taken).
 *
 * @example
 * // Written once the compaction is over, so in the store's journal, not in a snapshot of the agent:
 * const stored = await store.load("user-42");
 * const ended = (stored?.snapshot?.journal ?? []).filter((entry): entry is StoredJournalEntry & CompactionEnd => entry.kind === "compaction" && entry.phase === "end");
 * console.log(ended.map((entry) => `${entry.effect}: ${entry.outcome} ${entry.errorMessage ?? ""}`));
 */
export interface CompactionEnd {
	kind: "compaction";
	phase: "end";
	effect: string;
	outcome: "failed" | "aborted";
	/** Why it failed, as its `auto_compaction_end` said. */
	errorMessage?: string | undefined;
}

/**
 * One journal entry.
 *
 * @example
 * const describe = (entry: JournalEntry) => `${entry.kind} ${entry.phase} ${entry.effect}`;
 * console.log(agent.snapshot().journal.map(describe));
 */
export type JournalEntry = RunStart | RunEnd | CompactionStart | CompactionEnd | ModelIntent | ModelOutcome | ToolIntent | ToolProgress | ToolOutcomeEntry | ApprovalRequest | ApprovalDecision;

/**
 * A journal entry as stored: numbered in the order it was appended.
 *
 * @example
 * const entries: StoredJournalEntry[] = agent.snapshot().journal;
 * console.log(entries.at(-1)?.seq);
 */
export type StoredJournalEntry = JournalEntry & {
	seq: number;
	/**
	 * The line of the session the entry belongs to: that of the agent that appended it, as its
	 * snapshots say (see `AgentSnapshot.lineage`). Absent for an agent without a store.
	 */
	lineage?: string | undefined;
};

/**
 * What the journal knows of one effect.
 *
 * @example
 * const record: EffectRecord | undefined = journal.lookup(effect);
 * if (record?.outcome?.kind === "tool") console.log("already ran:", record.outcome.result.content);
 */
export interface EffectRecord {
	/** A run's start (the effect is the run). */
	start?: RunStart | undefined;
	/** A run's end, when it ended as the journal says (the effect is the run). */
	end?: RunEnd | undefined;
	/** A manual compaction's start (the effect is the run it counts as). */
	compactionStart?: CompactionStart | undefined;
	/** A manual compaction's end, when it did not compact. */
	compactionEnd?: CompactionEnd | undefined;
	intent?: ModelIntent | ToolIntent | undefined;
	/** The progress a tool reported last (what an interrupted call's answer quotes). */
	update?: ToolProgress | undefined;
	outcome?: ModelOutcome | ToolOutcomeEntry | undefined;
	/** The last time a person was asked about it. */
	request?: ApprovalRequest | undefined;
	decision?: ApprovalDecision | undefined;
}

/**
 * What the run's effects see of the journal: look an effect up, and append to it. `append`
 * returns a promise when the entry becomes durable later (a file store); the effect waits for
 * it before it acts. Without a journal, effects are neither looked up nor recorded.
 *
 * @example
 * const records = new Map<string, EffectRecord>();
 * const journal: EffectJournal = { lookup: (effect) => records.get(effect), append: (entry) => console.log(entry.kind, entry.phase, entry.effect) };
 */
export interface EffectJournal {
	/** What is recorded of `effect`, if anything. */
	lookup(effect: string): EffectRecord | undefined;
	/** Records `entry`; a promise when the entry is durable only once it settles. */
	append(entry: JournalEntry): void | PromiseLike<void>;
	/**
	 * The tool calls that started (ran, or had a person asked about them) while the model call
	 * `modelEffect` was still streaming, as the model sent them, in the order they started, each
	 * after the reasoning (thinking blocks) the reply had before it: the reply a restart closes
	 * with them. A journal without it keeps no such calls (a model call interrupted by a restart
	 * is then always made again).
	 */
	startedDuring?(modelEffect: string): readonly (AgentToolCall | ThinkingContent)[];
	/**
	 * Why the journal could not store `value` (named from `at`: "result.details.total is a
	 * BigInt"), or undefined when it can. A journal a store persists writes JSON: a tool's result
	 * that is not is answered with an error instead (see {@link unstorableResultText}), a reply
	 * that is not ends the turn as a failed request, as on every store alike. Without it (or
	 * without a store) anything is kept, as pi keeps it.
	 */
	unstorable?(value: unknown, at: string): string | undefined;
}

/**
 * The journal's entries, indexed by effect: an in-memory journal, and the index every store
 * keeps of the journal it loaded.
 *
 * @example
 * const journal = new JournalIndex();
 * journal.append({ kind: "tool", phase: "intent", effect: "r1.t1.a", toolCallId: "a", toolName: "send", args: {}, replay: "unsafe" });
 * journal.lookup("r1.t1.a")?.intent; // the intent
 */
export class JournalIndex implements EffectJournal {
	/** Made at the first entry, dropped when a run's entries are forgotten (see docs/performance.md, "Idle agents"). */
	#records: Map<string, EffectRecord> | undefined;
	readonly #entries: StoredJournalEntry[] = [];
	/** The last number given: numbers never repeat in a session, also after entries are forgotten. */
	#lastSeq: number;
	/** Called with each entry once it is numbered (a store persists it here). */
	onAppend: ((entry: StoredJournalEntry) => void | PromiseLike<void>) | undefined;
	/** The session's line, given to each entry appended from now on (see `AgentSnapshot.lineage`); undefined: none. */
	lineage: string | undefined = undefined;

	/** `lastSeq`: the last number the session gave (a snapshot's `journalSeq`), if its entries were forgotten. */
	constructor(entries: readonly StoredJournalEntry[] = [], lastSeq = 0) {
		this.#lastSeq = lastSeq;
		for (const entry of entries) this.#index(entry);
	}

	/** The number the next entry gets (one more than the last given). */
	get nextSeq(): number {
		return this.#lastSeq + 1;
	}

	/** Every entry, in order. */
	get entries(): readonly StoredJournalEntry[] {
		return this.#entries;
	}

	lookup(effect: string): EffectRecord | undefined {
		return this.#records?.get(effect);
	}

	unstorable(value: unknown, at: string): string | undefined {
		// Only a store writes the entries: an agent without one keeps whatever its tools return.
		if (!this.onAppend) return undefined;
		const where = unwritableJson(value, at);
		return where === undefined ? undefined : `it is not JSON-serializable (${where})`;
	}

	startedDuring(modelEffect: string): (AgentToolCall | ThinkingContent)[] {
		const started = new Set<string>();
		const reply: (AgentToolCall | ThinkingContent)[] = [];
		for (const entry of this.#entries) {
			if (entry.kind === "run" || entry.kind === "compaction" || entry.kind === "model" || entry.phase === "update" || entry.phase === "outcome" || entry.phase === "decided") continue;
			if (entry.streamedFrom !== modelEffect || started.has(entry.effect)) continue;
			started.add(entry.effect);
			// Each entry holds the reasoning no earlier call of the reply brought (see streamedReasoning).
			if (entry.reasoning) reply.push(...entry.reasoning);
			reply.push(entry.call ?? { type: "toolCall", id: entry.toolCallId, name: entry.toolName, arguments: entry.args as AgentToolCall["arguments"] });
		}
		return reply;
	}

	append(entry: JournalEntry): void | PromiseLike<void> {
		const line = this.lineage;
		const stored = (line === undefined ? Object.assign({ seq: this.nextSeq }, entry) : Object.assign({ seq: this.nextSeq, lineage: line }, entry)) as StoredJournalEntry;
		this.#index(stored);
		return this.onAppend?.(stored);
	}

	/**
	 * Forgets the entries of effects that can no longer be looked up (a run that ended: its
	 * effects are in the transcript), keeping the numbering.
	 */
	forgetBefore(seq: number): void {
		this.retain((entry) => entry.seq >= seq);
	}

	/** Forgets every entry `keep` refuses, keeping the numbering (a restore's entries that cannot be placed). */
	retain(keep: (entry: StoredJournalEntry) => boolean): void {
		const kept = this.#entries.filter(keep);
		this.#entries.length = 0;
		this.#records = undefined;
		for (const entry of kept) this.#index(entry);
	}

	#index(entry: StoredJournalEntry): void {
		this.#entries.push(entry);
		if (entry.seq > this.#lastSeq) this.#lastSeq = entry.seq;
		const records = (this.#records ??= new Map());
		let record = records.get(entry.effect);
		if (!record) {
			record = {};
			records.set(entry.effect, record);
		}
		switch (entry.phase) {
			case "start":
				if (entry.kind === "compaction") record.compactionStart = entry;
				else record.start = entry;
				break;
			case "end":
				if (entry.kind === "compaction") record.compactionEnd = entry;
				else record.end = entry;
				break;
			case "intent":
				record.intent = entry;
				break;
			case "update": {
				// Only the latest progress is ever read: an earlier one is dropped, so that a tool that
				// reports often does not grow the journal (and every snapshot of the run) with it.
				const earlier = record.update as StoredJournalEntry | undefined;
				if (earlier) this.#entries.splice(this.#entries.lastIndexOf(earlier), 1);
				record.update = entry;
				break;
			}
			case "outcome":
				record.outcome = entry;
				break;
			case "requested":
				record.request = entry;
				break;
			case "decided":
				record.decision = entry;
				break;
		}
	}
}

/**
 * The id of a run's model call.
 *
 * @example
 * modelEffectId("r3", 2); // "r3.m2"
 */
export function modelEffectId(runId: string, attempt: number): string {
	return `${runId}.m${attempt}`;
}

/**
 * What the ids of a turn's tool calls begin with: its run's id and the turn's number. A batch of
 * calls records it when it is made (`ToolBatch.effectPrefix`), so that a restore can tell a run
 * whose counters were edited from the run the calls were journaled in.
 *
 * @example
 * turnEffectPrefix("r3", 2); // "r3.t2"
 */
export function turnEffectPrefix(runId: string, turn: number): string {
	return `${runId}.t${turn}`;
}

/**
 * The id of a tool call: its key in its batch (its id, or `id#n` for a repeated id), in its turn.
 *
 * @example
 * toolEffectId("r3", 2, "toolu_01"); // "r3.t2.toolu_01"
 */
export function toolEffectId(runId: string, turn: number, callKey: string): string {
	return `${turnEffectPrefix(runId, turn)}.${callKey}`;
}

/**
 * The numbers in an effect's id: its run's, and its model call's (`step` "m") or turn's ("t")
 * within the run; undefined for an id of another form.
 *
 * @example
 * effectNumbers("r3.t2.toolu_01"); // { run: 3, step: "t", number: 2 }
 */
export function effectNumbers(effect: string): { run: number; step?: "m" | "t"; number?: number } | undefined {
	const found = /^r(\d+)(?:\.([mt])(\d+))?(?:\.|$)/.exec(effect);
	if (!found) return undefined;
	const [, run, step, number] = found;
	return step === undefined ? { run: Number(run) } : { run: Number(run), step: step as "m" | "t", number: Number(number) };
}

/**
 * The id of the run an effect belongs to (a run's own entries carry the run's id).
 *
 * @example
 * runOfEffect("r3.t2.toolu_01"); // "r3"
 */
export function runOfEffect(effect: string): string {
	const dot = effect.indexOf(".");
	return dot < 0 ? effect : effect.slice(0, dot);
}

/**
 * The error a tool call is answered with when its result cannot be journaled (`why`: not JSON,
 * or too large): the tool ran, and its result is not kept anywhere, so that the session stays
 * storable (a result no store can write would fail every save after it).
 *
 * @example
 * unstorableResultText("count_rows", "it is not JSON-serializable (result.details.total is a BigInt)");
 */
export function unstorableResultText(toolName: string, why: string): string {
	return `${unstorablePrefix(toolName)}${why}${UNSTORABLE_SUFFIX}`;
}

const UNSTORABLE_SUFFIX = ". What the tool did has taken effect; its result is lost.";

function unstorablePrefix(toolName: string): string {
	return `Tool "${toolName}" ran, but its result could not be stored: `;
}

/**
 * Why a tool's result could not be stored, when `text` is the error {@link unstorableResultText}
 * made of it; otherwise undefined.
 *
 * @example
 * unstorableReason("count_rows", unstorableResultText("count_rows", "it is not JSON")); // "it is not JSON"
 */
export function unstorableReason(toolName: string, text: string): string | undefined {
	const prefix = unstorablePrefix(toolName);
	return text.startsWith(prefix) && text.endsWith(UNSTORABLE_SUFFIX) ? text.slice(prefix.length, text.length - UNSTORABLE_SUFFIX.length) : undefined;
}

/**
 * The text the model gets for a tool call a restart interrupted and that was not run again.
 *
 * @example
 * interruptedText("charge", undefined); // 'Tool "charge" was interrupted by a restart and not run again ...'
 */
export function interruptedText(toolName: string, progress: ToolProgress | undefined): string {
	// What a tool reported is as it passed it to `onUpdate`, which plain JavaScript does not check.
	const content: unknown = (progress?.partialResult as { content?: unknown } | null | undefined)?.content;
	const reported = Array.isArray(content)
		? content
				.map((block: { type?: unknown; text?: unknown } | null) => (block?.type === "text" ? String(block.text) : `[${String(block?.type)}]`))
				.join("")
				.trim()
		: undefined;
	const base = `Tool "${toolName}" was interrupted by a restart and not run again (it is not marked replay: "safe"); it may or may not have taken effect.`;
	return reported ? `${base} Its output before the restart:\n${reported}` : base;
}
