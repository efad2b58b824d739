/**
 * Paths of the statechart the rest of the suite did not take, or took without checking what
 * StrykerJS changed: streaming tool execution with a beforeToolCall hook, a sequential tool
 * in a streaming batch, the loop API's hooks failing, a listener failing while the reply
 * streams or while tools run, dispose during a manual compaction, and compaction settings at
 * their edges.
 */
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import { Agent } from "../../src/agent.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import { runAgentLoop, type AgentLoopConfig } from "../../src/index.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent } from "../../src/types/agent.js";
import type { ToolCall } from "../../src/types/content.js";
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../../src/types/messages.js";
import { assistant, call, deferred, doneOnlyStreamFn, expectWellFormedRun, makeTool, manualStream, type ManualStream, ok, record, sleep, textOf, user, whenAborted , agentWithHeldCompaction } from "../agent/helpers.js";

function toolResults(messages: readonly AgentMessage[]): [string, string, boolean][] {
	return messages.filter((message): message is ToolResultMessage => message.role === "toolResult").map((result) => [result.toolCallId, textOf(result), result.isError]);
}

/** Prompts on a hand-driven stream up to the reply's start; `replyEnded()` tells whether the assistant reply has ended since. */
async function startHandRun(agent: Agent, hand: ManualStream): Promise<{ run: Promise<void>; replyEnded: () => boolean }> {
	let ended = false;
	agent.subscribe((event) => {
		if (event.type === "message_end" && event.message.role === "assistant") ended = true;
	});
	const run = agent.prompt("go");
	await hand.opened;
	hand.start();
	return { run, replyEnded: () => ended };
}

/** "ran" if the promise settles within 500 ms, else "waited". */
function ranWithin500ms(ran: Promise<void>): Promise<"ran" | "waited"> {
	return Promise.race([ran.then(() => "ran" as const), sleep(500).then(() => "waited" as const)]);
}

/** Ends a hand-driven reply with these tool calls, then answers the next call with text; waits for the run. */
async function finishReplyThenRun(hand: ManualStream, calls: ToolCall[], run: Promise<void>): Promise<void> {
	hand.push({ type: "done", reason: "toolUse", message: assistant(calls, "toolUse") });
	await sleep(10);
	hand.push({ type: "start", partial: assistant("") });
	hand.push({ type: "done", reason: "stop", message: assistant("finished") });
	await run;
}

async function until(condition: () => boolean): Promise<void> {
	for (let waited = 0; !condition(); waited++) {
		if (waited > 2000) throw new Error("condition not reached within 2 s");
		await sleep(1);
	}
}

function lastAssistant(messages: readonly AgentMessage[]): AssistantMessage | undefined {
	return messages.filter((message): message is AssistantMessage => message.role === "assistant").at(-1);
}

describe("sequential tool execution with a beforeToolCall hook", () => {
	it("asks the hook for a call only after the call before it ran", async () => {
		const log: string[] = [];
		const echo = makeTool("echo", async (id) => {
			log.push(`run ${id}`);
			return ok("x");
		});
		const scripted = createScriptedModel([{ content: [toolCall("echo", {}, "t1"), toolCall("echo", {}, "t2")] }, { content: "done" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [echo] },
			streamFn: scripted.streamFn,
			toolExecution: "sequential",
			beforeToolCall: async ({ toolCall: asking }) => {
				log.push(`ask ${asking.id}`);
				return undefined;
			},
		});
		await agent.prompt("go");
		expect(log).toEqual(["ask t1", "run t1", "ask t2", "run t2"]);
	});
});

describe("streaming tool execution", () => {
	it("with a beforeToolCall hook: each call is asked as it streams, a blocked call gets the hook's reason, changed arguments reach the tool", async () => {
		const seen: unknown[] = [];
		const echo = makeTool("echo", async (_id, params) => {
			seen.push(params);
			return ok(`echo:${String(params["value"])}`);
		});
		const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "a" }, "t1"), toolCall("echo", { value: "b" }, "t2")] }, { content: "done" }]);
		const asked: string[] = [];
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [echo] },
			streamFn: scripted.streamFn,
			toolExecution: "streaming",
			beforeToolCall: async ({ toolCall: asking, args }) => {
				asked.push(asking.id);
				if (asking.id === "t2") return { block: true, reason: "not b" };
				(args as { value: string }).value = "changed";
				return undefined;
			},
		});
		const rec = record(agent);
		await agent.prompt("go");
		expectWellFormedRun(rec.events);
		expect(asked).toEqual(["t1", "t2"]);
		expect(seen).toEqual([{ value: "changed" }]);
		expect(toolResults(agent.state.messages)).toEqual([
			["t1", "echo:changed", false],
			["t2", "not b", true],
		]);
	});

	it("with a beforeToolCall hook: a call of an unknown tool is answered without asking the hook", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("missing", {}, "m1")] }, { content: "done" }]);
		const asked: string[] = [];
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [makeTool("echo", async () => ok("x"))] },
			streamFn: scripted.streamFn,
			toolExecution: "streaming",
			beforeToolCall: async ({ toolCall: asking }) => {
				asked.push(asking.id);
				return undefined;
			},
		});
		await agent.prompt("go");
		expect(asked).toEqual([]);
		expect(toolResults(agent.state.messages)).toEqual([["m1", "Tool missing not found", true]]);
	});

	it("a running sequential tool holds back the calls streamed after it", async () => {
		const log: string[] = [];
		const release = deferred();
		const started = deferred();
		const exclusive = makeTool(
			"exclusive",
			async () => {
				log.push("exclusive start");
				started.resolve();
				await release.promise;
				log.push("exclusive end");
				return ok("x");
			},
			{ executionMode: "sequential" },
		);
		const quick = makeTool("quick", async () => {
			log.push("quick");
			return ok("q");
		});
		const scripted = createScriptedModel([{ content: [toolCall("exclusive", {}, "e"), toolCall("quick", {}, "q")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [exclusive, quick] }, streamFn: scripted.streamFn, toolExecution: "streaming" });
		const run = agent.prompt("go");
		await started.promise;
		await sleep(20);
		expect(log).toEqual(["exclusive start"]);
		release.resolve();
		await run;
		expect(log).toEqual(["exclusive start", "exclusive end", "quick"]);
	});

	it("tool calls of a reply that streamed no toolcall_end still run when the reply is done", async () => {
		const echo = makeTool("echo", async (_id, params) => ok(`echo:${String(params["value"])}`));
		const streamFn = doneOnlyStreamFn((index) => (index === 0 ? assistant([call("t1", "echo", { value: "a" })], "toolUse") : assistant("done")));
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model, tools: [echo] }, streamFn, toolExecution: "streaming" });
		const rec = record(agent);
		await agent.prompt("go");
		expectWellFormedRun(rec.events);
		expect(toolResults(agent.state.messages)).toEqual([["t1", "echo:a", false]]);
	});

	it("tool calls of a reply that streamed no toolcall_end keep streaming order rules: a sequential tool holds back the calls after it", async () => {
		const log: string[] = [];
		const exclusive = makeTool(
			"exclusive",
			async () => {
				log.push("exclusive start");
				await sleep(20);
				log.push("exclusive end");
				return ok("x");
			},
			{ executionMode: "sequential" },
		);
		const quick = makeTool("quick", async () => (log.push("quick"), ok("q")));
		const streamFn = doneOnlyStreamFn((index) => (index === 0 ? assistant([call("e", "exclusive"), call("q", "quick")], "toolUse") : assistant("done")));
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model, tools: [exclusive, quick] }, streamFn, toolExecution: "streaming" });
		await agent.prompt("go");
		expect(log).toEqual(["exclusive start", "exclusive end", "quick"]);
	});
});

