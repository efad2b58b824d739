/**
 * A session's directory in the file store: its name, made of the session's id, and the `id` file
 * that makes sure the directory is that session's and no other's. Names tell ids apart, but a file
 * system may not: one that does not tell upper from lower case (macOS's, Windows's by default)
 * takes "Alice" and "alice" for one name, as a link can make two names one directory.
 */
import { createHash, randomUUID } from "node:crypto";
import { closeSync, existsSync, fsyncSync, linkSync, openSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { flushDirectory, unreadable } from "./file-io.js";

/** The session's id, as given (see {@link claimDirectory}). */
export const ID = "id";

/** The longest name a file system gives a file (ext4, XFS, APFS, NTFS: 255 bytes or units). */
const NAME_MAX = 255;

/**
 * Names Windows keeps for devices, whatever their extension (`con`, `nul.txt`, `COM1`): a file
 * or directory of that name is the device (writes to `nul` go nowhere), or cannot be made.
 */
const WINDOWS_DEVICE = /^(?:con|prn|aux|nul|com[0-9]|lpt[0-9])(?:\.|$)/i;

/** A character as its escape (see {@link directoryName}). */
function escaped(char: string): string {
	const code = char.charCodeAt(0);
	return code < 0x100 ? `%${code.toString(16).padStart(2, "0")}` : `%u${code.toString(16).padStart(4, "0")}`;
}

/**
 * A session id as a directory name: anything outside [A-Za-z0-9._-] is escaped, so no id leaves
 * the root, and each escape has one width for its kind (`%` and two hex digits up to U+00FF, `%u`
 * and four for each UTF-16 unit above), so no two ids share a name. A name longer than a file
 * name may be (an id of 256 characters, or of 43 escaped above U+00FF) is its start, `~`, and a
 * SHA-256 of the whole name: `~` is escaped in every other name, so no id's name meets it. On
 * Windows (`platform` "win32"), a device's name has its first character escaped (`con` is
 * `%63on`) and a last dot its escape (Windows drops it, so `a.` would be `a`'s directory).
 *
 * @example
 * directoryName("../etc"); // "%2e%2e%2fetc"
 * directoryName("con", "win32"); // "%63on"
 */
export function directoryName(sessionId: string, platform: NodeJS.Platform = process.platform): string {
	if (sessionId.length === 0) throw new Error("agentchart: a session id cannot be empty");
	let name = sessionId.replace(/[^A-Za-z0-9._-]/g, escaped).replace(/^\.+/, (dots) => "%2e".repeat(dots.length));
	// Only there: elsewhere these are plain names, and sessions stored under them keep their directories.
	if (platform === "win32") name = name.replace(WINDOWS_DEVICE, (device) => `${escaped(device)}${device.slice(1)}`).replace(/\.$/, "%2e");
	if (name.length <= NAME_MAX) return name;
	// Of the escaped name, not the id: UTF-8 would encode two different lone surrogates alike.
	const hash = createHash("sha256").update(name).digest("hex");
	return `${name.slice(0, NAME_MAX - hash.length - 1)}~${hash}`;
}

/**
 * The id a directory name was made of (see {@link directoryName}), for a person reading an error;
 * undefined for a long name, which keeps only a hash of its end.
 */
function sessionIdOfName(name: string): string | undefined {
	if (name.includes("~")) return undefined;
	return name.replace(/%u([0-9a-f]{4})|%([0-9a-f]{2})/g, (_, wide: string | undefined, narrow: string | undefined) => String.fromCharCode(Number.parseInt(wide ?? narrow ?? "", 16)));
}

/** Session `sessionId` refused the directory it would be kept in, another session's: `whose` says how that is known. */
function sharedDirectory(sessionId: string, dir: string, whose: string): Error {
	return new Error(
		`agentchart: session ${JSON.stringify(sessionId)} cannot be kept in ${dir}: that directory is ${whose}. The file system gives both ids one directory (it does not tell upper from lower case, as macOS's and Windows's do by default, or a link leads there), so this store neither reads nor writes it for ${JSON.stringify(sessionId)}: give one of the two sessions another id`,
	);
}

/**
 * The id that a session directory's `id` file holds; undefined when it has none (or `dir` is not
 * a directory: the reads that follow say so, as before the file existed).
 */
function readIdFile(dir: string): string | undefined {
	const path = join(dir, ID);
	let text: string;
	try {
		text = readFileSync(path, "utf8");
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code === "ENOENT" || code === "ENOTDIR") return undefined;
		throw unreadable(path, error);
	}
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch {
		// Reported below: not an id, whatever the reason.
	}
	const sessionId = typeof value === "object" && value !== null ? (value as { sessionId?: unknown }).sessionId : undefined;
	// Not passed over: without it, no store can tell whose session the directory holds.
	if (typeof sessionId !== "string") throw new Error(`agentchart: ${path} does not hold a session id (it holds ${JSON.stringify(text.slice(0, 80))}); if the directory is the session you mean, write {"sessionId": "<its id>"} in it`);
	return sessionId;
}

