/**
 * A store on the local file system: one directory per session, holding
 *
 * - `snapshot.json`: the last snapshot, replaced atomically (written to a temporary file,
 *   flushed, renamed over the old one; the one before is kept as `snapshot.prev.json`);
 * - `journal.jsonl`: the journal, appended one line per entry, each line carrying a CRC-32 of
 *   its JSON. A line a crash cut short (or any line that does not check) ends what is read,
 *   is reported, and is cut off the file when the session is loaded (so that what is appended
 *   next is read again);
 * - `writer`: which store opened the session last (a random token, with the process id and the
 *   time for a person reading it), replaced atomically by `open`.
 *
 * When a snapshot is saved between runs, the journal entries it has seen are dropped (they are
 * in the transcript); entries numbered after it, if the file has any, are kept. Writes to one
 * session go one at a time, in the order they were asked for (by every file store of the
 * process on that directory). A store that opened a session
 * writes it only while the session's `writer` file is the one it put there: once a store of
 * another process opened the session, this one's writes are refused (`SessionTakenOverError`).
 * A write is checked before it and again once it is in the file: one that the other process may
 * have read the session without (it opened the session while the write was on its way) is
 * refused too, although it landed, so that the effect waiting for it is not made here while the
 * other process, which never saw its intent, makes it.
 */
