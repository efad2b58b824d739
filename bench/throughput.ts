/**
 * Benchmark 1: text deltas per second from the stream function to one listener, for
 * messages of growing size. The per-delta cost must not grow with the message: anything
 * that copies the accumulated text or event list per delta shows up as a rising ns/delta.
 */
import { type ContenderName, createBenchAgent, runFloor } from "./lib/contenders.js";
import { interleaved, mediansOf, timeAsync } from "./lib/stats.js";
import { benchModel, prebuiltStreamFn, textReplyEvents } from "./lib/streams.js";

/** Options of {@link measureThroughput}. */
export interface ThroughputOptions {
	/** Message sizes in deltas (default 1k, 10k, 100k). */
	sizes?: number[];
	/** Recorded repetitions per size and contender (default 5). */
	repetitions?: number;
	/** Unrecorded rounds per size (default 1). */
	warmups?: number;
	/**
	 * Deltas of the JIT warm-up message each contender streams three times before anything is
	 * measured (default 20k; 0 skips). Without it the first size measures the compiler.
	 */
	warmupDeltas?: number;
}

/** One message size's medians. */
export interface ThroughputRow {
	deltas: number;
	/** Median ns per delta, per contender (stream function to listener). */
	nsPerDelta: Record<ContenderName, number>;
	/** Deltas per second, per contender. */
	deltasPerSecond: Record<ContenderName, number>;
}

const CONTENDERS: readonly ContenderName[] = ["agentchart", "pi", "floor"];

/**
 * Streams one message of `deltas` text deltas through a contender and returns the number of
 * text deltas its listener saw (throws if that is not `deltas`: a benchmark that drops
 * events would look fast).
 *
 * @example
 * await streamOnce("pi", prebuiltStreamFn(textReplyEvents(benchModel(), 100)), 100);
 */
export async function streamOnce(name: ContenderName, streamFn: ReturnType<typeof prebuiltStreamFn>, deltas: number): Promise<number> {
	const model = benchModel();
	let seen = 0;
	if (name === "floor") {
		seen = (await runFloor({ streamFn, model }, "go")).textDeltas;
	} else {
		const agent = createBenchAgent(name, { streamFn, model });
		agent.subscribe((event) => {
			if (event.type === "message_update" && event.assistantMessageEvent?.type === "text_delta") seen++;
		});
		await agent.prompt("go");
	}
	if (seen !== deltas) throw new Error(`${name} delivered ${seen} of ${deltas} text deltas`);
	return seen;
}

/**
 * Measures deltas per second for each size, the three contenders interleaved.
 *
 * @example
 * const rows = await measureThroughput({ sizes: [100], repetitions: 1, warmups: 0 });
 * rows[0].nsPerDelta.agentchart;
 */
export async function measureThroughput(options: ThroughputOptions = {}): Promise<ThroughputRow[]> {
	const sizes = options.sizes ?? [1_000, 10_000, 100_000];
	const rows: ThroughputRow[] = [];
	const warmupDeltas = options.warmupDeltas ?? 20_000;
	if (warmupDeltas > 0) {
		const streamFn = prebuiltStreamFn(textReplyEvents(benchModel(), warmupDeltas));
		for (let round = 0; round < 3; round++) for (const name of CONTENDERS) await streamOnce(name, streamFn, warmupDeltas);
	}
	for (const deltas of sizes) {
		const streamFn = prebuiltStreamFn(textReplyEvents(benchModel(), deltas));
		const samples = await interleaved(CONTENDERS, options.repetitions ?? 5, options.warmups ?? 1, (name) =>
			timeAsync(() => streamOnce(name, streamFn, deltas)),
		);
		const ms = mediansOf(samples);
		const nsPerDelta = {} as Record<ContenderName, number>;
		const deltasPerSecond = {} as Record<ContenderName, number>;
		for (const name of CONTENDERS) {
			nsPerDelta[name] = (ms[name] * 1e6) / deltas;
			deltasPerSecond[name] = deltas / (ms[name] / 1000);
		}
		rows.push({ deltas, nsPerDelta, deltasPerSecond });
	}
	return rows;
}
