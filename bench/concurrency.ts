/**
 * Benchmark 4: many agents at once, as a gateway runs them. `agents` agents (system prompt, two
 * tools) are built and prompted together and awaited with `Promise.all`; each prompt is
 * `turns` tool turns (one text delta and one tool call each) and a final text reply. The tool
 * yields to the event loop once (`setImmediate`) before it answers, as a tool doing I/O would,
 * so every agent is mid-run at the same time.
 *
 * Before the measured agents, the child runs `warmupRounds` rounds of `warmupAgents` agents (a
 * tenth of the measured number), one round after the other: enough runs for V8 to compile the
 * hot paths (one round of a hundred left most of them, ours and pi's, to be compiled during the
 * measured burst), never so many at once that the heap grows to the peak before it is measured.
 * The burst after a single warm-up round is measured too, in children of its own, and reported
 * without a target: what the first burst of a freshly started process costs. So are, when asked
 * (`cappedSemiSpaceMiB`), the same rounds with V8's young generation capped, to tell the agents'
 * memory from the young generation V8 chose to grow (docs/performance.md, "Many agents at once").
 *
 * Each sample is a child process that loads one library only; it reports the wall time (from
 * building the first agent to the last prompt settling) and the peak resident set size: the
 * kernel's high-water mark (`VmHWM`, reset through `/proc/self/clear_refs` after the warm-up),
 * or where that is missing the largest of `process.memoryUsage.rss()` sampled every 5 ms. The
 * peak is reported whole (what an operator sees) and above the child's baseline (the loaded,
 * warmed-up process just before the agents are built: what the agents themselves add).
 * `npx tsx bench/concurrency.ts` runs it alone.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { getHeapSpaceStatistics } from "node:v8";
import { fileURLToPath } from "node:url";
import { type AgentName, type BenchAgent, type BenchAgentFactory, instantTool, loadBenchAgentFactory } from "./lib/contenders.js";
import { childPayload, isEntryPoint, reportFromChild, runChild } from "./lib/child.js";
import { createRandom, pairedRatio, type Random, randomSeed, runPaired } from "./lib/paired.js";
import { collectGarbage, nextTurnOfTheLoop, sleep, summarize, type Summary } from "./lib/stats.js";
import { benchModel, toolTurnStreamFn } from "./lib/streams.js";

/** Options of {@link measureConcurrency}. */
export interface ConcurrencyOptions {
	/** Agents started together. */
	agents: number;
	/** Tool turns per agent (then a final reply). */
	turns: number;
	/** Recorded rounds (one child per library each). */
	repetitions: number;
	/** Start all children at once (smoke runs only: the figures then disturb each other). */
	concurrentChildren?: boolean;
	/** Agents run (and awaited) in each warm-up round, to compile the hot paths (default: a tenth of `agents`). */
	warmupAgents?: number;
	/** Warm-up rounds, one after the other (default 10). */
	warmupRounds?: number;
	/** Also measure the burst after a single warm-up round (default true). */
	firstBurst?: boolean;
	/** Also measure both libraries with V8's semi-spaces capped at this many MiB (`--max-semi-space-size`), no target (default: not measured). */
	cappedSemiSpaceMiB?: number;
}

/** Everything benchmark 4 measured. */
export interface ConcurrencyResult {
	agents: number;
	turns: number;
	repetitions: number;
	wallMs: Record<AgentName, Summary>;
	peakRssBytes: Record<AgentName, Summary>;
	/** Peak RSS above the child's baseline just before the agents were built. */
	rssGrowthBytes: Record<AgentName, Summary>;
	/** Largest heap in use above the baseline, sampled every 5 ms (where the RSS goes). */
	heapGrowthBytes: Record<AgentName, Summary>;
	/** The young generation's size at the end of the burst, as V8 grew it. */
	youngGenerationBytes: Record<AgentName, Summary>;
	/** The burst after a single warm-up round (no target): a freshly started process, still compiling. */
	afterOneWarmupRound?: { wallMs: Record<AgentName, Summary>; wallRatio: Summary };
	/** The same rounds with V8's semi-spaces capped (no target; see {@link ConcurrencyOptions.cappedSemiSpaceMiB}). */
	cappedYoungGeneration?: {
		semiSpaceMiB: number;
		wallMs: Record<AgentName, Summary>;
		peakRssBytes: Record<AgentName, Summary>;
		wallRatio: Summary;
		peakRssRatio: Summary;
	};
	/** Warm-up rounds before the measured burst. */
	warmupRounds: number;
	/** Agents per warm-up round. */
	warmupAgents: number;
	/** agentchart / pi, round by round. */
	wallRatio: Summary;
	peakRssRatio: Summary;
	rssGrowthRatio: Summary;
	/** How the peak was read: "VmHWM" (exact) or "sampled". */
	peakMethod: string;
}

