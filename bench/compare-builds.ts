/**
 * Two builds of agentchart side by side in one process, for a change's A/B: both `dist/`
 * directories are loaded, and blocks of each alternate (A then B, then B then A), with a
 * young-generation collection before each block; the figure is B over A per pair of blocks,
 * summarized as the median and interquartile range. On a shared machine this finds a few percent
 * that whole runs of `npm run bench`, minutes apart, cannot.
 *
 * What is measured (CPU time, user + system):
 * - `turn`: benchmark 2's prompt (a reply with 3 instant tool calls, then a 1-delta reply), fresh agents;
 * - `turn-listened`: the same with a listener subscribed to each agent (one that returns nothing);
 * - `turn-streaming` and `turn-streaming-listened`: those two with `toolExecution: "streaming"`;
 * - `durable-new`: the same prompt on a new session with the memory store, over the same without a store;
 * - `durable-ongoing`: the same, each agent's second prompt;
 * - `deltas-1k` and `deltas-10k`: benchmark 1's message of 1,000 or 10,000 text deltas to a no-op
 *   listener, CPU µs per message (a block of 200 or 20 messages, each on a fresh agent);
 * - `inspector`: a 10k-delta message with `createAgentInspector().attach(agent.actor)`, over detached;
 * - `file-reload` and `file-new-never`: wall time of `Agent.load`, the same prompt and `saved()` on
 *   the file store, a session loaded again (`fsync: "always"`) or a new one per prompt (`"never"`).
 *
 * For the two `durable-` and `inspector`, B/A compares each build's own ratio (with the store, or
 * attached, over without), so what a build costs elsewhere cancels out.
 *
 * Build the other commit in a worktree (`git worktree add ../old <commit> && cd ../old && npm ci &&
 * npm run build`), then, from this checkout after `npm run build`:
 * `npx tsx --expose-gc bench/compare-builds.ts ../old/dist dist turn [pairs]`. Both builds resolve
 * their own `xstate`, which is one module when both directories live in one checkout.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { instantTool } from "./lib/contenders.js";
import { isEntryPoint } from "./lib/child.js";
import { collectYoungGarbage } from "./lib/stats.js";
import { benchModel, prebuiltStreamFn, textReplyEvents, toolTurnStreamFn } from "./lib/streams.js";
import { rerunOnSupportedNode } from "./lib/supported-node.js";

type Agentchart = typeof import("../src/index.js");
type AgentchartInspect = typeof import("../src/inspect/index.js");

/** What can be compared. */
export const MEASURES = ["turn", "turn-listened", "turn-streaming", "turn-streaming-listened", "deltas-1k", "deltas-10k", "durable-new", "durable-ongoing", "inspector", "file-reload", "file-new-never"] as const;
export type Measure = (typeof MEASURES)[number];

interface Build {
	lib: Agentchart;
	inspect: AgentchartInspect;
}

async function loadBuild(dist: string): Promise<Build> {
	const url = (path: string) => pathToFileURL(resolve(dist, path)).href;
	return { lib: (await import(url("index.js"))) as Agentchart, inspect: (await import(url("inspect/index.js"))) as AgentchartInspect };
}

const model = benchModel();
const tool = instantTool("noop");
const turnStream = toolTurnStreamFn(model, { turns: 1, callsPerTurn: 3, toolName: tool.name });
const longMessage = prebuiltStreamFn(textReplyEvents(model, 10_000));
const shortMessage = prebuiltStreamFn(textReplyEvents(model, 1_000));

/** CPU µs per message of `count` fresh agents of `build`, each streaming one message to a no-op listener. */
async function messageBlock(build: Build, count: number, streamFn: typeof longMessage): Promise<number> {
	const agents = Array.from({ length: count }, () => {
		const agent = new build.lib.Agent({ initialState: { model }, streamFn });
		agent.subscribe(() => {});
		return agent;
	});
	collectYoungGarbage();
	const start = process.cpuUsage();
	for (const agent of agents) await agent.prompt("go");
	const used = process.cpuUsage(start);
	return (used.user + used.system) / count;
}

/** CPU µs per prompt of `prompts` fresh agents of `build`, with the memory store or not, first or second prompt, listened to or not, in a tool execution mode. */
async function promptBlock(build: Build, prompts: number, store: boolean, second: boolean, listened = false, toolExecution: "parallel" | "streaming" = "parallel"): Promise<number> {
	const memory = store ? build.lib.createMemoryStore() : undefined;
	const agents = Array.from({ length: prompts }, (_, index) => new build.lib.Agent({ initialState: { model, tools: [tool] }, streamFn: turnStream, toolExecution, ...(memory ? { store: memory, sessionId: `s${index}` } : {}) }));
	if (listened) for (const agent of agents) agent.subscribe(() => {});
	if (second) {
		for (const agent of agents) await agent.prompt("go");
		await Promise.all(agents.map((agent) => agent.saved()));
	}
	collectYoungGarbage();
	const start = process.cpuUsage();
	for (const agent of agents) await agent.prompt("go");
	await Promise.all(agents.map((agent) => agent.saved()));
	const used = process.cpuUsage(start);
	return (used.user + used.system) / prompts;
}

