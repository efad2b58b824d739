/**
 * The agent machine embedded in a user's XState machine, the parent persisted as JSON
 * (`getPersistedSnapshot()`) and restored (`createActor(parent, { snapshot })`):
 * - a tool call the snapshot caught running is not run again unless its tool is replay-safe
 *   (the bare machine keeps no journal: nothing says whether the call took effect), as with an
 *   `Agent`; the model is told it was interrupted;
 * - an agent restored without `hydrateAgentSnapshot` fails as it starts, with an error that says
 *   so (the parent's `onError` gets it), instead of failing later with a TypeError that names
 *   nothing, or answering its next prompt with an error reply.
 */
import { Type } from "typebox";
import { type AnyActorRef, assign, createActor, sendTo, setup, waitFor } from "xstate";
import { afterEach, describe, expect, it } from "vitest";
import { hydrateAgentSnapshot } from "../../src/machine.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import { agentLogic } from "../../src/machines/agent-logic.js";
import type { PersistedAgentMachine } from "../../src/durable/snapshot.js";
import type { AgentMachineInput } from "../../src/machines/types.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentTool } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";

/** A tool whose first run lasts until its signal aborts (the parent stops); later runs end at once. It counts its runs. */
function holdingTool(name: string, replay?: "safe") {
	const tool = {
		runs: 0,
		definition: {
			name,
			label: name,
			description: "Takes a while.",
			parameters: Type.Object({}),
			...(replay ? { replay } : {}),
			execute: (_id: string, _args: unknown, signal?: AbortSignal) => {
				tool.runs++;
				const result = { content: [{ type: "text" as const, text: `${name} done` }], details: undefined };
				if (tool.runs > 1) return Promise.resolve(result);
				return new Promise<typeof result>((_resolve, reject) => signal?.addEventListener("abort", () => reject(new Error("aborted"))));
			},
		} satisfies AgentTool,
	};
	return tool;
}

/** A workflow that invokes the agent while `open`, prompts it on `ask`, and records a failure. */
function workflowAround(agent: AgentMachineInput) {
	return setup({
		types: { context: {} as { failure?: string }, events: {} as { type: "ask" } },
		actors: { agent: agentMachine },
	}).createMachine({
		context: {},
		initial: "open",
		states: {
			open: {
				invoke: {
					src: "agent",
					id: "agent",
					systemId: "agent",
					input: agent,
					onError: { target: "failed", actions: assign({ failure: ({ event }) => String((event.error as Error | undefined)?.message ?? event.error) }) },
				},
				on: { ask: { actions: sendTo("agent", { type: "prompt", messages: [{ role: "user", content: "go", timestamp: 1 }] }) } },
			},
			failed: {},
		},
	});
}

type PersistedParent = { children: { agent: { snapshot: PersistedAgentMachine } } };

const started: { stop(): void }[] = [];
afterEach(() => {
	for (const actor of started.splice(0)) actor.stop();
});

function start<T extends { start(): T; stop(): void }>(actor: T): T {
	started.push(actor);
	return actor.start();
}

function agentIn(parent: { system: { get(id: string): AnyActorRef | undefined } }): AnyActorRef {
	const agent = parent.system.get("agent");
	if (!agent) throw new Error("no agent child");
	return agent;
}

function rolesAndTexts(messages: readonly AgentMessage[]): string[] {
	return messages.map((message) => {
		const content = "content" in message ? message.content : [];
		const text = typeof content === "string" ? content : content.map((block) => ("text" in block ? block.text : block.type)).join("");
		return `${message.role}: ${text}`;
	});
}

/** The parent persisted as JSON while its agent's tool call runs. */
async function persistedWhileToolRuns(tool: AgentTool) {
	const first = createScriptedModel([{ content: [toolCall(tool.name, {}, "call-1")] }]);
	const parent = start(createActor(workflowAround({ model: first.model, tools: [tool], config: { streamFn: first.streamFn } })));
	parent.send({ type: "ask" });
	await waitFor(agentIn(parent), (snapshot) => snapshot.matches({ running: "tool-executing" }));
	const persisted = JSON.parse(JSON.stringify(parent.getPersistedSnapshot())) as PersistedParent;
	parent.stop();
	return persisted;
}

