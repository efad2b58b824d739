/**
 * `npm run bench`: agentchart against pi-agent-core 0.73.1 and a raw `for await` floor, side
 * by side in one process. Prints the summary and writes `bench/results.md`.
 *
 * `npm run bench -- --quick` runs small sizes once (a smoke test; nothing is written unless
 * `--write` is given too). Run with `--expose-gc` (the npm script does) for exact memory.
 */
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { measureMemory, type MemoryOptions } from "./memory.js";
import { type BenchResults, formatResults, resultsDocument } from "./report.js";
import { canCollectGarbage } from "./lib/stats.js";
import { measureThroughput, type ThroughputOptions } from "./throughput.js";
import { measureToolLoop, type ToolLoopOptions } from "./tool-loop.js";
import { measureToolOverlap, type ToolOverlapOptions } from "./tool-overlap.js";
import { measureReplyChunker, type ReplyChunkerOptions } from "./reply-chunker.js";
import { measureSoak, type SoakOptions } from "./soak.js";

/** The settings of every benchmark for one mode. */
export interface BenchPlan {
	throughput: ThroughputOptions;
	toolLoop: ToolLoopOptions;
	memory: MemoryOptions;
	overlap: ToolOverlapOptions;
	replyChunker: ReplyChunkerOptions;
	soak: SoakOptions;
}

/** Full run: the sizes of issue 7. */
export const FULL_PLAN: BenchPlan = {
	throughput: { sizes: [1_000, 10_000, 100_000], repetitions: 7, warmups: 1, warmupDeltas: 20_000 },
	toolLoop: { turns: 50, repetitions: 9, warmups: 5 },
	memory: { agents: 1_000, repetitions: 3, warmups: 1 },
	overlap: { streamMs: 300, toolMs: 200, repetitions: 3 },
	replyChunker: { repetitions: 9, warmups: 2 },
	soak: { prompts: 5_000, samples: 10, agents: 10_000 },
};

/** Quick run: small sizes, one repetition, no warm-up (only checks that everything runs). */
export const QUICK_PLAN: BenchPlan = {
	throughput: { sizes: [100, 1_000], repetitions: 1, warmups: 0, warmupDeltas: 0 },
	toolLoop: { turns: 5, repetitions: 1, warmups: 0 },
	memory: { agents: 20, repetitions: 1, warmups: 0 },
	overlap: { streamMs: 30, toolMs: 20, repetitions: 1 },
	replyChunker: { replyChars: 20_000, repetitions: 1, warmups: 0 },
	soak: { prompts: 40, samples: 2, agents: 50 },
};

/**
 * Runs every benchmark of a plan, logging progress.
 *
 * @example
 * const results = await runBenchmarks(QUICK_PLAN, true, () => {});
 */
export async function runBenchmarks(plan: BenchPlan, quick: boolean, log: (line: string) => void = console.log): Promise<BenchResults> {
	log("1/6 throughput ...");
	const throughput = await measureThroughput(plan.throughput);
	log("2/6 tool loop ...");
	const toolLoop = await measureToolLoop(plan.toolLoop);
	log("3/6 memory ...");
	const memory = await measureMemory(plan.memory);
	log("4/6 tool overlap ...");
	const overlap = await measureToolOverlap(plan.overlap);
	log("5/6 reply chunker ...");
	const replyChunker = measureReplyChunker(plan.replyChunker);
	log("6/6 long session ...");
	const soak = measureSoak(plan.soak);
	return { quick, throughput, toolLoop, memory, overlap, replyChunker, soak };
}

async function main(): Promise<void> {
	const args = process.argv.slice(2);
	const quick = args.includes("--quick");
	const write = !quick || args.includes("--write");
	if (!canCollectGarbage) console.warn("gc is not exposed (run with `tsx --expose-gc`): memory figures include garbage.");
	const command = quick ? "npm run bench -- --quick" : "npm run bench";
	const results = await runBenchmarks(quick ? QUICK_PLAN : FULL_PLAN, quick);
	console.log(`\n${formatResults(results, command)}`);
	if (write) {
		const path = fileURLToPath(new URL("./results.md", import.meta.url));
		await writeFile(path, resultsDocument(results, command));
		console.log(`\nWrote ${path}`);
	}
}

// Run only as the entry point, so the smoke test can import the plans and runner.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
	main().catch((error: unknown) => {
		console.error(error);
		process.exitCode = 1;
	});
}
