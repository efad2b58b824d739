/**
 * fuzzAgent disposes agents at random events: a wrapper of the Agent that gets disposal wrong is
 * found, shrunk to a scenario with the disposal in it, and replayed from its seed and path. Each
 * planted bug shows only after a `dispose()` in the middle of a scenario, so these tests fail
 * when the fuzzer's `dispose` command does nothing.
 */
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Agent, type AgentOptions } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { type FuzzScenario, fuzzAgent } from "../../src/testing/fuzz.js";
import type { AgentFactory } from "../../src/testing/walk/cast.js";
import type { AgentTool } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import type { ImageContent } from "../../src/types/content.js";

const params = Type.Object({ id: Type.String() });
const lookup: AgentTool<typeof params> = {
	name: "lookup_order",
	label: "Order lookup",
	description: "Finds an order.",
	parameters: params,
	async execute(_id, { id }) {
		return { content: [{ type: "text", text: `${id}: ships tomorrow` }], details: {} };
	},
};
const quiet = { log: () => undefined };
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The mistake: "closing" a session only aborts its run, so the agent goes on taking commands. */
class AbortOnlyAgent extends Agent {
	override dispose(): void {
		this.abort();
	}
}

/**
 * The mistake of agentchart's own c4bbd52: a run's promise that settles at dispose() while its
 * last events are still on their way to a listener (here: a wrapper that resolves every pending
 * prompt when it is closed, in front of a listener that stores each event for a few ms).
 */
class EagerCloseAgent extends Agent {
	#closed: (() => void) | undefined;
	readonly #whenClosed = new Promise<void>((resolve) => (this.#closed = resolve));
	override prompt(message: AgentMessage | AgentMessage[]): Promise<void>;
	override prompt(input: string, images?: ImageContent[]): Promise<void>;
	override prompt(input: string | AgentMessage | AgentMessage[], images?: ImageContent[]): Promise<void> {
		const run = typeof input === "string" ? super.prompt(input, images) : super.prompt(input);
		return Promise.race([run, this.#whenClosed]);
	}
	override dispose(): void {
		this.#closed?.();
		super.dispose();
	}
}

function factoryOf(Kind: new (options: AgentOptions) => Agent, listeners: AgentOptions["listeners"] = []): AgentFactory {
	return (kit) => new Kind(kit.options({ initialState: { model: createScriptedModel([]).model, tools: [lookup] }, listeners }));
}

describe("fuzzAgent disposes the agent at random events", () => {
	it("finds an agent that takes commands after dispose(), shrunk to the disposal and one command, and replays it", async () => {
		const factory = factoryOf(AbortOnlyAgent);
		const report = await fuzzAgent(factory, { runs: 100, seed: 11, restarts: false, ...quiet });
		expect(report.ok, report.format()).toBe(false);
		expect(report.violations.map((each) => each.rule)).toContain("command");
		expect(report.format()).toMatch(/\[command\] (steer|followUp|prompt|continue)\(\) after dispose\(\) (returned|resolved) instead of throwing "Agent has been disposed: create a new Agent to run again\."/);
		// In the order they are issued: by the event each waits for.
		const commands = report.counterexample?.commands.toSorted((one, other) => one.atEvent - other.atEvent).map((each) => each.command);
		expect(commands?.[0], report.format()).toBe("dispose");
		expect(commands, report.format()).toHaveLength(2);
		const replay = await fuzzAgent(factory, { seed: 11, path: report.path, restarts: false, ...quiet });
		expect(replay.counterexample).toEqual(report.counterexample);
		expect(replay.violations).toEqual(report.violations);
		// The printed scenario alone shows it too, and a correct agent passes it.
		const printed = JSON.parse(JSON.stringify(report.counterexample)) as FuzzScenario;
		expect((await fuzzAgent(factory, { scenario: printed, ...quiet })).violations).toEqual(report.violations);
		expect((await fuzzAgent(factoryOf(Agent), { scenario: printed, ...quiet })).ok).toBe(true);
	}, 120_000);

	it("finds a run whose prompt() settles at dispose() before its agent_end reached a slow listener", async () => {
		const slowStore = async () => sleep(3);
		const factory = factoryOf(EagerCloseAgent, [slowStore]);
		const report = await fuzzAgent(factory, { runs: 100, seed: 23, restarts: false, ...quiet });
		expect(report.ok, report.format()).toBe(false);
		expect(report.format()).toMatch(/\[settle\] prompt\(\) settled after dispose\(\) before the run's agent_end reached the listeners/);
		expect(report.counterexample?.commands.map((each) => each.command), report.format()).toEqual(["dispose"]);
		const replay = await fuzzAgent(factory, { seed: 23, path: report.path, restarts: false, ...quiet });
		expect(replay.counterexample).toEqual(report.counterexample);
	}, 120_000);

	it("takes the documented give-up: a listener that holds an event past toolAbortGraceMs after dispose() is not reported", async () => {
		/** A shutdown that flushes to a slow store: each event after dispose() takes longer than the grace. */
		class FlushingAgent extends Agent {
			closing = false;
			override dispose(): void {
				this.closing = true;
				super.dispose();
			}
		}
		let held = 0;
		const factory: AgentFactory = (kit) => {
			let agent: FlushingAgent | undefined;
			const flush = async () => {
				if (!agent?.closing || !agent.state.isStreaming) return;
				held++;
				await sleep(60);
			};
			agent = new FlushingAgent(kit.options({ initialState: { model: createScriptedModel([]).model, tools: [lookup] }, toolAbortGraceMs: 20, listeners: [flush] }));
			return agent;
		};
		const report = await fuzzAgent(factory, { runs: 40, seed: 47, restarts: false, ...quiet });
		expect(report.ok, report.format()).toBe(true);
		expect(held).toBeGreaterThan(0);
	}, 120_000);

	it("passes an agent that is disposed as documented, restarts included", async () => {
		let restores = 0;
		const factory: AgentFactory = (kit) => {
			const options = kit.options({ initialState: { model: createScriptedModel([]).model, tools: [lookup] } });
			if (!kit.snapshot) return new Agent(options);
			restores++;
			return Agent.restore(kit.snapshot, options);
		};
		const report = await fuzzAgent(factory, { runs: 40, seed: 31, ...quiet });
		expect(report.ok, report.format()).toBe(true);
		expect(restores).toBeGreaterThan(0);
	}, 120_000);
});
