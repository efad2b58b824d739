/**
 * A diagnosis, not a benchmark with targets: where a run's time and memory go. It backs the
 * README's explanation of the time targets (issue 14) with numbers anyone can reproduce:
 *
 * 1. CPU profile (node:inspector) of many short runs (a new agent, one prompt, a 1-delta reply),
 *    self time by where the code lives: XState, agentchart's `dist/` by directory, Node's
 *    internals, garbage collection.
 * 2. Live heap per agent while 1,000 agents all sit inside a tool call, after a full
 *    collection, for both libraries (what the peak RSS of the concurrency benchmark would be if
 *    garbage were collected at once).
 * 3. A cost model: CPU time per prompt for runs of different shapes (a text reply; one tool turn
 *    with 1, 3 or 6 instant calls; three tool turns of one call), split into the cost of a run
 *    (prompt, agent_start to agent_end, one model call), of each further model call with its
 *    turn, and of each tool call, for both libraries, side by side.
 * 4. What a run allocates, collected or not, per agent of 5 tool turns, for both libraries, and
 *    where: V8's sampling heap profiler (with the objects collections took kept in the profile),
 *    summed by the function that allocated. In the concurrency section's burst this garbage
 *    outlives young collections (every run spans the whole burst), so it sets the peak heap.
 *
 * 5. XState's floor for a 3-tool prompt: an actor of XState's own making the children and events
 *    such a prompt makes (two model calls, each a child that reports its start and its end; a
 *    child for the batch, reporting each of 3 calls; an event emitted at each), and nothing else,
 *    beside both libraries' 3-tool prompt, in alternating blocks. What is above the floor is the
 *    chart's and the facade's own work, not the runtime's.
 * 6. What running at once adds: CPU time per prompt of the concurrency section's shape (5 tool
 *    turns of one call, the tool yielding once), one agent at a time and 1,000 at once, and of it
 *    the collector's pauses on the main thread, each library and width in a child process of its
 *    own (the young generation V8 sizes for a process is the process's).
 *
 * Run: `npm run build && npx tsx --expose-gc bench/where-time-goes.ts`.
 */
