/**
 * Turns benchmark results into the summary (console) and `bench/results.md`: one table per
 * benchmark, every figure as median (min–max), every compared figure beside its target from
 * issues 33 and 35 with met or missed, and a closing table of all targets.
 */
import os from "node:os";
import type { ConcurrencyResult } from "./concurrency.js";
import type { DurableResult, StoreVariant } from "./durable.js";
import type { InspectorResult } from "./inspector.js";
import type { MemoryFigureResult, MemoryResult } from "./memory.js";
import type { ThroughputFit, ThroughputResult } from "./throughput.js";
import type { TurnOverheadResult } from "./turn-overhead.js";
import type { OverlapRow } from "./tool-overlap.js";
import { formatReplyChunker, type ReplyChunkerResult } from "./reply-chunker.js";
import { formatSoak, type SoakResult } from "./soak.js";
import { formatRestate, type RestateBenchResult } from "./restate.js";
import type { Summary } from "./lib/stats.js";
import type { ContenderName } from "./lib/contenders.js";

/** Everything one run measured (a section is absent when `--only` left it out). */
export interface BenchResults {
	quick: boolean;
	/** The seed that ordered the rounds. */
	seed: number;
	/** The machine, at the start of the run. */
	environment: string;
	throughput?: ThroughputResult;
	turnOverhead?: TurnOverheadResult;
	memory?: MemoryResult;
	concurrency?: ConcurrencyResult;
	inspector?: InspectorResult;
	overlap?: OverlapRow[];
	replyChunker?: ReplyChunkerResult;
	soak?: SoakResult;
	durable?: DurableResult;
	restate?: RestateBenchResult;
}

/** A target and whether a figure meets it (judged on the median). */
interface TargetCheck {
	figure: string;
	target: string;
	measured: string;
	met: boolean;
	/** Said after the verdict (a stretch goal, a caveat). */
	note?: string;
}

/** Targets (issues 33 and 35, and the reply layer's cost per delta), as ratios agentchart / pi unless said otherwise. */
export const TARGETS = {
	/** agentchart deltas/s over pi's, at least, at the sizes in `throughputTargetSizes`. */
	throughputVsPi: 1.3,
	/** The message sizes (deltas) the throughput target holds at; the others only add points to the fitted line. */
	throughputTargetSizes: [1_000, 10_000, 100_000] as readonly number[],
	/** Per-prompt time over pi's, at most; the stretch goal. */
	turnVsPi: 2,
	turnVsPiStretch: 1,
	/** Retained heap per agent over pi's, at most. */
	idleVsPi: 1,
	afterRunVsPi: 1.2,
	/** 1,000 concurrent agents over pi, at most. */
	concurrentWallVsPi: 1.5,
	concurrentRssVsPi: 1.2,
	/** Inspector attached over detached, at most. */
	inspectorAttached: 1.5,
	/** Issue 35: a 3-tool turn with the memory store over one without a store, at most. */
	memoryStoreTurn: 1.1,
	/** Issue 35: restoring a 1,000-message session, ms at most. */
	restoreMs: 50,
	/** A long streamed reply's per-delta cost in the reply layer over a short one's, at most: linear work measures 1–2× (the collector walks more of a longer text), a read of the text so far on every delta 25× and more. */
	longReplyGrowth: 3,
	/** Upper-half slope over lower-half slope counted as flat (no target; informational). */
	flatGrowth: 1.2,
} as const;

const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
const grouped = (value: number, digits = 0) =>
	Number.isFinite(value) ? value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits }) : "n/a";
const sizeLabel = (deltas: number) => (deltas >= 1000 && deltas % 1000 === 0 ? `${deltas / 1000}k` : String(deltas));

/** `12.3 (11.0–14.2)`, with `format` applied to each number. */
function spread(summary: Summary, format: (value: number) => string): string {
	return `${format(summary.median)} (${format(summary.min)}–${format(summary.max)})`;
}

