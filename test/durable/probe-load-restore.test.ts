/**
 * What an outside probe of durable runs found at load and restore, each held here: a run restored
 * into a store while it waited for a person stored nothing (a restart lost the question); a stored
 * run was continued with a tool it could not run (the person's approval was used up on
 * "tool.execute is not a function"); a snapshot version of 1.5 was read; a store whose `load`
 * answered garbage made a new session of a stored one, without a word.
 */
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createMemoryStore } from "../../src/durable/store.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentTool } from "../../src/types/agent.js";
import type { Context } from "../../src/types/model.js";

let runs = 0;
const deploy: AgentTool = {
	name: "deploy",
	label: "Deploy",
	description: "Deploys.",
	parameters: Type.Object({}),
	needsApproval: true,
	async execute() {
		runs++;
		return { content: [{ type: "text", text: "deployed" }], details: {} };
	},
};
const reply = (context: Context) => (context.messages.at(-1)?.role === "toolResult" ? { content: "Done." } : { content: [toolCall("deploy", {}, "c1")] });

/** A snapshot of a run that waits for approval of c1, as plain JSON. */
async function waitingSnapshot(): Promise<AgentSnapshot> {
	const scripted = createScriptedModel([reply, reply]);
	const agent = new Agent({ initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn });
	void agent.prompt("deploy");
	while (agent.pendingApprovals.length === 0) await new Promise((resolve) => setTimeout(resolve, 2));
	const snapshot = JSON.parse(JSON.stringify(agent.snapshot())) as AgentSnapshot;
	agent.dispose();
	return snapshot;
}

describe("restore and load, as a user runs them", () => {
	it("a run restored into a store while it waits for a person is stored, so a restart still asks", async () => {
		const store = createMemoryStore();
		const scripted = createScriptedModel([reply, reply]);
		const options = { store, sessionId: "s", initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn };
		const restored = Agent.restore(await waitingSnapshot(), options);
		expect(restored.pendingApprovals.map((call) => call.toolCallId)).toEqual(["c1"]);
		await restored.saved();
		const reloaded = await Agent.load(options);
		expect(reloaded.pendingApprovals.map((call) => call.toolCallId)).toEqual(["c1"]);
		expect(reloaded.state.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
		runs = 0;
		await reloaded.approve("c1");
		await reloaded.waitForIdle();
		expect(runs).toBe(1);
		restored.dispose();
	});

	it("a run that goes on with a tool it cannot run is refused at restore and at load, naming the tool", async () => {
		const snapshot = await waitingSnapshot();
		const stub = { name: "deploy", label: "Deploy", description: "Deploys.", parameters: Type.Object({}) } as unknown as AgentTool;
		const scripted = createScriptedModel([reply]);
		expect(() => Agent.restore(snapshot, { initialState: { model: scripted.model, tools: [stub] }, streamFn: scripted.streamFn })).toThrow(new TypeError('Tool "deploy": execute must be a function'));
		const store = createMemoryStore();
		const first = Agent.restore(snapshot, { store, sessionId: "s", initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn });
		await first.saved();
		await expect(Agent.load({ store, sessionId: "s", initialState: { model: scripted.model, tools: [stub] }, streamFn: scripted.streamFn })).rejects.toThrow('Tool "deploy": execute must be a function');
		// The load failed before it opened the session: the agent that has it still writes it.
		await first.reject("c1", "not now");
		await first.waitForIdle();
		await expect(first.saved()).resolves.toBeUndefined();
		// An idle snapshot starts no run: its tools are checked when one starts, as pi's are.
		const idle = new Agent({ initialState: { model: scripted.model } }).snapshot();
		expect(() => Agent.restore(idle, { initialState: { model: scripted.model, tools: [stub] } })).not.toThrow();
	});

	it("a snapshot whose version is not a whole number is refused", async () => {
		const snapshot = await waitingSnapshot();
		const scripted = createScriptedModel([reply]);
		// The version as it is (a text quoted); one that cannot be made text (damage) still gives the refusal.
		for (const [version, named] of [[1.5, "1.5"], [Number.NaN, "NaN"], ["1", '"1"'], [{ toString: 0 }, "{ toString: 0 }"]] as const) {
			expect(() => Agent.restore({ ...snapshot, version } as never, { initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn })).toThrow(`agentchart: a snapshot without a valid version (${named})`);
		}
	});

	it("a store whose load answers something else than a session is refused, naming what it answered", async () => {
		const scripted = createScriptedModel([]);
		for (const answer of [42, {}, { snapshot: "x", problems: [] }, { snapshot: undefined, problems: "none" }]) {
			const store = { ...createMemoryStore(), load: async () => answer as never };
			await expect(Agent.load({ store, sessionId: "s", initialState: { model: scripted.model } })).rejects.toThrow(/^Agent\.load: the store's load\(\) must answer undefined \(no such session\) or \{ snapshot, problems: string\[\] \}, got /);
		}
		for (const answer of [undefined, null, { snapshot: undefined, problems: [] }]) {
			const store = { ...createMemoryStore(), load: async () => answer as never };
			const agent = await Agent.load({ store, sessionId: "s", initialState: { model: scripted.model } });
			expect(agent.state.messages).toEqual([]);
		}
	});
});
