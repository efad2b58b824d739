/**
 * A store on the local file system: one directory per session, holding
 *
 * - `id`: the session's id, exactly (JSON), put there once, when a store first writes the
 *   session: a file system that does not tell upper from lower case (macOS's, Windows's) gives
 *   "Alice" and "alice" one directory, and this is how the second one finds out and is refused
 *   (see session-directory.ts);
 * - `writer`: which store opened the session last (a random token, with the process id and the
 *   time for a person reading it), replaced atomically by `open`;
 * - `current`: the name of the session's files directory (below); without it, the files are in
 *   the session's directory itself (a session's first opening writes them there, as do
 *   agentchart before the files directories and a store that writes a session without opening it);
 * - the files directory, `g<N>-<token>`, one per opening after the first (`N` counts them):
 *   - `snapshot.json`: the last snapshot, replaced atomically (written to a temporary file,
 *     flushed, renamed over the old one; the one before is kept as `snapshot.prev.json`, which a
 *     load takes when the last one is damaged, but not when it is whole and of a newer format:
 *     that load fails; none is kept before a snapshot without a conversation, after `reset()`,
 *     which would otherwise bring the cleared conversation back);
 *   - `journal.jsonl`: the journal, appended one line per entry, each line carrying a CRC-32 of
 *     its JSON. A line a crash cut short (or any line that does not check) ends what is read, is
 *     reported, and is cut off the file when the store that writes the session loads it (so that
 *     what is appended next is read again; a store reading a session that another opened, without
 *     opening it, leaves the file as it is: the line may be an append under way).
 *
 * - `unread-<time>-<token>`: what a load could not use, kept there by the store that loaded the
 *   session to write it (the files, moved, when no snapshot read; a copy of the snapshot that did
 *   not read and of the journal as it was, when it fell back to the one before; a copy of the
 *   journal whose lines it cut, when more than an append a crash cut short), for a person.
 *
 * When a snapshot is saved between runs, the journal entries it has seen are dropped (they are
 * in the transcript); entries numbered after it, if the file has any, are kept. Writes to one
 * session go one at a time, in the order they were asked for (by every file store of the
 * process on that directory); those of all sessions take turns, a few dozen at once (see
 * FILE_OPERATIONS_AT_ONCE), so that thousands of sessions do not run the process out of files.
 *
 * One writer per session: a store that opened a session writes it only while the session's
 * `writer` file is the one it put there; once a store of another process opened the session,
 * this one's writes are refused (`SessionTakenOverError`). A write is checked before it and
 * again once it is in the file: one that the other process may have read the session without (it
 * opened the session while the write was on its way) is refused too, although it landed, so that
 * the effect waiting for it is not made here while the other process, which never saw its
 * intent, makes it. And such a late write lands where no load reads it: opening a session copies
 * its files into a files directory of the opener's own (after the new `writer` file is in place)
 * and then names it in `current`, so a write of the store it fenced off lands in the directory
 * before, which the opening read before or never reads (a write that landed before the copy is in
 * it, as a write a crash interrupted after it landed is). The files directories of earlier
 * openings are removed once `current` names the new one. A load reads where `current` names, and
 * again if it names another once the read is done.
 */
import { type BigIntStats, closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, unwatchFile, watchFile, writeFileSync } from "node:fs";
import { randomInt, randomUUID } from "node:crypto";
import { copyFile, mkdir, open, readdir, readFile, rm, truncate } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { crc32 } from "node:zlib";
import { shown, unknownKeys } from "../agent-input.js";
import { flushDirectory, unreadable, withFileTurn } from "./file-io.js";
import type { StoredJournalEntry } from "./journal.js";
import { claimDirectory, directoryName } from "./session-directory.js";
import { checkJournalEntryShape } from "./snapshot-shape.js";
import { type AgentSnapshot, readAgentSnapshot } from "./snapshot.js";
import { type AgentStore, journalAfter, type LoadedSession, ofLineage, SessionTakenOverError } from "./store.js";

/**
 * When the file store waits for the disk (`fsync`):
 * - `"always"` (default): every journal entry and every snapshot is on disk before the agent goes
 *   on (a crash of the machine, not only of the process, loses nothing);
 * - `"snapshots"`: snapshots are; journal entries are written but the OS flushes them when it
 *   will (a process crash loses nothing, a power cut may lose the last entries);
 * - `"never"`: nothing waits for the disk.
 *
 * @example
 * const fsync: FsyncPolicy = process.env["CI"] ? "never" : "always";
 * const store = createFileStore("./sessions", { fsync });
 */
export type FsyncPolicy = "always" | "snapshots" | "never";

/**
 * Options of {@link createFileStore}.
 *
 * @example
 * const options: FileStoreOptions = { fsync: "snapshots" };
 * const store = createFileStore("./sessions", options);
 */
export interface FileStoreOptions {
	/** When to wait for the disk (default `"always"`). */
	fsync?: FsyncPolicy | undefined;
}

const SNAPSHOT = "snapshot.json";
const PREVIOUS = "snapshot.prev.json";
const JOURNAL = "journal.jsonl";
const WRITER = "writer";
const CURRENT = "current";
/** What a files directory holds. */
const SESSION_FILES = [SNAPSHOT, PREVIOUS, JOURNAL];
/** A files directory's name: the opening's number, then its token's first characters. */
const FILES_DIRECTORY = /^g(\d+)-[0-9a-f]+$/;
/** A fence's or a `current`'s temporary file (see `fence` and `open`), before its rename. */
const OPENING_TEMPORARY = /^(?:writer|current|id)\.[0-9a-f-]{36}\.tmp$/;
/**
 * How old an opening's leftover is before another opening removes it: one whose opening is still
 * under way (a copy, a file about to be renamed) was written milliseconds ago.
 */
