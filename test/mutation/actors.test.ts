/**
 * What the actors guarantee, pinned down where the rest of the suite left StrykerJS mutants
 * alive: the stream actor's failed messages, its reading of a stream, the tool batch actor's
 * checks and timer, and the compaction actor's request and result.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createActor, waitFor } from "xstate";
import { Agent } from "../../src/agent.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import { AssistantMessageEventStream } from "../../src/providers/event-stream.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent, AgentToolResult } from "../../src/types/agent.js";
import type { AssistantMessageEvent } from "../../src/types/stream.js";
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../../src/types/messages.js";
import type { SummarizeRequest } from "../../src/compaction/settings.js";
import type { StreamFn } from "../../src/types/stream.js";
import { assistant, deferred, makeTool, ok, record, textOf, user, whenAborted , agentWithHeldCompaction } from "../agent/helpers.js";

function lastAssistant(messages: readonly AgentMessage[]): AssistantMessage | undefined {
	return messages.filter((message): message is AssistantMessage => message.role === "assistant").at(-1);
}

/** A stream function over a fixed list of events (an `Error` entry makes the iterator throw). */
function streamOf(events: (AssistantMessageEvent | Error)[], final?: AssistantMessage): StreamFn {
	return () => ({
		async *[Symbol.asyncIterator]() {
			for (const event of events) {
				if (event instanceof Error) throw event;
				yield event;
			}
		},
		result: async () => final ?? assistant("unused"),
	});
}