describe("the tool batch", () => {
	it("one batch actor runs all the calls of a reply", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "a" }, "t1"), toolCall("echo", { value: "b" }, "t2"), toolCall("echo", { value: "c" }, "t3")] }, { content: "done" }]);
		let batchActors = 0;
		const actor = createActor(agentMachine, {
			input: { model: scripted.model, tools: [makeTool("echo", async () => ok("x"))], config: { streamFn: scripted.streamFn } },
			inspect: (event) => {
				if (event.type === "@xstate.actor" && (event.actorRef as { id?: string }).id === "tools") batchActors++;
			},
		}).start();
		const ended = new Promise<void>((resolve) => actor.on("agent_end", () => resolve()));
		actor.send({ type: "prompt", messages: [user("go")] });
		await ended;
		expect(batchActors).toBe(1);
		expect(actor.getSnapshot().context.messages.filter((message) => message.role === "toolResult")).toHaveLength(3);
		actor.stop();
	});

	// A bare machine has no consumer pacing the stream (no deliveryPending): the stream actor must
	// still read on after each tool call it announces, and after updates that come before `start`.
	it("a bare machine in streaming tool mode runs each call as it finishes streaming", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "a" }, "t1"), toolCall("echo", { value: "b" }, "t2")] }, { content: "done" }]);
		const actor = createActor(agentMachine, {
			input: { model: scripted.model, tools: [makeTool("echo", async (_id, params) => ok(`echo:${String(params["value"])}`))], config: { streamFn: scripted.streamFn, toolExecution: "streaming" } },
		}).start();
		const types: string[] = [];
		actor.on("*", (event) => void types.push(event.type));
		const ended = new Promise<void>((resolve) => actor.on("agent_end", () => resolve()));
		actor.send({ type: "prompt", messages: [user("go")] });
		await ended;
		const messages = actor.getSnapshot().context.messages;
		expect(messages.filter((message) => message.role === "toolResult").map(textOf)).toEqual(["echo:a", "echo:b"]);
		expect((messages.at(-1) as AssistantMessage).stopReason).toBe("stop");
		expect(types.filter((type) => type === "tool_execution_start")).toHaveLength(2);
		actor.stop();
	});

	it("a bare machine reads on past stream updates that come before start", async () => {
		const scripted = createScriptedModel([{ content: "hello" }]);
		const early: typeof scripted.streamFn = async (model, context, options) => {
			const inner = await scripted.streamFn(model, context, options);
			return {
				async *[Symbol.asyncIterator]() {
					const partial = assistant("");
					yield { type: "text_start" as const, contentIndex: 0, partial };
					yield* inner;
				},
				result: () => inner.result(),
			};
		};
		const actor = createActor(agentMachine, { input: { model: scripted.model, config: { streamFn: early } } }).start();
		const ended = new Promise<void>((resolve) => actor.on("agent_end", () => resolve()));
		actor.send({ type: "prompt", messages: [user("go")] });
		await ended;
		const last = actor.getSnapshot().context.messages.at(-1) as AssistantMessage;
		expect(last.stopReason).toBe("stop");
		expect(textOf(last)).toBe("hello");
		actor.stop();
	});

	it("sequential mode: abort() while the first call runs answers the call never started with 'Tool call was aborted before it ran'", async () => {
		const running = deferred();
		const tool = makeTool("work", async (_id, _params, signal) => {
			running.resolve();
			await whenAborted(signal);
			return ok("stopped");
		});
		const scripted = createScriptedModel([{ content: [toolCall("work", {}, "t1"), toolCall("work", {}, "t2")] }, { content: "never" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn, toolExecution: "sequential" });
		const rec = record(agent);
		const run = agent.prompt("go");
		await running.promise;
		agent.abort();
		await run;
		expectWellFormedRun(rec.events);
		expect(toolResults(agent.state.messages)).toEqual([
			["t1", "stopped", false],
			["t2", "Tool call was aborted before it ran", true],
		]);
	});

	it("streaming mode: a call that finishes streaming after abort() never starts", async () => {
		const hand = manualStream();
		const executed: string[] = [];
		const firstRunning = deferred();
		const tool = makeTool("work", async (id, _params, signal) => {
			executed.push(id);
			firstRunning.resolve();
			await whenAborted(signal);
			return ok("stopped");
		});
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model, tools: [tool] }, streamFn: hand.streamFn, toolExecution: "streaming" });
		const rec = record(agent);
		const run = agent.prompt("go");
		await hand.opened;
		const first = { type: "toolCall" as const, id: "t1", name: "work", arguments: {} };
		const second = { type: "toolCall" as const, id: "t2", name: "work", arguments: {} };
		hand.start();
		hand.toolCallEnd(first);
		await firstRunning.promise;
		agent.abort();
		// The provider ignores the abort for a moment: one more call streams, then it ends.
		hand.toolCallEnd(second);
		hand.push({ type: "error", reason: "aborted", error: { ...assistant([first, second], "aborted"), errorMessage: "Request was aborted" } });
		await run;
		expectWellFormedRun(rec.events);
		expect(executed).toEqual(["t1"]);
	});

	// The reply ended well, the sequential t1 runs, t2 waits behind it; then abort(). t1 ignores
	// the signal: it returns, or its time limit ends it. Either way nothing may start after the abort.
	for (const ending of ["returns", "times out"] as const) {
		it(`streaming mode: after abort(), a running sequential call that ${ending} starts no call queued behind it`, async () => {
			const release = deferred();
			const firstRunning = deferred();
			const started: string[] = [];
			const serial = {
				...makeTool("serial", async (id) => {
					started.push(id);
					firstRunning.resolve();
					await release.promise;
					return ok("late");
				}),
				executionMode: "sequential" as const,
			};
			const scripted = createScriptedModel([{ content: [toolCall("serial", {}, "t1"), toolCall("serial", {}, "t2")] }, { content: "unused" }]);
			const agent = new Agent({
				initialState: { model: scripted.model, tools: [serial] },
				streamFn: scripted.streamFn,
				toolExecution: "streaming",
				toolAbortGraceMs: 0,
				...(ending === "times out" ? { toolTimeoutMs: 30 } : {}),
			});
			const rec = record(agent);
			const run = agent.prompt("go");
			await firstRunning.promise;
			await until(() => agent.actor.getSnapshot().matches({ running: "tool-executing" }));
			agent.abort();
			if (ending === "returns") release.resolve();
			await run;
			release.resolve();
			expectWellFormedRun(rec.events);
			expect(started).toEqual(["t1"]);
			expect(toolResults(agent.state.messages).map(([id]) => id)).toEqual(["t1", "t2"]);
		});
	}

	it("streaming mode: a reply that fails after a call ran is recorded in two parts, in the machine's transcript and agent_end too", async () => {
		const hand = manualStream();
		const done = deferred();
		const tool = makeTool("work", async () => {
			done.resolve();
			return ok("worked");
		});
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model, tools: [tool] }, streamFn: hand.streamFn, toolExecution: "streaming" });
		const actor = agent.actor;
		const rec = record(agent);
		const run = agent.prompt("go");
		await hand.opened;
		const first = { type: "toolCall" as const, id: "t1", name: "work", arguments: {} };
		hand.start();
		hand.toolCallEnd(first);
		await done.promise;
		hand.push({ type: "error", reason: "error", error: { ...assistant([first, { type: "text", text: "and then" }], "error"), errorMessage: "connection lost" } });
		await run;
		const roles = ["user", "assistant", "toolResult", "assistant"];
		expect(agent.state.messages.map((message) => message.role)).toEqual(roles);
		expect(actor.getSnapshot().context.messages.map((message) => message.role)).toEqual(roles);
		const end = rec.events.at(-1);
		expect(end?.type === "agent_end" ? end.messages.map((message) => message.role) : []).toEqual(roles);
		expect(actor.getSnapshot().context.messages.at(-1)).toMatchObject({ stopReason: "error", errorMessage: "connection lost" });
	});
});

