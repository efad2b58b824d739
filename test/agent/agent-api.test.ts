/**
 * The Agent facade's API as pi 0.73.1 defines it: state, listeners, queues, continue(),
 * options forwarded to the stream function (pi tests A1–A12, B3–B5, L2, L3).
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import type { AgentMessage, AssistantMessage, Message } from "../../src/types/messages.js";
import {
	assistant,
	deferred,
	echoTool,
	expectIdle,
	flush,
	record,
	roles,
	textOf,
	user,
	userTextsOf,
	waitForAbortStreamFn,
} from "./helpers.js";

describe("Agent state", () => {
	it("A1: a new agent has pi's default state", () => {
		const agent = new Agent();
		expect(agent.state.systemPrompt).toBe("");
		expect(agent.state.model).toBeDefined();
		expect(agent.state.model.id).toBe("unknown");
		expect(agent.state.thinkingLevel).toBe("off");
		expect(agent.state.tools).toEqual([]);
		expect(agent.state.messages).toEqual([]);
		expect(agent.state.isStreaming).toBe(false);
		expect(agent.state.streamingMessage).toBeUndefined();
		expect(agent.state.errorMessage).toBeUndefined();
		expect(agent.state.pendingToolCalls).toEqual(new Set());
		expect(agent.steeringMode).toBe("one-at-a-time");
		expect(agent.followUpMode).toBe("one-at-a-time");
		expect(agent.toolExecution).toBe("parallel");
		expect(agent.transport).toBe("auto");
		expect(agent.toolTimeoutMs).toBe(180_000);
		expect(agent.signal).toBeUndefined();
	});

	it("A2: the initial state is taken from initialState", () => {
		const { model } = createScriptedModel([]);
		const agent = new Agent({ initialState: { systemPrompt: "Be brief.", model, thinkingLevel: "low" } });
		expect(agent.state.systemPrompt).toBe("Be brief.");
		expect(agent.state.model).toBe(model);
		expect(agent.state.thinkingLevel).toBe("low");
	});

	it("A3: subscribing emits nothing, state changes emit nothing, and unsubscribe stops delivery", async () => {
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const events: AgentEvent[] = [];
		const unsubscribe = agent.subscribe((event) => {
			events.push(event);
		});
		agent.state.systemPrompt = "changed";
		agent.state.messages = [user("x")];
		expect(events).toEqual([]);
		agent.state.messages = [];
		await agent.prompt("first");
		const count = events.length;
		expect(count).toBeGreaterThan(0);
		unsubscribe();
		await agent.prompt("second");
		expect(events).toHaveLength(count);
	});

	it("A4: tools and messages copy on assignment, while pushing to state.messages mutates the transcript", () => {
		const agent = new Agent();
		const tools = [echoTool()];
		const messages: AgentMessage[] = [user("a")];
		agent.state.tools = tools;
		agent.state.messages = messages;
		expect(agent.state.tools).toEqual(tools);
		expect(agent.state.tools).not.toBe(tools);
		expect(agent.state.messages).not.toBe(messages);
		messages.push(user("not seen"));
		expect(agent.state.messages).toHaveLength(1);
		agent.state.messages.push(user("b"));
		expect(agent.state.messages.map(textOf)).toEqual(["a", "b"]);
		const { model } = createScriptedModel([]);
		agent.state.model = model;
		agent.state.thinkingLevel = "high";
		expect(agent.state.model).toBe(model);
		expect(agent.state.thinkingLevel).toBe("high");
	});

	it("the initialState arrays are copied too", () => {
		const messages: AgentMessage[] = [user("a")];
		const agent = new Agent({ initialState: { messages } });
		messages.push(user("b"));
		expect(agent.state.messages).toHaveLength(1);
	});

	it("A5/A6: steer() and followUp() queue without touching the transcript", () => {
		const agent = new Agent();
		agent.steer(user("s"));
		agent.followUp(user("f"));
		expect(agent.state.messages).toEqual([]);
		expect(agent.hasQueuedMessages()).toBe(true);
		agent.clearSteeringQueue();
		expect(agent.hasQueuedMessages()).toBe(true);
		agent.clearFollowUpQueue();
		expect(agent.hasQueuedMessages()).toBe(false);
		agent.steer(user("s"));
		agent.followUp(user("f"));
		agent.clearAllQueues();
		expect(agent.hasQueuedMessages()).toBe(false);
	});

	it("A7: abort() while idle is a no-op", () => {
		const agent = new Agent();
		expect(() => agent.abort()).not.toThrow();
		expectIdle(agent);
	});

	it("changing state.tools during a run does not affect that run", async () => {
		const log: string[] = [];
		const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "x" }, "t1")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [echoTool(log)] }, streamFn: scripted.streamFn });
		agent.subscribe((event) => {
			if (event.type === "message_start" && event.message.role === "assistant") agent.state.tools = [];
		});
		await agent.prompt("go");
		expect(log).toEqual(["x"]);
		expect(agent.state.tools).toEqual([]);
	});

	it("state reflects each event before its listeners run: streamingMessage, messages and errorMessage", async () => {
		const scripted = createScriptedModel([{ content: "hello" }, { content: [], stopReason: "error", errorMessage: "overloaded" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const observations: string[] = [];
		agent.subscribe((event) => {
			const state = agent.state;
			if (event.type === "message_update") {
				expect(state.streamingMessage).toBe(event.message);
			}
			if (event.type === "message_end") {
				expect(state.messages.at(-1)).toBe(event.message);
				expect(state.streamingMessage).toBeUndefined();
			}
			if (event.type === "turn_end") observations.push(`errorMessage=${state.errorMessage}`);
			if (event.type === "agent_end") observations.push(`streaming=${state.isStreaming}`);
		});
		await agent.prompt("hi");
		await agent.prompt("again");
		expect(observations).toEqual(["errorMessage=undefined", "streaming=true", "errorMessage=overloaded", "streaming=true"]);
		expect(agent.state.errorMessage).toBe("overloaded");
	});

	it("a new run clears the previous errorMessage", async () => {
		const scripted = createScriptedModel([{ content: [], stopReason: "error", errorMessage: "boom" }, { content: "fine" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await agent.prompt("a");
		expect(agent.state.errorMessage).toBe("boom");
		await agent.prompt("b");
		expect(agent.state.errorMessage).toBeUndefined();
	});

	it("prompt() accepts text with images, a message, or several messages", async () => {
		const scripted = createScriptedModel([{ content: "1" }, { content: "2" }, { content: "3" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await agent.prompt("look", [{ type: "image", data: "AAAA", mimeType: "image/png" }]);
		expect(agent.state.messages[0]).toMatchObject({
			role: "user",
			content: [
				{ type: "text", text: "look" },
				{ type: "image", data: "AAAA", mimeType: "image/png" },
			],
		});
		await agent.prompt(user("single"));
		await agent.prompt([user("m1"), user("m2")]);
		expect(agent.state.messages.filter((m) => m.role === "user").map(textOf)).toEqual(["look", "single", "m1", "m2"]);
		expect(userTextsOf(scripted.calls[2] ?? { messages: [] }).slice(-2)).toEqual(["m1", "m2"]);
	});
});

describe("listeners", () => {
	it("read back at once what they change on the agent: queues and queue modes (as pi's do)", async () => {
		// Regression: a listener runs while the machine is still taking the step that emitted its
		// event, so a command it sends waits in the machine's mailbox; reads of the queues and
		// modes used to come from the machine's snapshot and missed it until a microtask later.
		const scripted = createScriptedModel([{ content: "hi" }, { content: "again" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const seen: Record<string, unknown> = {};
		agent.subscribe((event) => {
			if (event.type !== "message_start" || event.message.role !== "assistant" || "modes" in seen) return;
			agent.followUp(user("later"));
			seen["afterFollowUp"] = agent.hasQueuedMessages();
			agent.followUpMode = "all";
			agent.steeringMode = "all";
			seen["modes"] = [agent.steeringMode, agent.followUpMode];
			agent.clearFollowUpQueue();
			seen["afterClear"] = agent.hasQueuedMessages();
			agent.steer(user("steer"));
			seen["afterSteer"] = agent.hasQueuedMessages();
			agent.clearAllQueues();
			seen["afterClearAll"] = agent.hasQueuedMessages();
		});
		await agent.prompt("go");
		expect(seen).toEqual({ afterFollowUp: true, modes: ["all", "all"], afterClear: false, afterSteer: true, afterClearAll: false });
		// One mode at a time, and other waiting commands leave the modes alone.
		const other = new Agent({ initialState: { model: scripted.model }, streamFn: createScriptedModel([{ content: "hi" }]).streamFn });
		let modes: string[] = [];
		other.subscribe((event) => {
			if (event.type !== "agent_start") return;
			other.followUpMode = "all";
			other.steer(user("s"));
			other.clearAllQueues();
			other.abort();
			modes = [other.steeringMode, other.followUpMode];
		});
		await other.prompt("go");
		expect(modes).toEqual(["one-at-a-time", "all"]);
		// What was read is what happened: the queues were empty when the run went on.
		expect(userTextsOf(agent.state)).toEqual(["go"]);
		expect(agent.hasQueuedMessages()).toBe(false);
		expect([agent.steeringMode, agent.followUpMode]).toEqual(["all", "all"]);
	});

	it("abort() with no run is a no-op, before any run, between runs and after dispose", async () => {
		const scripted = createScriptedModel([{ content: "hi" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		agent.abort();
		await agent.prompt("go");
		agent.abort();
		expect((agent.state.messages.at(-1) as AssistantMessage).stopReason).toBe("stop");
		expectIdle(agent);
		agent.dispose();
		agent.abort();
		expect(agent.state.isStreaming).toBe(false);
	});

	it("see the run's signal aborted right after they call abort(), as pi's do", async () => {
		// Regression: the machine took `abort` only after the step that called the listener, so
		// agent.signal still read "not aborted" on the listener's next line. At turn_end and
		// agent_end the machine's run had ended, and abort() reached no signal at all: a listener
		// saving or uploading at agent_end could not be stopped (pi's can).
		for (const on of ["agent_start", "turn_start", "message_start", "message_update", "message_end", "turn_end", "agent_end"] as const) {
			const scripted = createScriptedModel([{ content: "a reply in a few chunks" }], { chunkSize: 4 });
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
			let seen: boolean | undefined;
			agent.subscribe((event, signal) => {
				if (event.type !== on || seen !== undefined) return;
				if (event.type === "message_start" && event.message.role !== "assistant") return;
				agent.abort();
				seen = agent.signal?.aborted === true && signal.aborted;
			});
			await agent.prompt("go");
			expect(seen, on).toBe(true);
			// Before the call, the provider is handed an aborted signal; once it streams, whether it
			// still completes is its own affair (the scripted model has its chunks queued already).
			const last = agent.state.messages.at(-1) as AssistantMessage;
			if (on === "agent_start" || on === "turn_start") expect(last.stopReason, on).toBe("aborted");
			expect(scripted.calls.length, on).toBeLessThanOrEqual(1);
			expectIdle(agent);
		}
	});

	it("are awaited one event at a time, in subscription order", async () => {
		const scripted = createScriptedModel([{ content: "hi" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const log: string[] = [];
		agent.subscribe(async (event) => {
			log.push(`A>${event.type}`);
			await new Promise<void>((resolve) => setImmediate(resolve));
			log.push(`A<${event.type}`);
		});
		agent.subscribe((event) => {
			log.push(`B:${event.type}`);
		});
		await agent.prompt("x");
		for (let i = 0; i < log.length; i += 3) {
			const type = log[i]?.slice(2);
			expect(log.slice(i, i + 3)).toEqual([`A>${type}`, `A<${type}`, `B:${type}`]);
		}
		expect(log.filter((l) => l.startsWith("B:"))[0]).toBe("B:agent_start");
	});

	it("hold the loop back: the model is not called until the user message_end listener settles", async () => {
		const scripted = createScriptedModel([{ content: "hi" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const release = deferred();
		const reached = deferred();
		agent.subscribe(async (event) => {
			if (event.type === "message_end" && event.message.role === "user") {
				reached.resolve();
				await release.promise;
			}
		});
		const run = agent.prompt("x");
		await reached.promise;
		await flush(5);
		expect(scripted.calls).toHaveLength(0);
		release.resolve();
		await run;
		expect(scripted.calls).toHaveLength(1);
	});

	it("B3: prompt() resolves and isStreaming turns false only after the agent_end listeners settle", async () => {
		const scripted = createScriptedModel([{ content: "hi" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const release = deferred();
		const atEnd = deferred();
		let listenerDone = false;
		agent.subscribe(async (event) => {
			if (event.type === "agent_end") {
				atEnd.resolve();
				await release.promise;
				listenerDone = true;
			}
		});
		let resolved = false;
		const run = agent.prompt("x").then(() => {
			resolved = true;
		});
		await atEnd.promise;
		await flush(5);
		expect(resolved).toBe(false);
		expect(agent.state.isStreaming).toBe(true);
		await expect(agent.prompt("too early")).rejects.toThrow("Agent is already processing a prompt");
		release.resolve();
		await run;
		expect(listenerDone).toBe(true);
		expect(agent.state.isStreaming).toBe(false);
	});

	it("B4: waitForIdle() waits for a listener blocking on the assistant message_end", async () => {
		const scripted = createScriptedModel([{ content: "hi" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const release = deferred();
		const reached = deferred();
		agent.subscribe(async (event) => {
			if (event.type === "message_end" && event.message.role === "assistant") {
				reached.resolve();
				await release.promise;
			}
		});
		const run = agent.prompt("x");
		await reached.promise;
		let idle = false;
		const waiting = agent.waitForIdle().then(() => {
			idle = true;
		});
		await flush(5);
		expect(idle).toBe(false);
		release.resolve();
		await waiting;
		await run;
		expect(idle).toBe(true);
		await expect(agent.waitForIdle()).resolves.toBeUndefined();
	});

	it("B5: listeners receive the run's abort signal, which abort() aborts", async () => {
		const { streamFn } = waitForAbortStreamFn();
		const agent = new Agent({ streamFn });
		const signals: AbortSignal[] = [];
		// Read after the run: a listener's throw only aborts the run, which this test does anyway.
		const abortedAtStart: boolean[] = [];
		const streaming = deferred();
		agent.subscribe((event, signal) => {
			signals.push(signal);
			if (event.type === "agent_start") abortedAtStart.push(signal.aborted);
			if (event.type === "message_start" && event.message.role === "assistant") streaming.resolve();
		});
		const run = agent.prompt("x");
		await streaming.promise;
		expect(agent.signal).toBe(signals[0]);
		agent.abort();
		await run;
		expect(abortedAtStart).toEqual([false]);
		expect(signals[0]?.aborted).toBe(true);
		expect(new Set(signals).size).toBe(1);
		expect(agent.signal).toBeUndefined();
	});
});

describe("continue()", () => {
	it("A8/A9: prompt() and continue() while a run is active reject with pi's messages", async () => {
		const { streamFn, started } = waitForAbortStreamFn();
		const agent = new Agent({ streamFn });
		const run = agent.prompt("x");
		await started;
		expect(agent.state.isStreaming).toBe(true);
		await expect(agent.prompt("y")).rejects.toThrow(
			"Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.",
		);
		await expect(agent.continue()).rejects.toThrow("Agent is already processing. Wait for completion before continuing.");
		agent.abort();
		await run;
		expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "aborted" });
	});

	it("A10: continue() from an assistant tail runs a queued follow-up", async () => {
		const scripted = createScriptedModel([{ content: "answer" }]);
		const agent = new Agent({ initialState: { model: scripted.model, messages: [user("q"), assistant("a")] }, streamFn: scripted.streamFn });
		agent.followUp(user("and then?"));
		await agent.continue();
		expect(agent.state.messages.map(textOf)).toEqual(["q", "a", "and then?", "answer"]);
		expect(agent.state.messages.at(-1)?.role).toBe("assistant");
		expect(agent.hasQueuedMessages()).toBe(false);
	});

	it("A11: continue() from an assistant tail keeps one-at-a-time steering: two queued steers take two calls", async () => {
		const scripted = createScriptedModel([{ content: "r1" }, { content: "r2" }]);
		const agent = new Agent({ initialState: { model: scripted.model, messages: [user("q"), assistant("a")] }, streamFn: scripted.streamFn });
		agent.steer(user("s1"));
		agent.steer(user("s2"));
		await agent.continue();
		expect(agent.state.messages.slice(-4).map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
		expect(scripted.calls).toHaveLength(2);
		expect(userTextsOf(scripted.calls[0] ?? { messages: [] })).toEqual(["q", "s1"]);
	});

	it("continue() from an assistant tail takes steering before follow-ups; in mode all, all steers at once", async () => {
		const scripted = createScriptedModel([{ content: "r1" }, { content: "r2" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, messages: [user("q"), assistant("a")] },
			streamFn: scripted.streamFn,
			steeringMode: "all",
		});
		agent.followUp(user("f"));
		agent.steer(user("s1"));
		agent.steer(user("s2"));
		await agent.continue();
		expect(userTextsOf(scripted.calls[0] ?? { messages: [] })).toEqual(["q", "s1", "s2"]);
		expect(userTextsOf(scripted.calls[1] ?? { messages: [] })).toEqual(["q", "s1", "s2", "f"]);
		expect(scripted.calls).toHaveLength(2);
	});

	it("continue() from a tool result tail calls the model without emitting the transcript", async () => {
		const scripted = createScriptedModel([{ content: "processed" }]);
		const agent = new Agent({
			initialState: {
				model: scripted.model,
				messages: [
					user("q"),
					assistant([{ type: "toolCall", id: "t1", name: "echo", arguments: {} }], "toolUse"),
					{ role: "toolResult", toolCallId: "t1", toolName: "echo", content: [{ type: "text", text: "r" }], isError: false, timestamp: 0 },
				],
			},
			streamFn: scripted.streamFn,
		});
		const rec = record(agent);
		await agent.continue();
		expect(rec.types().filter((t) => t === "message_end")).toHaveLength(1);
		expect(roles(agent.state.messages)).toEqual(["user", "assistant(toolUse)", "toolResult:t1", "assistant(stop)"]);
	});

	it("steering queued before prompt() is taken by the initial poll, after the prompt", async () => {
		const scripted = createScriptedModel([{ content: "r" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		agent.steer(user("early steer"));
		const rec = record(agent);
		await agent.prompt("go");
		expect(rec.skeleton().slice(0, 6)).toEqual([
			"agent_start",
			"turn_start",
			"message_start:user(go)",
			"message_end:user(go)",
			"message_start:user(early steer)",
			"message_end:user(early steer)",
		]);
		expect(scripted.calls).toHaveLength(1);
		expect(userTextsOf(scripted.calls[0] ?? { messages: [] })).toEqual(["go", "early steer"]);
	});
});

describe("what the stream function receives", () => {
	it("A12: sessionId is forwarded, and a changed sessionId applies to the next prompt", async () => {
		const scripted = createScriptedModel([{ content: "1" }, { content: "2" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, sessionId: "session-abc" });
		await agent.prompt("a");
		agent.sessionId = "session-def";
		await agent.prompt("b");
		expect(scripted.callOptions.map((o) => o?.sessionId)).toEqual(["session-abc", "session-def"]);
	});

	it("systemPrompt, tools, the abort signal, transport and reasoning (from thinkingLevel) reach the stream function", async () => {
		const scripted = createScriptedModel([{ content: "1" }, { content: "2" }]);
		const tool = echoTool();
		const agent = new Agent({
			initialState: { model: scripted.model, systemPrompt: "sys", tools: [tool] },
			streamFn: scripted.streamFn,
		});
		await agent.prompt("a");
		agent.state.thinkingLevel = "medium";
		await agent.prompt("b");
		expect(scripted.calls[0]?.systemPrompt).toBe("sys");
		expect(scripted.calls[0]?.tools?.map((t) => t.name)).toEqual(["echo"]);
		expect(scripted.callOptions[0]?.signal).toBeInstanceOf(AbortSignal);
		expect(scripted.callOptions[0]?.transport).toBe("auto");
		expect(scripted.callOptions[0]?.reasoning).toBeUndefined();
		expect(scripted.callOptions[1]?.reasoning).toBe("medium");
	});

	it("getApiKey is asked per LLM call with the provider, and its key is passed on", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "x" }, "t1")] }, { content: "done" }]);
		const asked: string[] = [];
		let n = 0;
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [echoTool()] },
			streamFn: scripted.streamFn,
			getApiKey: (provider) => {
				asked.push(provider);
				return `key-${++n}`;
			},
		});
		await agent.prompt("go");
		expect(asked).toEqual(["scripted", "scripted"]);
		expect(scripted.callOptions.map((o) => o?.apiKey)).toEqual(["key-1", "key-2"]);
	});

	it("L2: custom message types live in the transcript and convertToLlm decides what the model sees", async () => {
		const scripted = createScriptedModel([{ content: "ok" }]);
		const notification = { role: "notification", text: "disk almost full", timestamp: 0 } as unknown as AgentMessage;
		const converted: number[] = [];
		const agent = new Agent({
			initialState: { model: scripted.model, messages: [notification] },
			streamFn: scripted.streamFn,
			convertToLlm: (messages) => {
				const llm = messages.filter((m): m is Message => m.role === "user" || m.role === "assistant" || m.role === "toolResult");
				converted.push(llm.length);
				return llm;
			},
		});
		await agent.prompt("hi");
		expect(converted).toEqual([1]);
		expect(scripted.calls[0]?.messages).toHaveLength(1);
		expect(agent.state.messages.map((m) => m.role)).toEqual(["notification", "user", "assistant"]);
	});

	it("the default convertToLlm drops custom messages", async () => {
		const scripted = createScriptedModel([{ content: "ok" }]);
		const custom = { role: "custom", text: "x", timestamp: 0 } as unknown as AgentMessage;
		const agent = new Agent({ initialState: { model: scripted.model, messages: [custom] }, streamFn: scripted.streamFn });
		await agent.prompt("hi");
		expect(scripted.calls[0]?.messages.map((m) => m.role)).toEqual(["user"]);
	});

	it("L3: transformContext runs before convertToLlm, per LLM call, and gets the run's signal", async () => {
		const scripted = createScriptedModel([{ content: "ok" }]);
		const order: string[] = [];
		const agent = new Agent({
			initialState: { model: scripted.model, messages: [user("m1"), assistant("a1"), user("m2"), assistant("a2")] },
			streamFn: scripted.streamFn,
			transformContext: async (messages, signal) => {
				order.push(`transform:${messages.length}:${signal instanceof AbortSignal}`);
				return messages.slice(-2);
			},
			convertToLlm: (messages) => {
				order.push(`convert:${messages.length}`);
				return messages as Message[];
			},
		});
		await agent.prompt("m3");
		expect(order).toEqual(["transform:5:true", "convert:2"]);
		expect(scripted.calls[0]?.messages.map(textOf)).toEqual(["a2", "m3"]);
		// The transcript itself is not rewritten.
		expect(agent.state.messages).toHaveLength(6);
	});

	it("L4: a tool round trip executes the tool and feeds its result to the next call", async () => {
		const log: string[] = [];
		const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "hello" }, "t1")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [echoTool(log)] }, streamFn: scripted.streamFn });
		await agent.prompt("go");
		expect(log).toEqual(["hello"]);
		const second = scripted.calls[1];
		expect(second?.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult"]);
		expect(textOf(second?.messages[2])).toBe("echo:hello");
	});
});
