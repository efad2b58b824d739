/**
 * The stream actor reads a call's stream with `then` callbacks instead of a `for await` loop
 * (src/actors/stream-actor.ts, `readStream`). These pin down the parts of `for await` it
 * has to do by hand: closing the iterator when the read ends early (a generator's `finally`
 * runs), reading a stream that is only a sync iterable, and failing the call, as an error
 * message, on what `for await` would throw. The microtask timing of the read is compared with
 * pi's own `for await` by test/agent/pi-timing.property.test.ts.
 */
import { createActor, waitFor } from "xstate";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import type { AssistantMessage } from "../../src/types/messages.js";
import type { AssistantMessageEvent, AssistantMessageEventStreamLike, StreamFn } from "../../src/types/stream.js";
import { assistant, deferred, sleep, textOf, user } from "./helpers.js";

function lastAssistant(agent: Agent): AssistantMessage | undefined {
	return agent.state.messages.filter((message): message is AssistantMessage => message.role === "assistant").at(-1);
}

/** A reply of `text` streamed as a start, one delta per character and a done. */
function replyEvents(text: string): AssistantMessageEvent[] {
	const events: AssistantMessageEvent[] = [{ type: "start", partial: assistant("") }];
	let sofar = "";
	for (const char of text) {
		sofar += char;
		events.push({ type: "text_delta", contentIndex: 0, delta: char, partial: assistant(sofar) });
	}
	events.push({ type: "done", reason: "stop", message: assistant(text) });
	return events;
}

/**
 * A stream function whose stream is an async generator over a reply of `text`, with `result` as
 * its final message. `log` records "closed" when the generator is closed (its `finally`), and
 * "read past done" if it is read on after `done`.
 */
function generatorStreamFn(text: string, log: string[], result: () => Promise<AssistantMessage>): StreamFn {
	return () => ({
		async *[Symbol.asyncIterator]() {
			try {
				yield* replyEvents(text);
				log.push("read past done");
			} finally {
				log.push("closed");
			}
		},
		result,
	});
}

function agentOn(streamFn: StreamFn, options: { streamIdleTimeoutMs?: number } = {}): { agent: Agent; deltas: string[] } {
	const scripted = createScriptedModel([]);
	const agent = new Agent({ initialState: { model: scripted.model }, streamFn, ...options });
	const deltas: string[] = [];
	agent.subscribe((event: AgentEvent) => {
		if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") deltas.push(event.assistantMessageEvent.delta);
	});
	return { agent, deltas };
}

