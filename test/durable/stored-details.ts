/**
 * One run whose tool returns `details`, stored in `store` and loaded back by a new agent: what a
 * store's reading of a tool result is (`probe-round-4.test.ts`, `store-reading.property.test.ts`).
 */
import { expect } from "vitest";
import { Agent } from "../../src/agent.js";
import type { AgentStore } from "../../src/durable/store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AnyAgentTool } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { makeTool, ok } from "../agent/helpers.js";

/** The session's transcript as `store` reads it back (timestamps 0), after one run whose tool returned `details`. */
export async function storedAndLoaded(store: AgentStore, details: unknown): Promise<AgentMessage[]> {
	const tools: AnyAgentTool[] = [makeTool("lookup", async () => ({ ...ok("found"), details }))];
	const scripted = createScriptedModel([{ content: [toolCall("lookup", {}, "c1")] }, { content: "done" }]);
	const agent = new Agent({ store, sessionId: "s", initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn });
	await agent.prompt("go");
	await agent.saved();
	expect(agent.storeProblems).toEqual([]);
	const again = await Agent.load({ store, sessionId: "s", initialState: { tools } });
	return again.state.messages.map((message) => ({ ...message, timestamp: 0 }));
}
