/**
 * `exploreAgent`: walks the agent chart over your agent's configuration with `xstate/graph` and
 * runs every path against a fresh agent from your factory, checking the invariants after every
 * step; reports which transitions your configuration can take and which it took, and each
 * violation with the shortest path that shows it.
 */
import type { Agent } from "../agent.js";
import { configOf, describeAgent, probeAgent } from "./explore-config.js";
import type { ModelConfig } from "./model/config.js";
import type { SampleCall } from "./model/fixtures.js";
import { planWalk, type WalkPlan } from "./model/plan.js";
import { type ExploreReport, type ExploreViolation, formatExploreReport, signatureOf } from "./explore-report.js";
import { checkKitCall, checkNumberOption, checkOptionKinds } from "./option-checks.js";
import { installRunGuards, type RunGuards } from "./run-guards.js";
import type { AgentViolation } from "./violations.js";
import type { AgentFactory } from "./walk/cast.js";
import { type PathRun, type PathRunOptions, runWalkPath } from "./walk/run-path.js";
import { assertNodeHost } from "../util/host.js";

/**
 * Options of {@link exploreAgent}.
 *
 * @example
 * const options: ExploreOptions = { calls: [{ name: "lookupOrder", arguments: { id: "A-17" } }], restores: true, maxPaths: 200 };
 * const report = await exploreAgent(factory, options);
 */
export interface ExploreOptions {
	/**
	 * The tool calls the walk's model makes, each naming one of your agent's tools (another name
	 * throws), each made at least once: give the inputs your tools must handle (an order that does
	 * not exist); default: one per tool, its arguments the simplest its schema accepts. An empty
	 * list walks a model that never calls a tool (your tools do not run).
	 */
	calls?: readonly SampleCall[] | undefined;
	/** The text of the walk's prompts (default "Hello"). */
	prompt?: string | undefined;
	/**
	 * Real restores (snapshot → JSON → your factory with `kit.snapshot`): `true` (default) where
	 * a restore takes a transition no other step does; `"everywhere"`: at every state a run can be
	 * stored in; `false`: none (your factory then need not restore).
	 */
	restores?: boolean | "everywhere" | undefined;
	/** Run at most this many paths (default: all of them; an integer of at least 1, or exploreAgent throws a RangeError). */
	maxPaths?: number | undefined;
	/**
	 * Replay one path: its steps as the report prints them (`"prompt → delivered → …"`). A path
	 * the walk cannot follow from a new agent (a step mistyped, or one your agent no longer takes
	 * there) throws, saying at which step and which steps the model has there.
	 */
	path?: string | undefined;
	/** Shrink each violation's path to the shortest prefix that still shows it (default true). */
	shrink?: boolean | undefined;
	/** How long your code may take to answer a call the walk holds, or a listener an event (ms, default 2000). */
	stepTimeoutMs?: number | undefined;
	/** How long a run may take to settle once its path is over (ms, default 5000). */
	settleTimeoutMs?: number | undefined;
	/** Your own checks, run on the agent after each path (return what is wrong). */
	check?: ((agent: Agent) => readonly (string | AgentViolation)[]) | undefined;
	/** Progress lines (one per path); default: none. */
	log?: ((line: string) => void) | undefined;
	/**
	 * agentchart's own walk: the configuration to walk instead of the one read from your agent
	 * (with `strict`, which compares the real chart with the model after every step).
	 */
	config?: ModelConfig | undefined;
	/** agentchart's own walk: compare the real chart with the model strictly after every step (see `config`). */
	strict?: boolean | undefined;
}

/** Every option of {@link ExploreOptions} (the type makes the list whole): any other is refused. */
const EXPLORE_OPTIONS = Object.keys({
	calls: true,
	prompt: true,
	restores: true,
	maxPaths: true,
	path: true,
	shrink: true,
	stepTimeoutMs: true,
	settleTimeoutMs: true,
	check: true,
	log: true,
	config: true,
	strict: true,
} satisfies Record<keyof ExploreOptions, true>);

/** Steps joined as the report prints them. */
export const STEP_SEPARATOR = " → ";

