/**
 * Benchmark 2: the loop's own cost per turn. One prompt is one tool turn (a reply with one text
 * delta and three tool calls, each tool answering at once) and then the final one-delta text
 * reply; the streams are built without delay, so what is left is the engine: events, state,
 * tool preparation, validation and dispatch, tool results and the next call.
 *
 * A sample times `prompts` prompts, each on its own agent built before the clock starts (agent
 * construction is not a turn's cost; benchmark 3 weighs it). Variants: agentchart in parallel
 * and in streaming tool mode, pi in parallel (pi 0.73.1 has no streaming mode, so both of ours
 * are compared with pi parallel), the floor, and the chart floor: a synthetic XState machine
 * taking as many steps as our chart takes for the prompt (see lib/chart-floor.ts), the least any
 * chart of that shape costs on this engine. All five are paired round by round, each in a child
 * process of its own that stays up for the whole measurement (lib/child.ts, `startSampler`): no
 * contender shares a heap, a garbage collector or compiled code with another (XState's actor
 * code, run by our chart and by the chart floor's machine alike, would otherwise be compiled for
 * both).
 */
import { type ChartSteps, chartFloorMachine, countChartSteps, walkChartFloor } from "./lib/chart-floor.js";
import { fileURLToPath } from "node:url";
import { type AgentName, type BenchAgent, type BenchAgentFactory, instantTool, loadBenchAgentFactory, runFloor } from "./lib/contenders.js";
import { isEntryPoint, type Sampler, samplerPayload, serveSamples, startSampler } from "./lib/child.js";
import { pairedRatio, type Random, runPaired } from "./lib/paired.js";
import { collectYoungGarbage, scaleSummary, summarize, type Summary } from "./lib/stats.js";
import { benchModel, toolTurnStreamFn } from "./lib/streams.js";
import type { ToolExecutionMode } from "../src/types/agent.js";

/** Options of {@link measureTurnOverhead}. */
export interface TurnOverheadOptions {
	/** Prompts (each on a fresh agent) per sample. */
	prompts: number;
	/** Recorded rounds. */
	repetitions: number;
	/** Unrecorded rounds first. */
	warmups: number;
	/** Prompts each variant's process runs before the rounds start (its code optimized as in a long-running service). */
	warmupPrompts: number;
}

/** Who runs the turn, and how. */
export type TurnVariant = "agentchart parallel" | "agentchart streaming" | "pi parallel" | "floor" | "chart floor";

/** Everything benchmark 2 measured. */
export interface TurnOverheadResult {
	prompts: number;
	callsPerTurn: number;
	/** µs of CPU per prompt (one tool turn + the final reply), per variant. */
	usPerTurn: Record<TurnVariant, Summary>;
	/** Ours / pi parallel, round by round. */
	parallelVsPi: Summary;
	/** Ours in streaming mode / pi parallel, round by round. */
	streamingVsPi: Summary;
	/** Ours parallel / the floor, round by round. */
	parallelVsFloor: Summary;
	/** The chart's steps for one prompt, per tool mode (counted on one inspected run). */
	chartSteps: { parallel: ChartSteps; streaming: ChartSteps };
	/** The chart floor (parallel mode's steps) / pi parallel, round by round. */
	chartFloorVsPi: Summary;
	/** Ours parallel / the chart floor, round by round. */
	parallelVsChartFloor: Summary;
}

const VARIANTS: readonly TurnVariant[] = ["agentchart parallel", "agentchart streaming", "pi parallel", "floor", "chart floor"];
const CALLS_PER_TURN = 3;
const TOOL = instantTool("noop");

const agentOf: Record<Exclude<TurnVariant, "floor" | "chart floor">, { agent: AgentName; mode: ToolExecutionMode }> = {
	"agentchart parallel": { agent: "agentchart", mode: "parallel" },
	"agentchart streaming": { agent: "agentchart", mode: "streaming" },
	"pi parallel": { agent: "pi", mode: "parallel" },
};

/** user + tool-call reply + the tool results + final reply. */
const EXPECTED_MESSAGES = 1 + 1 + CALLS_PER_TURN + 1;

/** Milliseconds of CPU time (user + system) in a `process.cpuUsage()` difference. */
function cpuMs(used: NodeJS.CpuUsage): number {
	return (used.user + used.system) / 1000;
}

/**
 * Times `prompts` one-turn prompts of a variant, each on an agent built beforehand by `factory`
 * (the variant's library), and returns milliseconds of CPU time (user + system: the process's
 * own work, which a neighbour on a shared machine does not stretch as it stretches wall time).
 * Throws if a transcript is not what the script produces.
 *
 * @example
 * const ms = await timeTurns("pi parallel", await loadBenchAgentFactory("pi"), 10);
 */
