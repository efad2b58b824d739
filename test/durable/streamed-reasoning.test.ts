/**
 * A streaming reply interrupted after some of its calls had started is closed with those calls
 * (the model is not asked for it again). It kept the calls alone and dropped the reply's signed
 * thinking before them, so with thinking on, the next Anthropic request was refused: "a final
 * assistant message must start with a thinking block". Found by a probe (scratch/probeAM p6,
 * p9, p10): after a SIGKILL and `Agent.load`, after a snapshot by hand, after a restart while a
 * streamed call waited for approval. The reasoning now goes to the journal with each call that
 * starts while its reply streams, and the closed reply keeps it.
 */
import { createActor } from "xstate";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { PersistedAgentMachine } from "../../src/durable/snapshot.js";
import { createMemoryStore } from "../../src/durable/store.js";
import { hydrateAgentSnapshot } from "../../src/machine.js";
import { agentLogic } from "../../src/machines/agent-logic.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import { createScriptedModel, thinking, toolCall } from "../../src/providers/scripted.js";
import type { AgentTool } from "../../src/types/agent.js";
import type { AgentMessage, AssistantMessage } from "../../src/types/messages.js";
import { makeTool, ok, user } from "../agent/helpers.js";

async function until(check: () => boolean): Promise<void> {
	const deadline = Date.now() + 5_000;
	while (!check()) {
		if (Date.now() > deadline) throw new Error("timed out");
		await new Promise((resolve) => setTimeout(resolve, 2));
	}
}

/** The reply, streamed slowly: signed thinking, a call, then text still streaming when the call has started. */
function slowReply() {
	return {
		content: [thinking("I should charge the card.", "SIG_1"), toolCall("charge", {}, "c"), { type: "text" as const, text: "Charging your card now, please wait a moment while it goes through." }],
		chunkSize: 4,
		delayMs: 3,
	};
}

/** The closed reply: its signed thinking, then its started call (text that had streamed is not kept). */
function expectSignedThinkingFirst(messages: readonly AgentMessage[]): void {
	const reply = messages.find((message): message is AssistantMessage => message.role === "assistant");
	expect(reply?.content).toEqual([
		{ type: "thinking", thinking: "I should charge the card.", thinkingSignature: "SIG_1" },
		{ type: "toolCall", id: "c", name: "charge", arguments: {} },
	]);
}

/** Interleaved: reasoning, a call, more reasoning, a second call, then text still streaming. */
function interleavedReply() {
	return {
		content: [thinking("First, charge.", "SIG_1"), toolCall("charge", {}, "c1"), thinking("Then charge again.", "SIG_2"), toolCall("charge", {}, "c2"), { type: "text" as const, text: "Charging your card twice now, please wait a moment while it goes through." }],
		chunkSize: 4,
		delayMs: 3,
	};
}

const interleaved = [
	{ type: "thinking", thinking: "First, charge.", thinkingSignature: "SIG_1" },
	{ type: "toolCall", id: "c1", name: "charge", arguments: {} },
	{ type: "thinking", thinking: "Then charge again.", thinkingSignature: "SIG_2" },
	{ type: "toolCall", id: "c2", name: "charge", arguments: {} },
];

