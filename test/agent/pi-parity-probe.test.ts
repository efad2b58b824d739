/**
 * What a side-by-side probe of pi-agent-core 0.73.1 and agentchart found, each held here against
 * pi itself: `agent.state` lost its transcript when copied; a slow listener made a whole reply
 * an error ("stream stalled"); a stream ended with `end(message)` instead of `done` became an
 * error reply; `prompt(text, null)` and `prompt(message, [])` were refused.
 */
import { Agent as PiAgent } from "@mariozechner/pi-agent-core";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { AssistantMessageEventStream } from "../../src/providers/event-stream.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import type { AssistantMessage } from "../../src/types/messages.js";
import type { StreamFn } from "../../src/types/stream.js";

type Made = { agent: Agent; name: "pi" | "agentchart" };
/** The same options, made once for each, through both Agents (pi's takes what ours takes, but its own types). */
function both(options: () => ConstructorParameters<typeof Agent>[0]): Made[] {
	return [
		{ name: "pi", agent: new PiAgent(options() as never) as unknown as Agent },
		{ name: "agentchart", agent: new Agent(options()) },
	];
}
const lastReply = (agent: Agent) => agent.state.messages.filter((message): message is AssistantMessage => message.role === "assistant").at(-1);
const textOf = (message: AssistantMessage | undefined) => message?.content.map((block) => (block.type === "text" ? block.text : "")).join("");

describe("agent.state copies as pi's does", () => {
	it("a spread, Object.assign, JSON and structuredClone keep messages and tools, with pi's keys in pi's order", async () => {
		const seen: Record<string, unknown> = {};
		for (const { name, agent } of both(() => ({ initialState: { model: createScriptedModel([]).model }, streamFn: createScriptedModel([{ content: "Hi" }]).streamFn }))) {
			await agent.prompt("Hello");
			const state = agent.state;
			seen[name] = {
				keys: Object.keys(state),
				spread: { ...state }.messages?.length,
				assigned: Object.assign({}, state).messages?.length,
				json: JSON.parse(JSON.stringify(state)).messages?.length,
				cloned: structuredClone(state).messages?.length,
				tools: Array.isArray({ ...state }.tools),
			};
		}
		expect(seen["agentchart"]).toEqual({ keys: ["systemPrompt", "model", "thinkingLevel", "tools", "messages", "isStreaming", "streamingMessage", "pendingToolCalls", "errorMessage"], spread: 2, assigned: 2, json: 2, cloned: 2, tools: true });
		expect(seen["agentchart"]).toEqual(seen["pi"]);
	});

	it("the copy's setters are still the agent's: assigning messages checks and copies them", () => {
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model } });
		const given = [{ role: "user" as const, content: "hi", timestamp: 1 }];
		agent.state.messages = given;
		expect(agent.state.messages).toEqual(given);
		expect(agent.state.messages).not.toBe(given);
		expect(() => (agent.state.messages = [null as never])).toThrow(TypeError);
	});
});

describe("a listener's time is not the model's silence", () => {
	it.each(["message_start", "message_update", "message_end"])("a listener that takes longer than streamIdleTimeoutMs on %s leaves the reply whole", async (slowOn) => {
		for (const { name, agent } of both(() => ({ initialState: { model: createScriptedModel([]).model }, streamFn: createScriptedModel([{ content: "abcdefghijkl" }], { chunkSize: 4 }).streamFn, ...({ streamIdleTimeoutMs: 60 } as object) }))) {
			agent.subscribe(async (event: AgentEvent) => {
				if (event.type === slowOn) await new Promise((resolve) => setTimeout(resolve, 150));
			});
			await agent.prompt("hi");
			expect([name, lastReply(agent)?.stopReason, textOf(lastReply(agent)), lastReply(agent)?.errorMessage]).toEqual([name, "stop", "abcdefghijkl", undefined]);
			expect(agent.state.errorMessage).toBeUndefined();
		}
	});

	it("a model that is silent is still cut off while no listener is busy", async () => {
		const silent: StreamFn = (model) => {
			const stream = new AssistantMessageEventStream();
			stream.push({ type: "start", partial: emptyReply(model.id) });
			return stream;
		};
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model }, streamFn: silent, streamIdleTimeoutMs: 60 });
		agent.subscribe(async (event) => {
			if (event.type === "message_start") await new Promise((resolve) => setTimeout(resolve, 150));
		});
		await agent.prompt("hi");
		expect(lastReply(agent)?.errorMessage).toMatch(/^The model's stream stalled: no content arrived for 0\.06 s/);
	});
});

