/**
 * A diagnosis, not a benchmark with targets: where a short run's time goes, and how much memory
 * agents hold while they are mid-run. It backs the README's explanation of the missed time
 * targets (issue 14) with numbers anyone can reproduce:
 *
 * 1. CPU profile (node:inspector) of many short runs (a new agent, one prompt, a 1-delta reply),
 *    self time by where the code lives: XState, agentchart's `dist/` by directory, Node's
 *    internals, garbage collection.
 * 2. Live heap per agent while 1,000 agents all sit inside a tool call, after a full
 *    collection, for both libraries (what the peak RSS of the concurrency benchmark would be if
 *    garbage were collected at once).
 * 3. The least a run can cost on XState: an actor created, started and stopped, with two
 *    events, one invoked child, two emits and an assign, against a whole short run of each
 *    library. No chart run by XState v5 with an actor per run can cost less than that.
 *
 * Run: `npm run build && npx tsx --expose-gc bench/where-time-goes.ts`.
 */
import { Session } from "node:inspector/promises";
import { assign, createActor, emit, fromCallback, setup } from "xstate";
import { type AgentName, type BenchAgentFactory, instantTool, loadBenchAgentFactory } from "./lib/contenders.js";
import { isEntryPoint } from "./lib/child.js";
import { collectGarbage, nextTurnOfTheLoop } from "./lib/stats.js";
import { benchModel, prebuiltStreamFn, textReplyEvents, toolTurnStreamFn } from "./lib/streams.js";

interface ProfileNode {
	id: number;
	callFrame: { functionName: string; url: string };
}
interface Profile {
	nodes: ProfileNode[];
	samples: number[];
	timeDeltas: number[];
}

/** The bucket a profile node's self time is charged to. */
function bucketOf(node: ProfileNode): string {
	const { url, functionName } = node.callFrame;
	if (url.includes("node_modules/xstate/")) return "XState";
	const ours = /\/dist\/([^/]+)/.exec(url);
	if (ours && !url.includes("node_modules")) return `agentchart dist/${ours[1]}`;
	if (url.startsWith("node:internal/abort_controller") || url.startsWith("node:internal/event_target")) return "Node AbortController / EventTarget";
	if (url.startsWith("node:")) return "Node, other";
	if (url === "") return functionName === "(garbage collector)" ? "garbage collection" : `V8 ${functionName || "(anonymous)"}`;
	return "other (bench, tsx)";
}

/**
 * One short run of a library, as a function to call many times: a new agent with a no-op
 * listener, one prompt, a reply of one text delta.
 *
 * @example
 * const run = shortRun(await loadBenchAgentFactory("pi")); await run();
 */
export function shortRun(create: BenchAgentFactory): () => Promise<void> {
	const model = benchModel();
	const streamFn = prebuiltStreamFn(textReplyEvents(model, 1));
	return async () => {
		const agent = create({ streamFn, model });
		agent.subscribe(() => {});
		await agent.prompt("go");
	};
}

/**
 * Profiles `runs` short runs of agentchart (after `warmups` unprofiled ones) and returns self
 * time per bucket, as a share of all samples, largest first.
 *
 * @example
 * const shares = await profileShortRuns(20_000);
 */
export async function profileShortRuns(runs: number, warmups = 2_000): Promise<[string, number][]> {
	const once = shortRun(await loadBenchAgentFactory("agentchart"));
	for (let i = 0; i < warmups; i++) await once();
	const session = new Session();
	session.connect();
	await session.post("Profiler.enable");
	await session.post("Profiler.start");
	for (let i = 0; i < runs; i++) await once();
	const { profile } = (await session.post("Profiler.stop")) as unknown as { profile: Profile };
	session.disconnect();
	const bucketById = new Map(profile.nodes.map((node) => [node.id, bucketOf(node)]));
	const time = new Map<string, number>();
	let total = 0;
	profile.samples.forEach((id, index) => {
		const dt = profile.timeDeltas[index] ?? 0;
		const bucket = bucketById.get(id) ?? "unknown";
		time.set(bucket, (time.get(bucket) ?? 0) + dt);
		total += dt;
	});
	return [...time].map(([bucket, t]): [string, number] => [bucket, t / total]).sort((a, b) => b[1] - a[1]);
}

/**
 * Heap per agent (KiB) after a full collection, for `count` agents constructed, and again with
 * all of them inside a tool call of a 5-turn run.
 *
 * @example
 * const { idleKiB, midRunKiB } = await liveHeapMidRun("pi", 1_000);
 */
