/**
 * What a scenario is, and running one: on one engine (`observeRaw`), or on both for a
 * comparison (`runOnBothEngines`).
 */
import type { ScriptedResponse } from "../providers/anthropic-server.js";
import type { Engine } from "./engine.js";
import { type CliExit, type JsonObject, parseJsonLines, readSessions, type RunContext, withRun, type WorkspaceOptions } from "./harness.js";
import { loadSignature } from "./load-signature.js";
import { normalizeObservation } from "./normalize.js";

/** What one engine's run of a scenario showed (raw, or normalised by normalize.ts). */
export interface Observation {
	engine: Engine;
	/** The run's temporary workspace (deleted after the run; normalisation replaces the path). */
	root: string;
	exitCode: number | null;
	/** stdout as text in print mode; "" when stdout is JSON records. */
	stdout: string;
	/** The JSON-mode lines or the RPC records (events and responses), in order. */
	records: JsonObject[];
	/** Each session file, as its entries. */
	sessions: JsonObject[][];
	/** The JSON bodies the model server received, in order. */
	requests: JsonObject[];
	/** stderr, for diagnostics only (not compared). */
	stderr: string;
}

/** A script for the model, and how to drive the coding agent against it. */
export interface Scenario {
	name: string;
	mode: "print" | "json" | "rpc";
	responses: ScriptedResponse[];
	/** How many requests the model server gets on pi (checks that the scenario does what it says). */
	requestCount: number;
	workspace?: WorkspaceOptions;
	/** The documented fixes this scenario shows: they turn pi's observation into the expected one. */
	documentedFixes?: Array<(pi: Observation) => Observation>;
	/**
	 * The part of a run that is compared, when pi itself is not deterministic past some point
	 * (applied to both engines' raw observations).
	 */
	comparedPart?: (observation: Observation) => Observation;
	/**
	 * The model's answers arrive in one socket read on purpose, so records ahead of their events
	 * are what the scenario compares, not a sign of a busy machine: it is never run again.
	 */
	burst?: boolean;
	/** Runs the CLI and returns its exit and, for RPC, its records. */
	drive(run: RunContext): Promise<{ exit: CliExit; records?: JsonObject[] }>;
}

/**
 * Runs a scenario on one engine and returns what it showed, not normalised.
 *
 * @example
 * const raw = await observeRaw(printPlain, "pi");
 */
export function observeRaw(scenario: Scenario, engine: Engine): Promise<Observation> {
	return withRun(engine, scenario.responses, scenario.workspace ?? {}, async (run) => {
		const { exit, records } = await scenario.drive(run);
		if (exit.timedOut) throw new Error(`${scenario.name} on ${engine}: the CLI timed out\n${exit.stderr}`);
		return {
			engine,
			root: run.ws.root,
			exitCode: exit.code,
			stdout: scenario.mode === "print" ? exit.stdout : "",
			records: records ?? (scenario.mode === "json" ? parseJsonLines(exit.stdout) : []),
			sessions: await readSessions(run.ws),
			requests: run.server.requests.map((request) => request.body as JsonObject),
			stderr: exit.stderr,
		};
	});
}

/** One scenario on both engines, normalised. */
export interface EngineComparison {
	/** What pi showed. */
	pi: Observation;
	/** What pi showed with the scenario's documented fixes applied: what agentchart must show. */
	expected: Observation;
	/** What agentchart showed. */
	agentchart: Observation;
	/** Per engine, the load signature of each run that was run again (see `observeUnloaded`). */
	discarded: Record<Engine, string[]>;
}

/** Runs of one engine per scenario at most: the first, and reruns while the load signature shows. */
export const MAX_RUNS = 3;

/**
 * Runs a scenario on one engine until its compared part shows no load signature
 * (load-signature.ts), at most `MAX_RUNS` times: a record whose snapshot is ahead of its event
 * tells how the OS split the stream, not what the engine did, and the next run, split otherwise,
 * is compared in full. Nothing is masked: the last run is compared as it is, signature or not.
 *
 * @example
 * const { observation, discarded } = await observeUnloaded(jsonPlain, "pi", (o) => o);
 */
export async function observeUnloaded(
	scenario: Scenario,
	engine: Engine,
	part: (observation: Observation) => Observation,
	observe: (scenario: Scenario, engine: Engine) => Promise<Observation> = observeRaw,
): Promise<{ observation: Observation; discarded: string[] }> {
	const discarded: string[] = [];
	for (;;) {
		const observation = part(await observe(scenario, engine));
		const signature = scenario.burst ? undefined : loadSignature(observation.records);
		if (signature === undefined || discarded.length + 1 >= MAX_RUNS) return { observation, discarded };
		// Said, not hidden: a suite that reruns often tells how busy its machine is.
		console.warn(`${scenario.name} on ${engine}: load signature, run again (${signature})`);
		discarded.push(signature);
	}
}

/**
 * Runs a scenario on pi, then on agentchart (one after the other: two agents competing for the
 * CPU only slow each other down), each again while its records show the load signature.
 *
 * @example
 * const { expected, agentchart } = await runOnBothEngines(printPlain);
 * expect(agentchart.stdout).toBe(expected.stdout);
 */
export async function runOnBothEngines(scenario: Scenario): Promise<EngineComparison> {
	const part = scenario.comparedPart ?? ((observation: Observation) => observation);
	const pi = await observeUnloaded(scenario, "pi", part);
	const agentchart = await observeUnloaded(scenario, "agentchart", part);
	const fixed = (scenario.documentedFixes ?? []).reduce((observation, fix) => fix(observation), pi.observation);
	return {
		pi: normalizeObservation(pi.observation),
		expected: normalizeObservation(fixed),
		agentchart: normalizeObservation(agentchart.observation),
		discarded: { pi: pi.discarded, agentchart: agentchart.discarded },
	};
}