interface ConcurrencyChildPayload {
	agent: AgentName;
	agents: number;
	turns: number;
	warmupAgents: number;
	warmupRounds: number;
}

interface ConcurrencyChildResult {
	wallMs: number;
	peakRssBytes: number;
	baselineRssBytes: number;
	peakHeapUsedBytes: number;
	baselineHeapUsedBytes: number;
	/** The size V8 gave the young generation (its `new_space`) by the end of the burst. */
	youngGenerationBytes: number;
	peakMethod: "VmHWM" | "sampled";
}

const SCRIPT = fileURLToPath(import.meta.url);
const SYSTEM_PROMPT = "You are a helpful assistant. Answer briefly and use the tools when they help.";
const TOOLS = [instantTool("search", nextTurnOfTheLoop), instantTool("fetch", nextTurnOfTheLoop)];

/** The kernel's peak RSS of this process in bytes, or undefined where /proc is missing. */
function highWaterMark(): number | undefined {
	try {
		const match = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync("/proc/self/status", "utf8"));
		return match?.[1] === undefined ? undefined : Number(match[1]) * 1024;
	} catch {
		return undefined;
	}
}

/** Resets the kernel's peak RSS to the current RSS (Linux: "5" to clear_refs); false if unsupported. */
function resetHighWaterMark(): boolean {
	try {
		writeFileSync("/proc/self/clear_refs", "5");
		return highWaterMark() !== undefined;
	} catch {
		return false;
	}
}

/**
 * One burst of the section: `count` agents (its system prompt and two tools) built and prompted
 * together, each prompt `turns` one-call tool turns and a final reply, checked to have all its
 * messages once every prompt settled.
 *
 * @example
 * await runBurst(await loadBenchAgentFactory("pi"), "pi", 5, 1_000);
 */
export async function runBurst(create: BenchAgentFactory, name: AgentName, turns: number, count: number): Promise<void> {
	const model = benchModel();
	const streamFn = toolTurnStreamFn(model, { turns, callsPerTurn: 1, toolName: "search" });
	const agents: BenchAgent[] = [];
	for (let i = 0; i < count; i++) agents.push(create({ streamFn, model, systemPrompt: SYSTEM_PROMPT, tools: [...TOOLS] }));
	await Promise.all(agents.map((agent) => agent.prompt("go")));
	const expected = 1 + 2 * turns + 1;
	for (const agent of agents) {
		if (agent.messageCount !== expected) throw new Error(`${name}: ${agent.messageCount} messages, expected ${expected}`);
	}
}

async function runInChild(payload: ConcurrencyChildPayload): Promise<ConcurrencyChildResult> {
	const create = await loadBenchAgentFactory(payload.agent);
	// Warm-up (rounds of a tenth of the size by default): compiles the hot paths without growing the heap to the peak.
	for (let round = 0; round < payload.warmupRounds; round++) await runBurst(create, payload.agent, payload.turns, payload.warmupAgents);
	await sleep(10);
	collectGarbage();
	const exact = resetHighWaterMark();
	const baselineRssBytes = process.memoryUsage.rss();
	const baselineHeapUsedBytes = process.memoryUsage().heapUsed;
	let sampledPeak = baselineRssBytes;
	let peakHeapUsedBytes = baselineHeapUsedBytes;
	const sample = () => {
		const usage = process.memoryUsage();
		sampledPeak = Math.max(sampledPeak, usage.rss);
		peakHeapUsedBytes = Math.max(peakHeapUsedBytes, usage.heapUsed);
	};
	const sampler = setInterval(sample, 5);
	const start = performance.now();
	await runBurst(create, payload.agent, payload.turns, payload.agents);
	const wallMs = performance.now() - start;
	clearInterval(sampler);
	sample();
	const hwm = exact ? highWaterMark() : undefined;
	return {
		wallMs,
		peakRssBytes: hwm ?? sampledPeak,
		baselineRssBytes,
		peakHeapUsedBytes,
		baselineHeapUsedBytes,
		youngGenerationBytes: getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.space_size ?? Number.NaN,
		peakMethod: hwm === undefined ? "sampled" : "VmHWM",
	};
}

/**
 * Runs the many-agents benchmark, each library in its own child per sample, paired round by round.
 *
 * @example
 * const result = await measureConcurrency({ agents: 50, turns: 5, repetitions: 1 }, createRandom(1));
 * result.wallRatio.median;
 */
