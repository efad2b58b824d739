/**
 * Settings no run can use are refused with a `TypeError` naming them before anything is recorded
 * (agent.md), found missing by probe AZ (2026-12-07): `outputLimitRecovery` was not checked (null
 * failed the run's first cut-off reply inside the chart, "yes" or a string count turned recovery
 * off or compared it as a string), nor were the stream callbacks `onPayload` and `onResponse`
 * (they failed each request inside the provider), and `listeners: 5` threw JavaScript's own
 * "is not iterable".
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentOptions } from "../../src/agent.js";

function agentWith(extra: Partial<Record<keyof AgentOptions, unknown>>) {
	const scripted = createScriptedModel([{ content: "cut", stopReason: "length" }, { content: "rest" }]);
	const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, ...(extra as Partial<AgentOptions>) });
	return { agent, scripted };
}

describe("settings a run cannot use", () => {
	it.each<[Partial<Record<keyof AgentOptions, unknown>>, string]>([
		[{ outputLimitRecovery: "yes" }, 'agent.outputLimitRecovery must be { maxAttempts } or undefined, got "yes"'],
		[{ outputLimitRecovery: { maxAttempts: -1 } }, "agent.outputLimitRecovery has maxAttempts -1: it must be a whole number, at least 0"],
		[{ outputLimitRecovery: { maxAttempts: "2" } }, 'agent.outputLimitRecovery has maxAttempts "2": it must be a whole number, at least 0'],
		[{ outputLimitRecovery: {} }, "agent.outputLimitRecovery has maxAttempts undefined: it must be a whole number, at least 0"],
		[{ onPayload: 5 }, "agent.onPayload must be a function, got 5"],
		[{ onResponse: "log" }, 'agent.onResponse must be a function, got "log"'],
	])("refuses %j at prompt(), before anything is recorded", async (extra, message) => {
		const { agent, scripted } = agentWith(extra);
		await expect(agent.prompt("go")).rejects.toThrow(new TypeError(message));
		expect(agent.state.messages).toEqual([]);
		expect(scripted.calls).toHaveLength(0);
	});

	it("takes a null outputLimitRecovery as none: the cut-off reply ends the run as it came", async () => {
		const { agent, scripted } = agentWith({ outputLimitRecovery: null });
		await agent.prompt("go");
		expect(scripted.calls).toHaveLength(1);
		expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "length" });
		expect(agent.state.errorMessage).toBeUndefined();
	});

	it("resumes with a whole maxAttempts, as before", async () => {
		const { agent, scripted } = agentWith({ outputLimitRecovery: { maxAttempts: 1 } });
		await agent.prompt("go");
		expect(scripted.calls).toHaveLength(2);
	});

	it("refuses listeners that are not a list when the agent is made, and takes null as none", () => {
		expect(() => new Agent({ listeners: 5 as never })).toThrow(new TypeError("new Agent(options).listeners: expected a list of listener functions, got 5"));
		expect(() => new Agent({ listeners: null as never })).not.toThrow();
	});
});