const ABANDONED_AFTER_MS = 60_000;

/** Whether `name` in the session's directory was last written more than {@link ABANDONED_AFTER_MS} ago. */
function isAbandoned(dir: string, name: string): boolean {
	try {
		return Date.now() - statSync(join(dir, name)).mtimeMs > ABANDONED_AFTER_MS;
	} catch {
		return false;
	}
}
const TAKEN_OVER_BY = "an agent of another process (the session's writer file changed)";
/** How often a watch for another process's opening (`watchTakeover`) looks at the `writer` file. */
const TAKEOVER_POLL_MS = 1_000;

/**
 * What is done to each session directory, one at a time, in the order it was asked for: by every
 * file store of the process (two on one directory would otherwise write its files at once).
 */
const queues = new Map<string, Promise<void>>();

/** The `writer` file a store put in a session's directory: its inode and modification time. */
interface WriterFile {
	ino: bigint;
	mtimeNs: bigint;
	size: bigint;
	/**
	 * Why it is no longer this store's, once a check found out: another store replaced it, or it
	 * is gone (the session's directory was removed under this store).
	 */
	lost?: "replaced" | "gone" | undefined;
	/** The files directory of this store's opening, once `current` names it. */
	files?: string | undefined;
}

function checksum(text: string): string {
	return crc32(text).toString(16).padStart(8, "0");
}

/** One journal entry as a line of the journal file. */
function journalLine(entry: StoredJournalEntry): string {
	const json = JSON.stringify(entry);
	return `${checksum(json)}\t${json}\n`;
}

/** Writer files are padded with up to this many spaces (see the fence in createFileStore). */
const WRITER_PADDING = 4096;

/** One snapshot file as written: the snapshot and a checksum of its JSON. */
interface SnapshotFile {
	crc: string;
	snapshot: string;
}

/**
 * The text of a snapshot file. JavaScript strings hold at most 2^29 - 24 characters (V8's limit,
 * about 512 MiB) and the file is one string, its snapshot's JSON escaped once more inside it (each
 * quote in a message's text takes four characters): a transcript of a few hundred megabytes fails
 * to stringify with a bare "Invalid string length", which says nothing of the session or the cure.
 */
function snapshotFileText(sessionId: string, snapshot: AgentSnapshot): string {
	try {
		const body = JSON.stringify(snapshot);
		const file: SnapshotFile = { crc: checksum(body), snapshot: body };
		return JSON.stringify(file);
	} catch (error) {
		if (!(error instanceof RangeError)) throw error;
		throw new Error(
			`agentchart: session "${sessionId}" is too large for the file store: its snapshot (${snapshot.machine.context.messages.length} messages) does not fit in one JavaScript string, at most 512 MiB once escaped (${error.message}). Compact the session (agent.compact()), or let tools return less (a summary, the data kept elsewhere)`,
			{ cause: error },
		);
	}
}

async function readSnapshotFile(path: string): Promise<{ snapshot?: AgentSnapshot; problem?: string }> {
	let text: string;
	try {
		text = await readFile(path, "utf8");
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
		throw unreadable(path, error);
	}
	let value: unknown;
	try {
		const file = JSON.parse(text) as SnapshotFile;
		if (typeof file.snapshot !== "string" || checksum(file.snapshot) !== file.crc) return { problem: `${path} does not match its checksum` };
		value = JSON.parse(file.snapshot);
	} catch (error) {
		return { problem: `${path} does not read (${(error as Error).message})` };
	}
	// Whole, as it was written: a snapshot this agentchart cannot read (a newer format) is not a
	// damaged file to pass over for the one before, nor a session to start anew. The load fails.
	try {
		return { snapshot: readAgentSnapshot(value) };
	} catch (error) {
		throw new Error(`agentchart: ${path} is whole but cannot be read here: ${(error as Error).message.replace(/^agentchart: /, "")}`, { cause: error });
	}
}

/**
 * The journal's entries that check, and what was left out after the first that does not
 * (`goodLength`: the bytes of the lines that check).
 */
async function readJournal(
	path: string,
): Promise<{ entries: StoredJournalEntry[]; problem?: undefined; missing?: true } | { entries: StoredJournalEntry[]; problem: string; goodLength: number; cutsWhole: boolean; missing?: undefined }> {
	let text: string;
	try {
		text = await readFile(path, "utf8");
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return { entries: [], missing: true };
		throw unreadable(path, error);
	}
	const entries: StoredJournalEntry[] = [];
	const lines = text.split("\n");
	let goodLength = 0;
	for (let index = 0; index < lines.length; index++) {
		const line = lines[index] as string;
		// The text ends with a newline: the last piece is empty unless a write was cut short.
		if (line === "" && index === lines.length - 1) break;
		const tab = line.indexOf("\t");
		const json = line.slice(tab + 1);
		let entry: StoredJournalEntry | undefined;
		// A last line without its newline was cut short too, even when what is there checks: the next
		// append would join it, and the two would not check at the next load.
		const whole = index < lines.length - 1;
		if (whole && tab === 8 && checksum(json) === line.slice(0, 8)) {
			// Whole, as it was written: not damage a crash left, to cut away with the lines after it,
			// but an entry this agentchart cannot read (edited by hand, or a newer format). The load fails.
			const subject = `line ${index + 1} of ${path} (whole: it matches its checksum)`;
			let value: unknown;
			try {
				value = JSON.parse(json);
			} catch (error) {
				throw new Error(`agentchart: ${subject} is not JSON: ${(error as Error).message}`, { cause: error });
			}
			checkJournalEntryShape(value, subject);
			entry = value as StoredJournalEntry;
		}
		if (!entry) {
			const dropped = lines.length - index - (lines.at(-1) === "" ? 1 : 0);
			// An append a crash cut short is one last line without its newline; more than that (a whole
			// line that does not check, lines after it) is damage, and what is cut is kept (see load).
			const cutsWhole = whole || dropped > 1;
			const what = cutsWhole ? "damaged: more than an append a crash cut short" : "a write cut short";
			return { entries, goodLength, cutsWhole, problem: `${path}: line ${index + 1} does not check (${what}); it and ${dropped - 1} after it were left out` };
		}
		entries.push(entry);
		goodLength += Buffer.byteLength(line) + 1;
	}
	return { entries };
}