/** `0.31× (0.28–0.35)`. */
function ratio(summary: Summary, digits = 2): string {
	if (!Number.isFinite(summary.median)) return "n/a";
	return `${fixed(summary.median, digits)}× (${fixed(summary.min, digits)}–${fixed(summary.max, digits)})`;
}

const verdictText = (met: boolean) => (met ? "met" : "**missed**");
const rounds = (count: number) => `${count} paired round${count === 1 ? "" : "s"}`;
const kib = (bytes: number) => `${fixed(bytes / 1024, 2)} KiB`;
const mib = (bytes: number) => `${fixed(bytes / 1_048_576, 1)} MiB`;

/**
 * The machine, Node version, load and date, for the header of the results.
 *
 * @example
 * environmentLine(); // "AMD EPYC, 2 cores, Node v20.20.2, load 0.52, 2026-11-21"
 */
export function environmentLine(): string {
	const cpus = os.cpus();
	const load = os.loadavg()[0] ?? Number.NaN;
	return `${cpus[0]?.model.trim() ?? "unknown CPU"}, ${cpus.length} cores, Node ${process.version}, load average ${fixed(load)} at the start, ${new Date().toISOString().slice(0, 10)}`;
}

function throughputSection(result: ThroughputResult, checks: TargetCheck[]): string[] {
	const lines: string[] = [];
	lines.push(`**1. Text delta throughput: one message of N deltas, stream function to a no-op listener (${rounds(result.repetitions)}, one child process per size)**`);
	lines.push("");
	lines.push("| deltas | agentchart ms | pi ms | floor ms | throughput ours / pi | time ours / floor | target | verdict |");
	lines.push("|---:|---:|---:|---:|---:|---:|---|---|");
	const ms = (value: number) => fixed(value, value < 10 ? 2 : 1);
	for (const row of result.rows) {
		const met = row.throughputVsPi.median >= TARGETS.throughputVsPi;
		const targeted = TARGETS.throughputTargetSizes.includes(row.deltas);
		lines.push(
			`| ${sizeLabel(row.deltas)} | ${spread(row.ms.agentchart, ms)} | ${spread(row.ms.pi, ms)} | ${spread(row.ms.floor, ms)} | ${ratio(row.throughputVsPi)} | ${ratio(row.timeVsFloor, 1)} | ${targeted ? `≥ ${fixed(TARGETS.throughputVsPi, 1)}×` : "–"} | ${targeted ? verdictText(met) : ""} |`,
		);
		if (targeted) checks.push({ figure: `throughput, ${sizeLabel(row.deltas)} deltas (ours / pi)`, target: `≥ ${fixed(TARGETS.throughputVsPi, 1)}×`, measured: ratio(row.throughputVsPi), met });
	}
	const before = result.beforeRunCodeIsOptimized;
	if (before) {
		lines.push("");
		lines.push(
			`Each size was measured after ${grouped(before.warmupRuns)} short runs per contender, so that the code a run calls once (the agent's, the chart's steps, the run's set-up) is optimized: V8 optimizes a function once it has run enough bytecode, which for a small function called once per run takes thousands of runs. The same ${sizeLabel(before.row.deltas)}-delta size in a process without those runs, where the measured messages are its first runs (no target): throughput ours / pi ${ratio(before.row.throughputVsPi)}, agentchart ${spread(before.row.ms.agentchart, ms)} ms, pi ${spread(before.row.ms.pi, ms)} ms.`,
		);
	}
	const first = result.rows[0];
	const last = result.rows.at(-1);
	const middle = result.rows[Math.floor(result.rows.length / 2)];
	const range = (from?: { deltas: number }, to?: { deltas: number }) => (from && to ? `${sizeLabel(from.deltas)}–${sizeLabel(to.deltas)}` : "");
	lines.push("");
	lines.push(
		`Least-squares line of time against deltas (weights 1/deltas², as timing noise is relative), fitted per round over ${range(first, last)}: the slope is the marginal cost of a delta, the intercept the fixed cost of a run (agent, prompt, turn and message events). Flatness: the slope over the upper half of the sizes (${range(middle, last)}) over the slope over the lower half (${range(first, middle)}); 1 = flat, more = per-delta work grows with the message.`,
	);
	lines.push("");
	lines.push("| contender | marginal ns/delta | fixed µs | weighted R² (worst) | ns/delta, lower half | ns/delta, upper half | upper / lower |");
	lines.push("|---|---:|---:|---:|---:|---:|---:|");
	const fitRow = (name: ContenderName, fit: ThroughputFit) =>
		`| ${name} | ${spread(fit.nsPerDelta, (v) => grouped(v))} | ${spread(fit.fixedUs, (v) => grouped(v))} | ${fixed(fit.r2.min, 4)} | ${spread(fit.lowerNsPerDelta, (v) => grouped(v))} | ${spread(fit.upperNsPerDelta, (v) => grouped(v))} | ${ratio(fit.growth)} |`;
	lines.push(fitRow("agentchart", result.fits.agentchart));
	lines.push(fitRow("pi", result.fits.pi));
	lines.push(fitRow("floor", result.fits.floor));
	lines.push("");
	lines.push(`Marginal throughput ours / pi (pi's slope / ours, per round; no target): ${ratio(result.marginalThroughputVsPi)}.`);
	const growth = result.fits.agentchart.growth;
	const lower = result.fits.agentchart.lowerNsPerDelta.median;
	const flatness = !(lower > 0) ? "cannot be judged (the lower-half slope is not positive: noise)" : growth.median <= TARGETS.flatGrowth ? "is flat" : "**grows with the message**";
	lines.push(
		`agentchart per-delta cost ${flatness}: upper / lower half ${ratio(growth)} (≤ ${fixed(TARGETS.flatGrowth, 1)} counts as flat; no target).`,
	);
	const cold = result.afterFullCollection;
	const us = (value: number) => grouped(value, value < 100 ? 1 : 0);
	lines.push("");
	lines.push(
		`A short run (a 1-delta reply) right after a full collection (${cold.runs} per library, no target): agentchart ${spread(cold.us.agentchart, us)} µs, pi ${spread(cold.us.pi, us)} µs, ours / pi ${ratio(cold.ratio)}. A full collection discards the compiled code of functions whose object shapes died with the last run, so the next run starts on V8's interpreter and compiles again; agentchart runs more code per run than pi and pays more for it. Each size above is measured in its own process, so one size's garbage does not start such collections during another's samples.`,
	);
	return lines;
}

