/**
 * What a side-by-side probe of pi-agent-core 0.73.1 found on 2026-12-06, each held against pi
 * itself where pi's answer is the one to give:
 * - a stream whose final message has no content list killed the process (an uncaught error from
 *   the actor's error handler) when a listener was subscribed; pi ends the run with an error reply;
 * - `afterToolCall` answering `{ details: undefined }`, `{ content: null }` or something that is not
 *   an object changed the result where pi keeps the tool's;
 * - a stream event of a kind pi does not know became a `message_update` with an empty message;
 * - a `start` event without a partial message made two `message_start`s for one message;
 * - the function `subscribe()` returns answered nothing where pi's answers whether it removed.
 */
import { Agent as PiAgent } from "@mariozechner/pi-agent-core";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { AssistantMessageEventStream } from "../../src/providers/event-stream.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AfterToolCallResult, AgentEvent } from "../../src/types/agent.js";
import type { AssistantMessage, ToolResultMessage } from "../../src/types/messages.js";
import type { AssistantMessageEvent, StreamFn } from "../../src/types/stream.js";
import { makeTool, ok, textOf } from "./helpers.js";

type Made = { agent: Agent; name: "pi" | "agentchart" };
function both(options: () => ConstructorParameters<typeof Agent>[0]): Made[] {
	return [
		{ name: "pi", agent: new PiAgent(options() as never) as unknown as Agent },
		{ name: "agentchart", agent: new Agent(options()) },
	];
}

function reply(content: AssistantMessage["content"], stopReason: AssistantMessage["stopReason"] = "stop"): AssistantMessage {
	return {
		role: "assistant",
		content,
		api: "scripted",
		provider: "scripted",
		model: "m",
		usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
		stopReason,
		timestamp: 1,
	};
}

/** A stream function that pushes the given events, then `done` with `final`. */
function streamOf(events: (() => unknown)[], final: () => unknown): StreamFn {
	return () => {
		const stream = new AssistantMessageEventStream();
		queueMicrotask(() => {
			for (const event of events) stream.push(event() as AssistantMessageEvent);
			stream.push({ type: "done", reason: "stop", message: final() } as AssistantMessageEvent);
		});
		return stream;
	};
}

const model = () => createScriptedModel([]).model;

describe("a stream's final message that is not a reply", () => {
	const finals: Record<string, () => unknown> = {
		"no content": () => ({ ...reply([]), content: undefined }),
		"text for content": () => ({ ...reply([]), content: "hello" }),
		"a null block": () => ({ ...reply([]), content: [null] }),
		"no message": () => undefined,
	};
	for (const [what, final] of Object.entries(finals)) {
		it(`ends the run with an error reply that says what was wrong, with a listener subscribed, as pi ends it with an error reply (${what})`, async () => {
			const uncaught: unknown[] = [];
			const onUncaught = (error: unknown) => void uncaught.push(error);
			process.on("uncaughtException", onUncaught);
			try {
				for (const { name, agent } of both(() => ({ initialState: { model: model() }, streamFn: streamOf([], final) }))) {
					const events: string[] = [];
					agent.subscribe((event: AgentEvent) => void events.push(event.type));
					await agent.prompt("hi");
					const last = agent.state.messages.at(-1) as AssistantMessage | undefined;
					expect([name, agent.state.isStreaming, events.at(-1)]).toEqual([name, false, "agent_end"]);
					expect(agent.state.errorMessage, name).toBeTruthy();
					if (name === "agentchart") {
						expect(last?.stopReason).toBe("error");
						expect(agent.state.errorMessage).toMatch(/^The stream's final message /);
						// Every start has its end.
						expect(events.filter((type) => type === "message_start")).toHaveLength(events.filter((type) => type === "message_end").length);
						// The agent is usable again.
						agent.streamFn = createScriptedModel([{ content: "again" }]).streamFn;
						await agent.prompt("once more");
						expect(textOf(agent.state.messages.at(-1))).toBe("again");
					}
				}
			} finally {
				process.off("uncaughtException", onUncaught);
			}
			expect(uncaught).toEqual([]);
		});
	}
});

describe("afterToolCall answers pi reads leniently", () => {
	const answers: [string, unknown][] = [
		["details undefined", { details: undefined }],
		["details null", { details: null }],
		["content null", { content: null }],
		["true", true],
		["a text", "ok"],
	];
	for (const [what, answer] of answers) {
		it(`keeps the tool's result where pi keeps it (${what})`, async () => {
			const results: unknown[] = [];
			for (const { agent } of both(() => ({
				initialState: { model: model(), tools: [makeTool("t", async () => ok("r", { d: 1 }))] },
				streamFn: createScriptedModel([{ content: [toolCall("t", {}, "c1")] }, { content: "b" }]).streamFn,
				afterToolCall: async () => answer as AfterToolCallResult,
			}))) {
				await agent.prompt("x");
				const result = agent.state.messages.find((message): message is ToolResultMessage => message.role === "toolResult");
				results.push({ isError: result?.isError, details: result?.details, text: textOf(result) });
			}
			expect(results[1]).toEqual(results[0]);
			expect(results[1]).toEqual({ isError: false, details: { d: 1 }, text: "r" });
		});
	}
});

describe("stream events pi does not expect", () => {
	const cases: [string, (() => unknown)[]][] = [
		["an event of a kind pi does not know", [() => ({ type: "start", partial: reply([]) }), () => ({ type: "ping" }), () => ({ type: "text_start", contentIndex: 0, partial: reply([{ type: "text", text: "" }]) })]],
		["a start without a partial message", [() => ({ type: "start" })]],
	];
	for (const [what, events] of cases) {
		it(`reach the listeners as pi's do: ${what}`, async () => {
			const seen: string[][] = [];
			for (const { agent } of both(() => ({ initialState: { model: model() }, streamFn: streamOf(events, () => reply([{ type: "text", text: "x" }])) }))) {
				const types: string[] = [];
				agent.subscribe((event: AgentEvent) => {
					// A listener that reads what a message_update shows must find a message there.
					if (event.type === "message_update") types.push(`message_update ${Array.isArray(event.message.content)}`);
					else types.push(event.type);
				});
				await agent.prompt("hi");
				expect(agent.state.errorMessage).toBeUndefined();
				seen.push(types);
			}
			expect(seen[1]).toEqual(seen[0]);
		});
	}
});

describe("subscribe()", () => {
	it("returns a function that answers whether it removed the listener, as pi's does", () => {
		const answers: unknown[][] = [];
		for (const { agent } of both(() => ({ initialState: { model: model() } }))) {
			const unsubscribe = agent.subscribe(() => {}) as () => unknown;
			answers.push([unsubscribe(), unsubscribe()]);
		}
		expect(answers[1]).toEqual(answers[0]);
		expect(answers[1]).toEqual([true, false]);
	});
});
