/**
 * An agent whose machine is pinned (`agent.actor` was read) keeps its machine between runs: the
 * run count and the queues live there, not in the agent, until the machine is released. What the
 * agent saves between runs must say what the machine says, or a restore looks for the wrong run.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { textOf } from "../agent/helpers.js";

describe("a pinned agent with a store", () => {
	it("saves its run count and queues as its machine has them: a restore finds the run the journal started", async () => {
		const store = createMemoryStore();
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, store, sessionId: "p1" });
		void agent.actor; // pinned: the machine stays between runs
		await agent.prompt("first");
		// Changed between runs: the next prompt saves the agent first, then journals the prompt.
		agent.state.messages = agent.state.messages.slice(0, 1);
		agent.followUp({ role: "user", content: "later", timestamp: 1 });
		await agent.saved();
		const idle = (await store.load("p1"))?.snapshot;
		expect(idle?.machine.context.runs).toBe(1);
		expect(idle?.machine.context.followUpQueue.map((message) => textOf(message))).toEqual(["later"]);
		agent.clearFollowUpQueue();
		await agent.prompt("second");
		await agent.saved();
		agent.dispose();
		const none = createScriptedModel([]);
		const again = await Agent.load({ store, sessionId: "p1", initialState: { model: none.model }, streamFn: none.streamFn });
		await again.waitForIdle();
		expect(none.calls).toHaveLength(0);
		expect(again.state.messages.map((message) => textOf(message))).toEqual(["first", "second", "two"]);
	});
});