function turnSection(result: TurnOverheadResult, checks: TargetCheck[]): string[] {
	const lines: string[] = [];
	lines.push(
		`**2. Turn overhead: one prompt = a reply with 1 text delta and ${result.callsPerTurn} instant tool calls, then a final 1-delta reply; ${result.prompts} prompts per sample, each on its own agent built before the clock; CPU time, each variant in a process of its own (${rounds(result.usPerTurn["pi parallel"].samples.length)})**`,
	);
	lines.push("");
	lines.push("| variant | CPU µs per turn | ours / pi parallel | target | verdict |");
	lines.push("|---|---:|---:|---|---|");
	const us = (value: number) => grouped(value, value < 100 ? 1 : 0);
	const target = `≤ ${fixed(TARGETS.turnVsPi, 0)}× (stretch ${fixed(TARGETS.turnVsPiStretch, 0)}×)`;
	const judge = (summary: Summary) => {
		const met = summary.median <= TARGETS.turnVsPi;
		const note = met ? `(stretch ${summary.median <= TARGETS.turnVsPiStretch ? "met" : "missed"})` : "";
		return { met, note, text: met ? `met ${note}` : verdictText(false) };
	};
	const parallel = judge(result.parallelVsPi);
	const streaming = judge(result.streamingVsPi);
	lines.push(`| agentchart parallel | ${spread(result.usPerTurn["agentchart parallel"], us)} | ${ratio(result.parallelVsPi)} | ${target} | ${parallel.text} |`);
	lines.push(`| agentchart streaming | ${spread(result.usPerTurn["agentchart streaming"], us)} | ${ratio(result.streamingVsPi)} | ${target} | ${streaming.text} |`);
	lines.push(`| pi parallel | ${spread(result.usPerTurn["pi parallel"], us)} | | | |`);
	lines.push(`| floor (raw \`for await\`, tools inline) | ${spread(result.usPerTurn.floor, us)} | | | |`);
	const steps = result.chartSteps.parallel;
	lines.push(`| chart floor (XState alone, the same steps) | ${spread(result.usPerTurn["chart floor"], us)} | ${ratio(result.chartFloorVsPi)} | | |`);
	lines.push("");
	lines.push(
		`pi 0.73.1 has no streaming tool mode: agentchart streaming is compared with pi parallel. agentchart parallel / floor: ${ratio(result.parallelVsFloor, 1)}.`,
	);
	lines.push("");
	lines.push(
		`Chart floor: our chart takes ${steps.events} events, ${steps.microsteps} transitions and ${steps.actors} child actors for this prompt in parallel mode (streaming: ${result.chartSteps.streaming.events}, ${result.chartSteps.streaming.microsteps}, ${result.chartSteps.streaming.actors}), counted on an inspected run of a pinned agent. A synthetic XState machine taking as many steps, each entering a state that assigns and emits once, invoking as many do-nothing children, created, started and stopped once per prompt, costs the time in that row: the least any chart of this shape costs on XState, before any work of ours. agentchart parallel / chart floor: ${ratio(result.parallelVsChartFloor, 1)}.`,
	);
	checks.push({ figure: "turn overhead, parallel (ours / pi)", target, measured: ratio(result.parallelVsPi), met: parallel.met, note: parallel.note });
	checks.push({
		figure: "turn overhead, ours streaming / pi parallel",
		target,
		measured: ratio(result.streamingVsPi),
		met: streaming.met,
		note: streaming.note,
	});
	return lines;
}

