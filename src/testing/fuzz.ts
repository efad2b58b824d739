/**
 * `fuzzAgent`: seeded fast-check runs of random scenarios against your agent, shrunk to a minimal
 * counterexample, with the seed printed so the failure replays. fast-check is an optional peer
 * dependency: it is imported here, when `fuzzAgent` runs, and nowhere else.
 */
import type { Agent } from "../agent.js";
import { probeAgent, samplesOf } from "./explore-config.js";
import type { FaultKind } from "./faulty-model.js";
import { FUZZ_FAULTS, type FuzzCommand, type FuzzScenario, runFuzzScenario } from "./fuzz-run.js";
import type { SampleCall } from "./model/fixtures.js";
import { isFactoryMistake } from "./factory-calls.js";
import { unknownKeys } from "../agent-input.js";
import { checkKitCall, checkNumberOption, checkOptionKinds } from "./option-checks.js";
import { installRunGuards, type RunGuards } from "./run-guards.js";
import { loadOptionalPeer } from "../util/optional-peer.js";
import { type AgentViolation, formatViolation } from "./violations.js";
import type { AgentFactory } from "./walk/cast.js";
import { assertNodeHost } from "../util/host.js";

export type { FuzzCommand, FuzzScenario } from "./fuzz-run.js";

/**
 * Options of {@link fuzzAgent}.
 *
 * @example
 * const options: FuzzOptions = { runs: 200, seed: 1234, restarts: true, log: console.log };
 * const report = await fuzzAgent(factory, options);
 */
export interface FuzzOptions {
	/** Random scenarios to run (default 50; an integer of at least 1, or fuzzAgent throws a RangeError). */
	runs?: number | undefined;
	/** The seed (default: from the clock, printed): pass the printed one to replay a failure. */
	seed?: number | undefined;
	/** With `seed`, replay exactly the counterexample a failure printed (its `path`), without searching; without `seed`, fuzzAgent throws a TypeError. */
	path?: string | undefined;
	/**
	 * Run just this scenario (a report's `counterexample`, or its printed `minimal scenario:`
	 * parsed), once, without fast-check: a regression test that stays the same scenario when a
	 * newer agentchart draws other scenarios from the same seed. With `path` it throws a TypeError.
	 */
	scenario?: FuzzScenario | undefined;
	/** The tool calls the model makes, each naming one of your agent's tools (another name throws); default: one per tool, its arguments made from the tool's schema. */
	calls?: readonly SampleCall[] | undefined;
	/** The text of the prompts (default "Hello"). */
	prompt?: string | undefined;
	/** Snapshot, restore and continue at random points (your factory must restore `kit.snapshot`; default true). */
	restarts?: boolean | undefined;
	/** How long a run may take to settle (ms, default 5000). */
	settleTimeoutMs?: number | undefined;
	/** Your own checks, run on the agent after each scenario (return what is wrong). */
	check?: ((agent: Agent) => readonly (string | AgentViolation)[]) | undefined;
	/** Where the seed line and the result go (default `console.log`). */
	log?: ((line: string) => void) | undefined;
}

/** Every option of {@link FuzzOptions} (the type makes the list whole): any other is refused. */
const FUZZ_OPTIONS = Object.keys({
	runs: true,
	seed: true,
	path: true,
	scenario: true,
	calls: true,
	prompt: true,
	restarts: true,
	settleTimeoutMs: true,
	check: true,
	log: true,
} satisfies Record<keyof FuzzOptions, true>);

/**
 * What {@link fuzzAgent} found.
 *
 * @example
 * const report = await fuzzAgent(factory, { runs: 100 });
 * expect(report.ok, report.format()).toBe(true);
 */
export interface FuzzReport {
	ok: boolean;
	/** The seed: `fuzzAgent(factory, { seed })` runs the same scenarios again (a `scenario` run: the `seed` given, or 0). */
	seed: number;
	/** Scenarios run (shrinking runs included). */
	runs: number;
	/** The minimal failing scenario, after shrinking. */
	counterexample?: FuzzScenario | undefined;
	/** fast-check's path to it: `fuzzAgent(factory, { seed, path })` replays just that scenario. */
	path?: string | undefined;
	/** What the counterexample violated. */
	violations: AgentViolation[];
	/** The report as text. */
	format(): string;
}

type FastCheck = typeof import("fast-check");

async function loadFastCheck(): Promise<FastCheck> {
	const load = async (): Promise<FastCheck> => {
		const loaded = (await import("fast-check")) as FastCheck & { default?: FastCheck };
		return loaded.default ?? loaded;
	};
	// What the scenarios use: a fast-check of another major version may lack one.
	const used = ["array", "asyncProperty", "boolean", "check", "constant", "constantFrom", "integer", "oneof", "record"] as const;
	return loadOptionalPeer({ feature: "agentchart/testing (fuzzAgent)", peer: "fast-check", dev: true }, load, used);
}