export async function liveHeapMidRun(name: AgentName, count: number): Promise<{ idleKiB: number; midRunKiB: number }> {
	const create = await loadBenchAgentFactory(name);
	const model = benchModel();
	let entered = 0;
	let release = () => {};
	let gate = Promise.resolve();
	const tool = instantTool("step", async () => {
		entered++;
		await gate;
	});
	const build = () => {
		const agent = create({ model, systemPrompt: "You are a benchmark.", tools: [tool], streamFn: toolTurnStreamFn(model, { turns: 5, callsPerTurn: 1, toolName: "step" }) });
		agent.subscribe(() => {});
		return agent;
	};
	// Warm-up: the same code paths, so compiled code and lazily built tables are not counted.
	for (let i = 0; i < 50; i++) await build().prompt("go");
	gate = new Promise<void>((resolve) => (release = resolve));
	entered = 0;
	collectGarbage();
	const before = process.memoryUsage().heapUsed;
	const agents = Array.from({ length: count }, build);
	collectGarbage();
	const idle = process.memoryUsage().heapUsed;
	const runs = agents.map((agent) => agent.prompt("go"));
	while (entered < count) await nextTurnOfTheLoop();
	collectGarbage();
	const midRun = process.memoryUsage().heapUsed;
	release();
	await Promise.all(runs);
	return { idleKiB: (idle - before) / count / 1024, midRunKiB: (midRun - before) / count / 1024 };
}

const leastRunMachine = setup({
	types: { context: {} as { runs: number } },
	actors: { call: fromCallback(({ sendBack }) => queueMicrotask(() => sendBack({ type: "done" }))) },
}).createMachine({
	context: { runs: 0 },
	initial: "idle",
	states: {
		idle: { on: { prompt: "running" } },
		running: {
			entry: emit({ type: "agent_start" }),
			invoke: { src: "call" },
			on: { done: { target: "idle", actions: [assign({ runs: ({ context }) => context.runs + 1 }), emit({ type: "agent_end" })] } },
		},
	},
});

async function leastRun(): Promise<void> {
	const actor = createActor(leastRunMachine);
	actor.on("*", () => {});
	const ended = new Promise<void>((resolve) => actor.on("agent_end", () => resolve()));
	actor.start();
	actor.send({ type: "prompt" });
	await ended;
	actor.stop();
}

/**
 * Microseconds per run, median of `rounds`: the least XState run above, and a whole short run
 * (new agent, one prompt, a 1-delta reply) of each library.
 *
 * @example
 * const { xstateFloorUs, agentchartUs, piUs } = await leastRunCost(5, 2_000);
 */
export async function leastRunCost(rounds: number, runsPerRound: number): Promise<{ xstateFloorUs: number; agentchartUs: number; piUs: number }> {
	const contenders = { xstateFloorUs: leastRun, agentchartUs: shortRun(await loadBenchAgentFactory("agentchart")), piUs: shortRun(await loadBenchAgentFactory("pi")) };
	const samples = { xstateFloorUs: [] as number[], agentchartUs: [] as number[], piUs: [] as number[] };
	for (let round = -1; round < rounds; round++) {
		for (const [name, run] of Object.entries(contenders) as [keyof typeof contenders, () => Promise<void>][]) {
			const start = performance.now();
			for (let i = 0; i < runsPerRound; i++) await run();
			// Round -1 warms the compiler up and is not recorded.
			if (round >= 0) samples[name].push(((performance.now() - start) * 1000) / runsPerRound);
		}
	}
	const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
	return { xstateFloorUs: median(samples.xstateFloorUs), agentchartUs: median(samples.agentchartUs), piUs: median(samples.piUs) };
}

async function main(): Promise<void> {
	if (typeof (globalThis as { gc?: unknown }).gc !== "function") throw new Error("run with --expose-gc (npx tsx --expose-gc bench/where-time-goes.ts)");
	const runs = 20_000;
	console.log(`CPU self time of ${runs} short runs (new agent, one prompt, a 1-delta reply), agentchart from dist/:`);
	for (const [bucket, share] of await profileShortRuns(runs)) if (share >= 0.005) console.log(`${(share * 100).toFixed(1).padStart(6)} %  ${bucket}`);
	console.log("\nHeap per agent, 1,000 agents, after a full collection (KiB):");
	for (const name of ["agentchart", "pi"] as const) {
		const { idleKiB, midRunKiB } = await liveHeapMidRun(name, 1_000);
		console.log(`${name.padEnd(11)} constructed ${idleKiB.toFixed(2)}, all inside a tool call ${midRunKiB.toFixed(2)}`);
	}
	const least = await leastRunCost(5, 2_000);
	console.log("\nµs per run, median of 5 rounds of 2,000:");
	console.log(`least XState run (actor, 2 events, 1 child) ${least.xstateFloorUs.toFixed(1)}; agentchart short run ${least.agentchartUs.toFixed(1)}; pi short run ${least.piUs.toFixed(1)}`);
}

if (isEntryPoint(import.meta.url)) await main();
