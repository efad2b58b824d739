/**
 * Figures that concern a whole heap or a whole process (retained memory, peak RSS) are taken
 * in a child process of their own: a fresh `node --expose-gc --import tsx` that loads one
 * contender only, measures one figure and prints it as the last line of its output, as JSON.
 * Nothing another benchmark left in the parent's heap (or the other library's modules) can
 * move the figure.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The repository root: children resolve `tsx` and the sources from here. */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Runs `script` as a child (`node --expose-gc --import tsx script --child <payload as JSON>`)
 * and returns the JSON of its last output line. Rejects with the child's stderr if it fails.
 *
 * @example
 * const figure = await runChild<{ bytes: number }>(fileURLToPath(import.meta.url), { agents: 1000 });
 */
export function runChild<Result>(script: string, payload: unknown): Promise<Result> {
	return new Promise((resolve, reject) => {
		execFile(
			process.execPath,
			["--expose-gc", "--import", "tsx", script, "--child", JSON.stringify(payload)],
			{ cwd: ROOT, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
			(error, stdout, stderr) => {
				if (error) {
					reject(new Error(`${script} --child ${JSON.stringify(payload)} failed: ${stderr || error.message}`));
					return;
				}
				const last = stdout.trim().split("\n").at(-1) ?? "";
				try {
					resolve(JSON.parse(last) as Result);
				} catch {
					reject(new Error(`${script} --child printed no JSON result: ${JSON.stringify(stdout.slice(-500))}`));
				}
			},
		);
	});
}

/**
 * The payload when this process was started by {@link runChild}, otherwise undefined.
 *
 * @example
 * const payload = childPayload<MemoryChildPayload>();
 * if (payload) await measureInChild(payload);
 */
export function childPayload<Payload>(): Payload | undefined {
	const index = process.argv.indexOf("--child");
	if (index < 0) return undefined;
	return JSON.parse(process.argv[index + 1] ?? "{}") as Payload;
}

/**
 * Whether the module at `moduleUrl` is the script Node was started with (so a benchmark file
 * can both be imported by `run.ts` and run alone or as a child).
 *
 * @example
 * if (isEntryPoint(import.meta.url)) main();
 */
export function isEntryPoint(moduleUrl: string): boolean {
	return process.argv[1] !== undefined && fileURLToPath(moduleUrl) === process.argv[1];
}

/**
 * Prints a child's result (the last line of its output, which {@link runChild} parses) and
 * exits, or prints the error and exits non-zero.
 *
 * @example
 * if (isEntryPoint(import.meta.url)) reportFromChild(measureInChild(payload));
 */
export function reportFromChild(result: Promise<unknown>): void {
	result.then(
		(value) => {
			// Agents may hold timers (timeouts, inspectors); the figure is taken, the child is done.
			process.stdout.write(`${JSON.stringify(value)}\n`, () => process.exit(0));
		},
		(error: unknown) => {
			console.error(error);
			process.exit(1);
		},
	);
}
