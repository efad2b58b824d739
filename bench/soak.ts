/**
 * Benchmark 8: a long session, as a chat gateway runs one. One agent takes `prompts` prompts in
 * a row, each with one tool call and realistic text sizes, yielding to the event loop between
 * prompts as a server does; the heap (after a full collection) is sampled as it goes and
 * compared with the size of the transcript as JSON. Then every agent is disposed and dropped:
 * the heap must come back to where it started. A second part creates, runs and disposes
 * agents one after another and reports what each leaves behind.
 *
 * It runs in a child process of its own (`--expose-gc`), so nothing else in the heap moves the
 * figures. `npx tsx --expose-gc bench/soak.ts` runs it alone.
 *
 * After dispose the heap may come out below its baseline: V8 later drops compiled code and
 * feedback of the warm-up session that the baseline still held (measured: from run to run of the
 * same code, the baseline's old and code spaces differ by up to 1 MB, and such a run ends about
 * 1 MB below it). What agents leave behind can only add to the heap, so the check is one-sided:
 * at most 5 % above the baseline.
 */
import { fileURLToPath } from "node:url";
import { Type } from "typebox";
import { Agent } from "../src/agent.js";
import type { AgentTool } from "../src/types/agent.js";
import type { Model } from "../src/types/model.js";
import type { StreamFn } from "../src/types/stream.js";
import { childPayload, isEntryPoint, reportFromChild, runChild } from "./lib/child.js";
import { collectGarbage, nextTurnOfTheLoop } from "./lib/stats.js";
import { BenchEventStream, benchMessage, benchModel, pushMessage } from "./lib/streams.js";

/** Options of {@link measureSoak}. */
export interface SoakOptions {
	/** Prompts of the long session (default 5000). */
	prompts?: number;
	/** Heap samples along the way (default 10). */
	samples?: number;
	/** Agents created, run and disposed one after another (default 10000). */
	agents?: number;
}

/** One heap sample of the long session. */
export interface SoakSample {
	prompts: number;
	/** Heap above the baseline, bytes (after a full collection). */
	heapBytes: number;
	/** The transcript as JSON, bytes. */
	transcriptBytes: number;
	/** Mean time of the prompts since the previous sample, ms (a cost that grows with the transcript shows here). */
	msPerPrompt: number;
}

/** What the soak measured. */
export interface SoakResult {
	samples: SoakSample[];
	/** Heap above the baseline after every agent was disposed and dropped, bytes (may be negative). */
	afterDisposeBytes: number;
	/** The baseline heap, bytes. */
	baselineBytes: number;
	/** Agents of the second part, and the heap each left behind, bytes. */
	agents: number;
	bytesLeftPerAgent: number;
}

const params = Type.Object({ query: Type.String() });
/** The session's one tool: a search that answers at once with a paragraph. */
export const search: AgentTool<typeof params> = {
	name: "search",
	label: "Search",
	description: "Searches the knowledge base",
	parameters: params,
	async execute(_id, { query }) {
		return { content: [{ type: "text", text: `Results for ${query}: ${"a relevant passage of the knowledge base. ".repeat(9)}` }], details: { hits: 3 } };
	},
};

/**
 * A model that answers every prompt with one search, then a paragraph, streamed in 4-character
 * deltas. It is the bench's own stream rather than the scripted provider, whose usage estimate
 * serializes the whole context on every call: over thousands of prompts that made the session's
 * time grow with the transcript, a cost of the test model, not of the engine. Its messages hold
 * flat strings (a provider's `text += delta` leaves rope strings that V8 flattens whenever
 * something reads them, which moved the heap figure by megabytes from sample to sample).
 */
export function sessionModel(): { model: Model; streamFn: StreamFn } {
	const model = benchModel();
	let turn = 0;
	const streamFn: StreamFn = (_model, context) => {
		const last = context.messages.at(-1);
		turn++;
		const stream = new BenchEventStream();
		const message =
			last?.role === "toolResult"
				? benchMessage(model, [{ type: "text", text: `Here is what I found (${turn}): ${"a sentence of the answer, with some detail. ".repeat(14)}` }], "stop")
				: benchMessage(
						model,
						[
							{ type: "text", text: "Let me look that up." },
							{ type: "toolCall", id: `call_${turn}`, name: "search", arguments: { query: `question ${turn}` } },
						],
						"toolUse",
					);
		pushMessage(stream, message, 4);
		return stream;
	};
	return { model, streamFn };
}

function heap(): number {
	collectGarbage();
	return process.memoryUsage().heapUsed;
}

