/** File system helpers the file store's modules share. */
import { closeSync, fsyncSync, openSync } from "node:fs";

/**
 * A file that is there but cannot be read now (too many open files, an I/O error, no permission):
 * not damage a crash left, to pass over or cut, but a load that fails, the session untouched.
 */
export function unreadable(path: string, error: unknown): Error {
	return new Error(`agentchart: the file store cannot read ${path}: ${(error as Error).message}`, { cause: error });
}

/** Makes the renames and new files in a directory durable (where the file system lets a directory be flushed). */
export function flushDirectory(path: string): void {
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
