/**
 * Durable runs (issue 35): what a store costs a 3-tool turn, how big a snapshot is, how long a
 * 1,000-message session takes to restore.
 *
 * - Turn: blocks of fresh agents each run one prompt (a reply with 3 instant tool calls, then a
 *   text reply), without a store and with the file store under each fsync policy, in a shuffled
 *   order per round; the figures are µs per prompt of CPU time (user + system: another process
 *   on the machine costs no side) and of wall time (the file store waits for the disk); ratios to
 *   the agent without a store are taken within each round. The store's work counts to the end:
 *   each block ends when every agent's last save is stored.
 * - The memory store, in rounds of its own: a block with it and a block without a store, back to
 *   back in a random order, for a new session and for an ongoing one (each agent ran one such
 *   prompt before the clock, its saves stored, and its second prompt is timed). Its blocks take
 *   milliseconds; next to a file store's block (its garbage, its disk's callbacks) a round's
 *   ratio measured how the file store left the process more than the memory store. A new session
 *   saves one snapshot (the agent as its first prompt finds it); an ongoing session journals its
 *   prompt and its run's end, and saves none.
 * - The memory store and no store again, each alone in a child process (as an application has
 *   one or the other), the children alternating. How fast a process runs a turn depends on what
 *   it has run before: agents with a store used to slow down their whole process, the agent's
 *   code as much as the store's (docs/performance.md, "A process with a store ran slower"), and
 *   one process running both shares such effects between them. The rounds above, both variants in
 *   one process, measure the store's own work; these measure what adding a store costs a process.
 * - Snapshot size: an idle session of 1,000 messages and one waiting for approval, as JSON, beside
 *   the transcript's own JSON.
 * - Restore: `Agent.restore(JSON.parse(text), options)` of those sessions until the agent answers
 *   `state` (and, mid-run, `pendingApprovals`).
 *
 * It runs in a child process of its own (lib/child.ts): what other benchmarks left in the
 * parent (pi's modules, their garbage) moves no figure.
 *
 * `npm run build && npx tsx --expose-gc bench/durable.ts [--quick]` prints the tables alone; with
 * `--alone [--v8 <flags>]` only the memory store and no store each alone in its process (V8 flags,
 * e.g. `--no-allocation-site-pretenuring`, set in each of those children).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { setFlagsFromString } from "node:v8";
import { join } from "node:path";
import type { AgentSnapshot } from "../src/durable/snapshot.js";
import type { AgentStore } from "../src/durable/store.js";
import type { FsyncPolicy } from "../src/durable/file-store.js";
import type { AgentMessage } from "../src/types/messages.js";
import { instantTool } from "./lib/contenders.js";
import { fileURLToPath } from "node:url";
import { childPayload, isEntryPoint, reportFromChild, runChild } from "./lib/child.js";
import { rerunOnSupportedNode } from "./lib/supported-node.js";
import { loadAgentchart } from "./lib/library.js";
import { createRandom, randomSeed } from "./lib/paired.js";
import { collectYoungGarbage, median, type Summary, summarize } from "./lib/stats.js";
import { benchMessage, benchModel, toolTurnStreamFn } from "./lib/streams.js";

/** Sizes of the durable bench. */
export interface DurableOptions {
	/** Agents (one prompt each) per block with the file store. */
	prompts: number;
	/**
	 * Agents per block without a store and with the memory store: more than with the file store,
	 * since a block of those takes a few milliseconds, and a garbage collection landing in one
	 * block or the other would decide a round's ratio.
	 */
	memoryPrompts: number;
	/** Rounds with the file store. */
	repetitions: number;
	/** Rounds of the memory store beside no store (cheap: more of them than with the file store). */
	memoryRepetitions: number;
	warmups: number;
	/** Child processes per variant (no store, the memory store), each running that variant alone. */
	soloRepetitions: number;
	/** Blocks of `memoryPrompts` agents each such child times (after as many untimed). */
	soloRounds: number;
	/** Messages of the restored session. */
	messages: number;
	restores: number;
}

/** The variants of the turn measurement. */
export const STORE_VARIANTS = ["none", "memory", "file (fsync always)", "file (fsync snapshots)", "file (fsync never)"] as const;
export type StoreVariant = (typeof STORE_VARIANTS)[number];

