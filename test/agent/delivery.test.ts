import { describe, expect, it } from "vitest";
import { ListenerDelivery } from "../../src/facade/delivery.js";
import type { AgentEvent } from "../../src/types/agent.js";

function delivery(reduce: (event: AgentEvent) => void = () => {}) {
	const failures: string[] = [];
	const state = { streamingMessage: undefined as unknown };
	const host = { reduce, listenerFailed: (message: string) => void failures.push(message), delivered: () => {} };
	return { delivery: new ListenerDelivery(host, new AbortController().signal, state), failures, state };
}

describe("ListenerDelivery", () => {
	it("delivers events in order to a slow listener, one at a time", async () => {
		const { delivery: d } = delivery();
		const seen: string[] = [];
		let busy = false;
		d.add(async (event) => {
			expect(busy).toBe(false);
			busy = true;
			await new Promise((resolve) => setTimeout(resolve, 1));
			seen.push(event.type);
			busy = false;
		});
		d.event({ type: "agent_start" });
		d.event({ type: "turn_start" });
		d.after(() => seen.push("step"));
		await d.event({ type: "agent_end", messages: [] });
		expect(seen).toEqual(["agent_start", "turn_start", "step", "agent_end"]);
		expect(d.pending()).toBeUndefined();
	});

	// Every later step waits on the one before: a rejected step would stop the queue for good.
	it("reports a state update that throws, still delivers that event, and goes on with the queue", async () => {
		let throws = true;
		const { delivery: d, failures } = delivery(() => {
			if (throws) {
				throws = false;
				throw new Error("state update broke");
			}
		});
		const seen: string[] = [];
		d.add(async (event) => {
			await Promise.resolve();
			seen.push(event.type);
		});
		const first = d.event({ type: "agent_start" });
		d.event({ type: "turn_start" });
		await expect(first).resolves.toBeUndefined();
		await d.pending();
		expect(failures).toEqual(["state update broke"]);
		expect(seen).toEqual(["agent_start", "turn_start"]);
		expect(d.pending()).toBeUndefined();
	});

	it("reports a queued step that throws and goes on with the queue", async () => {
		const { delivery: d, failures } = delivery();
		const seen: string[] = [];
		d.add(async (event) => {
			await Promise.resolve();
			seen.push(event.type);
		});
		d.event({ type: "agent_start" });
		d.after(() => {
			throw new Error("step broke");
		});
		d.event({ type: "turn_start" });
		await d.pending();
		expect(failures).toEqual(["step broke"]);
		expect(seen).toEqual(["agent_start", "turn_start"]);
		expect(d.pending()).toBeUndefined();
	});

	it("keeps a token delta's message as the streaming message, before its listeners run", async () => {
		const { delivery: d, state } = delivery(() => {
			throw new Error("a delta is not reduced by the host");
		});
		const message = { role: "assistant" } as never;
		let seenStreaming: unknown;
		d.add(() => {
			seenStreaming = state.streamingMessage;
		});
		await d.delta({ type: "message_update", message, assistantMessageEvent: { type: "text_delta" } as never });
		expect(seenStreaming).toBe(message);
	});

	// The sole listener's call returns nothing, so the delivery ends a microtask later without an
	// async function; a listener subscribed within that microtask (here by a microtask the
	// listener queued, so it runs first) is in the set before the delivery ends, as in pi's
	// live iteration, and must get the event before the next one goes out.
	it("delivers an event to a listener subscribed in the microtask after the sole listener returned, before the next event", async () => {
		const { delivery: d, failures } = delivery();
		const seen: string[] = [];
		const late = (event: AgentEvent) => {
			seen.push(`late:${event.type}`);
		};
		d.add((event) => {
			seen.push(`first:${event.type}`);
			if (event.type === "agent_start") queueMicrotask(() => d.add(late));
		});
		d.event({ type: "agent_start" });
		d.event({ type: "turn_start" });
		await d.pending();
		expect(seen).toEqual(["first:agent_start", "late:agent_start", "first:turn_start", "late:turn_start"]);
		expect(failures).toEqual([]);
		expect(d.pending()).toBeUndefined();
	});

	it("reports a sole listener that throws or rejects, and ends each delivery", async () => {
		const { delivery: d, failures } = delivery();
		d.add((event) => {
			if (event.type === "agent_start") throw new Error("threw");
			if (event.type === "turn_start") return Promise.reject(new Error("rejected"));
		});
		d.event({ type: "agent_start" });
		d.event({ type: "turn_start" });
		await d.pending();
		expect(failures).toEqual(["threw", "rejected"]);
		expect(d.pending()).toBeUndefined();
	});

	// pi's Agent delivers an event by awaiting each listener in turn (`await listener(event,
	// signal)` in an async function). The delivery reaches the same microtask by other means
	// when a lone listener returns nothing: this holds it to the reference for every kind of
	// answer, deterministically (the pi-timing property covers the same ground with random runs).
	const answerKinds: [string, (() => unknown)[]][] = [
		["returns nothing", [() => undefined]],
		["returns a number", [() => 42]],
		["returns an object", [() => ({ seen: true })]],
		["returns a thenable", [() => ({ then: (resolve: () => void) => resolve() })]],
		["returns null", [() => null]],
		["returns a function", [() => () => undefined]],
		["returns a function that is a thenable", [() => Object.assign(() => undefined, { then: (resolve: () => void) => resolve() })]],
		["returns a resolved promise", [() => Promise.resolve()]],
		["throws", [() => {
			throw new Error("threw");
		}]],
		["rejects", [() => Promise.reject(new Error("rejected"))]],
		["two listeners, both returning nothing", [() => undefined, () => undefined]],
		["two listeners, the first a thenable", [() => ({ then: (resolve: () => void) => resolve() }), () => undefined]],
		// Nobody listens: the step ends at once, with nothing to await.
		["is not there (nobody listens)", []],
	];
	it.each(answerKinds)("settles an event at the microtask pi's awaiting loop does, when a listener %s", async (_kind, answers) => {
		const reference = async (listeners: readonly (() => unknown)[]): Promise<void> => {
			for (const listener of listeners) {
				try {
					await listener();
				} catch {}
			}
		};
		const { delivery: d } = delivery();
		for (const answer of answers) d.add(() => answer() as void);
		const ours = await microtasksUntilSettled(() => d.event({ type: "agent_start" }) ?? Promise.resolve());
		const pis = await microtasksUntilSettled(() => reference(answers));
		expect(ours).toBe(pis);
	});

	it("ends an event's step at once when nobody listens, never subscribed or unsubscribed since, also queued behind a step in flight", async () => {
		const { delivery: d, state } = delivery();
		expect(d.event({ type: "agent_start" })).toBeUndefined();
		expect(d.pending()).toBeUndefined();
		const listener = () => undefined;
		d.add(listener);
		d.remove(listener);
		expect(d.event({ type: "turn_start" })).toBeUndefined();
		// Behind a step in flight: it runs when that one is over, and the queue then is empty.
		let release = () => {};
		d.hold(() => new Promise<void>((resolve) => (release = resolve)));
		const message = { role: "assistant" } as unknown as Extract<AgentEvent, { type: "message_update" }>["message"];
		d.delta({ type: "message_update", message, assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: "x", partial: message } } as Extract<AgentEvent, { type: "message_update" }>);
		expect(state.streamingMessage).toBeUndefined();
		const queued = d.pending();
		expect(queued).toBeDefined();
		release();
		await queued;
		expect(state.streamingMessage).toBe(message);
		expect(d.pending()).toBeUndefined();
	});

	// A listener subscribed while the lone one runs joins the event in pi's live iteration of its
	// set, and is awaited in the same loop: the event settles when the newcomer's await does.
	it("settles an event at pi's microtask when the lone listener subscribes another while it runs", async () => {
		const { delivery: d } = delivery();
		const late = () => undefined;
		d.add(() => {
			d.add(late);
		});
		const ours = await microtasksUntilSettled(() => d.event({ type: "agent_start" }) ?? Promise.resolve());
		const set = new Set<() => unknown>();
		const lateOfPi = () => undefined;
		set.add(() => {
			set.add(lateOfPi);
		});
		const pis = await microtasksUntilSettled(async () => {
			for (const listener of set) await listener();
		});
		expect(ours).toBe(pis);
	});
});

/** Microtasks from a call until the promise it returns has settled (counted by a chain of awaits). */
async function microtasksUntilSettled(start: () => Promise<void>): Promise<number> {
	let settled = false;
	start().then(
		() => (settled = true),
		() => (settled = true),
	);
	let count = 0;
	while (!settled) {
		await null;
		count++;
	}
	return count;
}
