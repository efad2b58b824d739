/**
 * The Agent facade, where the rest of the suite left StrykerJS mutants alive: queues fed
 * while a run is in progress, input checks, and the state it mirrors from the machine.
 */
import { describe, expect, it } from "vitest";
import { Actor } from "xstate";
import { Agent } from "../../src/agent.js";
import { agentLogic, withInterpreter } from "../../src/machines/agent-logic.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { agentWithHeldCompaction, assistant, textOf, user } from "../agent/helpers.js";

function userTexts(messages: readonly AgentMessage[]): string[] {
	return messages.filter((message) => (message as { role?: string }).role === "user").map((message) => textOf(message));
}

/** Calls `act(callIndex)` when the reply of that call starts streaming. */
function onReplyStart(agent: Agent, calls: () => number, act: (callIndex: number) => void): void {
	agent.subscribe((event) => {
		if (event.type === "message_start" && (event.message as { role?: string }).role === "assistant") act(calls());
	});
}

describe("queues fed during a run", () => {
	it("a message steered in each turn reaches the turn after it, turn after turn", async () => {
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }, { content: "three" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		onReplyStart(agent, () => scripted.calls.length, (call) => {
			if (call <= 2) agent.steer(user(`steer ${call}`));
		});
		await agent.prompt("go");
		expect(userTexts(agent.state.messages)).toEqual(["go", "steer 1", "steer 2"]);
		expect(scripted.calls).toHaveLength(3);
		expect(agent.hasQueuedMessages()).toBe(false);
	});

	it("a follow-up queued in each turn is taken when that turn would end the run", async () => {
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }, { content: "three" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		onReplyStart(agent, () => scripted.calls.length, (call) => {
			if (call <= 2) agent.followUp(user(`follow-up ${call}`));
		});
		await agent.prompt("go");
		expect(userTexts(agent.state.messages)).toEqual(["go", "follow-up 1", "follow-up 2"]);
		expect(scripted.calls).toHaveLength(3);
	});
});

describe("input checks", () => {
	it("rejects an initial transcript with a malformed message, naming where it is", () => {
		expect(() => new Agent({ initialState: { messages: [user("fine"), "just text" as unknown as AgentMessage] } })).toThrow(/initialState\.messages\[1\]/);
	});
});

describe("compact() and dispose() around runs", () => {
	it("compact() during a run is refused with pi's wording", async () => {
		const scripted = createScriptedModel([{ content: "slow reply", delayMs: 5 }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, compaction: { enabled: true, summarize: async () => "s" } });
		const run = agent.prompt("go");
		await expect(agent.compact()).rejects.toThrow("Agent is already processing. Wait for completion before compacting.");
		await run;
	});

	it("dispose() of an idle agent whose actor was read keeps that actor, ended", async () => {
		const scripted = createScriptedModel([{ content: "hi" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const actor = agent.actor;
		await agent.prompt("go");
		agent.dispose();
		expect(agent.actor).toBe(actor);
		expect(actor.getSnapshot().status).toBe("done");
		expect(actor.getSnapshot().value).toBe("ended");
	});
});

describe("the state it mirrors", () => {
	it("streamingMessage is the reply from its message_start on", async () => {
		const scripted = createScriptedModel([{ content: "hello" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const seen: unknown[] = [];
		agent.subscribe((event) => {
			if (event.type === "message_start" && (event.message as { role?: string }).role === "assistant") seen.push(agent.state.streamingMessage);
		});
		await agent.prompt("go");
		expect(seen).toHaveLength(1);
		expect(seen[0]).toMatchObject({ role: "assistant" });
	});

	it("during compact(), agent.signal is the compaction's: abort() aborts it", async () => {
		const { agent, summarizing } = agentWithHeldCompaction();
		let listenerSignal: AbortSignal | undefined;
		agent.subscribe((event, signal) => {
			if (event.type === "auto_compaction_start") listenerSignal = signal;
		});
		const compacting = agent.compact();
		await summarizing;
		const during = agent.signal;
		agent.abort();
		await expect(compacting).rejects.toThrow();
		expect(during?.aborted).toBe(true);
		expect(listenerSignal).toBe(during);
	});

	it("errorMessage forgets an overflow the run recovered from (pi's coding agent retries with continue(), which clears it)", async () => {
		const overflow = "prompt is too long: 300000 tokens > 200000 maximum";
		const scripted = createScriptedModel([{ content: "", stopReason: "error", errorMessage: overflow }, { content: "recovered" }], { model: { contextWindow: 200_000 } });
		const agent = new Agent({
			initialState: { model: scripted.model, messages: [user(`u1 ${"x".repeat(400)}`), assistant(`a1 ${"x".repeat(400)}`)] },
			streamFn: scripted.streamFn,
			compaction: { enabled: true, keepRecentTokens: 1, summarize: async () => "summary" },
		});
		await agent.prompt("go");
		expect(textOf(agent.state.messages.at(-1))).toBe("recovered");
		expect(agent.state.errorMessage).toBeUndefined();
		expect(scripted.calls.length).toBe(2);
	});
});

describe("what runs the chart", () => {
	it("is agentchart's interpreter by default (unless the suite's second pass asks for XState's), on XState's Actor", () => {
		const actor = (process.env["AGENTCHART_INTERPRETER"] === "xstate" ? withInterpreter("agentchart", () => new Agent()) : new Agent()).actor as unknown as { logic: unknown };
		expect(actor).toBeInstanceOf(Actor);
		expect(actor.logic).toBe(agentLogic);
	});

	it("is XState's interpreter of the same chart when made with it (the behaviour suite's second pass)", () => {
		const agent = withInterpreter("xstate", () => new Agent());
		const logic = (agent.actor as unknown as { logic: { config: unknown } }).logic;
		expect(logic).not.toBe(agentLogic);
		expect(logic.config).toBe(agentMachine.config);
	});

	// A run is an XState actor from its start: asking for agent.actor in the middle of it hands out
	// that actor, and listeners added to it then hear the rest of the run.
	it("agent.actor asked for during a run is the run's XState actor, and its listeners hear the rest of it", async () => {
		const scripted = createScriptedModel([{ content: "a reply in several deltas" }], { chunkSize: 2 });
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		let actor: unknown;
		const afterPin: string[] = [];
		agent.subscribe((event) => {
			if (event.type === "message_update" && actor === undefined) {
				actor = agent.actor;
				agent.actor.on("*", (emitted) => void afterPin.push(emitted.type));
			}
		});
		await agent.prompt("go");
		expect(actor).toBeInstanceOf(Actor);
		expect(afterPin).toContain("message_end");
		expect(afterPin.at(-1)).toBe("agent_end");
		expect((agent.state.messages.at(-1) as { stopReason?: string }).stopReason).toBe("stop");
	});
});

describe("reset()", () => {
	it("clears the transcript and the queues of a machine handed out with agent.actor", async () => {
		const scripted = createScriptedModel([{ content: "first" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const actor = agent.actor;
		await agent.prompt("go");
		agent.followUp(user("later"));
		expect(actor.getSnapshot().context.messages).toHaveLength(2);
		agent.reset();
		expect(actor.getSnapshot().context.messages).toEqual([]);
		expect(actor.getSnapshot().context.followUpQueue).toEqual([]);
		expect(agent.hasQueuedMessages()).toBe(false);
	});
});
