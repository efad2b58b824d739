/**
 * A run restored while it compacted after a context overflow takes the decision again (the
 * compaction is made again) without ending the overflowed turn a second time: its turn_end went
 * out before the restart (found by the testing kit's walk).
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import { user } from "../agent/helpers.js";

async function until(check: () => boolean): Promise<void> {
	for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 1));
	if (!check()) throw new Error("timed out");
}

describe("a run restored during an overflow compaction", () => {
	it("makes the compaction again and goes on, without a second turn_end for the overflowed turn", async () => {
		const scripted = createScriptedModel([{ content: "", stopReason: "error", errorMessage: "prompt is too long: 150000 tokens > 100000 maximum" }, { content: "answered after compacting" }]);
		let summarizing = false;
		const settings = { enabled: true, keepRecentTokens: 1 };
		const first = new Agent({
			initialState: { model: scripted.model, messages: [user("earlier"), user("and more")] },
			streamFn: scripted.streamFn,
			compaction: { ...settings, summarize: () => ((summarizing = true), new Promise<string>(() => {})) },
		});
		void first.prompt("go");
		await until(() => summarizing);
		const snapshot = JSON.parse(JSON.stringify(first.snapshot())) as AgentSnapshot;
		first.dispose();
		const events: AgentEvent[] = [];
		const second = Agent.restore(snapshot, { streamFn: scripted.streamFn, compaction: { ...settings, summarize: async () => "summary" }, listeners: [(event) => void events.push(event)] });
		await second.waitForIdle();
		const types = events.map((event) => event.type).filter((type) => type !== "message_update");
		expect(types.indexOf("turn_end")).toBeGreaterThan(types.indexOf("turn_start"));
		expect(types.slice(0, 3)).toEqual(["auto_compaction_start", "auto_compaction_end", "turn_start"]);
		expect(second.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
	});
});
