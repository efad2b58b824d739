/**
 * A chat bot's scale: hundreds of sessions on one file store, writing at once, in a process whose
 * open file limit is low (`ulimit -n`, 256 on some systems, 1,024 by default). Before, each
 * session's write held a file open while the others held theirs, so the process ran out of file
 * descriptors (EMFILE) and nearly every run failed with the store's error. Now the file store's
 * operations take turns, at most FILE_OPERATIONS_AT_ONCE of them at once in the process.
 *
 * The sessions run in a child process (many-sessions-child.ts) started under the limit; Linux
 * only (it counts the open files in /proc/self/fd).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterEach, describe, expect, it } from "vitest";
import { FILE_OPERATIONS_AT_ONCE } from "../../src/durable/file-io.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-many-sessions-");
const here = fileURLToPath(new URL(".", import.meta.url));
const running = new Set<ChildProcess>();
afterEach(() => {
	for (const child of running) child.kill("SIGKILL");
	running.clear();
});

interface ChildReport {
	failed: number;
	firstFailure?: string;
	problems: number;
	firstProblem?: string;
	notWhole: number;
	mostOpen: number;
	limitReached: number;
}

/** Runs `sessions` sessions in a child process limited to `openFiles` open files; its report. */
async function runSessions(sessions: number, openFiles: number): Promise<ChildReport> {
	const work = await tempDir();
	const child = join(work, "child.mjs");
	await build({ entryPoints: [join(here, "many-sessions-child.ts")], outfile: child, format: "esm", platform: "node", target: "node20", bundle: true, logLevel: "error" });
	const sessionsProcess = spawn("/bin/sh", ["-c", `ulimit -n ${openFiles} && exec "$0" "$@"`, process.execPath, child, join(work, "sessions"), String(sessions)], { stdio: ["ignore", "pipe", "pipe"] });
	running.add(sessionsProcess);
	let stdout = "";
	let stderr = "";
	sessionsProcess.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
	sessionsProcess.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
	const code = await new Promise<number | null>((resolve) => sessionsProcess.on("close", resolve));
	running.delete(sessionsProcess);
	expect(code, stderr).toBe(0);
	return JSON.parse(stdout) as ChildReport;
}

describe.skipIf(process.platform !== "linux")("many sessions on one file store", () => {
	it("300 sessions prompting at once in a process limited to 128 open files all complete, and all come back whole", async () => {
		const report = await runSessions(300, 128);
		expect(report).toMatchObject({ failed: 0, problems: 0, notWhole: 0, limitReached: 0 });
		// Each turn holds at most two files (a copy's source and target); one more for a flush of a directory.
		expect(report.mostOpen).toBeLessThanOrEqual(2 * FILE_OPERATIONS_AT_ONCE + 1);
	}, 120_000);
});
