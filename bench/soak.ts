/**
 * Benchmark 6: a long session, as a chat gateway runs one. One agent takes `prompts` prompts in
 * a row, each with one tool call and realistic text sizes, yielding to the event loop between
 * prompts as a server does; the heap (after a full collection) is sampled as it goes and
 * compared with the size of the transcript as JSON. Then every agent is disposed and dropped:
 * the heap must come back to where it started. A second part creates, runs and disposes
 * agents one after another and reports what each leaves behind.
 *
 * It runs in a child process of its own (`--expose-gc`), so nothing else in the heap moves the
 * figures. `npx tsx --expose-gc bench/soak.ts` runs it alone.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Type } from "typebox";
import { Agent } from "../src/agent.js";
import { createScriptedModel, text, toolCall } from "../src/providers/scripted.js";
import type { AgentTool } from "../src/types/agent.js";
import type { Message } from "../src/types/messages.js";
import { collectGarbage } from "./lib/stats.js";

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
const search: AgentTool<typeof params> = {
	name: "search",
	label: "Search",
	description: "Searches the knowledge base",
	parameters: params,
	async execute(_id, { query }) {
		return { content: [{ type: "text", text: `Results for ${query}: ${"a relevant passage of the knowledge base. ".repeat(9)}` }], details: { hits: 3 } };
	},
};

/** A model that answers every prompt with one search, then a paragraph. */
function sessionModel() {
	const scripted = createScriptedModel([]);
	let turn = 0;
	const streamFn: typeof scripted.streamFn = (model, context, options) => {
		const last = context.messages.at(-1) as Message | undefined;
		turn++;
		scripted.append(
			last?.role === "toolResult"
				? { content: [text(`Here is what I found (${turn}): ${"a sentence of the answer, with some detail. ".repeat(14)}`)] }
				: { content: [text("Let me look that up."), toolCall("search", { query: `question ${turn}` })] },
		);
		// The scripted model keeps every call's context for tests; a session must not.
		scripted.calls.length = 0;
		scripted.callOptions.length = 0;
		return scripted.streamFn(model, context, options);
	};
	return { model: scripted.model, streamFn };
}

const turnOfTheLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

function heap(): number {
	collectGarbage();
	return process.memoryUsage().heapUsed;
}

/** One session of `prompts` prompts on a fresh agent; returns the agent, still alive. */
async function session(prompts: number, onPrompt: (agent: Agent, index: number) => void = () => {}): Promise<Agent> {
	const model = sessionModel();
	const agent = new Agent({ initialState: { model: model.model, tools: [search] }, streamFn: model.streamFn });
	for (let index = 1; index <= prompts; index++) {
		await agent.prompt(`Question ${index}: ${"please explain this part of the system in detail. ".repeat(3)}`);
		await turnOfTheLoop();
		onPrompt(agent, index);
	}
	return agent;
}

async function longSession(prompts: number, samples: number): Promise<Pick<SoakResult, "samples" | "afterDisposeBytes" | "baselineBytes">> {
	// A first session compiles and optimises the code: that memory is the program's, not the session's.
	(await session(Math.min(prompts, 300))).dispose();
	await turnOfTheLoop();
	const baseline = heap();
	const points: SoakSample[] = [];
	const every = Math.max(1, Math.floor(prompts / samples));
	let agent: Agent | undefined = await session(prompts, (live, index) => {
		if (index % every === 0 || index === prompts) {
			points.push({ prompts: index, heapBytes: heap() - baseline, transcriptBytes: JSON.stringify(live.state.messages).length });
		}
	});
	agent.dispose();
	agent = undefined;
	await turnOfTheLoop();
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
	await turnOfTheLoop();
	const before = heap();
	for (let index = 0; index < count; index++) await once();
	await turnOfTheLoop();
	return (heap() - before) / count;
}

/**
 * Runs the soak in a child process and returns its figures.
 *
 * @example
 * const result = measureSoak({ prompts: 500, agents: 1000 });
 */
export function measureSoak(options: SoakOptions = {}): SoakResult {
	const script = fileURLToPath(import.meta.url);
	const output = execFileSync(process.execPath, ["--expose-gc", "--import", "tsx", script, "--child", JSON.stringify(options)], {
		encoding: "utf8",
		maxBuffer: 16 * 1024 * 1024,
	});
	return JSON.parse(output.trim().split("\n").at(-1) ?? "{}") as SoakResult;
}

const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;

/**
 * The soak as a markdown table, with its verdicts: heap above baseline at most 2× the
 * transcript's JSON at every sample; back to the baseline within 5 % after dispose.
 *
 * @example
 * console.log(formatSoak(measureSoak()));
 */
export function formatSoak(result: SoakResult): string {
	const lines = ["| prompts | heap above baseline | transcript (JSON) | heap / transcript |", "|---:|---:|---:|---:|"];
	for (const sample of result.samples) {
		lines.push(`| ${sample.prompts.toLocaleString("en-US")} | ${mb(sample.heapBytes)} | ${mb(sample.transcriptBytes)} | ${(sample.heapBytes / sample.transcriptBytes).toFixed(2)} |`);
	}
	const worst = Math.max(...result.samples.map((sample) => sample.heapBytes / sample.transcriptBytes));
	const back = result.afterDisposeBytes / result.baselineBytes;
	lines.push("");
	lines.push(`Largest heap / transcript: ${worst.toFixed(2)} (target at most 2): ${worst <= 2 ? "met" : "**missed**"}.`);
	lines.push(`After dispose: ${mb(result.afterDisposeBytes)} above a ${mb(result.baselineBytes)} baseline (${(back * 100).toFixed(1)} %; target within 5 %): ${Math.abs(back) <= 0.05 ? "met" : "**missed**"}.`);
	lines.push(`${result.agents.toLocaleString("en-US")} agents created, run and disposed one after another: ${Math.round(result.bytesLeftPerAgent)} bytes left behind per agent.`);
	return lines.join("\n");
}

async function child(options: SoakOptions): Promise<void> {
	const session = await longSession(options.prompts ?? 5_000, options.samples ?? 10);
	const agents = options.agents ?? 10_000;
	const bytesLeftPerAgent = await agentsOneAfterAnother(agents);
	const result: SoakResult = { ...session, agents, bytesLeftPerAgent };
	process.stdout.write(`${JSON.stringify(result)}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
	const childIndex = process.argv.indexOf("--child");
	const run = childIndex >= 0 ? child(JSON.parse(process.argv[childIndex + 1] ?? "{}") as SoakOptions) : Promise.resolve().then(() => console.log(formatSoak(measureSoak())));
	run.catch((error: unknown) => {
		console.error(error);
		process.exitCode = 1;
	});
}