describe("a streaming reply that fails after some of its calls ran", () => {
	async function failAfterFirstCall(finalContent: (first: ToolCall) => AssistantMessage["content"]) {
		const hand = manualStream();
		const done = deferred();
		const tool = makeTool("work", async () => (done.resolve(), ok("worked")));
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model, tools: [tool] }, streamFn: hand.streamFn, toolExecution: "streaming" });
		const run = agent.prompt("go");
		await hand.opened;
		const first: ToolCall = { type: "toolCall", id: "t1", name: "work", arguments: {} };
		hand.push({ type: "start", partial: assistant([{ type: "text", text: "intro" }]) });
		hand.push({ type: "toolcall_end", contentIndex: 1, toolCall: first, partial: assistant([{ type: "text", text: "intro" }, first]) });
		await done.promise;
		const failed = { ...assistant(finalContent(first), "error"), errorMessage: "connection lost" };
		failed.usage = { ...failed.usage, input: 50, totalTokens: 50 };
		hand.push({ type: "error", reason: "error", error: failed });
		await run;
		return agent.state.messages.filter((message): message is AssistantMessage => message.role === "assistant");
	}

	it("the part up to the last call that ran is committed (toolUse); the rest follows its results as the failed reply", async () => {
		const second: ToolCall = { type: "toolCall", id: "t2", name: "work", arguments: {} };
		const [committed, failed] = await failAfterFirstCall((first) => [{ type: "text", text: "intro" }, first, second, { type: "text", text: "tail" }]);
		expect(committed?.content).toEqual([{ type: "text", text: "intro" }, { type: "toolCall", id: "t1", name: "work", arguments: {} }]);
		expect(committed?.stopReason).toBe("toolUse");
		expect(committed?.errorMessage).toBeUndefined();
		expect(committed?.usage.totalTokens).toBe(50);
		expect(failed?.content).toEqual([second, { type: "text", text: "tail" }]);
		expect(failed).toMatchObject({ stopReason: "error", errorMessage: "connection lost" });
		expect(failed?.usage.totalTokens).toBe(0);
	});

	it("a call that never started, placed before one that ran, moves to the failed part (nothing of the reply is lost)", async () => {
		const second: ToolCall = { type: "toolCall", id: "t2", name: "work", arguments: {} };
		const [committed, failed] = await failAfterFirstCall((first) => [second, first, { type: "text", text: "tail" }]);
		expect(committed?.content).toEqual([{ type: "toolCall", id: "t1", name: "work", arguments: {} }]);
		expect(failed?.content).toEqual([second, { type: "text", text: "tail" }]);
	});

	// Reply [serial t1, unknown t2, serial t3] fails while t1 runs; t2 waits behind t1. A listener
	// holds the reply's end undelivered while t1 returns (or its time limit ends it):
	// the machine hears t1 settle before it may act on the failure, and must still start nothing.
	for (const ending of ["returns", "times out"] as const) {
		it(`a call queued behind a running one never starts once the reply failed, even if the running one ${ending} before the failure's events are delivered`, async () => {
			const failureSeen = deferred();
			const serial = {
				...makeTool("serial", async () => {
					await failureSeen.promise;
					if (ending === "times out") await new Promise(() => {});
					return ok("worked");
				}),
				executionMode: "sequential" as const,
			};
			const scripted = createScriptedModel(
				[
					{ content: [toolCall("serial", {}, "t1"), toolCall("nope", {}, "t2"), toolCall("serial", {}, "t3")], stopReason: "error", errorMessage: "connection lost" },
					{ content: "unused" },
				],
				{ chunkSize: 6 },
			);
			const agent = new Agent({
				initialState: { model: scripted.model, tools: [serial] },
				streamFn: scripted.streamFn,
				toolExecution: "streaming",
				toolTimeoutMs: 20,
				toolAbortGraceMs: 0,
			});
			// The reply's first message_end (its committed part, on stream.done) is held.
			let held = false;
			agent.subscribe(async (event) => {
				if (held || event.type !== "message_end" || event.message.role !== "assistant") return;
				held = true;
				failureSeen.resolve();
				await sleep(60);
			});
			const started: string[] = [];
			agent.subscribe((event) => {
				if (event.type === "tool_execution_start") started.push(event.toolCallId);
			});
			await agent.prompt("go");
			expect(started).toEqual(["t1"]);
			const shape = agent.state.messages.map((message) =>
				message.role === "assistant" ? `assistant[${message.content.map((block) => (block.type === "toolCall" ? block.id : block.type)).join(",")}] ${message.stopReason}` : message.role === "toolResult" ? `result ${message.toolCallId}` : message.role,
			);
			expect(shape).toEqual(["user", "assistant[t1] toolUse", "result t1", "assistant[t2,t3] error"]);
		});
	}

	it("a call that ran but is missing from the provider's final message is kept in the committed part", async () => {
		const [committed, failed] = await failAfterFirstCall(() => [{ type: "text", text: "tail" }]);
		expect(committed?.content).toEqual([{ type: "toolCall", id: "t1", name: "work", arguments: {} }]);
		expect(failed?.content).toEqual([{ type: "text", text: "tail" }]);
	});
});

