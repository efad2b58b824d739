/**
 * `dispose()` ends the agent object, not the stored session: it writes nothing after it, so the
 * store keeps the session as its last write left it and the next load goes on as after a crash.
 * A server that disposes its agents on shutdown keeps the approvals they wait for (the disposed
 * agent itself shows the run ended, as `dispose()` documents), and a tool call running at the
 * dispose follows the crash rules. The property at the end gives the commands a person may make
 * while a run waits (steer, follow-up) and the dispose at random steps: the store holds them, and
 * none of what the dispose itself did. `PROPERTY_RUNS` (default 40) sets its runs,
 * `PROPERTY_SEED` replays a seed.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import { deferred, makeTool, ok, textOf } from "../agent/helpers.js";

const PROPERTY_RUNS = Number(process.env["PROPERTY_RUNS"] ?? 40);
const PROPERTY_SEED = Number(process.env["PROPERTY_SEED"] ?? Date.now() % 2 ** 31);

/** A session on a memory store whose first run waits for approval of `deploy` (call-1); its runs are logged. */
async function waitingForApproval() {
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
	return { runs, scripted, options, first, prompt };
}

describe("dispose() with a store", () => {
	it("leaves a call waiting for approval stored waiting: the next load asks again, and the answer runs the tool once", async () => {
		const { runs, options, first, prompt } = await waitingForApproval();
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

	it("keeps the question stored whichever step after it the dispose lands in (a save asked for before the dispose is taken before it)", async () => {
		// The chart asks for a save right after the question reaches the listeners; a dispose landing
		// before that save was taken had it take the disposed agent: the call answered "Agent was
		// disposed" in the store, the approval gone for the next process.
		for (let hops = 0; hops <= 12; hops++) {
			const { options, first, prompt } = await waitingForApproval();
			for (let hop = 0; hop < hops; hop++) await Promise.resolve();
			first.dispose();
			await prompt;
			await first.saved();
			const second = await Agent.load(options);
			expect(second.pendingApprovals.map((call) => call.toolCallId), `dispose after ${hops} microtasks`).toEqual(["call-1"]);
			second.dispose();
		}
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
		const { runs, scripted, options, first, prompt } = await waitingForApproval();
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

	it("property: steer and follow-up commands and a dispose at random steps of a wait: the store holds the commands and the question, nothing of the dispose", async () => {
		console.log(`property seed (dispose with a store): ${PROPERTY_SEED}  (PROPERTY_SEED=${PROPERTY_SEED} to replay)`);
		const step = fc.oneof(fc.constant({ kind: "hop" as const }), fc.constant({ kind: "steer" as const }), fc.constant({ kind: "followUp" as const }));
		await fc.assert(
			fc.asyncProperty(fc.array(step, { maxLength: 10 }), async (steps) => {
				const { options, first, prompt } = await waitingForApproval();
				const sent = { steering: [] as string[], followUps: [] as string[] };
				for (const [index, command] of steps.entries()) {
					if (command.kind === "hop") await Promise.resolve();
					else if (command.kind === "steer") {
						first.steer({ role: "user", content: `steer ${index}`, timestamp: 0 });
						sent.steering.push(`steer ${index}`);
					} else {
						first.followUp({ role: "user", content: `follow ${index}`, timestamp: 0 });
						sent.followUps.push(`follow ${index}`);
					}
				}
				first.dispose();
				await prompt;
				await first.saved();
				const stored = await options.store.load("s");
				const context = stored?.snapshot?.machine.context;
				expect(context?.steeringQueue.map((message) => textOf(message))).toEqual(sent.steering);
				expect(context?.followUpQueue.map((message) => textOf(message))).toEqual(sent.followUps);
				const second = await Agent.load(options);
				expect(second.pendingApprovals.map((call) => call.toolCallId)).toEqual(["call-1"]);
				second.dispose();
			}),
			{ numRuns: PROPERTY_RUNS, seed: PROPERTY_SEED },
		);
	}, Math.max(30_000, PROPERTY_RUNS * 1_000));
});
