/**
 * The bare agent machine persisted and restored the XState way (`getPersistedSnapshot()`,
 * `createActor(logic, { snapshot })`), on XState's interpreter and on agentchart's, across
 * the two: the persisted JSON is the same, and a run waiting for approval continues on either.
 */
import { createActor } from "xstate";
import { describe, expect, it } from "vitest";
import { agentMachine } from "../../src/machines/agent-machine.js";
import { agentLogic } from "../../src/machines/agent-logic.js";
import { hydrateAgentSnapshot } from "../../src/machine.js";
import type { PersistedAgentMachine } from "../../src/durable/snapshot.js";
import type { AgentMachineEmitted } from "../../src/machines/types.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import { makeTool, ok, textOf, user } from "../agent/helpers.js";

const logics = { xstate: agentMachine, agentchart: agentLogic } as const;

async function until(check: () => boolean): Promise<void> {
	for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 1));
}

describe("the bare machine, persisted the XState way", () => {
	for (const [from, to] of [
		["xstate", "agentchart"],
		["agentchart", "xstate"],
		["agentchart", "agentchart"],
		["xstate", "xstate"],
	] as const) {
		it(`continues a run that waits for approval: persisted on ${from}'s interpreter, restored on ${to}'s`, async () => {
			const sends: string[] = [];
			const send = makeTool("send", async (_id, args) => (sends.push(JSON.stringify(args)), ok("sent")), { needsApproval: true });
			const scripted = createScriptedModel([{ content: [toolCall("send", { to: "bob" }, "a")] }, { content: "sent it" }]);
			const first = createActor(logics[from] as typeof agentMachine, { input: { model: scripted.model, tools: [send], config: { streamFn: scripted.streamFn } } }).start();
			first.send({ type: "prompt", messages: [user("go")] });
			await until(() => first.getSnapshot().matches({ running: "awaiting-approval" } as never));
			const json = JSON.parse(JSON.stringify(first.getPersistedSnapshot())) as PersistedAgentMachine;
			first.stop();
			expect(json.value).toEqual({ running: "awaiting-approval" });
			const emitted: AgentMachineEmitted[] = [];
			const second = createActor(logics[to] as typeof agentMachine, { input: {}, snapshot: hydrateAgentSnapshot(json, { tools: [send], config: { streamFn: scripted.streamFn } }) as never });
			second.on("*", (event) => void emitted.push(event));
			second.start();
			second.send({ type: "agentchart.resumed" });
			second.send({ type: "approve", toolCallId: "a" });
			await until(() => second.getSnapshot().matches("idle" as never));
			expect(sends).toEqual(['{"to":"bob"}']);
			expect(second.getSnapshot().context.messages.map((message) => textOf(message))).toEqual(["go", "", "sent", "sent it"]);
			expect(emitted.map((event) => event.type)).toContain("agent_end");
			second.stop();
		});
	}

	for (const [from, to] of [
		["xstate", "agentchart"],
		["agentchart", "xstate"],
	] as const) {
		it(`closes a streamed reply with the calls that started, running none twice: streaming mode, persisted on ${from}'s interpreter, restored on ${to}'s`, async () => {
			// Before, the restored machine asked the model for the reply again: a call that had run
			// ran again (same id), or a new one ran beside it and the first went unanswered.
			const runs: string[] = [];
			let release: () => void = () => {};
			const charge = makeTool("charge", async (id) => {
				runs.push(id);
				await new Promise<void>((resolve) => (release = resolve));
				return ok("charged");
			});
			const fast = makeTool("note", async () => ok("noted"));
			const reply = { content: [toolCall("note", {}, "n"), toolCall("charge", {}, "c"), { type: "text" as const, text: "Charging your card now, please wait a moment while it goes through." }], chunkSize: 4, delayMs: 3 };
			const first = createScriptedModel([reply]);
			const config = { streamFn: first.streamFn, toolExecution: "streaming" as const };
			const before = createActor(logics[from] as typeof agentMachine, { input: { model: first.model, tools: [fast, charge], config } }).start();
			before.send({ type: "prompt", messages: [user("pay")] });
			await until(() => runs.length === 1 && before.getSnapshot().context.run?.batch?.calls.some((call) => call.status === "settled") === true);
			expect(before.getSnapshot().matches({ running: "streaming" } as never)).toBe(true);
			const json = JSON.parse(JSON.stringify(before.getPersistedSnapshot())) as PersistedAgentMachine;
			before.stop();
			release();
			const second = createScriptedModel([{ content: "The charge was interrupted; I will not retry it." }]);
			const after = createActor(logics[to] as typeof agentMachine, {
				input: {},
				snapshot: hydrateAgentSnapshot(json, { tools: [fast, charge], config: { streamFn: second.streamFn, toolExecution: "streaming" } }) as never,
			});
			after.start();
			after.send({ type: "agentchart.resumed" });
			await until(() => after.getSnapshot().matches("idle" as never));
			expect(runs).toEqual(["c"]);
			expect(second.calls).toHaveLength(1);
			const messages = after.getSnapshot().context.messages;
			expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "toolResult", "assistant"]);
			expect(messages[1]).toMatchObject({ stopReason: "toolUse", content: [{ id: "n" }, { id: "c" }] });
			expect(messages[2]).toMatchObject({ toolCallId: "n", isError: false });
			expect(messages[3]).toMatchObject({ toolCallId: "c", isError: true });
			expect(textOf(messages[3]!)).toMatch(/interrupted by a restart and not run again/);
			after.stop();
		});
	}

	it("continues a run stored at a barrier (awaitDelivery) once the stored barrier is acknowledged, as docs/machine.md says", async () => {
		for (const [from, to] of [
			["xstate", "agentchart"],
			["agentchart", "xstate"],
		] as const) {
			const scripted = createScriptedModel([{ content: "hello" }]);
			const before = createActor(logics[from] as typeof agentMachine, { input: { model: scripted.model, config: { streamFn: scripted.streamFn } } }).start();
			let stored: PersistedAgentMachine | undefined;
			// Stored at the first barrier, before anybody acknowledged it.
			before.on("agentchart.barrier", () => void (stored ??= JSON.parse(JSON.stringify(before.getPersistedSnapshot())) as PersistedAgentMachine));
			before.send({ type: "prompt", messages: [user("hi")], awaitDelivery: true });
			before.stop();
			expect(stored?.value).toEqual({ running: "run-starting" });
			const after = createActor(logics[to] as typeof agentMachine, { input: {}, snapshot: hydrateAgentSnapshot(stored!, { tools: [], config: { streamFn: scripted.streamFn } }) as never });
			after.on("agentchart.barrier", (event) => after.send({ type: "delivered", barrier: event.barrier }));
			after.start();
			after.send({ type: "agentchart.resumed" });
			after.send({ type: "delivered", barrier: stored!.context.barrier });
			await until(() => after.getSnapshot().matches("idle" as never));
			expect(after.getSnapshot().context.messages.map((message) => textOf(message))).toEqual(["hi", "hello"]);
			after.stop();
		}
	});

	it("persists the same JSON from both interpreters", async () => {
		const tools = [makeTool("t", async () => ok("x"))];
		const persisted = await Promise.all(
			(["xstate", "agentchart"] as const).map(async (name) => {
				const scripted = createScriptedModel([{ content: "hi" }]);
				const input = { model: scripted.model, tools, config: { streamFn: scripted.streamFn } };
				const actor = createActor(logics[name] as typeof agentMachine, { input }).start();
				actor.send({ type: "prompt", messages: [{ ...user("go"), timestamp: 1 }] });
				await until(() => actor.getSnapshot().matches("idle" as never) && actor.getSnapshot().context.messages.length === 2);
				const json = JSON.parse(JSON.stringify(actor.getPersistedSnapshot())) as PersistedAgentMachine;
				actor.stop();
				// Replies are timestamped when made.
				for (const message of json.context.messages) (message as { timestamp: number }).timestamp = 0;
				return json;
			}),
		);
		expect(persisted[1]).toEqual(persisted[0]);
	});
});