function memorySection(result: MemoryResult, checks: TargetCheck[]): string[] {
	const lines: string[] = [];
	lines.push(
		`**3. Retained heap per agent (system prompt + 2 tools), ${grouped(result.agents)} live agents per child process, full GC before and after (${rounds(result.repetitions)}, one child per figure, library and round)${result.exact ? "" : " — gc not exposed, approximate"}**`,
	);
	lines.push("");
	lines.push("| figure | agentchart per agent | pi per agent | ours / pi | target | verdict |");
	lines.push("|---|---:|---:|---:|---|---|");
	const row = (label: string, figure: MemoryFigureResult, limit: number) => {
		const met = figure.ratio.median <= limit;
		lines.push(`| ${label} | ${spread(figure.bytesPerAgent.agentchart, kib)} | ${spread(figure.bytesPerAgent.pi, kib)} | ${ratio(figure.ratio)} | ≤ ${fixed(limit, 1)}× | ${verdictText(met)} |`);
		checks.push({ figure: `retained heap, ${label} (ours / pi)`, target: `≤ ${fixed(limit, 1)}×`, measured: ratio(figure.ratio), met });
	};
	row("idle (constructed, never prompted)", result.idle, TARGETS.idleVsPi);
	row("after one short run", result.afterRun, TARGETS.afterRunVsPi);
	return lines;
}

