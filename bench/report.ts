/**
 * Turns benchmark results into the summary table (console) and `bench/results.md`.
 */
import os from "node:os";
import type { MemoryResult } from "./memory.js";
import type { ThroughputRow } from "./throughput.js";
import type { ToolLoopResult } from "./tool-loop.js";
import type { OverlapRow } from "./tool-overlap.js";
import { formatReplyChunker, type ReplyChunkerResult } from "./reply-chunker.js";
import { formatSoak, type SoakResult } from "./soak.js";

/** Everything one run measured. */
export interface BenchResults {
	quick: boolean;
	throughput: ThroughputRow[];
	toolLoop: ToolLoopResult;
	memory: MemoryResult;
	overlap: OverlapRow[];
	replyChunker: ReplyChunkerResult;
	soak: SoakResult;
}

/** Targets from issue 7. */
const TARGETS = {
	/** ours / pi deltas per second, at least. */
	throughputVsPi: 1,
	/** ns/delta at the largest size / at the smallest, at most. */
	flatness: 1.2,
	/** ours / pi bytes per agent, at most. */
	memoryVsPi: 2,
};

const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
const thousands = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString("en-US") : "n/a");
const sizeLabel = (deltas: number) => (deltas >= 1000 && deltas % 1000 === 0 ? `${deltas / 1000}k` : String(deltas));
const verdict = (met: boolean) => (met ? "met" : "**missed**");

/** The machine, Node version and date, for the header of the results. */
export function environmentLine(): string {
	const cpus = os.cpus();
	return `${cpus[0]?.model.trim() ?? "unknown CPU"}, ${cpus.length} cores, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`;
}

/**
 * The summary: per benchmark a markdown table with ours / pi and ours / floor ratios, then
 * the targets with met / missed.
 *
 * @example
 * console.log(formatResults(results));
 */
export function formatResults(results: BenchResults, command: string): string {
	const lines: string[] = [];
	lines.push(`Measured with \`${command}\` on ${environmentLine()}.`);
	lines.push("Medians of interleaved repetitions after warm-up, all contenders side by side in one process.");
	lines.push("");
	lines.push("**1. Text deltas per second, stream function to one listener**");
	lines.push("");
	lines.push("| deltas | agentchart /s | pi /s | floor /s | agentchart ns/delta | pi ns/delta | floor ns/delta | ours / pi (throughput) | ours / floor (time) |");
	lines.push("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
	for (const row of results.throughput) {
		const { agentchart, pi, floor } = row.deltasPerSecond;
		lines.push(
			`| ${sizeLabel(row.deltas)} | ${thousands(agentchart)} | ${thousands(pi)} | ${thousands(floor)} | ${thousands(row.nsPerDelta.agentchart)} | ${thousands(row.nsPerDelta.pi)} | ${thousands(row.nsPerDelta.floor)} | ${fixed(agentchart / pi)} | ${fixed(row.nsPerDelta.agentchart / row.nsPerDelta.floor, 1)} |`,
		);
	}
	const first = results.throughput[0];
	const last = results.throughput[results.throughput.length - 1];
	const flatness = (name: "agentchart" | "pi" | "floor") => (first && last ? last.nsPerDelta[name] / first.nsPerDelta[name] : Number.NaN);
	lines.push("");
	lines.push(
		`Per-delta cost at ${sizeLabel(last?.deltas ?? 0)} / at ${sizeLabel(first?.deltas ?? 0)}: agentchart ${fixed(flatness("agentchart"))}, pi ${fixed(flatness("pi"))}, floor ${fixed(flatness("floor"))} (1.00 = flat).`,
	);
	lines.push("");
	const loop = results.toolLoop.usPerTurn;
	lines.push(`**2. Overhead per turn, ${results.toolLoop.turns}-turn tool loop (one trivial tool call per turn)**`);
	lines.push("");
	lines.push("| agentchart µs/turn | pi µs/turn | floor µs/turn | ours / pi | ours / floor |");
	lines.push("|---:|---:|---:|---:|---:|");
	lines.push(`| ${fixed(loop.agentchart, 0)} | ${fixed(loop.pi, 0)} | ${fixed(loop.floor, 0)} | ${fixed(loop.agentchart / loop.pi, 1)} | ${fixed(loop.agentchart / loop.floor, 1)} |`);
	lines.push("");
	const memory = results.memory;
	lines.push(`**3. Retained heap per idle agent (constructed + one short prompt), ${thousands(memory.agents)} live agents${memory.exact ? "" : " — gc not exposed, approximate"}**`);
	lines.push("");
	lines.push("| | agentchart | pi | floor (transcript only) | ours / pi | ours / floor |");
	lines.push("|---|---:|---:|---:|---:|---:|");
	const mb = (bytes: number) => `${fixed(bytes / 1e6, 2)} MB`;
	const kb = (bytes: number) => `${fixed(bytes / 1024, 1)} KiB`;
	const { bytesPerAgent: per, bytesTotal: total } = memory;
	lines.push(`| per agent | ${kb(per.agentchart)} | ${kb(per.pi)} | ${kb(per.floor)} | ${fixed(per.agentchart / per.pi)} | ${fixed(per.agentchart / per.floor, 1)} |`);
	lines.push(`| ${thousands(memory.agents)} agents | ${mb(total.agentchart)} | ${mb(total.pi)} | ${mb(total.floor)} | | |`);
	lines.push("");
	lines.push("**4. Tool-heavy turn: 3 tool calls streamed over ~300 ms, each tool ~200 ms; ideal = last `toolcall_end` + tool time**");
	lines.push("");
	lines.push("| variant | wall ms | ideal ms | wall / ideal | first tool started at ms | model done at ms |");
	lines.push("|---|---:|---:|---:|---:|---:|");
	for (const row of results.overlap) {
		if (!row.available) {
			lines.push(`| ${row.variant} | not available (ran as parallel) | | | | |`);
			continue;
		}
		lines.push(`| ${row.variant} | ${fixed(row.wallMs, 0)} | ${fixed(row.idealMs, 0)} | ${fixed(row.ratio)} | ${fixed(row.firstToolStartMs, 0)} | ${fixed(row.streamDoneMs, 0)} |`);
	}
	lines.push("");
	lines.push("**5. Reply chunker: one forced drain of a 200 KB fenced reply**");
	lines.push("");
	lines.push(formatReplyChunker(results.replyChunker));
	lines.push("");
	lines.push(`**6. Long session: one agent, ${results.soak.samples.at(-1)?.prompts.toLocaleString("en-US") ?? 0} prompts with a tool call each; heap after a full collection**`);
	lines.push("");
	lines.push(formatSoak(results.soak));
	lines.push("");
	lines.push("**Targets**");
	lines.push("");
	const worstThroughput = Math.min(...results.throughput.map((row) => row.deltasPerSecond.agentchart / row.deltasPerSecond.pi));
	lines.push(`- Throughput at least pi's: ${verdict(worstThroughput >= TARGETS.throughputVsPi)} (worst ours / pi = ${fixed(worstThroughput)}).`);
	lines.push(`- Per-delta cost flat within 20 % from smallest to largest message: ${verdict(flatness("agentchart") <= TARGETS.flatness)} (${fixed(flatness("agentchart"))}).`);
	const memoryRatio = per.agentchart / per.pi;
	lines.push(`- Memory per agent within 2× pi's: ${verdict(memoryRatio <= TARGETS.memoryVsPi)} (${fixed(memoryRatio)}×).`);
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