/** What the durable bench measured. */
export interface DurableResult {
	/** Agents a block with the file store, and without a store or with the memory store. */
	prompts: number;
	memoryPrompts: number;
	/** µs per prompt, wall time, by variant. */
	turnUs: Record<StoreVariant, Summary>;
	/** µs per prompt, CPU time (user + system), by variant. */
	turnCpuUs: Record<StoreVariant, Summary>;
	/** Each variant's wall time over the agent without a store's, within each round. */
	turnRatio: Record<StoreVariant, Summary>;
	/** Each variant's CPU time over the agent without a store's, within each round. */
	turnCpuRatio: Record<StoreVariant, Summary>;
	/** µs of CPU per prompt without a store in the memory store's rounds (its ratios are to this), a new session. */
	memoryNoneCpuUs: Summary;
	/** µs of CPU per prompt in an ongoing session (its second prompt), without a store and with the memory store. */
	ongoingCpuUs: { none: Summary; memory: Summary };
	/** The memory store's CPU time over no store's in an ongoing session, within each round. */
	ongoingCpuRatio: Summary;
	/** The memory store and no store, each alone in its process. */
	solo: SoloStoreResult;
	messages: number;
	/** Bytes of JSON: the snapshot, and the transcript alone. */
	snapshotBytes: { idle: number; awaiting: number; transcript: number };
	/** ms to restore the session from its JSON text. */
	restoreMs: { idle: Summary; awaiting: Summary };
}

/** The two variants measured each alone in a process. */
export type SoloVariant = "none" | "memory";

/**
 * The memory store against no store, each variant alone in its child process: µs of CPU per
 * prompt (the median of each child's blocks), and the memory store's over no store's per pair of
 * children run back to back.
 */
export interface SoloStoreResult {
	repetitions: number;
	rounds: number;
	newCpuUs: Record<SoloVariant, Summary>;
	ongoingCpuUs: Record<SoloVariant, Summary>;
	newRatio: Summary;
	ongoingRatio: Summary;
}

/** What one solo child measured: medians of its blocks, µs of CPU per prompt. */
interface SoloChildResult {
	fresh: number;
	ongoing: number;
}

const FSYNC: Record<StoreVariant, FsyncPolicy | undefined> = { none: undefined, memory: undefined, "file (fsync always)": "always", "file (fsync snapshots)": "snapshots", "file (fsync never)": "never" };

/** A transcript of `count` messages: prompts, replies with a tool call, their results (about 300 bytes each). */
function longTranscript(count: number, model: ReturnType<typeof benchModel>): AgentMessage[] {
	const messages: AgentMessage[] = [];
	for (let index = 0; messages.length < count; index++) {
		messages.push({ role: "user", content: `Question ${index}: what is the state of order ${1000 + index}, and when does it ship?`, timestamp: 1_700_000_000_000 + index });
		messages.push(benchMessage(model, [{ type: "text", text: `Order ${1000 + index} is packed; it ships on Monday by the usual carrier.` }, { type: "toolCall", id: `call_${index}`, name: "noop", arguments: { step: index } }], "toolUse"));
		messages.push({ role: "toolResult", toolCallId: `call_${index}`, toolName: "noop", content: [{ type: "text", text: `order ${1000 + index}: packed, carrier DHL, ships 2026-12-0${(index % 9) + 1}` }], isError: false, timestamp: 1_700_000_000_000 + index });
	}
	return messages.slice(0, count);
}

/**
 * Runs the durable bench in a child process of its own, then the memory store and no store each
 * alone in child processes of their own; `random` seeds the order of variants.
 *
 * @example
 * const result = await measureDurable({ prompts: 50, memoryPrompts: 50, repetitions: 1, memoryRepetitions: 1, warmups: 0, soloRepetitions: 1, soloRounds: 2, messages: 1_000, restores: 3 }, createRandom(1));
 */
export async function measureDurable(options: DurableOptions, random: () => number): Promise<DurableResult> {
	const together = await runChild<Omit<DurableResult, "solo">>(SCRIPT, { options, seed: Math.floor(random() * 2 ** 31) } satisfies DurableChildPayload);
	return { ...together, solo: await measureStoreAlone(options, random) };
}

/**
 * The memory store and no store, each alone in child processes of their own, alternating.
 * `v8Flags` are set in each child before agentchart loads (`v8.setFlagsFromString`), to see
 * what a V8 setting changes (`--no-allocation-site-pretenuring`, say).
 *
 * @example
 * const solo = await measureStoreAlone({ memoryPrompts: 400, soloRepetitions: 2, soloRounds: 5 }, createRandom(1), "--no-allocation-site-pretenuring");
 * solo.ongoingRatio.median; // the memory store's CPU over no store's, an ongoing session's prompt
 */
