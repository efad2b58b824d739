/**
 * docs/machine.md: a parent machine that invokes the agent, persisted as JSON while the agent
 * waits for an approval, and restored in a new actor with the agent's snapshot hydrated
 * (`hydrateAgentSnapshot`): the agent takes up its run where it stopped.
 */
import { Type } from "typebox";
import { createActor, setup, sendTo } from "xstate";
import { describe, expect, it } from "vitest";
import { hydrateAgentSnapshot } from "../../src/machine.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import type { AgentMachineInput } from "../../src/machines/types.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent, AgentTool } from "../../src/types/agent.js";

const deploy: AgentTool = {
	name: "deploy",
	label: "Deploy",
	description: "Deploys a service.",
	parameters: Type.Object({}),
	needsApproval: true,
	execute: async () => ({ content: [{ type: "text", text: "deployed" }], details: undefined }),
};

function workflowAround(agent: AgentMachineInput) {
	return setup({ actors: { agent: agentMachine } }).createMachine({
		initial: "open",
		states: {
			open: {
				invoke: { src: "agent", id: "agent", input: agent },
				entry: sendTo("agent", { type: "prompt", messages: [{ role: "user", content: "deploy", timestamp: 1 }] }),
			},
		},
	});
}

/** The agent child of a parent actor, as the tests read it. */
interface AgentChild {
	getSnapshot(): { value: unknown; status: string; context: { messages: { role: string }[] } };
	send(event: { type: string; toolCallId?: string }): void;
	on(type: "*", listener: (event: AgentEvent) => void): unknown;
}
function agentOf(parent: { getSnapshot(): { children: Record<string, unknown> } }): AgentChild {
	return parent.getSnapshot().children["agent"] as AgentChild;
}

async function until(condition: () => boolean): Promise<void> {
	for (let waited = 0; !condition(); waited += 2) {
		if (waited > 5_000) throw new Error("timed out waiting");
		await new Promise((resolve) => setTimeout(resolve, 2));
	}
}

describe("a parent machine with an invoked agent, persisted as JSON and restored", () => {
	it("finishes the agent's run once the restored agent's call is approved", async () => {
		const first = createScriptedModel([{ content: [toolCall("deploy", {}, "call-1")] }]);
		const parent = createActor(workflowAround({ model: first.model, tools: [deploy], config: { streamFn: first.streamFn } })).start();
		await until(() => JSON.stringify(agentOf(parent).getSnapshot().value) === JSON.stringify({ running: "awaiting-approval" }));
		const persisted = JSON.parse(JSON.stringify(parent.getPersistedSnapshot())) as { children: { agent: { snapshot: Parameters<typeof hydrateAgentSnapshot>[0] } } };
		parent.stop();

		const second = createScriptedModel([{ content: "Deployed." }]);
		persisted.children.agent.snapshot = hydrateAgentSnapshot(persisted.children.agent.snapshot, { tools: [deploy], config: { streamFn: second.streamFn } }) as never;
		const restored = createActor(workflowAround({ model: second.model }), { snapshot: persisted as never }).start();
		try {
			const agent = agentOf(restored);
			const events: string[] = [];
			agent.on("*", (event) => events.push(event.type));
			agent.send({ type: "agentchart.resumed" });
			agent.send({ type: "approve", toolCallId: "call-1" });
			await until(() => agent.getSnapshot().value === "idle");
			expect(agent.getSnapshot().status).toBe("active");
			expect(agent.getSnapshot().context.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
			expect(events.at(-1)).toBe("agent_end");
		} finally {
			restored.stop();
		}
	});
});
