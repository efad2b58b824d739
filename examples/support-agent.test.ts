/**
 * The support agent, tested as you would test yours with `agentchart/testing`: the walk over its
 * chart, random runs, and the three mistakes the kit must catch, each with a short path.
 * Imports the package by its name: `npm test` builds it first (a lone run: `npm run build` first).
 */
import { describe, expect, it } from "vitest";
import { exploreAgent, fuzzAgent } from "agentchart/testing";
import { legacyLookupAgent, nudgingAgent, rateLimitedAgent, supportAgent } from "./support-agent.js";

const quiet = { log: () => undefined };

describe("the support agent, under agentchart/testing", () => {
	it("keeps every invariant on every path of its chart, approvals and restores included", async () => {
		const report = await exploreAgent(supportAgent);
		expect(report.violations, report.format()).toEqual([]);
		// The refund waits for approval: the walk approves, rejects and restores there too.
		expect(report.coverage.taken.some((key) => key.includes("awaiting-approval --approve"))).toBe(true);
		expect(report.coverage.missed, report.format()).toEqual([]);
	}, 120_000);

	it("keeps every invariant under random replies, faults, tool latencies, commands and restarts", async () => {
		const seed = Number(process.env["FUZZ_SEED"] ?? Date.now() % 2 ** 31);
		const report = await fuzzAgent(supportAgent, { runs: 60, seed });
		expect(report.violations, report.format()).toEqual([]);
		expect(report.ok).toBe(true);
	}, 120_000);
});

describe("agentchart/testing finds the mistakes people make", () => {
	it("a tool whose promise-like settles twice", async () => {
		const report = await exploreAgent(legacyLookupAgent);
		const found = report.violations.find((each) => each.rule === "tool-contract");
		expect(found?.message).toMatch(/tool "lookup_order" \(call \w+\) settled twice/);
		expect(found?.path.length).toBeLessThanOrEqual(5);
		// The second settle is seen after the reply that called the tool; how many steps after
		// (its own, or the delivery that follows) depends on when the tool's second callback runs.
		expect(found?.path.some((step) => /^stream\.done\(tools/.test(step))).toBe(true);
	}, 120_000);

	it("a beforeToolCall hook that throws on its second call only", async () => {
		const report = await exploreAgent(rateLimitedAgent);
		const found = report.violations.find((each) => each.rule === "hook-threw");
		expect(found?.message).toMatch(/beforeToolCall threw on its 2nd call .*rate limiter: bucket empty/);
		expect(found?.path.length).toBeLessThanOrEqual(5);
	}, 120_000);

	it("a listener that calls prompt from agent_end", async () => {
		const report = await exploreAgent(nudgingAgent);
		const found = report.violations.find((each) => each.rule === "unhandled-rejection" && /already processing/.test(each.message));
		expect(found, report.format()).toBeDefined();
		expect(found?.path).toEqual(["prompt"]);
	}, 120_000);

	it("the same mistakes under fuzzAgent, shrunk to a small scenario", async () => {
		const cases = [
			{ factory: legacyLookupAgent, rule: "tool-contract" },
			{ factory: rateLimitedAgent, rule: "hook-threw" },
			{ factory: nudgingAgent, rule: "unhandled-rejection" },
		] as const;
		for (const { factory, rule } of cases) {
			const report = await fuzzAgent(factory, { runs: 40, seed: 42, ...quiet });
			expect(report.ok, report.format()).toBe(false);
			expect(report.violations.map((each) => each.rule)).toContain(rule);
			// Shrunk: no command is needed to show any of them.
			expect(report.counterexample?.commands, report.format()).toEqual([]);
			expect(report.format()).toContain("replay: fuzzAgent(factory, { seed: 42");
		}
	}, 120_000);
});
