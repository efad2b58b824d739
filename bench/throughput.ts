/**
 * Benchmark 1: text deltas from the stream function to one no-op listener, for messages of
 * growing size, agentchart against pi and the raw `for await` floor.
 *
 * Every round streams every size through every contender (in a balanced shuffled order per
 * size), so for each round there is one time per contender and size: the ratios are taken round
 * by round, and a straight line (time against deltas, least squares weighted by relative error)
 * is fitted per round and contender. Its slope is the marginal cost of one delta, its intercept the fixed cost of a run
 * (agent construction, prompt, turn and message events). Per-delta work that grows with the
 * message shows as a slope over the upper sizes steeper than over the lower ones.
 */
import { type AgentName, type BenchAgentFactory, type ContenderName, loadBenchAgentFactories, runFloor } from "./lib/contenders.js";
import { pairedRatio, type Random, roundOrders } from "./lib/paired.js";
import { fitLine, summarize, type Summary, timeAsync } from "./lib/stats.js";
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

/** Everything benchmark 1 measured. */
export interface ThroughputResult {
	rows: ThroughputRow[];
	fits: Record<ContenderName, ThroughputFit>;
	/** pi's fitted slope / ours, round by round: marginal throughput relative to pi. */
	marginalThroughputVsPi: Summary;
	repetitions: number;
}

const CONTENDERS: readonly ContenderName[] = ["agentchart", "pi", "floor"];

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
 * const result = await measureThroughput({ sizes: [100, 300, 1000], repetitions: 1, warmups: 0, warmupDeltas: 0 }, createRandom(1));
 * result.rows[0].throughputVsPi.median;
 */
export async function measureThroughput(options: ThroughputOptions, random: Random): Promise<ThroughputResult> {
	const factories = await loadBenchAgentFactories();
	if (options.warmupDeltas > 0) {
		const streamFn = prebuiltStreamFn(textReplyEvents(benchModel(), options.warmupDeltas));
		for (let round = 0; round < 3; round++) for (const name of CONTENDERS) await streamOnce(name, factories, streamFn, options.warmupDeltas);
	}
	const streams = options.sizes.map((deltas) => prebuiltStreamFn(textReplyEvents(benchModel(), deltas)));
	const samplesBySize = options.sizes.map(() => ({ agentchart: [] as number[], pi: [] as number[], floor: [] as number[] }));
	// A round covers every size (the per-round fit needs one time per size); within a size the
	// contenders take turns in a balanced shuffled order.
	const rounds = options.warmups + options.repetitions;
	const orders = options.sizes.map(() => roundOrders(CONTENDERS, rounds, random));
	for (let round = 0; round < rounds; round++) {
		for (const [index, deltas] of options.sizes.entries()) {
			const streamFn = streams[index] as ReturnType<typeof prebuiltStreamFn>;
			for (const name of orders[index]?.[round] ?? []) {
				const ms = await timeAsync(() => streamOnce(name, factories, streamFn, deltas));
				if (round >= options.warmups) samplesBySize[index]?.[name].push(ms);
			}
		}
	}
	const rows: ThroughputRow[] = options.sizes.map((deltas, index) => {
		const samples = samplesBySize[index] ?? { agentchart: [], pi: [], floor: [] };
		return {
			deltas,
			ms: { agentchart: summarize(samples.agentchart), pi: summarize(samples.pi), floor: summarize(samples.floor) },
			throughputVsPi: pairedRatio(samples.pi, samples.agentchart),
			timeVsFloor: pairedRatio(samples.agentchart, samples.floor),
		};
	});
	const fitOf = (name: ContenderName) =>
		fitRounds(
			options.sizes,
			samplesBySize.map((samples) => samples[name]),
		);
	const fits = { agentchart: fitOf("agentchart"), pi: fitOf("pi"), floor: fitOf("floor") };
	return {
		rows,
		fits,
		marginalThroughputVsPi: pairedRatio(fits.pi.nsPerDelta.samples, fits.agentchart.nsPerDelta.samples),
		repetitions: options.repetitions,
	};
}
