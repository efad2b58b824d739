/**
 * A write a caller awaits covers every command made before it: once `approve()` or `reject()`
 * resolves, the process may exit (docs/durable.md), so what the store holds at that moment must
 * have the steering and follow-up messages sent before, and every decision made before. The
 * property sends random commands to an agent waiting for approval, its store's writes landing a
 * moment late, and at each decision that resolved restores from what the store holds then.
 * `PROPERTY_RUNS` (default 40) sets the runs, `PROPERTY_SEED` replays a seed.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AnyAgentTool, ToolExecutionMode } from "../../src/types/agent.js";
import { makeTool, ok, textOf } from "../agent/helpers.js";
import { lateStore } from "./late-store.js";

const PROPERTY_RUNS = Number(process.env["PROPERTY_RUNS"] ?? 40);
const PROPERTY_SEED = Number(process.env["PROPERTY_SEED"] ?? Date.now() % 2 ** 31);
const CALLS = ["a", "b", "c"] as const;

type Command = { kind: "steer" } | { kind: "followUp" } | { kind: "approve"; call: (typeof CALLS)[number] } | { kind: "reject"; call: (typeof CALLS)[number] };

const command: fc.Arbitrary<Command> = fc.oneof(
	fc.constantFrom<Command>({ kind: "steer" }, { kind: "followUp" }),
	fc.record({ kind: fc.constant("approve" as const), call: fc.constantFrom(...CALLS) }),
	fc.record({ kind: fc.constant("reject" as const), call: fc.constantFrom(...CALLS) }),
);

describe("what a store holds once an awaited decision resolved", () => {
	it("property: has every steering and follow-up message sent before it, and every decision made before it", async () => {
		console.log(`property seed (awaited writes): ${PROPERTY_SEED}  (PROPERTY_SEED=${PROPERTY_SEED} to replay)`);
		await fc.assert(
			fc.asyncProperty(fc.constantFrom<ToolExecutionMode>("parallel", "sequential", "streaming"), fc.array(command, { minLength: 1, maxLength: 8 }), async (mode, commands) => {
				const inner = createMemoryStore();
				const tools: AnyAgentTool[] = [makeTool("send", async () => ok("sent"), { needsApproval: true })];
				const scripted = createScriptedModel([{ content: CALLS.map((id) => toolCall("send", { to: id }, id)) }, { content: "done" }, { content: "more" }, { content: "more" }]);
				const agent = new Agent({ initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn, store: lateStore(inner), sessionId: "s", toolExecution: mode });
				void agent.prompt("go");
				for (let i = 0; i < 500 && agent.pendingApprovals.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 1));
				const queued: string[] = [];
				const decided = new Set<string>();
				try {
					for (const [index, next] of commands.entries()) {
						if (next.kind === "steer" || next.kind === "followUp") {
							const text = `${next.kind} ${index}`;
							agent[next.kind]({ role: "user", content: text, timestamp: index });
							queued.push(text);
							continue;
						}
						if (!agent.pendingApprovals.some((call) => call.toolCallId === next.call)) continue;
						await (next.kind === "approve" ? agent.approve(next.call) : agent.reject(next.call, "no"));
						decided.add(next.call);
						// The process exits here: what the store holds now is all a restart finds.
						const held = (await inner.load("s"))?.snapshot as AgentSnapshot;
						const context = held.machine.context;
						const stored = [...context.steeringQueue, ...context.followUpQueue, ...context.messages].map((message) => textOf(message));
						for (const text of queued) expect(stored, `"${text}" was sent before ${next.kind}(${next.call}) resolved`).toContain(text);
						const stopped = createMemoryStore();
						stopped.saveSnapshot("s", held);
						const again = createScriptedModel([]);
						const restored = await Agent.load({ store: stopped, sessionId: "s", initialState: { tools }, streamFn: again.streamFn, toolExecution: mode });
						const waiting = restored.pendingApprovals.map((call) => call.toolCallId);
						restored.dispose();
						for (const id of decided) expect(waiting, `${id} was decided before ${next.kind}(${next.call}) resolved`).not.toContain(id);
					}
				} finally {
					agent.dispose();
				}
			}),
			{ numRuns: PROPERTY_RUNS, seed: PROPERTY_SEED },
		);
	}, Math.max(60_000, PROPERTY_RUNS * 1500));
});
