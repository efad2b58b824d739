/**
 * Whether each performance technique of docs/performance.md still pays: the built package is
 * copied once per technique with that technique turned off (a one-line edit of `dist/`), and
 * each copy is measured against the package as built, in child processes of their own, in a
 * shuffled order per round. Three figures: CPU per 3-tool prompt and per 1-delta run
 * (sequential, warmed up: the per-turn and per-message costs), and the wall time of 1,000
 * concurrent prompts right after a full collection (what an idle gateway
 * meets when a burst arrives). Ratios are taken within each round.
 *
 * `npm run build && npx tsx bench/techniques.ts [rounds]` (default 5).
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { isEntryPoint } from "./lib/child.js";
import { createRandom, randomSeed } from "./lib/paired.js";
import { summarize } from "./lib/stats.js";

/** A technique, and the edit of `dist/` that turns it off. */
interface Technique {
	name: string;
	file: string;
	from: string;
	to: string;
}

/** The techniques measured (each edit must match once, or the bench refuses to run). */
export const TECHNIQUES: readonly Technique[] = [
	{ name: "keepShape (class maps kept alive)", file: "util/keep-shape.js", from: "kept.push(instance);", to: "" },
	{ name: "runLivedList (run-lived lists not pretenured)", file: "util/run-lived.js", from: "return EMPTY.slice();", to: "return [];" },
];

interface ChildResult {
	turnUs: number;
	shortRunUs: number;
	burstMs: number;
}

async function child(dist: string): Promise<ChildResult> {
	const { Agent } = (await import(`${resolve(dist, "index.js")}`)) as typeof import("../src/index.js");
	const { benchModel, freshTextStreamFn, toolTurnStreamFn } = await import("./lib/streams.js");
	const { instantTool } = await import("./lib/contenders.js");
	const model = benchModel();
	const tool = instantTool("noop", () => new Promise<void>((done) => setImmediate(done)));
	const streamFn = toolTurnStreamFn(model, { turns: 1, callsPerTurn: 3, toolName: tool.name });
	const make = () => new Agent({ initialState: { model, tools: [tool] }, streamFn });
	const gc = (globalThis as { gc?: () => void }).gc;
	if (!gc) throw new Error("run the child with --expose-gc");
	for (let i = 0; i < 3000; i++) await make().prompt("go");
	for (let i = 0; i < 3000; i++) await new Agent({ initialState: { model }, streamFn: freshTextStreamFn(model, "Hello there.", 1) }).prompt("hi");
	const turns: number[] = [];
	for (let block = 0; block < 10; block++) {
		const agents = Array.from({ length: 300 }, make);
		const start = process.cpuUsage();
		for (const agent of agents) await agent.prompt("go");
		const used = process.cpuUsage(start);
		turns.push((used.user + used.system) / agents.length);
	}
	const textStreamFn = freshTextStreamFn(model, "Hello there.", 1);
	const shortRuns: number[] = [];
	for (let block = 0; block < 10; block++) {
		const agents = Array.from({ length: 500 }, () => new Agent({ initialState: { model }, streamFn: textStreamFn }));
		const start = process.cpuUsage();
		for (const agent of agents) await agent.prompt("hi");
		const used = process.cpuUsage(start);
		shortRuns.push((used.user + used.system) / agents.length);
	}
	const bursts: number[] = [];
	for (let burst = 0; burst < 5; burst++) {
		const agents = Array.from({ length: 1000 }, make);
		gc();
		const start = performance.now();
		await Promise.all(agents.map((agent) => agent.prompt("go")));
		bursts.push(performance.now() - start);
	}
	return { turnUs: summarize(turns).median, shortRunUs: summarize(shortRuns).median, burstMs: summarize(bursts).median };
}

function measure(dist: string): ChildResult {
	const out = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", fileURLToPath(import.meta.url), "--child", dist], { encoding: "utf8" });
	if (out.status !== 0) throw new Error(`child failed: ${out.stderr}`);
	return JSON.parse(out.stdout.trim().split("\n").at(-1) as string) as ChildResult;
}

if (isEntryPoint(import.meta.url)) {
	const childAt = process.argv.indexOf("--child");
	if (childAt >= 0) {
		console.log(JSON.stringify(await child(process.argv[childAt + 1] as string)));
	} else {
		const rounds = Number(process.argv[2] ?? 5);
		const dist = resolve(fileURLToPath(new URL("../dist", import.meta.url)));
		// Inside the repository, so that the copies find its node_modules.
		mkdirSync(resolve(dist, "../test-output"), { recursive: true });
		const work = mkdtempSync(resolve(dist, "../test-output/techniques-"));
		try {
			const variants = [{ name: "as built", dist }];
			for (const [index, technique] of TECHNIQUES.entries()) {
				const copy = join(work, `off-${index}`);
				cpSync(dist, copy, { recursive: true });
				const path = join(copy, technique.file);
				const text = readFileSync(path, "utf8");
				if (text.split(technique.from).length !== 2) throw new Error(`${technique.name}: "${technique.from}" is not in ${technique.file} exactly once`);
				writeFileSync(path, text.replace(technique.from, technique.to));
				variants.push({ name: `${technique.name} off`, dist: copy });
			}
			const seed = randomSeed();
			const random = createRandom(seed);
			const ratios = new Map(variants.slice(1).map((variant) => [variant.name, { turn: [] as number[], shortRun: [] as number[], burst: [] as number[] }]));
			for (let round = 0; round < rounds; round++) {
				const results = new Map<string, ChildResult>();
				for (const variant of [...variants].sort(() => random() - 0.5)) results.set(variant.name, measure(variant.dist));
				const base = results.get("as built") as ChildResult;
				for (const [name, figures] of ratios) {
					const off = results.get(name) as ChildResult;
					figures.turn.push(off.turnUs / base.turnUs);
					figures.shortRun.push(off.shortRunUs / base.shortRunUs);
					figures.burst.push(off.burstMs / base.burstMs);
				}
				console.error(`round ${round + 1}/${rounds}: ${[...results].map(([name, result]) => `${name} ${result.turnUs.toFixed(0)} µs, ${result.burstMs.toFixed(0)} ms`).join("; ")}`);
			}
			console.log(`seed ${seed}, ${rounds} rounds; each technique turned off, over the package as built (median, min–max):\n`);
			console.log("| technique turned off | CPU per 3-tool prompt | CPU per 1-delta run | 1,000 concurrent prompts after a full collection, wall |");
			console.log("|---|---:|---:|---:|");
			const show = (samples: number[]) => {
				const summary = summarize(samples);
				return `${summary.median.toFixed(2)}× (${summary.min.toFixed(2)}–${summary.max.toFixed(2)})`;
			};
			for (const [name, figures] of ratios) console.log(`| ${name} | ${show(figures.turn)} | ${show(figures.shortRun)} | ${show(figures.burst)} |`);
		} finally {
			rmSync(work, { recursive: true, force: true });
		}
	}
}