/** CPU µs of one 10k-delta message, attached or not. */
async function messageOnce(build: Build, attached: boolean): Promise<number> {
	const agent = new build.lib.Agent({ initialState: { model }, streamFn: longMessage });
	agent.subscribe(() => {});
	const inspector = attached ? build.inspect.createAgentInspector() : undefined;
	const detach = inspector?.attach(agent.actor);
	collectYoungGarbage();
	const start = process.cpuUsage();
	await agent.prompt("go");
	inspector?.flush();
	const used = process.cpuUsage(start);
	detach?.();
	agent.dispose();
	return used.user + used.system;
}

/** Wall µs per prompt on the file store: `Agent.load`, the prompt, `saved()`; sessions loaded once before (`reload`) or new. */
async function fileBlock(build: Build, prompts: number, fsync: "always" | "never", reload: boolean): Promise<number> {
	const dir = await mkdtemp(join(tmpdir(), "agentchart-compare-"));
	try {
		const store = build.lib.createFileStore(dir, { fsync });
		const one = async (index: number) => {
			const agent = await build.lib.Agent.load({ store, sessionId: `s${index}`, initialState: { model, tools: [tool] }, streamFn: turnStream });
			await agent.prompt("go");
			await agent.saved();
		};
		if (reload) for (let index = 0; index < prompts; index++) await one(index);
		const start = performance.now();
		for (let index = 0; index < prompts; index++) await one(index);
		return ((performance.now() - start) * 1000) / prompts;
	} finally {
		await rm(dir, { recursive: true, force: true });
	}
}

/** One build's figure for a block: µs per prompt (`turn`) or message (`deltas-`), or a ratio over its own baseline. */
async function figure(build: Build, measure: Measure): Promise<number> {
	switch (measure) {
		case "turn":
			return promptBlock(build, 300, false, false);
		case "turn-listened":
			return promptBlock(build, 300, false, false, true);
		case "turn-streaming":
			return promptBlock(build, 300, false, false, false, "streaming");
		case "turn-streaming-listened":
			return promptBlock(build, 300, false, false, true, "streaming");
		case "deltas-1k":
			return messageBlock(build, 200, shortMessage);
		case "deltas-10k":
			return messageBlock(build, 20, longMessage);
		case "durable-new":
		case "durable-ongoing": {
			const second = measure === "durable-ongoing";
			const none = await promptBlock(build, 300, false, second);
			return (await promptBlock(build, 300, true, second)) / none;
		}
		case "inspector": {
			const detached = await messageOnce(build, false);
			return (await messageOnce(build, true)) / detached;
		}
		case "file-reload":
			return fileBlock(build, 40, "always", true);
		case "file-new-never":
			return fileBlock(build, 40, "never", false);
	}
}

function quantile(values: readonly number[], q: number): number {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.floor(q * (sorted.length - 1))] ?? Number.NaN;
}

/**
 * B over A for `measure`, per pair of blocks, after `warmups` unrecorded pairs.
 *
 * @example
 * const { median } = await compareBuilds("../old/dist", "dist", "turn", 100);
 */
export async function compareBuilds(distA: string, distB: string, measure: Measure, pairs: number, warmups = 10): Promise<{ a: number; b: number; median: number; q1: number; q3: number }> {
	const [a, b] = [await loadBuild(distA), await loadBuild(distB)];
	const ratios: number[] = [];
	const as: number[] = [];
	const bs: number[] = [];
	for (let pair = -warmups; pair < pairs; pair++) {
		const first = pair % 2 === 0 ? a : b;
		const one = await figure(first, measure);
		const two = await figure(first === a ? b : a, measure);
		const [fa, fb] = first === a ? [one, two] : [two, one];
		if (pair < 0) continue;
		as.push(fa);
		bs.push(fb);
		ratios.push(fb / fa);
	}
	return { a: quantile(as, 0.5), b: quantile(bs, 0.5), median: quantile(ratios, 0.5), q1: quantile(ratios, 0.25), q3: quantile(ratios, 0.75) };
}

if (isEntryPoint(import.meta.url)) {
	const rerun = await rerunOnSupportedNode();
	if (rerun !== undefined) process.exit(rerun);
	const [distA, distB, measure = "turn", pairsText = "100"] = process.argv.slice(2);
	if (!distA || !distB || !(MEASURES as readonly string[]).includes(measure)) {
		throw new Error(`usage: npx tsx --expose-gc bench/compare-builds.ts <distA> <distB> [${MEASURES.join("|")}] [pairs]`);
	}
	const pairs = Number(pairsText);
	if (!Number.isInteger(pairs) || pairs < 1) throw new Error(`bench/compare-builds.ts: pairs must be a whole number of at least 1, not '${pairsText}'`);
	const result = await compareBuilds(distA, distB, measure as Measure, pairs);
	const perPrompt = measure.startsWith("turn") || measure.startsWith("file-") || measure.startsWith("deltas-");
	const unit = measure.startsWith("file-") ? " µs per prompt (wall)" : measure.startsWith("deltas-") ? " µs per message" : perPrompt ? " µs per prompt" : "× over its own baseline";
	console.log(`${measure}: A ${result.a.toFixed(perPrompt ? 1 : 3)}${unit}, B ${result.b.toFixed(perPrompt ? 1 : 3)}${unit}; B/A ${result.median.toFixed(3)} (interquartile ${result.q1.toFixed(3)}–${result.q3.toFixed(3)}) over ${pairs} pairs`);
}