describe("a parent persisted while its agent's tool call runs, restored", () => {
	it("answers a call that is not replay-safe as interrupted, without running it again", async () => {
		const deploy = holdingTool("deploy");
		const persisted = await persistedWhileToolRuns(deploy.definition);
		expect(deploy.runs).toBe(1);

		const second = createScriptedModel([{ content: "Noted." }]);
		persisted.children.agent.snapshot = hydrateAgentSnapshot(persisted.children.agent.snapshot, { tools: [deploy.definition], config: { streamFn: second.streamFn } }) as never;
		const restored = start(createActor(workflowAround({ model: second.model }), { snapshot: persisted as never }));
		const agent = agentIn(restored);
		agent.send({ type: "agentchart.resumed" });
		const idle = await waitFor(agent, (snapshot) => snapshot.matches("idle"));

		expect(deploy.runs).toBe(1);
		expect(rolesAndTexts(idle.context.messages)).toEqual([
			"user: go",
			"assistant: toolCall",
			'toolResult: Tool "deploy" was interrupted by a restart and not run again (it is not marked replay: "safe"); it may or may not have taken effect.',
			"assistant: Noted.",
		]);
	});

	it("runs a replay-safe call again", async () => {
		const lookup = holdingTool("lookup", "safe");
		const persisted = await persistedWhileToolRuns(lookup.definition);

		const second = createScriptedModel([{ content: "Found it." }]);
		persisted.children.agent.snapshot = hydrateAgentSnapshot(persisted.children.agent.snapshot, { tools: [lookup.definition], config: { streamFn: second.streamFn } }) as never;
		const restored = start(createActor(workflowAround({ model: second.model }), { snapshot: persisted as never }));
		const agent = agentIn(restored);
		agent.send({ type: "agentchart.resumed" });
		const idle = await waitFor(agent, (snapshot) => snapshot.matches("idle"));

		expect(lookup.runs).toBe(2);
		expect(rolesAndTexts(idle.context.messages)).toEqual(["user: go", "assistant: toolCall", "toolResult: lookup done", "assistant: Found it."]);
	});

	it("answers it the same on the bare machine restored alone", async () => {
		const deploy = holdingTool("deploy");
		const first = createScriptedModel([{ content: [toolCall("deploy", {}, "call-1")] }]);
		const actor = start(createActor(agentMachine, { input: { model: first.model, tools: [deploy.definition], config: { streamFn: first.streamFn } } }));
		actor.send({ type: "prompt", messages: [{ role: "user", content: "go", timestamp: 1 }] });
		await waitFor(actor, (snapshot) => snapshot.matches({ running: "tool-executing" }));
		const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot())) as PersistedAgentMachine;
		actor.stop();

		const second = createScriptedModel([{ content: "Noted." }]);
		const restored = start(createActor(agentMachine, { snapshot: hydrateAgentSnapshot(persisted, { tools: [deploy.definition], config: { streamFn: second.streamFn } }) as never }));
		restored.send({ type: "agentchart.resumed" });
		const idle = await waitFor(restored, (snapshot) => snapshot.matches("idle"));

		expect(deploy.runs).toBe(1);
		expect(rolesAndTexts(idle.context.messages)[2]).toMatch(/^toolResult: Tool "deploy" was interrupted by a restart and not run again/);
	});
});

describe("the bare machine's input", () => {
	it("is optional, as every field of it is: a machine created without one starts idle", () => {
		// Type-level too: `createActor(agentMachine)` and `createActor(agentMachine, { snapshot })`
		// (restores below) compile without an input.
		const actor = start(createActor(agentMachine));
		expect(actor.getSnapshot().status).toBe("active");
		expect(actor.getSnapshot().value).toBe("idle");
		expect(actor.getSnapshot().context.messages).toEqual([]);
	});
});

describe("a parent restored without hydrating its agent's snapshot", () => {
	const HYDRATE = /^agentchart: the agent machine has no functions .*hydrateAgentSnapshot\(snapshot, \{ tools, config: \{ streamFn \} \}\)/;

	it.each([
		["idle", "idle"],
		["streaming", { running: "streaming" }],
		["running a tool", { running: "tool-executing" }],
	] as const)("fails the agent at once, naming hydrateAgentSnapshot, when it was persisted %s", async (_when, state) => {
		const deploy = holdingTool("deploy");
		const first = createScriptedModel([{ content: [toolCall("deploy", {}, "call-1")], delayMs: 5, chunkSize: 1 }]);
		const input: AgentMachineInput = { model: first.model, tools: [deploy.definition], config: { streamFn: first.streamFn } };
		const parent = start(createActor(workflowAround(input)));
		if (state !== "idle") parent.send({ type: "ask" });
		await waitFor(agentIn(parent), (snapshot) => snapshot.matches(state));
		const persisted = JSON.parse(JSON.stringify(parent.getPersistedSnapshot())) as PersistedParent;
		parent.stop();
		const effects = { toolRuns: deploy.runs, modelCalls: first.calls.length };

		const restored = start(createActor(workflowAround(input), { snapshot: persisted as never }));
		const after = restored.getSnapshot();
		expect(after.value).toBe("failed");
		expect(after.context.failure).toMatch(HYDRATE);
		// Nothing ran on the restored agent's behalf.
		expect({ toolRuns: deploy.runs, modelCalls: first.calls.length }).toEqual(effects);
	});

	it.each([
		["the bare machine restored alone", () => agentMachine],
		["a machine made with agentMachine.provide(...)", () => agentMachine.provide({ actions: { emitRunEndCheckpoint: () => undefined } }).provide({})],
		// An agent's own logic: agentchart's interpreter starts the chart without XState's start.
		["the chart on agentchart's interpreter (what an Agent runs)", () => agentLogic as unknown as typeof agentMachine],
	] as const)("fails %s the same way", async (_which, machineOf) => {
		const machine = machineOf();
		const scripted = createScriptedModel([{ content: "hi" }]);
		const actor = start(createActor(machine, { input: { model: scripted.model, config: { streamFn: scripted.streamFn } } }));
		const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot())) as PersistedAgentMachine;
		actor.stop();
		const errors: unknown[] = [];
		const restored = createActor(machine, { snapshot: persisted as never });
		restored.subscribe({ error: (error) => errors.push(error) });
		start(restored);
		expect(restored.getSnapshot().status).toBe("error");
		expect(errors.map((error) => (error as Error).message)).toEqual([expect.stringMatching(HYDRATE)]);
	});

	it.each([
		["no context", {}],
		["a context without its config", { context: {} }],
	])("fails a bare machine restored from a hand-made snapshot with %s the same way, not with a TypeError", (_what, fields) => {
		const errors: unknown[] = [];
		const restored = createActor(agentMachine, { snapshot: { status: "active", value: "idle", children: {}, ...fields } as never });
		restored.subscribe({ error: (error) => errors.push(error) });
		start(restored);
		expect(errors.map((error) => (error as Error).message)).toEqual([expect.stringMatching(HYDRATE)]);
	});
});
