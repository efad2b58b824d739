/**
 * Benchmark 5: what the inspector costs. One agentchart agent streams a `deltas`-delta message
 * to a no-op listener, detached, or with `createAgentInspector().attach(agent.actor)` attached
 * before the prompt; the two are paired round by round. The inspector turns raw events into
 * records when it flushes (on the next tick, after `prompt()` has settled), so the attached
 * sample times `prompt()` and then `inspector.flush()`: the whole cost, not the part that
 * happens to fall inside the prompt.
 */
import { loadAgentchart, loadAgentchartInspect } from "./lib/library.js";
import { pairedRatio, type Random, runPaired } from "./lib/paired.js";
import { collectYoungGarbage, summarize, type Summary } from "./lib/stats.js";
import { benchModel, prebuiltStreamFn, textReplyEvents } from "./lib/streams.js";

/** Options of {@link measureInspector}. */
export interface InspectorOptions {
	/** Text deltas of the message. */
	deltas: number;
	/** Recorded rounds. */
	repetitions: number;
	/** Unrecorded rounds first. */
	warmups: number;
}

/** Detached or attached. */
export type InspectorVariant = "detached" | "attached";

/** Everything benchmark 5 measured. */
export interface InspectorResult {
	deltas: number;
	ms: Record<InspectorVariant, Summary>;
	/** Attached / detached, round by round. */
	ratio: Summary;
	/** Raw inspection events the inspector accepted per text delta (0 = constant cost per message). */
	eventsPerDelta: number;
	/** Records it produced per text delta. */
	recordsPerDelta: number;
}

interface InspectorSample {
	ms: number;
	seen: number;
	records: number;
}

/**
 * Streams one message through an agentchart agent, with or without an attached inspector, and
 * returns the time and what the inspector saw.
 *
 * @example
 * const { ms } = await inspectOnce("attached", prebuiltStreamFn(textReplyEvents(benchModel(), 100)), 100);
 */
export async function inspectOnce(variant: InspectorVariant, streamFn: ReturnType<typeof prebuiltStreamFn>, deltas: number): Promise<InspectorSample> {
	const [{ Agent }, { createAgentInspector }] = await Promise.all([loadAgentchart(), loadAgentchartInspect()]);
	const agent = new Agent({ initialState: { model: benchModel() }, streamFn });
	let seen = 0;
	agent.subscribe((event) => {
		if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") seen++;
	});
	const inspector = variant === "attached" ? createAgentInspector() : undefined;
	const detach = inspector?.attach(agent.actor);
	collectYoungGarbage();
	const start = performance.now();
	await agent.prompt("go");
	inspector?.flush();
	const ms = performance.now() - start;
	detach?.();
	agent.dispose();
	if (seen !== deltas) throw new Error(`inspector ${variant}: the listener saw ${seen} of ${deltas} text deltas`);
	return { ms, seen: inspector?.stats.seen ?? 0, records: inspector?.stats.records ?? 0 };
}

/**
 * Measures the inspector's cost, attached and detached paired round by round.
 *
 * @example
 * const result = await measureInspector({ deltas: 1000, repetitions: 1, warmups: 0 }, createRandom(1));
 * result.ratio.median;
 */
export async function measureInspector(options: InspectorOptions, random: Random): Promise<InspectorResult> {
	const streamFn = prebuiltStreamFn(textReplyEvents(benchModel(), options.deltas));
	let last: InspectorSample = { ms: 0, seen: 0, records: 0 };
	const samples = await runPaired<InspectorVariant>(["detached", "attached"], { repetitions: options.repetitions, warmups: options.warmups, random }, async (variant) => {
		const sample = await inspectOnce(variant, streamFn, options.deltas);
		if (variant === "attached") last = sample;
		return sample.ms;
	});
	return {
		deltas: options.deltas,
		ms: { detached: summarize(samples.detached), attached: summarize(samples.attached) },
		ratio: pairedRatio(samples.attached, samples.detached),
		eventsPerDelta: last.seen / options.deltas,
		recordsPerDelta: last.records / options.deltas,
	};
}