import { Session } from "node:inspector/promises";
import { PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { type ActorLogic, type AnyActorLogic, type AnyActorRef, type EventObject, createActor, fromCallback } from "xstate";
import type { AnyAgentTool } from "../src/types/agent.js";
import type { StreamFn } from "../src/types/stream.js";
import { type AgentName, type BenchAgentFactory, instantTool, loadBenchAgentFactory } from "./lib/contenders.js";
import { runBurst } from "./concurrency.js";
import { childPayload, isEntryPoint, reportFromChild, runChild } from "./lib/child.js";
import { rerunOnSupportedNode } from "./lib/supported-node.js";
import { collectGarbage, median, nextTurnOfTheLoop } from "./lib/stats.js";
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

interface SamplingNode {
	callFrame: { functionName: string; url: string; lineNumber: number };
	selfSize: number;
	children: SamplingNode[];
}

/**
 * Bytes allocated per agent run (a 5-turn run of one tool call a turn, agents run `agents` at a
 * time as in the concurrency section) after `warmupRounds` unsampled rounds, in all and by the
 * function that allocated (`name file:line`), largest first.
 *
 * @example
 * const { perRunKiB, sites } = await allocationBySite("agentchart", 200);
 */
export async function allocationBySite(name: AgentName, agents: number, warmupRounds = 20): Promise<{ perRunKiB: number; sites: [string, number][] }> {
	const create = await loadBenchAgentFactory(name);
	const model = benchModel();
	const tools = [instantTool("search", nextTurnOfTheLoop)];
	const streamFn = toolTurnStreamFn(model, { turns: 5, callsPerTurn: 1, toolName: "search" });
	const round = async (count: number) => {
		const built = Array.from({ length: count }, () => create({ streamFn, model, systemPrompt: "You are a benchmark.", tools }));
		await Promise.all(built.map((agent) => agent.prompt("go")));
	};
	for (let i = 0; i < warmupRounds; i++) await round(Math.max(1, Math.floor(agents / 2)));
	const session = new Session();
	session.connect();
	await session.post("HeapProfiler.startSampling", { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
	await round(agents);
	const { profile } = (await session.post("HeapProfiler.stopSampling")) as unknown as { profile: { head: SamplingNode } };
	session.disconnect();
	const bySite = new Map<string, number>();
	let total = 0;
	const pending = [profile.head];
	for (let node = pending.pop(); node; node = pending.pop()) {
		const frame = node.callFrame;
		const site = `${frame.functionName || "(anonymous)"} ${frame.url.split("/").slice(-2).join("/")}:${frame.lineNumber + 1}`;
		bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
		total += node.selfSize;
		pending.push(...node.children);
	}
	const kib = (bytes: number) => bytes / agents / 1024;
	return { perRunKiB: kib(total), sites: [...bySite].map(([site, bytes]): [string, number] => [site, kib(bytes)]).sort((a, b) => b[1] - a[1]) };
}

/** The costs of a run's parts, in µs of CPU time (user + system, so collection threads count). */
export interface CostModel {
	/** A prompt answered by one text reply: the run and its one model call. */
	run: number;
	/** Each further model call, with the tool turn that led to it (its tool call excluded). */
	turn: number;
	/** Each tool call of a turn. */
	toolCall: number;
}

/** CPU µs per prompt of one shape, median of `rounds` blocks of `prompts` prompts on fresh agents. */
async function cpuPerPrompt(create: BenchAgentFactory, streamFn: StreamFn, tool: AnyAgentTool, prompts: number): Promise<number> {
	const model = benchModel();
	const agents = Array.from({ length: prompts }, () => {
		const agent = create({ streamFn, model, tools: [tool] });
		agent.subscribe(() => {});
		return agent;
	});
	const start = process.cpuUsage();
	for (const agent of agents) await agent.prompt("go");
	const spent = process.cpuUsage(start);
	return (spent.user + spent.system) / prompts;
}

/**
 * The cost model of both libraries, measured side by side: blocks of prompts of each shape,
 * the libraries alternating block by block, medians over `rounds`.
 *
 * @example
 * const { agentchart, pi } = await costModels(5, 300);
 * agentchart.toolCall / pi.toolCall;
 */
export async function costModels(rounds: number, prompts: number): Promise<Record<AgentName, CostModel>> {
	const model = benchModel();
	const tool = instantTool("noop");
	const shapes = {
		text: prebuiltStreamFn(textReplyEvents(model, 1)),
		oneCall: toolTurnStreamFn(model, { turns: 1, callsPerTurn: 1, toolName: tool.name }),
		threeCalls: toolTurnStreamFn(model, { turns: 1, callsPerTurn: 3, toolName: tool.name }),
		sixCalls: toolTurnStreamFn(model, { turns: 1, callsPerTurn: 6, toolName: tool.name }),
		threeTurns: toolTurnStreamFn(model, { turns: 3, callsPerTurn: 1, toolName: tool.name }),
	};
	const names: AgentName[] = ["agentchart", "pi"];
	const factories = { agentchart: await loadBenchAgentFactory("agentchart"), pi: await loadBenchAgentFactory("pi") };
	const samples = Object.fromEntries(names.map((name) => [name, Object.fromEntries(Object.keys(shapes).map((shape) => [shape, [] as number[]]))])) as Record<AgentName, Record<keyof typeof shapes, number[]>>;
	for (let round = -1; round < rounds; round++) {
		for (const [shape, streamFn] of Object.entries(shapes) as [keyof typeof shapes, StreamFn][]) {
			for (const name of round % 2 === 0 ? names : [...names].reverse()) {
				const us = await cpuPerPrompt(factories[name], streamFn, tool, prompts);
				// Round -1 warms the compiler up and is not recorded.
				if (round >= 0) samples[name][shape].push(us);
			}
		}
	}
	const modelOf = (name: AgentName): CostModel => {
		const m = (shape: keyof typeof shapes) => median(samples[name][shape]);
		// Least squares would do; the shapes are chosen so that differences read each part off.
		const toolCall = (m("sixCalls") - m("oneCall")) / 5;
		const turn = (m("threeTurns") - m("oneCall")) / 2 - toolCall;
		return { run: m("text"), turn, toolCall };
	};
	return { agentchart: modelOf("agentchart"), pi: modelOf("pi") };
}

/** The floor actor's state: which part of the prompt it is in, and the child doing it. */
interface FloorState {
	status: "active" | "done";
	output: undefined;
	error: undefined;
	phase: "first call" | "tools" | "last call";
	settled: number;
	child: AnyActorRef | undefined;
}

/** A model call's child: it reports its start and its end, each a microtask later, as a stream read at once does. */
const floorModelCall = fromCallback<EventObject>(({ sendBack }) => {
	void (async () => {
		await Promise.resolve();
		sendBack({ type: "stream.start" });
		await Promise.resolve();
		sendBack({ type: "stream.done" });
	})();
});

/** A batch's child: each of its calls settles two microtasks later (an instant tool, awaited). */
const floorBatch = fromCallback<EventObject, { calls: number }>(({ sendBack, input }) => {
	for (let call = 0; call < input.calls; call++) {
		void (async () => {
			await Promise.resolve();
			await Promise.resolve();
			sendBack({ type: "tool.settled" });
		})();
	}
});

/** The floor actor's logic: a 3-tool prompt's children and events, with an event emitted at each. */
const floorLogic: ActorLogic<FloorState, EventObject> = {
	getInitialSnapshot: () => ({ status: "active", output: undefined, error: undefined, phase: "first call", settled: 0, child: undefined }),
	getPersistedSnapshot: (snapshot) => snapshot,
	transition(snapshot, event, scope) {
		const spawn = (logic: AnyActorLogic, input?: unknown): AnyActorRef => {
			const child = createActor(logic, { parent: scope.self, input } as Parameters<typeof createActor>[1]);
			scope.defer(() => child.start());
			return child;
		};
		const stop = () => {
			if (snapshot.child) scope.stopChild(snapshot.child);
		};
		scope.emit({ type: event.type });
		switch (event.type) {
			case "prompt":
				return { ...snapshot, child: spawn(floorModelCall) };
			case "stream.done":
				stop();
				if (snapshot.phase === "first call") return { ...snapshot, phase: "tools", child: spawn(floorBatch, { calls: 3 }) };
				return { ...snapshot, status: "done", child: undefined };
			case "tool.settled": {
				const settled = snapshot.settled + 1;
				if (settled < 3) return { ...snapshot, settled };
				stop();
				return { ...snapshot, phase: "last call", settled, child: spawn(floorModelCall) };
			}
			default:
				return { ...snapshot };
		}
	},
};

/** One prompt on the floor actor: made, started, sent the prompt, until it is done. */
function floorPrompt(): Promise<void> {
	return new Promise((resolve) => {
		const actor = createActor(floorLogic);
		actor.subscribe({ complete: () => resolve() });
		actor.start();
		actor.send({ type: "prompt" });
	});
}

/**
 * CPU µs per 3-tool prompt (no listener) of XState's floor (see the header, item 5) and of both
 * libraries, blocks of `prompts` alternating, medians over `rounds`; and each one's ratio to pi,
 * taken within a round.
 *
 * @example
 * const { floor, agentchart, pi, floorOverPi } = await runtimeFloor(15, 400);
 */
export async function runtimeFloor(rounds: number, prompts: number): Promise<{ floor: number; agentchart: number; pi: number; floorOverPi: number; agentchartOverPi: number }> {
	const model = benchModel();
	const tool = instantTool("noop");
	const promptOf = (create: BenchAgentFactory) => async () => {
		await create({ model, tools: [tool], streamFn: toolTurnStreamFn(model, { turns: 1, callsPerTurn: 3, toolName: tool.name }) }).prompt("go");
	};
	const contenders = { floor: floorPrompt, agentchart: promptOf(await loadBenchAgentFactory("agentchart")), pi: promptOf(await loadBenchAgentFactory("pi")) };
	const samples = { floor: [] as number[], agentchart: [] as number[], pi: [] as number[] };
	for (let round = -1; round < rounds; round++) {
		const order = Object.keys(contenders) as (keyof typeof contenders)[];
		if (round % 2 !== 0) order.reverse();
		for (const name of order) {
			const prompt = contenders[name];
			const start = process.cpuUsage();
			for (let i = 0; i < prompts; i++) await prompt();
			const spent = process.cpuUsage(start);
			// Round -1 warms the compiler up and is not recorded.
			if (round >= 0) samples[name].push((spent.user + spent.system) / prompts);
		}
	}
	return {
		floor: median(samples.floor),
		agentchart: median(samples.agentchart),
		pi: median(samples.pi),
		floorOverPi: median(samples.floor.map((us, i) => us / (samples.pi[i] ?? Number.NaN))),
		agentchartOverPi: median(samples.agentchart.map((us, i) => us / (samples.pi[i] ?? Number.NaN))),
	};
}

/** CPU and collector time of one prompt, in µs. */
export interface WidthCost {
	cpu: number;
	/** Main-thread pauses of the collector (CPU time also counts its helper threads). */
	collectorPauses: number;
}

interface WidthPayload {
	name: AgentName;
	width: number;
	prompts: number;
	warmupPrompts: number;
}

/** Measures {@link widthCosts}' figure in this process: `warmupPrompts`, then `prompts` prompts, `width` at a time. */
async function widthCostHere({ name, width, prompts, warmupPrompts }: WidthPayload): Promise<WidthCost> {
	const create = await loadBenchAgentFactory(name);
	const burst = (count: number) => runBurst(create, name, 5, count);
	const blocks = Math.max(1, Math.round(prompts / width));
	for (let i = 0; i < Math.ceil(warmupPrompts / width); i++) await burst(width);
	let pauses = 0;
	const observer = new PerformanceObserver((list) => {
		for (const entry of list.getEntries()) pauses += entry.duration;
	});
	observer.observe({ entryTypes: ["gc"] });
	const start = process.cpuUsage();
	for (let i = 0; i < blocks; i++) await burst(width);
	const spent = process.cpuUsage(start);
	// The observer reports a pause once the loop turns after it.
	await new Promise((resolve) => setTimeout(resolve, 20));
	observer.disconnect();
	const count = blocks * width;
	return { cpu: (spent.user + spent.system) / count, collectorPauses: (pauses * 1000) / count };
}

/**
 * CPU and collector time per prompt of the concurrency section's shape, `width` prompts at a
 * time, for both libraries: each library and width in a child of its own, `rounds` rounds in
 * alternating order, medians. Each child runs `warmupPrompts` prompts first, as many at a time.
 *
 * @example
 * const costs = await widthCosts([1, 1_000], 3, 3_000);
 * costs.agentchart[1_000].cpu / costs.pi[1_000].cpu;
 */
export async function widthCosts(widths: readonly number[], rounds: number, prompts: number, warmupPrompts = 3_000): Promise<Record<AgentName, Record<number, WidthCost>>> {
	const names: AgentName[] = ["agentchart", "pi"];
	const samples = new Map<string, WidthCost[]>();
	for (let round = 0; round < rounds; round++) {
		for (const width of widths) {
			for (const name of round % 2 === 0 ? names : [...names].reverse()) {
				const cost = await runChild<WidthCost>(SCRIPT, { name, width, prompts, warmupPrompts } satisfies WidthPayload);
				const key = `${name} ${width}`;
				const costs = samples.get(key) ?? [];
				costs.push(cost);
				samples.set(key, costs);
			}
		}
	}
	const of = (name: AgentName) =>
		Object.fromEntries(
			widths.map((width) => {
				const costs = samples.get(`${name} ${width}`) ?? [];
				return [width, { cpu: median(costs.map((cost) => cost.cpu)), collectorPauses: median(costs.map((cost) => cost.collectorPauses)) }];
			}),
		);
	return { agentchart: of("agentchart"), pi: of("pi") };
}

const SCRIPT = fileURLToPath(import.meta.url);

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
	const models = await costModels(7, 300);
	console.log("\nCPU µs (user + system) per part of a run, median of 7 rounds of 300 prompts per shape:");
	for (const part of ["run", "turn", "toolCall"] as const) {
		const ours = models.agentchart[part];
		const theirs = models.pi[part];
		console.log(`${part.padEnd(9)} agentchart ${ours.toFixed(1).padStart(6)}  pi ${theirs.toFixed(1).padStart(6)}  ours / pi ${(ours / theirs).toFixed(2)}`);
	}
	console.log("\nAllocated per agent run (5 tool turns, 200 agents at a time), collected or not, and the 12 largest sites (KiB):");
	for (const name of ["agentchart", "pi"] as const) {
		const { perRunKiB, sites } = await allocationBySite(name, 200);
		console.log(`${name}: ${perRunKiB.toFixed(1)} KiB`);
		for (const [site, size] of sites.slice(0, 12)) console.log(`${size.toFixed(1).padStart(8)}  ${site}`);
	}
	const floor = await runtimeFloor(15, 400);
	console.log("\nCPU µs per 3-tool prompt (no listener), median of 15 rounds of 400 prompts: XState's floor (its actor, the prompt's children and events, nothing else) and both libraries:");
	console.log(`floor ${floor.floor.toFixed(1)}  agentchart ${floor.agentchart.toFixed(1)}  pi ${floor.pi.toFixed(1)}  floor / pi ${floor.floorOverPi.toFixed(2)}  agentchart / pi ${floor.agentchartOverPi.toFixed(2)}`);
	const widths = [1, 1_000];
	const costs = await widthCosts(widths, 5, 5_000);
	console.log("\nCPU µs per prompt of 5 one-call tool turns (the tool yields once), one agent at a time and 1,000 at once, median of 5 child processes each; in brackets the collector's main-thread pauses:");
	for (const width of widths) {
		const ours = costs.agentchart[width];
		const theirs = costs.pi[width];
		if (!ours || !theirs) continue;
		console.log(`${String(width).padStart(5)} at once  agentchart ${ours.cpu.toFixed(1).padStart(6)} (${ours.collectorPauses.toFixed(1)})  pi ${theirs.cpu.toFixed(1).padStart(6)} (${theirs.collectorPauses.toFixed(1)})  ours / pi ${(ours.cpu / theirs.cpu).toFixed(2)}`);
	}
}

if (isEntryPoint(import.meta.url)) {
	const payload = childPayload<WidthPayload>();
	if (payload) {
		reportFromChild(widthCostHere(payload));
	} else {
		const rerun = await rerunOnSupportedNode();
		if (rerun !== undefined) process.exit(rerun);
		await main();
	}
}
