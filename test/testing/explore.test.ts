/**
 * exploreAgent over a user's configuration (the kit's planning, not agentchart's own walk, which
 * test/model runs): a hook that asks approval for one tool only still has its approvals walked,
 * and a reported path replays.
 */
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { exploreAgent } from "../../src/testing/explore.js";
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
});
