/**
 * The bare agent machine (no facade): run with `createActor`, driven by events, observed via
 * emitted AgentEvents.
 */
import { createActor } from "xstate";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import type { AgentMachineEmitted } from "../../src/machines/types.js";
import { createScriptedModel, type ScriptedReply, text, thinking, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import { deferred, describeEvent, echoTool, expectWellFormedRun, user } from "./helpers.js";

function isAgentEvent(event: AgentMachineEmitted): event is AgentEvent {
	return !event.type.startsWith("agentchart.");
}

function startMachine(replies: ScriptedReply[]) {
	const scripted = createScriptedModel(replies);
	const log: string[] = [];
	const actor = createActor(agentMachine, {
		input: { model: scripted.model, tools: [echoTool(log)], config: { streamFn: scripted.streamFn } },
	});
	const events: AgentEvent[] = [];
	let ended = deferred();
	actor.on("*", (event) => {
		if (!isAgentEvent(event)) return;
		events.push(event);
		if (event.type === "agent_end") {
			ended.resolve();
		}
	});
	actor.start();
	const nextEnd = () => {
		const current = ended.promise;
		return current.then(() => {
			ended = deferred();
		});
	};
	return { actor, events, scripted, log, nextEnd };
}

const TOOL_ROUND_TRIP: ScriptedReply[] = [
	{ content: [thinking("plan"), text("Let me echo."), toolCall("echo", { value: "hi" }, "t1")] },
	{ content: "It said hi." },
];

describe("the bare agent machine", () => {
	it("runs a tool round trip and emits the same AgentEvent sequence as the Agent facade (its deltas through the chart)", async () => {
		const machine = startMachine(TOOL_ROUND_TRIP);
		const deltaEvents: string[] = [];
		machine.actor.system.inspect((event) => {
			if (event.type === "@xstate.event" && event.event.type === "stream.delta") deltaEvents.push(event.event.type);
		});
		const ended = machine.nextEnd();
		machine.actor.send({ type: "prompt", messages: [user("go")] });
		await ended;
		expect(machine.log).toEqual(["hi"]);
		// Nothing takes deltas beside the chart here: each one is a chart event, emitted as message_update.
		expect(deltaEvents.length).toBe(machine.events.filter((event) => event.type === "message_update").length);
		expect(deltaEvents.length).toBeGreaterThan(3);
		expectWellFormedRun(machine.events);
		expect(machine.actor.getSnapshot().value).toBe("idle");
		expect(machine.actor.getSnapshot().context.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);

		const scripted = createScriptedModel(TOOL_ROUND_TRIP);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [echoTool()] }, streamFn: scripted.streamFn });
		const facadeEvents: AgentEvent[] = [];
		agent.subscribe((event) => {
			facadeEvents.push(event);
		});
		await agent.prompt("go");
		expect(machine.events.map((e) => describeEvent(e, true))).toEqual(facadeEvents.map((e) => describeEvent(e, true)));
	});

	it("queues steering and follow-up events in context while idle and delivers them in the next run", async () => {
		const machine = startMachine([{ content: "one" }, { content: "two" }]);
		machine.actor.send({ type: "steer", message: user("S") });
		machine.actor.send({ type: "followUp", message: user("F") });
		expect(machine.actor.getSnapshot().context.steeringQueue).toHaveLength(1);
		expect(machine.actor.getSnapshot().context.followUpQueue).toHaveLength(1);
		const ended = machine.nextEnd();
		machine.actor.send({ type: "prompt", messages: [user("go")] });
		await ended;
		const context = machine.actor.getSnapshot().context;
		expect(context.steeringQueue).toEqual([]);
		expect(context.followUpQueue).toEqual([]);
		expect(machine.scripted.calls).toHaveLength(2);
	});

	it("continue from a user tail runs; from an assistant tail with empty queues it stays idle", async () => {
		const machine = startMachine([{ content: "reply" }]);
		machine.actor.send({ type: "update", state: { messages: [user("q")] } });
		const ended = machine.nextEnd();
		machine.actor.send({ type: "continue" });
		await ended;
		expect(machine.events.map((e) => e.type).filter((t) => t === "message_start" || t === "message_end")).toEqual(["message_start", "message_end"]);
		const before = machine.events.length;
		machine.actor.send({ type: "continue" });
		expect(machine.actor.getSnapshot().value).toBe("idle");
		expect(machine.events).toHaveLength(before);
	});

	it("abort while streaming ends the run with an aborted reply; dispose ends the machine", async () => {
		const machine = startMachine([{ content: "a long streamed reply", delayMs: 20 }]);
		const ended = machine.nextEnd();
		machine.actor.send({ type: "prompt", messages: [user("go")] });
		expect(machine.actor.getSnapshot().value).toEqual({ running: "streaming" });
		machine.actor.send({ type: "abort" });
		await ended;
		expect(machine.actor.getSnapshot().context.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "aborted" });
		machine.actor.send({ type: "dispose" });
		expect(machine.actor.getSnapshot().status).toBe("done");
		expect(machine.actor.getSnapshot().value).toBe("ended");
	});
});
