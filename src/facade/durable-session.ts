/**
 * An agent's durability: the journal of its run in progress, and, with a store, what it
 * appends and saves. The journal is kept whether or not there is a store, so that a snapshot
 * taken in the middle of a run (`agent.snapshot()`) carries what its effects did.
 *
 * An ongoing session journals its runs: a run started by a prompt on the agent as the store holds
 * it between runs journals its prompt (`RunStart`) and, when it ends as the journal says, what it
 * added (`RunEnd`); a snapshot is saved only when the agent is not as the store holds it (a new
 * session, a changed agent, a run that did what the journal does not carry) and once the journal
 * since the last snapshot is long (see {@link JOURNAL_ENTRIES_BEFORE_SNAPSHOT}), at a run's end or,
 * for a run that journals that much itself, in its course.
 */
import { type CompactionEnd, JournalIndex, type RunEnd, type StoredJournalEntry } from "../durable/journal.js";
import type { AgentSnapshot, PlainAgentContext } from "../durable/snapshot.js";
import { type AgentStore, SessionTakenOverError } from "../durable/store.js";

/**
 * How many journal entries a store may hold after its snapshot before a run's end is saved as a
 * snapshot instead of journaled, or a long run takes one at its next outcome: a restore applies
 * the journal, and a file store keeps it in one file. About 25 runs of a few tool calls each. A
 * longer transcript allows as many entries as it has messages (see {@link snapshotDue}).
 */
export const JOURNAL_ENTRIES_BEFORE_SNAPSHOT = 256;

/**
 * Whether the journal since the last snapshot is long enough for a snapshot to take its place.
 * A snapshot holds the whole transcript: one every 256 entries made a long session write its
 * transcript again every 25 runs or so, bytes that grew with the square of its length (a
 * 1,200-message session of 100 KB tool results wrote 210 MB for its 30 MB). As many entries as
 * the transcript has messages: a run journals about two entries per message it adds, and at a
 * run's end the transcript counted is the one after it, so the journal reaches about twice the
 * last snapshot's messages and the transcript about doubles between two snapshots (measured: 540,
 * 1,084, 2,172, 4,348 messages). What the snapshots write then adds up to about twice the final
 * transcript, and a restore reads at most about two journal entries per message of the snapshot.
 * Inside a long run the transcript counted is the one last stored (the run's own is not known
 * without a snapshot): the transcript grows by about half between two of those.
 */
export function snapshotDue(entriesSince: number, transcriptLength: number): boolean {
	return entriesSince >= Math.max(JOURNAL_ENTRIES_BEFORE_SNAPSHOT, transcriptLength);
}

/**
 * Which agent writes each stored session in this process: the newest that opened it (`new Agent`,
 * `Agent.restore` with the store and the session id, or `Agent.load`, which opens the session
 * before it reads it). Two agents writing one session would each overwrite what the other stored,
 * and a load would find one of them only: the older one's writes are refused instead, as if its
 * process had stopped when the newer opened the session. Sessions are named by the store's
 * `sessionKey` when it has one (two file stores on one directory reach the same sessions), else
 * by the store object and the id. Weakly held from the task after the claim's (see
 * {@link weakenLater}): an agent nobody keeps does not keep its entry.
 */
const writersByKey = new Map<string, HeldClaim>();
const writersByStore = new WeakMap<AgentStore, Map<string, HeldClaim>>();
const forgetWriter = new FinalizationRegistry<{ writers: Map<string, HeldClaim>; key: string; ref: WeakRef<SessionClaim> }>(({ writers, key, ref }) => {
	if (writers.get(key) === ref) writers.delete(key);
});

/** A claim as the entries and the claims after it hold it: itself in the task that made it, weakly after. */
type HeldClaim = SessionClaim | WeakRef<SessionClaim>;

/** The claim a {@link HeldClaim} holds (undefined: collected, or none). */
function claimOf(held: HeldClaim | undefined): SessionClaim | undefined {
	return held instanceof WeakRef ? held.deref() : held;
}

/** Claims made in this task, held strongly until the next (see {@link weakenLater}). */
let unweakened: SessionClaim[] = [];

/**
 * Holds a new claim weakly from the next task on. Each WeakRef keeps its target until the task
 * that made it ends anyway (the language's rule), so a claim held strongly until then lives no
 * longer; what it spares is the weak references themselves: a task that makes agents one after
 * the other without ever ending (a batch over an in-process model) would pile up one WeakRef and
 * one finalization record per agent, and V8 then runs the whole process about twice as slowly
 * (see docs/performance.md, "A process with a store ran slower").
 */
function weakenLater(claim: SessionClaim): void {
	if (unweakened.push(claim) > 1) return;
	const timer: { unref?: () => void } | number = setTimeout(() => {
		const claims = unweakened;
		unweakened = [];
		SessionClaim.weaken(claims);
	}, 0);
	// Not a reason for the process to stay: weakening matters only to a process that goes on.
	if (typeof timer === "object") timer.unref?.();
}

/** How many claims this process made (numbers them). */
let claimsMade = 0;

