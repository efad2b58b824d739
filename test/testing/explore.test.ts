/**
 * exploreAgent over a user's configuration (the kit's planning, not agentchart's own walk, which
 * test/model runs): a hook that asks approval for one tool only still has its approvals walked,
 * a reported path replays, and restores from a reply still streaming with calls that had started
 * are walked (the restored reply is closed with those calls from the journal).
 */
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { exploreAgent } from "../../src/testing/explore.js";
import { CLOSED_WITH_STARTED_CALLS } from "../../src/testing/model/plan.js";
import { describeDifference } from "../../src/testing/model/projection.js";
import { type ExploreReport, formatExploreReport } from "../../src/testing/explore-report.js";
import type { AgentFactory } from "../../src/testing/walk/cast.js";
import type { AgentTool } from "../../src/types/agent.js";

const orderParams = Type.Object({ id: Type.String() });
const lookupOrder: AgentTool<typeof orderParams> = {
	name: "lookup_order",
	label: "Order lookup",
	description: "Finds an order.",
	parameters: orderParams,
	execute: async (_id, { id }) => ({ content: [{ type: "text", text: `${id}: ships tomorrow` }], details: {} }),
};
const refund: AgentTool<typeof orderParams> = { ...lookupOrder, name: "refund", label: "Refund", description: "Refunds an order." };

const withPolicy: AgentFactory = (kit) => {
	const options = kit.options({
		initialState: { model: createScriptedModel([]).model, tools: [lookupOrder, refund] },
		beforeToolCall: async ({ toolCall }) => (toolCall.name === "refund" ? { approval: "required" as const, reason: "money moves" } : undefined),
	});
	return kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
};

describe("exploreAgent", () => {
	it("walks the approvals a hook asks for one tool only (planning around the calls it lets through)", async () => {
		const report = await exploreAgent(withPolicy);
		expect(report.violations, report.format()).toEqual([]);
		const approvals = report.coverage.possible.filter((key) => key.includes("awaiting-approval"));
		expect(approvals.length).toBeGreaterThan(2);
		expect(report.coverage.missed.filter((key) => key.includes("awaiting-approval")), report.format()).toEqual([]);
		expect(report.replanned).toBeGreaterThan(0);
	}, 120_000);

	it("replays one path from its printed steps", async () => {
		const lines: string[] = [];
		const report = await exploreAgent(withPolicy, { path: "prompt → delivered → delivered → stream.start → stream.done(text) → delivered", log: (line) => void lines.push(line) });
		expect(report.paths).toBe(1);
		expect(lines).toEqual(["path 1/1: prompt → delivered → delivered → stream.start → stream.done(text) → delivered"]);
		expect(report.leftEarly).toEqual([]);
		expect(report.violations).toEqual([]);
	}, 60_000);

	it("walks a sequential tool that needs approval in streaming mode, with calls queued behind its wait", async () => {
		// The chart looped to XState's microstep limit here (the queued calls counted as work): the walk checks it now.
		const serialRefund: AgentTool<typeof orderParams> = { ...refund, executionMode: "sequential", needsApproval: true };
		const factory: AgentFactory = (kit) => {
			const options = kit.options({ initialState: { model: createScriptedModel([]).model, tools: [serialRefund, lookupOrder] }, toolExecution: "streaming" });
			return kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
		};
		const report = await exploreAgent(factory);
		expect(report.violations, report.format()).toEqual([]);
		expect(report.leftEarly, report.format()).toEqual([]);
		expect(report.coverage.possible.some((key) => key.includes("awaiting-approval")), report.format()).toBe(true);
	}, 120_000);

	describe("restores from a reply still streaming after some of its calls started (streaming tool execution)", () => {
		const refundWithApproval: AgentTool<typeof orderParams> = { ...refund, needsApproval: true };
		/** A streaming agent with a plain tool (not replay-safe) and one that needs approval; `keep` says what of the snapshot's journal its restore keeps. */
		const streamingAgent =
			(keep: (snapshot: AgentSnapshot) => AgentSnapshot = (snapshot) => snapshot): AgentFactory =>
			(kit) => {
				const options = kit.options({ initialState: { model: createScriptedModel([]).model, tools: [lookupOrder, refundWithApproval] }, toolExecution: "streaming" });
				return kit.snapshot ? Agent.restore(keep(kit.snapshot), options) : new Agent(options);
			};

		it("restores from there, and plans and checks the steps after the replayed reply", async () => {
			const report = await exploreAgent(streamingAgent(), { restores: "everywhere" });
			expect(report.violations, report.format()).toEqual([]);
			const closed = report.coverage.restores.taken.filter((kind) => kind.endsWith(CLOSED_WITH_STARTED_CALLS));
			// A call running, one ended, one waiting for approval, one rejected: each restored from.
			for (const calls of ["0:runnings", "0:settledsj", "1:awaiting-approvals", "1:settledsx"]) expect(closed, report.format()).toContainEqual(expect.stringContaining(`calls: ${calls}`));
			expect(report.coverage.restores.missed, report.format()).toEqual([]);
			expect(report.leftEarly, report.format()).toEqual([]);
			expect(report.coverage.missed, report.format()).toEqual([]);
		}, 120_000);

		it("finds a restore that closes the reply without the calls that had started (the model call's journal entries dropped)", async () => {
			// A store that keeps tool entries but not model calls: the restored agent asks the model again.
			const withoutModelEntries = streamingAgent((snapshot) => ({ ...snapshot, journal: snapshot.journal.filter((entry) => entry.kind !== "model") }));
			// Paths the defect leads astray wait for the agent at most this long before planning again;
			// the path that shows it ends at the restore or just after, so there is nothing to shrink.
			const report = await exploreAgent(withoutModelEntries, { restores: "everywhere", stepTimeoutMs: 200, shrink: false });
			const lost = report.violations.filter((found) => found.rule === "tool-answered");
			expect(lost.length, report.format()).toBeGreaterThan(0);
			// prompt, delivered, stream.start, the call streamed, delivered (its listeners have its start: it runs), the reply's end, the restore.
			expect(Math.min(...lost.map((found) => found.path.length)), report.format()).toBeLessThanOrEqual(7);
			// Seen at the restore, or at the model call the restored agent makes next.
			expect(lost[0]?.path.slice(-2)).toContain("agentchart.testing.restore");
		}, 120_000);
	});
});

