/**
 * The processes a test started, as Linux's `/proc` shows them: for tests that check nothing they
 * started is left running.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Process ids of this process's living children (Linux `/proc`). */
export function childPids(): number[] {
	const children: number[] = [];
	for (const entry of readdirSync("/proc")) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
			// The command name is in parentheses and may contain spaces: fields follow the last ")".
			const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
			const state = fields[0];
			const parent = Number(fields[1]);
			if (parent === process.pid && state !== "Z") children.push(Number(entry));
		} catch {
			// The process ended while we looked.
		}
	}
	return children;
}

/** True while a process with this id exists (and is not a zombie). */
export function isAlive(pid: number): boolean {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] !== "Z";
	} catch {
		return false;
	}
}
