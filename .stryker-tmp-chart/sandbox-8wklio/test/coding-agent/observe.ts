/**
 * What a scenario is, and running one: on one engine (`observeRaw`), or on both for a
 * comparison (`runOnBothEngines`).
 */
// @ts-nocheck

import type { ScriptedResponse } from "../providers/anthropic-server.js";
import type { Engine } from "./engine.js";
import { type CliExit, type JsonObject, parseJsonLines, readSessions, type RunContext, withRun, type WorkspaceOptions } from "./harness.js";
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
}

/**
 * Runs a scenario on pi, then on agentchart (one after the other: two agents competing for the
 * CPU only slow each other down).
 *
 * @example
 * const { expected, agentchart } = await runOnBothEngines(printPlain);
 * expect(agentchart.stdout).toBe(expected.stdout);
 */
export async function runOnBothEngines(scenario: Scenario): Promise<EngineComparison> {
	const pi = await observeRaw(scenario, "pi");
	const agentchart = await observeRaw(scenario, "agentchart");
	const part = scenario.comparedPart ?? ((observation: Observation) => observation);
	const fixed = (scenario.documentedFixes ?? []).reduce((observation, fix) => fix(observation), part(pi));
	return {
		pi: normalizeObservation(part(pi)),
		expected: normalizeObservation(fixed),
		agentchart: normalizeObservation(part(agentchart)),
	};
}