describe("streaming tool execution, more", () => {
	it("a call whose arguments fail validation is answered with the validation error and never executed", async () => {
		const executed: unknown[] = [];
		const strict = { ...makeTool("strict", async (_id, params) => (executed.push(params), ok("ran"))), parameters: Type.Object({ value: Type.String() }) };
		const scripted = createScriptedModel([{ content: [toolCall("strict", {}, "t1")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [strict as never] }, streamFn: scripted.streamFn, toolExecution: "streaming" });
		await agent.prompt("go");
		expect(executed).toEqual([]);
		const [result] = toolResults(agent.state.messages);
		expect(result?.[2]).toBe(true);
		expect(result?.[1]).toMatch(/value/);
	});

	it("a call whose toolcall_end streams twice runs once, before the reply ends", async () => {
		const hand = manualStream();
		const log: string[] = [];
		const tool = makeTool("work", async () => (log.push("run"), ok("done")));
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model, tools: [tool] }, streamFn: hand.streamFn, toolExecution: "streaming" });
		agent.subscribe((event) => {
			if (event.type === "tool_execution_start") log.push("start");
			if (event.type === "message_end" && event.message.role === "assistant") log.push("reply end");
		});
		const run = agent.prompt("go");
		await hand.opened;
		const call: ToolCall = { type: "toolCall", id: "t1", name: "work", arguments: {} };
		hand.push({ type: "start", partial: assistant([]) });
		hand.push({ type: "toolcall_end", contentIndex: 0, toolCall: call, partial: assistant([call]) });
		hand.push({ type: "toolcall_end", contentIndex: 0, toolCall: call, partial: assistant([call]) });
		await sleep(10);
		hand.push({ type: "done", reason: "toolUse", message: assistant([call], "toolUse") });
		await sleep(10);
		hand.push({ type: "start", partial: assistant("") });
		hand.push({ type: "done", reason: "stop", message: assistant("finished") });
		await run;
		expect(log.filter((entry) => entry !== "start").slice(0, 2)).toEqual(["run", "reply end"]);
		expect(log.filter((entry) => entry === "run")).toHaveLength(1);
	});

	it("each streamed call starts when its own toolcall_end arrives, the second too, while the reply still streams", async () => {
		const hand = manualStream();
		const ran = { t1: deferred(), t2: deferred() };
		const tool = makeTool("work", async (id) => (ran[id as "t1" | "t2"].resolve(), ok(`done ${id}`)));
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model, tools: [tool] }, streamFn: hand.streamFn, toolExecution: "streaming" });
		const { run, replyEnded } = await startHandRun(agent, hand);
		hand.toolCallEnd({ type: "toolCall", id: "t1", name: "work", arguments: {} });
		await ran.t1.promise;
		hand.toolCallEnd({ type: "toolCall", id: "t2", name: "work", arguments: {} });
		// The reply has not ended: the second call must run now, not when the reply is done.
		expect(await ranWithin500ms(ran.t2.promise)).toBe("ran");
		expect(replyEnded()).toBe(false);
		await finishReplyThenRun(hand, [call("t1", "work"), call("t2", "work")], run);
		expect(toolResults(agent.state.messages).map(([id]) => id)).toEqual(["t1", "t2"]);
	});

	// A call held back by a sequential one starts the moment that one settles (returns or times
	// out), not when the reply ends: the settle transition itself starts it.
	for (const ending of ["returns", "times out"] as const) {
		it(`a call queued behind a sequential one starts as soon as that one ${ending}, while the reply still streams`, async () => {
			const hand = manualStream();
			const release = deferred();
			const secondRan = deferred();
			const serial = {
				...makeTool("serial", async (id) => {
					if (id === "t2") return secondRan.resolve(), ok("second");
					await release.promise;
					if (ending === "times out") await new Promise(() => {});
					return ok("first");
				}),
				executionMode: "sequential" as const,
			};
			const agent = new Agent({
				initialState: { model: createScriptedModel([]).model, tools: [serial] },
				streamFn: hand.streamFn,
				toolExecution: "streaming",
				toolAbortGraceMs: 0,
				...(ending === "times out" ? { toolTimeoutMs: 30 } : {}),
			});
			const { run, replyEnded } = await startHandRun(agent, hand);
			hand.toolCallEnd(call("t1", "serial"));
			hand.toolCallEnd(call("t2", "serial"));
			// t2 waits behind the running t1 before t1 is let go.
			await until(() => agent.actor.getSnapshot().context.run?.batch?.calls.some((entry) => entry.toolCall.id === "t2" && entry.status === "queued") === true);
			release.resolve();
			expect(await ranWithin500ms(secondRan.promise)).toBe("ran");
			expect(replyEnded()).toBe(false);
			await finishReplyThenRun(hand, [call("t1", "serial"), call("t2", "serial")], run);
			expect(toolResults(agent.state.messages).map(([id]) => id)).toEqual(["t1", "t2"]);
		});
	}

	it("a running call is stopped when the reply fails, with an error that says why", async () => {
		const hand = manualStream();
		let reason: unknown;
		const running = deferred();
		const tool = makeTool("work", async (_id, _params, signal) => {
			running.resolve();
			await Promise.race([whenAborted(signal), sleep(500)]);
			reason = signal?.reason;
			return ok("late");
		});
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model, tools: [tool] }, streamFn: hand.streamFn, toolExecution: "streaming" });
		const run = agent.prompt("go");
		await hand.opened;
		const call: ToolCall = { type: "toolCall", id: "t1", name: "work", arguments: {} };
		hand.push({ type: "start", partial: assistant([]) });
		hand.push({ type: "toolcall_end", contentIndex: 0, toolCall: call, partial: assistant([call]) });
		await running.promise;
		hand.push({ type: "error", reason: "error", error: { ...assistant([call], "error"), errorMessage: "provider failed" } });
		await run;
		expect((reason as Error | undefined)?.message).toBe("cancelled");
		expect(toolResults(agent.state.messages)).toEqual([["t1", 'Tool call aborted: the assistant message ended with stopReason "error"', true]]);
	});

	it("a call the output limit cut off makes the resume turn ask for the calls again", async () => {
		const streamFn = doneOnlyStreamFn((index) => (index === 0 ? assistant([call("t1", "work", { value: "a" })], "length") : assistant("done")));
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model, tools: [makeTool("work", async () => ok("x"))] }, streamFn, toolExecution: "streaming", outputLimitRecovery: { maxAttempts: 1 } });
		await agent.prompt("go");
		const users = agent.state.messages.filter((message) => message.role === "user").map((message) => textOf(message));
		expect(users.at(-1)).toMatch(/^Your reply was cut off by the output token limit before its tool calls were complete/);
	});
});

