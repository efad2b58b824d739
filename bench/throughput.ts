/**
 * Benchmark 1: text deltas from the stream function to one no-op listener, for messages of
 * growing size, agentchart against pi and the raw `for await` floor.
 *
 * Each size is measured in a child process of its own, where the contenders take turns in a
 * balanced shuffled order round after round (a sample of a small size is many messages, timed
 * together: see `deltasPerSample`): the ratios are taken round by round, and a
 * straight line (time against deltas, least squares weighted by relative error) is fitted per
 * round and contender across the sizes. Its slope is the marginal cost of one delta, its
 * intercept the fixed cost of a run (agent construction, prompt, turn and message events).
 * Per-delta work that grows with the message shows as a slope over the upper sizes steeper
 * than over the lower ones. A process per size keeps one size's garbage from another's samples:
 * a 100k-delta message leaves enough behind to start full collections during the next small
 * one, and a full collection drops optimized code (see the last figure).
 *
 * Before anything is measured, each contender streams a long message (the per-delta code) and
 * then makes thousands of short runs (the per-run code: agent, prompt, chart steps, run set-up).
 * V8 optimizes a function once it has run enough bytecode, so a small function called once per
 * run is optimized only after thousands of runs; a size measured before that measures V8's
 * compiler threads and unoptimized code. The smallest size is measured that way too, once, in
 * a process of its own without the short runs, and shown apart (no target).
 *
 * The last figure is that effect on its own: one short run (a 1-delta reply) right after a full
 * collection, which discards the compiled code whose object shapes it found dead, so the run
 * starts on the interpreter and recompiles.
 */
import { fileURLToPath } from "node:url";
import { type AgentName, type BenchAgentFactory, type ContenderName, loadBenchAgentFactories, runFloor } from "./lib/contenders.js";
import { childPayload, isEntryPoint, reportFromChild, runChild } from "./lib/child.js";
import { pairedRatio, type Random, roundOrders } from "./lib/paired.js";
import { collectGarbage, fitLine, summarize, type Summary, timeAsync } from "./lib/stats.js";
import { benchModel, prebuiltStreamFn, textReplyEvents } from "./lib/streams.js";

/** Options of {@link measureThroughput}. */
export interface ThroughputOptions {
	/** Message sizes in deltas, ascending (the fit uses all of them). */
	sizes: number[];
	/** Recorded rounds. */
	repetitions: number;
	/** Unrecorded rounds first. */
	warmups: number;
	/**
	 * Deltas of the JIT warm-up message each contender streams three times before anything is
	 * measured (0 skips). Without it the first size measures the compiler.
	 */
	warmupDeltas: number;
	/**
	 * Short runs (a 1-delta reply) each contender makes after the warm-up message, before anything
	 * is measured (0 skips). A function called once per run (the agent's, the chart's steps, the
	 * run's set-up) is optimized by V8 only after thousands of calls: agentchart has about 125
	 * such functions optimized during its first 5,000 runs of a process, pi about 30.
	 */
	warmupRuns: number;
	/**
	 * Deltas one sample streams: a sample is as many messages of its size as that makes (one
	 * message of 100k deltas, a hundred of 1k), each on a new agent, timed together and divided:
	 * a single message of 1k deltas lasts less than a millisecond, shorter than this machine's
	 * timing noise.
	 */
	deltasPerSample: number;
}

/** One message size. */
export interface ThroughputRow {
	deltas: number;
	/** Milliseconds per message, per contender. */
	ms: Record<ContenderName, Summary>;
	/** agentchart deltas/s over pi's, round by round (= pi's time / ours). */
	throughputVsPi: Summary;
	/** agentchart's time over the floor's, round by round (how far from the physical limit). */
	timeVsFloor: Summary;
}

/** The fitted line of one contender, summarized over rounds. */
export interface ThroughputFit {
	/** Marginal cost of one delta, ns (slope over all sizes). */
	nsPerDelta: Summary;
	/** Fixed cost of a run, µs (intercept). */
	fixedUs: Summary;
	/** R² of each round's fit. */
	r2: Summary;
	/** Slope over the lower half of the sizes, and over the upper half, ns per delta. */
	lowerNsPerDelta: Summary;
	upperNsPerDelta: Summary;
	/** Upper slope / lower slope, round by round (1 = flat; above 1 = per-delta cost grows). */
	growth: Summary;
}

/**
 * The smallest size measured as before its per-run code is optimized: in a process of its own
 * with the warm-up message and no warm-up runs (no target: the first ~1,000 runs of a process).
 */
export interface BeforeRunCodeIsOptimized {
	/** Short warm-up runs the measured sizes had per contender (this row had none). */
	warmupRuns: number;
	row: ThroughputRow;
}

/** A short run right after a full collection (no target: a property of the engines, shown apart). */
export interface AfterFullCollection {
	/** Runs measured per library. */
	runs: number;
	/** µs per run, per library. */
	us: Record<AgentName, Summary>;
	/** agentchart / pi, run by run. */
	ratio: Summary;
}