function scenarioArbitrary(fc: FastCheck, samples: number, faults: readonly FaultKind[], restarts: boolean): import("fast-check").Arbitrary<FuzzScenario> {
	const commands: FuzzCommand[] = ["steer", "followUp", "abort", "continue", "prompt", "approve", "reject", ...(restarts ? (["restart", "restart"] as const) : [])];
	// A dispose ends what the rest of a scenario can explore: one command in about twenty-five.
	const command = fc.oneof({ arbitrary: fc.constantFrom(...commands), weight: 24 }, { arbitrary: fc.constant<FuzzCommand>("dispose"), weight: 1 });
	// Most replies arrive whole: a fault in one reply of four leaves runs long enough to reach tools and approvals.
	const fault = fc.oneof({ withCrossShrink: true }, { arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: fc.record({ kind: fc.constantFrom(...faults), afterDeltas: fc.integer({ min: 0, max: 6 }) }), weight: 1 });
	const calls = samples === 0 ? fc.constant<number[]>([]) : fc.array(fc.integer({ min: 0, max: samples - 1 }), { maxLength: 2 });
	return fc.record({
		replies: fc.array(fc.record({ calls, fault }), { minLength: 1, maxLength: 4 }),
		tools: fc.array(fc.record({ latencyMs: fc.constantFrom(0, 0, 1, 5, 15), fails: fc.boolean() }), { minLength: 1, maxLength: 3 }),
		commands: fc.array(fc.record({ atEvent: fc.integer({ min: 0, max: 40 }), command }), { maxLength: 5 }),
	});
}

/**
 * Runs random scenarios against agents from `factory` (the same factory {@link exploreAgent}
 * takes): random model replies calling your tools, replies that break (connection resets, errors
 * mid-stream, output-limit stops, context overflows, and stalls when your agent has an idle
 * timeout that ends them), random tool latencies and failures, steer/follow-up/abort/continue/
 * prompt/approve/reject/dispose at random events, and restarts (snapshot, JSON, restore through
 * your factory, continue). The invariants are checked on every event and once each run settles;
 * after a `dispose`, also that the run settles once its `agent_end` reached the listeners and that
 * later commands throw `Agent has been disposed` (docs/test-your-agent.md). A
 * failure is shrunk by fast-check to a minimal scenario, and the seed is printed so the same runs
 * replay. Needs fast-check (an optional peer dependency, imported only here).
 *
 * @example
 * const report = await fuzzAgent((kit) => {
 *   const options = kit.options({ initialState: { model, tools: [lookupOrder, refund] } });
 *   return kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
 * }, { runs: 100 });
 * expect(report.violations, report.format()).toEqual([]);
 */
export async function fuzzAgent(factory: AgentFactory, options: FuzzOptions = {}): Promise<FuzzReport> {
	assertNodeHost("fuzzAgent (agentchart/testing)");
	checkFuzzOptions(factory, options);
	// First, before your factory is called: a walk refused because another runs has done nothing.
	const guards = installRunGuards({ walk: "fuzzAgent", strictWarnings: false });
	try {
		return await fuzzUnderGuards(factory, options, guards);
	} finally {
		guards.uninstall();
	}
}

