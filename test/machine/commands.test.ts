/**
 * The bare machine's commands and settings as a JavaScript caller sends them (no types at run
 * time), on XState's interpreter (`agentMachine`, as embedders run it) and on agentchart's
 * (`agentLogic`, as an Agent runs it):
 * - a malformed command fails the actor at once with a TypeError that names the command and the
 *   field, before it changed anything; it used to enter the queues or the transcript and fail a
 *   later step with an error that named nothing (`prompts is not iterable`), or be taken as it was;
 *   a malformed input fails the actor at its start the same way;
 * - a setting given as undefined takes its default (`{ toolTimeoutMs: undefined }` in the input, an
 *   `update` or `hydrateAgentSnapshot`), where it used to replace it (`config.streamFn is not a
 *   function` as the run's reply);
 * - the Agent refuses a run while one of its settings holds a value no run can use (set from
 *   JavaScript), naming the field, where a pinned agent's machine failed on it; and once its pinned
 *   machine failed, a run is refused with the machine's error instead of waiting for ever.
 */
import { type AnyActorLogic, createActor } from "xstate";
import { afterEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { hydrateAgentSnapshot } from "../../src/machine.js";
import { agentLogic } from "../../src/machines/agent-logic.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import type { AgentMachineConfig } from "../../src/machines/types.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentMessage } from "../../src/types/messages.js";

const interpreters: [string, AnyActorLogic][] = [
	["XState's interpreter", agentMachine],
	["agentchart's interpreter", agentLogic],
];

interface Snap {
	status: string;
	value: unknown;
	context: { messages: AgentMessage[]; steeringQueue: AgentMessage[]; followUpQueue: AgentMessage[]; steeringMode: string; followUpMode: string; config: AgentMachineConfig };
}

const stopped: { stop(): void }[] = [];
afterEach(() => {
	for (const actor of stopped.splice(0)) actor.stop();
});

function machineOn(logic: AnyActorLogic, config: Partial<AgentMachineConfig> = {}, replies = [{ content: "ok" }]) {
	const scripted = createScriptedModel(replies);
	const actor = createActor(logic, { input: { model: scripted.model, config: { streamFn: scripted.streamFn, ...config } } });
	const errors: Error[] = [];
	actor.subscribe({ error: (error) => errors.push(error as Error) });
	stopped.push(actor);
	actor.start();
	return { actor, errors, scripted, snapshot: () => actor.getSnapshot() as unknown as Snap };
}

/** Settings as a caller without `exactOptionalPropertyTypes` (most projects) may write them. */
const loose = (config: Record<string, unknown>) => config as Partial<AgentMachineConfig>;

const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1 });