describe("output-limit recovery counts attempts in a row", () => {
	it("a reply that is not cut off resets the count", async () => {
		const scripted = createScriptedModel([
			{ content: "part one", stopReason: "length" },
			{ content: [toolCall("work", {}, "t1")] },
			{ content: "part two", stopReason: "length" },
			{ content: "the end" },
		]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [makeTool("work", async () => ok("x"))] }, streamFn: scripted.streamFn, outputLimitRecovery: { maxAttempts: 1 } });
		await agent.prompt("go");
		expect(scripted.calls).toHaveLength(4);
	});
});

describe("a listener that fails while tools run", () => {
	it("aborts the run; a tool that ignores the abort is given up on after toolAbortGraceMs", async () => {
		// The tool reports progress once it runs; the listener fails on that report.
		const stuck = makeTool("stuck", async (_id, _params, _signal, onUpdate) => {
			onUpdate?.({ content: [{ type: "text", text: "working" }], details: {} });
			await sleep(2000);
			return ok("too late");
		});
		const scripted = createScriptedModel([{ content: [toolCall("stuck", {}, "s")] }, { content: "never" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [stuck] }, streamFn: scripted.streamFn, toolAbortGraceMs: 20 });
		agent.subscribe(async (event) => {
			if (event.type === "tool_execution_update") {
				await sleep(5);
				throw new Error("listener broke");
			}
		});
		const started = Date.now();
		await agent.prompt("go");
		expect(Date.now() - started).toBeLessThan(1000);
		expect(scripted.calls).toHaveLength(1);
		expect(toolResults(agent.state.messages)).toEqual([["s", 'Tool "stuck" did not stop within 20 ms after the run was aborted; its result, if it comes, is ignored', true]]);
		// The run ends with the batch: no second turn, not even one closed without a call.
		expect(agent.state.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult"]);
	});
});

describe("a listener that fails on a call's announcement", () => {
	it("aborts the run before the call runs (its listeners settle before it does, as pi's awaited emit)", async () => {
		const log: string[] = [];
		const tool = makeTool("work", async () => {
			log.push("ran");
			return ok("done");
		});
		const scripted = createScriptedModel([{ content: [toolCall("work", {}, "w")] }, { content: "never" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn });
		agent.subscribe(async (event) => {
			if (event.type === "tool_execution_start") {
				await sleep(5);
				throw new Error("listener broke");
			}
		});
		await agent.prompt("go");
		expect(log).toEqual([]);
		expect(toolResults(agent.state.messages)).toEqual([["w", "Tool call was aborted before it ran", true]]);
		expect(agent.state.errorMessage).toContain("listener broke");
	});
});

describe("a listener that fails while the reply streams", () => {
	/** A run whose listener throws at the reply's start; then the provider ends the reply with `end`. */
	async function listenerFailsThen(end: (hand: ManualStream) => void) {
		const hand = manualStream();
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model }, streamFn: hand.streamFn });
		agent.subscribe((event) => {
			if (event.type === "message_start" && event.message.role === "assistant") throw new Error("listener broke");
		});
		const run = agent.prompt("go");
		await hand.opened;
		const signal = agent.signal;
		expect(signal).toBeDefined();
		hand.start();
		// The listener fails at message_start, which aborts the run; only then does the provider end.
		await whenAborted(signal);
		end(hand);
		await run;
		return lastAssistant(agent.state.messages);
	}

	it("a provider that honours the abort ends the reply as aborted, with the listener's error as the reason", async () => {
		const reply = await listenerFailsThen((hand) => hand.push({ type: "error", reason: "aborted", error: assistant([], "aborted", "Request was aborted") }));
		expect(reply).toMatchObject({ stopReason: "aborted", errorMessage: "listener broke" });
	});

	it("a provider that reports its own error instead keeps that error: the listener's does not replace it", async () => {
		const reply = await listenerFailsThen((hand) => hand.fail("provider broke"));
		expect(reply).toMatchObject({ stopReason: "error", errorMessage: "provider broke" });
	});

	it("a provider that still completes the reply leaves it without an error message", async () => {
		const reply = await listenerFailsThen((hand) => hand.push({ type: "done", reason: "stop", message: assistant("the answer") }));
		expect(reply?.stopReason).toBe("stop");
		expect(reply?.errorMessage).toBeUndefined();
	});
});

