/**
 * The machine's input and commands, where StrykerJS found them unchecked: its context
 * defaults and output, the run overrides a prompt, continue or update carries, and the queue
 * commands (clear, mode) while a machine runs.
 */
import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import { Agent } from "../../src/agent.js";
import { Agent as PiAgent } from "@mariozechner/pi-agent-core";
import { createDefaultStreamFn } from "../../src/index.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import { defaultConvertToLlm } from "../../src/machines/run-helpers.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentMessage } from "../../src/types/messages.js";
import type { AgentMachineInput } from "../../src/machines/types.js";
import { assistant, flush, textOf, user } from "../agent/helpers.js";

const userTexts = (messages: readonly AgentMessage[]) => messages.filter((message) => (message as { role?: string }).role === "user").map((message) => textOf(message));

function machineWith(replies: Parameters<typeof createScriptedModel>[0]) {
	const scripted = createScriptedModel(replies);
	const actor = createActor(agentMachine, { input: { model: scripted.model, config: { streamFn: scripted.streamFn } } }).start();
	const nextEnd = () => new Promise<void>((resolve) => {
		const subscription = actor.on("agent_end", () => {
			subscription.unsubscribe();
			resolve();
		});
	});
	return { scripted, actor, nextEnd };
}

describe("the machine's input", () => {
	it("defaults: no system prompt, thinking off, no tools, one-at-a-time queues; disposing outputs the transcript", () => {
		const actor = createActor(agentMachine, { input: {} }).start();
		const { context } = actor.getSnapshot();
		expect(context.systemPrompt).toBe("");
		expect(context.thinkingLevel).toBe("off");
		expect(context.tools).toEqual([]);
		expect(context.messages).toEqual([]);
		expect(context.steeringMode).toBe("one-at-a-time");
		expect(context.followUpMode).toBe("one-at-a-time");
		expect(context.config).toMatchObject({ toolExecution: "parallel", toolTimeoutMs: 180_000, abortGraceMs: 2_000, streamIdleTimeoutMs: 120_000, toolAbortGraceMs: 5_000 });
		actor.send({ type: "dispose" });
		expect(actor.getSnapshot().output).toEqual({ messages: [] });
	});

	it("an agent given no model has pi's placeholder model", () => {
		expect(new Agent().state.model).toEqual(new PiAgent().state.model);
		expect(new Agent().state.model).toEqual({
			id: "unknown",
			name: "unknown",
			api: "unknown",
			provider: "unknown",
			baseUrl: "",
			reasoning: false,
			input: [],
			cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
			contextWindow: 0,
			maxTokens: 0,
		});
	});

	it("the default stream function says what to do when pi-ai's module has no streamSimple function", async () => {
		const streamFn = createDefaultStreamFn(async () => ({ streamSimple: "not a function" }) as never);
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model }, streamFn });
		await agent.prompt("go");
		expect(agent.state.messages.at(-1)).toMatchObject({ stopReason: "error" });
		expect((agent.state.messages.at(-1) as { errorMessage?: string }).errorMessage).toMatch(/^No stream function for model "scripted-1"/);
	});
});

describe("the chart", () => {
	it("describes every state, as the visualizer shows them", () => {
		const missing: string[] = [];
		const visit = (node: { id: string; description?: string | undefined; states: Record<string, unknown> }) => {
			if (node.id !== "agent" && !node.description?.trim()) missing.push(node.id);
			for (const child of Object.values(node.states)) visit(child as typeof node);
		};
		visit(agentMachine.root as never);
		expect(missing).toEqual([]);
	});

	it("a machine that does not await delivery emits only agent events", async () => {
		const { actor, nextEnd } = machineWith([{ content: "ok" }]);
		const types = new Set<string>();
		actor.on("*", (event) => {
			types.add(event.type);
		});
		const ended = nextEnd();
		actor.send({ type: "prompt", messages: [user("go")] });
		await ended;
		expect([...types].filter((type) => type.startsWith("agentchart."))).toEqual([]);
		actor.stop();
	});
});

describe("continue() on the bare machine", () => {
	function idleMachine(input: AgentMachineInput) {
		return createActor(agentMachine, { input }).start();
	}

	it("does nothing on an empty transcript, even with steering queued", () => {
		const scripted = createScriptedModel([{ content: "never" }]);
		const actor = idleMachine({ model: scripted.model, steeringQueue: [user("s")], config: { streamFn: scripted.streamFn } });
		actor.send({ type: "continue" });
		expect(actor.getSnapshot().value).toBe("idle");
		expect(scripted.calls).toHaveLength(0);
		actor.stop();
	});

	it("from an assistant tail with steering queued, starts with the steering and does not poll again before the call", async () => {
		const scripted = createScriptedModel([{ content: "ok" }]);
		let polls = 0;
		const actor = idleMachine({
			model: scripted.model,
			messages: [user("earlier"), assistant("answered")],
			steeringQueue: [user("steer")],
			config: {
				streamFn: scripted.streamFn,
				getSteeringMessages: async () => {
					polls++;
					return [];
				},
			},
		});
		const ended = new Promise<void>((resolve) => actor.on("agent_end", () => resolve()));
		actor.send({ type: "continue" });
		await ended;
		expect(userTexts(scripted.calls[0]?.messages ?? [])).toEqual(["earlier", "steer"]);
		expect(polls).toBe(1);
		actor.stop();
	});
});