describe("a streaming reply closed with the calls that started", () => {
	it("keeps interleaved reasoning where it was, each block journaled once (a review: the bare machine put all first; each entry repeated what came before)", async () => {
		const releases: (() => void)[] = [];
		const runs: string[] = [];
		const charge: AgentTool = makeTool("charge", async (id) => {
			runs.push(id);
			await new Promise<void>((resolve) => releases.push(resolve));
			return ok("charged");
		});
		const first = createScriptedModel([interleavedReply()]);
		const agent = new Agent({ initialState: { model: first.model, tools: [charge] }, streamFn: first.streamFn, toolExecution: "streaming" });
		void agent.prompt("pay twice");
		await until(() => runs.length === 2);
		const snapshot = JSON.parse(JSON.stringify(agent.snapshot()));
		agent.dispose();
		for (const release of releases) release();
		const journaled = JSON.stringify(snapshot.journal);
		expect(journaled.split("SIG_1").length - 1).toBe(1);
		expect(journaled.split("SIG_2").length - 1).toBe(1);
		const second = createScriptedModel([{ content: "Both were interrupted." }]);
		const restored = Agent.restore(snapshot, { initialState: { tools: [charge] }, streamFn: second.streamFn, toolExecution: "streaming" });
		await restored.waitForIdle();
		expect((restored.state.messages[1] as AssistantMessage).content).toEqual(interleaved);
		restored.dispose();

		for (const [from, to] of [
			["xstate", "agentchart"],
			["agentchart", "xstate"],
		] as const) {
			const logics = { xstate: agentMachine, agentchart: agentLogic } as const;
			runs.length = 0;
			const model = createScriptedModel([interleavedReply()]);
			const before = createActor(logics[from] as typeof agentMachine, { input: { model: model.model, tools: [charge], config: { streamFn: model.streamFn, toolExecution: "streaming" } } }).start();
			before.send({ type: "prompt", messages: [user("pay twice")] });
			await until(() => runs.length === 2);
			const json = JSON.parse(JSON.stringify(before.getPersistedSnapshot())) as PersistedAgentMachine;
			before.stop();
			for (const release of releases) release();
			const again = createScriptedModel([{ content: "Both were interrupted." }]);
			const after = createActor(logics[to] as typeof agentMachine, { input: {}, snapshot: hydrateAgentSnapshot(json, { tools: [charge], config: { streamFn: again.streamFn, toolExecution: "streaming" } }) as never });
			after.start();
			after.send({ type: "agentchart.resumed" });
			await until(() => after.getSnapshot().matches("idle" as never));
			expect((after.getSnapshot().context.messages[1] as AssistantMessage).content).toEqual(interleaved);
			after.stop();
		}
	});

	for (const how of ["a snapshot by hand", "a store, the process gone"] as const) {
		it(`keeps the reasoning before its calls (${how})`, async () => {
			let release: () => void = () => {};
			const runs: string[] = [];
			const charge: AgentTool = makeTool("charge", async (id) => {
				runs.push(id);
				await new Promise<void>((resolve) => (release = resolve));
				return ok("charged");
			});
			const store = createMemoryStore();
			const first = createScriptedModel([slowReply()]);
			const stored = how === "a store, the process gone" ? { store, sessionId: "s" } : {};
			const agent = new Agent({ initialState: { model: first.model, tools: [charge] }, streamFn: first.streamFn, toolExecution: "streaming", ...stored });
			void agent.prompt("pay");
			await until(() => runs.length === 1);
			expect(agent.state.isStreaming).toBe(true);
			const snapshot = JSON.parse(JSON.stringify(agent.snapshot()));
			agent.dispose();
			release();
			const second = createScriptedModel([{ content: "The charge was interrupted." }]);
			const options = { initialState: { tools: [charge] }, streamFn: second.streamFn, toolExecution: "streaming" as const };
			const restored = how === "a store, the process gone" ? await Agent.load({ ...options, store, sessionId: "s" }) : Agent.restore(snapshot, options);
			await restored.waitForIdle();
			expect(runs).toEqual(["c"]);
			expect(second.calls).toHaveLength(1);
			expect(restored.state.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
			expectSignedThinkingFirst(restored.state.messages);
			expectSignedThinkingFirst(second.calls[0]?.messages ?? []);
			restored.dispose();
		});
	}

	for (const [from, to] of [
		["xstate", "agentchart"],
		["agentchart", "xstate"],
	] as const) {
		it(`keeps the reasoning before its calls: a bare machine without a journal, persisted on ${from}'s interpreter, restored on ${to}'s`, async () => {
			const logics = { xstate: agentMachine, agentchart: agentLogic } as const;
			const runs: string[] = [];
			let release: () => void = () => {};
			const charge = makeTool("charge", async (id) => {
				runs.push(id);
				await new Promise<void>((resolve) => (release = resolve));
				return ok("charged");
			});
			const first = createScriptedModel([slowReply()]);
			const before = createActor(logics[from] as typeof agentMachine, { input: { model: first.model, tools: [charge], config: { streamFn: first.streamFn, toolExecution: "streaming" } } }).start();
			before.send({ type: "prompt", messages: [user("pay")] });
			await until(() => runs.length === 1);
			const json = JSON.parse(JSON.stringify(before.getPersistedSnapshot())) as PersistedAgentMachine;
			before.stop();
			release();
			const second = createScriptedModel([{ content: "The charge was interrupted." }]);
			const after = createActor(logics[to] as typeof agentMachine, { input: {}, snapshot: hydrateAgentSnapshot(json, { tools: [charge], config: { streamFn: second.streamFn, toolExecution: "streaming" } }) as never });
			after.start();
			after.send({ type: "agentchart.resumed" });
			await until(() => after.getSnapshot().matches("idle" as never));
			expectSignedThinkingFirst(after.getSnapshot().context.messages);
			after.stop();
		});
	}
});
