/**
 * What each turn starts from and how a turn closes early, where StrykerJS found the suite
 * lenient: the per-turn fields of the run (polls, stop checks, compaction, the turn count),
 * an abort before the first call, and output-limit resume turns.
 */
// @ts-nocheck

import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { runAgentLoop, type AgentLoopConfig } from "../../src/index.js";
import { AssistantMessageEventStream } from "../../src/providers/event-stream.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent, ShouldStopAfterTurnContext } from "../../src/types/agent.js";
import type { AgentMessage, AssistantMessage } from "../../src/types/messages.js";
import type { StreamFn } from "../../src/types/stream.js";
import { assistant, deferred, echoTool, expectWellFormedRun, record, textOf, user } from "../agent/helpers.js";

const userTexts = (messages: readonly AgentMessage[]) => messages.filter((message) => (message as { role?: string }).role === "user").map((message) => textOf(message));

describe("every turn starts afresh", () => {
	async function loop(extra: Partial<AgentLoopConfig>) {
		const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "v" }, "t1")] }, { content: "done" }]);
		const events: AgentEvent[] = [];
		const config = { model: scripted.model, convertToLlm: (messages: AgentMessage[]) => messages as never, ...extra } as AgentLoopConfig;
		await runAgentLoop([user("go")], { systemPrompt: "", messages: [], tools: [echoTool()] }, config, (event) => {
			events.push(event);
		}, undefined, scripted.streamFn);
		return { events, scripted };
	}

	it("the loop API polls steering before the first call and after each turn", async () => {
		let polls = 0;
		await loop({
			getSteeringMessages: async () => {
				polls++;
				return [];
			},
		});
		expect(polls).toBe(3);
	});

	it("shouldStopAfterTurn is asked after each turn, with that turn's own tool results", async () => {
		const asked: ShouldStopAfterTurnContext[] = [];
		await loop({
			shouldStopAfterTurn: (context) => {
				asked.push(context);
				return false;
			},
		});
		expect(asked.map((context) => context.toolResults.map((result) => result.toolCallId))).toEqual([["t1"], []]);
		expect(asked.map((context) => textOf(context.message))).toEqual(["", "done"]);
	});

	it("the run counts its turns and calls", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "v" }, "t1")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [echoTool()] }, streamFn: scripted.streamFn });
		const seen: [number | undefined, number | undefined][] = [];
		agent.subscribe((event) => {
			if (event.type === "message_start" && (event.message as { role?: string }).role === "assistant") {
				const run = agent.actor.getSnapshot().context.run;
				seen.push([run?.turn, run?.attempt]);
			}
		});
		await agent.prompt("go");
		expect(seen).toEqual([
			[1, 1],
			[2, 2],
		]);
	});

	it("dispose() in the second turn, before its reply started, closes that turn with an empty aborted reply", async () => {
		let calls = 0;
		const opened = deferred();
		const streamFn: StreamFn = () => {
			const stream = new AssistantMessageEventStream();
			calls++;
			if (calls === 1) {
				const message = assistant("first reply");
				queueMicrotask(() => {
					stream.push({ type: "start", partial: { ...message } });
					stream.push({ type: "text_delta", contentIndex: 0, delta: "first reply", partial: { ...message } });
					stream.push({ type: "done", reason: "stop", message });
				});
			} else opened.resolve();
			return stream;
		};
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model }, streamFn });
		const rec = record(agent);
		agent.subscribe((event) => {
			if (event.type === "message_start" && (event.message as { role?: string }).role === "assistant" && calls === 1) agent.steer(user("steer"));
		});
		const run = agent.prompt("go");
		await opened.promise;
		agent.dispose();
		await run;
		expectWellFormedRun(rec.events);
		const last = agent.state.messages.at(-1) as AssistantMessage;
		expect(last).toMatchObject({ role: "assistant", stopReason: "aborted", errorMessage: "Agent was disposed" });
		expect(textOf(last)).toBe("");
		expect(rec.events.filter((event) => event.type === "turn_end")).toHaveLength(2);
	});
});

describe("abort() before the first call", () => {
	it("closes the turn with an empty aborted reply that joins the transcript and agent_end", async () => {
		const scripted = createScriptedModel([{ content: "never" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const actor = agent.actor;
		const rec = record(agent);
		agent.subscribe((event) => {
			if (event.type === "agent_start") agent.abort();
		});
		await agent.prompt("go");
		expectWellFormedRun(rec.events);
		expect(scripted.calls).toHaveLength(0);
		const turnEnd = rec.events.find((event) => event.type === "turn_end");
		expect(turnEnd?.type === "turn_end" ? turnEnd.toolResults : undefined).toEqual([]);
		const end = rec.events.at(-1);
		expect(end?.type === "agent_end" ? end.messages.map((message) => message.role) : []).toEqual(["user", "assistant"]);
		expect(actor.getSnapshot().context.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
		expect(actor.getSnapshot().context.messages.at(-1)).toMatchObject({ stopReason: "aborted", errorMessage: "Request was aborted" });
	});
});

describe("output-limit resume turns", () => {
	it("resume a cut-off reply with pi's instruction, after queued steering", async () => {
		const scripted = createScriptedModel([{ content: "part one", stopReason: "length" }, { content: "part two" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, outputLimitRecovery: { maxAttempts: 1 } });
		agent.subscribe((event) => {
			if (event.type === "message_start" && (event.message as { role?: string }).role === "assistant" && scripted.calls.length === 1) agent.steer(user("steer"));
		});
		await agent.prompt("go");
		expect(userTexts(agent.state.messages)).toEqual([
			"go",
			"steer",
			"Your reply was cut off by the output token limit. Continue exactly where it stopped, without repeating anything you already wrote.",
		]);
	});

	it("ask again for tool calls the limit cut off", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "v" }, "t1")], stopReason: "length" }, { content: "ok" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [echoTool()] }, streamFn: scripted.streamFn, outputLimitRecovery: { maxAttempts: 1 } });
		await agent.prompt("go");
		expect(userTexts(agent.state.messages).at(-1)).toBe(
			"Your reply was cut off by the output token limit before its tool calls were complete, so they did not run. Issue them again, keeping each call's arguments short enough to fit (split large content across several calls).",
		);
	});
});