describe("the abort grace for running tools", () => {
	/** A tool that ignores its signal and answers after `ms`. */
	const stubborn = (ms: number) => makeTool("stubborn", async () => (await sleep(ms), ok("finished anyway")));
	const quick = makeTool("quick", async () => ok("quick"));

	async function stopDuring(how: "abort" | "listener", toolAbortGraceMs: number, stubbornMs = 60) {
		const scripted = createScriptedModel([{ content: [toolCall("quick", {}, "q"), toolCall("stubborn", {}, "s")] }, { content: "never" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [quick, stubborn(stubbornMs)] }, streamFn: scripted.streamFn, toolAbortGraceMs });
		let stopped = false;
		agent.subscribe(async (event) => {
			// Stops the run once the quick call has ended and the stubborn one still runs.
			if (event.type === "tool_execution_end" && event.toolCallId === "q" && !stopped) {
				stopped = true;
				if (how === "abort") agent.abort();
				else throw new Error("listener broke");
			}
		});
		await agent.prompt("go");
		expect(scripted.calls).toHaveLength(1);
		return toolResults(agent.state.messages);
	}

	for (const how of ["abort", "listener"] as const) {
		it(`${how}: a running call that ignores the signal is given up on after the grace, beside a call that had finished`, async () => {
			expect(await stopDuring(how, 20)).toEqual([
				["q", "quick", false],
				["s", 'Tool "stubborn" did not stop within 20 ms after the run was aborted; its result, if it comes, is ignored', true],
			]);
		});

		it(`${how}: a call that ignores the signal but finishes within the grace keeps its own result`, async () => {
			expect(await stopDuring(how, 2000, 30)).toEqual([
				["q", "quick", false],
				["s", "finished anyway", false],
			]);
		});

		it(`${how}: with toolAbortGraceMs 0 the run waits for the call's own result`, async () => {
			expect(await stopDuring(how, 0)).toEqual([
				["q", "quick", false],
				["s", "finished anyway", false],
			]);
		});
	}
});

