/**
 * `npm run mutants`: applies each deliberate bug of scripts/mutants/catalogue.ts, one at a
 * time, in a temporary copy of the repository, runs the test suite there and reports which
 * mutants survived (the suite still passed). Exits non-zero when any survives, when an
 * anchor is missing, or when the unmutated suite does not pass.
 *
 * Options:
 *   --all            run the whole suite (default: test/agent and test/machine)
 *   --only a,b       only these mutant ids
 *   --list           print the mutants and exit
 *   --timeout <s>    wall-clock limit per suite run (default 300)
 */
import { MUTANTS, type Mutant } from "./mutants/catalogue.js";
import { runSuite, type SuiteOutcome } from "./mutants/run-suite.js";
import { AnchorError, checkAllAnchors, createSandbox } from "./mutants/sandbox.js";

/** How one mutant fared. */
interface Verdict {
	mutant: Mutant;
	killed: boolean;
	/** The first test that failed only under the mutant, or why it counts as killed. */
	evidence: string;
	seconds: number;
}

const DEFAULT_PATHS = ["test/agent", "test/machine"];

function option(args: string[], name: string): string | undefined {
	const index = args.indexOf(name);
	return index >= 0 ? args[index + 1] : undefined;
}

/**
 * A mutant is killed when some test fails that passed on the unmutated code (tests that were
 * already failing prove nothing), or when the run timed out or crashed without a report.
 */
function judge(mutant: Mutant, outcome: SuiteOutcome, baselineFailures: Set<string>): Verdict {
	const seconds = outcome.durationMs / 1000;
	const fresh = outcome.failed.filter((name) => !baselineFailures.has(name));
	if (fresh.length > 0) return { mutant, killed: true, evidence: fresh[0] ?? "", seconds };
	if (outcome.timedOut) return { mutant, killed: true, evidence: "(suite timed out)", seconds };
	if (outcome.total === 0 && outcome.exitCode !== 0) return { mutant, killed: true, evidence: `(suite crashed: ${outcome.outputTail.split("\n").slice(-3).join(" ")})`, seconds };
	return { mutant, killed: false, evidence: "", seconds };
}

function printTable(verdicts: Verdict[]): void {
	const idWidth = Math.max(6, ...verdicts.map((verdict) => verdict.mutant.id.length));
	console.log(`\n${"mutant".padEnd(idWidth)}  result    s     first failing test`);
	console.log(`${"-".repeat(idWidth)}  --------  ----  ${"-".repeat(40)}`);
	for (const verdict of verdicts) {
		const result = verdict.killed ? "killed" : "SURVIVED";
		console.log(`${verdict.mutant.id.padEnd(idWidth)}  ${result.padEnd(8)}  ${verdict.seconds.toFixed(0).padStart(4)}  ${verdict.killed ? verdict.evidence : verdict.mutant.description}`);
	}
}

async function main(): Promise<number> {
	const args = process.argv.slice(2);
	const root = process.cwd();
	const only = option(args, "--only")?.split(",");
	const mutants = only ? MUTANTS.filter((mutant) => only.includes(mutant.id)) : MUTANTS;
	if (only && mutants.length !== only.length) {
		console.error(`Unknown mutant id in --only; known: ${MUTANTS.map((mutant) => mutant.id).join(", ")}`);
		return 2;
	}
	if (args.includes("--list")) {
		for (const mutant of mutants) console.log(`${mutant.id}: ${mutant.description}`);
		return 0;
	}
	const paths = args.includes("--all") ? [] : DEFAULT_PATHS;
	const timeoutMs = Number(option(args, "--timeout") ?? 300) * 1000;

	// Every anchor is checked before anything runs: a broken anchor is a failure, not a skip.
	checkAllAnchors(root, MUTANTS);

	const sandbox = createSandbox(root);
	console.log(`Sandbox: ${sandbox.root}; suite: ${paths.length ? paths.join(" ") : "all tests"}`);
	try {
		const baseline = await runSuite(sandbox.root, paths, timeoutMs);
		if (baseline.total === 0 || baseline.timedOut) {
			console.error(`The unmutated suite did not run (exit ${baseline.exitCode}):\n${baseline.outputTail}`);
			return 2;
		}
		const baselineFailures = new Set(baseline.failed);
		console.log(`Baseline: ${baseline.total} tests, ${baseline.failed.length} failing, ${(baseline.durationMs / 1000).toFixed(0)} s`);
		for (const name of baseline.failed) console.log(`  already failing (ignored): ${name}`);

		const verdicts: Verdict[] = [];
		for (const mutant of mutants) {
			const restore = sandbox.apply(mutant);
			try {
				const verdict = judge(mutant, await runSuite(sandbox.root, paths, timeoutMs), baselineFailures);
				verdicts.push(verdict);
				console.log(`${verdict.killed ? "killed  " : "SURVIVED"} ${mutant.id}`);
			} finally {
				restore();
			}
		}
		printTable(verdicts);
		const survivors = verdicts.filter((verdict) => !verdict.killed);
		console.log(`\n${verdicts.length - survivors.length}/${verdicts.length} mutants killed.`);
		if (baseline.failed.length > 0) console.log(`Warning: ${baseline.failed.length} tests fail without any mutant.`);
		return survivors.length > 0 ? 1 : 0;
	} finally {
		sandbox.remove();
	}
}

main().then(
	(code) => {
		process.exitCode = code;
	},
	(error: unknown) => {
		console.error(error instanceof AnchorError ? `Broken mutant anchors:\n${error.message}` : error);
		process.exitCode = 2;
	},
);