async function flushFile(path: string): Promise<void> {
	const handle = await open(path, "r+");
	try {
		await handle.sync();
	} finally {
		await handle.close();
	}
}

/** Writes (`"w"`) or appends (`"a"`) `text` to `path`, flushed to the disk first when `flush`, through one handle. */
async function writeThrough(path: string, flag: "w" | "a", text: string, flush: boolean): Promise<void> {
	const handle = await open(path, flag);
	try {
		await handle.writeFile(text);
		if (flush) await handle.sync();
	} finally {
		await handle.close();
	}
}


/**
 * The files directory that a session's `current` names (the session's directory itself when it
 * has none), and the number of the opening that made it (0 for the session's directory).
 */
function currentFiles(dir: string): { path: string; number: number } {
	let name: string;
	try {
		// Synchronous, as the writer checks are: a few bytes the OS has cached.
		name = readFileSync(join(dir, CURRENT), "utf8").trim();
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") {
			assertCurrentNotLost(dir);
			return { path: dir, number: 0 };
		}
		// Not a session's directory (the store's root or the session's a file, say): say which file, and why.
		throw unreadable(join(dir, CURRENT), error);
	}
	const match = FILES_DIRECTORY.exec(name);
	if (!match) throw new Error(`agentchart: ${join(dir, CURRENT)} does not name a files directory (it holds "${name}")`);
	return { path: join(dir, name), number: Number(match[1]) };
}

/**
 * Throws when a session has no `current` although its files are in a files directory: `current`
 * is replaced by a rename, never removed, so it was deleted or damaged. Read as a session never
 * opened, the session would load empty without a word, and the next opening would remove the
 * files directory as an earlier opening's. A session whose files are in its directory itself (never
 * opened, or an opening that stopped before it named its copy) has none to lose.
 */
function assertCurrentNotLost(dir: string): void {
	if (SESSION_FILES.some((name) => existsSync(join(dir, name)))) return;
	let names: string[];
	try {
		names = readdirSync(dir);
	} catch {
		return;
	}
	const holding = names.filter((name) => FILES_DIRECTORY.test(name) && SESSION_FILES.some((file) => existsSync(join(dir, name, file))));
	if (holding.length === 0) return;
	throw new Error(
		`agentchart: ${join(dir, CURRENT)} is missing, but ${holding.map((name) => join(dir, name)).join(" and ")} ${holding.length === 1 ? "holds" : "hold"} the session's files (\`current\` is replaced, never removed: was it deleted?). Write the name of the files directory to read into ${join(dir, CURRENT)} (the highest g<N> is the newest), or remove the session's directory to start the session anew`,
	);
}

/**
 * A new directory name in a session's directory for what a load could not use (`unread-<time>-<token>`):
 * no opening removes it (it is neither a files directory nor a session file), so a person can look.
 */
function unreadDirectory(dir: string): string {
	return join(dir, `unread-${new Date().toISOString().replace(/[:.]/g, "-")}-${randomUUID().slice(0, 8)}`);
}

/** Moves those of `names` that are in `files` into `aside`. */
function moveInto(files: string, aside: string, names: readonly string[]): void {
	for (const name of names) {
		try {
			renameSync(join(files, name), join(aside, name));
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
		}
	}
}

/** Copies those of `names` that are in `from` into `to` (flushed to the disk when `flush`). */
async function copyInto(from: string, to: string, names: readonly string[], flush: boolean): Promise<void> {
	for (const name of names) {
		try {
			await copyFile(join(from, name), join(to, name));
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
			throw error;
		}
		if (flush) await flushFile(join(to, name));
	}
	if (flush) flushDirectory(to);
}

/**
 * A file store: the {@link AgentStore} that {@link createFileStore} makes, and where it keeps a session.
 *
 * @example
 * const store: FileStore = createFileStore("./sessions");
 * const agent = await Agent.load({ store, sessionId: "user-42" });
 */
