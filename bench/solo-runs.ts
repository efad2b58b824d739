/**
 * The fixed cost of a run, with each library alone in its process, as a user's process has it:
 * short runs (a new agent, one prompt, a 1-delta reply) and 3-tool turns (benchmark 2's
 * prompt), each agent made right before its prompt (its construction counted), in CPU time,
 * after 6,000 warm-up runs. V8 makes decisions per process (what to
 * compile, which allocation sites to pretenure) from what the process has run; here nothing
 * but the library under test has run. One child process per contender and repetition, the
 * contenders alternating; ratios are taken per repetition.
 *
 * `npm run build && npx tsx bench/solo-runs.ts [repetitions] [another build's dist/]`
 * (default 4; with a second build, e.g. an earlier commit's `dist/` built in a worktree, it is
 * measured as a third contender, to compare two builds).
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { childPayload, isEntryPoint, reportFromChild, runChild } from "./lib/child.js";
import { type AgentName, instantTool } from "./lib/contenders.js";
import { loadAgentchart } from "./lib/library.js";
import { median, summarize, type Summary } from "./lib/stats.js";
import { benchModel, prebuiltStreamFn, textReplyEvents, toolTurnStreamFn } from "./lib/streams.js";
import type { StreamFn } from "../src/types/stream.js";

/** Who a child measures: a library, and for agentchart the build to load (this checkout's by default). */
interface SoloPayload {
	agent: AgentName;
	dist?: string | undefined;
}

/** What a child measured: µs of CPU per prompt, medians of its rounds. */
interface SoloResult {
	shortRun: number;
	toolTurn: number;
}

const SCRIPT = fileURLToPath(import.meta.url);
const WARM_UP_RUNS = 6_000;
const ROUNDS = 15;
const SHORT_RUNS_PER_ROUND = 1_000;
const TURNS_PER_ROUND = 500;
const TOOL = instantTool("noop");

/**
 * The part of either library's Agent a run here uses. The benchmarks' factory
 * (`loadBenchAgentFactory`) is not used: its wrapper of each agent, an object literal with a
 * getter and two closures, costs more to build than the difference measured here.
 */
interface SoloAgent {
	subscribe(listener: () => void): unknown;
	prompt(text: string): Promise<unknown>;
}
type AgentClass = new (options: { initialState: object; streamFn: StreamFn; toolExecution: "parallel" }) => SoloAgent;

/** µs of CPU per prompt, each agent made right before its prompt (its construction counted). */
async function cpuPerPrompt(Agent: AgentClass, streamFn: StreamFn, prompts: number): Promise<number> {
	const initialState = { model: benchModel(), tools: [TOOL] };
	const start = process.cpuUsage();
	for (let index = 0; index < prompts; index++) {
		const agent = new Agent({ initialState, streamFn, toolExecution: "parallel" });
		agent.subscribe(() => {});
		await agent.prompt("go");
	}
	const used = process.cpuUsage(start);
	return (used.user + used.system) / prompts;
}

async function measureInChild({ agent, dist }: SoloPayload): Promise<SoloResult> {
	const Agent = (agent === "pi" ? (await import("@mariozechner/pi-agent-core")).Agent : (await loadAgentchart(dist)).Agent) as unknown as AgentClass;
	const model = benchModel();
	const short = prebuiltStreamFn(textReplyEvents(model, 1));
	const turn = toolTurnStreamFn(model, { turns: 1, callsPerTurn: 3, toolName: TOOL.name });
	await cpuPerPrompt(Agent, short, WARM_UP_RUNS / 2);
	await cpuPerPrompt(Agent, turn, WARM_UP_RUNS / 2);
	const shortRun: number[] = [];
	const toolTurn: number[] = [];
	for (let round = 0; round < ROUNDS; round++) {
		shortRun.push(await cpuPerPrompt(Agent, short, SHORT_RUNS_PER_ROUND));
		toolTurn.push(await cpuPerPrompt(Agent, turn, TURNS_PER_ROUND));
	}
	return { shortRun: median(shortRun), toolTurn: median(toolTurn) };
}

const range = (summary: Summary, digits: number) => `${summary.median.toFixed(digits)} (${summary.min.toFixed(digits)}–${summary.max.toFixed(digits)})`;

async function main(): Promise<void> {
	const repetitions = Number(process.argv[2] ?? 4);
	if (!Number.isInteger(repetitions) || repetitions < 1) throw new Error(`solo-runs: repetitions must be a positive integer, got ${process.argv[2]}`);
	const contenders: Record<string, SoloPayload> = { agentchart: { agent: "agentchart" }, pi: { agent: "pi" } };
	if (process.argv[3]) contenders["other build"] = { agent: "agentchart", dist: resolve(process.argv[3]) };
	const results: Record<string, SoloResult[]> = Object.fromEntries(Object.keys(contenders).map((name) => [name, []]));
	for (let repetition = 0; repetition < repetitions; repetition++) {
		const names = Object.keys(contenders);
		if (repetition % 2 === 1) names.reverse();
		for (const name of names) results[name]?.push(await runChild<SoloResult>(SCRIPT, contenders[name]));
	}
	console.log(`µs of CPU per prompt, median (min–max) of ${repetitions} processes per contender; ratios per repetition`);
	for (const shape of ["shortRun", "toolTurn"] as const) {
		console.log(shape === "shortRun" ? "\na 1-delta run (new agent, one prompt)" : "\na 3-tool turn (benchmark 2's prompt)");
		for (const [name, list] of Object.entries(results)) {
			const own = summarize(list.map((result) => result[shape]));
			const versus = (other: string) => range(summarize(list.map((result, index) => result[shape] / (results[other]?.[index]?.[shape] ?? Number.NaN))), 2);
			const ratios = name === "pi" ? "" : `/ pi ${versus("pi")}${name === "agentchart" && results["other build"] ? `, / other build ${versus("other build")}` : ""}`;
			console.log(`  ${name.padEnd(12)} ${range(own, 1).padEnd(24)} ${ratios}`);
		}
	}
}

if (isEntryPoint(import.meta.url)) {
	const payload = childPayload<SoloPayload>();
	if (payload) reportFromChild(measureInChild(payload));
	else await main();
}
