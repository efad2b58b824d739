/**
 * `npm run bench:restate`: what agent sessions on Restate cost, on a local restate-server with
 * two workers (Node 22) behind the balancer the tests use.
 *
 * The workers run on this process's Node when it is 22 or newer (the Restate SDK's need), else on
 * test/runtimes' Node 22; the table says which.
 *
 * 1. Per 3-tool turn: one `prompt` whose reply calls three tools, then answers (two model steps,
 *    three tool calls with their intents), end to end through Restate's ingress, against the
 *    floor: a bare Restate handler (`BenchFloor`, in the same worker) making the same `ctx.run`
 *    steps with the same scripted model and tool and no agent. The difference is what the
 *    integration adds: the agent, the turn checkpoints, the inbox read, the stored snapshot.
 *    Samples alternate session and floor, so both see the same machine.
 * 2. Sessions per second across the two workers: many sessions, each one such prompt, a fixed
 *    number in flight.
 *
 * Figures are medians with min–max. Part of `npm run bench` (section `restate`; `npm run bench --
 * --only restate` runs it alone); `npm run bench:restate [-- --quick]` prints its tables only.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createSessionClient } from "../src/restate/client.js";
import type { RunResult } from "../src/restate/session-types.js";
import { startCluster, workerNodeVersion } from "../scripts/restate/cluster.js";
import { isEntryPoint } from "./lib/child.js";
import { type Summary, summarize } from "./lib/stats.js";

/** Sizes of a Restate bench run. */
export interface RestateBenchOptions {
	/** Timed 3-tool turns (and as many floor turns). */
	turns: number;
	warmups: number;
	/** Sessions per throughput sample, and how many are in flight at once. */
	sessions: number;
	concurrency: number;
	/** Throughput samples. */
	repetitions: number;
}

/** What {@link measureRestate} measured. */
export interface RestateBenchResult {
	/** End-to-end ms of one 3-tool turn as an agent session. */
	session: Summary;
	/** End-to-end ms of the same steps in a bare handler. */
	floor: Summary;
	/** Session minus floor, per pair of samples taken side by side (ms). */
	added: Summary;
	/** Sessions (each one 3-tool turn) completed per second across two workers. */
	sessionsPerSecond: Summary;
	/** The floor's turns per second, with as many in flight. */
	floorPerSecond: Summary;
	/** The Node version the workers ran on (`v24.11.0`): this process's when it is 22+, else test/runtimes' Node 22. */
	workerNode: string;
	options: RestateBenchOptions;
}

/** Full run. */
export const RESTATE_FULL: RestateBenchOptions = { turns: 60, warmups: 10, sessions: 200, concurrency: 32, repetitions: 5 };
/** Quick run (a smoke run: only shows that everything runs). */
export const RESTATE_QUICK: RestateBenchOptions = { turns: 3, warmups: 1, sessions: 8, concurrency: 4, repetitions: 1 };

/** The version of restate-server the bench runs (the npm package's). */
function restateServerVersion(): string {
	try {
		const require = createRequire(import.meta.url);
		return (JSON.parse(readFileSync(require.resolve("@restatedev/restate-server/package.json"), "utf8")) as { version: string }).version;
	} catch {
		return "(unknown version)";
	}
}

/**
 * Runs the Restate bench (starts and stops its own cluster).
 *
 * @example
 * const result = await measureRestate(RESTATE_QUICK);
 * console.log(formatRestate(result));
 */