describe("stream actor", () => {
	it("a call that fails before any event ends as an error message of the agent's model", async () => {
		const scripted = createScriptedModel([]);
		const agent = new Agent({
			initialState: { model: scripted.model },
			streamFn: () => {
				throw new Error("no network");
			},
		});
		await agent.prompt("go");
		const message = lastAssistant(agent.state.messages);
		expect(message).toMatchObject({ stopReason: "error", errorMessage: "no network", api: "scripted", provider: "scripted", model: "scripted-1", content: [] });
		expect(typeof message?.timestamp).toBe("number");
		expect(message?.usage.totalTokens).toBe(0);
	});

	it("a stream that throws after its start keeps the partial message's content and usage", async () => {
		const partial: AssistantMessage = { ...assistant("half"), api: "other-api", provider: "other", model: "other-1", timestamp: 1234 };
		partial.usage = { ...partial.usage, input: 7, output: 3, totalTokens: 10 };
		const scripted = createScriptedModel([]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: streamOf([{ type: "start", partial }, new Error("connection reset")]) });
		await agent.prompt("go");
		const message = lastAssistant(agent.state.messages);
		expect(message).toMatchObject({ stopReason: "error", errorMessage: "connection reset", api: "other-api", provider: "other", model: "other-1", timestamp: 1234 });
		expect(textOf(message)).toBe("half");
		expect(message?.usage).toMatchObject({ input: 7, output: 3, totalTokens: 10 });
	});

	it("a stream that ends without done or error, and without a result, ends the call with an error that says so", async () => {
		const partial = assistant("");
		const scripted = createScriptedModel([]);
		const ended = streamOf([{ type: "start", partial }]);
		// As pi-ai's stream ended by end() without a message: its result never settles.
		const withoutResult: StreamFn = (...args) => Object.assign(ended(...args) as object, { result: () => new Promise<AssistantMessage>(() => undefined) }) as ReturnType<StreamFn>;
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: withoutResult });
		await agent.prompt("go");
		expect(lastAssistant(agent.state.messages)?.errorMessage).toBe("Stream ended without a done or error event");
	});

	it("a stream that ends without done or error, its result at hand, ends the call with that result, as pi's loop takes it", async () => {
		const scripted = createScriptedModel([]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: streamOf([{ type: "start", partial: assistant("") }], assistant("the result")) });
		await agent.prompt("go");
		expect(lastAssistant(agent.state.messages)).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "the result" }] });
	});

	it("updates a stream sends before its start are not relayed (they belong to no message)", async () => {
		const partial = assistant("hi");
		const early: AssistantMessageEvent = { type: "text_delta", contentIndex: 0, delta: "early", partial };
		const late: AssistantMessageEvent = { type: "text_delta", contentIndex: 0, delta: "hi", partial };
		const scripted = createScriptedModel([]);
		const agent = new Agent({
			initialState: { model: scripted.model },
			streamFn: streamOf([early, { type: "start", partial }, late, { type: "done", reason: "stop", message: partial }], partial),
		});
		const rec = record(agent);
		await agent.prompt("go");
		const deltas = rec.events.flatMap((event) => (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta" ? [event.assistantMessageEvent.delta] : []));
		expect(deltas).toEqual(["hi"]);
	});

	it("a stream function is not given an apiKey option when there is no key", async () => {
		const scripted = createScriptedModel([{ content: "ok" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		await agent.prompt("go");
		expect(Object.keys(scripted.callOptions[0] ?? {})).not.toContain("apiKey");
	});

	it("a stalled stream's request is cancelled with the reason 'stream stalled'", async () => {
		let reason: unknown;
		const scripted = createScriptedModel([]);
		const agent = new Agent({
			initialState: { model: scripted.model },
			streamIdleTimeoutMs: 20,
			streamFn: (_model, _context, options) => {
				const stream = new AssistantMessageEventStream();
				void whenAborted(options?.signal).then(() => {
					reason = options?.signal?.reason;
				});
				return stream;
			},
		});
		await agent.prompt("go");
		await new Promise((resolve) => setTimeout(resolve, 0));
		expect((reason as Error | undefined)?.message).toBe("stream stalled");
	});

	it("a stream function that ignores the abort is given up on after abortGraceMs (machine)", async () => {
		const scripted = createScriptedModel([]);
		const started = deferred();
		const ignoresAbort: StreamFn = () => {
			const stream = new AssistantMessageEventStream();
			queueMicrotask(() => {
				stream.push({ type: "start", partial: assistant("") });
				started.resolve();
			});
			return stream;
		};
		const actor = createActor(agentMachine, { input: { model: scripted.model, config: { streamFn: ignoresAbort, abortGraceMs: 20, streamIdleTimeoutMs: 0 } } }).start();
		actor.send({ type: "prompt", messages: [user("go")] });
		await started.promise;
		actor.send({ type: "abort" });
		const snapshot = await waitFor(actor, (state) => state.matches("idle"), { timeout: 1000 });
		expect(lastAssistant(snapshot.context.messages)).toMatchObject({ stopReason: "aborted", errorMessage: "Request was aborted" });
		actor.stop();
	});
});

describe("tool batch actor", () => {
	function agentWithTool(afterToolCall: ConstructorParameters<typeof Agent>[0] extends infer O ? (O extends { afterToolCall?: infer H } ? H : never) : never) {
		const scripted = createScriptedModel([{ content: [toolCall("read", {}, "r")] }, { content: "done" }]);
		const read = makeTool("read", async () => ok("file"));
		return new Agent({ initialState: { model: scripted.model, tools: [read] }, streamFn: scripted.streamFn, afterToolCall });
	}

	function toolResult(agent: Agent): ToolResultMessage | undefined {
		return agent.state.messages.find((message): message is ToolResultMessage => message.role === "toolResult");
	}

	it("a call that returns before its time limit is not timed out later: its signal stays as it was", async () => {
		let signal: AbortSignal | undefined;
		const quick = makeTool("quick", async (_id, _params, given) => {
			signal = given;
			return ok("fast");
		});
		const scripted = createScriptedModel([{ content: [toolCall("quick", {}, "q")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [quick] }, streamFn: scripted.streamFn, toolTimeoutMs: 20 });
		await agent.prompt("go");
		await new Promise((resolve) => setTimeout(resolve, 60));
		expect(signal?.aborted).toBe(false);
		expect(toolResult(agent)?.isError).toBe(false);
	});

	it("afterToolCall content with a block that is not text or image becomes an error result", async () => {
		const agent = agentWithTool(async () => ({ content: [{ type: "text", text: "fine" }, { type: "audio" } as never] }));
		await agent.prompt("go");
		expect(toolResult(agent)?.isError).toBe(true);
		expect(textOf(toolResult(agent))).toMatch(/^afterToolCall returned content that is not a list of text and image blocks/);
	});

	it("afterToolCall content that is not a list becomes an error result", async () => {
		const agent = agentWithTool(async () => ({ content: "plain text" as never }));
		await agent.prompt("go");
		expect(toolResult(agent)?.isError).toBe(true);
	});

	it("afterToolCall content of text and image blocks replaces the result", async () => {
		const agent = agentWithTool(async () => ({ content: [{ type: "text", text: "new" }, { type: "image", data: "AAAA", mimeType: "image/png" }] }));
		await agent.prompt("go");
		expect(toolResult(agent)?.isError).toBe(false);
		expect(toolResult(agent)?.content).toEqual([
			{ type: "text", text: "new" },
			{ type: "image", data: "AAAA", mimeType: "image/png" },
		]);
	});

	it("a result that no one marked terminate has no terminate field", async () => {
		const agent = agentWithTool(async () => ({ details: { changed: true } }));
		const rec = record(agent);
		await agent.prompt("go");
		const end = rec.events.find((event): event is Extract<AgentEvent, { type: "tool_execution_end" }> => event.type === "tool_execution_end");
		const result = end?.result as AgentToolResult<unknown>;
		expect(Object.keys(result).sort()).toEqual(["content", "details"]);
		expect(result.details).toEqual({ changed: true });
	});

	it("what a tool resolves with must be a result of text and image blocks; anything else becomes an error result", async () => {
		const returned: unknown[] = [
			undefined,
			null,
			"plain text",
			{ content: "not a list" },
			{ content: [{ type: "text", text: "fine" }, { type: "audio" }] },
			{ content: [{ type: "text", text: 42 }] },
			{ content: [{ type: "image", data: "AAAA" }] },
			{ content: [{ type: "image", mimeType: "image/png" }] },
			{ content: [{ type: "video", data: "AAAA", mimeType: "video/mp4" }] },
			{ content: [7] },
			{ content: [null] },
			// Not an object, though it carries a valid content list.
			Object.assign(() => undefined, { content: [{ type: "text", text: "fine" }] }),
			{ content: [{ type: "text", text: "fine" }, { type: "image", data: "AAAA", mimeType: "image/png" }], details: {} },
		];
		const tool = makeTool("odd", async (id) => returned[Number(id.slice(1))] as never);
		const calls = returned.map((_, index) => toolCall("odd", {}, `c${index}`));
		const scripted = createScriptedModel([{ content: calls }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn });
		await agent.prompt("go");
		const results = agent.state.messages.filter((message): message is ToolResultMessage => message.role === "toolResult");
		expect(results.map((result) => result.isError)).toEqual([...returned.slice(0, -1).map(() => true), false]);
		expect(textOf(results[0])).toMatch(/^Tool "odd" returned undefined instead of a result/);
		for (const result of results.slice(0, -1)) expect(textOf(result)).toMatch(/^Tool "odd" returned .* instead of a result/);
	});

	// With a beforeToolCall hook the batch asks it first (preflight) and executes the call after the
	// machine's go-ahead: the cancel must reach the call as it runs, not its finished preflight.
	it.each([
		["", {}],
		[" that went through beforeToolCall", { beforeToolCall: async () => undefined }],
	])("a failing call with cancelSiblingsOnError cancels its running siblings%s: their signal aborts, their result says why", async (_name, options) => {
		let reason: unknown;
		const failer = makeTool(
			"failer",
			async () => {
				await new Promise((resolve) => setTimeout(resolve, 10));
				throw new Error("broke");
			},
			{ cancelSiblingsOnError: true },
		);
		const sibling = makeTool("sibling", async (_id, _params, signal) => {
			await Promise.race([whenAborted(signal), new Promise((resolve) => setTimeout(resolve, 500))]);
			reason = signal?.reason;
			return ok("late");
		});
		const scripted = createScriptedModel([{ content: [toolCall("failer", {}, "f"), toolCall("sibling", {}, "s")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [failer, sibling] }, streamFn: scripted.streamFn, ...options });
		await agent.prompt("go");
		await new Promise((resolve) => setTimeout(resolve, 0));
		expect((reason as Error | undefined)?.message).toBe("cancelled");
		const results = agent.state.messages.filter((message): message is ToolResultMessage => message.role === "toolResult");
		expect(results.map((result) => [result.toolCallId, textOf(result)])).toEqual([
			["f", "broke"],
			["s", "Cancelled: sibling tool call failer failed"],
		]);
	});

	it("streaming mode: a call cancelled while beforeToolCall decides is never executed", async () => {
		const executed: string[] = [];
		const failer = makeTool(
			"failer",
			async () => {
				executed.push("failer");
				await new Promise((resolve) => setTimeout(resolve, 10));
				throw new Error("broke");
			},
			{ cancelSiblingsOnError: true },
		);
		const victim = makeTool("victim", async () => {
			executed.push("victim");
			return ok("ran");
		});
		const scripted = createScriptedModel([{ content: [toolCall("failer", {}, "f"), toolCall("victim", {}, "v")] }, { content: "done" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [failer, victim] },
			streamFn: scripted.streamFn,
			toolExecution: "streaming",
			beforeToolCall: async ({ toolCall: asking }) => {
				if (asking.id === "v") await new Promise((resolve) => setTimeout(resolve, 30));
				return undefined;
			},
		});
		await agent.prompt("go");
		await new Promise((resolve) => setTimeout(resolve, 40));
		expect(executed).toEqual(["failer"]);
	});

	describe("its timer", () => {
		afterEach(() => {
			vi.restoreAllMocks();
		});

		it("puts each call's deadline on the shared timer: no timer per call, none polled, none out of range", async () => {
			const warnings: string[] = [];
			const onWarning = (warning: Error) => warnings.push(warning.name);
			process.on("warning", onWarning);
			const longTimers: unknown[] = [];
			const realSetTimeout = globalThis.setTimeout;
			vi.spyOn(globalThis, "setTimeout").mockImplementation(((callback: (...args: unknown[]) => void, delay?: number, ...rest: unknown[]) => {
				if ((delay ?? 0) > 1_000) longTimers.push(delay);
				return realSetTimeout(callback, delay, ...rest);
			}) as typeof setTimeout);
			const release = deferred();
			const slow = makeTool("slow", async () => {
				await release.promise;
				return ok("done");
			});
			const calls = Array.from({ length: 6 }, (_, index) => toolCall("slow", {}, `s${index}`));
			const scripted = createScriptedModel([{ content: calls }, { content: "done" }]);
			// 40 days: beyond Node's longest timer. Only the tools' deadlines (the stall watch of the
			// model's stream shares the timer).
			const agent = new Agent({ initialState: { model: scripted.model, tools: [slow] }, streamFn: scripted.streamFn, toolTimeoutMs: 40 * 24 * 3600 * 1000, streamIdleTimeoutMs: 0 });
			const run = agent.prompt("go");
			await new Promise((resolve) => realSetTimeout(resolve, 30));
			release.resolve();
			await run;
			await new Promise((resolve) => realSetTimeout(resolve, 10));
			process.off("warning", onWarning);
			expect(warnings).not.toContain("TimeoutOverflowWarning");
			// Six calls with a deadline each: at most one timer (none when the shared one is already armed earlier).
			expect(longTimers.length).toBeLessThanOrEqual(1);
			expect(agent.state.messages.filter((message) => message.role === "toolResult")).toHaveLength(6);
		});
	});
});

describe("compaction actor", () => {
	const long = (label: string) => `${label} ${"x".repeat(400)}`;
	const transcript = (...texts: [string, string][]): AgentMessage[] =>
		texts.map(([role, text]) => (role === "user" ? user(text) : assistant(text)));

	it("a custom summarize gets the history, the split turn's prefix, the earlier summary and the instructions", async () => {
		const requests: SummarizeRequest[] = [];
		const previous: AgentMessage = { role: "compactionSummary", summary: "earlier", tokensBefore: 10, messagesDropped: 2, timestamp: 0 } as unknown as AgentMessage;
		const messages = [previous, ...transcript(["user", long("u1")], ["assistant", long("a1")], ["user", long("u2")], ["assistant", "a2"])];
		const scripted = createScriptedModel([]);
		const agent = new Agent({
			initialState: { model: scripted.model, messages },
			streamFn: scripted.streamFn,
			compaction: {
				enabled: true,
				keepRecentTokens: 1,
				summarize: async (request) => {
					requests.push(request);
					return "summary";
				},
			},
		});
		const result = await agent.compact("keep names");
		expect(requests).toHaveLength(1);
		expect(requests[0]?.messages.map((message) => textOf(message))).toEqual([long("u1"), long("a1")]);
		expect(requests[0]?.turnPrefix.map((message) => textOf(message))).toEqual([long("u2")]);
		expect(requests[0]?.previousSummary).toBe("earlier");
		expect(requests[0]?.instructions).toBe("keep names");
		expect(result.splitTurn).toBe(true);
		expect(result.messagesKept).toBe(1);
	});

	it("a cut at a user message is not a split turn", async () => {
		const messages = transcript(["user", long("u1")], ["assistant", long("a1")], ["user", "u2"]);
		const scripted = createScriptedModel([]);
		const agent = new Agent({
			initialState: { model: scripted.model, messages },
			streamFn: scripted.streamFn,
			compaction: { enabled: true, keepRecentTokens: 1, summarize: async () => "summary" },
		});
		const result = await agent.compact();
		expect(result.splitTurn).toBe(false);
	});

	it("refuses to compact a transcript already within keepRecentTokens, saying so", async () => {
		const scripted = createScriptedModel([]);
		const agent = new Agent({
			initialState: { model: scripted.model, messages: transcript(["user", "hi"], ["assistant", "hello"]) },
			streamFn: scripted.streamFn,
			compaction: { enabled: true, summarize: async () => "summary" },
		});
		await expect(agent.compact()).rejects.toThrow("Nothing to compact: the transcript is already within keepRecentTokens");
	});

	it("the model summariser's output budget follows reserveTokens", async () => {
		const scripted = createScriptedModel([{ content: "the summary" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, messages: transcript(["user", long("u1")], ["assistant", long("a1")], ["user", "u2"]) },
			streamFn: scripted.streamFn,
			compaction: { enabled: true, keepRecentTokens: 1, reserveTokens: 2000 },
		});
		await agent.compact();
		expect(scripted.callOptions[0]?.maxTokens).toBe(1600);
	});

	it("abort() reaches a custom summarize through its signal", async () => {
		const { agent, summarizing, sawAbort } = agentWithHeldCompaction();
		const compacting = agent.compact();
		await summarizing;
		agent.abort();
		await expect(compacting).rejects.toThrow("Compaction aborted");
		await new Promise((resolve) => setTimeout(resolve, 0));
		expect(sawAbort()).toBe(true);
	});

	it("a listener that fails during an automatic compaction aborts it: the transcript is not replaced", async () => {
		const history = transcript(["user", long("u1")], ["assistant", long("a1")], ["user", long("u2")], ["assistant", long("a2")]);
		const scripted = createScriptedModel([{ content: "never" }], { model: { contextWindow: 300 } });
		const agent = new Agent({
			initialState: { model: scripted.model, messages: history },
			streamFn: scripted.streamFn,
			compaction: {
				enabled: true,
				keepRecentTokens: 1,
				reserveTokens: 100,
				// Ignores its signal, and answers after the listener's failure has aborted the run.
				summarize: () => new Promise((resolve) => setTimeout(() => resolve("summary"), 20)),
			},
		});
		const rec = record(agent);
		agent.subscribe((event) => {
			if (event.type === "auto_compaction_start") throw new Error("listener broke");
		});
		await agent.prompt("go");
		const end = rec.events.find((event) => event.type === "auto_compaction_end");
		expect(end).toMatchObject({ reason: "threshold", errorMessage: "Compaction failed: Compaction aborted" });
		expect(agent.state.messages.some((message) => (message.role as string) === "compactionSummary")).toBe(false);
		expect(scripted.calls).toHaveLength(0);
	});
});
