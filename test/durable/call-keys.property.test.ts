/**
 * Whatever ids a model gives the calls of one reply (repeated, or looking like the keys agentchart
 * makes: `x`, `x#1`, `x#2`), and in whatever order a person answers them, a decision
 * reaches the call it names and no other: answered by its `callKey`, each call runs (approved) or
 * not (rejected) as decided, also where its key is another call's id (a key names its call first);
 * answered by its bare id, it runs as decided when that id is no waiting call's key and fits no
 * other waiting call, and the decision is refused, deciding nothing, when it fits two. Every decision
 * the agent takes reaches its machine: the run ends once all are answered.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { ToolExecutionMode } from "../../src/types/agent.js";
import { makeTool, ok, sleep } from "../agent/helpers.js";

const RUNS = Number(process.env["PROPERTY_RUNS"] ?? 40);
const IDS = ["x", "x#1", "x#2", "x#1#1", "y", "#1"] as const;

async function until(condition: () => boolean): Promise<boolean> {
	for (let i = 0; i < 500; i++) {
		if (condition()) return true;
		await sleep(1);
	}
	return false;
}

describe("decisions on the calls of one reply, whatever their ids", () => {
	it(
		"reach the call they name, by callKey or by an id that fits one waiting call, and refuse a name that fits two",
		async () => {
			await fc.assert(
				fc.asyncProperty(
					fc.array(fc.constantFrom(...IDS), { minLength: 1, maxLength: 5 }),
					fc.constantFrom<ToolExecutionMode>("parallel", "streaming"),
					fc.array(fc.record({ pick: fc.nat(), approve: fc.boolean(), byId: fc.boolean() }), { minLength: 5, maxLength: 5 }),
					async (ids, mode, answers) => {
						const ran: number[] = [];
						const deploy = makeTool("deploy", async (_id, params) => {
							ran.push(Number(params["n"]));
							return ok("deployed");
						}, { needsApproval: true });
						const scripted = createScriptedModel([{ content: ids.map((id, n) => toolCall("deploy", { n }, id)) }, { content: "done" }]);
						const agent = new Agent({ initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn, toolExecution: mode });
						const run = agent.prompt("deploy");
						expect(await until(() => agent.pendingApprovals.length === ids.length)).toBe(true);
						const keys = agent.pendingApprovals.map((row) => row.callKey);
						expect(new Set(keys).size).toBe(ids.length);
						const approved = new Set<number>();
						for (const answer of answers) {
							const rows = agent.pendingApprovals;
							if (rows.length === 0) break;
							const row = rows[answer.pick % rows.length]!;
							const name = answer.byId ? row.toolCallId : row.callKey;
							// A key names its call (also where it is another call's id); else the calls with that id.
							const byKey = rows.filter((other) => other.callKey === name);
							const named = byKey.length > 0 ? byKey : rows.filter((other) => other.toolCallId === name);
							const decide = () => (answer.approve ? agent.approve(name) : agent.reject(name, "no"));
							if (named.length > 1) {
								expect(decide).toThrow(/names \d+ calls waiting for approval/);
								expect(agent.pendingApprovals).toHaveLength(rows.length);
								continue;
							}
							const target = named[0]!;
							await decide();
							if (answer.approve) approved.add((target.args as { n: number }).n);
							expect(agent.pendingApprovals.map((other) => other.callKey)).toEqual(rows.filter((other) => other !== target).map((other) => other.callKey));
						}
						// The rest rejected, each by its key: every call can be answered by its key.
						for (const row of agent.pendingApprovals) await agent.reject(row.callKey, "no");
						// Every decision the agent took reached its machine: the run ends (one the machine
						// ignored would leave it waiting for an answer nobody can give any more).
						expect(await Promise.race([run.then(() => "ended"), sleep(2_000).then(() => "still waiting")])).toBe("ended");
						expect(ran.sort()).toEqual([...approved].sort());
						expect(agent.state.messages.filter((message) => message.role === "toolResult")).toHaveLength(ids.length);
						agent.dispose();
					},
				),
				{ numRuns: RUNS },
			);
		},
		Math.max(60_000, RUNS * 1_500),
	);
});
