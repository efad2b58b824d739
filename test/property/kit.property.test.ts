/**
 * fuzzAgent (agentchart/testing) over agents with everything switched on, in the three tool
 * execution modes: a hook that asks approval for one tool, a tool that always needs it, a slow
 * tool, compaction by the model, a short stream idle timeout (so stalls are generated too). The
 * kit's random runs are the property: the invariants hold under random replies and faults, tool
 * latencies and failures, commands and restarts. `PROPERTY_RUNS` sets the runs per mode,
 * `PROPERTY_SEED` replays a seed.
 */
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { fuzzAgent } from "../../src/testing/fuzz.js";
import type { AgentFactory } from "../../src/testing/walk/cast.js";
import type { AgentTool, ToolExecutionMode } from "../../src/types/agent.js";

const NUM_RUNS = Number(process.env["PROPERTY_RUNS"] ?? 60);
const SEED = Number(process.env["PROPERTY_SEED"] ?? Date.now() % 2 ** 31);

const orderParams = Type.Object({ id: Type.String() });
const lookup: AgentTool<typeof orderParams> = {
	name: "lookup_order",
	label: "Order lookup",
	description: "Finds an order.",
	parameters: orderParams,
	async execute(_id, { id }, signal) {
		await new Promise((resolve) => setTimeout(resolve, signal?.aborted ? 0 : 3));
		return { content: [{ type: "text", text: `${id}: ships tomorrow` }], details: {} };
	},
};
const refund: AgentTool<typeof orderParams> = { ...lookup, name: "refund", label: "Refund", description: "Refunds an order.", needsApproval: true };
const cancel: AgentTool<typeof orderParams> = { ...lookup, name: "cancel", label: "Cancel", description: "Cancels an order." };

function factoryFor(mode: ToolExecutionMode): AgentFactory {
	return (kit) => {
		const options = kit.options({
			initialState: { model: createScriptedModel([]).model, tools: [lookup, refund, cancel] },
			toolExecution: mode,
			streamIdleTimeoutMs: 100,
			compaction: { enabled: true, keepRecentTokens: 20 },
			beforeToolCall: async ({ toolCall }) => (toolCall.name === "cancel" ? { approval: "required", reason: "cancelling is final" } : undefined),
		});
		return kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
	};
}

describe("agentchart/testing's fuzzAgent over a fully configured agent", () => {
	for (const mode of ["parallel", "sequential", "streaming"] as ToolExecutionMode[]) {
		it(`keeps every invariant (toolExecution: ${mode})`, async () => {
			const report = await fuzzAgent(factoryFor(mode), { runs: NUM_RUNS, seed: SEED, log: (line) => console.log(`${mode}: ${line}`) });
			expect(report.violations, report.format()).toEqual([]);
			expect(report.ok).toBe(true);
		}, Math.max(120_000, NUM_RUNS * 1_000));
	}
});
