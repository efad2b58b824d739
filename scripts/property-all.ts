/**
 * `npm run property:all`: every property and model-based test whose run count `PROPERTY_RUNS`
 * sets, at many more runs than `npm test` makes (800 by default), in one vitest run. Long runs
 * are how the rarer interleavings are found (a listener re-entered by parallel tool ends showed
 * up at run 398 of 800); CI keeps the default counts. The files are found by reading `test/`
 * and `examples/`, so a new property test is included the day it reads `PROPERTY_RUNS`.
 *
 * ```sh
 * npm run property:all                          # 800 runs each, about half an hour on 2 cores
 * npm run property:all -- --runs 200            # fewer
 * npm run property:all -- --interpreter xstate  # on XState's interpreter (AGENTCHART_INTERPRETER)
 * npm run property:all -- --list                # the files, nothing run
 * PROPERTY_SEED=123 npm run property:all        # replays a seed the output printed
 * ```
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Where the run count is read: `process.env["PROPERTY_RUNS"]` or `process.env.PROPERTY_RUNS`. */
const READS_RUNS = /process\.env(\["PROPERTY_RUNS"\]|\.PROPERTY_RUNS)/;

function testFilesUnder(dir: string): string[] {
	const found: string[] = [];
	for (const entry of readdirSync(dir, { withFileTypes: true })) {
		if (entry.name === "node_modules" || entry.name === "fixtures") continue;
		const path = join(dir, entry.name);
		if (entry.isDirectory()) found.push(...testFilesUnder(path));
		else if (entry.name.endsWith(".test.ts")) found.push(path);
	}
	return found;
}

/**
 * The test files whose run count `PROPERTY_RUNS` sets, relative to `base`, sorted.
 *
 * @example
 * propertyTestFiles(process.cwd()).includes("test/property/agent.property.test.ts"); // true
 */
export function propertyTestFiles(base: string = root): string[] {
	return ["test", "examples"]
		.flatMap((dir) => testFilesUnder(join(base, dir)))
		.filter((file) => READS_RUNS.test(readFileSync(file, "utf8")))
		.map((file) => relative(base, file))
		.sort();
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
	// strict: a mistyped flag (--run 200) is an error, not a silent run at 800.
	const { values } = parseArgs({ options: { list: { type: "boolean" }, runs: { type: "string" }, interpreter: { type: "string" } }, strict: true });
	const files = propertyTestFiles();
	if (values.list) {
		console.log(files.join("\n"));
	} else {
		const runs = values.runs ?? "800";
		if (!/^[1-9]\d*$/.test(runs)) throw new Error(`--runs: expected a positive whole number, got ${JSON.stringify(runs)}`);
		const interpreter = values.interpreter;
		if (interpreter !== undefined && interpreter !== "xstate" && interpreter !== "agentchart") {
			throw new Error(`--interpreter: expected "agentchart" or "xstate", got ${JSON.stringify(interpreter)}`);
		}
		console.log(`property:all: ${files.length} files, PROPERTY_RUNS=${runs}${interpreter ? `, ${interpreter} interpreter` : ""}`);
		const env = { ...process.env, PROPERTY_RUNS: runs, ...(interpreter === "xstate" ? { AGENTCHART_INTERPRETER: "xstate" } : {}) };
		const result = spawnSync("npx", ["vitest", "run", ...files], { cwd: root, stdio: "inherit", env });
		process.exitCode = result.status ?? 1;
	}
}