function concurrencySection(result: ConcurrencyResult, checks: TargetCheck[]): string[] {
	const lines: string[] = [];
	lines.push(
		`**4. ${grouped(result.agents)} concurrent agents × ${result.turns} tool turns each (1 text delta + 1 tool call per turn, the tool yields once to the event loop), started together and awaited with Promise.all, after ${result.warmupRounds} warm-up rounds of ${grouped(result.warmupAgents)} agents; one child process per library and round (${rounds(result.repetitions)}; peak by ${result.peakMethod})**`,
	);
	lines.push("");
	lines.push("| figure | agentchart | pi | ours / pi | target | verdict |");
	lines.push("|---|---:|---:|---:|---|---|");
	const wallMet = result.wallRatio.median <= TARGETS.concurrentWallVsPi;
	const rssMet = result.peakRssRatio.median <= TARGETS.concurrentRssVsPi;
	const growthMet = result.rssGrowthRatio.median <= TARGETS.concurrentRssVsPi;
	const ms = (value: number) => grouped(value);
	lines.push(
		`| wall ms (build + run all) | ${spread(result.wallMs.agentchart, ms)} | ${spread(result.wallMs.pi, ms)} | ${ratio(result.wallRatio)} | ≤ ${fixed(TARGETS.concurrentWallVsPi, 1)}× | ${verdictText(wallMet)} |`,
	);
	const first = result.afterOneWarmupRound;
	if (first) {
		lines.push(
			`| wall ms, the burst after a single warm-up round (V8 still compiling; no target) | ${spread(first.wallMs.agentchart, ms)} | ${spread(first.wallMs.pi, ms)} | ${ratio(first.wallRatio)} | | |`,
		);
	}
	lines.push(
		`| peak RSS, whole process | ${spread(result.peakRssBytes.agentchart, mib)} | ${spread(result.peakRssBytes.pi, mib)} | ${ratio(result.peakRssRatio)} | ≤ ${fixed(TARGETS.concurrentRssVsPi, 1)}× | ${verdictText(rssMet)} |`,
	);
	lines.push(
		`| peak RSS above the warmed-up baseline | ${spread(result.rssGrowthBytes.agentchart, mib)} | ${spread(result.rssGrowthBytes.pi, mib)} | ${ratio(result.rssGrowthRatio)} | ≤ ${fixed(TARGETS.concurrentRssVsPi, 1)}× (stricter reading) | ${verdictText(growthMet)} |`,
	);
	lines.push(
		`| largest heap in use above the baseline (sampled every 5 ms; no target) | ${spread(result.heapGrowthBytes.agentchart, mib)} | ${spread(result.heapGrowthBytes.pi, mib)} | | | |`,
	);
	lines.push(
		`| young generation at the end of the burst, as V8 grew it (no target) | ${spread(result.youngGenerationBytes.agentchart, mib)} | ${spread(result.youngGenerationBytes.pi, mib)} | | | |`,
	);
	const capped = result.cappedYoungGeneration;
	const flag = capped ? `\`--max-semi-space-size=${capped.semiSpaceMiB}\`` : "";
	if (capped) {
		lines.push(`| wall ms, both with ${flag} (no target) | ${spread(capped.wallMs.agentchart, ms)} | ${spread(capped.wallMs.pi, ms)} | ${ratio(capped.wallRatio)} | | |`);
		lines.push(`| peak RSS, whole process, both with ${flag} (no target) | ${spread(capped.peakRssBytes.agentchart, mib)} | ${spread(capped.peakRssBytes.pi, mib)} | ${ratio(capped.peakRssRatio)} | | |`);
	}
	lines.push("");
	lines.push(
		"The whole-process peak includes Node, tsx and the library's modules (the same order of size for both); the growth above the baseline is what the running agents themselves add.",
	);
	if (capped) {
		lines.push("");
		lines.push(
			`With ${flag} each child's young generation stays at ${capped.semiSpaceMiB * 2} MiB. V8 grows it as more of what a process allocates survives its collections, and Node 24's V8 grows it further: the difference between a library's two peaks is young generation V8 chose to keep, which the same agents run without (compare the two wall times).`,
		);
	}
	checks.push({ figure: `${grouped(result.agents)} concurrent agents, wall (ours / pi)`, target: `≤ ${fixed(TARGETS.concurrentWallVsPi, 1)}×`, measured: ratio(result.wallRatio), met: wallMet });
	checks.push({ figure: `${grouped(result.agents)} concurrent agents, peak RSS (ours / pi)`, target: `≤ ${fixed(TARGETS.concurrentRssVsPi, 1)}×`, measured: ratio(result.peakRssRatio), met: rssMet });
	checks.push({
		figure: `${grouped(result.agents)} concurrent agents, RSS growth over baseline (ours / pi)`,
		target: `≤ ${fixed(TARGETS.concurrentRssVsPi, 1)}× (stricter reading)`,
		measured: ratio(result.rssGrowthRatio),
		met: growthMet,
	});
	return lines;
}