function emptyReply(model: string): AssistantMessage {
	return {
		role: "assistant",
		content: [],
		api: "scripted",
		provider: "scripted",
		model,
		usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
		stopReason: "stop",
		timestamp: 1,
	};
}

describe("a stream ended with end(message) and no done event", () => {
	const finalAnswer = (): AssistantMessage => ({ ...emptyReply("m"), content: [{ type: "text", text: "final answer" }] });
	it.each([
		["after its start", true],
		["with no event at all", false],
	])("gives its message as the reply, as pi does (%s)", async (_, withStart) => {
		const endsWithResult: StreamFn = () => {
			const stream = new AssistantMessageEventStream();
			queueMicrotask(() => {
				if (withStart) stream.push({ type: "start", partial: emptyReply("m") });
				stream.end(finalAnswer());
			});
			return stream;
		};
		const results: unknown[] = [];
		for (const { agent } of both(() => ({ initialState: { model: createScriptedModel([]).model }, streamFn: endsWithResult }))) {
			const events: string[] = [];
			agent.subscribe((event) => void events.push(event.type));
			await agent.prompt("hi");
			results.push({ reply: lastReply(agent)?.stopReason, text: textOf(lastReply(agent)), error: agent.state.errorMessage, events });
		}
		expect(results[1]).toEqual({ reply: "stop", text: "final answer", error: undefined, events: expect.arrayContaining(["message_start", "message_end", "agent_end"]) });
		expect(results[1]).toEqual(results[0]);
	});

	it("one ended with end() and no message is still an error reply that says so", async () => {
		const endsEmpty: StreamFn = () => {
			const stream = new AssistantMessageEventStream();
			queueMicrotask(() => {
				stream.push({ type: "start", partial: emptyReply("m") });
				stream.end();
			});
			return stream;
		};
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model }, streamFn: endsEmpty });
		await agent.prompt("hi");
		expect(lastReply(agent)?.errorMessage).toBe("Stream ended without a done or error event");
	});
});

describe("prompt() takes no images however they are said, as pi does", () => {
	it.each([
		["prompt(text, null)", (agent: Agent) => agent.prompt("hi", null as never)],
		["prompt(text, [])", (agent: Agent) => agent.prompt("hi", [])],
		["prompt(message, [])", (agent: Agent) => agent.prompt({ role: "user", content: "hi", timestamp: 1 } as never, [] as never)],
		["prompt([message], null)", (agent: Agent) => agent.prompt([{ role: "user", content: "hi", timestamp: 1 }] as never, null as never)],
	])("%s", async (_, start) => {
		const outcomes: unknown[] = [];
		for (const { agent } of both(() => ({ initialState: { model: createScriptedModel([]).model }, streamFn: createScriptedModel([{ content: "Hello" }]).streamFn }))) {
			await start(agent);
			outcomes.push(agent.state.messages.map((message) => message.role));
		}
		expect(outcomes).toEqual([
			["user", "assistant"],
			["user", "assistant"],
		]);
	});

	it("images beside a message are still refused (pi drops them without a word)", async () => {
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model }, streamFn: createScriptedModel([{ content: "Hello" }]).streamFn });
		await expect(agent.prompt({ role: "user", content: "hi", timestamp: 1 } as never, [{ type: "image", data: "AAAA", mimeType: "image/png" }] as never)).rejects.toThrow("prompt(message, images): images go with a text prompt, prompt(text, images)");
	});
});