/** Everything benchmark 1 measured. */
export interface ThroughputResult {
	rows: ThroughputRow[];
	fits: Record<ContenderName, ThroughputFit>;
	/** pi's fitted slope / ours, round by round: marginal throughput relative to pi. */
	marginalThroughputVsPi: Summary;
	repetitions: number;
	/** Absent when the sizes had no warm-up runs (they are then this figure already). */
	beforeRunCodeIsOptimized?: BeforeRunCodeIsOptimized;
	afterFullCollection: AfterFullCollection;
}

const CONTENDERS: readonly ContenderName[] = ["agentchart", "pi", "floor"];
const SCRIPT = fileURLToPath(import.meta.url);

/** What the child measuring one size is asked. */
interface SizeChildPayload {
	kind: "size";
	deltas: number;
	warmupDeltas: number;
	warmupRuns: number;
	deltasPerSample: number;
	/** The contenders' order in every round (warm-up rounds first). */
	orders: ContenderName[][];
	warmups: number;
}

/** What the child measuring runs after a full collection is asked. */
interface AfterCollectionChildPayload {
	kind: "after-full-collection";
	runs: number;
	warmupRuns: number;
}

type ChildPayload = SizeChildPayload | AfterCollectionChildPayload;

/**
 * Streams one message through a contender and returns the number of text deltas its
 * listener saw (throws if that is not `deltas`: a benchmark that drops events would look fast).
 *
 * @example
 * await streamOnce("floor", factories, prebuiltStreamFn(textReplyEvents(benchModel(), 100)), 100);
 */
export async function streamOnce(
	name: ContenderName,
	factories: Record<AgentName, BenchAgentFactory>,
	streamFn: ReturnType<typeof prebuiltStreamFn>,
	deltas: number,
): Promise<number> {
	const model = benchModel();
	let seen = 0;
	if (name === "floor") {
		seen = (await runFloor({ streamFn, model }, "go")).textDeltas;
	} else {
		const agent = factories[name]({ streamFn, model });
		agent.subscribe((event) => {
			if (event.type === "message_update" && event.assistantMessageEvent?.type === "text_delta") seen++;
		});
		await agent.prompt("go");
	}
	if (seen !== deltas) throw new Error(`${name} delivered ${seen} of ${deltas} text deltas`);
	return seen;
}

/**
 * Weights for a fit of time against deltas: 1/deltas². Timing noise on a shared machine is
 * relative (a slowdown stretches a sample by a factor), so with equal weights the largest size
 * alone decides the line and the intercept is its noise; weighted, each size counts by its
 * relative error: the slope is still the marginal cost, the intercept comes from the small sizes.
 */
const relativeWeights = (sizes: readonly number[]) => sizes.map((deltas) => 1 / (deltas * deltas));

function fitRounds(sizes: readonly number[], msBySize: readonly number[][]): ThroughputFit {
	const rounds = msBySize[0]?.length ?? 0;
	const middle = Math.floor(sizes.length / 2);
	const lowerSizes = sizes.slice(0, middle + 1);
	const upperSizes = sizes.slice(middle);
	const fits = { slope: [] as number[], intercept: [] as number[], r2: [] as number[], lower: [] as number[], upper: [] as number[], growth: [] as number[] };
	for (let round = 0; round < rounds; round++) {
		const ms = msBySize.map((samples) => samples[round] as number);
		const all = fitLine(sizes, ms, relativeWeights(sizes));
		// The halves share the middle size, so 3 sizes give two 2-point slopes and 5 give two 3-point fits.
		const lower = fitLine(lowerSizes, ms.slice(0, middle + 1), relativeWeights(lowerSizes));
		const upper = fitLine(upperSizes, ms.slice(middle), relativeWeights(upperSizes));
		fits.slope.push(all.slope * 1e6);
		fits.intercept.push(all.intercept * 1e3);
		fits.r2.push(all.r2);
		fits.lower.push(lower.slope * 1e6);
		fits.upper.push(upper.slope * 1e6);
		fits.growth.push(upper.slope / lower.slope);
	}
	return {
		nsPerDelta: summarize(fits.slope),
		fixedUs: summarize(fits.intercept),
		r2: summarize(fits.r2),
		lowerNsPerDelta: summarize(fits.lower),
		upperNsPerDelta: summarize(fits.upper),
		growth: summarize(fits.growth),
	};
}

/**
 * Measures every size, the three contenders paired round by round, and fits the lines.
 *
 * @example
 * const result = await measureThroughput({ sizes: [100, 300, 1000], repetitions: 1, warmups: 0, warmupDeltas: 0, warmupRuns: 0, deltasPerSample: 1000 }, createRandom(1));
 * result.rows[0].throughputVsPi.median;
 */
