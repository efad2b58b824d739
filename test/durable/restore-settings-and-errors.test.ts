/**
 * What a restore goes on with, checked where it is made: settings no run can use (a NaN token
 * count read from an unset environment variable, a tool mode misspelt) are refused by
 * `Agent.load` and `Agent.restore`, before a run or a compaction the session had in progress
 * starts again on them (it failed inside the chart and left an agent that never went idle, and a
 * manual compaction's failure surfaced as an unhandled rejection); and the error of a failed run
 * is stored while a listener still holds the run's last events (the snapshot at the run's end
 * had none, so a loaded agent showed no error).
 */
import { describe, expect, it } from "vitest";
import { Agent, type AgentOptions } from "../../src/agent.js";
import type { CompactionSettings } from "../../src/compaction/settings.js";
import { createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AnyAgentTool } from "../../src/types/agent.js";
import { deferred, plainRoles } from "../agent/helpers.js";
import { hangingCompaction, transcript, until } from "./compaction-helpers.js";

const summarising: CompactionSettings = { enabled: true, keepRecentTokens: 1, summarize: async () => "the summary" };

/** A store holding session "s" with a manual compaction under way (its summariser never answered). */
async function storeWithCompactionUnderWay(): Promise<ReturnType<typeof createMemoryStore>> {
	const store = createMemoryStore();
	const scripted = createScriptedModel([]);
	const held = hangingCompaction();
	const first = new Agent({ store, sessionId: "s", initialState: { model: scripted.model, messages: transcript() }, streamFn: scripted.streamFn, compaction: held.settings });
	void first.compact().catch(() => {});
	await until(held.started);
	await first.saved();
	return store;
}

describe("Agent.load and Agent.restore refuse settings no run can use", () => {
	it("refuses a NaN keepRecentTokens on a session whose manual compaction goes on, before opening it; the session loads with good settings after", async () => {
		const store = await storeWithCompactionUnderWay();
		const unhandled: unknown[] = [];
		const onUnhandled = (reason: unknown) => void unhandled.push(reason);
		process.on("unhandledRejection", onUnhandled);
		try {
			const scripted = createScriptedModel([]);
			await expect(Agent.load({ store, sessionId: "s", streamFn: scripted.streamFn, compaction: { ...summarising, keepRecentTokens: Number.NaN } })).rejects.toThrow(
				/^Agent\.load\(options\)\.compaction has keepRecentTokens NaN/,
			);
			const agent = await Agent.load({ store, sessionId: "s", streamFn: scripted.streamFn, compaction: summarising });
			await agent.waitForIdle();
			expect(plainRoles(agent.state.messages)[0]).toBe("compactionSummary");
			await new Promise((resolve) => setTimeout(resolve, 10));
			expect(unhandled).toEqual([]);
		} finally {
			process.off("unhandledRejection", onUnhandled);
		}
	});

	it("refuses a tool mode no run has on a session whose run waits for its tool, by Agent.load and by Agent.restore", async () => {
		const store = createMemoryStore();
		const running = deferred();
		const tool: AnyAgentTool = {
			name: "wait",
			label: "wait",
			description: "waits",
			parameters: { type: "object", properties: {} },
			replay: "safe",
			execute: () => (running.resolve(), new Promise(() => {})),
		};
		const scripted = createScriptedModel([{ content: [toolCall("wait", {}, "c1")] }, { content: "done" }]);
		const first = new Agent({ store, sessionId: "s", initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn });
		void first.prompt("go").catch(() => {});
		await running.promise;
		const snapshot = first.snapshot();
		await first.saved();
		const options = { initialState: { tools: [{ ...tool, execute: async () => ({ content: [{ type: "text" as const, text: "ok" }], details: {} }) }] }, streamFn: scripted.streamFn };
		const bogus = { ...options, toolExecution: "bogus" } as unknown as typeof options;
		await expect(Agent.load({ ...bogus, store, sessionId: "s" })).rejects.toThrow(/^Agent\.load\(options\)\.toolExecution must be "parallel", "sequential" or "streaming", got "bogus"/);
		expect(() => Agent.restore(snapshot, { ...options, approvalTimeoutMs: -1 })).toThrow(/^Agent\.restore\(options\)\.approvalTimeoutMs must be a number of milliseconds/);
		const agent = await Agent.load({ ...options, store, sessionId: "s" });
		await agent.waitForIdle();
		expect(plainRoles(agent.state.messages)).toEqual(["user", "assistant", "toolResult", "assistant"]);
		first.dispose();
	});
});

describe("Agent.load and Agent.restore take the settings new Agent takes", () => {
	it("reads a null hook or setting as its default, and ignores what is no option, as the constructor does", async () => {
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }, { content: "three" }]);
		// pi's Agent takes null for these (convertToLlm and toolExecution by `??`); the loop's own hooks are not options.
		const loose = { convertToLlm: null, toolExecution: null, toolTimeoutMs: null, streamIdleTimeoutMs: null, toolAbortGraceMs: null, transformContext: null, shouldStopAfterTurn: "not an option" } as unknown as AgentOptions;
		const first = new Agent({ ...loose, initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await first.prompt("go");
		const restored = Agent.restore(first.snapshot(), { ...loose, streamFn: scripted.streamFn });
		await restored.prompt("again");
		const store = createMemoryStore();
		const loaded = await Agent.load({ ...loose, store, sessionId: "new", initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await loaded.prompt("hello");
		expect([restored.state.messages.length, loaded.state.messages.length]).toEqual([4, 2]);
	});
});

describe("the error of a failed run, stored while a listener holds its last events", () => {
	for (const how of ["options.listeners", "subscribe"] as const) {
		it(`is what a loaded agent shows (a listener given by ${how})`, async () => {
			const store = createMemoryStore();
			const scripted = createScriptedModel([{ content: "", stopReason: "error", errorMessage: "boom" }]);
			const listener = () => new Promise<void>((resolve) => setTimeout(resolve, 1));
			const first = new Agent({ store, sessionId: "s", initialState: { model: scripted.model }, streamFn: scripted.streamFn, ...(how === "options.listeners" ? { listeners: [listener] } : {}) });
			if (how === "subscribe") first.subscribe(listener);
			await first.prompt("go");
			await first.saved();
			expect(first.state.errorMessage).toBe("boom");
			const loaded = await Agent.load({ store, sessionId: "s", streamFn: scripted.streamFn });
			expect(loaded.state.errorMessage).toBe("boom");
		});
	}

});
