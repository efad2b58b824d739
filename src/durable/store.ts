/**
 * Where an agent keeps its session: the last snapshot and the journal appended since. An
 * `Agent` given a store (`new Agent({ store, sessionId })`) appends every journal entry before
 * the effect it records goes on; an ongoing session's runs are journaled too (a prompt on the
 * agent as the store holds it, and the end of a run that ended as the journal says). It saves a
 * snapshot when the journal cannot stand for the agent (a new session or an agent changed between
 * runs, before the prompt; a `continue()`; a wait for approval; a compaction; a failed run; every
 * command that changes what is queued or decided) and once the journal after the last snapshot
 * is long. `Agent.load({ store, sessionId, ...options })` continues the session.
 */
import type { StoredJournalEntry } from "./journal.js";
import type { AgentSnapshot } from "./snapshot.js";

/**
 * A stored session as loaded: its last good snapshot, with the journal entries appended after it.
 *
 * @example
 * const loaded: LoadedSession | undefined = await store.load("user-42");
 * if (loaded?.problems.length) console.warn(loaded.problems.join("\n"));
 */
export interface LoadedSession {
	/** Undefined when files of the session were found but no snapshot could be read (see `problems`). */
	snapshot: AgentSnapshot | undefined;
	/**
	 * What the store found wrong and left out (a journal line torn by a crash mid-write, a
	 * snapshot that does not read); empty when everything read. Nothing is left out silently.
	 */
	problems: string[];
}

/**
 * A place to keep agent sessions. Implement it for your database; `createMemoryStore()` and
 * `createFileStore(dir)` are built in. A write that cannot be made rejects (or throws): the agent
 * reports it (`storeProblems`, and `save()` / `saved()` reject), makes no effect whose intent it
 * could not store, and writes a snapshot in place of its next entry (see docs/durable.md).
 *
 * @example
 * const store = createFileStore("./sessions", { fsync: "always" });
 * const agent = await Agent.load({ store, sessionId: "user-42", initialState: { model, tools }, streamFn });
 */
export interface AgentStore {
	/**
	 * The session's last good snapshot, its `journal` holding the entries appended after it, or
	 * undefined (or null) for a new session (one opened but never written included). Keep the entries as
	 * appended and return `{ snapshot: { ...snapshot, journal: journalAfter(snapshot, entries) },
	 * problems: [] }` (see {@link journalAfter}): a snapshot returned as it was saved leaves out every
	 * run journaled since, and nothing would say so. Read the snapshot and the entries as of one
	 * moment (one transaction). `peek`: a look before the session is opened (`Agent.load` checks
	 * that it can continue the session before it takes it from the agent that writes it): change
	 * nothing.
	 */
	load(sessionId: string, options?: { peek?: boolean | undefined }): Promise<LoadedSession | undefined>;
	/**
	 * Replaces the session's snapshot (atomically: a crash leaves the old one or the new one). The
	 * journal entries numbered up to `snapshot.journalSeq` may be dropped; any later ones must be
	 * kept, except the entries of a run whose end is journaled (a `RunEnd`) other than its start
	 * and end (a restore reads only those of a run that ended), and those of another line than the
	 * snapshot's (`lineage`: an agent that started the session anew wrote them; see {@link journalAfter}). An agent hands its writes over one
	 * at a time, in the order it made them: each only once the one before it has resolved. May
	 * return nothing when the snapshot is stored already (a store in memory): a write that needs
	 * no waiting then costs no promise.
	 */
	saveSnapshot(sessionId: string, snapshot: AgentSnapshot): void | Promise<void>;
	/**
	 * Appends one journal entry (in `seq` order; numbers may skip one: a tool's progress that a newer
	 * report followed before its turn came is not handed over). Resolves once the entry is durable as
	 * the store promises; the effect it records waits for that. May return nothing when it already is. An
	 * entry's `seq` is unique within its line (`lineage`) only: an agent that starts the session
	 * anew (a `new Agent` on a stored session) numbers its entries from 1 again, so a database keys
	 * them by session, line and `seq`, or by the order they came in.
	 */
	appendJournal(sessionId: string, entry: StoredJournalEntry): void | Promise<void>;
	/**
	 * Optional: a name for the place a session is kept, the same from every store object that
	 * reaches it (the file store: its directory). Only the newest agent opened on a session in a
	 * process writes it; without this, sessions are told apart by store object and id, so two
	 * objects of a store on one database would not see each other's agents.
	 */
	sessionKey?(sessionId: string): string;
	/**
	 * Optional: an agent opens the session (`new Agent` or `Agent.restore` with this store, or
	 * `Agent.load`, before it loads). A store that processes share records here that this one
	 * writes the session from now on, and from then on refuses the writes of the ones that opened
	 * it before (rejecting with {@link SessionTakenOverError}): the file store does. Writes wait for
	 * it. One that fails (rejects or throws) fails `Agent.load`; for a `new Agent` or an
	 * `Agent.restore` it is reported, and asked again before the agent's next write.
	 */
	open?(sessionId: string): void | Promise<void>;
	/**
	 * Optional: calls `onTakenOver` once another process opens the session this store opened (for
	 * a store with `open`), until the returned function is called. An agent watches while its run
	 * waits for a person, the one time it writes nothing: without a watch it would learn of the
	 * other process only at its next write, and its wait would go on although nobody here can answer
	 * (the other process asks). The file store watches its `writer` file, looking once a second.
	 *
	 * @example
	 * const stop = store.watchTakeover?.("user-42", (error) => console.log(error.message));
	 * stop?.();
	 */
	watchTakeover?(sessionId: string, onTakenOver: (error: SessionTakenOverError) => void): () => void;
}

