/**
 * An agent's durability: the journal of its run in progress, and, with a store, what it
 * appends and saves. The journal is kept whether or not there is a store, so that a snapshot
 * taken in the middle of a run (`agent.snapshot()`) carries what its effects did.
 */
import { JournalIndex, type StoredJournalEntry } from "../durable/journal.js";
import type { AgentSnapshot } from "../durable/snapshot.js";
import type { AgentStore } from "../durable/store.js";

/**
 * The journal and the store of one agent.
 *
 * @example
 * const session = new DurableSession(store, "s1");
 * session.requestSave(() => agent.snapshot());
 */
export class DurableSession {
	readonly journal: JournalIndex;
	/** Problems the store reported (a failed write, what a load had to leave out), oldest first. */
	readonly problems: string[] = [];
	#saveRequested = false;
	/** The last save asked for (none yet: nothing to wait for). */
	#saving: Promise<void> | undefined;
	/** The last snapshot taken for the store. */
	#latest: AgentSnapshot | undefined;
	/** The snapshot the store holds, once no save is on its way. */
	#stored: AgentSnapshot | undefined;
	/**
	 * The last write handed to the store behind a save still on its way (the save itself, or an
	 * entry appended after it); undefined once it is done. A write made meanwhile goes after it.
	 */
	#tail: Promise<void> | undefined;

	constructor(
		readonly store: AgentStore | undefined,
		readonly sessionId: string | undefined,
		entries: readonly StoredJournalEntry[] = [],
		lastSeq = 0,
	) {
		this.journal = new JournalIndex(entries, lastSeq);
		const id = sessionId;
		if (store && id !== undefined) {
			this.journal.onAppend = (entry) => {
				// After the snapshots taken before it: an effect that waits for its intent then also
				// waits for the snapshot that says its run exists (a run started by `continue()`, or
				// on a changed agent, is known from that snapshot only; a restore from the one before
				// would not look for its entries).
				const tail = this.#tail;
				const written = tail ? this.#after(tail.then(() => store.appendJournal(id, entry))) : store.appendJournal(id, entry);
				// The effect waits for a durable intent; a failed write fails the effect (see the batch actor).
				if (written) return written.catch((error: unknown) => this.#failed("append a journal entry", error));
				return undefined;
			};
		}
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
		if (!this.saves || this.#saveRequested) return;
		this.#saveRequested = true;
		queueMicrotask(() => {
			this.#saveRequested = false;
			this.#enqueueSave(take);
		});
	}

	/** Saves now (after the saves already asked for); resolves once stored. */
	saveNow(take: () => AgentSnapshot): Promise<void> {
		if (!this.saves) return Promise.resolve();
		return this.#enqueueSave(take);
	}

	/** Resolves when every save made or asked for so far is done (and the entries appended after them). */
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
		this.#latest = snapshot;
		this.#stored = undefined;
		const save = () => store.saveSnapshot(id, snapshot);
		const tail = this.#tail;
		let saved: Promise<void>;
		try {
			saved = tail ? tail.then(save) : Promise.resolve(save());
		} catch (error) {
			saved = Promise.reject(error);
		}
		this.#saving = this.#after(saved).then(
			() => {
				if (this.#latest === snapshot) this.#stored = snapshot;
			},
			(error: unknown) => this.#failed("save a snapshot", error),
		);
		return this.#saving;
	}

	/** Makes `written` the write the next ones go after, until it is done (failed or not). */
	#after<T>(written: Promise<T>): Promise<T> {
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
	 * The snapshot the store holds, when it holds the agent between runs and no save is on its
	 * way: a run started from it needs only its prompt journaled (see `RunStart`).
	 */
	storedBetweenRuns(): AgentSnapshot | undefined {
		const stored = this.#stored;
		if (!stored || this.#saveRequested) return undefined;
		return stored.machine.status === "active" && stored.machine.value === "idle" && !stored.machine.context.run ? stored : undefined;
	}

	#failed(what: string, error: unknown): never | void {
		const message = `the store could not ${what}: ${error instanceof Error ? error.message : String(error)}`;
		this.problems.push(message);
		if (what === "append a journal entry") throw new Error(`agentchart: ${message}`);
	}

	/** The run is over: its effects are in the transcript, and the journal forgets them. */
	forgetRun(): void {
		this.journal.forgetBefore(this.journal.nextSeq);
	}
}