function inspectorSection(result: InspectorResult, checks: TargetCheck[]): string[] {
	const lines: string[] = [];
	lines.push(
		`**5. Inspector: one ${sizeLabel(result.deltas)}-delta message, \`createAgentInspector().attach(agent.actor)\` vs detached; the attached time includes the inspector's flush (${rounds(result.ms.detached.samples.length)})**`,
	);
	lines.push("");
	lines.push("| detached ms | attached ms | attached / detached | target | verdict | raw inspection events per delta | records per delta |");
	lines.push("|---:|---:|---:|---|---|---:|---:|");
	const met = result.ratio.median <= TARGETS.inspectorAttached;
	const ms = (value: number) => fixed(value, 1);
	lines.push(
		`| ${spread(result.ms.detached, ms)} | ${spread(result.ms.attached, ms)} | ${ratio(result.ratio)} | ≤ ${fixed(TARGETS.inspectorAttached, 1)}× | ${verdictText(met)} | ${fixed(result.eventsPerDelta)} | ${fixed(result.recordsPerDelta)} |`,
	);
	checks.push({ figure: `inspector attached / detached (${sizeLabel(result.deltas)} deltas)`, target: `≤ ${fixed(TARGETS.inspectorAttached, 1)}×`, measured: ratio(result.ratio), met });
	return lines;
}

function overlapSection(rows: OverlapRow[]): string[] {
	const lines: string[] = [];
	lines.push("**6. Tool-heavy turn: 3 tool calls streamed over ~300 ms, each tool ~200 ms; ideal = last `toolcall_end` + tool time (medians)**");
	lines.push("");
	lines.push("| variant | wall ms | ideal ms | wall / ideal | first tool started at ms | model done at ms |");
	lines.push("|---|---:|---:|---:|---:|---:|");
	for (const row of rows) {
		if (!row.available) {
			lines.push(`| ${row.variant} | not available (ran as parallel) | | | | |`);
			continue;
		}
		lines.push(`| ${row.variant} | ${fixed(row.wallMs, 0)} | ${fixed(row.idealMs, 0)} | ${fixed(row.ratio)} | ${fixed(row.firstToolStartMs, 0)} | ${fixed(row.streamDoneMs, 0)} |`);
	}
	return lines;
}

/**
 * The durable bench's tables (issue 35); its targets join `checks`.
 *
 * @example
 * console.log(formatDurable(result, []).join("\n"));
 */
