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

/**
 * How many file store operations (a write, an opening, a load's read) of the whole process hold
 * files open at once; the others wait their turn, in the order they came. Each holds at most two
 * (a copy's source and target). A chat bot's thousands of sessions would otherwise open a file
 * each at the same moment, past the process's limit (`ulimit -n`: 1,024 by default, 256 on some
 * systems), and their writes would fail with EMFILE, each failing its run. Taking turns cost
 * nothing measurable: 1,000 sessions' first prompts with fsync "always" took 26 s either way.
 */
export const FILE_OPERATIONS_AT_ONCE = 32;

let operationsRunning = 0;
/** The operations waiting for a turn, oldest first (from `waitingFrom` on: shifting a long array per release would cost its length). */
const waitingOperations: ((() => void) | undefined)[] = [];
let waitingFrom = 0;

/**
 * Runs `operation` once fewer than {@link FILE_OPERATIONS_AT_ONCE} others run (see there).
 * `operation` must not wait for another operation run through here, or the two could wait for
 * each other's turn.
 */
export async function withFileTurn<T>(operation: () => Promise<T>): Promise<T> {
	if (operationsRunning < FILE_OPERATIONS_AT_ONCE) operationsRunning++;
	// Its turn is handed over by the operation that ends (the count stays as it is).
	else await new Promise<void>((resolve) => waitingOperations.push(resolve));
	try {
		return await operation();
	} finally {
		const next = waitingOperations[waitingFrom];
		if (next === undefined) operationsRunning--;
		else {
			waitingOperations[waitingFrom] = undefined;
			waitingFrom++;
			if (waitingFrom === waitingOperations.length) {
				waitingOperations.length = 0;
				waitingFrom = 0;
			}
			next();
		}
	}
}