export async function measureRestate(options: RestateBenchOptions): Promise<RestateBenchResult> {
	const cluster = await startCluster({ workers: 2, env: { STREAM_DELAY_MS: "0" } });
	try {
		const client = createSessionClient({ ingressUrl: cluster.ingressUrl });
		const floorTurn = async (key: string) => {
			const response = await fetch(`${cluster.ingressUrl}/BenchFloor/${key}/turn`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify("three-tools:0") });
			if (!response.ok) throw new Error(`floor turn failed: ${response.status} ${await response.text()}`);
			await response.text();
		};
		const sessionTurn = async (key: string) => {
			const result: RunResult = await client.session(key).prompt("three-tools:0");
			if (result.status !== "idle" || result.newMessages.length !== 6) throw new Error(`unexpected session turn: ${JSON.stringify(result).slice(0, 300)}`);
		};
		const run = `${Date.now()}`;
		for (let index = 0; index < options.warmups; index++) {
			await sessionTurn(`warm-${run}-${index}`);
			await floorTurn(`warm-${run}-${index}`);
		}
		const session: number[] = [];
		const floor: number[] = [];
		const added: number[] = [];
		for (let index = 0; index < options.turns; index++) {
			// A new session each time: every turn restores the same small snapshot.
			let start = performance.now();
			await sessionTurn(`turn-${run}-${index}`);
			const sessionMs = performance.now() - start;
			start = performance.now();
			await floorTurn(`turn-${run}-${index}`);
			const floorMs = performance.now() - start;
			session.push(sessionMs);
			floor.push(floorMs);
			added.push(sessionMs - floorMs);
		}
		const perSecond: number[] = [];
		const floorPerSecond: number[] = [];
		const throughput = async (turn: (key: string) => Promise<void>, label: string) => {
			let next = 0;
			const start = performance.now();
			const lane = async () => {
				while (next < options.sessions) await turn(`${label}-${next++}`);
			};
			await Promise.all(Array.from({ length: options.concurrency }, lane));
			return options.sessions / ((performance.now() - start) / 1000);
		};
		for (let repetition = 0; repetition < options.repetitions; repetition++) {
			perSecond.push(await throughput(sessionTurn, `many-${run}-${repetition}`));
			floorPerSecond.push(await throughput(floorTurn, `floor-${run}-${repetition}`));
		}
		return { session: summarize(session), floor: summarize(floor), added: summarize(added), sessionsPerSecond: summarize(perSecond), floorPerSecond: summarize(floorPerSecond), workerNode: await workerNodeVersion(), options };
	} finally {
		await cluster.stop();
	}
}

const figure = (summary: Summary, digits = 1) => `${summary.median.toFixed(digits)} (${summary.min.toFixed(digits)}–${summary.max.toFixed(digits)})`;

/**
 * The result as a Markdown table.
 *
 * @example
 * console.log(formatRestate(await measureRestate(RESTATE_QUICK)));
 */
export function formatRestate(result: RestateBenchResult): string {
	const { options } = result;
	return [
		"| Restate: one 3-tool turn, end to end through the ingress | ms, median (min–max) |",
		"| --- | --- |",
		`| agent session (\`prompt\`: 2 model steps, 3 tool calls) | ${figure(result.session)} |`,
		`| floor: bare handler, same \`ctx.run\` steps, no agent | ${figure(result.floor)} |`,
		`| added by the agent integration (paired difference) | ${figure(result.added)} |`,
		"",
		`| Restate: per second across two workers (${options.sessions} each, ${options.concurrency} in flight) | median (min–max) |`,
		"| --- | --- |",
		`| agent sessions, each one 3-tool turn | ${figure(result.sessionsPerSecond)} |`,
		`| floor turns (same steps, no agent) | ${figure(result.floorPerSecond)} |`,
		"",
		`${options.turns} paired turns after ${options.warmups} warm-up${options.warmups === 1 ? "" : "s"}; ${options.repetitions} throughput sample${options.repetitions === 1 ? "" : "s"}. restate-server ${restateServerVersion()} on 127.0.0.1, workers on Node ${result.workerNode.replace(/^v/, "")}, scripted model (no network).`,
	].join("\n");
}

if (isEntryPoint(import.meta.url)) {
	const quick = process.argv.includes("--quick");
	const result = await measureRestate(quick ? RESTATE_QUICK : RESTATE_FULL);
	console.log(formatRestate(result));
	process.exit(0);
}