export async function measureConcurrency(options: ConcurrencyOptions, random: Random): Promise<ConcurrencyResult> {
	const warmupAgents = options.warmupAgents ?? Math.max(1, Math.floor(options.agents / 10));
	const warmupRounds = options.warmupRounds ?? 10;
	const measure = async (rounds: number, nodeFlags: readonly string[] = []): Promise<Record<AgentName, ConcurrencyChildResult[]>> => {
		const results: Record<AgentName, ConcurrencyChildResult[]> = { agentchart: [], pi: [] };
		await runPaired<AgentName>(["agentchart", "pi"], { repetitions: options.repetitions, warmups: 0, random, concurrent: options.concurrentChildren === true }, async (agent) => {
			const payload: ConcurrencyChildPayload = { agent, agents: options.agents, turns: options.turns, warmupAgents, warmupRounds: rounds };
			const result = await runChild<ConcurrencyChildResult>(SCRIPT, payload, nodeFlags);
			results[agent].push(result);
			return result.wallMs;
		});
		return results;
	};
	const results = await measure(warmupRounds);
	const first = options.firstBurst === false || warmupRounds === 1 ? undefined : await measure(1);
	const semiSpace = options.cappedSemiSpaceMiB;
	const capped = semiSpace === undefined ? undefined : await measure(warmupRounds, [`--max-semi-space-size=${semiSpace}`]);
	type Figure = (result: ConcurrencyChildResult) => number;
	const perLibrary = (of: Record<AgentName, ConcurrencyChildResult[]>, figure: Figure): Record<AgentName, Summary> => ({ agentchart: summarize(of.agentchart.map(figure)), pi: summarize(of.pi.map(figure)) });
	const oursOverPi = (of: Record<AgentName, ConcurrencyChildResult[]>, figure: Figure): Summary => pairedRatio(of.agentchart.map(figure), of.pi.map(figure));
	const wall: Figure = (result) => result.wallMs;
	const peak: Figure = (result) => result.peakRssBytes;
	const growth: Figure = (result) => result.peakRssBytes - result.baselineRssBytes;
	const heapGrowth: Figure = (result) => result.peakHeapUsedBytes - result.baselineHeapUsedBytes;
	const methods = new Set([...results.agentchart, ...results.pi].map((result) => result.peakMethod));
	return {
		agents: options.agents,
		turns: options.turns,
		repetitions: options.repetitions,
		warmupRounds,
		warmupAgents,
		...(first ? { afterOneWarmupRound: { wallMs: perLibrary(first, wall), wallRatio: oursOverPi(first, wall) } } : {}),
		...(capped && semiSpace !== undefined
			? {
					cappedYoungGeneration: {
						semiSpaceMiB: semiSpace,
						wallMs: perLibrary(capped, wall),
						peakRssBytes: perLibrary(capped, peak),
						wallRatio: oursOverPi(capped, wall),
						peakRssRatio: oursOverPi(capped, peak),
					},
				}
			: {}),
		wallMs: perLibrary(results, wall),
		peakRssBytes: perLibrary(results, peak),
		rssGrowthBytes: perLibrary(results, growth),
		heapGrowthBytes: perLibrary(results, heapGrowth),
		youngGenerationBytes: perLibrary(results, (result) => result.youngGenerationBytes),
		wallRatio: oursOverPi(results, wall),
		peakRssRatio: oursOverPi(results, peak),
		rssGrowthRatio: oursOverPi(results, growth),
		peakMethod: [...methods].join(", "),
	};
}

if (isEntryPoint(import.meta.url)) {
	const payload = childPayload<ConcurrencyChildPayload>();
	if (payload) {
		reportFromChild(runInChild(payload));
	} else {
		const seed = randomSeed();
		// `npx tsx bench/concurrency.ts [warm-up agents per round] [warm-up rounds] [capped semi-space MiB]`: by default 10 rounds of a tenth of the agents, no capped variant.
		const count = (index: number): number | undefined => {
			const text = process.argv[index];
			if (text === undefined) return undefined;
			const value = Number(text);
			if (!Number.isInteger(value) || value < 1) throw new Error(`bench/concurrency.ts: argument ${index - 1} must be a whole number of at least 1, not '${text}'`);
			return value;
		};
		const warmup = count(2);
		const rounds = count(3);
		const semiSpace = count(4);
		const options: ConcurrencyOptions = { agents: 1_000, turns: 5, repetitions: 3 };
		if (warmup !== undefined) options.warmupAgents = warmup;
		if (rounds !== undefined) options.warmupRounds = rounds;
		if (semiSpace !== undefined) options.cappedSemiSpaceMiB = semiSpace;
		measureConcurrency(options, createRandom(seed)).then(
			(result) => console.log(JSON.stringify({ seed, ...result }, null, 2)),
			(error: unknown) => {
				console.error(error);
				process.exitCode = 1;
			},
		);
	}
}
