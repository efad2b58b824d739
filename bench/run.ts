/**
 * `npm run bench`: agentchart (the engine in `src/`, through its public API) against
 * pi-agent-core 0.73.1 and a raw `for await` floor. Prints every table and writes
 * `bench/results.md`.
 *
 * Flags: `--quick` runs small sizes once (a smoke run; nothing is written unless `--write` is
 * given too); `--seed N` repeats a run's order of rounds; `--only throughput,memory,...` runs
 * some sections (nothing is written unless `--write`); `--help` prints them; any other flag
 * is refused. Run with `--expose-gc` (the npm script
 * does): memory figures and the collection before each timed sample need it.
 */
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { measureConcurrency, type ConcurrencyOptions } from "./concurrency.js";
import { measureDurable, type DurableOptions } from "./durable.js";
import { measureInspector, type InspectorOptions } from "./inspector.js";
import { measureMemory, type MemoryOptions } from "./memory.js";
import { type BenchResults, environmentLine, formatResults, resultsDocument } from "./report.js";
import { measureReplyChunker, type ReplyChunkerOptions } from "./reply-chunker.js";
import { measureRestate, RESTATE_FULL, RESTATE_QUICK, type RestateBenchOptions } from "./restate.js";
import { measureSoak, type SoakOptions } from "./soak.js";
import { measureThroughput, type ThroughputOptions } from "./throughput.js";
import { measureToolOverlap, type ToolOverlapOptions } from "./tool-overlap.js";
import { measureTurnOverhead, type TurnOverheadOptions } from "./turn-overhead.js";
import { isEntryPoint } from "./lib/child.js";
import { createRandom, randomSeed } from "./lib/paired.js";
import { canCollectGarbage } from "./lib/stats.js";
import { rerunOnSupportedNode } from "./lib/supported-node.js";

/** The settings of every benchmark for one mode. */
export interface BenchPlan {
	throughput: ThroughputOptions;
	turnOverhead: TurnOverheadOptions;
	memory: MemoryOptions;
	concurrency: ConcurrencyOptions;
	inspector: InspectorOptions;
	overlap: ToolOverlapOptions;
	replyChunker: ReplyChunkerOptions;
	soak: SoakOptions;
	durable: DurableOptions;
	restate: RestateBenchOptions;
}

/** The sections of a run, in the order they run. */
export const SECTIONS = ["throughput", "turnOverhead", "memory", "concurrency", "inspector", "overlap", "replyChunker", "soak", "durable", "restate"] as const;

/** One section of a run. */
export type SectionName = (typeof SECTIONS)[number];

/** Full run: the target sizes 1k, 10k and 100k (3k and 30k only add points to the fitted line). */
export const FULL_PLAN: BenchPlan = {
	throughput: { sizes: [1_000, 3_000, 10_000, 30_000, 100_000], repetitions: 9, warmups: 1, warmupDeltas: 20_000, warmupRuns: 5_000, deltasPerSample: 100_000 },
	turnOverhead: { prompts: 500, repetitions: 41, warmups: 2, warmupPrompts: 10_000 },
	memory: { agents: 1_000, repetitions: 5 },
	concurrency: { agents: 1_000, turns: 5, repetitions: 5, cappedSemiSpaceMiB: 16 },
	inspector: { deltas: 10_000, repetitions: 41, warmups: 10 },
	overlap: { streamMs: 300, toolMs: 200, repetitions: 3 },
	replyChunker: { repetitions: 9, warmups: 2 },
	soak: { prompts: 5_000, samples: 10, agents: 10_000 },
	durable: { prompts: 100, memoryPrompts: 400, repetitions: 31, memoryRepetitions: 61, warmups: 3, soloRepetitions: 6, soloRounds: 25, messages: 1_000, restores: 15 },
	restate: RESTATE_FULL,
};

/** Quick run: small sizes, one round (only checks that everything runs end to end). */
export const QUICK_PLAN: BenchPlan = {
	throughput: { sizes: [100, 300, 1_000], repetitions: 1, warmups: 0, warmupDeltas: 0, warmupRuns: 20, deltasPerSample: 1_000 },
	turnOverhead: { prompts: 5, repetitions: 1, warmups: 0, warmupPrompts: 0 },
	memory: { agents: 200, repetitions: 1, concurrentChildren: true },
	concurrency: { agents: 20, turns: 2, repetitions: 1, concurrentChildren: true, cappedSemiSpaceMiB: 16 },
	inspector: { deltas: 500, repetitions: 1, warmups: 0 },
	overlap: { streamMs: 30, toolMs: 20, repetitions: 1 },
	replyChunker: { replyChars: 20_000, repetitions: 1, warmups: 0, longReply: { deltas: [1_000, 8_000], repetitions: 1 } },
	soak: { prompts: 40, samples: 2, agents: 50 },
	durable: { prompts: 20, memoryPrompts: 20, repetitions: 1, memoryRepetitions: 1, warmups: 0, soloRepetitions: 1, soloRounds: 2, messages: 1_000, restores: 2 },
	restate: RESTATE_QUICK,
};

/** How a run is done. */
export interface RunOptions {
	quick: boolean;
	/** Orders the rounds; printed in the results. */
	seed: number;
	/** Sections to run (default all). */
	only?: readonly SectionName[];
	log?: (line: string) => void;
}

/**
 * Runs the sections of a plan, logging progress.
 *
 * @example
 * const results = await runBenchmarks(QUICK_PLAN, { quick: true, seed: 1, log: () => {} });
 */
