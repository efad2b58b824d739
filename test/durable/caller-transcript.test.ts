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
import { createScriptedModel, type ScriptedBlock, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import { emptyUsage } from "../../src/types/content.js";
import type { AgentMessage, AssistantMessage } from "../../src/types/messages.js";
import type { StreamFn } from "../../src/types/stream.js";
import { makeTool, ok, textOf, user } from "../agent/helpers.js";

const assistantText = (text: string): AssistantMessage => ({ role: "assistant", content: [{ type: "text", text }], api: "scripted", provider: "scripted", model: "scripted-1", usage: emptyUsage(), stopReason: "stop", timestamp: 1 });
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

	it("pushed before a threshold compaction, snapshot taken as it starts (the machine compacted, the listeners not yet): restored compacted, the note after it", async () => {
		const earlier = [user(`earlier question ${"q".repeat(300)}`), assistantText(`earlier answer ${"a".repeat(300)}`), user(`another question ${"q".repeat(300)}`), assistantText(`another answer ${"a".repeat(300)}`)];
		// A tool call, then an answer; each reply reports a context near the window, so the next call compacts first.
		const streamFn: StreamFn = (model, context, options) => {
			const results = context.messages.filter((message) => message.role === "toolResult").length;
			const content: ScriptedBlock[] = results === 0 ? [{ type: "toolCall", name: "work", arguments: {}, id: "a" }] : [{ type: "text", text: `answer after ${results}` }];
			return createScriptedModel([{ content, usage: { input: 127_000, output: 10 } }]).streamFn(model, context, options);
		};
		const work = makeTool("work", async () => ok("worked"), { replay: "safe" });
		const compaction = { enabled: true, keepRecentTokens: 10, reserveTokens: 2048, summarize: async () => "the summary" };
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model, messages: earlier, tools: [work] }, streamFn, compaction });
		let snapshot: AgentSnapshot | undefined;
		let noted = false;
		agent.subscribe((event) => {
			// In place: the array the agent handed out.
			if (event.type === "turn_end" && !noted) noted = agent.state.messages.push(user("a note from the app")) > 0;
			if (event.type === "auto_compaction_start" && !snapshot) snapshot = JSON.parse(JSON.stringify(agent.snapshot())) as AgentSnapshot;
		});
		await agent.prompt("go");
		const expected = roles(agent.state.messages);
		expect(expected[0]).toMatch(/^compactionSummary/);
		expect(expected).toContain("user:a note from the app");
		const restored = Agent.restore(snapshot as AgentSnapshot, { initialState: { tools: [work] }, streamFn, compaction });
		await restored.waitForIdle();
		expect(roles(restored.state.messages)).toEqual(expected);
	});

	it("redacted in place (the same array, the same length) is in the snapshot; an unchanged copy assigned is not a change", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("charge", { amount: 20 }, "c1")] }, { content: "charged" }]);
		const charge = makeTool("charge", async () => ok("done"), { needsApproval: true });
		const agent = new Agent({ initialState: { model: scripted.model, tools: [charge] }, streamFn: scripted.streamFn });
		const asked = new Promise<void>((resolve) => agent.subscribe((event) => void (event.type === "approval_requested" && resolve())));
		const run = agent.prompt("my card is 4111 1111 1111 1111");
		await asked;
		// A state library's copy: nothing changed, and a snapshot carries no second transcript.
		agent.state.messages = [...agent.state.messages];
		expect(agent.snapshot().agent.transcript).toBeUndefined();
		agent.state.messages[0] = user("my card is [redacted]");
		const snapshot = JSON.parse(JSON.stringify(agent.snapshot())) as AgentSnapshot;
		expect(JSON.stringify(snapshot.agent.transcript)).toContain("[redacted]");
		await agent.reject("c1");
		await run;
		const restored = Agent.restore(snapshot, { initialState: { tools: [charge] }, streamFn: createScriptedModel([{ content: "charged" }]).streamFn });
		expect(textOf(restored.state.messages[0])).toBe("my card is [redacted]");
		restored.dispose();
	});
});