export async function measureThroughput(options: ThroughputOptions, random: Random): Promise<ThroughputResult> {
	const rounds = options.warmups + options.repetitions;
	const measure = (deltas: number, warmupRuns: number) => {
		const payload: SizeChildPayload = {
			kind: "size",
			deltas,
			warmupDeltas: options.warmupDeltas,
			warmupRuns,
			deltasPerSample: options.deltasPerSample,
			orders: roundOrders(CONTENDERS, rounds, random),
			warmups: options.warmups,
		};
		return runChild<Record<ContenderName, number[]>>(SCRIPT, payload);
	};
	const samplesBySize: Record<ContenderName, number[]>[] = [];
	for (const deltas of options.sizes) samplesBySize.push(await measure(deltas, options.warmupRuns));
	const rows: ThroughputRow[] = options.sizes.map((deltas, index) => sizeRow(deltas, samplesBySize[index] ?? { agentchart: [], pi: [], floor: [] }));
	const smallest = options.sizes[0];
	const beforeRunCodeIsOptimized =
		options.warmupRuns > 0 && smallest !== undefined ? { warmupRuns: options.warmupRuns, row: sizeRow(smallest, await measure(smallest, 0)) } : undefined;
	const fitOf = (name: ContenderName) =>
		fitRounds(
			options.sizes,
			samplesBySize.map((samples) => samples[name]),
		);
	const fits = { agentchart: fitOf("agentchart"), pi: fitOf("pi"), floor: fitOf("floor") };
	const cold = await runChild<Record<AgentName, number[]>>(SCRIPT, { kind: "after-full-collection", runs: Math.max(3, options.repetitions * 3), warmupRuns: options.warmupDeltas > 0 ? 500 : 20 } satisfies AfterCollectionChildPayload);
	return {
		rows,
		fits,
		marginalThroughputVsPi: pairedRatio(fits.pi.nsPerDelta.samples, fits.agentchart.nsPerDelta.samples),
		repetitions: options.repetitions,
		...(beforeRunCodeIsOptimized ? { beforeRunCodeIsOptimized } : {}),
		afterFullCollection: { runs: cold.agentchart.length, us: { agentchart: summarize(cold.agentchart), pi: summarize(cold.pi) }, ratio: pairedRatio(cold.agentchart, cold.pi) },
	};
}

/** One size's row from its samples (ms per message per contender, recorded rounds). */
function sizeRow(deltas: number, samples: Record<ContenderName, number[]>): ThroughputRow {
	return {
		deltas,
		ms: { agentchart: summarize(samples.agentchart), pi: summarize(samples.pi), floor: summarize(samples.floor) },
		throughputVsPi: pairedRatio(samples.pi, samples.agentchart),
		timeVsFloor: pairedRatio(samples.agentchart, samples.floor),
	};
}

/** One size, in this child: the rounds in the given orders; ms per message, recorded rounds only. */
async function measureSize(payload: SizeChildPayload): Promise<Record<ContenderName, number[]>> {
	const factories = await loadBenchAgentFactories();
	if (payload.warmupDeltas > 0) {
		const streamFn = prebuiltStreamFn(textReplyEvents(benchModel(), payload.warmupDeltas));
		for (let round = 0; round < 3; round++) for (const name of CONTENDERS) await streamOnce(name, factories, streamFn, payload.warmupDeltas);
	}
	if (payload.warmupRuns > 0) {
		const short = prebuiltStreamFn(textReplyEvents(benchModel(), 1));
		for (let run = 0; run < payload.warmupRuns; run++) for (const name of CONTENDERS) await streamOnce(name, factories, short, 1);
	}
	const streamFn = prebuiltStreamFn(textReplyEvents(benchModel(), payload.deltas));
	const messages = Math.max(1, Math.round(payload.deltasPerSample / payload.deltas));
	const samples: Record<ContenderName, number[]> = { agentchart: [], pi: [], floor: [] };
	for (const [round, order] of payload.orders.entries()) {
		for (const name of order) {
			const ms = await timeAsync(async () => {
				for (let i = 0; i < messages; i++) await streamOnce(name, factories, streamFn, payload.deltas);
			});
			if (round >= payload.warmups) samples[name].push(ms / messages);
		}
	}
	return samples;
}

/** Short runs (a 1-delta reply) right after a full collection, the libraries in turn; µs each. */
async function measureAfterFullCollection(payload: AfterCollectionChildPayload): Promise<Record<AgentName, number[]>> {
	const factories = await loadBenchAgentFactories();
	const streamFn = prebuiltStreamFn(textReplyEvents(benchModel(), 1));
	const names: AgentName[] = ["agentchart", "pi"];
	for (let i = 0; i < payload.warmupRuns; i++) for (const name of names) await streamOnce(name, factories, streamFn, 1);
	const samples: Record<AgentName, number[]> = { agentchart: [], pi: [] };
	for (let run = 0; run < payload.runs; run++) {
		for (const name of run % 2 === 0 ? names : [...names].reverse()) {
			collectGarbage();
			samples[name].push((await timeAsync(() => streamOnce(name, factories, streamFn, 1))) * 1000);
		}
	}
	return samples;
}

if (isEntryPoint(import.meta.url)) {
	const payload = childPayload<ChildPayload>();
	if (!payload) throw new Error("bench/throughput.ts runs as a child of bench/run.ts (npm run bench -- --only throughput)");
	reportFromChild(payload.kind === "size" ? measureSize(payload) : measureAfterFullCollection(payload));
}