export async function runBenchmarks(plan: BenchPlan, options: RunOptions): Promise<BenchResults> {
	const log = options.log ?? console.log;
	const random = createRandom(options.seed);
	const wanted = new Set<SectionName>(options.only ?? SECTIONS);
	const results: BenchResults = { quick: options.quick, seed: options.seed, environment: environmentLine() };
	const steps = SECTIONS.filter((name) => wanted.has(name));
	const started = performance.now();
	const step = (name: SectionName) => log(`${steps.indexOf(name) + 1}/${steps.length} ${name} ... (${((performance.now() - started) / 1000).toFixed(0)} s)`);
	if (wanted.has("throughput")) {
		step("throughput");
		results.throughput = await measureThroughput(plan.throughput, random);
	}
	if (wanted.has("turnOverhead")) {
		step("turnOverhead");
		results.turnOverhead = await measureTurnOverhead(plan.turnOverhead, random);
	}
	if (wanted.has("memory")) {
		step("memory");
		results.memory = await measureMemory(plan.memory, random);
	}
	if (wanted.has("concurrency")) {
		step("concurrency");
		results.concurrency = await measureConcurrency(plan.concurrency, random);
	}
	if (wanted.has("inspector")) {
		step("inspector");
		results.inspector = await measureInspector(plan.inspector, random);
	}
	if (wanted.has("overlap")) {
		step("overlap");
		results.overlap = await measureToolOverlap(plan.overlap, random);
	}
	if (wanted.has("replyChunker")) {
		step("replyChunker");
		results.replyChunker = measureReplyChunker(plan.replyChunker);
	}
	if (wanted.has("soak")) {
		step("soak");
		results.soak = await measureSoak(plan.soak);
	}
	if (wanted.has("durable")) {
		step("durable");
		results.durable = await measureDurable(plan.durable, random);
	}
	if (wanted.has("restate")) {
		step("restate");
		results.restate = await measureRestate(plan.restate);
	}
	log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
	return results;
}

/** What `npm run bench -- --help` prints. */
export const BENCH_USAGE = `Usage: npm run bench [-- options]

  (none)              every section, full sizes; writes bench/results.md
  --quick             small sizes, one round (a smoke run); writes nothing unless --write
  --only a,b,...      some sections: ${SECTIONS.join(", ")}; writes nothing unless --write
  --seed N            repeat a run's order of rounds
  --write             write bench/results.md even with --quick or --only
  --help              this text`;

/** The command line of a bench run, checked. */
export interface BenchArgs {
	help: boolean;
	quick: boolean;
	write: boolean;
	seed?: number;
	only?: SectionName[];
}

/**
 * Parses the bench's flags. An unknown flag or a flag without its value throws with the usage,
 * rather than running a full bench (and rewriting results.md) that was not asked for.
 *
 * @example
 * parseBenchArgs(["--only", "turnOverhead", "--seed", "7"]); // { help: false, quick: false, write: false, seed: 7, only: ["turnOverhead"] }
 */
export function parseBenchArgs(args: readonly string[]): BenchArgs {
	const parsed: BenchArgs = { help: false, quick: false, write: false };
	const valueOf = (index: number, name: string): string => {
		const value = args[index + 1];
		if (value === undefined || value.startsWith("--")) throw new Error(`${name} wants a value\n\n${BENCH_USAGE}`);
		return value;
	};
	for (let i = 0; i < args.length; i++) {
		const arg = args[i] as string;
		if (arg === "--help" || arg === "-h") parsed.help = true;
		else if (arg === "--quick") parsed.quick = true;
		else if (arg === "--write") parsed.write = true;
		else if (arg === "--seed") {
			const text = valueOf(i++, arg);
			const seed = Number(text);
			if (!Number.isInteger(seed)) throw new Error(`--seed wants an integer, got ${JSON.stringify(text)}`);
			parsed.seed = seed;
		} else if (arg === "--only") parsed.only = parseSections(valueOf(i++, arg));
		else throw new Error(`unknown option ${JSON.stringify(arg)}\n\n${BENCH_USAGE}`);
	}
	return parsed;
}

function parseSections(value: string): SectionName[] {
	const names = value.split(",").map((name) => name.trim());
	for (const name of names) {
		if (!(SECTIONS as readonly string[]).includes(name)) throw new Error(`--only: unknown section ${JSON.stringify(name)} (known: ${SECTIONS.join(", ")})`);
	}
	return names as SectionName[];
}

async function main(): Promise<void> {
	const args = process.argv.slice(2);
	const options = parseBenchArgs(args);
	if (options.help) {
		console.log(BENCH_USAGE);
		return;
	}
	const rerun = await rerunOnSupportedNode();
	if (rerun !== undefined) {
		process.exitCode = rerun;
		return;
	}
	const { quick, only } = options;
	const seed = options.seed ?? randomSeed();
	const write = (!quick && only === undefined) || options.write;
	if (!canCollectGarbage) console.warn("gc is not exposed (run with `tsx --expose-gc`): timings include other samples' garbage.");
	const command = args.length === 0 ? "npm run bench" : `npm run bench -- ${args.join(" ")}`;
	console.log(`seed ${seed}`);
	const results = await runBenchmarks(quick ? QUICK_PLAN : FULL_PLAN, { quick, seed, ...(only ? { only } : {}) });
	console.log(`\n${formatResults(results, command)}`);
	if (write) {
		const path = fileURLToPath(new URL("./results.md", import.meta.url));
		await writeFile(path, resultsDocument(results, command));
		console.log(`\nWrote ${path}`);
	}
}

// Run only as the entry point, so the smoke test can import the plans and runner.
if (isEntryPoint(import.meta.url)) {
	main().catch((error: unknown) => {
		console.error(error);
		process.exitCode = 1;
	});
}
