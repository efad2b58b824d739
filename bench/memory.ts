/**
 * Benchmark 3: heap per idle agent. An idle agent is constructed and has completed one short
 * prompt; 1,000 of them are kept alive and the heap is compared before and after (with full
 * collections around, so the figure is retained memory, not garbage).
 */
import { type ContenderName, createBenchAgent, type BenchAgent, runFloor } from "./lib/contenders.js";
import { canCollectGarbage, collectGarbage, interleaved, median } from "./lib/stats.js";
import { benchModel, freshTextStreamFn } from "./lib/streams.js";

/** Options of {@link measureMemory}. */
export interface MemoryOptions {
	/** Live agents per sample (default 1000). */
	agents?: number;
	/** Recorded repetitions per contender (default 3). */
	repetitions?: number;
	/** Unrecorded rounds first (default 1). */
	warmups?: number;
}

/** Median retained heap, per contender. */
export interface MemoryResult {
	agents: number;
	/** Bytes per idle agent. */
	bytesPerAgent: Record<ContenderName, number>;
	/** Bytes for all `agents` live agents. */
	bytesTotal: Record<ContenderName, number>;
	/** False when `gc` was not exposed: the figures then include garbage. */
	exact: boolean;
}

const CONTENDERS: readonly ContenderName[] = ["agentchart", "pi", "floor"];
const REPLY = "Hello! How can I help you today?";

/**
 * Retained heap bytes of `count` idle agents of a contender. The floor keeps only each
 * transcript (user message and reply): the memory any agent has to hold.
 *
 * @example
 * const bytes = await retainedBytes("pi", 10);
 */
export async function retainedBytes(name: ContenderName, count: number): Promise<number> {
	const model = benchModel();
	const streamFn = freshTextStreamFn(model, REPLY, 4);
	const kept: (BenchAgent | unknown[])[] = [];
	collectGarbage();
	const before = process.memoryUsage().heapUsed;
	for (let i = 0; i < count; i++) {
		if (name === "floor") {
			kept.push((await runFloor({ streamFn, model }, "hi")).messages);
		} else {
			const agent = createBenchAgent(name, { streamFn, model });
			await agent.prompt("hi");
			if (agent.messageCount !== 2) throw new Error(`${name}: expected 2 messages, got ${agent.messageCount}`);
			kept.push(agent);
		}
	}
	// Let anything deferred (timers, trailing microtasks) settle before measuring.
	await new Promise((resolve) => setTimeout(resolve, 10));
	collectGarbage();
	const after = process.memoryUsage().heapUsed;
	if (kept.length !== count) throw new Error("unreachable: keeps the agents alive until measured");
	return after - before;
}

/**
 * Measures retained heap per idle agent, the contenders interleaved.
 *
 * @example
 * const { bytesPerAgent } = await measureMemory({ agents: 20, repetitions: 1, warmups: 0 });
 */
export async function measureMemory(options: MemoryOptions = {}): Promise<MemoryResult> {
	const agents = options.agents ?? 1_000;
	const samples = await interleaved(CONTENDERS, options.repetitions ?? 3, options.warmups ?? 1, (name) => retainedBytes(name, agents));
	const bytesPerAgent = {} as Record<ContenderName, number>;
	const bytesTotal = {} as Record<ContenderName, number>;
	for (const name of CONTENDERS) {
		bytesTotal[name] = median(samples.get(name) ?? []);
		bytesPerAgent[name] = bytesTotal[name] / agents;
	}
	return { agents, bytesPerAgent, bytesTotal, exact: canCollectGarbage };
}