/**
 * Walks the agent chart over your agent's configuration and runs every path against a fresh
 * agent from `factory`, checking the invariants after every step (events nest, every tool call
 * is answered once and in order, approvals pair, nothing queued is lost or delivered twice, runs
 * settle, idle means idle, the transcript is a valid provider request) and your code's contract
 * (tools settle once, hooks and listeners do not throw). The walk's model replies, calls your
 * tools with the arguments in `options.calls` (or made from their schemas), approves and rejects
 * what waits for approval, aborts, steers, follows up, disposes, and restores from JSON at every
 * point where that takes the chart somewhere new. Resolves with a report: coverage (what your
 * configuration can take and what it took) and each violation with its shortest path.
 *
 * @example
 * const report = await exploreAgent((kit) => {
 *   const options = kit.options({ initialState: { model, tools: [lookupOrder, refund] }, beforeToolCall: policy });
 *   return kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
 * });
 * expect(report.violations, report.format()).toEqual([]);
 */
export async function exploreAgent(factory: AgentFactory, options: ExploreOptions = {}): Promise<ExploreReport> {
	assertNodeHost("exploreAgent (agentchart/testing)");
	checkExploreOptions(factory, options);
	// First, before your factory is called: a walk refused because another runs has done nothing.
	const guards = installRunGuards({ walk: "exploreAgent", strictWarnings: options.strict === true });
	try {
		return await walkAgent(factory, options, guards);
	} finally {
		guards.uninstall();
	}
}

/** The walk itself, under the guards {@link exploreAgent} installed. */
async function walkAgent(factory: AgentFactory, options: ExploreOptions, guards: RunGuards): Promise<ExploreReport> {
	const started = Date.now();
	const probe = probeAgent(factory);
	let configuration: string;
	let config: ModelConfig;
	try {
		configuration = options.config?.name ?? describeAgent(probe);
		config = options.config ?? configOf(probe, { calls: options.calls, prompt: options.prompt, restores: options.restores !== false });
	} finally {
		probe.dispose();
	}
	const plan = planWalk(config, options.restores === "everywhere" ? "restores" : "transitions");
	const runOptions: PathRunOptions = {
		strict: options.strict === true,
		stepTimeoutMs: options.stepTimeoutMs ?? 2000,
		settleTimeoutMs: options.settleTimeoutMs ?? 5000,
		maxReplans: 4,
		refused: new Set(),
		refusedLabels: new Set(),
		takenSoFar: new Set(),
		check: options.check,
	};
	const routes = options.path !== undefined ? [{ labels: options.path.split(STEP_SEPARATOR).map((label) => label.trim()) }] : plan.paths.slice(0, options.maxPaths ?? plan.paths.length).map((path) => ({ path }));
	const runs: PathRun[] = [];
	for (const [n, route] of routes.entries()) {
		guards.reset();
		const run = await runWalkPath(plan, route, factory, runOptions);
		for (const found of guards.take()) run.violations.push({ violation: found, step: Math.max(run.performed.length - 1, 0) });
		runs.push(run);
		options.log?.(`path ${n + 1}/${routes.length}: ${run.performed.map((step) => step.label).join(STEP_SEPARATOR)}${run.violations.length ? ` (${run.violations.length} violation(s))` : ""}`);
	}
	const replayed = options.path !== undefined ? runs[0] : undefined;
	// A path replayed is a test pinned to it: one it cannot follow must fail, not pass unseen.
	if (replayed?.leftAt) throw new Error(unfollowedPath(options.path ?? "", replayed));
	const violations = collectViolations(runs);
	if (options.shrink !== false) for (const found of violations) await shrink(found, plan, factory, runOptions, guards);
	return buildReport(plan, configuration, runs, options.path !== undefined ? 1 : plan.paths.length, violations, Date.now() - started);
}

/**
 * Refuses options that would test nothing while looking like a pass, as fuzzAgent does: no paths
 * (`maxPaths` 0, or NaN from an unset `Number(process.env.PATHS)`), or a time limit no step or
 * run can keep (0 holds nothing; NaN never ends a wait).
 */
