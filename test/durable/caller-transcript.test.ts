/**
 * A message your code puts in `agent.state.messages` during a run is the agent's: the run does not
 * send it, the next one does, and the run's end saves it. A snapshot taken during the run, or
 * `agent.save()`, holds it too, in its place (found by a probe: a note added while a call waited
 * for approval was in `agent.state.messages` but not in `snapshot()`, and a restored agent came
 * back without it, on both interpreters).
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { makeTool, ok, textOf, user } from "../agent/helpers.js";

const roles = (messages: readonly AgentMessage[]) => messages.map((message) => `${message.role}:${textOf(message).slice(0, 20)}`);

function setUp() {
	const scripted = createScriptedModel([{ content: [toolCall("charge", { amount: 20 }, "c1")] }, { content: "charged" }]);
	const charge = makeTool("charge", async () => ok("done"), { needsApproval: true });
	return { scripted, charge };
}

async function waitingAgent(options: { store?: ReturnType<typeof createMemoryStore> } = {}) {
	const { scripted, charge } = setUp();
	const agent = new Agent({ ...(options.store ? { store: options.store, sessionId: "s" } : {}), initialState: { model: scripted.model, tools: [charge] }, streamFn: scripted.streamFn });
	const asked = new Promise<void>((resolve) => agent.subscribe((event) => void (event.type === "approval_requested" && resolve())));
	const run = agent.prompt("charge me");
	await asked;
	agent.state.messages = [...agent.state.messages, user("a note from the app")];
	return { agent, run, scripted, charge };
}

describe("a message the caller adds to agent.state.messages during a run", () => {
	it("is in a snapshot taken while a call waits for approval, and in the restored agent's transcript where the run would have left it", async () => {
		const uninterrupted = await waitingAgent();
		await uninterrupted.agent.approve("c1");
		await uninterrupted.run;
		const expected = roles(uninterrupted.agent.state.messages);
		expect(expected).toContain("user:a note from the app");

		const { agent, scripted, charge } = await waitingAgent();
		const snapshot = JSON.parse(JSON.stringify(agent.snapshot())) as AgentSnapshot;
		agent.dispose();
		const restored = Agent.restore(snapshot, { initialState: { tools: [charge] }, streamFn: scripted.streamFn });
		expect(roles(restored.state.messages)).toContain("user:a note from the app");
		await restored.approve("c1");
		await restored.waitForIdle();
		expect(roles(restored.state.messages)).toEqual(expected);
	});

	it("is stored by agent.save() during the wait, and an agent loaded after a restart has it", async () => {
		const store = createMemoryStore();
		const { agent, scripted, charge } = await waitingAgent({ store });
		await agent.save();
		const loaded = await Agent.load({ store, sessionId: "s", initialState: { tools: [charge] }, streamFn: scripted.streamFn });
		agent.dispose();
		expect(roles(loaded.state.messages)).toContain("user:a note from the app");
		await loaded.approve("c1");
		await loaded.waitForIdle();
		expect(roles(loaded.state.messages).slice(-3)).toEqual(["user:a note from the app", "toolResult:done", "assistant:charged"]);
	});

	it("taken from a listener the run's later events have not reached yet: the restored transcript has the run's messages once, after the caller's", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("look", {}, "a"), toolCall("look", {}, "b")] }, { content: "seen" }]);
		const look = makeTool("look", async () => ok("looked"), { replay: "safe" });
		const agent = new Agent({ initialState: { model: scripted.model, tools: [look] }, streamFn: scripted.streamFn });
		let snapshot: AgentSnapshot | undefined;
		// At the first result message's end the second is the machine's already (results join the
		// transcript together): the snapshot must not lose it, nor tell it twice.
		agent.subscribe(async (event: AgentEvent) => {
			if (event.type !== "message_end" || event.message.role !== "toolResult" || snapshot) return;
			agent.state.messages = [...agent.state.messages, user("noted by the app")];
			snapshot = JSON.parse(JSON.stringify(agent.snapshot())) as AgentSnapshot;
			await new Promise((resolve) => setTimeout(resolve, 5));
		});
		await agent.prompt("look twice");
		const expected = roles(agent.state.messages);
		agent.dispose();
		// The second result was the machine's, not yet the listeners': it follows the caller's note.
		expect(roles(snapshot?.agent.transcript ?? [])).toEqual(expected.slice(0, -1));
		// The restored run's next request is the one after the results: the model answers it as before.
		const answer = createScriptedModel([{ content: "seen" }]);
		const restored = Agent.restore(snapshot as AgentSnapshot, { initialState: { tools: [look] }, streamFn: answer.streamFn });
		await restored.waitForIdle();
		expect(roles(restored.state.messages)).toEqual(expected);
	});

	it("leaves no transcript in a snapshot when the caller changed nothing", async () => {
		const { scripted, charge } = setUp();
		const agent = new Agent({ initialState: { model: scripted.model, tools: [charge] }, streamFn: scripted.streamFn });
		const asked = new Promise<void>((resolve) => agent.subscribe((event) => void (event.type === "approval_requested" && resolve())));
		const run = agent.prompt("charge me");
		await asked;
		expect(agent.snapshot().agent.transcript).toBeUndefined();
		await agent.reject("c1");
		await run;
	});
});
