import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel, type ScriptedReply } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { planCompaction } from "../../src/compaction/cut-point.js";
import { estimateContextTokens } from "../../src/compaction/estimate.js";
import { serializeConversation, SUMMARIZATION_SYSTEM_PROMPT } from "../../src/compaction/summarize.js";
import { AssistantMessageEventStream } from "../../src/providers/event-stream.js";

const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 0 });

function longHistory(turns: number, chars = 400): AgentMessage[] {
	const messages: AgentMessage[] = [];
	for (let i = 0; i < turns; i++) {
		messages.push(user(`question ${i} ${"q".repeat(chars)}`));
		messages.push({
			role: "assistant",
			content: [{ type: "text", text: `answer ${i} ${"a".repeat(chars)}` }],
			api: "scripted",
			provider: "scripted",
			model: "scripted-1",
			usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
			stopReason: "stop",
			timestamp: 0,
		});
	}
	return messages;
}

function record(agent: Agent): AgentEvent[] {
	const events: AgentEvent[] = [];
	agent.subscribe((event) => {
		events.push(event);
	});
	return events;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
	let resolve!: () => void;
	const promise = new Promise<void>((r) => {
		resolve = r;
	});
	return { promise, resolve };
}

describe("compaction planning", () => {
	it("keeps recent messages and never starts the kept part with a tool result", () => {
		const messages: AgentMessage[] = [
			...longHistory(4),
			{
				role: "assistant",
				content: [{ type: "toolCall", id: "t1", name: "read", arguments: { path: "a" } }],
				api: "scripted",
				provider: "scripted",
				model: "m",
				usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
				stopReason: "toolUse",
				timestamp: 0,
			},
			{ role: "toolResult", toolCallId: "t1", toolName: "read", content: [{ type: "text", text: "x".repeat(400) }], isError: false, timestamp: 0 },
		];
		const plan = planCompaction(messages, 50);
		expect(plan).toBeDefined();
		expect((plan?.kept[0] as { role: string }).role).not.toBe("toolResult");
		expect(plan?.kept.some((m) => (m as { role: string }).role === "toolResult")).toBe(true);
	});

	it("summarises a turn's early part separately when the cut falls inside the turn", () => {
		const [firstQuestion, firstAnswer, question, answer] = longHistory(2);
		const messages = [firstQuestion, firstAnswer, question, answer, { ...(answer as object), content: [{ type: "text", text: "b".repeat(400) }] }] as AgentMessage[];
		const plan = planCompaction(messages, 100);
		expect(plan?.history).toEqual([firstQuestion, firstAnswer]);
		expect(plan?.turnPrefix).toEqual([question, answer]);
		expect(plan?.kept.length).toBe(1);
	});

	it("returns nothing to do when everything fits", () => {
		expect(planCompaction(longHistory(1, 10), 20000)).toBeUndefined();
	});

	it("estimates context from the last successful usage plus what came after it", () => {
		const messages = longHistory(2, 40);
		const last = messages[3] as { usage: { totalTokens: number } };
		last.usage.totalTokens = 1000;
		messages.push(user("x".repeat(400)));
		expect(estimateContextTokens(messages)).toBe(1100);
	});

	it("truncates long tool results when serialising for the summariser", () => {
		const text = serializeConversation([
			{ role: "toolResult", toolCallId: "t", toolName: "read", content: [{ type: "text", text: "y".repeat(5000) }], isError: false, timestamp: 0 },
		]);
		expect(text).toContain("[... 3000 more characters truncated]");
	});
});

