/**
 * The fault-scripting model: each fault reaches the agent the way a real provider's would, and a
 * seed replays the same random faults.
 */
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { toolCall } from "../../src/providers/scripted.js";
import { createFaultyModel, type FaultKind } from "../../src/testing/faulty-model.js";
import { checkAgentInvariants } from "../../src/testing/agent-checks.js";
import type { AgentEvent } from "../../src/types/agent.js";
import type { AssistantMessage } from "../../src/types/messages.js";

const lookup = {
	name: "lookup_order",
	label: "Order lookup",
	description: "Finds an order.",
	parameters: Type.Object({ id: Type.String() }),
	execute: async () => ({ content: [{ type: "text" as const, text: "ships tomorrow" }], details: {} }),
};

function agentWith(model: ReturnType<typeof createFaultyModel>, extra: Partial<ConstructorParameters<typeof Agent>[0]> = {}) {
	const agent = new Agent({ initialState: { model: model.model, tools: [lookup] }, streamFn: model.streamFn, ...extra });
	const events: AgentEvent[] = [];
	agent.subscribe((event) => void events.push(event));
	return { agent, events };
}

const lastReply = (agent: Agent) => agent.state.messages.filter((m): m is AssistantMessage => m.role === "assistant").at(-1);

describe("createFaultyModel", () => {
	it("resets the connection after the chosen number of deltas, keeping what had streamed", async () => {
		const model = createFaultyModel([{ content: "Your order ships tomorrow." }], { chunkSize: 4, faults: { 0: { kind: "reset", afterDeltas: 2 } } });
		const { agent, events } = agentWith(model);
		await agent.prompt("Where is my order?");
		const reply = lastReply(agent);
		expect(reply?.stopReason).toBe("error");
		expect(reply?.errorMessage).toBe("read ECONNRESET");
		expect(reply?.content).toEqual([{ type: "text", text: "Your ord" }]);
		expect(model.injected).toEqual([{ call: 0, kind: "reset", afterDeltas: 2 }]);
		expect(checkAgentInvariants(events, agent)).toEqual([]);
	});

	it("stops on the output limit and loses the tool call that was still streaming", async () => {
		const model = createFaultyModel([{ content: [{ type: "text", text: "Let me look." }, toolCall("lookup_order", { id: "A-17" })] }], { chunkSize: 4, faults: { 0: { kind: "output-limit", afterDeltas: 4 } } });
		const { agent, events } = agentWith(model);
		await agent.prompt("Where is my order?");
		const reply = lastReply(agent);
		expect(reply?.stopReason).toBe("length");
		expect(reply?.content).toEqual([{ type: "text", text: "Let me look." }]);
		expect(checkAgentInvariants(events, agent)).toEqual([]);
	});

	it("overflows the context before any output, which an agent with compaction recovers from", async () => {
		const model = createFaultyModel([{ content: "never seen" }, { content: "## Goal\nsummary" }, { content: "Answered after compacting." }], { faults: { 0: { kind: "overflow" } } });
		const { agent, events } = agentWith(model, { compaction: { enabled: true, keepRecentTokens: 10 } });
		agent.state.messages = [
			{ role: "user", content: [{ type: "text", text: "earlier ".repeat(50) }], timestamp: 1 },
			{ role: "assistant", content: [{ type: "text", text: "ok ".repeat(50) }], api: "scripted", provider: "scripted", model: "scripted-1", usage: lastUsage(), stopReason: "stop", timestamp: 2 },
		];
		await agent.prompt("Where is my order?");
		expect(events.some((event) => event.type === "auto_compaction_start" && event.reason === "overflow")).toBe(true);
		expect(lastReply(agent)?.content).toEqual([{ type: "text", text: "Answered after compacting." }]);
		expect(checkAgentInvariants(events, agent)).toEqual([]);
	});

	it("stalls until the agent's idle timeout aborts the stream", async () => {
		const model = createFaultyModel([{ content: "Your order ships tomorrow." }], { faults: { 0: { kind: "stall", afterDeltas: 1 } } });
		const { agent, events } = agentWith(model, { streamIdleTimeoutMs: 50 });
		const started = Date.now();
		await agent.prompt("Where is my order?");
		expect(Date.now() - started).toBeLessThan(2000);
		expect(lastReply(agent)?.stopReason).toMatch(/error|aborted/);
		expect(checkAgentInvariants(events, agent)).toEqual([]);
	});

	it("replays the same random faults from the same seed", async () => {
		const run = async (seed: number) => {
			const model = createFaultyModel(Array.from({ length: 12 }, () => ({ content: "A reply of some length." })), { random: { seed, probability: 0.5, kinds: ["reset", "error", "output-limit"] as FaultKind[] } });
			const { agent } = agentWith(model);
			for (let i = 0; i < 12; i++) await agent.prompt(`question ${i}`);
			return model.injected;
		};
		const first = await run(7);
		expect(first.length).toBeGreaterThan(0);
		expect(await run(7)).toEqual(first);
		expect(await run(8)).not.toEqual(first);
	});
});

function lastUsage() {
	return { input: 1, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 11, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}