/**
 * An agent's claim to write a stored session, newer than every claim before it in this process.
 * The store is told too (`AgentStore.open`), so that one shared by processes can refuse the
 * writes of the agents that opened the session before, elsewhere. A claim made by `Agent.load` is
 * undecided until the load has made its agent or failed: the writes of the agent it would
 * supersede wait for that (see {@link SessionClaim.writeTurn}).
 */
export class SessionClaim {
	readonly #writers: Map<string, HeldClaim>;
	readonly #key: string;
	/** How the entries and later claims hold this one: itself until {@link SessionClaim.weaken}. */
	#ref: HeldClaim = this;
	/**
	 * The claim this one superseded, if any (it writes again should this one be withdrawn); claims
	 * superseded with nothing on its way are left out (see {@link SessionClaim.landedBefore}).
	 */
	#previous: HeldClaim | undefined;
	/** Resolves once an undecided claim is confirmed or withdrawn (undefined: decided). */
	#deciding: Promise<void> | undefined;
	#decide: (() => void) | undefined;
	/** The last write this claim's agent handed to the store (see {@link SessionClaim.landedBefore}). */
	#handedOver: PromiseLike<void> | undefined;
	/** The store's `open`, once asked for (undefined: the store has none, or it is not asked yet). */
	opened: void | Promise<void> = undefined;
	/** This claim's place among the claims of this process (later claims have greater numbers). */
	readonly #number = ++claimsMade;
	/** Whether it asked the store to open the session (and need not again before a write). */
	#asked = false;
	/** Whether it ever asked (the store may have fenced off others then, even if the opening failed). */
	#everAsked = false;
	/**
	 * A withdrawn claim that gave it the session back, or that left the line just before it, had asked
	 * the store to open the session, or had this from one that had.
	 */
	#askedAfter = false;
	/** A newer claim of this process was decided: this one's agent writes the session no more. */
	superseded = false;
	/**
	 * Called once, when a newer claim of this process is decided: this claim's agent writes the
	 * session no more. Set only while its agent waits for approval (see
	 * `DurableSession.watchForTakeover`): a claim lives on until the task that made it ends, and
	 * must not keep its agent alive that long.
	 */
	onSuperseded: (() => void) | undefined = undefined;