describe.each(interpreters)("a malformed command on %s", (_name, logic) => {
	it.each([
		["a prompt whose messages are a string", { type: "prompt", messages: "hello" }, /^agentchart: the machine's prompt command: messages must be a list of messages, got "hello"/],
		["a prompt without messages", { type: "prompt" }, /^agentchart: the machine's prompt command: messages must be a list of messages, got undefined/],
		["a prompt with a message that has no role", { type: "prompt", messages: [{ content: "hi" }] }, /^agentchart: the machine's prompt command: messages\[0\]\.role: expected a role/],
		["a steer without a message", { type: "steer" }, /^agentchart: the machine's steer command: message: expected a message object/],
		["a followUp with a string", { type: "followUp", message: "later" }, /^agentchart: the machine's followUp command: message: expected a message object/],
		["a queue.clear of no queue", { type: "queue.clear", queue: "nope" }, /^agentchart: the machine's queue.clear command: queue must be "steering", "followUp" or "all", got "nope"/],
		["a queue.mode of no mode", { type: "queue.mode", queue: "steering", mode: "sometimes" }, /^agentchart: the machine's queue.mode command: mode must be "all" or "one-at-a-time", got "sometimes"/],
		["an update to no tool mode", { type: "update", config: { toolExecution: "wild" } }, /^agentchart: the machine's update command: config.toolExecution must be "parallel", "sequential" or "streaming", got "wild"/],
		["an update of streamFn to a string", { type: "update", config: { streamFn: "anthropic" } }, /^agentchart: the machine's update command: config.streamFn must be a function, got "anthropic"/],
		["an update of a timeout to a string", { type: "update", config: { toolTimeoutMs: "5000" } }, /^agentchart: the machine's update command: config.toolTimeoutMs must be a number of milliseconds, at least 0, got "5000"/],
		["an update to a steering mode of none", { type: "update", steeringMode: "each" }, /^agentchart: the machine's update command: steeringMode must be "all" or "one-at-a-time", got "each"/],
		["a prompt whose state.messages is no list", { type: "prompt", messages: [user("hi")], state: { messages: {} } }, /^agentchart: the machine's prompt command: state.messages must be a list of messages/],
		["a prompt that awaits delivery \"yes\"", { type: "prompt", messages: [user("hi")], awaitDelivery: "yes" }, /^agentchart: the machine's prompt command: awaitDelivery must be true, false or "start", got "yes"/],
		["an update that awaits delivery at a start", { type: "update", awaitDelivery: "start" }, /^agentchart: the machine's update command: awaitDelivery "start" is for a run's start: give it with prompt or continue/],
	] as const)("%s fails the actor, naming it, and changes nothing", (_case, command, message) => {
		const { actor, errors, snapshot, scripted } = machineOn(logic);
		actor.send({ type: "followUp", message: user("queued") });
		const before = snapshot().context;
		actor.send(command as never);
		expect(errors.map((error) => [error.name, error.message])).toEqual([["TypeError", expect.stringMatching(message)]]);
		const after = snapshot();
		expect(after.status).toBe("error");
		expect(after.context.messages).toEqual(before.messages);
		expect(after.context.steeringQueue).toEqual(before.steeringQueue);
		expect(after.context.followUpQueue).toEqual(before.followUpQueue);
		expect([after.context.steeringMode, after.context.followUpMode, after.context.config.toolExecution]).toEqual([before.steeringMode, before.followUpMode, before.config.toolExecution]);
		expect(scripted.calls).toHaveLength(0);
	});

	it("takes well-formed commands as before", async () => {
		const { actor, errors, snapshot } = machineOn(logic, {}, [{ content: "one" }, { content: "two" }]);
		actor.send({ type: "queue.mode", queue: "followUp", mode: "all" });
		actor.send({ type: "followUp", message: user("later") });
		actor.send({ type: "update", config: { toolExecution: "sequential", toolTimeoutMs: 1_000 } });
		actor.send({ type: "prompt", messages: [user("first")] });
		await new Promise<void>((resolve) => actor.subscribe((state) => state.matches("idle") && resolve()));
		expect(errors).toEqual([]);
		expect(snapshot().context.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
		expect(snapshot().context.config.toolExecution).toBe("sequential");
	});
});

describe.each(interpreters)("a run that awaits delivery at its start only, on %s", (_name, logic) => {
	/** A prompt of one reply, sent with awaitDelivery "start"; the barriers it emits. */
	function startOnly() {
		const { actor, errors, snapshot, scripted } = machineOn(logic, {}, [{ content: "one" }]);
		const barriers: number[] = [];
		actor.on("agentchart.barrier", (event: { barrier: number }) => barriers.push(event.barrier));
		actor.send({ type: "prompt", messages: [user("first")], awaitDelivery: "start" });
		return { actor, errors, snapshot, scripted, barriers };
	}
	type Watched = { matches(value: string): boolean };
	const idle = (actor: { getSnapshot(): Watched; subscribe(observer: (state: Watched) => void): unknown }) =>
		new Promise<void>((resolve) => (actor.getSnapshot().matches("idle") ? resolve() : actor.subscribe((state) => state.matches("idle") && resolve())));

	it("waits at its start until the barrier is answered, takes what was queued meanwhile, and decides without waiting after", async () => {
		const { actor, errors, snapshot, scripted, barriers } = startOnly();
		expect(snapshot().value).toEqual({ running: "run-starting" });
		expect(barriers).toEqual([1]);
		await new Promise((resolve) => setTimeout(resolve, 5));
		expect(snapshot().value).toEqual({ running: "run-starting" });
		actor.send({ type: "steer", message: user("joined") });
		actor.send({ type: "delivered", barrier: 1 });
		await idle(actor);
		expect(errors).toEqual([]);
		// The steer joined the first request; no barrier after the start's.
		expect(scripted.calls.map((call) => call.messages.length)).toEqual([2]);
		expect(barriers).toEqual([1]);
		expect((snapshot().context as unknown as { awaitDelivery: unknown }).awaitDelivery).toBe(false);
	});

	it("waits at every decision once delivery.await came while it waited at its start", async () => {
		const { actor, errors, snapshot, barriers } = startOnly();
		actor.send({ type: "delivery.await" });
		actor.on("agentchart.barrier", (event: { barrier: number }) => queueMicrotask(() => actor.send({ type: "delivered", barrier: event.barrier })));
		actor.send({ type: "delivered", barrier: 1 });
		await idle(actor);
		expect(errors).toEqual([]);
		expect(barriers.length).toBeGreaterThan(1);
		expect((snapshot().context as unknown as { awaitDelivery: unknown }).awaitDelivery).toBe(true);
	});

	it("an abort while it waits at its start ends the run before any call, once the barrier is answered (as with awaitDelivery: true)", async () => {
		const { actor, errors, snapshot, scripted } = startOnly();
		actor.send({ type: "abort" });
		expect(snapshot().value).toEqual({ running: "run-starting" });
		actor.send({ type: "delivered", barrier: 1 });
		await idle(actor);
		expect(errors).toEqual([]);
		expect(scripted.calls).toHaveLength(0);
		expect(snapshot().context.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
	});
});

describe.each(interpreters)("a malformed input on %s", (_name, logic) => {
	it.each([
		["not an object", "a model", /^agentchart: the machine's input must be an object such as \{ model, tools, config: \{ streamFn \} \}, got "a model"/],
		["a transcript given as a string", { messages: "hello" }, /^agentchart: the machine's input: messages must be a list of messages, got "hello"/],
		["tools given as one tool", { tools: { name: "read" } }, /^agentchart: the machine's input: tools must be a list of tools/],
		["a queued message that is a string", { followUpQueue: ["later"] }, /^agentchart: the machine's input: followUpQueue\[0\]: expected a message object/],
		// A queued reply without its blocks was taken before, and failed the run it joined.
		["a queued reply without content", { steeringQueue: [{ role: "assistant" }] }, /^agentchart: the machine's input: steeringQueue\[0\]\.content: expected a list of content blocks/],
		["a steering mode of none", { steeringMode: "each" }, /^agentchart: the machine's input: steeringMode must be "all" or "one-at-a-time", got "each"/],
		["a tool execution mode of none", { config: { toolExecution: "wild" } }, /^agentchart: the machine's input: config.toolExecution must be "parallel", "sequential" or "streaming", got "wild"/],
		["a stream function given as a name", { config: { streamFn: "anthropic" } }, /^agentchart: the machine's input: config.streamFn must be a function, got "anthropic"/],
		["a run count below zero", { runs: -1 }, /^agentchart: the machine's input: runs must be a whole number of at least 0, got -1/],
		["a system prompt that is not text", { systemPrompt: ["be terse"] }, /^agentchart: the machine's input: systemPrompt must be a string/],
	] as const)("%s fails the actor at its start, naming the field (it used to run with it)", (_case, input, message) => {
		const scripted = createScriptedModel([{ content: "ok" }]);
		const actor = createActor(logic, { input: input as never });
		const errors: Error[] = [];
		actor.subscribe({ error: (error) => errors.push(error as Error) });
		stopped.push(actor);
		actor.start();
		actor.send({ type: "prompt", messages: [user("hi")] });
		expect(errors.map((error) => [error.name, error.message])).toEqual([["TypeError", expect.stringMatching(message)]]);
		expect(actor.getSnapshot().status).toBe("error");
		expect(scripted.calls).toHaveLength(0);
	});

	it("none at all, or a well-formed one, starts the actor as before", () => {
		for (const input of [undefined, {}, { messages: [user("before")], followUpQueue: [user("later")], steeringMode: "all", runs: 2, awaitDelivery: false, config: { toolExecution: "sequential" } }]) {
			const actor = createActor(logic, { input: input as never });
			stopped.push(actor);
			actor.start();
			expect(actor.getSnapshot().status).toBe("active");
		}
	});
});

describe.each(interpreters)("a setting given as undefined, on %s", (_name, logic) => {
	it("takes its default in the input", async () => {
		const { actor, errors, snapshot } = machineOn(logic, loose({ toolTimeoutMs: undefined, toolExecution: undefined, convertToLlm: undefined, streamOptions: undefined }));
		const config = snapshot().context.config;
		expect([config.toolTimeoutMs, config.toolExecution, typeof config.convertToLlm, config.streamOptions]).toEqual([180_000, "parallel", "function", {}]);
		actor.send({ type: "prompt", messages: [user("hi")] });
		await new Promise<void>((resolve) => actor.subscribe((state) => state.matches("idle") && resolve()));
		expect(errors).toEqual([]);
		expect(snapshot().context.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
	});

	it("takes its default in an update, and a hook given as undefined is unset", () => {
		const { actor, snapshot } = machineOn(logic, { toolTimeoutMs: 5, beforeToolCall: async () => undefined });
		actor.send({ type: "update", config: { toolTimeoutMs: undefined, abortGraceMs: undefined, beforeToolCall: undefined } });
		const config = snapshot().context.config;
		expect([config.toolTimeoutMs, config.abortGraceMs, config.beforeToolCall]).toEqual([180_000, 2_000, undefined]);
	});
});

describe("hydrateAgentSnapshot with a setting given as undefined", () => {
	it("takes its default", () => {
		const { actor } = machineOn(agentMachine, { toolTimeoutMs: 7 });
		const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
		const scripted = createScriptedModel([{ content: "ok" }]);
		const hydrated = hydrateAgentSnapshot(persisted, { tools: [], config: loose({ streamFn: scripted.streamFn, toolTimeoutMs: undefined, convertToLlm: undefined }) }) as unknown as Snap;
		expect([hydrated.context.config.toolTimeoutMs, typeof hydrated.context.config.convertToLlm]).toEqual([7, "function"]);
	});
});

describe("the Agent's settings and its machine", () => {
	it.each([
		["toolExecution", "wild", /^agent\.toolExecution must be "parallel", "sequential" or "streaming", got "wild"$/],
		["toolTimeoutMs", "5000", /^agent\.toolTimeoutMs must be a number of milliseconds, at least 0, got "5000"$/],
		["toolTimeoutMs", -1, /^agent\.toolTimeoutMs must be a number of milliseconds, at least 0, got -1$/],
		["streamIdleTimeoutMs", Number.NaN, /^agent\.streamIdleTimeoutMs must be a number of milliseconds, at least 0, got NaN$/],
		["maxReplyBytes", "8mb", /^agent\.maxReplyBytes must be a number of bytes, at least 0 \(0: no bound\), got "8mb"$/],
		["maxReplyBytes", -1, /^agent\.maxReplyBytes must be a number of bytes, at least 0 \(0: no bound\), got -1$/],
		["maxRetries", 1.5, /^agent\.maxRetries must be a whole number, at least 0, got 1\.5$/],
		["timeoutMs", Number.NaN, /^agent\.timeoutMs must be a number of milliseconds, at least 0, got NaN$/],
		["maxRetryDelayMs", -5, /^agent\.maxRetryDelayMs must be a number of milliseconds, at least 0, got -5$/],
		["streamFn", "anthropic", /^agent\.streamFn must be a function, got "anthropic"$/],
	] as const)("a run refuses agent.%s set to %j from JavaScript, naming it, pinned or not", async (field, value, message) => {
		for (const pinned of [false, true]) {
			const scripted = createScriptedModel([{ content: "one" }, { content: "two" }]);
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
			if (pinned) void agent.actor;
			const original = (agent as unknown as Record<string, unknown>)[field];
			(agent as unknown as Record<string, unknown>)[field] = value;
			await expect(agent.prompt("hi")).rejects.toThrow(message);
			expect([agent.state.messages.length, scripted.calls.length]).toEqual([0, 0]);
			// Mended, the agent runs as if nothing happened.
			(agent as unknown as Record<string, unknown>)[field] = original;
			await agent.prompt("hi");
			expect(agent.state.messages.map((entry) => entry.role)).toEqual(["user", "assistant"]);
		}
	});

	it("refuses a run, instead of waiting for ever, once its pinned machine failed; a restore from its snapshot goes on", async () => {
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await agent.prompt("first");
		// A malformed command sent to the handed-out actor fails it (see above).
		agent.actor.send({ type: "steer" } as never);
		expect(agent.actor.getSnapshot().status).toBe("error");
		await expect(agent.prompt("second")).rejects.toThrow(/^agentchart: this agent's machine \(agent\.actor\) stopped on an internal error and takes no more runs: agentchart: the machine's steer command: message: expected a message object/);
		const restored = Agent.restore(agent.snapshot(), { streamFn: scripted.streamFn });
		await restored.prompt("second");
		expect(restored.state.messages.map((entry) => entry.role)).toEqual(["user", "assistant", "user", "assistant"]);
	});
});