export async function measureStoreAlone(options: Pick<DurableOptions, "memoryPrompts" | "soloRepetitions" | "soloRounds">, random: () => number, v8Flags?: string): Promise<SoloStoreResult> {
	const children: Record<SoloVariant, SoloChildResult[]> = { none: [], memory: [] };
	for (let repetition = 0; repetition < options.soloRepetitions; repetition++) {
		for (const solo of random() < 0.5 ? (["none", "memory"] as const) : (["memory", "none"] as const)) {
			children[solo].push(await runChild<SoloChildResult>(SCRIPT, { options, solo, v8Flags } satisfies DurableChildPayload));
		}
	}
	const figure = (variant: SoloVariant, which: keyof SoloChildResult) => summarize(children[variant].map((child) => child[which]));
	const ratio = (which: keyof SoloChildResult) => summarize(children.memory.map((child, index) => child[which] / (children.none[index]?.[which] ?? Number.NaN)));
	return {
		repetitions: options.soloRepetitions,
		rounds: options.soloRounds,
		newCpuUs: { none: figure("none", "fresh"), memory: figure("memory", "fresh") },
		ongoingCpuUs: { none: figure("none", "ongoing"), memory: figure("memory", "ongoing") },
		newRatio: ratio("fresh"),
		ongoingRatio: ratio("ongoing"),
	};
}

const SCRIPT = fileURLToPath(import.meta.url);

/** What a child is told: the sizes and the seed of its order, or the one variant it runs alone. */
type DurableChildPayload = { options: DurableOptions; seed: number; solo?: undefined } | { options: Pick<DurableOptions, "memoryPrompts" | "soloRounds">; solo: SoloVariant; v8Flags?: string | undefined };

/**
 * One variant alone in this process: blocks of fresh agents, each agent's first prompt (a new
 * session) and second (an ongoing one) timed apart, in CPU µs per prompt including the last save;
 * as many untimed blocks first.
 */
async function measureSoloHere(variant: SoloVariant, options: Pick<DurableOptions, "memoryPrompts" | "soloRounds">, v8Flags: string | undefined): Promise<SoloChildResult> {
	if (v8Flags) setFlagsFromString(v8Flags);
	const { Agent, createMemoryStore } = await loadAgentchart();
	const model = benchModel();
	const tool = instantTool("noop");
	const streamFn = toolTurnStreamFn(model, { turns: 1, callsPerTurn: 3, toolName: tool.name });
	let sessions = 0;
	const block = async (): Promise<SoloChildResult> => {
		const store = variant === "memory" ? createMemoryStore() : undefined;
		const agents = Array.from({ length: options.memoryPrompts }, () => new Agent({ initialState: { model, tools: [tool] }, streamFn, ...(store ? { store, sessionId: `s${sessions++}` } : {}) }));
		return { fresh: (await promptEach(agents, "go")).cpu, ongoing: (await promptEach(agents, "go on")).cpu };
	};
	for (let round = 0; round < options.soloRounds; round++) await block();
	const fresh: number[] = [];
	const ongoing: number[] = [];
	for (let round = 0; round < options.soloRounds; round++) {
		const measured = await block();
		fresh.push(measured.fresh);
		ongoing.push(measured.ongoing);
	}
	return { fresh: median(fresh), ongoing: median(ongoing) };
}

/** What a block's agents need: a prompt, and the agent's own saves to wait for. */
interface PromptingAgent {
	prompt(text: string): Promise<void>;
	saved(): Promise<void>;
}

/**
 * Each agent prompts `text` once, one after the other, after a young-generation collection: µs
 * per prompt of wall and CPU time. The store's work counts to the end: the last save of every
 * agent is stored (`saved()`, not `save()`: the agent's own saves, no snapshot the bench would
 * add). An agent without a store waits the same way (for nothing), so that the harness's own
 * steps are no part of a store's figure.
 */
async function promptEach(agents: readonly PromptingAgent[], text: string): Promise<{ wall: number; cpu: number }> {
	collectYoungGarbage();
	const start = performance.now();
	const startCpu = process.cpuUsage();
	for (const agent of agents) await agent.prompt(text);
	await Promise.all(agents.map((agent) => agent.saved()));
	const used = process.cpuUsage(startCpu);
	return { wall: ((performance.now() - start) * 1000) / agents.length, cpu: (used.user + used.system) / agents.length };
}