export function formatDurable(result: DurableResult, checks: TargetCheck[]): string[] {
	const us = (value: number) => fixed(value, 0);
	const lines: string[] = [];
	lines.push(`**9. Durable runs: a 3-tool turn on a fresh session with each store (${grouped(result.memoryPrompts)} prompts a block without a store and with the memory store, ${grouped(result.prompts)} with the file store; µs per prompt including the store's last save; ${rounds(result.turnUs.none.samples.length)} with the file store, ${rounds(result.turnUs.memory.samples.length)} of the memory store beside no store)**`);
	lines.push("");
	lines.push("| store | CPU µs per prompt | CPU over no store | target | verdict | wall µs per prompt | wall over no store |");
	lines.push("|---|---:|---:|---|---|---:|---:|");
	for (const variant of Object.keys(result.turnUs) as StoreVariant[]) {
		const none = variant === "none";
		const name = variant === "memory" ? `memory, a new session (no store in its rounds: ${spread(result.memoryNoneCpuUs, us)})` : variant;
		lines.push(`| ${name} | ${spread(result.turnCpuUs[variant], us)} | ${none ? "" : ratio(result.turnCpuRatio[variant])} | ${variant === "memory" ? "see below" : ""} |  | ${spread(result.turnUs[variant], us)} | ${none ? "" : ratio(result.turnRatio[variant])} |`);
		if (variant === "memory") lines.push(`| memory, ongoing session (its 2nd prompt; no store: ${spread(result.ongoingCpuUs.none, us)}) | ${spread(result.ongoingCpuUs.memory, us)} | ${ratio(result.ongoingCpuRatio)} | see below | | | |`);
	}
	lines.push("");
	lines.push("The memory store is measured in rounds of its own, a block with it and one without a store back to back: its blocks take milliseconds, and beside a file store's block (its garbage, its disk's callbacks) a ratio would say more about how the file store left the process than about the memory store.");
	lines.push("");
	const solo = result.solo;
	const newMet = solo.newRatio.median <= TARGETS.memoryStoreTurn;
	const ongoingMet = solo.ongoingRatio.median <= TARGETS.memoryStoreTurn;
	lines.push(`The memory store and no store, each alone in a process of its own, as an application has one or the other (${solo.repetitions} child process${solo.repetitions === 1 ? "" : "es"} per variant, alternating; each times ${solo.rounds} blocks of ${grouped(result.memoryPrompts)} prompts after as many untimed; CPU µs per prompt, the median of a process's blocks; the ratio per pair of processes):`);
	lines.push("");
	lines.push("| prompt | no store, CPU µs | memory store, CPU µs | memory / none | target | verdict |");
	lines.push("|---|---:|---:|---:|---|---|");
	lines.push(`| a new session's first | ${spread(solo.newCpuUs.none, us)} | ${spread(solo.newCpuUs.memory, us)} | ${ratio(solo.newRatio)} | ≤ ${fixed(TARGETS.memoryStoreTurn, 2)}× | ${verdictText(newMet)} |`);
	lines.push(`| an ongoing session's (its 2nd) | ${spread(solo.ongoingCpuUs.none, us)} | ${spread(solo.ongoingCpuUs.memory, us)} | ${ratio(solo.ongoingRatio)} | ≤ ${fixed(TARGETS.memoryStoreTurn, 2)}× | ${verdictText(ongoingMet)} |`);
	lines.push("");
	lines.push("Why both: how fast a process runs a turn depends on what it has run before (what its heap holds, what V8 decided from it), and a process running both variants shares that between them: the rounds in one process above show the store's own work, these what adding a store costs an application. See docs/performance.md, \"What durable runs cost\".");
	lines.push("");
	lines.push("A new session saves the agent as its first prompt finds it (nothing is stored yet), one snapshot; after that its runs are journaled (the prompt, and what the run added), so an ongoing session's turn takes no snapshot until the journal after the last one holds 256 entries (or, in a longer transcript, as many as it has messages).");
	lines.push("");
	lines.push("The file store's wall time is the disk's: with `fsync: \"always\"` each of a turn's 10 journal entries waits for its flush before the effect goes on; a model call takes hundreds of milliseconds, so the cost shows only against an instant scripted model.");
	lines.push("");
	const perMessage = (bytes: number) => fixed((bytes - result.snapshotBytes.transcript) / 1024, 1);
	lines.push(`**10. Snapshots and restore: a session of ${grouped(result.messages)} messages (${kib(result.snapshotBytes.transcript)} of transcript JSON, ${fixed(result.snapshotBytes.transcript / result.messages, 0)} bytes a message)**`);
	lines.push("");
	lines.push("| session | snapshot JSON | beyond the transcript | restore ms (JSON.parse + Agent.restore) | target | verdict |");
	lines.push("|---|---:|---:|---:|---|---|");
	const ms = (value: number) => fixed(value, 1);
	for (const name of ["idle", "awaiting"] as const) {
		const met = result.restoreMs[name].median <= TARGETS.restoreMs;
		lines.push(`| ${name === "idle" ? "idle" : "waiting for approval"} | ${kib(result.snapshotBytes[name])} | ${perMessage(result.snapshotBytes[name])} KiB | ${spread(result.restoreMs[name], ms)} | ≤ ${TARGETS.restoreMs} ms | ${verdictText(met)} |`);
		checks.push({ figure: `restore a ${grouped(result.messages)}-message session (${name === "idle" ? "idle" : "waiting for approval"})`, target: `≤ ${TARGETS.restoreMs} ms`, measured: spread(result.restoreMs[name], (value) => `${ms(value)} ms`), met });
	}
	checks.push({ figure: "3-tool turn with the memory store, CPU over no store (each alone in its process), a new session", target: `≤ ${fixed(TARGETS.memoryStoreTurn, 2)}×`, measured: ratio(solo.newRatio), met: newMet });
	checks.push({ figure: "3-tool turn with the memory store, CPU over no store (each alone in its process), an ongoing session", target: `≤ ${fixed(TARGETS.memoryStoreTurn, 2)}×`, measured: ratio(solo.ongoingRatio), met: ongoingMet });
	return lines;
}

