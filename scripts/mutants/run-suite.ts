/**
 * Runs vitest in a sandbox and reports which tests failed.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

/** The outcome of one suite run. */
export interface SuiteOutcome {
	/** Full names ("file > describe > it") of the failed tests, in report order. */
	failed: string[];
	/** Tests that ran. */
	total: number;
	/** vitest's exit code (null when it was killed). */
	exitCode: number | null;
	/** True when the run hit the wall-clock limit and was killed. */
	timedOut: boolean;
	/** The tail of vitest's output, for diagnosing crashes. */
	outputTail: string;
	durationMs: number;
}

interface JsonAssertion {
	fullName?: string;
	title?: string;
	status?: string;
}

interface JsonReport {
	numTotalTests?: number;
	testResults?: { name?: string; status?: string; message?: string; assertionResults?: JsonAssertion[] }[];
}

/**
 * Runs `vitest run` on `paths` inside `root` with a JSON report, within `timeoutMs`.
 *
 * @example
 * const outcome = await runSuite(sandbox.root, ["test/agent"], 300_000);
 * if (outcome.failed.length > 0) console.log("killed by", outcome.failed[0]);
 */
export function runSuite(root: string, paths: readonly string[], timeoutMs: number): Promise<SuiteOutcome> {
	const reportPath = join(root, ".mutants-report.json");
	rmSync(reportPath, { force: true });
	const started = Date.now();
	const vitest = join(root, "node_modules", ".bin", "vitest");
	const args = ["run", ...paths, "--reporter=json", `--outputFile=${reportPath}`];
	return new Promise((resolve) => {
		// Own process group, so a timeout can stop vitest and all of its workers.
		const child = spawn(vitest, args, { cwd: root, detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CI: "1" } });
		let output = "";
		const keep = (chunk: Buffer) => {
			output = (output + chunk.toString()).slice(-4000);
		};
		child.stdout.on("data", keep);
		child.stderr.on("data", keep);
		let timedOut = false;
		const timer = setTimeout(() => {
			timedOut = true;
			if (child.pid !== undefined) {
				try {
					process.kill(-child.pid, "SIGKILL");
				} catch {
					// Already gone.
				}
			}
		}, timeoutMs);
		child.on("close", (exitCode) => {
			clearTimeout(timer);
			const { failed, total } = readReport(reportPath, root);
			resolve({ failed, total, exitCode, timedOut, outputTail: output, durationMs: Date.now() - started });
		});
	});
}

function readReport(path: string, root: string): { failed: string[]; total: number } {
	if (!existsSync(path)) return { failed: [], total: 0 };
	const report = JSON.parse(readFileSync(path, "utf8")) as JsonReport;
	const failed: string[] = [];
	for (const file of report.testResults ?? []) {
		const fileName = (file.name ?? "").replace(`${root}/`, "");
		const failedTests = (file.assertionResults ?? []).filter((test) => test.status === "failed");
		for (const test of failedTests) failed.push(`${fileName} > ${test.fullName ?? test.title ?? "?"}`);
		// A file that fails to load (a syntax error, a crash at import) has no assertions.
		if (file.status === "failed" && failedTests.length === 0) failed.push(`${fileName} (file failed: ${(file.message ?? "").split("\n")[0]})`);
	}
	return { failed, total: report.numTotalTests ?? 0 };
}