/** The durable bench, in this process. */
async function measureDurableHere(options: DurableOptions, random: () => number): Promise<Omit<DurableResult, "solo">> {
	const { Agent, createFileStore, createMemoryStore } = await loadAgentchart();
	const model = benchModel();
	const tool = instantTool("noop");
	const root = await mkdtemp(join(tmpdir(), "agentchart-bench-durable-"));
	try {
		const samples = Object.fromEntries(STORE_VARIANTS.map((variant) => [variant, [] as number[]])) as Record<StoreVariant, number[]>;
		const ratios = Object.fromEntries(STORE_VARIANTS.map((variant) => [variant, [] as number[]])) as Record<StoreVariant, number[]>;
		const cpuSamples = Object.fromEntries(STORE_VARIANTS.map((variant) => [variant, [] as number[]])) as Record<StoreVariant, number[]>;
		const cpuRatios = Object.fromEntries(STORE_VARIANTS.map((variant) => [variant, [] as number[]])) as Record<StoreVariant, number[]>;
		const ongoing = { none: [] as number[], memory: [] as number[] };
		const ongoingRatios: number[] = [];
		let blocks = 0;
		const storeFor = (variant: StoreVariant): AgentStore | undefined => {
			if (variant === "none") return undefined;
			if (variant === "memory") return createMemoryStore();
			return createFileStore(join(root, `block-${blocks++}`), { fsync: FSYNC[variant] });
		};
		/**
		 * One block of `count` fresh agents, one timed prompt each (an ongoing session's: after one
		 * untimed prompt whose saves are stored): µs per prompt of wall and CPU time.
		 */
		const block = async (variant: StoreVariant, count: number, ongoing = false): Promise<{ wall: number; cpu: number }> => {
			const store = storeFor(variant);
			const streamFn = toolTurnStreamFn(model, { turns: 1, callsPerTurn: 3, toolName: tool.name });
			const agents = Array.from({ length: count }, (_, index) => new Agent({ initialState: { model, tools: [tool] }, streamFn, ...(store ? { store, sessionId: `s${index}` } : {}) }));
			if (ongoing) await promptEach(agents, "go");
			return promptEach(agents, ongoing ? "go on" : "go");
		};
		const fileVariants = STORE_VARIANTS.filter((variant) => variant !== "memory");
		for (let round = -options.warmups; round < options.repetitions; round++) {
			const order = [...fileVariants].sort(() => random() - 0.5);
			const times = {} as Record<StoreVariant, number>;
			const cpu = {} as Record<StoreVariant, number>;
			for (const variant of order) {
				const measured = await block(variant, variant === "none" ? options.memoryPrompts : options.prompts);
				times[variant] = measured.wall;
				cpu[variant] = measured.cpu;
			}
			if (round < 0) continue;
			for (const variant of fileVariants) {
				samples[variant].push(times[variant]);
				ratios[variant].push(times[variant] / times.none);
				cpuSamples[variant].push(cpu[variant]);
				cpuRatios[variant].push(cpu[variant] / cpu.none);
			}
		}
		const memoryNone: number[] = [];
		for (let round = -options.warmups; round < options.memoryRepetitions; round++) {
			const fresh = {} as Record<"none" | "memory", { wall: number; cpu: number }>;
			for (const variant of random() < 0.5 ? (["none", "memory"] as const) : (["memory", "none"] as const)) fresh[variant] = await block(variant, options.memoryPrompts);
			const second = {} as Record<"none" | "memory", number>;
			for (const variant of random() < 0.5 ? (["none", "memory"] as const) : (["memory", "none"] as const)) second[variant] = (await block(variant, options.memoryPrompts, true)).cpu;
			if (round < 0) continue;
			ongoing.none.push(second.none);
			ongoing.memory.push(second.memory);
			ongoingRatios.push(second.memory / second.none);
			memoryNone.push(fresh.none.cpu);
			samples.memory.push(fresh.memory.wall);
			ratios.memory.push(fresh.memory.wall / fresh.none.wall);
			cpuSamples.memory.push(fresh.memory.cpu);
			cpuRatios.memory.push(fresh.memory.cpu / fresh.none.cpu);
		}

		// A session of `messages` messages, idle, and the same waiting for approval of its next call.
		const transcript = longTranscript(options.messages, model);
		const approvalTool = { ...instantTool("deploy"), needsApproval: true };
		const idle = new Agent({ initialState: { model, tools: [tool, approvalTool], messages: transcript } });
		const idleText = JSON.stringify(idle.snapshot());
		const asking = toolTurnStreamFn(model, { turns: 1, callsPerTurn: 1, toolName: approvalTool.name });
		const waiting = new Agent({ initialState: { model, tools: [tool, approvalTool], messages: [...transcript] }, streamFn: asking });
		const asked = new Promise<void>((resolve) => waiting.subscribe((event) => {
			if (event.type === "approval_requested") resolve();
		}));
		void waiting.prompt("deploy it");
		await asked;
		const awaitingText = JSON.stringify(waiting.snapshot());
		waiting.abort();
		await waiting.waitForIdle();
		const restoreTimes = { idle: [] as number[], awaiting: [] as number[] };
		for (let round = -2; round < options.restores; round++) {
			for (const [name, text] of [["idle", idleText], ["awaiting", awaitingText]] as const) {
				collectYoungGarbage();
				const start = performance.now();
				const agent = Agent.restore(JSON.parse(text) as AgentSnapshot, { initialState: { tools: [tool, approvalTool] }, streamFn: asking });
				if (agent.state.messages.length < options.messages || (name === "awaiting" && agent.pendingApprovals.length !== 1)) throw new Error(`bench: the ${name} session did not restore whole`);
				const elapsed = performance.now() - start;
				if (round >= 0) restoreTimes[name].push(elapsed);
				if (name === "awaiting") {
					agent.abort();
					await agent.waitForIdle();
				}
			}
		}
		return {
			prompts: options.prompts,
			memoryPrompts: options.memoryPrompts,
			turnUs: Object.fromEntries(STORE_VARIANTS.map((variant) => [variant, summarize(samples[variant])])) as Record<StoreVariant, Summary>,
			turnRatio: Object.fromEntries(STORE_VARIANTS.map((variant) => [variant, summarize(ratios[variant])])) as Record<StoreVariant, Summary>,
			turnCpuUs: Object.fromEntries(STORE_VARIANTS.map((variant) => [variant, summarize(cpuSamples[variant])])) as Record<StoreVariant, Summary>,
			turnCpuRatio: Object.fromEntries(STORE_VARIANTS.map((variant) => [variant, summarize(cpuRatios[variant])])) as Record<StoreVariant, Summary>,
			memoryNoneCpuUs: summarize(memoryNone),
			ongoingCpuUs: { none: summarize(ongoing.none), memory: summarize(ongoing.memory) },
			ongoingCpuRatio: summarize(ongoingRatios),
			messages: options.messages,
			snapshotBytes: { idle: Buffer.byteLength(idleText), awaiting: Buffer.byteLength(awaitingText), transcript: Buffer.byteLength(JSON.stringify(transcript)) },
			restoreMs: { idle: summarize(restoreTimes.idle), awaiting: summarize(restoreTimes.awaiting) },
		};
	} finally {
		await rm(root, { recursive: true, force: true });
	}
}