/**
 * Thrown by an agent whose stored session a newer agent of this process opened since (`new
 * Agent`, `Agent.load` or `Agent.restore` with the same store and session id): only the newest
 * agent of a session writes it, so the older one's writes are refused (they go to its
 * `storeProblems` with this message), and its `prompt()`, `continue()`, `compact()`, `reset()`,
 * `approve()`, `reject()`, `steer()` and `followUp()` throw it. A store shared by processes
 * rejects a write with it once an agent of another process opened the session (the file store
 * does); from then on the agent's commands throw it too.
 *
 * @example
 * try {
 *   await agent.prompt(text);
 * } catch (error) {
 *   if (error instanceof SessionTakenOverError) agent = await Agent.load(options); // the session as stored now
 *   else throw error;
 * }
 */
export class SessionTakenOverError extends Error {
	/** `by`: who opened the session since (default: another agent of this process). */
	constructor(
		readonly sessionId: string,
		readonly by = "another agent in this process",
	) {
		super(
			`agentchart: session "${sessionId}" was opened by ${by} since this one (new Agent, Agent.load or Agent.restore with the same store): only the newest agent of a session writes it, so this one's writes are refused. Use that agent, or load the session again`,
		);
		this.name = "SessionTakenOverError";
	}
}

/**
 * The entries a loaded session continues with: the snapshot's own, then the store's entries
 * numbered after them that belong to its line (not those of an agent it replaced, see
 * `AgentSnapshot.lineage`).
 *
 * @example
 * const journal = journalAfter(snapshot, storedEntries);
 */
export function journalAfter(snapshot: AgentSnapshot, stored: readonly StoredJournalEntry[]): StoredJournalEntry[] {
	const last = Math.max(snapshot.journalSeq ?? 0, snapshot.journal.at(-1)?.seq ?? 0);
	return [...snapshot.journal, ...stored.filter((entry) => entry.seq > last && ofLineage(snapshot, entry))];
}

/**
 * Whether an entry stored after `snapshot` belongs to its line: appended by the agent that saved
 * it or one that continued it. A snapshot without a line (an older agentchart's) takes every entry.
 *
 * @example
 * storedEntries.filter((entry) => ofLineage(snapshot, entry));
 */
export function ofLineage(snapshot: Pick<AgentSnapshot, "lineage">, entry: Pick<StoredJournalEntry, "lineage">): boolean {
	return snapshot.lineage === undefined || entry.lineage === snapshot.lineage;
}

interface MemorySession {
	snapshot: AgentSnapshot | undefined;
	journal: StoredJournalEntry[];
}

/**
 * A store in this process's memory: for tests, and for an application that moves snapshots
 * itself. It keeps the objects it is given, not copies (a copy of every journal entry cost an
 * ongoing session's prompt about a fifth more CPU, docs/performance.md): a message your code
 * changes in place after it was saved changes what this store holds, where a store that writes
 * files keeps what was saved. A load hands out a copy, so an agent loaded from it changes nothing
 * in it.
 *
 * @example
 * const store = createMemoryStore();
 * const agent = new Agent({ store, sessionId: "s1", initialState: { model }, streamFn });
 */
export function createMemoryStore(): AgentStore & { sessions(): string[] } {
	const sessions = new Map<string, MemorySession>();
	const sessionOf = (id: string): MemorySession => {
		let session = sessions.get(id);
		if (!session) {
			session = { snapshot: undefined, journal: [] };
			sessions.set(id, session);
		}
		return session;
	};
	return {
		async load(sessionId) {
			const session = sessions.get(sessionId);
			if (!session?.snapshot) return undefined;
			// Read as a file store reads what it wrote, JSON's reading of it (a function or symbol left
			// out, a Date as its text, NaN as null), so a session a test stores here loads as it would
			// in production on the file store, and nothing a structured clone refuses makes it unloadable.
			const stored: AgentSnapshot = { ...session.snapshot, journal: journalAfter(session.snapshot, session.journal) };
			return { snapshot: JSON.parse(JSON.stringify(stored)) as AgentSnapshot, problems: [] };
		},
		saveSnapshot(sessionId, snapshot) {
			const session = sessionOf(sessionId);
			session.snapshot = snapshot;
			// Entries the snapshot has seen are in it, or belong to a run that ended; those of another line are never read.
			const seen = snapshot.journalSeq ?? 0;
			session.journal = session.journal.filter((entry) => entry.seq > seen && ofLineage(snapshot, entry));
		},
		appendJournal(sessionId, entry) {
			const journal = sessionOf(sessionId).journal;
			// Only a call's latest progress is read: a tool that reports at every chunk of its output
			// would otherwise keep each report (all it output so far) in memory until its run ends.
			if (entry.phase === "update") {
				const earlier = journal.findLastIndex((stored) => stored.effect === entry.effect && stored.phase === "update");
				if (earlier >= 0) journal.splice(earlier, 1);
			}
			// A run that ended is its start and its end: its effects' entries are not read again.
			if (entry.kind === "run" && entry.phase === "end") {
				let start = journal.length - 1;
				while (start >= 0 && !(journal[start]?.kind === "run" && journal[start]?.effect === entry.effect)) start--;
				if (start >= 0) journal.length = start + 1;
			}
			journal.push(entry);
		},
		sessions: () => [...sessions.keys()],
	};
}