describe("reading a call's stream", () => {
	it("closes the stream's iterator once done is read, so a generator's finally runs", async () => {
		const log: string[] = [];
		const { agent, deltas } = agentOn(generatorStreamFn("hi", log, async () => assistant("hi")));
		await agent.prompt("go");
		expect(deltas).toEqual(["h", "i"]);
		expect(textOf(lastAssistant(agent))).toBe("hi");
		expect(log).toEqual(["closed"]);
	});

	it("closes the iterator of a stream that goes on after its call was given up (a stall), without relaying what came late", async () => {
		const log: string[] = [];
		const late = deferred();
		const streamFn: StreamFn = () => ({
			async *[Symbol.asyncIterator]() {
				try {
					yield { type: "start", partial: assistant("") };
					await late.promise;
					yield { type: "text_delta", contentIndex: 0, delta: "late", partial: assistant("late") };
					log.push("read on after the late event");
				} finally {
					log.push("closed");
				}
			},
			result: () => new Promise<AssistantMessage>(() => {}),
		});
		const { agent, deltas } = agentOn(streamFn, { streamIdleTimeoutMs: 20 });
		await agent.prompt("go");
		expect(lastAssistant(agent)?.errorMessage).toMatch(/stalled|sent nothing/i);
		late.resolve();
		await sleep(5);
		expect(log).toEqual(["closed"]);
		expect(deltas).toEqual([]);
	});

	// `for await` falls back to a sync iterator when the async one is absent (undefined or null).
	it.each([undefined, null])("reads a stream that is only a sync iterable (async iterator %s), and closes it, as for await does", async (asyncIterator) => {
		const log: string[] = [];
		const events = replyEvents("ok");
		const streamFn: StreamFn = () =>
			({
				[Symbol.asyncIterator]: asyncIterator,
				*[Symbol.iterator]() {
					try {
						yield* events;
						log.push("read past done");
					} finally {
						log.push("closed");
					}
				},
				result: async () => assistant("ok"),
			}) as unknown as AssistantMessageEventStreamLike;
		const { agent, deltas } = agentOn(streamFn);
		await agent.prompt("go");
		expect(deltas).toEqual(["o", "k"]);
		expect(textOf(lastAssistant(agent))).toBe("ok");
		expect(lastAssistant(agent)?.stopReason).toBe("stop");
		expect(log).toEqual(["closed"]);
	});

	it("ends the call as an error when a sync iterable's next() throws, keeping what had streamed", async () => {
		const events = replyEvents("ab").slice(0, 2);
		let index = 0;
		const streamFn: StreamFn = () =>
			({
				[Symbol.iterator]: () => ({
					next: () => {
						if (index < events.length) return { value: events[index++], done: false };
						throw new Error("sync source broke");
					},
				}),
				result: async () => assistant("ab"),
			}) as unknown as AssistantMessageEventStreamLike;
		const { agent, deltas } = agentOn(streamFn);
		await agent.prompt("go");
		expect(deltas).toEqual(["a"]);
		expect(lastAssistant(agent)).toMatchObject({ stopReason: "error", errorMessage: "sync source broke" });
		expect(textOf(lastAssistant(agent))).toBe("a");
	});

	it("ends the call as an error when the stream is not iterable at all", async () => {
		const { agent } = agentOn(() => ({ result: async () => assistant("x") }) as unknown as AssistantMessageEventStreamLike);
		await agent.prompt("go");
		expect(lastAssistant(agent)).toMatchObject({ stopReason: "error", errorMessage: expect.stringMatching(/not async iterable/) });
	});

	it.each([7, null])("ends the call as an error when the iterator's step is %s, not an object, keeping what had streamed", async (step) => {
		const events = replyEvents("ab").slice(0, 2);
		let index = 0;
		const streamFn: StreamFn = () => ({
			[Symbol.asyncIterator]: () => ({
				next: () => Promise.resolve((index < events.length ? { value: events[index++], done: false } : step) as IteratorResult<AssistantMessageEvent>),
			}),
			result: async () => assistant("ab"),
		});
		const { agent, deltas } = agentOn(streamFn);
		await agent.prompt("go");
		expect(deltas).toEqual(["a"]);
		expect(lastAssistant(agent)).toMatchObject({ stopReason: "error", errorMessage: `Iterator result ${String(step)} is not an object` });
		expect(textOf(lastAssistant(agent))).toBe("a");
	});

	it("ends the call as an error when result() rejects after done, and closes the iterator", async () => {
		const log: string[] = [];
		const { agent } = agentOn(generatorStreamFn("x", log, () => Promise.reject(new Error("no final message"))));
		await agent.prompt("go");
		expect(lastAssistant(agent)).toMatchObject({ stopReason: "error", errorMessage: "no final message" });
		expect(log).toEqual(["closed"]);
	});

	it("ends the call as an error when next() throws, without closing the iterator (as for await)", async () => {
		let returned = false;
		const streamFn: StreamFn = () => ({
			[Symbol.asyncIterator]: () => ({
				next: () => {
					throw new Error("socket gone");
				},
				return: () => {
					returned = true;
					return Promise.resolve({ value: undefined, done: true as const });
				},
			}),
			result: async () => assistant(""),
		});
		const { agent } = agentOn(streamFn);
		await agent.prompt("go");
		expect(lastAssistant(agent)).toMatchObject({ stopReason: "error", errorMessage: "socket gone" });
		expect(returned).toBe(false);
	});

	it("ends the call as an error when result() throws instead of answering a promise, and closes the iterator", async () => {
		const log: string[] = [];
		const { agent } = agentOn(
			generatorStreamFn("x", log, () => {
				throw new Error("no result at all");
			}),
		);
		await agent.prompt("go");
		expect(lastAssistant(agent)).toMatchObject({ stopReason: "error", errorMessage: "no result at all" });
		expect(log).toEqual(["closed"]);
	});

	// The reader's own step failing (here the consumer's deliveryPending, which the facade never
	// lets throw) ends the call as an error and closes the iterator, as a body that throws
	// inside `for await` does.
	it("ends the call as an error, closing the iterator, when relaying an event throws", async () => {
		const log: string[] = [];
		const scripted = createScriptedModel([]);
		const streamFn = generatorStreamFn("x", log, async () => assistant("x"));
		const deliveryPending = () => {
			throw new Error("consumer broke");
		};
		const actor = createActor(agentMachine, { input: { model: scripted.model, config: { streamFn, deliveryPending, streamIdleTimeoutMs: 0 } } }).start();
		actor.send({ type: "prompt", messages: [user("go")] });
		const snapshot = await waitFor(actor, (state) => state.matches("idle"), { timeout: 1000 });
		const last = snapshot.context.messages.filter((message): message is AssistantMessage => message.role === "assistant").at(-1);
		expect(last).toMatchObject({ stopReason: "error", errorMessage: "consumer broke" });
		expect(log).toEqual(["closed"]);
		actor.stop();
	});
});
