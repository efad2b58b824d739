/**
 * What an agent keeps between runs. The machine is started for a run and stopped after it; a
 * stopped machine must not stay reachable from the agent, or every agent carries a copy of its
 * last run's context, children and actor system for life (the bench's "heap per agent after one
 * short run" went from 2.9 to 8.6 KiB when a marker kept it).
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { withInterpreter } from "../../src/machines/agent-logic.js";
import { createScriptedModel } from "../../src/providers/scripted.js";

// A full collection without --expose-gc: the flag can be turned on at run time, and a new
// context then has `gc`.
setFlagsFromString("--expose_gc");
const gc = runInNewContext("gc") as () => void;

async function collected(ref: WeakRef<object>): Promise<boolean> {
	for (let i = 0; i < 10 && ref.deref() !== undefined; i++) {
		await new Promise((resolve) => setImmediate(resolve));
		gc();
	}
	return ref.deref() === undefined;
}

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
