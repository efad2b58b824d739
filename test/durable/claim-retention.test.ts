/**
 * What an agent with a store leaves behind in the task that made it. Its claim to write the
 * session (see `SessionClaim`) was held through a WeakRef made with the claim, and the language
 * keeps a WeakRef's target until the task ends: the claim held its agent (to tell it of a newer
 * one) and its store, so a task that made agents one after the other without ending (a batch over
 * an in-process model, the durable bench) kept every one of them, 300 MB over the bench's 32,000,
 * and V8 ran the whole process about twice as slowly with one WeakRef and one finalization record
 * per agent piling up (docs/performance.md, "A process with a store ran slower").
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import { makeTool, ok } from "../agent/helpers.js";
import { collectGarbage, collectNow } from "../collect-garbage.js";

/** Lets the microtasks the agents queued run (their saves on the memory store) without ending the task. */
async function drainMicrotasks(): Promise<void> {
	for (let i = 0; i < 100; i++) await null;
}

/** Bytes of heap a task keeps after making `count` agents of `bytes` each and dropping them (a full collection, in the task). */
async function keptInTask(count: number, bytes: number, withStore: boolean, prompt: boolean): Promise<number> {
	collectNow();
	const before = process.memoryUsage().heapUsed;
	for (let i = 0; i < count; i++) {
		const scripted = createScriptedModel([{ content: "ok" }]);
		const store = withStore ? { store: createMemoryStore(), sessionId: `s${i}` } : {};
		const agent = new Agent({ initialState: { model: scripted.model, messages: [{ role: "user", content: `${i}`.padEnd(bytes, "x"), timestamp: 0 }] }, streamFn: scripted.streamFn, ...store });
		// A run on a scripted model settles in microtasks: the task goes on.
		if (prompt) await agent.prompt("go");
	}
	await drainMicrotasks();
	collectNow();
	return process.memoryUsage().heapUsed - before;
}

describe("an agent with a store, dropped, is collectable before the task that made it ends", () => {
	for (const prompt of [false, true]) {
		it(`100 agents of 200 KB each${prompt ? ", each after a run" : ""}: the task keeps next to nothing of them, as without a store`, async () => {
			const withoutStore = await keptInTask(100, 200_000, false, prompt);
			const withStore = await keptInTask(100, 200_000, true, prompt);
			// Kept, they would hold 20 MB; the agents without a store set the scale of what a task keeps.
			expect(withStore).toBeLessThan(Math.max(withoutStore, 0) + 4_000_000);
		});
	}

	it("an agent dropped while its run waits for approval is collected once the task ended (its claim, which tells it of a newer agent then, is held weakly)", async () => {
		const store = createMemoryStore();
		const scripted = createScriptedModel([{ content: [toolCall("deploy", {}, "d1")] }, { content: "done" }]);
		const deploy = makeTool("deploy", async () => ok("deployed"), { needsApproval: true });
		let agent: Agent | undefined = new Agent({ initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn, store, sessionId: "waits" });
		const asked = new Promise<void>((resolve) => {
			agent?.subscribe((event) => {
				if (event.type === "approval_requested") resolve();
			});
		});
		void agent.prompt("deploy it");
		await asked;
		await agent.saved();
		expect(agent.pendingApprovals.map((call) => call.toolCallId)).toEqual(["d1"]);
		const ref = new WeakRef(agent);
		agent = undefined;
		expect(await collectGarbage(ref)).toBe(true);
	});

	it("once the task ended, its claim no longer holds it: an agent of a store the process keeps is collected (the claims of a session are held weakly from then on)", async () => {
		const store = createMemoryStore();
		const scripted = createScriptedModel([{ content: "ok" }]);
		let agent: Agent | undefined = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, store, sessionId: "kept store" });
		await agent.prompt("go");
		await agent.saved();
		const ref = new WeakRef(agent);
		agent = undefined;
		expect(await collectGarbage(ref)).toBe(true);
		// The session's entry went with it: a new agent on it is the only writer, and writes.
		const next = new Agent({ initialState: { model: scripted.model }, streamFn: createScriptedModel([{ content: "again" }]).streamFn, store, sessionId: "kept store" });
		await next.prompt("again");
		await next.saved();
		expect(next.storeProblems).toEqual([]);
	});
});