/** What `link` fails with on a file system that has no hard links. */
const NO_HARD_LINKS = ["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"];

/** Writes `text` to a new file at `path` (flushed to the disk when `flush`), failing with EEXIST when there is one. */
function writeNewFile(path: string, text: string, flush: boolean): void {
	const fd = openSync(path, "wx");
	try {
		writeFileSync(fd, text);
		if (flush) fsyncSync(fd);
	} finally {
		closeSync(fd);
	}
}

/**
 * Makes sure that session `sessionId`'s directory is its own, not another id's that the file system
 * takes for the same name ("Alice" and "alice" where upper and lower case are one; a link), and
 * throws an error naming both ids when it is another's, before anything in it is read or written.
 * With `claim`, a directory without an `id` file gets one naming `sessionId`.
 *
 * The `id` file decides, once there: it is put in place whole and at most once (linked from a
 * temporary file, which fails when there is one already), so of two ids that make the directory at
 * once, one has it and the other is refused. A directory without one (an earlier agentchart wrote
 * it, or another store is making it now) is the session's when it is listed under the session's
 * own name in the root: a file system that folds case lists it under the name it was made with.
 * On a file system that tells case apart that is always so, and a session an earlier agentchart
 * stored is read, and claimed by the first store that writes it, as before.
 */
export function claimDirectory(sessionId: string, dir: string, claim?: { made: boolean; flush: boolean }): void {
	const owner = readIdFile(dir);
	if (owner !== undefined) {
		if (owner !== sessionId) throw sharedDirectory(sessionId, dir, `session ${JSON.stringify(owner)}'s (its ${ID} file says so)`);
		return;
	}
	// Made by this store just now: under its own name, and no other store can have claimed it first.
	if (!claim?.made) {
		if (!existsSync(dir)) return;
		const root = dirname(dir);
		let names: string[];
		try {
			names = readdirSync(root);
		} catch (error) {
			throw unreadable(root, error);
		}
		const name = basename(dir);
		if (!names.includes(name)) {
			// Session names are ASCII: a file system that folds case lists the directory under the name it was made with.
			const listed = names.find((each) => each.toLowerCase() === name.toLowerCase());
			const other = listed === undefined ? undefined : sessionIdOfName(listed);
			throw sharedDirectory(
				sessionId,
				dir,
				listed === undefined
					? `not listed in ${root} under its name ${JSON.stringify(name)}, so it is another id's`
					: `named ${JSON.stringify(listed)} on disk, ${other === undefined ? "another session's" : `session ${JSON.stringify(other)}'s`}`,
			);
		}
	}
	if (!claim) return;
	const path = join(dir, ID);
	const body = `${JSON.stringify({ sessionId })}\n`;
	const temporary = `${path}.${randomUUID()}.tmp`;
	writeNewFile(temporary, body, claim.flush);
	try {
		try {
			// Whole or not there, for every reader; and only one link of all the stores that try gets there.
			linkSync(temporary, path);
		} catch (error) {
			const code = (error as NodeJS.ErrnoException).code;
			if (code === "EEXIST") return claimDirectory(sessionId, dir);
			if (!NO_HARD_LINKS.includes(code ?? "")) throw error;
			// A file system without hard links (FAT, exFAT): made exclusively, written right after.
			try {
				writeNewFile(path, body, claim.flush);
			} catch (again) {
				if ((again as NodeJS.ErrnoException).code === "EEXIST") return claimDirectory(sessionId, dir);
				throw again;
			}
		}
	} finally {
		try {
			unlinkSync(temporary);
		} catch {
			// Left for an opening to remove, as a crash would leave it (see removeEarlierFiles).
		}
	}
	if (claim.flush) flushDirectory(dir);
}
