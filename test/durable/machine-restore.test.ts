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