describe("compaction in the statechart", () => {
	const compaction = { enabled: true, reserveTokens: 100, keepRecentTokens: 150 };

	function agentWith(replies: ScriptedReply[], messages: AgentMessage[], summarize?: () => Promise<string>) {
		const scripted = createScriptedModel(replies, { model: { contextWindow: 1000 } });
		const agent = new Agent({
			initialState: { model: scripted.model, messages },
			streamFn: scripted.streamFn,
			compaction: { ...compaction, summarize: summarize ?? (async () => "## Goal\nsummary") },
		});
		return { agent, scripted };
	}

	it("compacts before the call when the context exceeds the window minus the reserve", async () => {
		const { agent, scripted } = agentWith([{ content: "ok" }], longHistory(6));
		const events = record(agent);
		await agent.prompt("next");
		const types = events.map((e) => e.type);
		expect(types.indexOf("auto_compaction_start")).toBeLessThan(types.indexOf("message_start", types.indexOf("auto_compaction_end")));
		const start = events.find((e) => e.type === "auto_compaction_start");
		expect(start).toMatchObject({ reason: "threshold" });
		const end = events.find((e) => e.type === "auto_compaction_end");
		expect(end).toMatchObject({ reason: "threshold", aborted: false, willRetry: false });
		expect((agent.state.messages[0] as { role: string }).role).toBe("compactionSummary");
		// The model saw the summary as a user message wrapped in <summary> tags.
		const first = scripted.calls[0]?.messages[0];
		expect(JSON.stringify(first)).toContain("<summary>");
	});

	it("recovers from a context overflow once by compacting and retrying the call", async () => {
		const { agent, scripted } = agentWith(
			[{ content: [], stopReason: "error", errorMessage: "400 invalid_request_error: prompt is too long: 2000 tokens > 1000 maximum" }, { content: "fine" }],
			longHistory(2, 300),
		);
		const events = record(agent);
		await agent.prompt("go");
		expect(scripted.calls.length).toBe(2);
		const end = events.find((e) => e.type === "auto_compaction_end");
		expect(end).toMatchObject({ reason: "overflow", willRetry: true });
		const roles = agent.state.messages.map((m) => (m as { role: string }).role);
		expect(roles[0]).toBe("compactionSummary");
		expect(agent.state.messages.some((m) => (m as { stopReason?: string }).stopReason === "error")).toBe(false);
		expect(roles[roles.length - 1]).toBe("assistant");
		// The overflow that was recovered from is not the run's error.
		expect(agent.state.errorMessage).toBeUndefined();
	});

	it("ends the run with advice after a second overflow", async () => {
		const overflow: ScriptedReply = { content: [], stopReason: "error", errorMessage: "prompt is too long: 2000 tokens > 1000 maximum" };
		const { agent, scripted } = agentWith([overflow, overflow, { content: "never" }], longHistory(2, 300));
		await agent.prompt("go");
		expect(scripted.calls.length).toBe(2);
		expect(agent.state.errorMessage).toContain("Context overflow recovery failed after one compact-and-retry attempt");
	});

	it("a reply that overflows silently after the retry keeps its answer and sets no error", async () => {
		// Regression: the retried call answered (stop reason "stop") with usage over the window, and
		// the reply was marked "recovery failed", so agent.state.errorMessage said a run that
		// succeeded had failed.
		const overflow: ScriptedReply = { content: [], stopReason: "error", errorMessage: "prompt is too long: 2000 tokens > 1000 maximum" };
		const { agent, scripted } = agentWith([overflow, { content: "the answer", usage: { input: 1500 } }, { content: "never" }], longHistory(2, 300));
		await agent.prompt("go");
		expect(scripted.calls.length).toBe(2);
		const last = agent.state.messages.at(-1) as { role: string; stopReason?: string; errorMessage?: string; content: unknown };
		expect(last).toMatchObject({ role: "assistant", stopReason: "stop", content: [{ type: "text", text: "the answer" }] });
		expect(last.errorMessage).toBeUndefined();
		expect(agent.state.errorMessage).toBeUndefined();
	});

	it("a reply that runs out of room after the retry ends the run with advice", async () => {
		const overflow: ScriptedReply = { content: [], stopReason: "error", errorMessage: "prompt is too long: 2000 tokens > 1000 maximum" };
		const noRoom: ScriptedReply = { content: [], stopReason: "length", usage: { input: 995, output: 0 } };
		const { agent, scripted } = agentWith([overflow, noRoom, { content: "never" }], longHistory(2, 300));
		await agent.prompt("go");
		expect(scripted.calls.length).toBe(2);
		expect(agent.state.errorMessage).toContain("Context overflow recovery failed after one compact-and-retry attempt");
		// The reply, cut off with no room, is an overflow with its own error (it used to end as "(context overflow)", unsaid).
		expect(agent.state.errorMessage?.endsWith("(The context window is full: the reply was cut off by the output limit before any output, with 995 of the model's 1000 tokens taken by the input)")).toBe(true);
		expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "error" });
	});

	it("a failing summariser leaves the transcript unchanged and a threshold run continues", async () => {
		const history = longHistory(6);
		const { agent, scripted } = agentWith([{ content: "ok" }], history, async () => {
			throw new Error("summariser down");
		});
		const events = record(agent);
		await agent.prompt("next");
		const end = events.find((e) => e.type === "auto_compaction_end");
		expect(end).toMatchObject({ aborted: false, errorMessage: "Compaction failed: summariser down" });
		expect(scripted.calls.length).toBe(1);
		expect(agent.state.messages.slice(0, history.length)).toEqual(history);
	});

	it("abort during an overflow's compaction stops it, reports it aborted and makes no retry", async () => {
		const gate = deferred();
		const overflow: ScriptedReply = { content: [], stopReason: "error", errorMessage: "prompt is too long: 2000 tokens > 1000 maximum" };
		let summarizeSignal: AbortSignal | undefined;
		const scripted = createScriptedModel([overflow, { content: "never" }], { model: { contextWindow: 1000 } });
		const agent = new Agent({
			initialState: { model: scripted.model, messages: longHistory(2, 300) },
			streamFn: scripted.streamFn,
			compaction: {
				...compaction,
				summarize: async ({ signal }) => {
					summarizeSignal = signal;
					queueMicrotask(() => agent.abort());
					await gate.promise;
					return "late summary";
				},
			},
		});
		const events = record(agent);
		await agent.prompt("go");
		gate.resolve();
		expect(summarizeSignal?.aborted).toBe(true);
		expect(events.find((e) => e.type === "auto_compaction_end")).toMatchObject({ reason: "overflow", aborted: true, willRetry: false });
		expect(scripted.calls.length).toBe(1);
		expect(events.at(-1)?.type).toBe("agent_end");
		expect(agent.actor.getSnapshot().value).toBe("idle");
	});

	it("abort during compaction stops it, keeps the transcript and the queues, and ends the run", async () => {
		const gate = deferred();
		let sawSignal: AbortSignal | undefined;
		const history = longHistory(6);
		const { agent, scripted } = agentWith([{ content: "never" }], history, async () => {
			await gate.promise;
			return "late summary";
		});
		const events = record(agent);
		agent.subscribe((event, signal) => {
			if (event.type === "auto_compaction_start") {
				sawSignal = signal;
				agent.steer(user("steer while compacting"));
				agent.followUp(user("follow-up while compacting"));
				queueMicrotask(() => agent.abort());
			}
		});
		await agent.prompt("next");
		gate.resolve();
		expect(sawSignal?.aborted).toBe(true);
		expect(events.find((e) => e.type === "auto_compaction_end")).toMatchObject({ aborted: true });
		expect(scripted.calls.length).toBe(0);
		expect(agent.state.messages.slice(0, history.length)).toEqual(history);
		expect(agent.hasQueuedMessages()).toBe(true);
		expect(agent.actor.getSnapshot().value).toBe("idle");
		expect(Object.keys(agent.actor.getSnapshot().children)).toEqual([]);
	});

	it("delivers a steer that arrives during compaction after it", async () => {
		const { agent, scripted } = agentWith([{ content: "one" }, { content: "two" }], longHistory(6));
		agent.subscribe((event) => {
			if (event.type === "auto_compaction_start") agent.steer(user("STEER"));
		});
		await agent.prompt("next");
		expect(scripted.calls.length).toBe(2);
		expect(JSON.stringify(scripted.calls[1]?.messages)).toContain("STEER");
		expect(agent.hasQueuedMessages()).toBe(false);
	});

	it("dispose during compaction stops every child and settles", async () => {
		const gate = deferred();
		const { agent } = agentWith([{ content: "never" }], longHistory(6), async () => {
			await gate.promise;
			return "x";
		});
		const events = record(agent);
		agent.subscribe((event) => {
			if (event.type === "auto_compaction_start") queueMicrotask(() => agent.dispose());
		});
		const run = agent.prompt("next");
		await run;
		gate.resolve();
		expect(agent.actor.getSnapshot().status).toBe("done");
		expect(Object.keys(agent.actor.getSnapshot().children)).toEqual([]);
		expect(events.find((e) => e.type === "auto_compaction_end")).toMatchObject({ aborted: true });
		expect(events[events.length - 1]?.type).toBe("agent_end");
		await expect(agent.prompt("again")).rejects.toThrow(/disposed/);
	});

	it("manual compaction while idle replaces older messages with a summary", async () => {
		const { agent } = agentWith([], longHistory(6));
		const events = record(agent);
		const result = await agent.compact("focus on files");
		expect(result.messagesDropped).toBeGreaterThan(0);
		expect(events.map((e) => e.type)).toEqual(["auto_compaction_start", "auto_compaction_end"]);
		expect(events[0]).toMatchObject({ reason: "manual" });
		expect((agent.state.messages[0] as { role: string }).role).toBe("compactionSummary");
		expect(agent.state.isStreaming).toBe(false);
	});

	it("the default summariser calls the agent's own model with the structured format", async () => {
		const scripted = createScriptedModel([{ content: "## Goal\nfrom the model" }], { model: { contextWindow: 1000 } });
		const agent = new Agent({
			initialState: { model: scripted.model, messages: longHistory(6) },
			streamFn: scripted.streamFn,
			compaction: { enabled: true, reserveTokens: 100, keepRecentTokens: 150 },
		});
		const result = await agent.compact();
		expect(result.summary).toContain("from the model");
		const prompt = JSON.stringify(scripted.calls[0]?.messages);
		for (const section of ["## Goal", "## Constraints & Preferences", "## Progress", "## Key Decisions", "## Next Steps", "## Critical Context"]) {
			expect(prompt).toContain(section);
		}
		expect(prompt).toContain("<conversation>");
	});

	// streamIdleTimeoutMs bounds every request to the model, the summary's too: a silent model
	// must not hold the run in compaction for ever.
	it("a summary request whose stream goes silent fails after streamIdleTimeoutMs, and a threshold run goes on with its call", async () => {
		const scripted = createScriptedModel([{ content: "answered" }], { model: { contextWindow: 1000 } });
		let summaryRequest: AbortSignal | undefined;
		const agent = new Agent({
			initialState: { model: scripted.model, messages: longHistory(6) },
			streamFn: (model, context, options) => {
				if (context.systemPrompt !== SUMMARIZATION_SYSTEM_PROMPT) return scripted.streamFn(model, context, options);
				summaryRequest = options?.signal;
				return new AssistantMessageEventStream(); // and then nothing, ever
			},
			compaction: { enabled: true, reserveTokens: 100, keepRecentTokens: 150 },
			streamIdleTimeoutMs: 50,
		});
		const events = record(agent);
		const outcome = await Promise.race([agent.prompt("go").then(() => "ended"), new Promise((resolve) => setTimeout(() => resolve("still compacting"), 2000))]);
		expect(outcome).toBe("ended");
		const end = events.find((event) => event.type === "auto_compaction_end");
		expect(end).toMatchObject({ reason: "threshold", aborted: false });
		expect((end as { errorMessage?: string }).errorMessage).toMatch(/stream stalled: no content arrived for 0.05 s \(streamIdleTimeoutMs; keep-alive pings do not count\)/);
		expect(summaryRequest?.aborted).toBe(true); // the request itself was cancelled
		expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
	});

	// The summary request is prepared (convertToLlm) before it goes out: an abort meanwhile must
	// not send it, even through a stream function that ignores its signal.
	it("abort() while the default summariser prepares its request: the model is not called", async () => {
		const scripted = createScriptedModel([{ content: "## Goal\nfrom the model" }], { model: { contextWindow: 1000 } });
		const entered = deferred();
		const gate = deferred();
		let requests = 0;
		const agent = new Agent({
			initialState: { model: scripted.model, messages: longHistory(6) },
			streamFn: (model, context, options) => {
				requests++;
				const { signal: _ignored, ...rest } = options ?? {};
				return scripted.streamFn(model, context, rest);
			},
			convertToLlm: async (messages) => {
				entered.resolve();
				await gate.promise;
				return messages.filter((m) => m.role === "user" || m.role === "assistant" || m.role === "toolResult");
			},
			compaction: { enabled: true, reserveTokens: 100, keepRecentTokens: 150 },
		});
		const before = agent.state.messages;
		const compacting = agent.compact();
		compacting.catch(() => {});
		await entered.promise;
		agent.abort();
		gate.resolve();
		await expect(compacting).rejects.toThrow();
		await new Promise((resolve) => setTimeout(resolve, 20));
		expect(requests).toBe(0);
		expect(agent.state.messages).toEqual(before);
	});
});
