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
});