const payload = isEntryPoint(import.meta.url) ? childPayload<DurableChildPayload>() : undefined;
if (payload) reportFromChild(payload.solo === undefined ? measureDurableHere(payload.options, createRandom(payload.seed)) : measureSoloHere(payload.solo, payload.options, payload.v8Flags));
else if (isEntryPoint(import.meta.url)) {
	// Run alone (`npx tsx bench/durable.ts`): on a supported Node line, in child processes as in a full run.
	const rerun = await rerunOnSupportedNode();
	if (rerun !== undefined) process.exit(rerun);
	const quick = process.argv.includes("--quick");
	const seed = randomSeed();
	const sizes: DurableOptions = quick ? { prompts: 20, memoryPrompts: 20, repetitions: 1, memoryRepetitions: 1, warmups: 0, soloRepetitions: 1, soloRounds: 2, messages: 1_000, restores: 3 } : { prompts: 100, memoryPrompts: 400, repetitions: 31, memoryRepetitions: 61, warmups: 3, soloRepetitions: 6, soloRounds: 25, messages: 1_000, restores: 15 };
	// `--alone [--v8 <flags>]`: only the memory store and no store each alone in its process, with V8 flags set in each.
	const v8At = process.argv.indexOf("--v8");
	if (process.argv.includes("--alone")) {
		const solo = await measureStoreAlone(sizes, createRandom(seed), v8At < 0 ? undefined : process.argv[v8At + 1]);
		const line = (name: string, figures: Record<SoloVariant, Summary>, ratio: Summary) => `${name}: no store ${figures.none.median.toFixed(1)} µs (${figures.none.min.toFixed(1)}–${figures.none.max.toFixed(1)}), memory store ${figures.memory.median.toFixed(1)} µs (${figures.memory.min.toFixed(1)}–${figures.memory.max.toFixed(1)}), memory / none ${ratio.median.toFixed(2)}× (${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)})`;
		console.log(`seed ${seed}; ${solo.repetitions} processes per variant, CPU per prompt`);
		console.log(line("a new session's first prompt", solo.newCpuUs, solo.newRatio));
		console.log(line("an ongoing session's prompt", solo.ongoingCpuUs, solo.ongoingRatio));
	} else {
		const result = await measureDurable(sizes, createRandom(seed));
		const { formatDurable } = await import("./report.js");
		console.log(formatDurable(result, []).join("\n"));
	}
}