// Found by a probe (2026-12-07): a path left early printed the two projections as they are
// compared ({"st":"active","v":"{\"running\":…","run":{"ab":false,…}}), keys no user can read.
describe("where the agent and the walk's model part, as a report says it", () => {
	it("names each field that differs in words, the agent's reading first", () => {
		const real = JSON.stringify({ st: "active", v: JSON.stringify({ running: "awaiting-approval" }), s: 0, f: 1, tail: "assistant", wait: false, run: { ab: false, te: false, b: { m: "parallel", c: "1:awaiting-approvals" } } });
		const model = JSON.stringify({ st: "active", v: JSON.stringify({ running: "turn-ended" }), s: 0, f: 1, tail: "toolResult", wait: false, run: { ab: false, te: true, b: { m: "parallel", c: "1:settled" } } });
		expect(describeDifference(real, model)).toBe("state running.awaiting-approval, the model's running.turn-ended; last message assistant, the model's toolResult; turn ended false, the model's true; tool calls sample call 1 awaiting-approval (started), the model's sample call 1 settled");
		// Found by a probe (2026-12-07): reports printed the walk's own codes for calls and queue polls.
		const calls = (c: string, q: string) => JSON.stringify({ st: "active", v: JSON.stringify("idle"), s: 0, f: 0, tail: "assistant", wait: false, run: { q, b: { m: "parallel", c } } });
		expect(describeDifference(calls("0:runnings", "SF"), calls("0:settledsm", ""))).toBe(
			"queues polled steering polled, follow-ups polled, the model's none; tool calls sample call 0 running (started), the model's sample call 0 settled (started, its result emitted)",
		);
		expect(describeDifference(real, JSON.stringify({ st: "active", v: JSON.stringify("idle"), s: 0, f: 0, tail: "assistant", wait: false }))).toBe(
			"state running.awaiting-approval, the model's idle; follow-ups queued 1, the model's 0; run in progress, the model's none",
		);
	});
});

// Found by a probe (2026-12-07): every agent with an afterToolCall got "taken outside the model:
// agent.running --tool.returned#0[isRunningCall]--> (self)", which the docs read as your code
// doing something unusual; it is the walk not stepping through that hook.
describe("a transition outside the model that the walk knows the reason for", () => {
	it("says why: an afterToolCall is not walked step by step", () => {
		const key = "agent.running --tool.returned#0[isRunningCall]--> (self)";
		const report: ExploreReport = {
			ok: true,
			configuration: "parallel tool execution, afterToolCall",
			paths: 1,
			planned: 1,
			steps: 1,
			durationMs: 1,
			model: { states: 1, edges: 1 },
			coverage: { possible: [], taken: [], missed: [], outside: [key, "agent.running --abort#0--> agent.running.tool-draining"], restores: { possible: [], taken: [], missed: [] } },
			replanned: 0,
			leftEarly: [],
			violations: [],
			format: () => "",
		};
		const lines = formatExploreReport(report).split("\n");
		expect(lines).toContain(`    taken outside the model: ${key} (your afterToolCall was asked: the walk lets it answer as your code does, and plans no step while it runs)`);
		expect(lines).toContain("    taken outside the model: agent.running --abort#0--> agent.running.tool-draining");
	});
});
