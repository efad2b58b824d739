/**
 * What an agent keeps between runs. The machine is started for a run and stopped after it; a
 * stopped machine must not stay reachable from the agent, or every agent carries a copy of its
 * last run's context, children and actor system for life (the bench's "heap per agent after one
 * short run" went from 2.9 to 8.6 KiB when a marker kept it).
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { withInterpreter } from "../../src/machines/agent-logic.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { collectGarbage as collected } from "../collect-garbage.js";

describe("Agent: nothing of a finished run's machine stays reachable", () => {
	for (const interpreter of ["agentchart", "xstate"] as const) {
		it(`lets go of the machine after the run (${interpreter} interpreter)`, async () => {
			const scripted = createScriptedModel([{ content: "hello" }]);
			// Only the run's machine refers to this function once the agent has another one.
			let firstStreamFn: typeof scripted.streamFn | undefined = (model, context, options) => scripted.streamFn(model, context, options);
			const ref = new WeakRef(firstStreamFn);
			const agent = withInterpreter(interpreter, () => new Agent({ initialState: { model: scripted.model }, streamFn: firstStreamFn }));
			agent.clearAllQueues();
			await agent.prompt("hi");
			// Reads and clears that ask the machine for the queues, as a UI would after a run.
			expect(agent.hasQueuedMessages()).toBe(false);
			agent.streamFn = scripted.streamFn;
			firstStreamFn = undefined;
			expect(await collected(ref)).toBe(true);
			expect(agent.state.messages).toHaveLength(2);
		});
	}
});

/** A prompt steered and followed up while it runs, without reading the queues back (as an application that only sends does); the transcript is emptied after it. */
async function steeredRun(agent: Agent, i: number, refs: WeakRef<AgentMessage>[]): Promise<void> {
	const steer: AgentMessage = { role: "user", content: `steer ${i}`, timestamp: Date.now() };
	const followUp: AgentMessage = { role: "user", content: `follow up ${i}`, timestamp: Date.now() };
	refs.push(new WeakRef(steer), new WeakRef(followUp));
	agent.streamFn = scriptedRun().streamFn;
	const run = agent.prompt(`prompt ${i}`);
	agent.steer(steer);
	agent.followUp(followUp);
	await run;
	agent.state.messages = [];
}

/** A scripted model keeps every context it was sent: each run gets a new one. */
function scriptedRun() {
	return createScriptedModel([], { whenExhausted: { content: "ok" } });
}

describe("Agent: a handed-out machine does not keep the queue commands it took", () => {
	for (const interpreter of ["agentchart", "xstate"] as const) {
		it(`lets go of steered and follow-up messages once they were delivered (${interpreter} interpreter)`, async () => {
			const scripted = scriptedRun();
			const agent = withInterpreter(interpreter, () => new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn }));
			// A chat bot with an inspector attached: the machine now lives as long as the agent.
			expect(agent.actor.getSnapshot().value).toBe("idle");
			const refs: WeakRef<AgentMessage>[] = [];
			for (let i = 0; i < 3; i++) await steeredRun(agent, i, refs);
			// The last run's context is the machine's until the next run: one more, on an empty transcript.
			agent.streamFn = scriptedRun().streamFn;
			await agent.prompt("last");
			agent.state.messages = [];
			const kept: WeakRef<AgentMessage>[] = [];
			for (const ref of refs) if (!(await collected(ref))) kept.push(ref);
			expect(kept).toHaveLength(0);
			agent.dispose();
		});
	}
});
