/**
 * What a differential probe against pi 0.73.1 found (2026-12-07, round 6) in the `Agent`'s own
 * behaviour, each test failing before its fix (the order of parallel calls' ends after progress is
 * in differential.test.ts, T2b, and in the timing property):
 * - a stream function whose stream has no `result()` ended the run with
 *   `this.stream.result is not a function`, a name of the engine's own fields.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AssistantMessage } from "../../src/types/messages.js";
import type { StreamFn } from "../../src/types/stream.js";
import { emptyUsage } from "../../src/types/content.js";

describe("a stream without result()", () => {
	it("ends the run with an error that says what the stream lacks, not an internal field name", async () => {
		const { model } = createScriptedModel([]);
		const reply = (text: string): AssistantMessage => ({ role: "assistant", content: text ? [{ type: "text", text }] : [], api: model.api, provider: model.provider, model: model.id, usage: emptyUsage(), stopReason: "stop", timestamp: 0 });
		// An async generator: iterable as pi-ai's stream is, without its result().
		const streamFn = (() =>
			(async function* () {
				yield { type: "start", partial: reply("") };
				yield { type: "done", reason: "stop", message: reply("hello") };
			})()) as unknown as StreamFn;
		const agent = new Agent({ initialState: { model }, streamFn });
		await agent.prompt("go");
		expect(agent.state.errorMessage).toBe("the stream function's stream has no result() method: return an AssistantMessageEventStream (its result() resolves to the final message)");
		expect(agent.state.errorMessage).not.toMatch(/this\./);
	});
});