/** The runs themselves, under the guards {@link fuzzAgent} installed. */
async function fuzzUnderGuards(factory: AgentFactory, options: FuzzOptions, guards: RunGuards): Promise<FuzzReport> {
	const fc = options.scenario ? undefined : await loadFastCheck();
	const log = options.log ?? ((line: string) => console.log(line));
	const seed = options.seed ?? (options.scenario ? 0 : Date.now() % 2 ** 31);
	const probe = probeAgent(factory);
	let samples: SampleCall[];
	try {
		samples = samplesOf(probe, options.calls);
	} catch (error) {
		probe.dispose();
		throw error;
	}
	const settleTimeoutMs = options.settleTimeoutMs ?? 5000;
	// A stall ends only when something gives up on the stream: the agent's idle timeout, if short enough.
	const faults = probe.streamIdleTimeoutMs > 0 && probe.streamIdleTimeoutMs < settleTimeoutMs / 2 ? FUZZ_FAULTS : FUZZ_FAULTS.filter((kind) => kind !== "stall");
	probe.dispose();
	// A scenario of another agent: its calls name sample calls this one does not have (wrapped
	// around, they played as other calls than the report's).
	const calls = options.scenario?.replies.flatMap((reply) => reply.calls) ?? [];
	const beyond = calls.find((index) => index >= samples.length);
	if (beyond !== undefined) {
		throw new TypeError(`agentchart/testing: fuzzAgent's scenario calls sample call ${beyond}, but this agent has ${samples.length} (${samples.map((sample) => sample.name).join(", ") || "no tools"}): a scenario replays on the agent (and calls option) its report was made with`);
	}
	if (!fc) {
		// A scenario given: played once, as the search would have played it.
		const { scenario } = options as { scenario: FuzzScenario };
		const violations = await runFuzzScenario(scenario, { factory, samples, prompt: options.prompt ?? "Hello", settleTimeoutMs, guards, check: options.check });
		const report: FuzzReport = { ok: violations.length === 0, seed, runs: 1, counterexample: violations.length ? scenario : undefined, violations, format: () => formatFuzzReport(report, scenario) };
		log(report.format());
		return report;
	}
	log(`fuzzAgent seed: ${seed}  (fuzzAgent(factory, { seed: ${seed} }) replays these runs)`);
	let runs = 0;
	let lastViolations: AgentViolation[] = [];
	/** Your factory is written wrong (see factory-calls.ts): thrown once fast-check is done, not shrunk as a finding. */
	let mistake: unknown;
	const property = fc.asyncProperty(scenarioArbitrary(fc, samples.length, faults, options.restarts !== false), async (scenario) => {
		// The runs left would only meet the same mistake: they pass at once, and the mistake is thrown after.
		if (mistake) return true;
		runs++;
		let violations: AgentViolation[];
		try {
			violations = await runFuzzScenario(scenario, { factory, samples, prompt: options.prompt ?? "Hello", settleTimeoutMs, guards, check: options.check });
		} catch (error) {
			if (!isFactoryMistake(error)) throw error;
			mistake = error;
			return true;
		}
		if (violations.length) lastViolations = violations;
		return violations.length === 0;
	});
	const details = await fc.check(property, { numRuns: options.runs ?? 50, seed, ...(options.path !== undefined ? { path: options.path } : {}) });
	if (mistake) throw mistake;
	const counterexample = details.failed ? (details.counterexample?.[0] as FuzzScenario | undefined) : undefined;
	let violations: AgentViolation[] = [];
	if (counterexample) {
		// The last failing run may not be the minimal one: check the counterexample once more for its own violations.
		violations = await runFuzzScenario(counterexample, { factory, samples, prompt: options.prompt ?? "Hello", settleTimeoutMs, guards, check: options.check });
		if (violations.length === 0) violations = lastViolations;
	} else if (details.failed && details.errorInstance) violations = [{ rule: "custom", message: `the run threw: ${String(details.errorInstance)}` }];
	const report: FuzzReport = {
		ok: !details.failed,
		seed,
		runs,
		counterexample,
		path: details.failed ? details.counterexamplePath ?? undefined : undefined,
		violations,
		format: () => formatFuzzReport(report),
	};
	log(report.format());
	return report;
}

/**
 * Refuses options that would test nothing, or something else than asked, while looking like a
 * pass: no runs, a path without the seed it was printed with (the clock's seed replays nothing
 * of it), a seed fast-check cannot take.
 */
function checkFuzzOptions(factory: AgentFactory, options: FuzzOptions): void {
	checkKitCall("fuzzAgent", factory, options, FUZZ_OPTIONS);
	checkOptionKinds("fuzzAgent", options, { calls: "list", prompt: "string", restarts: "boolean", check: "function", log: "function" });
	checkNumberOption("fuzzAgent", "runs", options.runs, { min: 1, integer: true });
	checkNumberOption("fuzzAgent", "settleTimeoutMs", options.settleTimeoutMs, { min: 1, integer: false });
	if (options.seed !== undefined && (typeof options.seed !== "number" || !Number.isInteger(options.seed))) {
		throw new TypeError(`agentchart/testing: fuzzAgent's seed must be an integer (the one a report printed), got ${String(options.seed)}`);
	}
	if (options.scenario !== undefined) checkScenario(options.scenario, options.path);
	if (options.path === undefined) return;
	if (options.seed === undefined) throw new TypeError(`agentchart/testing: fuzzAgent's path ${JSON.stringify(options.path)} replays only with the seed it was printed with: pass both, as the report's replay: line does (fuzzAgent(factory, { seed, path }))`);
	if (typeof options.path !== "string" || !/^\d+(:\d+)*$/.test(options.path)) throw new TypeError(`agentchart/testing: fuzzAgent's path must be the one a report printed (numbers joined by ":", such as "3:0:0"), got ${JSON.stringify(options.path)}`);
}