export interface FileStore extends AgentStore {
	/**
	 * The session's directory (`writer`, `current`, and the files directories in it).
	 *
	 * @example
	 * await rm(store.directoryOf("user-42"), { recursive: true }); // the session, gone
	 */
	directoryOf(sessionId: string): string;
	/**
	 * The directory this store reads and writes the session's `snapshot.json` and `journal.jsonl`
	 * in: the files directory of its opening, once it opened the session; else the one the
	 * session's `current` names (the session's directory itself, for a session never opened).
	 * Throws when the directory is another session's (an id that differs only in case, on a file
	 * system that does not tell case apart), as a load of the session fails.
	 *
	 * @example
	 * const journal = await readFile(join(store.filesOf("user-42"), "journal.jsonl"), "utf8");
	 */
	filesOf(sessionId: string): string;
	/**
	 * Records that this store writes the session from now on (see {@link AgentStore.open}): the
	 * writes of stores that opened it before, in this process or another, are refused from then on.
	 *
	 * @example
	 * await store.open("user-42"); // an agent of another process on "user-42" writes no more
	 */
	open(sessionId: string): Promise<void>;
	/**
	 * Calls `onTakenOver` once another store (of this process or another) opened a session this
	 * one opened, looking at the session's `writer` file once a second (see
	 * {@link AgentStore.watchTakeover}); at once when that happened before the watch. Nothing for a
	 * session this store did not open.
	 *
	 * @example
	 * const stop = store.watchTakeover("user-42", () => console.log("another process has user-42"));
	 */
	watchTakeover(sessionId: string, onTakenOver: (error: SessionTakenOverError) => void): () => void;
}

const FSYNC_POLICIES: readonly unknown[] = ["always", "snapshots", "never"] satisfies FsyncPolicy[];

/**
 * The fsync policy `options` ask for, once `root` and `options` are checked: a policy misspelt
 * (`"Always"`) used to be taken as one that waits for the disk less often than asked, and a
 * misspelt option (`{ fsycn }`) as no option; both are refused with a `TypeError`, as a `root` that
 * names no directory is.
 */
function fileStoreFsync(root: unknown, options: unknown): FsyncPolicy {
	if (typeof root !== "string" || root === "") throw new TypeError(`createFileStore(root): expected the path of a directory (a non-empty text), got ${shown(root)}`);
	if (typeof options !== "object" || options === null || Array.isArray(options)) throw new TypeError(`createFileStore(root, options): expected { fsync?: "always" | "snapshots" | "never" }, got ${shown(options)}`);
	const unknown = unknownKeys(options, ["fsync"]);
	if (unknown !== undefined) throw new TypeError(`createFileStore(root, options): unknown option ${unknown} (the only one is "fsync")`);
	const fsync = (options as FileStoreOptions).fsync ?? "always";
	if (!FSYNC_POLICIES.includes(fsync)) throw new TypeError(`createFileStore(root, options): fsync must be "always", "snapshots" or "never", got ${shown(fsync)}`);
	return fsync;
}

/**
 * The journal as the snapshot before the one that does not read can take it: the file holds only
 * the entries after that one (a save drops those it has seen), so the entries between the two
 * snapshots are gone, and the ones after them cannot follow the older one. Applied across the
 * hole, they left the run inconsistent (a call that had run was asked about again, its decision
 * lost). Those after a gap in the numbering are left out, and `problems` says so.
 */
function followingWithoutGap(snapshot: AgentSnapshot, entries: readonly StoredJournalEntry[], problems: string[]): StoredJournalEntry[] {
	let next = Math.max(snapshot.journalSeq ?? 0, snapshot.journal.at(-1)?.seq ?? 0) + 1;
	const kept: StoredJournalEntry[] = [];
	let left = 0;
	for (const entry of entries) {
		if (!ofLineage(snapshot, entry) || entry.seq < next) kept.push(entry);
		else if (entry.seq === next && left === 0) {
			kept.push(entry);
			next++;
		} else left++;
	}
	if (left > 0) problems.push(`${left} journal ${left === 1 ? "entry" : "entries"} written after ${SNAPSHOT} left out: ${left === 1 ? "it follows" : "they follow"} that snapshot, not ${PREVIOUS} (the runs they journaled go on from the older snapshot's point)`);
	return kept;
}

/**
 * `root` through its real path (a symlink in it followed), as far as it exists: the part not made
 * yet is joined to the real path of the part that is.
 */
function realRootOf(root: string): string {
	const missing: string[] = [];
	for (let path = root; ; path = dirname(path)) {
		try {
			return join(realpathSync(path), ...missing.reverse());
		} catch {
			// Not there yet (or not readable): the key stays the path as given, from the part that is.
			if (dirname(path) === path) return root;
			missing.push(basename(path));
		}
	}
}

/** Whether a snapshot is of a session without a conversation (after `reset()`): no transcript, no run. */
function isCleared(snapshot: AgentSnapshot): boolean {
	const context = snapshot.machine.context;
	return context.messages.length === 0 && context.run === undefined && (snapshot.agent.transcript?.length ?? 0) === 0;
}

/**
 * A store in a directory: one directory per session (see the module comment for the files).
 *
 * @example
 * const store = createFileStore("./sessions"); // fsync "always"
 * const agent = await Agent.load({ store, sessionId: "user-42", initialState: { model, tools }, streamFn });
 */