/** One session of `prompts` prompts on a fresh agent; returns the agent, still alive. */
async function session(prompts: number, onPrompt: (agent: Agent, index: number, promptMs: number) => void = () => {}): Promise<Agent> {
	const model = sessionModel();
	const agent = new Agent({ initialState: { model: model.model, tools: [search] }, streamFn: model.streamFn });
	let promptMs = 0;
	for (let index = 1; index <= prompts; index++) {
		const start = performance.now();
		await agent.prompt(`Question ${index}: ${"please explain this part of the system in detail. ".repeat(3)}`);
		promptMs += performance.now() - start;
		await nextTurnOfTheLoop();
		onPrompt(agent, index, promptMs);
	}
	return agent;
}

async function longSession(prompts: number, samples: number): Promise<Pick<SoakResult, "samples" | "afterDisposeBytes" | "baselineBytes">> {
	// A first session compiles and optimises the code: that memory is the program's, not the session's.
	(await session(Math.min(prompts, 300))).dispose();
	await nextTurnOfTheLoop();
	const baseline = heap();
	const points: SoakSample[] = [];
	const every = Math.max(1, Math.floor(prompts / samples));
	let last = { index: 0, promptMs: 0 };
	let agent: Agent | undefined = await session(prompts, (live, index, promptMs) => {
		if (index % every === 0 || index === prompts) {
			const msPerPrompt = (promptMs - last.promptMs) / (index - last.index);
			last = { index, promptMs };
			points.push({ prompts: index, heapBytes: heap() - baseline, transcriptBytes: JSON.stringify(live.state.messages).length, msPerPrompt });
		}
	});
	agent.dispose();
	agent = undefined;
	await nextTurnOfTheLoop();
	return { samples: points, afterDisposeBytes: heap() - baseline, baselineBytes: baseline };
}

async function agentsOneAfterAnother(count: number): Promise<number> {
	const model = sessionModel();
	const once = async () => {
		const agent = new Agent({ initialState: { model: model.model, tools: [search] }, streamFn: model.streamFn });
		await agent.prompt("one question");
		agent.dispose();
	};
	for (let index = 0; index < Math.min(count, 1_000); index++) await once();
	await nextTurnOfTheLoop();
	const before = heap();
	for (let index = 0; index < count; index++) await once();
	await nextTurnOfTheLoop();
	return (heap() - before) / count;
}

/**
 * Runs the soak in a child process and returns its figures.
 *
 * @example
 * const result = await measureSoak({ prompts: 500, agents: 1000 });
 */
export function measureSoak(options: SoakOptions = {}): Promise<SoakResult> {
	return runChild<SoakResult>(fileURLToPath(import.meta.url), options);
}

const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;

/**
 * The soak as a markdown table, with its verdicts: heap above baseline at most 2× the
 * transcript's JSON at every sample; after dispose at most 5 % above the baseline (what agents
 * leave behind; below it is V8 dropping code the baseline held, see the module's comment).
 *
 * @example
 * console.log(formatSoak(await measureSoak()));
 */
export function formatSoak(result: SoakResult): string {
	const lines = ["| prompts | heap above baseline | transcript (JSON) | heap / transcript | ms per prompt since the previous row |", "|---:|---:|---:|---:|---:|"];
	for (const sample of result.samples) {
		lines.push(
			`| ${sample.prompts.toLocaleString("en-US")} | ${mb(sample.heapBytes)} | ${mb(sample.transcriptBytes)} | ${(sample.heapBytes / sample.transcriptBytes).toFixed(2)} | ${sample.msPerPrompt.toFixed(2)} |`,
		);
	}
	const worst = Math.max(...result.samples.map((sample) => sample.heapBytes / sample.transcriptBytes));
	const back = result.afterDisposeBytes / result.baselineBytes;
	lines.push("");
	lines.push(`Largest heap / transcript: ${worst.toFixed(2)} (target at most 2): ${worst <= 2 ? "met" : "**missed**"}.`);
	const below = back < 0 ? " (below it: V8 dropped compiled code the baseline held, nothing of the agents')" : "";
	lines.push(`After dispose: ${mb(result.afterDisposeBytes)} above a ${mb(result.baselineBytes)} baseline (${(back * 100).toFixed(1)} %; target at most 5 % above)${below}: ${back <= 0.05 ? "met" : "**missed**"}.`);
	lines.push(`${result.agents.toLocaleString("en-US")} agents created, run and disposed one after another: ${Math.round(result.bytesLeftPerAgent)} bytes left behind per agent.`);
	return lines.join("\n");
}

async function child(options: SoakOptions): Promise<SoakResult> {
	const session = await longSession(options.prompts ?? 5_000, options.samples ?? 10);
	const agents = options.agents ?? 10_000;
	const bytesLeftPerAgent = await agentsOneAfterAnother(agents);
	return { ...session, agents, bytesLeftPerAgent };
}

if (isEntryPoint(import.meta.url)) {
	const payload = childPayload<SoakOptions>();
	if (payload) {
		reportFromChild(child(payload));
	} else {
		measureSoak().then(
			(result) => console.log(formatSoak(result)),
			(error: unknown) => {
				console.error(error);
				process.exitCode = 1;
			},
		);
	}
}
