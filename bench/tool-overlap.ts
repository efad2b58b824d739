/**
 * Benchmark 6: turn wall time of a tool-heavy turn, streaming vs parallel tool execution,
 * against the ideal. The model streams three tool calls over about 300 ms; each tool takes
 * about 200 ms. No engine can finish the turn before the last call has streamed and its tool
 * has run, so ideal = (time of the last `toolcall_end`) + (tool time).
 */
import { createScriptedModel, toolCall, text } from "../src/providers/scripted.js";
import type { AgentTool, ToolExecutionMode } from "../src/types/agent.js";
import type { StreamFn } from "../src/types/stream.js";
import { type AgentName, type BenchAgentFactory, loadBenchAgentFactories } from "./lib/contenders.js";
import { type Random, roundOrders } from "./lib/paired.js";
import { median, sleep } from "./lib/stats.js";

/** Options of {@link measureToolOverlap}. */
export interface ToolOverlapOptions {
	/** How long the three tool calls take to stream, in ms. */
	streamMs: number;
	/** How long each tool runs, in ms. */
	toolMs: number;
	/** Recorded repetitions per variant. */
	repetitions: number;
}

/** Who runs the turn, and how. */
export type OverlapVariant = "agentchart streaming" | "agentchart parallel" | "pi parallel";

/** Medians of one variant. */
export interface OverlapRow {
	variant: OverlapVariant;
	/** False when the engine ran the variant's mode as something else (streaming not implemented). */
	available: boolean;
	/** From `prompt()` to the tool turn's `turn_end`, in ms. */
	wallMs: number;
	/** Last `toolcall_end` pushed by the model + tool time, in ms from `prompt()`. */
	idealMs: number;
	/** wallMs / idealMs. */
	ratio: number;
	/** When the first tool started, in ms from `prompt()` (streaming starts it before the reply ends). */
	firstToolStartMs: number;
	/** When the model pushed its terminal `done`, in ms from `prompt()`. */
	streamDoneMs: number;
}

const VARIANTS: readonly { variant: OverlapVariant; agent: AgentName; mode: ToolExecutionMode }[] = [
	{ variant: "agentchart streaming", agent: "agentchart", mode: "streaming" },
	{ variant: "agentchart parallel", agent: "agentchart", mode: "parallel" },
	{ variant: "pi parallel", agent: "pi", mode: "parallel" },
];

/** Records when the model pushed each event (a wrapper around the stream's own `push`). */
function timedStreamFn(inner: StreamFn, origin: () => number, pushed: { toolcallEnds: number[]; done: number }): StreamFn {
	return async (model, context, options) => {
		const stream = await inner(model, context, options);
		const target = stream as unknown as { push?: (event: { type: string }) => void };
		const push = target.push?.bind(stream);
		if (!push) throw new Error("timedStreamFn: the scripted stream has no push to observe");
		// Stamped at push time (when the model produced the event), not when a consumer reads it.
		target.push = (event) => {
			if (event.type === "toolcall_end") pushed.toolcallEnds.push(origin());
			if (event.type === "done" && pushed.done < 0) pushed.done = origin();
			push(event);
		};
		return stream;
	};
}

interface OverlapSample {
	wallMs: number;
	idealMs: number;
	firstToolStartMs: number;
	streamDoneMs: number;
}

/**
 * Runs one tool-heavy turn and returns its timings.
 *
 * @example
 * await runOverlapOnce(await loadBenchAgentFactory("agentchart"), "parallel", 30, 20);
 */
export async function runOverlapOnce(create: BenchAgentFactory, mode: ToolExecutionMode, streamMs: number, toolMs: number): Promise<OverlapSample> {
	const args = { ms: toolMs };
	const chunkSize = 2;
	// Pauses: one before each delta of each call's arguments, and one before `done`.
	const pauses = 3 * Math.ceil(JSON.stringify(args).length / chunkSize) + 1;
	const scripted = createScriptedModel(
		[{ content: [toolCall("work", args), toolCall("work", args), toolCall("work", args)] }, { content: [text("done")] }],
		{ chunkSize, delayMs: streamMs / pauses },
	);
	let start = 0;
	const origin = () => performance.now() - start;
	const pushed = { toolcallEnds: [] as number[], done: -1 };
	const toolStarts: number[] = [];
	const work: AgentTool<object> = {
		name: "work",
		label: "Work",
		description: "Works for a while",
		parameters: { type: "object", properties: { ms: { type: "number" } } },
		async execute(_id, params, signal) {
			toolStarts.push(origin());
			await sleep(Number((params as { ms?: unknown }).ms), signal);
			return { content: [{ type: "text", text: "worked" }], details: {} };
		},
	};
	const agent = create({
		streamFn: timedStreamFn(scripted.streamFn, origin, pushed),
		model: scripted.model,
		tools: [work],
		toolExecution: mode,
	});
	let turnEnd = -1;
	agent.subscribe((event) => {
		if (event.type === "turn_end" && turnEnd < 0) turnEnd = origin();
	});
	start = performance.now();
	await agent.prompt("go");
	const lastCallEnd = pushed.toolcallEnds[2];
	if (lastCallEnd === undefined || toolStarts.length !== 3) throw new Error(`${mode}: expected three tool calls to run`);
	return {
		wallMs: turnEnd,
		idealMs: lastCallEnd + toolMs,
		firstToolStartMs: Math.min(...toolStarts),
		streamDoneMs: pushed.done,
	};
}

/**
 * Measures the tool-heavy turn for each variant (one unrecorded round, then repetitions in
 * balanced shuffled orders; medians). Streaming is "available" when its first tool started
 * before the model pushed `done`.
 *
 * @example
 * const rows = await measureToolOverlap({ streamMs: 30, toolMs: 20, repetitions: 1 }, createRandom(1));
 */
export async function measureToolOverlap(options: ToolOverlapOptions, random: Random): Promise<OverlapRow[]> {
	const { streamMs, toolMs, repetitions } = options;
	const factories = await loadBenchAgentFactories();
	const samples = new Map<OverlapVariant, OverlapSample[]>(VARIANTS.map(({ variant }) => [variant, []]));
	const orders = roundOrders(VARIANTS, repetitions + 1, random);
	for (const [round, order] of orders.entries()) {
		for (const { variant, agent, mode } of order) {
			const sample = await runOverlapOnce(factories[agent], mode, streamMs, toolMs);
			if (round > 0) samples.get(variant)?.push(sample);
		}
	}
	return VARIANTS.map(({ variant, mode }) => {
		const rows = samples.get(variant) ?? [];
		const wallMs = median(rows.map((row) => row.wallMs));
		const idealMs = median(rows.map((row) => row.idealMs));
		const firstToolStartMs = median(rows.map((row) => row.firstToolStartMs));
		const streamDoneMs = median(rows.map((row) => row.streamDoneMs));
		const available = mode !== "streaming" || firstToolStartMs < streamDoneMs;
		return { variant, available, wallMs, idealMs, ratio: wallMs / idealMs, firstToolStartMs, streamDoneMs };
	});
}
