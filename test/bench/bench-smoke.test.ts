import { describe, expect, it } from "vitest";
import { formatResults } from "../../bench/report.js";
import { QUICK_PLAN, runBenchmarks } from "../../bench/run.js";

// Benchmarks are never timed in unit tests (the machine is shared and noisy); this only
// checks that the quick mode runs end to end and yields numbers.
describe("benchmarks (quick mode smoke test)", () => {
	it("produce finite figures for every contender", async () => {
		const results = await runBenchmarks(QUICK_PLAN, true, () => {});

		for (const row of results.throughput) {
			for (const value of Object.values(row.deltasPerSecond)) expect(Number.isFinite(value)).toBe(true);
			for (const value of Object.values(row.nsPerDelta)) expect(Number.isFinite(value)).toBe(true);
		}
		for (const value of Object.values(results.toolLoop.usPerTurn)) expect(Number.isFinite(value)).toBe(true);
		for (const value of Object.values(results.memory.bytesPerAgent)) expect(Number.isFinite(value)).toBe(true);
		expect(results.overlap).toHaveLength(3);
		for (const row of results.overlap) {
			expect(Number.isFinite(row.wallMs)).toBe(true);
			expect(Number.isFinite(row.idealMs)).toBe(true);
		}
		expect(formatResults(results, "npm run bench -- --quick")).toContain("Targets");
	});
});