function checkExploreOptions(factory: AgentFactory, options: ExploreOptions): void {
	checkKitCall("exploreAgent", factory, options, EXPLORE_OPTIONS);
	checkOptionKinds("exploreAgent", options, { calls: "list", prompt: "string", restores: 'true, false or "everywhere"', path: "string", shrink: "boolean", check: "function", log: "function", strict: "boolean" });
	checkNumberOption("exploreAgent", "maxPaths", options.maxPaths, { min: 1, integer: true });
	checkNumberOption("exploreAgent", "stepTimeoutMs", options.stepTimeoutMs, { min: 1, integer: false });
	checkNumberOption("exploreAgent", "settleTimeoutMs", options.settleTimeoutMs, { min: 1, integer: false });
}

/** Why a path given to replay could not be followed, for the error `exploreAgent` throws. */
function unfollowedPath(path: string, run: PathRun): string {
	const left = run.leftAt;
	const followed = run.performed.map((step) => step.label).join(STEP_SEPARATOR);
	const arrows = path.includes("->") && !path.includes(STEP_SEPARATOR.trim()) ? ` (steps are separated by "${STEP_SEPARATOR}", as the report prints them, not "->")` : "";
	return [
		`agentchart/testing: exploreAgent cannot follow the path ${JSON.stringify(path)}${arrows}:`,
		`  at step ${(left?.step ?? 0) + 1} (${JSON.stringify(left?.label ?? "")}): ${left?.reason ?? "left early"}`,
		`  followed before it: ${followed || "nothing"}`,
	].join("\n");
}

/** Distinct violations (by rule and message, ids left out), each with the shortest path that showed it. */
function collectViolations(runs: readonly PathRun[]): ExploreViolation[] {
	const bySignature = new Map<string, ExploreViolation>();
	for (const run of runs) {
		for (const { violation, step } of run.violations) {
			const signature = signatureOf(violation);
			const path = run.performed.slice(0, step + 1).map((each) => each.label);
			const known = bySignature.get(signature);
			if (known) {
				known.seenIn++;
				if (path.length < known.path.length) Object.assign(known, { ...violation, path });
				continue;
			}
			bySignature.set(signature, { ...violation, path, seenIn: 1 });
		}
	}
	return [...bySignature.values()];
}

/** Shortens a violation's path to the shortest prefix that still shows it. */
async function shrink(found: ExploreViolation, plan: WalkPlan, factory: AgentFactory, options: PathRunOptions, guards: RunGuards): Promise<void> {
	const signature = signatureOf(found);
	for (let length = 1; length < found.path.length; length++) {
		guards.reset();
		const run = await runWalkPath(plan, { labels: found.path.slice(0, length) }, factory, options);
		const all = [...run.violations.map((each) => each.violation), ...guards.take()];
		if (all.some((each) => signatureOf(each) === signature)) {
			found.path = run.performed.map((step) => step.label);
			return;
		}
	}
}

function buildReport(plan: WalkPlan, configuration: string, runs: readonly PathRun[], planned: number, violations: ExploreViolation[], durationMs: number): ExploreReport {
	const taken = new Set<string>();
	const restoredFrom = new Set<string>();
	for (const run of runs) {
		for (const key of run.taken) taken.add(key);
		for (const kind of run.restoredFrom) restoredFrom.add(kind);
	}
	const possible = [...plan.reachable].sort();
	const restoreKinds = [...plan.restoreKinds].sort();
	const report: ExploreReport = {
		ok: violations.length === 0,
		configuration,
		paths: runs.length,
		planned,
		steps: runs.reduce((n, run) => n + run.performed.length, 0),
		durationMs,
		coverage: {
			possible,
			taken: possible.filter((key) => taken.has(key)),
			missed: possible.filter((key) => !taken.has(key)),
			outside: [...taken].filter((key) => !plan.reachable.has(key)).sort(),
			restores: { possible: restoreKinds, taken: restoreKinds.filter((kind) => restoredFrom.has(kind)), missed: restoreKinds.filter((kind) => !restoredFrom.has(kind)) },
		},
		replanned: runs.filter((run) => run.replans > 0).length,
		leftEarly: runs.filter((run) => run.leftAt).map((run) => ({ path: run.performed.map((step) => step.label).join(STEP_SEPARATOR), reason: run.leftAt?.reason ?? "" })),
		violations,
		model: { states: plan.states, edges: plan.edges },
		format: () => formatExploreReport(report),
	};
	return report;
}
