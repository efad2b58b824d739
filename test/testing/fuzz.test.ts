/**
 * fuzzAgent: a seed replays the same runs, a failure is shrunk and reported with what replays it,
 * and the restarts it makes go through the factory's restore.
 */
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { type FuzzCommand, type FuzzScenario, fuzzAgent } from "../../src/testing/fuzz.js";
import type { AgentFactory } from "../../src/testing/walk/cast.js";
import type { AgentTool } from "../../src/types/agent.js";

const params = Type.Object({ id: Type.String() });
function lookup(onRun: () => void): AgentTool<typeof params> {
	return {
		name: "lookup_order",
		label: "Order lookup",
		description: "Finds an order.",
		parameters: params,
		async execute(_id, { id }) {
			onRun();
			return { content: [{ type: "text", text: `${id}: ships tomorrow` }], details: {} };
		},
	};
}
const quiet = { log: () => undefined };

describe("fuzzAgent", () => {
	it("replays the same scenarios from the same seed", async () => {
		const seen: string[][] = [[], []];
		for (const round of [0, 1]) {
			const factory: AgentFactory = (kit) => {
				const options = kit.options({ initialState: { model: createScriptedModel([]).model, tools: [lookup(() => undefined)] } });
				const agent = kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
				agent.subscribe((event) => void (event.type === "message_end" && seen[round]?.push(JSON.stringify(event.message.content))));
				return agent;
			};
			const report = await fuzzAgent(factory, { runs: 15, seed: 1234, ...quiet });
			expect(report.ok, report.format()).toBe(true);
		}
		expect(seen[0]?.length).toBeGreaterThan(15);
		expect(seen[1]).toEqual(seen[0]);
	}, 60_000);

	it("shrinks a failure of your own check and prints the seed and path that replay it", async () => {
		const lines: string[] = [];
		const factory: AgentFactory = (kit) => new Agent(kit.options({ initialState: { model: createScriptedModel([]).model, tools: [lookup(() => undefined)] } }));
		// A check that fails as soon as the model made two tool calls in one reply.
		const check = (agent: Agent) => (agent.state.messages.some((m) => m.role === "assistant" && m.content.filter((b) => b.type === "toolCall").length >= 2) ? ["two calls in one reply"] : []);
		const report = await fuzzAgent(factory, { runs: 100, seed: 99, restarts: false, check, log: (line) => void lines.push(line) });
		expect(report.ok).toBe(false);
		expect(report.violations).toContainEqual({ rule: "custom", message: "two calls in one reply" });
		// Shrunk: a reply with the two calls, no fault, no command, the simplest tool behaviour.
		expect(report.counterexample?.replies.map((reply) => reply.calls)).toContainEqual([0, 0]);
		expect(report.counterexample?.replies.every((reply) => reply.fault === undefined)).toBe(true);
		expect(report.counterexample?.tools).toEqual([{ latencyMs: 0, fails: false }]);
		expect(report.counterexample?.commands).toEqual([]);
		expect(lines[0]).toBe("fuzzAgent seed: 99  (fuzzAgent(factory, { seed: 99 }) replays these runs)");
		const replay = await fuzzAgent(factory, { seed: 99, path: report.path, restarts: false, check, ...quiet });
		expect(replay.counterexample).toEqual(report.counterexample);
	}, 60_000);

	it("plays a scenario a report printed, once, without searching (a regression test that outlives the seed)", async () => {
		const factory: AgentFactory = (kit) => new Agent(kit.options({ initialState: { model: createScriptedModel([]).model, tools: [lookup(() => undefined)] } }));
		const check = (agent: Agent) => (agent.state.messages.some((m) => m.role === "assistant" && m.content.filter((b) => b.type === "toolCall").length >= 2) ? ["two calls in one reply"] : []);
		const found = await fuzzAgent(factory, { runs: 100, seed: 99, restarts: false, check, ...quiet });
		const printed = JSON.parse(JSON.stringify(found.counterexample)) as FuzzScenario;
		const lines: string[] = [];
		const replay = await fuzzAgent(factory, { scenario: printed, check, log: (line) => void lines.push(line) });
		expect(replay.ok).toBe(false);
		expect(replay.runs).toBe(1);
		expect(replay.violations).toEqual(found.violations);
		expect(replay.counterexample).toEqual(printed);
		expect(lines).toEqual([replay.format()]);
		expect(replay.format()).toMatch(/^fuzzAgent: the given scenario violates 1 invariant\(s\)\n {2}scenario: \{"replies"/);
		// Without the mistake, the same scenario passes.
		const fixed = await fuzzAgent(factory, { scenario: printed, ...quiet });
		expect(fixed.ok, fixed.format()).toBe(true);
		expect(fixed.format()).toBe("fuzzAgent: the given scenario, no violation");
	}, 60_000);

	it("refuses a scenario that is not one a report prints, and a scenario with a path", async () => {
		const factory: AgentFactory = (kit) => new Agent(kit.options({ initialState: { model: createScriptedModel([]).model, tools: [lookup(() => undefined)] } }));
		const scenario: FuzzScenario = { replies: [{ calls: [0] }], tools: [{ latencyMs: 0, fails: false }], commands: [{ atEvent: 2, command: "dispose" }] };
		await expect(fuzzAgent(factory, { scenario: { ...scenario, commands: [{ atEvent: 2, command: "shutdown" as FuzzCommand }] }, ...quiet })).rejects.toThrow(/a command must be \{ atEvent, command \} with a command among .*dispose, got \{"atEvent":2,"command":"shutdown"\}/);
		await expect(fuzzAgent(factory, { scenario: { ...scenario, replies: [] }, ...quiet })).rejects.toThrow(TypeError);
		await expect(fuzzAgent(factory, { scenario, seed: 1, path: "0", ...quiet })).rejects.toThrow(/a scenario, or a seed and path that find one, not both/);
		expect((await fuzzAgent(factory, { scenario, ...quiet })).ok).toBe(true);
	}, 60_000);

	it("restarts through the factory's restore", async () => {
		let restores = 0;
		const factory: AgentFactory = (kit) => {
			const options = kit.options({ initialState: { model: createScriptedModel([]).model, tools: [lookup(() => undefined)] } });
			if (!kit.snapshot) return new Agent(options);
			restores++;
			return Agent.restore(kit.snapshot, options);
		};
		const report = await fuzzAgent(factory, { runs: 30, seed: 5, ...quiet });
		expect(report.ok, report.format()).toBe(true);
		expect(restores).toBeGreaterThan(0);
	}, 60_000);

	it("restarts at an approval wait only once a listener that returns a promise has let the kit hear the run's events", async () => {
		// The snapshot was taken as soon as the call waited in the machine, with approval_requested still
		// on its way to the listeners: the restored run's decision was reported as resolving no request.
		const refund: AgentTool<typeof params> = { ...lookup(() => undefined), name: "refund", label: "Refund", needsApproval: true };
		const store = async () => new Promise<void>((resolve) => setTimeout(resolve, 2));
		const factory: AgentFactory = (kit) => {
			const options = kit.options({ initialState: { model: createScriptedModel([]).model, tools: [lookup(() => undefined), refund] }, toolExecution: "sequential", listeners: [store] });
			return kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
		};
		const scenario: FuzzScenario = { replies: [{ calls: [1] }], tools: [{ latencyMs: 0, fails: false }], commands: [{ atEvent: 0, command: "restart" }] };
		const report = await fuzzAgent(factory, { scenario, ...quiet });
		expect(report.violations, report.format()).toEqual([]);
		const random = await fuzzAgent(factory, { runs: 40, seed: 3, ...quiet });
		expect(random.violations, random.format()).toEqual([]);
	}, 60_000);

	it("snapshots after a decision made while a restart waits for the listeners only once the kit heard it", async () => {
		// The settling loop approved the waiting call on the old agent right after the restart's wait
		// for a slow listener; the snapshot held the call decided, and the restored run ended a call
		// whose decision the kit never heard ("ended while its approval was still requested").
		const refund: AgentTool<typeof params> = { ...lookup(() => undefined), name: "refund", label: "Refund", needsApproval: true };
		let events = 2;
		const store = async () => {
			if (events++ % 3 === 0) await new Promise<void>((resolve) => setTimeout(resolve, 2));
		};
		const factory: AgentFactory = (kit) => {
			const options = kit.options({ initialState: { model: createScriptedModel([]).model, tools: [lookup(() => undefined), refund] }, toolExecution: "streaming", listeners: [store] });
			return kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
		};
		const scenario: FuzzScenario = { replies: [{ calls: [0] }, { calls: [1] }], tools: [{ latencyMs: 0, fails: true }], commands: [{ atEvent: 19, command: "reject" }, { atEvent: 22, command: "restart" }] };
		const report = await fuzzAgent(factory, { scenario, ...quiet });
		expect(report.violations, report.format()).toEqual([]);
	}, 60_000);

	it("says when a tool that is not replay-safe runs twice across a restart (a snapshot restored without its journal)", async () => {
		const refund: AgentTool<typeof params> = { ...lookup(() => undefined), name: "refund", label: "Refund", needsApproval: true };
		const factory: AgentFactory = (kit) => {
			const options = kit.options({ initialState: { model: createScriptedModel([]).model, tools: [lookup(() => undefined), refund] } });
			// The mistake: the snapshot is stored without its journal, so the restored run cannot know what already ran.
			return kit.snapshot ? Agent.restore({ ...kit.snapshot, journal: [], journalSeq: 0 }, options) : new Agent(options);
		};
		const report = await fuzzAgent(factory, { runs: 300, seed: 7, ...quiet });
		expect(report.ok).toBe(false);
		expect(report.violations.map((each) => each.rule)).toContain("replay");
		// Whichever tool the shrunk scenario ran twice (the approval tool, or one beside it).
		expect(report.format()).toMatch(/\[replay\] tool "(refund|lookup_order)" \(call call_\d+\) ran 2 times although it is not replay: "safe"/);
	}, 120_000);
});
