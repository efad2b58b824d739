/**
 * The built-in providers called from plain JavaScript without a model (a loop API caller whose
 * context lost it) or, for the proxy, without options. Each made its reply from the model before
 * its own error handling began: the call rejected with nobody to catch it (which ends a Node
 * process) and `result()` never settled, although every provider's documentation says it never
 * throws and always ends its stream. Now anything thrown before that handling ends the stream
 * with an error reply that says what was wrong (src/providers/unexpected-throw.ts).
 */
import { describe, expect, it } from "vitest";
import type { AssistantMessageEventStream } from "../../src/providers/event-stream.js";
import { streamAnthropic } from "../../src/providers/anthropic.js";
import { getModel } from "../../src/providers/models.js";
import { streamOpenAICompletions } from "../../src/providers/openai-completions.js";
import { streamProxy, type ProxyStreamOptions } from "../../src/providers/proxy.js";
import type { Model } from "../../src/types/model.js";

const context = { messages: [{ role: "user" as const, content: "hi", timestamp: 1 }] };
const noModel = undefined as unknown as Model;

/** The reply, or a failure when `result()` does not settle (what the defect did). */
async function settle(stream: AssistantMessageEventStream) {
	let timer: ReturnType<typeof setTimeout> | undefined;
	const unsettled = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Error("result() did not settle within 5 s")), 5_000);
	});
	try {
		const events: string[] = [];
		const reading = (async () => {
			for await (const event of stream) events.push(event.type);
		})();
		const reply = await Promise.race([stream.result(), unsettled]);
		await Promise.race([reading, unsettled]);
		return { reply, events };
	} finally {
		clearTimeout(timer);
	}
}

describe("a built-in provider without its model ends its stream with an error", () => {
	const providers = [
		["streamAnthropic", () => streamAnthropic(noModel, context, { apiKey: "key" })],
		["streamOpenAICompletions", () => streamOpenAICompletions(noModel, context, { apiKey: "key" })],
		["streamProxy", () => streamProxy(noModel, context, { proxyUrl: "http://127.0.0.1:9", authToken: "token" })],
	] as const;
	for (const [name, call] of providers) {
		it(name, async () => {
			const { reply, events } = await settle(call());
			expect(events).toEqual(["error"]);
			expect(reply.stopReason).toBe("error");
			expect(reply.errorMessage).toBe(`${name}: model must be a model object, got undefined`);
		});
	}
});

describe("streamProxy without options", () => {
	it("ends its stream with an error naming them, before any request", async () => {
		const { reply } = await settle(streamProxy(getModel("anthropic", "claude-haiku-4-5"), context, undefined as unknown as ProxyStreamOptions));
		expect(reply.stopReason).toBe("error");
		expect(reply.errorMessage).toBe("options must be an object with proxyUrl and authToken, got undefined");
	});
});
