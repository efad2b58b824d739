import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { fitLine } from "../../bench/lib/stats.js";
import { startSampler } from "../../bench/lib/child.js";
import { createRandom, pairedRatio, roundOrders } from "../../bench/lib/paired.js";
import { formatResults } from "../../bench/report.js";
import { childPids } from "../processes.js";
import { parseBenchArgs, QUICK_PLAN, runBenchmarks } from "../../bench/run.js";
import type { Summary } from "../../bench/lib/stats.js";
import { allocationBySite, costModels, liveHeapMidRun, profileShortRuns, runtimeFloor, widthCosts } from "../../bench/where-time-goes.js";

const finite = (summary: Summary | undefined) => summary !== undefined && [summary.median, summary.min, summary.max].every(Number.isFinite);

// Benchmarks are never timed in unit tests (the machine is shared and noisy); this only
// checks that the quick mode runs end to end and yields numbers, and that the pairing and the
// fit the verdicts rest on are right.
describe("benchmarks (quick mode smoke test)", () => {
	it("produce finite figures for every section and print every target", async () => {
		const results = await runBenchmarks(QUICK_PLAN, { quick: true, seed: 7, log: () => {} });

		for (const row of results.throughput?.rows ?? []) {
			expect(finite(row.throughputVsPi) && finite(row.timeVsFloor)).toBe(true);
		}
		expect(results.throughput?.rows).toHaveLength(QUICK_PLAN.throughput.sizes.length);
		expect(finite(results.throughput?.fits.pi.nsPerDelta)).toBe(true);
		// The smallest size again, in a process without the warm-up runs.
		expect(results.throughput?.beforeRunCodeIsOptimized?.row.deltas).toBe(QUICK_PLAN.throughput.sizes[0]);
		expect(finite(results.throughput?.beforeRunCodeIsOptimized?.row.throughputVsPi)).toBe(true);
		expect(finite(results.turnOverhead?.parallelVsPi)).toBe(true);
		expect(finite(results.turnOverhead?.streamingVsPi)).toBe(true);
		// Heap deltas of a few agents are within the heap's own noise (they can be negative): finite is all a smoke run shows.
		expect(finite(results.memory?.idle.ratio)).toBe(true);
		expect(finite(results.memory?.afterRun.ratio)).toBe(true);
		expect(results.concurrency?.peakRssBytes.pi.median).toBeGreaterThan(0);
		expect(results.concurrency?.wallMs.agentchart.median).toBeGreaterThan(0);
		expect(results.concurrency?.cappedYoungGeneration?.peakRssBytes.agentchart.median).toBeGreaterThan(0);
		expect(results.concurrency?.cappedYoungGeneration?.semiSpaceMiB).toBe(16);
		expect(results.concurrency?.youngGenerationBytes.agentchart.median).toBeGreaterThan(0);
		expect(finite(results.inspector?.ratio)).toBe(true);
		expect(results.overlap).toHaveLength(3);
		expect(results.soak?.samples.length).toBeGreaterThan(0);
		// The memory store and no store again, each alone in a child process.
		expect(finite(results.durable?.solo.newRatio) && finite(results.durable?.solo.ongoingRatio)).toBe(true);
		// A local restate-server and two workers: a session turn, the floor's, sessions per second.
		expect(finite(results.restate?.session) && finite(results.restate?.floor) && finite(results.restate?.sessionsPerSecond)).toBe(true);

		const report = formatResults(results, "npm run bench -- --quick");
		expect(report).toContain("seed 7");
		expect(report).toContain("Each size was measured after 20 short runs per contender");
		expect(report).toMatch(/Targets: \d+ of \d+ met/);
		// The reply layer's long reply, both kinds, with the target on the larger growth.
		for (const kind of ["partial reply", "streamed reasoning"] as const) expect(results.replyChunker?.longReply.byKind[kind].growth).toBeGreaterThan(0);
		expect(report).toMatch(/reply layer, µs per delta of a [\d,]+-delta reply/);
		expect(report).toContain("Agent sessions on Restate");
		expect(report).toContain("peak RSS, whole process, both with `--max-semi-space-size=16` (no target)");
		expect(report).toContain("each alone in its process), an ongoing session");
	}, 300_000);
});

describe("the diagnosis behind docs/performance.md's cost breakdown (bench/where-time-goes.ts)", () => {
	it("charges every profile sample to one bucket, the chart's among them, measures heap per agent mid-run and the parts of a run", async () => {
		const shares = await profileShortRuns(200, 20);
		expect(shares.reduce((sum, [, share]) => sum + share, 0)).toBeCloseTo(1, 6);
		expect(shares.find(([bucket]) => bucket === "agentchart dist/machines")?.[1]).toBeGreaterThan(0);
		const heap = await liveHeapMidRun("agentchart", 20);
		expect(Number.isFinite(heap.idleKiB) && Number.isFinite(heap.midRunKiB)).toBe(true);
		const models = await costModels(1, 10);
		for (const model of [models.agentchart, models.pi]) expect([model.run, model.turn, model.toolCall].every(Number.isFinite)).toBe(true);
		expect(models.agentchart.run).toBeGreaterThan(0);
		const allocated = await allocationBySite("agentchart", 4, 1);
		expect(allocated.perRunKiB).toBeGreaterThan(0);
		// The sites add up to the whole, and each names a function, its file and line: the stream actor's among them.
		expect(allocated.sites.reduce((sum, [, size]) => sum + size, 0)).toBeCloseTo(allocated.perRunKiB, 6);
		expect(allocated.sites.some(([site]) => /actors\/stream-actor\.js:\d+$/.test(site))).toBe(true);
		// The floor's actor reaches its end (else this would hang) and every figure is a time.
		const floor = await runtimeFloor(1, 5);
		for (const figure of Object.values(floor)) expect(figure).toBeGreaterThan(0);
		// Each library and width measured in a child of its own; a prompt always costs some CPU.
		const widths = await widthCosts([1, 8], 1, 16, 8);
		for (const name of ["agentchart", "pi"] as const) {
			for (const width of [1, 8]) {
				expect(widths[name][width]?.cpu).toBeGreaterThan(0);
				expect(widths[name][width]?.collectorPauses).toBeGreaterThanOrEqual(0);
			}
		}
	}, 90_000);
});