	constructor(
		store: AgentStore,
		readonly sessionId: string,
		/**
		 * A load's claim: undecided until {@link SessionClaim.confirm} or {@link SessionClaim.withdraw},
		 * and the store is asked to open the session by {@link SessionClaim.open}, once the load knows
		 * it can continue it.
		 */
		forLoad = false,
	) {
		if (forLoad) this.#deciding = new Promise<void>((resolve) => (this.#decide = resolve));
		const key = store.sessionKey?.(sessionId);
		let writers = key === undefined ? writersByStore.get(store) : writersByKey;
		if (!writers) {
			writers = new Map();
			writersByStore.set(store, writers);
		}
		this.#writers = writers;
		this.#key = key ?? sessionId;
		this.#previous = writers.get(this.#key);
		writers.set(this.#key, this);
		weakenLater(this);
		if (!forLoad) {
			this.open(store);
			this.#supersedeOlder();
		}
	}

	/**
	 * Makes the entries and the later claims hold these claims (made in one task, oldest first)
	 * weakly. A claim's `#previous` is always older than the claim, so a claim weakened in an
	 * earlier task never holds one of these strongly: only the entries and these claims need mending.
	 */
	static weaken(claims: readonly SessionClaim[]): void {
		for (const claim of claims) {
			const ref = new WeakRef(claim);
			claim.#ref = ref;
			forgetWriter.register(claim, { writers: claim.#writers, key: claim.#key, ref });
		}
		for (const claim of claims) {
			if (claim.#writers.get(claim.#key) === claim) claim.#writers.set(claim.#key, claim.#ref);
			const previous = claim.#previous;
			if (previous instanceof SessionClaim) claim.#previous = previous.#ref;
		}
	}

	/**
	 * Asks the store to open the session (`AgentStore.open`): from then on, it refuses the writes of
	 * the agents of other processes that opened it before. Not when a later claim of this process
	 * asked already (a load asks only once it looked at the session, and a later one may have been
	 * quicker): this one is superseded, and the store must see the openings in the order they were
	 * claimed, or it would fence off the newer one.
	 */
	open(store: AgentStore): void | Promise<void> {
		for (let claim = claimOf(this.#writers.get(this.#key)); claim !== undefined && claim.#number > this.#number; claim = claimOf(claim.#previous)) {
			if (claim.#everAsked) return undefined;
		}
		this.#asked = true;
		this.#everAsked = true;
		let opened: void | Promise<void>;
		try {
			opened = store.open?.(this.sessionId);
		} catch (error) {
			// A store that throws fails the opening as one that rejects does (`new Agent` does not throw).
			opened = Promise.reject(error);
		}
		this.opened = opened;
		// An opening that failed is made again before the next write, unless it failed because another
		// process opened the session since (then this agent's writes are refused, as they should be).
		opened?.then(undefined, (error: unknown) => {
			if (this.opened === opened && !(error instanceof SessionTakenOverError)) this.#asked = false;
		});
		return opened;
	}

	/**
	 * Withdraws the claim of an opening that failed (`Agent.load` could not read the session): the
	 * agent it superseded writes again, unless a newer claim was made since, and opens the session
	 * again before it does if this claim had asked the store to. A store that processes share was
	 * told of the opening (`open`): its other processes stay fenced.
	 */
	withdraw(): void {
		this.#decided();
		const asked = this.#everAsked || this.#askedAfter;
		const previous = claimOf(this.#previous);
		if (this.#writers.get(this.#key) !== this.#ref) {
			// A newer claim came since: this one leaves the line between them. The newer one reached the
			// claims before through this one, held weakly, and a withdrawn claim nobody holds is collected.
			for (let newer = claimOf(this.#writers.get(this.#key)); newer !== undefined; newer = claimOf(newer.#previous)) {
				if (newer.#previous !== this.#ref) continue;
				newer.#previous = this.#previous;
				// Should the newer one be withdrawn too, the claim it gives the session back to opens it again.
				if (asked) newer.#askedAfter = true;
				break;
			}
			return;
		}
		if (!previous) {
			this.#writers.delete(this.#key);
			return;
		}
		this.#writers.set(this.#key, previous.#ref);
		// The opening of this claim, or of one withdrawn before it while this one was under way (loads fail in
		// any order), made the store refuse that one's writes: it opens the session again before its next
		// write. Passed on, should that one be an undecided load's claim that is withdrawn in turn.
		if (asked) {
			previous.#asked = false;
			previous.#askedAfter = true;
		}
	}

	/** The load that made this claim made its agent: the claims before it are superseded for good. */
	confirm(): void {
		this.#decided();
		this.#supersedeOlder();
	}

	/**
	 * Tells the agents of the claims before this one (decided now) that they write the session no
	 * more. It stops at one superseded already: the claims before it were superseded with it. (The
	 * claims of a session stay reachable until the collector takes their agents, so one loaded again
	 * and again would otherwise make each new claim walk all the ones before it.)
	 */
	#supersedeOlder(): void {
		for (let claim = claimOf(this.#previous); claim !== undefined && !claim.superseded; claim = claimOf(claim.#previous)) {
			claim.superseded = true;
			const superseded = claim.onSuperseded;
			claim.onSuperseded = undefined;
			superseded?.();
		}
	}

	#decided(): void {
		this.#deciding = undefined;
		this.#decide?.();
		this.#decide = undefined;
	}

	/** This claim's agent handed a write to the store (an agent's writes go one at a time: the last one lands last). */
	handedOver(write: PromiseLike<void>): void {
		this.#handedOver = write;
		const landed = () => {
			if (this.#handedOver === write) this.#handedOver = undefined;
		};
		write.then(landed, landed);
	}

	/**
	 * Resolves once the writes that the agents this claim supersedes handed to the store have
	 * landed, failed or not; undefined when none is on its way. A load reads after them, and the new
	 * agent writes after them: a write on its way would land over the session it goes on from.
	 */
	landedBefore(): Promise<void> | undefined {
		const onTheirWay: PromiseLike<void>[] = [];
		let newer: SessionClaim = this;
		for (let claim = claimOf(this.#previous); claim !== undefined; claim = claimOf(claim.#previous)) {
			if (claim.#handedOver) onTheirWay.push(claim.#handedOver);
			else if (claim.superseded) {
				// Nothing of it on its way, and nothing ever again (its writes are refused): the walks after
				// this one pass it by. It would not be given the session back either (see withdraw): only
				// an undecided claim is withdrawn, and a claim is superseded only by a decided one after it.
				newer.#previous = claim.#previous;
				continue;
			}
			newer = claim;
		}
		if (onTheirWay.length === 0) return undefined;
		return Promise.allSettled(onTheirWay).then(() => {});
	}

	/** Whether this claim names the session `sessionId` of `store` (a store with a `sessionKey`: of any store with that key). */
	isFor(store: AgentStore, sessionId: string): boolean {
		const key = store.sessionKey?.(sessionId);
		return this.#writers === (key === undefined ? writersByStore.get(store) : writersByKey) && this.#key === (key ?? sessionId);
	}

	/** Throws {@link SessionTakenOverError} when a newer claim of this process was made since. */
	assertNewest(): void {
		if (this.#writers.get(this.#key) !== this.#ref) throw new SessionTakenOverError(this.sessionId);
	}

	/**
	 * Whether a write of this claim's agent may go now: undefined when this is the newest claim (a
	 * promise when it has yet to ask the store to open the session: once it has); a
	 * promise when the newest is a load's claim still undecided (the write waits for it, then asks
	 * again: a load that fails gives the session back); throws {@link SessionTakenOverError} when
	 * a newer claim is decided.
	 */
	writeTurn(store: AgentStore): Promise<void> | undefined {
		const newest = this.#writers.get(this.#key);
		if (newest === this.#ref) {
			if (this.#asked) return undefined;
			// It skipped its opening (a later claim had asked, and has been withdrawn since): its agent
			// writes the session again, so the store is told first, as for every writer.
			return this.open(store) || undefined;
		}
		const claim = claimOf(newest);
		const deciding = claim === undefined ? undefined : claim.#deciding;
		if (deciding) return deciding;
		throw new SessionTakenOverError(this.sessionId);
	}
}

/** The agent between runs as the store holds it (or will, once the writes handed to it land). */
interface BetweenRuns {
	/** The context of the last snapshot between runs, with the transcript and run count of the runs journaled since. */
	context: PlainAgentContext;
	/** That snapshot (undefined: the one a loaded session started from). */
	from: AgentSnapshot | undefined;
}

/** A new line for a session (see `AgentSnapshot.lineage`). */
function newLineage(): string {
	const crypto = globalThis.crypto;
	// Browsers offer randomUUID only in secure contexts (https, localhost); a page served over plain
	// http from another host has getRandomValues alone.
	if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
	const bytes = crypto.getRandomValues(new Uint8Array(16));
	bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
	bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
	const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
	return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const NO_PROBLEMS: readonly string[] = Object.freeze([]);

/**
 * How many of an agent's store problems are kept from the first on: what a load found, and the
 * first write that failed (usually the cause of those after it).
 */
const PROBLEMS_KEPT_FIRST = 10;
/** How many of the latest store problems are kept: what the store does now. */
const PROBLEMS_KEPT_LATEST = 40;
/** How many of the writes that failed since the last report a `save()` / `saved()` rejection names from the first on. */
const FAILED_WRITES_NAMED_FIRST = 3;
/** How many of the latest writes that failed such a rejection names. */
const FAILED_WRITES_NAMED_LATEST = 3;

export class DurableSession {
	readonly journal: JournalIndex;
	/** The line its snapshots and entries carry (see `AgentSnapshot.lineage`); undefined without a store, or for a session stored without one. */
	readonly lineage: string | undefined;
	/** Problems the store reported, oldest first: made at the first (see docs/performance.md, "Idle agents"). */
	#problems: string[] | undefined;
	/** Writes that failed since the last {@link DurableSession.reportFailedWrites}. */
	#failedWrites: string[] | undefined;
	#saveRequested = false;
	/** Set by the agent's `dispose()`: no save is taken after it (see {@link DurableSession.close}). */
	#closed = false;
	/** The refusal that told this agent a newer one opened the session (see {@link DurableSession.takenOver}). */
	#takenOver: SessionTakenOverError | undefined;
	/** Called at that refusal (once): the agent of another process has the session now. */
	onTakenOver: (() => void) | undefined = undefined;
	/** Ends the store's watch for another process's opening (see {@link DurableSession.watchForTakeover}). */
	#stopWatching: (() => void) | undefined;
	/** The last save asked for (none yet: nothing to wait for). */
	#saving: Promise<void> | undefined;
	/** What the store holds between runs; undefined when its last snapshot is of a run in progress, or a write failed. */
	#between: BetweenRuns | undefined;
	/** Journal entries handed to the store since the last snapshot. */
	#entriesSince = 0;
	/** How many messages the transcript the store holds had at its last snapshot or journaled run end (see {@link snapshotDue}). */
	#storedTranscript = 0;
	/** Journal entries handed to the store since the later of the last snapshot and the start of the run in progress. */
	#entriesInRun = 0;
	/** The effects of the run whose intent this agent journaled and whose outcome it has not yet (see {@link DurableSession.#snapshotLongRun}). */
	#openEffects: Set<string> | undefined;
	/** Problems past the first {@link PROBLEMS_KEPT_FIRST} and before the latest {@link PROBLEMS_KEPT_LATEST}: left out, counted. */
	#problemsLeftOut = 0;
	/** {@link DurableSession.problems} as last made (undefined: made again at the next read). */
	#problemsShown: readonly string[] | undefined;
	/** Writes that failed since the last report and are not in {@link DurableSession.#failedWrites}: left out, counted. */
	#failedWritesLeftOut = 0;
	/**
	 * The last write handed to the store that is still on its way (a save, or an entry appended);
	 * undefined once it is done. A write made meanwhile goes after it.
	 */
	#tail: Promise<void> | undefined;
	/**
	 * The last write that failed, while no snapshot stored since stands for it: the store's journal
	 * then leads nowhere (a restore would not reach the entries after the hole), so each entry is
	 * written as a snapshot instead (one per step, carrying the run's journal) until one is stored.
	 */
	#broken: string | undefined;
	/** Its claim to write the session (see {@link writersByKey}). */
	readonly #claim: SessionClaim | undefined;
	/**
	 * A line of its own that no snapshot in the store has yet (see `AgentSnapshot.lineage`): its
	 * entries would not be read after the snapshot the store holds, so, as after a failed write,
	 * each is written as a snapshot until one is handed to the store.
	 */
	#lineWithoutSnapshot: boolean;
	/**
	 * Each tool call's latest progress entry not yet handed to the store. Only the latest is ever
	 * read (see `JournalIndex`) and nobody waits for one: an entry a newer one followed before its
	 * turn came is not written (see the constructor).
	 */
	#latestProgress: Map<string, StoredJournalEntry> | undefined;

	constructor(
		readonly store: AgentStore | undefined,
		readonly sessionId: string | undefined,
		entries: readonly StoredJournalEntry[] = [],
		lastSeq = 0,
		/** The agent's snapshot, for the one that stands in for journal entries after a failed write. */
		readonly take: (() => AgentSnapshot) | undefined = undefined,
		/** The claim the session was opened with (`Agent.load` makes it before reading; a restore hands its agent's on); a new one when not given. */
		claim: SessionClaim | undefined = undefined,
		/** The line its snapshots and entries carry: a loaded session's own; undefined for a new line of its own. */
		lineage: string | undefined = undefined,
		/** The store holds a snapshot of `lineage` (a loaded session). */
		stored = false,
	) {
		this.journal = new JournalIndex(entries, lastSeq);
		const id = sessionId;
		const saves = store !== undefined && id !== undefined;
		this.lineage = saves ? (stored ? lineage : newLineage()) : undefined;
		this.#lineWithoutSnapshot = saves && !stored;
		if (store && id !== undefined) {
			const own = claim?.isFor(store, id) ? claim : new SessionClaim(store, id);
			this.#claim = own;
			// The store's writes go after its opening, whatever order it keeps itself, and after the
			// writes the agents this one supersedes had handed to the store (they could land over its own).
			const opened = own.opened;
			if (opened) this.#write(() => opened)?.catch((error: unknown) => this.#failed("open the session", error));
			const landed = own.landedBefore();
			if (landed) this.#write(() => landed)?.catch(() => {});
			this.journal.lineage = this.lineage;
			this.journal.onAppend = (entry) => {
				this.#entriesSince++;
				if (this.#broken !== undefined || this.#lineWithoutSnapshot) return this.storeInSnapshot();
				this.#snapshotLongRun(entry);
				// A tool's progress is not written when a newer report comes before its turn: a tool that
				// reports at every chunk of its output (a build, a shell) would otherwise queue a write per
				// chunk, each holding what it reported so far (with fsync "always", a flush each):
				// megabytes of journal for one call, and the run's next effect waiting behind them all.
				const progress = entry.phase === "update" ? entry : undefined;
				// Made at the first report: an agent without a store, or whose tools report nothing, holds no table.
				if (progress) (this.#latestProgress ??= new Map()).set(progress.effect, progress);
				// After the writes before it: an effect that waits for its intent then also waits for
				// what says its run exists (the snapshot or the prompt that starts it, the end of the
				// run before; a restore without them would not look for its entries).
				let skipped = false;
				const written = this.#write(() => {
					if (progress) {
						// A newer one is queued behind it.
						if (this.#latestProgress?.get(progress.effect) !== progress) return;
						this.#latestProgress.delete(progress.effect);
					}
					// A write before it failed meanwhile: not written after the hole (see #broken).
					if (this.#broken !== undefined) skipped = true;
					else return store.appendJournal(id, entry);
				});
				if (!written) return undefined;
				// The effect waits for a durable intent; a failed write fails the effect (see the batch actor).
				const checked = written.then(
					() => (skipped ? this.storeInSnapshot() : undefined),
					(error: unknown) => this.#failed("append a journal entry", error),
				);
				// Entries nobody waits for (an outcome, a tool's progress) fail into `problems` only: a
				// store that cannot write must not take the process down with an unhandled rejection.
				checked.catch(() => {});
				return checked;
			};
		}
	}

	/**
	 * Asks for a snapshot in the middle of a run once the journal since the last one is long (see
	 * {@link snapshotDue}): the end of a run checks that only when it comes, and a run of thousands of
	 * tool turns would otherwise leave a journal a restore replays from the run's start, turn by
	 * turn. Taken at an outcome (a model's reply or a tool's result), after the step that journaled it:
	 * the snapshot has the run's journal so far, as the one after a failed write does, and a restore
	 * goes on from its place in the chart. Asked for only when no other call of the batch is still
	 * running; taken after the step, when the next effect (the next model request, the next call)
	 * may have begun: its intent is in the snapshot's journal, and a restore answers it by the crash
	 * rules, as it would after a crash there.
	 * Counted from the run's start (or its last snapshot), so that a run of a few turns, whose end
	 * weighs the entries before it (see {@link DurableSession.endRun}), takes no snapshot of its own.
	 */
	#snapshotLongRun(entry: StoredJournalEntry): void {
		this.#entriesInRun++;
		if (entry.phase === "start") {
			// A run (or a manual compaction) journaled on what the store holds: its entries count from here.
			this.#entriesInRun = 0;
			this.#openEffects = undefined;
			return;
		}
		if (entry.phase === "intent") {
			(this.#openEffects ??= new Set()).add(entry.effect);
			return;
		}
		if (entry.phase !== "outcome") return;
		this.#openEffects?.delete(entry.effect);
		if (this.#openEffects?.size || !this.take || this.#saveRequested || !snapshotDue(this.#entriesInRun, this.#storedTranscript)) return;
		this.requestSave(this.take);
	}

	/**
	 * For a write that failed, or that cannot go to the journal: resolves once a snapshot taken
	 * after this step (it carries the journal so far, and what the write would have stored; the
	 * entries of one step make one save, see {@link DurableSession.requestSave}) is stored; rejects,
	 * with the store's error, if it could not be.
	 */
	storeInSnapshot(): Promise<void> {
		if (this.take) this.requestSave(this.take);
		const repaired = this.settled().then(() => {
			if (this.#broken === undefined) return;
			// Refused because another agent has the session: the caller can tell that from a store that failed.
			if (this.#takenOver) throw new SessionTakenOverError(this.#takenOver.sessionId, this.#takenOver.by);
			throw new Error(`agentchart: ${this.#broken}`);
		});
		repaired.catch(() => {});
		return repaired;
	}

	/**
	 * Throws {@link SessionTakenOverError} when a newer agent opened the session since this one: of
	 * this process, or of another whose opening a refused write revealed. Its writes are refused,
	 * and so is what would make them.
	 */
	assertWriter(): void {
		this.#claim?.assertNewest();
		if (this.#takenOver) throw new SessionTakenOverError(this.#takenOver.sessionId, this.#takenOver.by);
	}

	/** The claim to write the session, for the session that replaces this one in the same agent (a restore). */
	get claim(): SessionClaim | undefined {
		return this.#claim;
	}

	/**
	 * Whether a write was refused because a newer agent opened the session (here, or in another
	 * process): for good, since that agent writes the session from then on.
	 */
	get takenOver(): boolean {
		return this.#takenOver !== undefined;
	}

	/**
	 * Asks the claim to say when a newer agent of this process opens the session, and the store when
	 * another process does (its `watchTakeover`), until {@link DurableSession.stopWatching}: a run
	 * waiting for a person writes nothing, so no refused write would tell it. Taken over by another
	 * process, the session is as after such a refusal: noted, and `onTakenOver` is called (by one of
	 * this process: `onTakenOver` only, as at once when that happened before the watch). Once per
	 * watch; the store's part needs a store that watches.
	 */
	watchForTakeover(): void {
		if (this.#takenOver) return;
		this.#watchClaim();
		const store = this.store;
		const sessionId = this.sessionId;
		if (this.#stopWatching || !store?.watchTakeover || sessionId === undefined) return;
		let stop: (() => void) | undefined;
		try {
			stop = store.watchTakeover(sessionId, (error) => {
				if (this.#takenOver) return;
				this.noteProblems([`another process opened the session while a run waited for approval: ${error.message.replace(/^agentchart: /, "")}`]);
				this.#takenOver = error;
				this.onTakenOver?.();
			});
		} catch (error) {
			// The wait goes on as without a watch (the next write tells), and the store's problem is seen.
			this.noteProblems([`the store could not watch the session for another process's opening: ${error instanceof Error ? error.message.replace(/^agentchart: /, "") : String(error)}`]);
			return;
		}
		this.#stopWatching = typeof stop === "function" ? stop : () => {};
	}

	/**
	 * Has the claim call `onTakenOver` when a newer agent of this process opens the session (at
	 * once when one did already), until {@link DurableSession.stopWatching}.
	 */
	#watchClaim(): void {
		const claim = this.#claim;
		if (!claim || claim.onSuperseded) return;
		if (claim.superseded) this.onTakenOver?.();
		else claim.onSuperseded = () => this.onTakenOver?.();
	}

	/** Ends the watch {@link DurableSession.watchForTakeover} began (none: nothing to do). */
	stopWatching(): void {
		if (this.#claim) this.#claim.onSuperseded = undefined;
		const stop = this.#stopWatching;
		this.#stopWatching = undefined;
		stop?.();
	}

	/** Whether the agent saves its session (it has a store and a session id). */
	get saves(): boolean {
		return this.store !== undefined && this.sessionId !== undefined;
	}

	/**
	 * Saves a snapshot once the current step is over (requests made before then make one save).
	 * Saves go one at a time, in order.
	 */
	requestSave(take: () => AgentSnapshot): void {
		if (!this.saves || this.#saveRequested || this.#closed) return;
		this.#saveRequested = true;
		queueMicrotask(() => {
			// Taken already (see takeRequestedSave).
			if (!this.#saveRequested) return;
			this.#saveRequested = false;
			this.#enqueueSave(take);
		});
	}

	/**
	 * Takes the save asked for in this step now, if one was: a write made next (a person's decision)
	 * then lands after it, so that whoever waits for that write knows the commands before it are
	 * stored too (a steer before an approve, say).
	 */
	takeRequestedSave(take: () => AgentSnapshot): void {
		if (!this.#saveRequested) return;
		this.#saveRequested = false;
		this.#enqueueSave(take);
	}

	/** Saves now (after the saves already asked for); resolves once stored. */
	saveNow(take: () => AgentSnapshot): Promise<void> {
		if (!this.saves) return Promise.resolve();
		if (this.#closed) return this.settled();
		return this.#enqueueSave(take);
	}

	/**
	 * The agent was disposed: the save asked for in this step is taken now, and none after. A
	 * snapshot taken later would show the run the dispose closed (calls waiting for approval
	 * answered "Agent was disposed"), where the store is to keep the session as the dispose found
	 * it, as after a crash (docs/durable.md). Journal entries still go out in order.
	 */
	close(take: () => AgentSnapshot): void {
		this.takeRequestedSave(take);
		this.#closed = true;
	}

	/** Whether a save was asked for in this step (it is taken once the step is over). */
	get saveRequested(): boolean {
		return this.#saveRequested;
	}

	/** Resolves when every save made or asked for so far is done, and every journal entry appended. */
	settled(): Promise<void> {
		// A save asked for in this step is made in a microtask queued before this one's.
		if (this.#saveRequested) return new Promise<void>((resolve) => queueMicrotask(resolve)).then(() => this.settled());
		const tail = this.#tail;
		return tail ? tail.then(() => this.#saving) : (this.#saving ?? Promise.resolve());
	}

	#enqueueSave(take: () => AgentSnapshot): Promise<void> {
		const store = this.store as AgentStore;
		const id = this.sessionId as string;
		let snapshot: AgentSnapshot;
		try {
			snapshot = take();
		} catch (error) {
			this.#failed("take a snapshot", error);
			return this.#saving ?? Promise.resolve();
		}
		// After the saves already made (not those only asked for: they are made after this one).
		const machine = snapshot.machine;
		// Handed over before the entries after it: they land after it, and are read after it.
		this.#lineWithoutSnapshot = false;
		this.#between = machine.status === "active" && machine.value === "idle" && !machine.context.run ? { context: machine.context, from: snapshot } : undefined;
		this.#entriesSince = 0;
		this.#entriesInRun = 0;
		// A run's snapshot holds the transcript so far in `agent.transcript` when the caller changed it.
		this.#storedTranscript = Math.max(machine.context.messages.length, snapshot.agent.transcript?.length ?? 0);
		let saved: Promise<void> | undefined;
		try {
			saved = this.#write(() => store.saveSnapshot(id, snapshot));
		} catch (error) {
			saved = Promise.reject(error);
		}
		if (!saved) {
			// Stored already (a store in memory): nothing to wait for.
			this.#broken = undefined;
			this.#saving = undefined;
			return Promise.resolve();
		}
		this.#saving = saved.then(
			() => {
				// Writes go one at a time: a snapshot stored after a failed write was taken after it, and has what it had.
				this.#broken = undefined;
			},
			(error: unknown) => {
				// The store does not hold it: the next run starts with a snapshot again.
				if (this.#between?.from === snapshot) this.#between = undefined;
				this.#failed("save a snapshot", error);
			},
		);
		return this.#saving;
	}

	/**
	 * Hands a write to the store once the one before it is done: what a store holds is always what
	 * the agent wrote up to some point, also when the store itself writes in parallel. Undefined:
	 * written already (a synchronous store).
	 */
	#write(write: () => void | PromiseLike<void>): Promise<void> | undefined {
		let turn: Promise<void> | undefined;
		try {
			turn = this.#claim?.writeTurn(this.store as AgentStore);
		} catch (error) {
			return Promise.reject(error);
		}
		const tail = this.#tail;
		let written: Promise<void>;
		const handOver = (): void | PromiseLike<void> => {
			const result = write();
			if (result) this.#claim?.handedOver(result);
			return result;
		};
		// Checked again when its turn comes: a newer agent may have opened the session meanwhile, or a
		// load's opening still undecided then may have been decided since.
		const whenWriter = (): void | PromiseLike<void> => {
			const waiting = this.#claim?.writeTurn(this.store as AgentStore);
			return waiting ? waiting.then(whenWriter) : handOver();
		};
		// After the writes before it, and after the opening (or the load's decision) it waits for.
		if (tail || turn) written = (tail ?? Promise.resolve()).then(() => turn).then(whenWriter);
		else {
			let result: void | PromiseLike<void>;
			try {
				result = handOver();
			} catch (error) {
				// A store that throws instead of rejecting fails the write the same way.
				result = Promise.reject(error);
			}
			if (!result) return undefined;
			written = Promise.resolve(result);
		}
		// The next write goes after this one, failed or not.
		const done = written.then(
			() => {},
			() => {},
		);
		this.#tail = done;
		void done.then(() => {
			if (this.#tail === done) this.#tail = undefined;
		});
		return written;
	}

	/**
	 * The agent between runs as the store holds it, or will once the writes handed to it land (they
	 * land in order): a run started from it needs only its prompt journaled (see `RunStart`).
	 * Undefined when the store's last snapshot is of a run in progress, a write failed, or a save
	 * asked for in this step will replace it.
	 */
	betweenRuns(): PlainAgentContext | undefined {
		return this.#saveRequested || this.#broken !== undefined || this.#lineWithoutSnapshot ? undefined : this.#between?.context;
	}

	/**
	 * A loaded session: the store holds `context` between runs (its snapshot, with the runs its
	 * journal ended applied), and `entries` journal entries after the snapshot.
	 */
	loadedBetweenRuns(context: PlainAgentContext, entries: number): void {
		this.#between = { context, from: undefined };
		this.#entriesSince = entries;
		this.#storedTranscript = context.messages.length;
	}

	/**
	 * A loaded session whose snapshot is of a run in progress (a long run's, say), its transcript
	 * `transcriptLength` messages long and `entries` journal entries after it: the next snapshot
	 * is spaced from that transcript, as it would have been in the process that stored it (counted
	 * from nothing, a long run restored took one every 256 entries, writing its whole transcript).
	 */
	loadedInRun(transcriptLength: number, entries: number): void {
		this.#storedTranscript = transcriptLength;
		this.#entriesSince = entries;
		this.#entriesInRun = entries;
	}

	/**
	 * Journals the end of a run (or of a manual compaction that did not compact) that started on
	 * `base` (see {@link DurableSession.betweenRuns}), after which the store holds `after` between runs. False, with nothing written, when the store
	 * no longer holds `base` or its journal is long enough for a snapshot: the caller saves one.
	 * `failed` runs if the store cannot write the entry.
	 */
	endRun(base: PlainAgentContext, entry: RunEnd | CompactionEnd, after: PlainAgentContext, failed: () => void): boolean {
		const between = this.#between;
		if (!between || between.context !== base || this.#saveRequested || this.#broken !== undefined || snapshotDue(this.#entriesSince, after.messages.length)) return false;
		this.#between = { context: after, from: between.from };
		this.#storedTranscript = after.messages.length;
		const written = this.journal.append(entry);
		if (written)
			void written.then(undefined, () => {
				if (this.#between?.context === after) this.#between = undefined;
				failed();
			});
		return true;
	}

	/**
	 * Problems the store reported (a failed write, what a load had to leave out), oldest first: the
	 * first {@link PROBLEMS_KEPT_FIRST} and the latest {@link PROBLEMS_KEPT_LATEST}, with a line
	 * between them that counts those left out.
	 */
	get problems(): readonly string[] {
		if (this.#problemsShown) return this.#problemsShown;
		const problems = this.#problems;
		if (!problems) return NO_PROBLEMS;
		const left = this.#problemsLeftOut;
		this.#problemsShown = left === 0 ? problems : [...problems.slice(0, PROBLEMS_KEPT_FIRST), `(${left} more ${left === 1 ? "problem" : "problems"} left out here; the first ${PROBLEMS_KEPT_FIRST} and the latest ${PROBLEMS_KEPT_LATEST} are kept)`, ...problems.slice(PROBLEMS_KEPT_FIRST)];
		return this.#problemsShown;
	}

	/**
	 * Adds problems to {@link DurableSession.problems}: at the end, or `before` the ones there
	 * (what a load found, which came first). A store that fails every write of a long-lived agent
	 * reports a problem per write: only the first and the latest are kept, so that the list (and the
	 * agent's memory) does not grow with every prompt.
	 */
	noteProblems(messages: readonly string[], before = false): void {
		if (messages.length === 0) return;
		const problems = (this.#problems ??= []);
		this.#problemsShown = undefined;
		if (before) problems.unshift(...messages);
		else problems.push(...messages);
		const over = problems.length - PROBLEMS_KEPT_FIRST - PROBLEMS_KEPT_LATEST;
		if (over > 0) {
			problems.splice(PROBLEMS_KEPT_FIRST, over);
			this.#problemsLeftOut += over;
		}
	}

	/** Throws, naming them, when writes failed since the last call (`agent.save()` and `agent.saved()` reject with it): a {@link SessionTakenOverError} once a newer agent has the session. */
	reportFailedWrites(): void {
		const failed = this.#failedWrites;
		if (failed === undefined) return;
		const left = this.#failedWritesLeftOut;
		this.#failedWrites = undefined;
		this.#failedWritesLeftOut = 0;
		const count = failed.length + left;
		const named = left === 0 ? failed : [...failed.slice(0, FAILED_WRITES_NAMED_FIRST), `(${left} more)`, ...failed.slice(FAILED_WRITES_NAMED_FIRST)];
		const message = `agentchart: ${count === 1 ? failed[0] : `${count} writes failed: ${named.join("; ")}`}`;
		// Taken over: the caller's `instanceof SessionTakenOverError` is how it knows to load the session again.
		const takenOver = this.#takenOver;
		if (takenOver === undefined) throw new Error(message);
		const error = new SessionTakenOverError(takenOver.sessionId, takenOver.by);
		error.message = message;
		throw error;
	}

	#failed(what: string, error: unknown): never | void {
		if (error instanceof SessionTakenOverError && this.#takenOver === undefined) {
			this.#takenOver = error;
			this.onTakenOver?.();
		}
		const message = error instanceof SessionTakenOverError ? `could not ${what}: ${error.message.replace(/^agentchart: /, "")}` : `the store could not ${what}: ${error instanceof Error ? error.message.replace(/^agentchart: /, "") : String(error)}`;
		this.noteProblems([message]);
		const failedWrites = (this.#failedWrites ??= []);
		failedWrites.push(message);
		// Named in a rejection's message: the first and the latest, so that it stays readable (and small) after thousands.
		if (failedWrites.length > FAILED_WRITES_NAMED_FIRST + FAILED_WRITES_NAMED_LATEST) {
			failedWrites.splice(FAILED_WRITES_NAMED_FIRST, 1);
			this.#failedWritesLeftOut++;
		}
		this.#broken = message;
		if (what === "append a journal entry") throw new Error(`agentchart: ${message}`);
	}

	/** The run is over: its effects are in the transcript, and the journal forgets them. */
	forgetRun(): void {
		this.#openEffects = undefined;
		this.journal.forgetBefore(this.journal.nextSeq);
	}
}