const COMMANDS: readonly FuzzCommand[] = ["steer", "followUp", "abort", "continue", "prompt", "approve", "reject", "restart", "dispose"];

/**
 * A `scenario` option as a report prints one (`replies`, `tools`, `commands`): a typo or a
 * scenario of another shape would otherwise play as a run that shows nothing.
 */
function checkScenario(scenario: FuzzScenario, path: string | undefined): void {
	const wrong = (what: string) => new TypeError(`agentchart/testing: fuzzAgent's scenario must be one a report printed ({ replies, tools, commands }): ${what}`);
	if (path !== undefined) throw new TypeError("agentchart/testing: fuzzAgent takes a scenario, or a seed and path that find one, not both");
	if (typeof scenario !== "object" || scenario === null) throw wrong(`got ${String(scenario)}`);
	const isCount = (value: unknown) => typeof value === "number" && Number.isInteger(value) && value >= 0;
	// A misspelt key (`fualt`) would be dropped, and the scenario play without what it names.
	const onlyKeys = (value: object, known: readonly string[], what: string) => {
		const unknown = unknownKeys(value, known);
		if (unknown !== undefined) throw wrong(`${what} has no key ${unknown} (its keys: ${known.join(", ")}), got ${JSON.stringify(value)}`);
	};
	onlyKeys(scenario, ["replies", "tools", "commands"], "a scenario");
	if (!Array.isArray(scenario.replies) || scenario.replies.length === 0) throw wrong("replies must be a list of at least one reply");
	for (const reply of scenario.replies) {
		if (!Array.isArray(reply?.calls) || !reply.calls.every(isCount)) throw wrong(`a reply's calls must be indices into calls, got ${JSON.stringify(reply)}`);
		onlyKeys(reply, ["calls", "fault"], "a reply");
		if (reply.fault == null) continue;
		if (!FUZZ_FAULTS.includes(reply.fault.kind)) throw wrong(`a reply's fault must be one of ${FUZZ_FAULTS.join(", ")}, got ${JSON.stringify(reply.fault)}`);
		onlyKeys(reply.fault, ["kind", "afterDeltas", "message"], "a reply's fault");
		if (reply.fault.afterDeltas !== undefined && !isCount(reply.fault.afterDeltas)) throw wrong(`a fault's afterDeltas must be a whole number of at least 0, got ${JSON.stringify(reply.fault)}`);
		if (reply.fault.message !== undefined && typeof reply.fault.message !== "string") throw wrong(`a fault's message must be a text, got ${JSON.stringify(reply.fault)}`);
	}
	if (!Array.isArray(scenario.tools) || !scenario.tools.every((tool) => isCount(tool?.latencyMs) && typeof tool.fails === "boolean")) throw wrong(`tools must be a list of { latencyMs, fails }, got ${JSON.stringify(scenario.tools)}`);
	for (const tool of scenario.tools) onlyKeys(tool, ["latencyMs", "fails"], "a tool");
	if (!Array.isArray(scenario.commands)) throw wrong("commands must be a list");
	for (const entry of scenario.commands) {
		if (!isCount(entry?.atEvent) || !COMMANDS.includes(entry.command)) throw wrong(`a command must be { atEvent, command } with a command among ${COMMANDS.join(", ")}, got ${JSON.stringify(entry)}`);
		onlyKeys(entry, ["atEvent", "command"], "a command");
	}
}

/** The report as text (see docs/test-your-agent.md); `given`: the scenario the caller passed. */
function formatFuzzReport(report: FuzzReport, given?: FuzzScenario): string {
	if (given) {
		if (report.ok) return "fuzzAgent: the given scenario, no violation";
		return [`fuzzAgent: the given scenario violates ${report.violations.length} invariant(s)`, `  scenario: ${JSON.stringify(given)}`, ...report.violations.map((found, n) => `  ${n + 1}. ${formatViolation(found)}`)].join("\n");
	}
	if (report.ok) return `fuzzAgent: ${report.runs} random scenarios, no violation (seed ${report.seed})`;
	const lines = [
		`fuzzAgent: a scenario violates ${report.violations.length} invariant(s) (seed ${report.seed}, path "${report.path ?? ""}"; ${report.runs} runs with shrinking)`,
		`  replay: fuzzAgent(factory, { seed: ${report.seed}, path: ${JSON.stringify(report.path ?? "")} })`,
		`  minimal scenario: ${JSON.stringify(report.counterexample)}`,
		...report.violations.map((found, n) => `  ${n + 1}. ${formatViolation(found)}`),
	];
	return lines.join("\n");
}