export function createFileStore(root: string, options: FileStoreOptions = {}): FileStore {
	const fsync = fileStoreFsync(root, options);
	// Resolved once: a relative root resolved at each call followed process.chdir(), and every write
	// after one failed as if the session's directory had been removed.
	const absoluteRoot = resolve(root);
	// Read when first needed once the root is there (a store may be made before its root, which may
	// then be made as a link): two stores given one path then name its sessions alike.
	let realRoot: string | undefined;
	const realRootNow = (): string => {
		if (realRoot !== undefined) return realRoot;
		// Checked first: a root made between the check and the reading is read again next time.
		const exists = existsSync(absoluteRoot);
		const real = realRootOf(absoluteRoot);
		if (exists) realRoot = real;
		return real;
	};
	const ready = new Set<string>();
	/** The last journal number appended per session, by this store. */
	const appended = new Map<string, number>();
	const directoryOf = (sessionId: string) => join(absoluteRoot, directoryName(sessionId));
	/**
	 * The session's directory as every store of the process names it: through the root's real path,
	 * so that a store given a symlink to another's root shares its agents' claims and its write queue.
	 */
	const keyOf = (sessionId: string) => join(realRootNow(), directoryName(sessionId));
	/** The sessions this store opened, and the writer file it put in each. */
	const writers = new Map<string, WriterFile>();
	const filesOf = (sessionId: string): string => writers.get(sessionId)?.files ?? currentFiles(directoryOf(sessionId)).path;

	/** Whether the session's writer file is still the one this store put there (true when it opened none). */
	const isWriter = (sessionId: string, dir: string): boolean => {
		const mine = writers.get(sessionId);
		if (!mine) return true;
		if (mine.lost === undefined) {
			// Synchronous: a stat of a file the OS has cached takes microseconds, where a round trip
			// through libuv's thread pool, paid at every write, took about a third of a write's time.
			let now: BigIntStats | undefined;
			try {
				now = statSync(join(dir, WRITER), { bigint: true });
			} catch (error) {
				if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
			}
			// Another process's rename put another inode there (its modification time tells a reused inode number apart).
			if (now === undefined) mine.lost = "gone";
			else if (now.ino !== mine.ino || now.mtimeNs !== mine.mtimeNs || now.size !== mine.size) mine.lost = "replaced";
		}
		return mine.lost === undefined;
	};

	/** Refuses the write when another store opened the session since this one did. */
	const assertWriter = (sessionId: string, dir: string): void => {
		if (isWriter(sessionId, dir)) return;
		// Not written back: a session deleted on purpose must not come back half (its snapshot without its start, say).
		if (writers.get(sessionId)?.lost === "gone") throw new Error(`session "${sessionId}" is no longer in ${dir} (its writer file is gone: was the directory removed?), so this store writes nothing more of it`);
		throw new SessionTakenOverError(sessionId, TAKEN_OVER_BY);
	};

	/**
	 * Makes a write visible (`land`, synchronous: renames) between two checks of the writer file.
	 * Another process can open the session at any moment, also between a check and the write: the
	 * check just before keeps that window to the renames, and the check just after tells this
	 * store that the other process may have read the session without the write. Either refuses
	 * the write (`SessionTakenOverError`), which the agent reports and answers as a write that
	 * failed: an effect waiting for it is not made.
	 */
	const landChecked = (sessionId: string, dir: string, land: () => void): void => {
		assertWriter(sessionId, dir);
		land();
		assertWriter(sessionId, dir);
	};

	/**
	 * Runs a write to the session's files; one that fails because another store opened the
	 * session (and removed the files directory this store wrote in) says so.
	 */
	const writing = async (sessionId: string, write: (dir: string, files: string) => Promise<void>): Promise<void> => {
		// A store that did not open the session has no writer file to tell it that the directory was
		// removed and made again by another id: it looks at the `id` file at each write, as at `current`.
		const dir = await ensureDirectory(sessionId, !writers.has(sessionId));
		assertWriter(sessionId, dir);
		try {
			await write(dir, filesOf(sessionId));
		} catch (error) {
			assertWriter(sessionId, dir);
			throw error;
		}
	};

	const enqueue = (sessionId: string, write: () => Promise<void>): Promise<void> => {
		const key = keyOf(sessionId);
		const previous = queues.get(key) ?? Promise.resolve();
		// A failed write fails its caller; the ones after it still run. Each waits for its turn among
		// the process's file operations too: thousands of sessions writing at once would run out of
		// file descriptors (see FILE_OPERATIONS_AT_ONCE).
		const next = previous.catch(() => {}).then(() => withFileTurn(write));
		queues.set(key, next);
		void next.finally(() => {
			if (queues.get(key) === next) queues.delete(key);
		}).catch(() => {});
		return next;
	};

	/** The session's directory, made (and claimed for the session) the first time; `recheck`: checked again that it is the session's. */
	const ensureDirectory = async (sessionId: string, recheck = false): Promise<string> => {
		const dir = directoryOf(sessionId);
		if (ready.has(sessionId)) {
			if (recheck) claimDirectory(sessionId, dir, { made: false, flush: fsync !== "never" });
		} else {
			const made = await mkdir(dir, { recursive: true });
			// A directory made is on disk once the one holding it is flushed: without it a power cut
			// could take a new session away, files flushed and all (and the root, when it was made too).
			if (made !== undefined && fsync !== "never") {
				for (let child = resolve(dir); dirname(child) !== child; child = dirname(child)) {
					flushDirectory(dirname(child));
					if (child === resolve(made)) break;
				}
			}
			// Before anything is written in it: it may be another id's, which this one must not touch.
			claimDirectory(sessionId, dir, { made: made !== undefined, flush: fsync !== "never" });
			ready.add(sessionId);
		}
		return dir;
	};

	/**
	 * Puts a `writer` file of this store's in the session's directory: from now on, the stores that
	 * opened it before write nothing. `first`: none had (the file was made here, exclusively), so
	 * no store's write can land late in the session's files.
	 */
	const fence = async (sessionId: string, token: string): Promise<{ dir: string; mine: WriterFile; first: boolean }> => {
		const path = join(directoryOf(sessionId), WRITER);
		// A few bytes to the OS's cache, synchronously as the checks are (see isWriter). Of a random
		// length: the checks tell writer files apart by inode, modification time and size, and a file
		// system may give a new file the inode another opening just freed, with the same time on a
		// kernel whose file times are as coarse as its clock tick (a few milliseconds).
		const body = `${JSON.stringify({ token, pid: process.pid, openedAt: new Date().toISOString(), pad: " ".repeat(randomInt(WRITER_PADDING)) })}\n`;
		const put = (): { mine: WriterFile; first: boolean } => {
			let fd: number | undefined;
			try {
				fd = openSync(path, "wx");
			} catch (error) {
				if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
			}
			if (fd !== undefined) {
				try {
					writeFileSync(fd, body);
					const made = fstatSync(fd, { bigint: true });
					return { mine: { ino: made.ino, mtimeNs: made.mtimeNs, size: made.size }, first: true };
				} finally {
					closeSync(fd);
				}
			}
			const temporary = `${path}.${token}.tmp`;
			writeFileSync(temporary, body);
			// A rename keeps the inode and the modification time: a store that renames its own file over this one puts another inode there.
			const written = statSync(temporary, { bigint: true });
			renameSync(temporary, path);
			return { mine: { ino: written.ino, mtimeNs: written.mtimeNs, size: written.size }, first: false };
		};
		// Checked at each opening: the directory may have been removed and made again by another id since.
		let dir = await ensureDirectory(sessionId, true);
		let fenced: { mine: WriterFile; first: boolean };
		try {
			fenced = put();
		} catch (error) {
			// The directory was removed since this store made it: the session starts anew.
			if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
			ready.delete(sessionId);
			dir = await ensureDirectory(sessionId);
			fenced = put();
		}
		writers.set(sessionId, fenced.mine);
		return { dir, ...fenced };
	};

	/**
	 * Removes what the openings before this one (`own`, numbered `number`) wrote: nobody reads it
	 * again, since every opening from now on reads `current` after its fence, and `current` names
	 * this one's files now. That includes, once they are a minute old (an opening still under way
	 * writes them as this one lands), the files directory of an opening that copied from the same
	 * `current` and never named its copy there (fenced off, or stopped by a crash, while copying),
	 * and the temporary files of a fence or a `current` that a crash left before their rename.
	 */
	const removeEarlierFiles = async (dir: string, number: number, own: string): Promise<void> => {
		for (const name of await readdir(dir)) {
			const match = FILES_DIRECTORY.exec(name);
			// In the session's directory itself: what the first opening wrote there (or an earlier agentchart).
			const earlier = match
				? Number(match[1]) < number || (Number(match[1]) === number && name !== own && isAbandoned(dir, name))
				: SESSION_FILES.includes(name) || name === `${SNAPSHOT}.tmp` || name === `${JOURNAL}.tmp` || (OPENING_TEMPORARY.test(name) && isAbandoned(dir, name));
			// At most left for the next opening to remove: a store fenced off may be writing in it still.
			if (earlier) await rm(join(dir, name), { recursive: true, force: true }).catch(() => {});
		}
	};

	/** The session's snapshot and journal in `files`, as `load` reads them. */
	const readFiles = async (files: string) => {
		const problems: string[] = [];
		// The journal before the snapshot: a save between the two reads then gives a snapshot that
		// has seen every entry read (the journal read is of the moment before, the rest is in the
		// snapshot). The other way round, the snapshot before a save with the journal after it would
		// leave out the runs between them.
		const journal = await readJournal(join(files, JOURNAL));
		const current = await readSnapshotFile(join(files, SNAPSHOT));
		let snapshot = current.snapshot;
		let fellBack = false;
		if (current.problem) problems.push(current.problem);
		if (!snapshot) {
			const previous = await readSnapshotFile(join(files, PREVIOUS));
			if (previous.problem) problems.push(previous.problem);
			if (previous.snapshot && current.problem) problems.push(`used ${PREVIOUS} instead`);
			snapshot = previous.snapshot;
			fellBack = snapshot !== undefined;
		}
		// A snapshot is never renamed into place without a journal beside it (see saveSnapshot): without
		// one, what was appended after the snapshot (the runs since) is gone, deleted or lost by the
		// file system, and the session goes on from the snapshot.
		if (journal.missing && snapshot) problems.push(`${join(files, JOURNAL)} is missing: the journal entries appended after the snapshot (the runs since), if there were any, are lost; the session goes on from the snapshot`);
		const following = fellBack && snapshot ? followingWithoutGap(snapshot, journal.entries, problems) : undefined;
		// Something a fall-back leaves out: a snapshot that is there and does not read, or journal entries.
		const leavesOut = current.problem !== undefined || (journal.problem !== undefined && journal.cutsWhole) || (following !== undefined && following.length < journal.entries.length);
		return { snapshot, problems, journal: following ? { ...journal, entries: following } : journal, fellBack, leavesOut };
	};

	/** What `load` returns for what it read. */
	const finish = (snapshot: AgentSnapshot | undefined, problems: string[], entries: StoredJournalEntry[]): LoadedSession | undefined => {
		if (!snapshot) {
			if (entries.length > 0 || problems.length > 0) problems.push("no snapshot could be read: the session starts again from nothing");
			return problems.length > 0 ? { snapshot: undefined, problems } : undefined;
		}
		return { snapshot: { ...snapshot, journal: journalAfter(snapshot, entries) }, problems };
	};

	return {
		directoryOf,
		filesOf(sessionId) {
			if (writers.get(sessionId)?.files === undefined) claimDirectory(sessionId, directoryOf(sessionId));
			return filesOf(sessionId);
		},
		sessionKey: (sessionId) => `file:${keyOf(sessionId)}`,
		open(sessionId) {
			return enqueue(sessionId, async () => {
				const existing = writers.get(sessionId);
				// Opened by this store before, and by no other since: it writes the session still (unless
				// that opening failed before its files were in place: it is made again).
				if (existing?.files !== undefined && isWriter(sessionId, directoryOf(sessionId))) return;
				const token = randomUUID();
				const { dir, mine, first } = await fence(sessionId, token);
				try {
					// Read after the fence: an opening before this one can no longer change it (see removeEarlierFiles).
					const from = currentFiles(dir);
					if (first && from.path === dir) {
						// No store opened the session before (a new one): none can write in it late, and its files stay where they are.
						mine.files = dir;
						return;
					}
					const name = `g${from.number + 1}-${token.slice(0, 8)}`;
					const files = join(dir, name);
					if (from.path !== dir) {
						try {
							statSync(from.path);
						} catch {
							throw new Error(`agentchart: session "${sessionId}": ${join(dir, CURRENT)} names ${from.path}, which is gone; the session's files are not where it says`);
						}
					}
					await mkdir(files);
					await copyInto(from.path, files, SESSION_FILES, fsync !== "never");
					const named = join(dir, `${CURRENT}.${token}.tmp`);
					writeFileSync(named, `${name}\n`);
					if (fsync !== "never") await flushFile(named);
					try {
						landChecked(sessionId, dir, () => renameSync(named, join(dir, CURRENT)));
					} catch (error) {
						await rm(named, { force: true });
						throw error;
					}
					if (fsync !== "never") flushDirectory(dir);
					mine.files = files;
					await removeEarlierFiles(dir, from.number + 1, name);
				} catch (error) {
					// An opening of another process since this one's fence removes the files this one reads
					// and those it copied them to (see removeEarlierFiles): the system's error (a file gone)
					// is then that this one was fenced off, and says so, as a fenced-off store's write does.
					assertWriter(sessionId, dir);
					throw error;
				}
			});
		},
		async load(sessionId, { peek = false } = {}) {
			await queues.get(keyOf(sessionId))?.catch(() => {});
			const dir = directoryOf(sessionId);
			// Nothing of another id's session is read, even where the file system gives both one directory.
			claimDirectory(sessionId, dir);
			// Where `current` names (this store's own files while it writes the session), read again
			// while it names another when the read is done: an opening since (of another process, or
			// of another store of this one whose agent may hand the session back to this one's) has
			// copied the files and may be removing these.
			let files = currentFiles(dir).path;
			let read: Awaited<ReturnType<typeof readFiles>>;
			for (let attempt = 1; ; attempt++) {
				read = await withFileTurn(() => readFiles(files));
				const now = currentFiles(dir).path;
				if (now === files) break;
				// Not a read it can vouch for: the directory read may have been removed under it.
				if (attempt === 100) throw new Error(`agentchart: session "${sessionId}" was opened again while each of 100 reads of it was under way; load it again`);
				files = now;
			}
			// Again: the other id's store may have claimed the directory, and written in it, since (a new
			// session, or one an earlier agentchart stored, has no `id` file until its first write).
			claimDirectory(sessionId, dir);
			const { journal, problems, snapshot, fellBack, leavesOut } = read;
			const journalPath = join(files, JOURNAL);
			if (journal.problem) problems.push(journal.problem);
			// No snapshot reads, yet the session had files: it starts again from nothing.
			const startsAnew = !snapshot && (journal.entries.length > 0 || problems.length > 0);
			if (!fellBack && !startsAnew && journal.problem === undefined) return finish(snapshot, problems, journal.entries);
			// What follows mends the files: only where no other store may be appending (a line that does
			// not check may be one on its way, not torn), in this store's own files or in a session no
			// store opened. A store that reads a session another writes, without opening it, changes nothing.
			const own = writers.get(sessionId)?.files === files && isWriter(sessionId, dir);
			if (peek || (!own && existsSync(join(dir, WRITER)))) return finish(snapshot, problems, journal.entries);
			if (fellBack) {
				// The session is put back as it was at the snapshot before: that snapshot as the last one,
				// the journal without the entries left out. Kept, they would be read after the next
				// snapshot this session saves (whose numbering goes on from the older one's), as entries
				// of it; and each load would report the damaged snapshot again. The damaged snapshot and
				// the journal as it was are copied aside first (a snapshot missing, the one before whole
				// and nothing left out, is what a save cut short between its two renames leaves: nothing
				// to keep); copied, not moved, so that a crash before the renames leaves the files as they were.
				const aside = leavesOut ? unreadDirectory(dir) : undefined;
				await enqueue(sessionId, () =>
					writing(sessionId, async (writerDir, writerFiles) => {
						await copyFile(join(writerFiles, PREVIOUS), join(writerFiles, `${SNAPSHOT}.tmp`));
						if (fsync !== "never") await flushFile(join(writerFiles, `${SNAPSHOT}.tmp`));
						await writeThrough(`${journalPath}.tmp`, "w", journal.entries.map(journalLine).join(""), fsync !== "never");
						if (aside !== undefined) {
							await mkdir(aside);
							await copyInto(writerFiles, aside, [SNAPSHOT, JOURNAL], fsync !== "never");
						}
						landChecked(sessionId, writerDir, () => {
							renameSync(join(writerFiles, `${SNAPSHOT}.tmp`), join(writerFiles, SNAPSHOT));
							renameSync(`${journalPath}.tmp`, join(writerFiles, JOURNAL));
						});
						if (fsync !== "never") flushDirectory(writerFiles);
					}),
				);
				const loaded = finish(snapshot, problems, journal.entries);
				if (aside !== undefined) problems.push(`the session's files as they were (the snapshot that did not read, the journal before the entries were left out) were copied to ${aside}, where nothing writes or removes them`);
				return loaded;
			}
			if (startsAnew) {
				// Its first save would write over what is left (the journal holds the runs since the last
				// snapshot): moved aside instead, where no opening removes it, for a person to look at.
				const aside = unreadDirectory(dir);
				await enqueue(sessionId, () =>
					writing(sessionId, async (writerDir, writerFiles) => {
						await mkdir(aside);
						landChecked(sessionId, writerDir, () => moveInto(writerFiles, aside, SESSION_FILES));
						if (fsync !== "never") {
							flushDirectory(aside);
							flushDirectory(writerFiles);
						}
					}),
				);
				const loaded = finish(snapshot, problems, journal.entries);
				problems.push(`what the session's files held was moved to ${aside}, where nothing writes or removes it`);
				return loaded;
			}
			if (journal.problem) {
				// Cut back to the lines that check: an entry appended after a torn line would join it and be
				// lost too. More than an append cut short is damage: the journal as it was is copied aside first.
				const goodLength = journal.goodLength;
				const aside = journal.cutsWhole ? unreadDirectory(dir) : undefined;
				await enqueue(sessionId, async () => {
					if (aside !== undefined) {
						await mkdir(aside);
						await copyInto(files, aside, [JOURNAL], fsync !== "never");
					}
					await truncate(journalPath, goodLength);
					if (fsync !== "never") await flushFile(journalPath);
				});
				if (aside !== undefined) problems.push(`the journal as it was, the lines left out included, was copied to ${aside}, where nothing writes or removes it`);
			}
			return finish(snapshot, problems, journal.entries);
		},
		saveSnapshot(sessionId, snapshot) {
			return enqueue(sessionId, () =>
				writing(sessionId, async (dir, files) => {
					const temporary = join(files, `${SNAPSHOT}.tmp`);
					await writeThrough(temporary, "w", snapshotFileText(sessionId, snapshot), fsync !== "never");
					// The session's first save: a journal before the snapshot, so that a snapshot without one
					// beside it is always a loss a load reports (a crash between the two renames below included).
					// Empty, it has no data to flush; the flush of the directory after the renames keeps its name.
					if (!existsSync(join(files, JOURNAL))) await writeThrough(join(files, JOURNAL), "a", "", false);
					// An empty transcript (a reset(), or a session cleared by hand) keeps no snapshot before it:
					// a damaged snapshot.json would fall back to it and bring back the conversation the user
					// cleared, where without one the load starts the session empty, as the cleared one was.
					const cleared = isCleared(snapshot);
					// Checked again right before the renames, which are what another process reads (see landChecked).
					landChecked(sessionId, dir, () => {
						try {
							if (cleared) rmSync(join(files, PREVIOUS), { force: true });
							else renameSync(join(files, SNAPSHOT), join(files, PREVIOUS));
						} catch (error) {
							if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
						}
						renameSync(temporary, join(files, SNAPSHOT));
					});
					if (fsync !== "never") flushDirectory(files);
					// The entries the snapshot has seen are in it (in its transcript between runs, in its
					// journal during one). Later ones stay (an agent appends them after this save; a store
					// shared by two writers may not). Rewriting also drops a line a failed append left torn,
					// which would make the lines appended after it untrusted at load: the snapshot an agent
					// saves after a failed write heals the file.
					const seen = snapshot.journalSeq ?? 0;
					const path = join(files, JOURNAL);
					let kept = "";
					if ((appended.get(sessionId) ?? 0) > seen) {
						const { entries } = await readJournal(path);
						kept = entries.filter((entry) => entry.seq > seen && ofLineage(snapshot, entry)).map(journalLine).join("");
					}
					await writeThrough(`${path}.tmp`, "w", kept, fsync !== "never");
					landChecked(sessionId, dir, () => renameSync(`${path}.tmp`, path));
					if (fsync !== "never") flushDirectory(files);
				}),
			);
		},
		watchTakeover(sessionId, onTakenOver) {
			const mine = writers.get(sessionId);
			// Not opened by this store: it writes nothing of the session, so nobody takes it from it.
			if (mine?.files === undefined) return () => {};
			const dir = directoryOf(sessionId);
			const path = join(dir, WRITER);
			// Polled, not fs.watch: a rename over the file is what is looked for, and inotify and its
			// kin miss changes made by another machine on a shared file system. Not persistent: a watch
			// keeps no process alive that had nothing else to do.
			const look = () => {
				let writes: boolean;
				try {
					writes = isWriter(sessionId, dir);
				} catch {
					return; // Unreadable now (EMFILE, say): the next look, or the next write, tells.
				}
				// Gone is not taken over (the session was deleted): the next write says so.
				if (writes || writers.get(sessionId) !== mine || mine.lost !== "replaced") return;
				stop();
				onTakenOver(new SessionTakenOverError(sessionId, TAKEN_OVER_BY));
			};
			const stop = () => unwatchFile(path, look);
			watchFile(path, { interval: TAKEOVER_POLL_MS, persistent: false }, look);
			// A poll reports changes after its first look only: an opening before the watch began is seen now.
			look();
			return stop;
		},
		appendJournal(sessionId, entry) {
			return enqueue(sessionId, () =>
				writing(sessionId, async (dir, files) => {
					const path = join(files, JOURNAL);
					// Counted first: a snapshot saved later keeps what may be in the file (reading it back costs only time).
					appended.set(sessionId, Math.max(appended.get(sessionId) ?? 0, entry.seq));
					await writeThrough(path, "a", journalLine(entry), fsync === "always");
					// In the file now: a process that opened the session before this check may have read the
					// journal without it (see landChecked), so an effect waiting for it must not be made.
					assertWriter(sessionId, dir);
				}),
			);
		},
	};
}
