/**
 * `agent.sessionId` is a public field (pi's: providers use it for caching), and with a store it
 * also names the stored session. The store's session is claimed when the agent is made, so a
 * field changed afterwards was stored under the first name while `snapshot()` named the second:
 * a snapshot that restores as another session than the one it was stored in. Now a run refuses
 * to start under another name, and a snapshot names the session it is stored in. Found by reading
 * the field's JSDoc against the code (2026-12-06).
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createMemoryStore } from "../../src/durable/store.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { Context, SimpleStreamOptions } from "../../src/types/model.js";
import type { StreamFn } from "../../src/types/stream.js";

describe("agent.sessionId with a store", () => {
	it("refuses a run under another name, stores nothing there, and snapshots name the stored session", async () => {
		const store = createMemoryStore();
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, store, sessionId: "s1" });
		await agent.prompt("first");
		agent.sessionId = "s2";
		await expect(agent.prompt("second")).rejects.toThrow(
			new TypeError('agent.sessionId is "s2", but this agent writes the stored session "s1": with a store, the session is fixed when the agent is made (open another with Agent.load)'),
		);
		await expect(agent.continue()).rejects.toThrow(TypeError);
		expect(agent.snapshot().sessionId).toBe("s1");
		await agent.save();
		expect(store.sessions()).toEqual(["s1"]);
		expect((await store.load("s1"))?.snapshot?.sessionId).toBe("s1");
		// Set back, the agent goes on in its session.
		agent.sessionId = "s1";
		await agent.prompt("second");
		expect(agent.state.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
	});

	it("without a store, the field is the provider's only, and may change between runs", async () => {
		const seen: (string | undefined)[] = [];
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }]);
		const streamFn: StreamFn = (model, context: Context, options?: SimpleStreamOptions) => {
			seen.push(options?.sessionId);
			return scripted.streamFn(model, context, options);
		};
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn, sessionId: "s1" });
		await agent.prompt("first");
		agent.sessionId = "s2";
		await agent.prompt("second");
		expect(seen).toEqual(["s1", "s2"]);
		expect(agent.snapshot().sessionId).toBe("s2");
	});
});