/**
 * The summary: the run's header, one markdown table per benchmark, then all targets with
 * met / missed.
 *
 * @example
 * console.log(formatResults(results, "npm run bench"));
 */
export function formatResults(results: BenchResults, command: string): string {
	const lines: string[] = [];
	const checks: TargetCheck[] = [];
	lines.push(`Measured with \`${command}\` on ${results.environment}.`);
	lines.push(
		`Rounds ordered by seed ${results.seed} (\`--seed ${results.seed}\` repeats the order). A figure is the median of its rounds with (min–max); a ratio is taken within each round, where the contenders ran back to back in a balanced shuffled order, then summarized. Verdicts are on the median. A timed sample starts after a young-generation collection (a full one would shrink the young generation and slow what runs next); memory figures are taken after full collections.`,
	);
	if (results.quick) lines.push("Quick mode: small sizes, one round; the figures only show that everything runs.");
	const section = (body: string[]) => {
		lines.push("");
		lines.push(...body);
	};
	if (results.throughput) section(throughputSection(results.throughput, checks));
	if (results.turnOverhead) section(turnSection(results.turnOverhead, checks));
	if (results.memory) section(memorySection(results.memory, checks));
	if (results.concurrency) section(concurrencySection(results.concurrency, checks));
	if (results.inspector) section(inspectorSection(results.inspector, checks));
	if (results.overlap) section(overlapSection(results.overlap));
	if (results.replyChunker) {
		const { longReply } = results.replyChunker;
		const met = longReply.growth <= TARGETS.longReplyGrowth;
		section([`**7. Reply layer: the block chunker, and a long streamed reply**`, "", formatReplyChunker(results.replyChunker), "", `Target for each: at most ${fixed(TARGETS.longReplyGrowth, 1)}× (a delta's cost must not grow with the text before it): ${verdictText(met)}.`]);
		checks.push({ figure: `reply layer, µs per delta of a ${grouped(longReply.deltas[1])}-delta reply over a ${grouped(longReply.deltas[0])}-delta one's (the larger of partial replies and streamed reasoning)`, target: `≤ ${fixed(TARGETS.longReplyGrowth, 1)}×`, measured: `${fixed(longReply.growth)}×`, met });
	}
	if (results.soak) {
		const prompts = results.soak.samples.at(-1)?.prompts ?? 0;
		section([`**8. Long session: one agent, ${grouped(prompts)} prompts with a tool call each; heap after a full collection (child process)**`, "", formatSoak(results.soak)]);
	}
	if (results.durable) section(formatDurable(results.durable, checks));
	if (results.restate) section(["**11. Agent sessions on Restate: the cost per 3-tool turn over a bare Restate handler making the same steps, and sessions per second across two workers (local restate-server)**", "", formatRestate(results.restate)]);
	if (checks.length > 0) {
		const met = checks.filter((check) => check.met).length;
		section([
			`**Targets: ${met} of ${checks.length} met**`,
			"",
			"| figure | target | measured, median (min–max) | verdict |",
			"|---|---|---:|---|",
			...checks.map((check) => `| ${check.figure} | ${check.target} | ${check.measured} | ${verdictText(check.met)}${check.note ? ` ${check.note}` : ""} |`),
		]);
	}
	return lines.join("\n");
}

/**
 * The whole `bench/results.md`.
 *
 * @example
 * await writeFile("bench/results.md", resultsDocument(results, "npm run bench"));
 */
export function resultsDocument(results: BenchResults, command: string): string {
	return `# Benchmark results\n\nWritten by \`${command}\` (bench/run.ts); do not edit by hand.\n\n${formatResults(results, command)}\n`;
}
