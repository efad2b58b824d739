/**
 * abort / steer / followUp / dispose arriving in each state of the machine. Every cell runs
 * the same scenario (a tool call, then a text reply) and injects the command at a point
 * where the machine is known to be in that state, then checks the outcome: events nest,
 * every tool call has one result, queued messages are delivered exactly once (or stay
 * queued), the agent settles with no running child actors.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentMessage } from "../../src/types/messages.js";
import {
	expectValidTranscript,
	expectWellFormedRun,
	flush,
	makeTool,
	ok,
	record,
	runsOf,
	user,
	userTextsOf,
	whenAborted,
} from "./helpers.js";
import { providerRequestViolations } from "../../src/testing/provider-requests.js";

type Command = "abort" | "steer" | "followUp" | "dispose";
type Where = "run-starting" | "streaming" | "after-stream" | "tool-preparing" | "tool-executing" | "turn-ended" | "idle";

const EXPECTED_STATE: Record<Exclude<Where, "idle">, string[]> = {
	"run-starting": ["run-starting", "before-call"],
	streaming: ["streaming"],
	"after-stream": ["after-stream"],
	"tool-preparing": ["tool-preparing"],
	"tool-executing": ["tool-executing"],
	"turn-ended": ["turn-ended"],
};

function stateName(agent: Agent): string {
	const value = agent.actor.getSnapshot().value;
	if (typeof value === "string") return value;
	const running = (value as { running?: unknown }).running;
	if (typeof running === "string") return running;
	// Compound states (tool-preparing) report their own name.
	if (running && typeof running === "object") return Object.keys(running)[0] ?? JSON.stringify(value);
	return JSON.stringify(value);
}

function activeChildren(agent: Agent): string[] {
	return Object.entries(agent.actor.getSnapshot().children)
		.filter(([, child]) => child?.getSnapshot().status === "active")
		.map(([id]) => id);
}

interface Cell {
	agent: Agent;
	callsAtInjection: number;
	stateAtInjection?: string;
	injected: AgentMessage;
	llmCalls: () => number;
	contexts: () => { messages: readonly unknown[] }[];
}

async function runCell(where: Where, command: Command): Promise<Cell & { rec: ReturnType<typeof record> }> {
	const scripted = createScriptedModel([
		{ content: [toolCall("probe", { value: "x" }, "t1")], delayMs: 20, chunkSize: 100 },
		{ content: "after tools" },
		{ content: "extra 1" },
		{ content: "extra 2" },
	]);
	const injected = user(`${command.toUpperCase()}-MSG`);
	let agent!: Agent;
	const cell: Partial<Cell> = { injected };
	let done = false;

	const inject = () => {
		if (done) return;
		done = true;
		cell.callsAtInjection = scripted.calls.length;
		cell.stateAtInjection = stateName(agent);
		if (command === "abort") agent.abort();
		else if (command === "steer") agent.steer(injected);
		else if (command === "followUp") agent.followUp(injected);
		else agent.dispose();
	};
	const interrupting = command === "abort" || command === "dispose";

	const probe = makeTool("probe", async (_id, _p, signal) => {
		if (where === "tool-executing") {
			inject();
			if (interrupting) await whenAborted(signal);
		}
		return ok("probed");
	});
	// Read after the run: an assertion thrown inside the hook would become the call's error result, which these cells expect anyway.
	// An aborted run does not wait for the hook: its end is awaited below, before the check.
	const hookSawAbort: (boolean | undefined)[] = [];
	const hookRuns: Promise<undefined>[] = [];
	agent = new Agent({
		initialState: { model: scripted.model, tools: [probe] },
		streamFn: scripted.streamFn,
		beforeToolCall: (_ctx, signal) => {
			const run = (async () => {
				if (where === "tool-preparing") {
					inject();
					await flush(2);
					hookSawAbort.push(signal?.aborted);
				}
				return undefined;
			})();
			hookRuns.push(run);
			return run;
		},
	});
	const rec = record(agent);
	agent.subscribe((event) => {
		if (where === "run-starting" && event.type === "message_end" && event.message.role === "user") inject();
		if (where === "streaming" && event.type === "message_start" && event.message.role === "assistant") inject();
		if (where === "after-stream" && event.type === "message_end" && event.message.role === "assistant") inject();
		if (where === "turn-ended" && event.type === "turn_end") inject();
	});

	if (where === "idle") {
		await agent.prompt("go");
		inject();
		if (command !== "dispose") await agent.prompt("second");
	} else {
		await agent.prompt("go");
	}
	await agent.waitForIdle();
	await Promise.all(hookRuns);
	if (where === "tool-preparing") expect(hookSawAbort).toEqual([interrupting]);
	return {
		...(cell as Cell),
		agent,
		rec,
		llmCalls: () => scripted.calls.length,
		contexts: () => scripted.calls,
	};
}

const PLACES: Where[] = ["run-starting", "streaming", "after-stream", "tool-preparing", "tool-executing", "turn-ended", "idle"];

describe.each(PLACES)("arriving in %s", (where) => {
	function expectSettled(cell: Cell & { rec: ReturnType<typeof record> }) {
		const { agent, rec } = cell;
		if (where !== "idle") expect(EXPECTED_STATE[where]).toContain(cell.stateAtInjection);
		else expect(cell.stateAtInjection).toBe("idle");
		for (const run of runsOf(rec.events)) expectWellFormedRun(run);
		expect(rec.events.at(-1)?.type).toBe("agent_end");
		expectValidTranscript(agent.state.messages);
		expect(providerRequestViolations(agent.state.messages)).toEqual([]);
		expect(agent.state.isStreaming).toBe(false);
		expect(agent.state.pendingToolCalls.size).toBe(0);
		expect(activeChildren(agent)).toEqual([]);
	}

	it("abort ends the run without any further LLM call", async () => {
		const cell = await runCell(where, "abort");
		expectSettled(cell);
		const { agent } = cell;
		expect(agent.actor.getSnapshot().value).toBe("idle");
		if (where === "idle") {
			// A no-op: the next prompt runs normally.
			expect(runsOf(cell.rec.events)).toHaveLength(2);
			expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
			return;
		}
		expect(runsOf(cell.rec.events)).toHaveLength(1);
		expect(cell.llmCalls()).toBe(where === "run-starting" ? 0 : Math.max(1, cell.callsAtInjection));
		const last = agent.state.messages.at(-1);
		if (where === "after-stream" || where === "tool-preparing" || where === "tool-executing" || where === "turn-ended") {
			// The tool call of the completed reply is answered (after-stream, tool-preparing: with an error result).
			expect(last?.role).toBe("toolResult");
			if (where === "after-stream" || where === "tool-preparing") expect(last).toMatchObject({ isError: true });
		} else {
			expect(last).toMatchObject({ role: "assistant" });
		}
		if (where === "run-starting" || where === "streaming") {
			expect(last).toMatchObject({ role: "assistant", stopReason: "aborted" });
			expect(agent.state.errorMessage).toBeDefined();
		}
	});

	for (const command of ["steer", "followUp"] as const) {
		it(`${command} is delivered exactly once and seen by the model`, async () => {
			const cell = await runCell(where, command);
			expectSettled(cell);
			const { agent, injected } = cell;
			expect(agent.state.messages.filter((m) => m === injected)).toHaveLength(1);
			expect(agent.hasQueuedMessages()).toBe(false);
			const sawIt = cell.contexts().filter((context) => userTextsOf(context).includes(`${command.toUpperCase()}-MSG`));
			expect(sawIt.length).toBeGreaterThan(0);
			// Delivered in the run it arrived in (or, when idle, the next one).
			const runs = runsOf(cell.rec.events);
			const deliveredIn = runs.findIndex((run) =>
				run.some((event) => event.type === "message_end" && event.message === injected),
			);
			expect(deliveredIn).toBe(runs.length - 1);
			expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
		});
	}

	it("dispose closes the run and ends the machine", async () => {
		const cell = await runCell(where, "dispose");
		expectSettled(cell);
		const snapshot = cell.agent.actor.getSnapshot();
		expect(snapshot.status).toBe("done");
		expect(snapshot.value).toBe("ended");
		expect(runsOf(cell.rec.events)).toHaveLength(1);
		if (where !== "idle") expect(cell.llmCalls()).toBe(Math.max(where === "run-starting" ? 0 : 1, cell.callsAtInjection));
		await expect(cell.agent.prompt("after")).rejects.toThrow(/disposed/);
	});
});