describe("a run aborted twice", () => {
	it("abort(), then a listener that throws: the reply keeps the abort as its reason", async () => {
		const hand = manualStream();
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model }, streamFn: hand.streamFn });
		let aborted = false;
		agent.subscribe((event) => {
			if (aborted && event.type === "message_update") throw new Error("listener broke after the abort");
		});
		const run = agent.prompt("go");
		await hand.opened;
		hand.start();
		agent.abort();
		aborted = true;
		// The provider has not seen the signal yet: one more delta, which the listener fails on.
		hand.text("late");
		await sleep(10);
		hand.push({ type: "error", reason: "aborted", error: assistant("late", "aborted", "Request was aborted") });
		await run;
		expect(lastAssistant(agent.state.messages)).toMatchObject({ stopReason: "aborted", errorMessage: "Request was aborted" });
	});

	// XState keeps one timer per delayed-event id and forgets the earlier one when the id is
	// scheduled again: a second abort that re-armed tools.abandon would leave a timer that
	// clearRun cannot cancel, which then gives up on the next run's tools. (The Agent sends one
	// abort per run; a machine used directly may get several.)
	it("a second abort arms no second give-up timer that outlives the run (the machine used directly)", async () => {
		let first = true;
		const tool = makeTool("work", async () => {
			if (!first) return await sleep(150), ok("second run");
			first = false;
			await sleep(30); // ignores the abort, finishes within the grace
			return ok("first run");
		});
		const scripted = createScriptedModel([{ content: [toolCall("work", {}, "a")] }, { content: [toolCall("work", {}, "b")] }, { content: "done" }]);
		const actor = createActor(agentMachine, { input: { model: scripted.model, tools: [tool], config: { streamFn: scripted.streamFn, toolAbortGraceMs: 80 } } }).start();
		actor.on("tool_execution_start", (event) => {
			if (event.toolCallId !== "a") return;
			actor.send({ type: "abort" });
			actor.send({ type: "abort" });
		});
		let ended = new Promise<void>((resolve) => actor.on("agent_end", () => resolve()));
		actor.send({ type: "prompt", messages: [user("one")] });
		await ended;
		await sleep(0);
		ended = new Promise<void>((resolve) => actor.on("agent_end", () => resolve()));
		actor.send({ type: "prompt", messages: [user("two")] });
		await ended;
		expect(toolResults(actor.getSnapshot().context.messages)).toEqual([
			["a", "first run", false],
			["b", "second run", false],
		]);
		actor.stop();
	});
});

