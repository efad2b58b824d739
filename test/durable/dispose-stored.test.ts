/**
 * `dispose()` ends the agent object, not the stored session: it writes nothing after it, so the
 * store keeps the session as its last write left it and the next load goes on as after a crash.
 * A server that disposes its agents on shutdown keeps the approvals they wait for (the disposed
 * agent itself shows the run ended, as `dispose()` documents), and a tool call running at the
 * dispose follows the crash rules.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import { deferred, makeTool, ok, textOf } from "../agent/helpers.js";

describe("dispose() with a store", () => {
	it("leaves a call waiting for approval stored waiting: the next load asks again, and the answer runs the tool once", async () => {
		const store = createMemoryStore();
		const runs: string[] = [];
		const deploy = makeTool("deploy", async () => (runs.push("deploy"), ok("deployed")), { needsApproval: true });
		const scripted = createScriptedModel([{ content: [toolCall("deploy", {}, "call-1")] }, { content: "done" }]);
		const options = { store, sessionId: "s", initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn };
		const first = await Agent.load(options);
		const asked = deferred<void>();
		first.subscribe((event: AgentEvent) => void (event.type === "approval_requested" && asked.resolve()));
		const prompt = first.prompt("ship it");
		await asked.promise;
		await first.saved();
		first.dispose();
		await prompt;
		// The disposed agent closed its run: nothing waits in it.
		expect(first.pendingApprovals).toEqual([]);
		expect(first.state.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult"]);

		const second = await Agent.load(options);
		expect(second.pendingApprovals.map((call) => call.toolCallId)).toEqual(["call-1"]);
		await second.approve("call-1");
		await second.waitForIdle();
		expect(runs).toEqual(["deploy"]);
		expect(second.state.messages.map((message) => textOf(message))).toContain("deployed");
		expect(textOf(second.state.messages.at(-1))).toBe("done");
		second.dispose();
	});

	it("leaves a tool call running at the dispose as a crash would: not replay-safe, the model hears it was interrupted and it is not run again", async () => {
		const store = createMemoryStore();
		let started = 0;
		const began = deferred<void>();
		const slow = makeTool("slow", (_id, _args, signal) => {
			started++;
			began.resolve();
			return new Promise((resolve) => signal?.addEventListener("abort", () => resolve(ok("stopped")), { once: true }));
		});
		const scripted = createScriptedModel([{ content: [toolCall("slow", {}, "call-1")] }, { content: "after the restart" }]);
		const options = { store, sessionId: "s", initialState: { model: scripted.model, tools: [slow] }, streamFn: scripted.streamFn };
		const first = await Agent.load(options);
		const prompt = first.prompt("go");
		await began.promise;
		await first.saved();
		first.dispose();
		await prompt;

		const second = await Agent.load(options);
		await second.waitForIdle();
		expect(started).toBe(1);
		const result = second.state.messages.find((message) => message.role === "toolResult");
		expect(textOf(result)).toMatch(/interrupted by a restart and not run again/);
		expect(textOf(second.state.messages.at(-1))).toBe("after the restart");
		second.dispose();
	});

	it("after abort() and its prompt() settled, the run is ended in the store too: the next load asks nothing and runs nothing", async () => {
		const store = createMemoryStore();
		const runs: string[] = [];
		const deploy = makeTool("deploy", async () => (runs.push("deploy"), ok("deployed")), { needsApproval: true });
		const scripted = createScriptedModel([{ content: [toolCall("deploy", {}, "call-1")] }, { content: "done" }]);
		const options = { store, sessionId: "s", initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn };
		const first = await Agent.load(options);
		const asked = deferred<void>();
		first.subscribe((event: AgentEvent) => void (event.type === "approval_requested" && asked.resolve()));
		const prompt = first.prompt("ship it");
		await asked.promise;
		first.abort();
		await prompt;
		await first.saved();
		first.dispose();

		const second = await Agent.load(options);
		await second.waitForIdle();
		expect(second.pendingApprovals).toEqual([]);
		expect(runs).toEqual([]);
		expect(second.state.messages.map((message) => message.role)).toEqual(first.state.messages.map((message) => message.role));
		expect(scripted.calls.length).toBe(1);
		second.dispose();
	});
});
