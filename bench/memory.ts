/**
 * Benchmark 3: retained heap per agent, two figures.
 *
 * - idle: constructed with a system prompt and two tools, never prompted;
 * - after one run: the same, then one short prompt (a four-delta text reply) each.
 *
 * Every sample is a child process of its own that loads one library only, warms it up (so
 * compiled code, caches and lazily built module state are not counted), collects garbage fully,
 * builds `agents` live agents, lets deferred work settle, collects again, and reports the heap
 * growth per agent. The parent pairs an agentchart child with a pi child per round, in balanced
 * shuffled order. `npx tsx bench/memory.ts` runs it alone.
 */
import { fileURLToPath } from "node:url";
import { type AgentName, type BenchAgent, instantTool, loadBenchAgentFactory } from "./lib/contenders.js";
import { childPayload, isEntryPoint, reportFromChild, runChild } from "./lib/child.js";
import { createRandom, pairedRatio, type Random, randomSeed, runPaired } from "./lib/paired.js";
import { canCollectGarbage, collectGarbage, sleep, summarize, type Summary } from "./lib/stats.js";
import { benchModel, freshTextStreamFn } from "./lib/streams.js";

/** Options of {@link measureMemory}. */
export interface MemoryOptions {
	/** Live agents per sample. */
	agents: number;
	/** Recorded rounds (child processes per figure and library). */
	repetitions: number;
	/** Start all children at once (smoke runs only: the figures then disturb each other). */
	concurrentChildren?: boolean;
}

/** Which memory figure. */
export type MemoryFigure = "idle" | "afterRun";

/** One figure: bytes per agent per library, and the paired ratio. */
export interface MemoryFigureResult {
	bytesPerAgent: Record<AgentName, Summary>;
	/** agentchart / pi, round by round. */
	ratio: Summary;
}

/** Everything benchmark 3 measured. */
export interface MemoryResult {
	agents: number;
	repetitions: number;
	idle: MemoryFigureResult;
	afterRun: MemoryFigureResult;
	/** False when a child could not collect garbage: the figures then include garbage. */
	exact: boolean;
}

interface MemoryChildPayload {
	figure: MemoryFigure;
	agent: AgentName;
	agents: number;
}

interface MemoryChildResult {
	bytesPerAgent: number;
	exact: boolean;
}

const SCRIPT = fileURLToPath(import.meta.url);
const SYSTEM_PROMPT = "You are a helpful assistant. Answer briefly and use the tools when they help.";
const REPLY = "Hello! How can I help you today?";
// Shared by every agent, as an application shares its tool definitions.
const TOOLS = [instantTool("search"), instantTool("fetch")];

async function retainedBytesPerAgent(payload: MemoryChildPayload): Promise<MemoryChildResult> {
	const create = await loadBenchAgentFactory(payload.agent);
	const model = benchModel();
	const streamFn = freshTextStreamFn(model, REPLY, 4);
	const build = async (): Promise<BenchAgent> => {
		const agent = create({ streamFn, model, systemPrompt: SYSTEM_PROMPT, tools: [...TOOLS] });
		if (payload.figure === "afterRun") {
			await agent.prompt("hi");
			if (agent.messageCount !== 2) throw new Error(`${payload.agent}: expected 2 messages after one run, got ${agent.messageCount}`);
		}
		return agent;
	};
	// Warm-up: whatever the first agents build once for all (compiled validators, module caches).
	for (let i = 0; i < 100; i++) await build();
	await sleep(10);
	collectGarbage();
	const before = process.memoryUsage().heapUsed;
	const kept: BenchAgent[] = [];
	for (let i = 0; i < payload.agents; i++) kept.push(await build());
	// Let anything deferred (timers, trailing microtasks) settle before measuring.
	await sleep(10);
	collectGarbage();
	const after = process.memoryUsage().heapUsed;
	if (kept.length !== payload.agents) throw new Error("unreachable: keeps the agents alive until measured");
	return { bytesPerAgent: (after - before) / payload.agents, exact: canCollectGarbage };
}

/**
 * Measures both memory figures, each library in its own child per sample, paired round by round.
 *
 * @example
 * const result = await measureMemory({ agents: 50, repetitions: 1 }, createRandom(1));
 * result.idle.ratio.median;
 */
export async function measureMemory(options: MemoryOptions, random: Random): Promise<MemoryResult> {
	let exact = true;
	const figure = async (name: MemoryFigure): Promise<MemoryFigureResult> => {
		const samples = await runPaired<AgentName>(["agentchart", "pi"], { repetitions: options.repetitions, warmups: 0, random, concurrent: options.concurrentChildren === true }, async (agent) => {
			const result = await runChild<MemoryChildResult>(SCRIPT, { figure: name, agent, agents: options.agents } satisfies MemoryChildPayload);
			exact &&= result.exact;
			return result.bytesPerAgent;
		});
		return {
			bytesPerAgent: { agentchart: summarize(samples.agentchart), pi: summarize(samples.pi) },
			ratio: pairedRatio(samples.agentchart, samples.pi),
		};
	};
	const [idle, afterRun] = options.concurrentChildren
		? await Promise.all([figure("idle"), figure("afterRun")])
		: [await figure("idle"), await figure("afterRun")];
	return { agents: options.agents, repetitions: options.repetitions, idle, afterRun, exact };
}

if (isEntryPoint(import.meta.url)) {
	const payload = childPayload<MemoryChildPayload>();
	if (payload) {
		reportFromChild(retainedBytesPerAgent(payload));
	} else {
		const seed = randomSeed();
		measureMemory({ agents: 1_000, repetitions: 3 }, createRandom(seed)).then(
			(result) => console.log(JSON.stringify({ seed, ...result }, null, 2)),
			(error: unknown) => {
				console.error(error);
				process.exitCode = 1;
			},
		);
	}
}