import { type BigIntStats, closeSync, fsyncSync, openSync, renameSync, statSync, writeFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { mkdir, open, readFile, truncate } from "node:fs/promises";
import { join, resolve } from "node:path";
import { crc32 } from "node:zlib";
import type { StoredJournalEntry } from "./journal.js";
import { type AgentSnapshot, readAgentSnapshot } from "./snapshot.js";
import { type AgentStore, journalAfter, ofLineage, SessionTakenOverError } from "./store.js";

/**
 * When the file store waits for the disk (`fsync`):
 * - `"always"` (default): every journal entry and every snapshot is on disk before the agent goes
 *   on (a crash of the machine, not only of the process, loses nothing);
 * - `"snapshots"`: snapshots are; journal entries are written but the OS flushes them when it
 *   will (a process crash loses nothing, a power cut may lose the last entries);
 * - `"never"`: nothing waits for the disk.
 */
export type FsyncPolicy = "always" | "snapshots" | "never";

/** Options of {@link createFileStore}. */
export interface FileStoreOptions {
	/** When to wait for the disk (default `"always"`). */
	fsync?: FsyncPolicy | undefined;
}

const SNAPSHOT = "snapshot.json";
const PREVIOUS = "snapshot.prev.json";
const JOURNAL = "journal.jsonl";
const WRITER = "writer";
const TAKEN_OVER_BY = "an agent of another process (the session's writer file changed)";

/**
 * What is done to each session directory, one at a time, in the order it was asked for: by every
 * file store of the process (two on one directory would otherwise write its files at once).
 */
const queues = new Map<string, Promise<void>>();

/** The `writer` file a store put in a session's directory: its inode and modification time. */
interface WriterFile {
	ino: bigint;
	mtimeNs: bigint;
	/**
	 * Why it is no longer this store's, once a check found out: another store replaced it, or it
	 * is gone (the session's directory was removed under this store).
	 */
	lost?: "replaced" | "gone" | undefined;
}

function checksum(text: string): string {
	return crc32(text).toString(16).padStart(8, "0");
}

/** One journal entry as a line of the journal file. */
function journalLine(entry: StoredJournalEntry): string {
	const json = JSON.stringify(entry);
	return `${checksum(json)}\t${json}\n`;
}

/** A session id as a directory name: anything outside [A-Za-z0-9._-] is escaped, so no id leaves the root. */
function directoryName(sessionId: string): string {
	if (sessionId.length === 0) throw new Error("agentchart: a session id cannot be empty");
	return sessionId.replace(/[^A-Za-z0-9._-]/g, (char) => `%${char.charCodeAt(0).toString(16).padStart(2, "0")}`).replace(/^\.+/, (dots) => "%2e".repeat(dots.length));
}

/** One snapshot file as written: the snapshot and a checksum of its JSON. */
interface SnapshotFile {
	crc: string;
	snapshot: string;
}

async function readSnapshotFile(path: string): Promise<{ snapshot?: AgentSnapshot; problem?: string }> {
	let text: string;
	try {
		text = await readFile(path, "utf8");
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
		return { problem: `${path} could not be read (${(error as Error).message})` };
	}
	try {
		const file = JSON.parse(text) as SnapshotFile;
		if (typeof file.snapshot !== "string" || checksum(file.snapshot) !== file.crc) return { problem: `${path} does not match its checksum` };
		return { snapshot: readAgentSnapshot(JSON.parse(file.snapshot)) };
	} catch (error) {
		return { problem: `${path} does not read (${(error as Error).message})` };
	}
}

/**
 * The journal's entries that check, and what was left out after the first that does not
 * (`goodLength`: the bytes of the lines that check).
 */
async function readJournal(path: string): Promise<{ entries: StoredJournalEntry[]; problem?: string; goodLength?: number }> {
	let text: string;
	try {
		text = await readFile(path, "utf8");
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return { entries: [] };
		return { entries: [], problem: `${path} could not be read (${(error as Error).message})` };
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
		if (tab === 8 && checksum(json) === line.slice(0, 8)) {
			try {
				entry = JSON.parse(json) as StoredJournalEntry;
			} catch {
				entry = undefined;
			}
		}
		if (!entry) {
			const dropped = lines.length - index - (lines.at(-1) === "" ? 1 : 0);
			return { entries, goodLength, problem: `${path}: line ${index + 1} does not check (a write cut short); it and ${dropped - 1} after it were left out` };
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

function flushDirectory(path: string): void {
	// A rename is durable once the directory is: opened read-only, fsync'd.
	let fd: number | undefined;
	try {
		fd = openSync(path, "r");
		fsyncSync(fd);
	} catch {
		// Some file systems do not let a directory be fsync'd; the rename stands all the same.
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}

/**
 * A store in a directory: one directory per session (see the module comment for the files).
 *
 * @example
 * const store = createFileStore("./sessions"); // fsync "always"
 * const agent = await Agent.load({ store, sessionId: "user-42", initialState: { model, tools }, streamFn });
 */
export function createFileStore(root: string, options: FileStoreOptions = {}): AgentStore & { directoryOf(sessionId: string): string } {
	const fsync = options.fsync ?? "always";
	const ready = new Set<string>();
	/** The last journal number appended per session, by this store. */
	const appended = new Map<string, number>();
	const directoryOf = (sessionId: string) => join(root, directoryName(sessionId));
	/** The sessions this store opened, and the writer file it put in each. */
	const writers = new Map<string, WriterFile>();

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
			else if (now.ino !== mine.ino || now.mtimeNs !== mine.mtimeNs) mine.lost = "replaced";
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

	const enqueue = (sessionId: string, write: () => Promise<void>): Promise<void> => {
		const key = resolve(directoryOf(sessionId));
		const previous = queues.get(key) ?? Promise.resolve();
		// A failed write fails its caller; the ones after it still run.
		const next = previous.catch(() => {}).then(write);
		queues.set(key, next);
		void next.finally(() => {
			if (queues.get(key) === next) queues.delete(key);
		}).catch(() => {});
		return next;
	};

	const ensureDirectory = async (sessionId: string): Promise<string> => {
		const dir = directoryOf(sessionId);
		if (!ready.has(sessionId)) {
			await mkdir(dir, { recursive: true });
			ready.add(sessionId);
		}
		return dir;
	};

	return {
		directoryOf,
		sessionKey: (sessionId) => `file:${resolve(directoryOf(sessionId))}`,
		open(sessionId) {
			return enqueue(sessionId, async () => {
				const dir = await ensureDirectory(sessionId);
				// Opened by this store before, and by no other since: it writes the session still.
				if (writers.has(sessionId) && isWriter(sessionId, dir)) return;
				const token = randomUUID();
				const path = join(dir, WRITER);
				const temporary = `${path}.${token}.tmp`;
				// A few bytes to the OS's cache, synchronously as the checks are (see isWriter).
				const body = `${JSON.stringify({ token, pid: process.pid, openedAt: new Date().toISOString() })}\n`;
				try {
					writeFileSync(temporary, body);
				} catch (error) {
					// The directory was removed since this store made it: the session starts anew.
					if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
					ready.delete(sessionId);
					await ensureDirectory(sessionId);
					writeFileSync(temporary, body);
				}
				// A rename keeps the inode and the modification time: a store that renames its own file over this one puts another inode there.
				const written = statSync(temporary, { bigint: true });
				renameSync(temporary, path);
				writers.set(sessionId, { ino: written.ino, mtimeNs: written.mtimeNs });
			});
		},
		async load(sessionId) {
			await queues.get(resolve(directoryOf(sessionId)))?.catch(() => {});
			const dir = directoryOf(sessionId);
			const problems: string[] = [];
			const current = await readSnapshotFile(join(dir, SNAPSHOT));
			let snapshot = current.snapshot;
			if (current.problem) problems.push(current.problem);
			if (!snapshot) {
				const previous = await readSnapshotFile(join(dir, PREVIOUS));
				if (previous.problem) problems.push(previous.problem);
				if (previous.snapshot && current.problem) problems.push(`used ${PREVIOUS} instead`);
				snapshot = previous.snapshot;
			}
			const journalPath = join(dir, JOURNAL);
			const journal = await readJournal(journalPath);
			if (journal.problem) {
				problems.push(journal.problem);
				// Cut back to the lines that check: an entry appended after a torn line would join it and be lost too.
				await enqueue(sessionId, async () => {
					await truncate(journalPath, journal.goodLength ?? 0);
					if (fsync !== "never") await flushFile(journalPath);
				});
			}
			if (!snapshot) {
				if (journal.entries.length > 0 || problems.length > 0) problems.push("no snapshot could be read: the session starts again from nothing");
				return problems.length > 0 ? { snapshot: undefined, problems } : undefined;
			}
			return { snapshot: { ...snapshot, journal: journalAfter(snapshot, journal.entries) }, problems };
		},
		saveSnapshot(sessionId, snapshot) {
			return enqueue(sessionId, async () => {
				const dir = await ensureDirectory(sessionId);
				assertWriter(sessionId, dir);
				const body = JSON.stringify(snapshot);
				const file: SnapshotFile = { crc: checksum(body), snapshot: body };
				const temporary = join(dir, `${SNAPSHOT}.tmp`);
				await writeThrough(temporary, "w", JSON.stringify(file), fsync !== "never");
				// Checked again right before the renames, which are what another process reads (see landChecked).
				landChecked(sessionId, dir, () => {
					try {
						renameSync(join(dir, SNAPSHOT), join(dir, PREVIOUS));
					} catch (error) {
						if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
					}
					renameSync(temporary, join(dir, SNAPSHOT));
				});
				if (fsync !== "never") flushDirectory(dir);
				// The entries the snapshot has seen are in it (in its transcript between runs, in its
				// journal during one). Later ones stay (an agent appends them after this save; a store
				// shared by two writers may not). Rewriting also drops a line a failed append left torn,
				// which would make the lines appended after it untrusted at load: the snapshot an agent
				// saves after a failed write heals the file.
				const seen = snapshot.journalSeq ?? 0;
				const path = join(dir, JOURNAL);
				let kept = "";
				if ((appended.get(sessionId) ?? 0) > seen) {
					const { entries } = await readJournal(path);
					kept = entries.filter((entry) => entry.seq > seen && ofLineage(snapshot, entry)).map(journalLine).join("");
				}
				await writeThrough(`${path}.tmp`, "w", kept, fsync !== "never");
				landChecked(sessionId, dir, () => renameSync(`${path}.tmp`, path));
				if (fsync !== "never") flushDirectory(dir);
			});
		},
		appendJournal(sessionId, entry) {
			return enqueue(sessionId, async () => {
				const dir = await ensureDirectory(sessionId);
				assertWriter(sessionId, dir);
				const path = join(dir, JOURNAL);
				// Counted first: a snapshot saved later keeps what may be in the file (reading it back costs only time).
				appended.set(sessionId, Math.max(appended.get(sessionId) ?? 0, entry.seq));
				await writeThrough(path, "a", journalLine(entry), fsync === "always");
				// In the file now: a process that opened the session before this check may have read the
				// journal without it (see landChecked), so an effect waiting for it must not be made.
				assertWriter(sessionId, dir);
			});
		},
	};
}
