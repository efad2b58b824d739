/**
 * The fixed cost of a run, with each library alone in its process, as a user's process has it:
 * short runs (a new agent, one prompt, a 1-delta reply) and 3-tool turns (benchmark 2's
 * prompt), in CPU time, after 6,000 warm-up runs. V8 makes decisions per process (what to
 * compile, which allocation sites to pretenure) from what the process has run; here nothing
 * but the library under test has run. One child process per contender and repetition, the
 * contenders alternating; ratios are taken per repetition.
 *
 * `npm run build && npx tsx bench/solo-runs.ts [repetitions] [another build's dist/]`
 * (default 4; with a second build, e.g. an earlier commit's `dist/` built in a worktree, it is
 * measured as a third contender, to compare two builds).
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { instantTool } from "./lib/contenders.js";
import { median, summarize, type Summary } from "./lib/stats.js";
import { benchModel, prebuiltStreamFn, textReplyEvents, toolTurnStreamFn } from "./lib/streams.js";
import type { StreamFn } from "../src/types/stream.js";

/** What a child measured: µs of CPU per prompt, medians of its rounds. */
interface ChildResult {
	shortRun: number;
	toolTurn: number;
}

/** The part of either library's Agent a run here uses. */
interface SoloAgent {
	subscribe(listener: () => void): unknown;
	prompt(text: string): Promise<unknown>;
}
type AgentClass = new (options: { initialState: object; streamFn: StreamFn; toolExecution: "parallel" }) => SoloAgent;

const WARM_UP_RUNS = 6_000;
const ROUNDS = 15;
const SHORT_RUNS_PER_ROUND = 1_000;
const TURNS_PER_ROUND = 500;

async function loadAgent(source: string): Promise<AgentClass> {
	const module = (source === "pi" ? await import("@mariozechner/pi-agent-core") : await import(pathToFileURL(resolve(source, "index.js")).href)) as { Agent: AgentClass };
	return module.Agent;
}

/** µs of CPU per prompt, for `count` prompts each on a new agent. */
async function cpuPerPrompt(Agent: AgentClass, streamFn: StreamFn, count: number): Promise<number> {
	const model = benchModel();
	const tool = instantTool("noop");
	const start = process.cpuUsage();
	for (let index = 0; index < count; index++) {
		const agent = new Agent({ initialState: { model, tools: [tool] }, streamFn, toolExecution: "parallel" });
		agent.subscribe(() => {});
		await agent.prompt("go");
	}
	const used = process.cpuUsage(start);
	return (used.user + used.system) / count;
}

async function child(source: string): Promise<ChildResult> {
	const Agent = await loadAgent(source);
	const model = benchModel();
	const short = prebuiltStreamFn(textReplyEvents(model, 1));
	const turn = toolTurnStreamFn(model, { turns: 1, callsPerTurn: 3, toolName: instantTool("noop").name });
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
	if (process.argv[2] === "--child") {
		process.stdout.write(JSON.stringify(await child(process.argv[3] as string)));
		return;
	}
	const repetitions = Number(process.argv[2] ?? 4);
	if (!Number.isInteger(repetitions) || repetitions < 1) throw new Error(`solo-runs: repetitions must be a positive integer, got ${process.argv[2]}`);
	const here = fileURLToPath(import.meta.url);
	const contenders: Record<string, string> = { agentchart: resolve(here, "../../dist"), pi: "pi" };
	if (process.argv[3]) contenders["other build"] = resolve(process.argv[3]);
	const results: Record<string, ChildResult[]> = Object.fromEntries(Object.keys(contenders).map((name) => [name, []]));
	for (let repetition = 0; repetition < repetitions; repetition++) {
		const names = Object.keys(contenders);
		if (repetition % 2 === 1) names.reverse();
		for (const name of names) {
			const run = spawnSync(process.execPath, ["--import", "tsx", here, "--child", contenders[name] as string], { encoding: "utf8" });
			if (run.status !== 0) throw new Error(`solo-runs: the child for ${name} failed:\n${run.stderr}`);
			results[name]?.push(JSON.parse(run.stdout) as ChildResult);
		}
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

await main();
