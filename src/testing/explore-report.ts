/**
 * The report of a walk: what it ran, which transitions your configuration can take and which it
 * took, and each violation with the shortest path that shows it. `format()` prints it the way
 * docs/test-your-agent.md explains line by line.
 */
import { type AgentViolation, formatViolation } from "./violations.js";

/**
 * A violation the walk found, with the shortest path (step labels) that shows it.
 *
 * @example
 * const report = await exploreAgent(factory);
 * for (const violation of report.violations) console.log(violation.rule, violation.path.join(" → "), `(${violation.seenIn} paths)`);
 */
export interface ExploreViolation extends AgentViolation {
	/** The steps, from a new agent, after which it shows (replay it with `exploreAgent(factory, { path: path.join(" → ") })`). */
	path: string[];
	/** In how many paths it showed. */
	seenIn: number;
}

/**
 * What {@link exploreAgent} found.
 *
 * @example
 * const report = await exploreAgent(factory);
 * console.log(report.format());
 * expect(report.ok).toBe(true);
 */
export interface ExploreReport {
	/** No violation. */
	ok: boolean;
	/** Your configuration, as the walk read it. */
	configuration: string;
	/** Paths run, steps performed, and how long it took. */
	paths: number;
	/** Paths the walk planned: more than `paths` when `maxPaths` cut the walk short (its coverage is then of the paths run). */
	planned: number;
	steps: number;
	durationMs: number;
	/** The abstract model: its states and edges. */
	model: { states: number; edges: number };
	coverage: {
		/** Transitions of the chart (as `source --event#candidate[guard]--> target`) your configuration can take, in the model. */
		possible: string[];
		/** Those the real runs took. */
		taken: string[];
		/** Those no real run took (your code never answered the way they need, or a path was left early). */
		missed: string[];
		/** Transitions real runs took that the model does not offer (your code did something the walk does not do itself). */
		outside: string[];
		/**
		 * Real restores: the kinds of state a run of your configuration can be stored in and
		 * restored from (the chart's state, the run's flags, its calls: see `restores: "everywhere"`),
		 * and those the walk restored from.
		 */
		restores: { possible: string[]; taken: string[]; missed: string[] };
	};
	/** Paths your code led elsewhere than planned, which the walk planned again from where the agent was. */
	replanned: number;
	/** Paths the walk stopped following before their end, and why. */
	leftEarly: { path: string; reason: string }[];
	violations: ExploreViolation[];
	/** The report as text. */
	format(): string;
}

/** A violation told apart from others by its rule and message, ids and counts left out (one bug, many paths). */
export function signatureOf(found: AgentViolation): string {
	return `${found.rule}|${found.message.replace(/\b[a-z_]*\d[\w#]*\b/gi, "#")}`;
}

/**
 * Why a transition outside the model was taken, where the walk knows: the steps of a hook the
 * model does not walk (it lets your hook answer as it does, and plans nothing while it runs).
 */
function outsideBecause(key: string): string {
	if (key.includes("--tool.returned#")) return " (your afterToolCall was asked: the walk lets it answer as your code does, and plans no step while it runs)";
	return "";
}

const percent = (part: number, whole: number) => (whole === 0 ? "100" : ((100 * part) / whole).toFixed(1));

/** The report as text (see docs/test-your-agent.md). */
export function formatExploreReport(report: ExploreReport): string {
	const { coverage } = report;
	const lines = [
		`exploreAgent: ${report.configuration}`,
		`  model: ${report.model.states} states, ${report.model.edges} edges; ran ${report.paths} paths (${report.steps} steps) in ${(report.durationMs / 1000).toFixed(1)} s`,
		// A walk cut short must say so: its coverage reads like a whole walk's otherwise.
		...(report.planned > report.paths ? [`  maxPaths: ran ${report.paths} of the ${report.planned} planned paths; ${report.planned - report.paths} were cut, so the coverage below counts only the paths run`] : []),
		`  coverage: ${coverage.taken.length}/${coverage.possible.length} transitions this configuration can take were taken (${percent(coverage.taken.length, coverage.possible.length)} %)`,
		...coverage.missed.map((key) => `    not taken: ${key}`),
		...coverage.outside.map((key) => `    taken outside the model: ${key}${outsideBecause(key)}`),
	];
	const { restores } = coverage;
	if (restores.possible.length > 0) {
		lines.push(`  restores: from ${restores.taken.length}/${restores.possible.length} kinds of state a run can be stored in (${percent(restores.taken.length, restores.possible.length)} %)`);
	}
	if (report.replanned) lines.push(`  ${report.replanned} path(s) went elsewhere than planned (your code answered otherwise) and were planned again from there`);
	if (report.leftEarly.length) {
		lines.push(`  ${report.leftEarly.length} path(s) left before their end (not violations: your code took the agent where the walk's model could not follow, so the rest of each path was not walked):`);
		for (const left of report.leftEarly.slice(0, 5)) lines.push(`    ${left.reason} — after: ${left.path || "(start)"}`);
	}
	lines.push(report.violations.length === 0 ? "  violations: none" : `  violations: ${report.violations.length}`);
	report.violations.forEach((found, n) => {
		lines.push(`  ${n + 1}. ${formatViolation(found)}`);
		lines.push(`     shortest path (${found.path.length} steps): ${found.path.join(" → ")}`);
		lines.push(`     seen in ${found.seenIn} path(s)`);
	});
	return lines.join("\n");
}