describe("a contender in a process of its own, asked for samples (bench/lib/child.ts startSampler)", () => {
	const script = fileURLToPath(new URL("./fixtures/sampler-child.ts", import.meta.url));
	const alive = (pid: number) => {
		try {
			process.kill(pid, 0);
			return true;
		} catch {
			return false;
		}
	};

	it("answers each request with one sample, in order; a failed sample rejects and the next goes on; stop() ends the process", async () => {
		const sampler = await startSampler<{ taken: number; pid: number }>(script, { failAt: 2 });
		try {
			const first = await sampler.sample();
			expect(first.taken).toBe(1);
			await expect(sampler.sample()).rejects.toThrow(/sample 2 refused/);
			expect((await sampler.sample()).taken).toBe(3);
			await sampler.stop();
			expect(alive(first.pid)).toBe(false);
		} finally {
			await sampler.stop();
		}
	}, 60_000);

	it("rejects with the child's error when its set-up fails, and leaves no process behind", async () => {
		const before = childPids();
		await expect(startSampler(script, { failSetUp: true })).rejects.toThrow(/set-up refused/);
		// The child is gone by the time the start rejects (its stop awaited its exit).
		expect(childPids().filter((pid) => !before.includes(pid))).toEqual([]);
	}, 60_000);
});

describe("benchmark pairing and fitting", () => {
	it("gives every contender every position equally often over each block of rounds", () => {
		const orders = roundOrders(["a", "b", "c"], 6, createRandom(3));
		for (const name of ["a", "b", "c"]) {
			const positions = orders.map((order) => order.indexOf(name)).sort();
			expect(positions).toEqual([0, 0, 1, 1, 2, 2]);
		}
	});

	it("repeats the same orders for the same seed", () => {
		expect(roundOrders(["x", "y"], 8, createRandom(42))).toEqual(roundOrders(["x", "y"], 8, createRandom(42)));
	});

	it("takes ratios round by round", () => {
		expect(pairedRatio([2, 9, 4], [1, 3, 1])).toMatchObject({ median: 3, min: 2, max: 4 });
	});

	it("fits the marginal cost and the fixed cost of a line", () => {
		const fit = fitLine([1_000, 10_000, 100_000], [1.5, 6, 51]);
		expect(fit.slope).toBeCloseTo(0.0005, 9);
		expect(fit.intercept).toBeCloseTo(1, 9);
		expect(fit.r2).toBeCloseTo(1, 9);
	});
});

describe("the bench's command line", () => {
	it("reads its flags; --help asks for the usage", () => {
		expect(parseBenchArgs([])).toEqual({ help: false, quick: false, write: false });
		expect(parseBenchArgs(["--only", "turnOverhead,memory", "--seed", "7", "--write"])).toEqual({ help: false, quick: false, write: true, seed: 7, only: ["turnOverhead", "memory"] });
		expect(parseBenchArgs(["--help"]).help).toBe(true);
		expect(parseBenchArgs(["-h", "--quick"])).toMatchObject({ help: true, quick: true });
	});

	// `npm run bench -- --help` used to run every section and rewrite results.md.
	it("refuses an unknown flag, or one without its value, instead of running everything", () => {
		expect(() => parseBenchArgs(["--hepl"])).toThrow(/unknown option "--hepl"[\s\S]*Usage: npm run bench/);
		expect(() => parseBenchArgs(["--seed"])).toThrow(/--seed wants a value/);
		expect(() => parseBenchArgs(["--only", "--quick"])).toThrow(/--only wants a value/);
		expect(() => parseBenchArgs(["--seed", "x"])).toThrow(/--seed wants an integer/);
		expect(() => parseBenchArgs(["--only", "speed"])).toThrow(/unknown section "speed"/);
	});
});

describe("bench/turn-paired.ts (docs/performance.md's in-process turn ratio)", () => {
	it("prints the median ratio of paired blocks with its spread", async () => {
		const root = fileURLToPath(new URL("../..", import.meta.url));
		const stdout = await new Promise<string>((resolve, reject) => {
			execFile(process.execPath, ["--import", "tsx", "bench/turn-paired.ts", "streaming", "2", "10"], { cwd: root, encoding: "utf8" }, (error, out, stderr) =>
				error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(out),
			);
		});
		expect(stdout).toContain("agentchart streaming vs pi parallel");
		expect(stdout).toMatch(/ours \/ pi \d+\.\d\d× \(interquartile \d+\.\d\d–\d+\.\d\d, min–max \d+\.\d\d–\d+\.\d\d\)/);
	}, 60_000);
});
