/**
 * Token deltas reach `agent.actor.on(...)` listeners as well as `agent.subscribe` listeners. The
 * facade takes deltas from the stream itself, and a machine handed out (`agent.actor`) also gets
 * them through its emitter, which the facade does not listen to for deltas; a machine handed out
 * in the middle of a run switches how the facade listens, so the switch must lose and repeat
 * nothing.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";

const REPLY = "abcdefghijklmnopqrstuvwxyz".repeat(4);

/** The text deltas of the message_update events, in order. */
function deltasOf(events: readonly { type: string; assistantMessageEvent?: { type: string; delta?: string } }[]): string[] {
	return events.flatMap((event) => (event.type === "message_update" && event.assistantMessageEvent?.type === "text_delta" ? [event.assistantMessageEvent.delta ?? ""] : []));
}

function agentWithReply() {
	const scripted = createScriptedModel([{ content: REPLY }], { chunkSize: 2 });
	return new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
}

describe("deltas and agent.actor.on listeners", () => {
	it("an actor.on listener gets every delta, as agent.subscribe does, and neither gets one twice", async () => {
		const agent = agentWithReply();
		const facade: AgentEvent[] = [];
		agent.subscribe((event) => {
			facade.push(event);
		});
		const typed: AgentEvent[] = [];
		const wildcard: AgentEvent[] = [];
		agent.actor.on("message_update", (event) => typed.push(event));
		agent.actor.on("*", (event) => {
			if (event.type === "message_update") wildcard.push(event);
		});
		await agent.prompt("go");
		const expected = REPLY.match(/../g);
		expect(deltasOf(facade)).toEqual(expected);
		expect(deltasOf(typed)).toEqual(expected);
		expect(deltasOf(wildcard)).toEqual(expected);
	});

	it("a listener that joins mid-stream gets the rest, and one that leaves gets no more; the facade gets each delta once", async () => {
		const agent = agentWithReply();
		const actor = agent.actor;
		const facade: AgentEvent[] = [];
		const late: AgentEvent[] = [];
		const early: AgentEvent[] = [];
		let joined: { unsubscribe(): void } | undefined;
		const leaving = actor.on("message_update", (event) => {
			early.push(event);
			if (deltasOf(early).length === 10) leaving.unsubscribe();
		});
		agent.subscribe((event) => {
			facade.push(event);
			if (deltasOf(facade).length === 20 && !joined) joined = actor.on("message_update", (update) => late.push(update));
		});
		await agent.prompt("go");
		const expected = REPLY.match(/../g) ?? [];
		expect(deltasOf(facade)).toEqual(expected);
		expect(deltasOf(early)).toEqual(expected.slice(0, 10));
		// Joined while the 20th delta was being delivered: every later one, in order.
		expect(deltasOf(late)).toEqual(expected.slice(expected.length - deltasOf(late).length));
		expect(deltasOf(late).length).toBeGreaterThanOrEqual(expected.length - 21);
	});

	it("an actor handed out in the middle of a run: the facade still gets every event once, and the actor's listeners the rest", async () => {
		// The same run without the actor, for what the facade must see.
		const reference = agentWithReply();
		const expectedEvents: string[] = [];
		reference.subscribe((event) => {
			expectedEvents.push(event.type === "message_update" ? `delta ${deltasOf([event]).join("")}` : event.type);
		});
		await reference.prompt("go");

		const agent = agentWithReply();
		const facade: string[] = [];
		const fromActor: AgentEvent[] = [];
		let deltas = 0;
		agent.subscribe((event) => {
			facade.push(event.type === "message_update" ? `delta ${deltasOf([event]).join("")}` : event.type);
			if (event.type === "message_update" && ++deltas === 10) agent.actor.on("*", (emitted) => fromActor.push(emitted as AgentEvent));
		});
		await agent.prompt("go");
		expect(facade).toEqual(expectedEvents);
		const expected = REPLY.match(/../g) ?? [];
		// Handed out while the 10th delta was delivered: every later delta, then the run's end.
		expect(deltasOf(fromActor)).toEqual(expected.slice(expected.length - deltasOf(fromActor).length));
		expect(deltasOf(fromActor).length).toBeGreaterThanOrEqual(expected.length - 11);
		expect(fromActor.map((event) => event.type)).toContain("agent_end");
	});


	// Found by the agent property (streaming mode, seed 673850443): an agent listener that disposed
	// the agent on a delta stopped the machine before the machine took that delta to its own listeners.
	it("an agent listener that disposes the agent on a delta does not keep that delta from the actor.on listeners", async () => {
		const agent = agentWithReply();
		const facade: AgentEvent[] = [];
		const actorDeltas: AgentEvent[] = [];
		agent.actor.on("message_update", (event) => actorDeltas.push(event));
		agent.subscribe((event) => {
			facade.push(event);
			if (deltasOf(facade).length === 5) agent.dispose();
		});
		await agent.prompt("go");
		expect(deltasOf(facade)).toHaveLength(5);
		expect(deltasOf(actorDeltas)).toEqual(deltasOf(facade));
	});
});
