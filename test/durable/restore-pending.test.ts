/**
 * A restored agent reports the tool calls still in flight as pending (`state.pendingToolCalls`),
 * as the agent it was restored from did, until their `tool_execution_end` (found by the testing
 * kit's walk: a restored agent reported none, and its state then disagreed with its events).
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import { deferred, makeTool, ok } from "../agent/helpers.js";

async function until(check: () => boolean): Promise<void> {
	for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 1));
	if (!check()) throw new Error("timed out");
}

describe("a run restored while a tool call runs", () => {
	it("reports the call as pending until it ends", async () => {
		const release = deferred<void>();
		let started = 0;
		const lookup = makeTool("lookup", async () => (started++, await release.promise, ok("found")), { replay: "safe" });
		const scripted = createScriptedModel([{ content: [toolCall("lookup", {}, "a")] }, { content: "done" }]);
		const first = new Agent({ initialState: { model: scripted.model, tools: [lookup] }, streamFn: scripted.streamFn });
		void first.prompt("go");
		await until(() => started === 1);
		expect([...first.state.pendingToolCalls]).toEqual(["a"]);
		const snapshot = JSON.parse(JSON.stringify(first.snapshot())) as AgentSnapshot;
		first.dispose();
		const pendingAtEnd: string[][] = [];
		const second = Agent.restore(snapshot, {
			initialState: { tools: [lookup] },
			streamFn: scripted.streamFn,
			listeners: [(event: AgentEvent) => void (event.type === "tool_execution_end" && pendingAtEnd.push([...second.state.pendingToolCalls]))],
		});
		expect([...second.state.pendingToolCalls]).toEqual(["a"]);
		release.resolve();
		await second.waitForIdle();
		expect(pendingAtEnd).toEqual([[]]);
		expect([...second.state.pendingToolCalls]).toEqual([]);
	});
});