describe("tool events name their own call", () => {
	it("an update and a timeout of the second call of a batch carry that call's name and arguments", async () => {
		const first = makeTool("first", async () => (await sleep(40), ok("first")));
		const second = makeTool(
			"second",
			async (_id, _params, signal, onUpdate) => {
				onUpdate?.(ok("progress"));
				await whenAborted(signal);
				return ok("stopped");
			},
			{ timeoutMs: 20 },
		);
		const scripted = createScriptedModel([{ content: [toolCall("first", { n: 1 }, "t1"), toolCall("second", { n: 2 }, "t2")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [first, second] }, streamFn: scripted.streamFn });
		const rec = record(agent);
		await agent.prompt("go");
		const update = rec.events.find((event) => event.type === "tool_execution_update");
		expect(update).toMatchObject({ toolCallId: "t2", toolName: "second", args: { n: 2 } });
		expect(toolResults(agent.state.messages)).toEqual([
			["t1", "first", false],
			["t2", 'Tool "second" timed out after 20 ms', true],
		]);
	});
});

describe("between runs", () => {
	it("the machine keeps no run once a run has ended", async () => {
		const scripted = createScriptedModel([{ content: "ok" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const actor = agent.actor;
		await agent.prompt("go");
		expect(actor.getSnapshot().value).toBe("idle");
		expect(actor.getSnapshot().context.run).toBeUndefined();
	});

	it("a run started by continue() from queued follow-ups still polls steering first (machine with a poller)", async () => {
		const scripted = createScriptedModel([{ content: "ok" }]);
		let polls = 0;
		const actor = createActor(agentMachine, {
			input: {
				model: scripted.model,
				messages: [user("earlier"), assistant("answered")],
				followUpQueue: [user("follow-up")],
				config: {
					streamFn: scripted.streamFn,
					getSteeringMessages: async () => {
						polls++;
						return [];
					},
				},
			},
		}).start();
		const ended = new Promise<void>((resolve) => actor.on("agent_end", () => resolve()));
		actor.send({ type: "continue" });
		await ended;
		expect(polls).toBe(2);
		actor.stop();
	});
});

describe("the loop API's queue polls", () => {
	// A JavaScript poller may answer nothing at all (undefined): that is no messages, not a
	// message, and the run goes on as if the queue were empty.
	it("a steering poll that answers undefined adds nothing to the run", async () => {
		const scripted = createScriptedModel([{ content: "ok" }]);
		const events: AgentEvent[] = [];
		const messages = await runAgentLoop(
			[user("go")],
			{ systemPrompt: "", messages: [], tools: [] },
			{ model: scripted.model, convertToLlm: (messages) => messages as never, getSteeringMessages: async () => undefined as unknown as AgentMessage[] } as AgentLoopConfig,
			(event) => void events.push(event),
			undefined,
			scripted.streamFn,
		);
		expectWellFormedRun(events);
		expect(messages.map((message) => message.role)).toEqual(["user", "assistant"]);
		expect(scripted.calls).toHaveLength(1);
	});
});

describe("the loop API's hooks failing", () => {
	function loopConfig(scripted: ReturnType<typeof createScriptedModel>, extra: Partial<AgentLoopConfig>): AgentLoopConfig {
		return { model: scripted.model, convertToLlm: (messages) => messages as never, ...extra } as AgentLoopConfig;
	}
	/** One run; a hook's failure rejects it (as in pi), after its events were delivered. */
	async function run(extra: (scripted: ReturnType<typeof createScriptedModel>) => Partial<AgentLoopConfig>) {
		const scripted = createScriptedModel([{ content: "first" }, { content: "second" }]);
		const events: AgentEvent[] = [];
		const outcome = await runAgentLoop([user("go")], { systemPrompt: "", messages: [], tools: [] }, loopConfig(scripted, extra(scripted)), (event) => {
			events.push(event);
		}, undefined, scripted.streamFn).then(
			(messages) => ({ messages, error: undefined as unknown }),
			(error: unknown) => ({ messages: undefined, error }),
		);
		const end = events.at(-1);
		const messages = outcome.messages ?? (end?.type === "agent_end" ? end.messages : []);
		return { scripted, events, messages, error: outcome.error };
	}

	it("a steering poll that throws before the first call ends the run with its error, and no call is made", async () => {
		const { scripted, events, messages, error } = await run(() => ({
			getSteeringMessages: async () => {
				throw new Error("poll broke");
			},
		}));
		expectWellFormedRun(events);
		expect(scripted.calls).toHaveLength(0);
		expect(lastAssistant(messages)).toMatchObject({ stopReason: "aborted", errorMessage: "poll broke" });
		expect(error).toEqual(new Error("poll broke"));
	});

	it("a hook that throws something other than an Error is reported as its text", async () => {
		const { messages, error } = await run(() => ({
			getSteeringMessages: async () => {
				throw "poll broke as text";
			},
		}));
		expect(lastAssistant(messages)?.errorMessage).toBe("poll broke as text");
		expect(error).toBe("poll broke as text");
	});

	it("a steering poll that throws after a turn ends the run after that turn", async () => {
		let polls = 0;
		const { scripted, events, error } = await run(() => ({
			getSteeringMessages: async () => {
				if (polls++ > 0) throw new Error("second poll broke");
				return [];
			},
		}));
		expectWellFormedRun(events);
		expect(scripted.calls).toHaveLength(1);
		expect(events.filter((event) => event.type === "turn_end")).toHaveLength(1);
		expect(error).toEqual(new Error("second poll broke"));
	});

	it("the follow-up poll runs again after every turn that would end the run, not only the first", async () => {
		// Three calls: the prompt, then one follow-up per poll; the third poll gives nothing.
		const scripted = createScriptedModel([{ content: "first" }, { content: "second" }, { content: "third" }]);
		let polls = 0;
		const events: AgentEvent[] = [];
		await runAgentLoop(
			[user("go")],
			{ systemPrompt: "", messages: [], tools: [] },
			loopConfig(scripted, { getFollowUpMessages: async () => (++polls <= 2 ? [user(`more ${polls}`)] : []) }),
			(event) => {
				events.push(event);
			},
			undefined,
			scripted.streamFn,
		);
		expectWellFormedRun(events);
		expect(polls).toBe(3);
		expect(scripted.calls).toHaveLength(3);
	});

	it("a follow-up poll that throws ends the run; the follow-ups it would have given are not taken", async () => {
		const { scripted, events, error } = await run(() => ({
			getFollowUpMessages: async () => {
				throw new Error("follow-up poll broke");
			},
		}));
		expectWellFormedRun(events);
		expect(scripted.calls).toHaveLength(1);
		expect(error).toEqual(new Error("follow-up poll broke"));
	});

	it("a shouldStopAfterTurn that throws ends the run after the turn", async () => {
		const { scripted, events, error } = await run(() => ({
			shouldStopAfterTurn: () => {
				throw new Error("stop check broke");
			},
			getFollowUpMessages: async () => [user("more")],
		}));
		expectWellFormedRun(events);
		expect(scripted.calls).toHaveLength(1);
		expect(error).toEqual(new Error("stop check broke"));
	});
});

describe("compaction at its edges", () => {
	const long = (label: string, chars = 400) => `${label} ${"x".repeat(chars)}`;

	it("dispose() during a manual compaction rejects it as aborted", async () => {
		const { agent, summarizing } = agentWithHeldCompaction();
		const rec = record(agent);
		const compacting = agent.compact();
		await summarizing;
		agent.dispose();
		await expect(compacting).rejects.toThrow("Compaction aborted");
		expect(rec.events.map((event) => event.type)).toEqual(["auto_compaction_start", "auto_compaction_end"]);
		expect(rec.events[1]).toMatchObject({ reason: "manual", aborted: true, willRetry: false });
		expect(agent.state.messages).toHaveLength(3);
	});

	it("compact() works without compaction settings: the model writes the summary", async () => {
		const scripted = createScriptedModel([{ content: "model summary" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, messages: [user(long("u1", 50_000)), assistant(long("a1", 50_000)), user(long("u2", 50_000)), assistant("a2")] },
			streamFn: scripted.streamFn,
		});
		const result = await agent.compact();
		expect(result.summary).toContain("model summary");
		expect(agent.state.messages[0]?.role).toBe("compactionSummary");
	});

	it("a model without a known context window is never compacted before a call", async () => {
		const scripted = createScriptedModel([{ content: "reply" }], { model: { contextWindow: 0 } });
		let summarized = 0;
		const agent = new Agent({
			initialState: { model: scripted.model, messages: [user(long("u1", 4000)), assistant(long("a1", 4000))] },
			streamFn: scripted.streamFn,
			compaction: {
				enabled: true,
				keepRecentTokens: 1,
				summarize: async () => {
					summarized++;
					return "summary";
				},
			},
		});
		const rec = record(agent);
		await agent.prompt("go");
		expect(summarized).toBe(0);
		expect(rec.events.some((event) => event.type === "auto_compaction_start")).toBe(false);
	});
});