export async function timeTurns(variant: TurnVariant, factory: BenchAgentFactory | undefined, prompts: number, chartFloor?: ReturnType<typeof chartFloorMachine>): Promise<number> {
	const model = benchModel();
	const streamFn = toolTurnStreamFn(model, { turns: 1, callsPerTurn: CALLS_PER_TURN, toolName: TOOL.name });
	const options = { streamFn, model, tools: [TOOL] };
	if (variant === "chart floor") {
		if (!chartFloor) throw new Error("chart floor: no synthetic chart given");
		collectYoungGarbage();
		const start = process.cpuUsage();
		walkChartFloor(chartFloor, prompts);
		return cpuMs(process.cpuUsage(start));
	}
	if (variant === "floor") {
		collectYoungGarbage();
		const start = process.cpuUsage();
		for (let i = 0; i < prompts; i++) {
			const { messages } = await runFloor(options, "go");
			if (messages.length !== EXPECTED_MESSAGES) throw new Error(`floor: ${messages.length} messages, expected ${EXPECTED_MESSAGES}`);
		}
		return cpuMs(process.cpuUsage(start));
	}
	const { mode } = agentOf[variant];
	if (!factory) throw new Error(`${variant}: no agent factory given`);
	const agents: BenchAgent[] = [];
	for (let i = 0; i < prompts; i++) agents.push(factory({ ...options, toolExecution: mode }));
	collectYoungGarbage();
	const start = process.cpuUsage();
	for (const each of agents) await each.prompt("go");
	const ms = cpuMs(process.cpuUsage(start));
	for (const each of agents) {
		if (each.messageCount !== EXPECTED_MESSAGES) throw new Error(`${variant}: ${each.messageCount} messages, expected ${EXPECTED_MESSAGES}`);
	}
	return ms;
}

/**
 * Measures µs per turn for every variant, paired round by round.
 *
 * @example
 * const result = await measureTurnOverhead({ prompts: 10, repetitions: 1, warmups: 0, warmupPrompts: 0 }, createRandom(1));
 * result.parallelVsPi.median;
 */
export async function measureTurnOverhead(options: TurnOverheadOptions, random: Random): Promise<TurnOverheadResult> {
	const model = benchModel();
	const countSteps = (toolExecution: ToolExecutionMode) =>
		countChartSteps({ model, streamFn: toolTurnStreamFn(model, { turns: 1, callsPerTurn: CALLS_PER_TURN, toolName: TOOL.name }), tools: [TOOL], toolExecution });
	const chartSteps = { parallel: await countSteps("parallel"), streaming: await countSteps("streaming") };
	const samplers = new Map<TurnVariant, Sampler<number>>();
	let samples: Record<TurnVariant, number[]>;
	try {
		for (const variant of VARIANTS) samplers.set(variant, await startSampler<number>(SCRIPT, { variant, prompts: options.prompts, warmupPrompts: options.warmupPrompts, chartSteps: chartSteps.parallel } satisfies TurnSamplerPayload));
		samples = await runPaired(VARIANTS, { repetitions: options.repetitions, warmups: options.warmups, random }, (variant) => (samplers.get(variant) as Sampler<number>).sample());
	} finally {
		await Promise.all([...samplers.values()].map((sampler) => sampler.stop()));
	}
	const perTurn = (variant: TurnVariant) => scaleSummary(summarize(samples[variant]), 1000 / options.prompts);
	return {
		prompts: options.prompts,
		callsPerTurn: CALLS_PER_TURN,
		usPerTurn: {
			"agentchart parallel": perTurn("agentchart parallel"),
			"agentchart streaming": perTurn("agentchart streaming"),
			"pi parallel": perTurn("pi parallel"),
			floor: perTurn("floor"),
			"chart floor": perTurn("chart floor"),
		},
		parallelVsPi: pairedRatio(samples["agentchart parallel"], samples["pi parallel"]),
		streamingVsPi: pairedRatio(samples["agentchart streaming"], samples["pi parallel"]),
		parallelVsFloor: pairedRatio(samples["agentchart parallel"], samples.floor),
		chartSteps,
		chartFloorVsPi: pairedRatio(samples["chart floor"], samples["pi parallel"]),
		parallelVsChartFloor: pairedRatio(samples["agentchart parallel"], samples["chart floor"]),
	};
}

const SCRIPT = fileURLToPath(import.meta.url);

/** What a variant's child process is told: which variant, how many prompts a sample, the chart's steps (for the chart floor). */
interface TurnSamplerPayload {
	variant: TurnVariant;
	prompts: number;
	/** Prompts the child runs before it is ready (untimed). */
	warmupPrompts: number;
	chartSteps: ChartSteps;
}

if (isEntryPoint(import.meta.url)) {
	const payload = samplerPayload<TurnSamplerPayload>();
	if (payload) {
		const { variant, prompts, warmupPrompts, chartSteps } = payload;
		await serveSamples(
			async () => {
				// Only this variant's library is loaded in its process.
				const factory = variant in agentOf ? await loadBenchAgentFactory(agentOf[variant as keyof typeof agentOf].agent) : undefined;
				const chartFloor = variant === "chart floor" ? chartFloorMachine(chartSteps) : undefined;
				// Code a prompt runs once takes thousands of prompts to be optimized (see benchmark 1).
				for (let done = 0; done < warmupPrompts; done += prompts) await timeTurns(variant, factory, prompts, chartFloor);
				return { factory, chartFloor };
			},
			({ factory, chartFloor }) => timeTurns(variant, factory, prompts, chartFloor),
		);
	}
}