describe("the default convertToLlm", () => {
	it("keeps user, assistant and tool result messages in order, turns summaries into user messages, drops the rest, and never hands back the transcript itself", () => {
		const hello = { ...user("hello"), timestamp: 1 };
		const reply = { role: "assistant", content: [{ type: "text", text: "hi" }], timestamp: 2 } as unknown as AgentMessage;
		const result = { role: "toolResult", toolCallId: "t1", toolName: "x", content: [], isError: false, timestamp: 3 } as unknown as AgentMessage;
		const note = { role: "note", text: "for the UI only", timestamp: 4 } as unknown as AgentMessage;
		const summary = { role: "compactionSummary", summary: "s", tokensBefore: 1, messagesDropped: 1, timestamp: 5 } as unknown as AgentMessage;
		const plain = [hello, reply, result];
		const copied = defaultConvertToLlm(plain);
		expect(copied).toEqual(plain);
		expect(copied).not.toBe(plain);
		const roles = (messages: AgentMessage[]) => defaultConvertToLlm(messages).map((message) => `${message.role}@${message.timestamp}`);
		expect(roles([note, hello, summary, reply, note, result])).toEqual(["user@1", "user@5", "assistant@2", "toolResult@3"]);
		expect(roles([hello, reply, note])).toEqual(["user@1", "assistant@2"]);
		expect(roles([hello, summary])).toEqual(["user@1", "user@5"]);
		expect(roles([])).toEqual([]);
	});


	it("gives the model a compaction summary as a user text message with the summary's timestamp", async () => {
		const scripted = createScriptedModel([{ content: "ok" }]);
		const summary = { role: "compactionSummary", summary: "what happened", tokensBefore: 10, messagesDropped: 2, timestamp: 1234 } as unknown as AgentMessage;
		const agent = new Agent({ initialState: { model: scripted.model, messages: [summary] }, streamFn: scripted.streamFn });
		await agent.prompt("go");
		const first = scripted.calls[0]?.messages[0];
		expect(first).toMatchObject({ role: "user", timestamp: 1234 });
		expect((first?.content as { type: string; text: string }[])[0]).toEqual({
			type: "text",
			text: "The conversation history before this point was compacted into the following summary:\n\n<summary>\nwhat happened\n</summary>",
		});
	});
});

describe("run overrides", () => {
	it("a prompt's overrides apply to its run", async () => {
		const { scripted, actor, nextEnd } = machineWith([{ content: "ok" }]);
		const ended = nextEnd();
		actor.send({ type: "prompt", messages: [user("go")], state: { systemPrompt: "from the prompt" } });
		await ended;
		expect(scripted.calls[0]?.systemPrompt).toBe("from the prompt");
		actor.stop();
	});

	it("a continue's overrides apply to its run", async () => {
		const scripted = createScriptedModel([{ content: "ok" }]);
		const actor = createActor(agentMachine, { input: { model: scripted.model, messages: [user("waiting")], config: { streamFn: scripted.streamFn } } }).start();
		const ended = new Promise<void>((resolve) => actor.on("agent_end", () => resolve()));
		actor.send({ type: "continue", state: { systemPrompt: "from continue" } });
		await ended;
		expect(scripted.calls[0]?.systemPrompt).toBe("from continue");
		actor.stop();
	});

	it("an agent whose actor was read brings the machine up to date before each run", async () => {
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }]);
		const other = createScriptedModel([{ content: "three" }]);
		const agent = new Agent({ initialState: { model: scripted.model, systemPrompt: "first" }, streamFn: scripted.streamFn });
		void agent.actor;
		await agent.prompt("go");
		agent.state.systemPrompt = "second";
		await agent.prompt("again");
		expect(scripted.calls.map((context) => context.systemPrompt)).toEqual(["first", "second"]);
		agent.streamFn = other.streamFn;
		await agent.prompt("third");
		expect(other.calls).toHaveLength(1);
	});

	it("a prompt's queue modes apply to the machine", () => {
		const actor = createActor(agentMachine, { input: { model: createScriptedModel([]).model, config: { streamFn: createScriptedModel([{ content: "x" }]).streamFn } } }).start();
		actor.send({ type: "prompt", messages: [user("go")], steeringMode: "all", followUpMode: "all" });
		expect([actor.getSnapshot().context.steeringMode, actor.getSnapshot().context.followUpMode]).toEqual(["all", "all"]);
		actor.stop();
	});
});

describe("queue commands while a machine runs", () => {
	async function runWithQueued(act: (agent: Agent) => void) {
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }, { content: "three" }, { content: "four" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		agent.subscribe((event) => {
			if (event.type === "message_start" && (event.message as { role?: string }).role === "assistant" && scripted.calls.length === 1) {
				agent.steer(user("s1"));
				agent.steer(user("s2"));
				agent.followUp(user("f1"));
				act(agent);
			}
		});
		await agent.prompt("go");
		return userTexts(agent.state.messages);
	}

	it("clearSteeringQueue() drops the steering, keeps the follow-ups", async () => {
		expect(await runWithQueued((agent) => agent.clearSteeringQueue())).toEqual(["go", "f1"]);
	});

	it("clearFollowUpQueue() drops the follow-ups, keeps the steering", async () => {
		expect(await runWithQueued((agent) => agent.clearFollowUpQueue())).toEqual(["go", "s1", "s2"]);
	});

	/** Queues with `queue` during the first reply, then clears that queue: what is left queued, and the calls made. */
	async function queueThenClear(queue: (agent: Agent) => void, clear: (agent: Agent) => void) {
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		let queuedAfterClear: boolean | undefined;
		agent.subscribe(async (event) => {
			if (event.type === "message_start" && (event.message as { role?: string }).role === "assistant" && scripted.calls.length === 1) {
				queue(agent);
				clear(agent);
				// Read once the machine has taken both commands (the run waits for this listener).
				await flush(1);
				queuedAfterClear = agent.hasQueuedMessages();
			}
		});
		await agent.prompt("go");
		return { queuedAfterClear, calls: scripted.calls.length, transcript: agent.state.messages.map((message) => message.role) };
	}

	it("clearSteeringQueue() during a run leaves the steering queue empty: nothing is queued, no further call is made", async () => {
		expect(await queueThenClear((agent) => agent.steer(user("s1")), (agent) => agent.clearSteeringQueue())).toEqual({ queuedAfterClear: false, calls: 1, transcript: ["user", "assistant"] });
	});

	it("clearFollowUpQueue() during a run leaves the follow-up queue empty: nothing is queued, no further call is made", async () => {
		expect(await queueThenClear((agent) => agent.followUp(user("f1")), (agent) => agent.clearFollowUpQueue())).toEqual({ queuedAfterClear: false, calls: 1, transcript: ["user", "assistant"] });
	});

	it('followUpMode = "all" during a run sets the follow-up mode, not the steering mode', async () => {
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }, { content: "three" }, { content: "four" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		let modes: string[] = [];
		agent.subscribe(async (event) => {
			if (event.type === "message_start" && (event.message as { role?: string }).role === "assistant" && scripted.calls.length === 1) {
				agent.followUpMode = "all";
				agent.steer(user("s1"));
				agent.steer(user("s2"));
				agent.followUp(user("f1"));
				agent.followUp(user("f2"));
				// Read once the machine has taken the commands (the run waits for this listener).
				await flush(1);
				modes = [agent.steeringMode, agent.followUpMode];
			}
		});
		await agent.prompt("go");
		expect(modes).toEqual(["one-at-a-time", "all"]);
		// Steering one message a turn, then both follow-ups in one turn.
		expect(scripted.calls.map((context) => userTexts(context.messages).slice(-2))).toEqual([["go"], ["go", "s1"], ["s1", "s2"], ["f1", "f2"]]);
	});

	it('steeringMode = "all" takes every queued steering message into one turn; follow-ups stay one at a time', async () => {
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }, { content: "three" }, { content: "four" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		agent.subscribe((event) => {
			if (event.type === "message_start" && (event.message as { role?: string }).role === "assistant" && scripted.calls.length === 1) {
				agent.steeringMode = "all";
				agent.steer(user("s1"));
				agent.steer(user("s2"));
				agent.followUp(user("f1"));
				agent.followUp(user("f2"));
			}
		});
		await agent.prompt("go");
		expect(scripted.calls.map((context) => userTexts(context.messages).slice(-2))).toEqual([["go"], ["s1", "s2"], ["s2", "f1"], ["f1", "f2"]]);
		expect(agent.steeringMode).toBe("all");
		expect(agent.followUpMode).toBe("one-at-a-time");
	});

	it('a "queue.clear" of all queues and a reset both empty the machine\'s queues', () => {
		const actor = createActor(agentMachine, { input: { steeringQueue: [user("s")], followUpQueue: [user("f")] } }).start();
		actor.send({ type: "queue.clear", queue: "all" });
		expect([actor.getSnapshot().context.steeringQueue, actor.getSnapshot().context.followUpQueue]).toEqual([[], []]);
		actor.send({ type: "steer", message: user("s") });
		actor.send({ type: "followUp", message: user("f") });
		actor.send({ type: "reset" });
		expect([actor.getSnapshot().context.steeringQueue, actor.getSnapshot().context.followUpQueue]).toEqual([[], []]);
		actor.stop();
	});
});
