/**
 * Nothing lost, nothing stuck (issue 12): faults in the middle of a reply, careless tools and
 * callers, silent models and tools that ignore their abort signal. Each test names the defect
 * it pins; each failed before its fix.
 */
import { Type } from "typebox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createMemoryStore } from "../../src/durable/store.js";
import { createAssistantMessage } from "../../src/providers/assistant-message.js";
import { AssistantMessageEventStream } from "../../src/providers/event-stream.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentTool, ToolExecutionMode } from "../../src/types/agent.js";
import type { AssistantMessage, Message, ToolResultMessage } from "../../src/types/messages.js";
import type { Context, Model, SimpleStreamOptions } from "../../src/types/model.js";
import type { StreamFn } from "../../src/types/stream.js";
import { providerRequestViolations } from "../../src/testing/provider-requests.js";

const model: Model = createScriptedModel([]).model;

/** Unhandled rejections fail the test that caused them (a default Node process would exit). */
let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
	unhandled = [];
	process.on("unhandledRejection", onUnhandled);
});
afterEach(() => {
	process.off("unhandledRejection", onUnhandled);
	expect(unhandled).toEqual([]);
});

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
	let timer: ReturnType<typeof setTimeout> | undefined;
	return Promise.race([
		promise.finally(() => clearTimeout(timer)),
		new Promise<T>((_, reject) => {
			timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
		}),
	]);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A tool that records its calls and resolves when told (or at once). */
function workTool(onRun?: () => Promise<void> | void): AgentTool<ReturnType<typeof params>> {
	return {
		name: "work",
		label: "Work",
		description: "does work",
		parameters: params(),
		async execute(_id, { job }) {
			await onRun?.();
			return { content: [{ type: "text", text: `did ${job}` }], details: {} };
		},
	};
}
function params() {
	return Type.Object({ job: Type.String() });
}

/**
 * A reply that streams one complete tool call, waits for `release`, then fails the way a
 * dropped connection does (an error event with the partial content).
 */
function replyThatFailsAfterToolCall(release: Promise<void>, failure: "error" | "aborted"): StreamFn {
	return (m: Model, _context: Context, options?: SimpleStreamOptions) => {
		const stream = new AssistantMessageEventStream();
		const partial = createAssistantMessage(m);
		const call = { type: "toolCall" as const, id: "call_1", name: "work", arguments: { job: "a" } };
		void (async () => {
			stream.push({ type: "start", partial });
			partial.content.push({ type: "text", text: "On it." });
			stream.push({ type: "text_start", contentIndex: 0, partial });
			stream.push({ type: "text_end", contentIndex: 0, content: "On it.", partial });
			partial.content.push(call);
			stream.push({ type: "toolcall_start", contentIndex: 1, partial });
			stream.push({ type: "toolcall_end", contentIndex: 1, toolCall: call, partial });
			partial.content.push({ type: "text", text: "And then" });
			stream.push({ type: "text_start", contentIndex: 2, partial });
			await (failure === "aborted" ? new Promise((resolve) => options?.signal?.addEventListener("abort", resolve)) : release);
			const error: AssistantMessage = { ...partial, content: [...partial.content], stopReason: failure, errorMessage: failure === "error" ? "Connection error: socket hang up" : "Request was aborted" };
			stream.push({ type: "error", reason: failure, error });
		})();
		return stream;
	};
}

describe("a reply that fails after a streamed tool call ran (toolExecution: streaming)", () => {
	for (const failure of ["error", "aborted"] as const) {
		it(`keeps the call and its result answerable for the next request (${failure === "error" ? "connection reset" : "abort"})`, async () => {
			let toolDone!: () => void;
			const toolFinished = new Promise<void>((resolve) => (toolDone = resolve));
			const requests: Message[][] = [];
			const failing = replyThatFailsAfterToolCall(toolFinished, failure);
			const scripted = createScriptedModel([{ content: "Noted." }]);
			const agent = new Agent({
				initialState: { model, tools: [workTool(() => toolDone())] },
				toolExecution: "streaming",
				streamFn: (m, context, options) => {
					requests.push(structuredClone(context.messages));
					return requests.length === 1 ? failing(m, context, options) : scripted.streamFn(m, context, options);
				},
			});
			const run = agent.prompt("do a");
			if (failure === "aborted") {
				await toolFinished;
				agent.abort();
			}
			await within(run, 5_000, "the failed run");
			const roles = agent.state.messages.map((m) => `${m.role}${m.role === "assistant" ? `:${m.stopReason}` : ""}`);
			expect(roles).toEqual(["user", "assistant:toolUse", "toolResult", `assistant:${failure}`]);
			const committed = agent.state.messages[1] as AssistantMessage;
			expect(committed.content.map((block) => block.type)).toEqual(["text", "toolCall"]);
			expect((agent.state.messages[2] as ToolResultMessage).content).toEqual([{ type: "text", text: "did a" }]);
			expect(agent.state.errorMessage).toBe(failure === "error" ? "Connection error: socket hang up" : "Request was aborted");
			expect(providerRequestViolations(agent.state.messages)).toEqual([]);

			await agent.prompt("go on");
			const next = requests[1] ?? [];
			expect(next.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant", "user"]);
			expect(providerRequestViolations(agent.state.messages)).toEqual([]);
		});
	}

	it("keeps the call and its result when the agent is disposed mid-reply", async () => {
		let toolDone!: () => void;
		const toolFinished = new Promise<void>((resolve) => (toolDone = resolve));
		const agent = new Agent({
			initialState: { model, tools: [workTool(() => toolDone())] },
			toolExecution: "streaming",
			streamFn: replyThatFailsAfterToolCall(new Promise(() => {}), "error"),
		});
		const run = agent.prompt("do a");
		await toolFinished;
		await sleep(5);
		agent.dispose();
		await within(run, 5_000, "the disposed run");
		expect(agent.state.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
		expect(providerRequestViolations(agent.state.messages)).toEqual([]);
	});
});

describe("a tool that returns something other than a result", () => {
	for (const mode of ["parallel", "sequential", "streaming"] as ToolExecutionMode[]) {
		it(`gets an error result that says what came back, and the run ends (${mode})`, async () => {
			const careless: AgentTool = { ...workTool(), name: "careless", execute: async () => undefined as never };
			const scripted = createScriptedModel([{ content: [{ type: "toolCall", name: "careless", arguments: { job: "x" } }] }, { content: "ok" }]);
			const agent = new Agent({ initialState: { model: scripted.model, tools: [careless] }, streamFn: scripted.streamFn, toolExecution: mode });
			await within(agent.prompt("go"), 5_000, "the run");
			const result = agent.state.messages.find((m): m is ToolResultMessage => m.role === "toolResult");
			expect(result?.isError).toBe(true);
			expect(result?.content[0]).toEqual({ type: "text", text: expect.stringContaining('Tool "careless" returned undefined instead of a result') });
			expect(agent.actor.getSnapshot().value).toBe("idle");
		});
	}

	it("shows the content of a thrown non-Error value, not [object Object]", async () => {
		const thrower: AgentTool = { ...workTool(), name: "thrower", execute: async () => Promise.reject({ code: "EPERM", path: "/etc/x" }) };
		const scripted = createScriptedModel([{ content: [{ type: "toolCall", name: "thrower", arguments: { job: "x" } }] }, { content: "ok" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [thrower] }, streamFn: scripted.streamFn });
		await agent.prompt("go");
		const result = agent.state.messages.find((m): m is ToolResultMessage => m.role === "toolResult");
		expect(result?.content).toEqual([{ type: "text", text: "{ code: 'EPERM', path: '/etc/x' }" }]);
	});
});

describe("long sessions", () => {
	it("leaves no pending work behind a finished stream, however fast the stream (no retained transcripts)", async () => {
		// A stream paced by microtasks never lets the event loop reach its check phase; anything
		// scheduled there (and all it holds, the transcript included) piled up per call.
		const scripted = createScriptedModel([], { whenExhausted: { content: "a reply long enough to be split into several deltas" } });
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		const immediates = () => process.getActiveResourcesInfo().filter((kind) => kind === "Immediate").length;
		const before = immediates();
		for (let index = 0; index < 30; index++) await agent.prompt(`prompt ${index}`);
		expect(immediates() - before).toBeLessThanOrEqual(1);
		agent.dispose();
	});
});

describe("a model that goes silent", () => {
	function silentAfter(events: "text" | "nothing", seen: { signal?: AbortSignal | undefined; options?: SimpleStreamOptions | undefined }): StreamFn {
		return (m, _context, options) => {
			seen.signal = options?.signal;
			seen.options = options;
			const stream = new AssistantMessageEventStream();
			if (events === "text") {
				const partial = createAssistantMessage(m, { content: [{ type: "text", text: "Let me th" }] });
				stream.push({ type: "start", partial });
				stream.push({ type: "text_start", contentIndex: 0, partial });
				stream.push({ type: "text_delta", contentIndex: 0, delta: "Let me th", partial });
			}
			return stream; // and then nothing, ever
		};
	}

	for (const events of ["text", "nothing"] as const) {
		it(`ends the call as an error that says it stalled, keeping what streamed (${events === "text" ? "after some text" : "no event at all"})`, async () => {
			const seen: { signal?: AbortSignal | undefined } = {};
			const agent = new Agent({ initialState: { model }, streamFn: silentAfter(events, seen), streamIdleTimeoutMs: 200 });
			await within(agent.prompt("hello"), 3_000, "the stalled run");
			const last = agent.state.messages.at(-1) as AssistantMessage;
			expect(last.stopReason).toBe("error");
			expect(last.errorMessage).toMatch(/stream stalled: no content arrived for 0.2 s \(streamIdleTimeoutMs; keep-alive pings do not count\)/);
			expect(last.content).toEqual(events === "text" ? [{ type: "text", text: "Let me th" }] : []);
			expect(seen.signal?.aborted).toBe(true); // the request itself was cancelled
		});
	}

	it("gives each of the run's model calls a signal of its own, not the run's", async () => {
		const scripted = createScriptedModel([{ content: [{ type: "toolCall", name: "noop", arguments: {} }] }, { content: "done" }, { content: "again" }]);
		const signals: (AbortSignal | undefined)[] = [];
		const noop: AgentTool = { name: "noop", label: "noop", description: "does nothing", parameters: Type.Object({}), execute: async () => ({ content: [], details: {} }) };
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [noop] },
			streamFn: (m, context, options) => {
				signals.push(options?.signal);
				return scripted.streamFn(m, context, options);
			},
		});
		let runSignal: AbortSignal | undefined;
		agent.subscribe((event, signal) => {
			if (event.type === "agent_start") runSignal = signal;
		});
		await agent.prompt("go");
		expect(signals).toHaveLength(2);
		expect(signals[1]).not.toBe(signals[0]);
		expect(signals[0]).not.toBe(runSignal);
		expect(signals[0]?.aborted).toBe(false);
		await agent.prompt("more");
		expect(signals[2]).not.toBe(signals[0]);
	});

	// Preparing the request is not the model's silence: a transformContext or getApiKey (an OAuth
	// refresh, say) slower than streamIdleTimeoutMs must not end the call as stalled.
	for (const step of ["transformContext", "getApiKey"] as const) {
		it(`times the model from the request on, not while ${step} prepares it`, async () => {
			const scripted = createScriptedModel([{ content: "answered" }]);
			const slow = () => new Promise<void>((resolve) => setTimeout(resolve, 150));
			const agent = new Agent({
				initialState: { model: scripted.model },
				streamFn: scripted.streamFn,
				streamIdleTimeoutMs: 40,
				...(step === "transformContext" ? { transformContext: async (messages) => (await slow(), messages) } : { getApiKey: async () => (await slow(), "key") }),
			});
			await within(agent.prompt("hello"), 3_000, "the run");
			const last = agent.state.messages.at(-1) as AssistantMessage;
			expect(last.errorMessage).toBeUndefined();
			expect(last.stopReason).toBe("stop");
			expect(scripted.calls).toHaveLength(1);
		});
	}

	// The watch counts the events read: a reply that keeps arriving, each event well inside the
	// timeout, is not stalled however long it takes in all.
	it("does not stall a reply that trickles in for longer than the timeout", async () => {
		const streamFn: StreamFn = (m) => {
			const stream = new AssistantMessageEventStream();
			const partial = createAssistantMessage(m, { content: [{ type: "text", text: "" }] });
			const text = partial.content[0] as { text: string };
			const events: Array<() => void> = [() => stream.push({ type: "start", partial }), () => stream.push({ type: "text_start", contentIndex: 0, partial })];
			for (let index = 0; index < 12; index++)
				events.push(() => {
					text.text += `${index} `;
					stream.push({ type: "text_delta", contentIndex: 0, delta: `${index} `, partial });
				});
			events.push(() => stream.push({ type: "done", reason: "stop", message: { ...partial, stopReason: "stop" } }));
			const next = () => {
				events.shift()?.();
				if (events.length > 0) setTimeout(next, 15);
			};
			next();
			return stream;
		};
		const agent = new Agent({ initialState: { model }, streamFn, streamIdleTimeoutMs: 60 });
		await within(agent.prompt("hello"), 3_000, "the trickling run");
		const last = agent.state.messages.at(-1) as AssistantMessage;
		expect(last.errorMessage).toBeUndefined();
		expect(last.stopReason).toBe("stop");
		expect(last.content).toEqual([{ type: "text", text: "0 1 2 3 4 5 6 7 8 9 10 11 " }]);
	});

	it("passes the request timeout, retries and reply bound to the provider", async () => {
		const seen: { options?: SimpleStreamOptions | undefined } = {};
		const agent = new Agent({ initialState: { model }, streamFn: silentAfter("nothing", seen), timeoutMs: 1234, maxRetries: 1, maxReplyBytes: 4321, streamIdleTimeoutMs: 50 });
		await agent.prompt("hello");
		expect(seen.options).toMatchObject({ timeoutMs: 1234, maxRetries: 1, maxReplyBytes: 4321 });
	});
});

describe("abort() with a tool that ignores its signal", () => {
	for (const mode of ["parallel", "sequential", "streaming"] as ToolExecutionMode[]) {
		it(`gives up on it after toolAbortGraceMs, ends the run and ignores the late result (${mode})`, async () => {
			let started!: () => void;
			const running = new Promise<void>((resolve) => (started = resolve));
			let finishLate!: () => void;
			const stubborn: AgentTool = {
				...workTool(),
				name: "stubborn",
				execute: async () => {
					started();
					await new Promise<void>((resolve) => (finishLate = resolve));
					return { content: [{ type: "text", text: "finally" }], details: {} };
				},
			};
			const scripted = createScriptedModel([{ content: [{ type: "toolCall", name: "stubborn", arguments: { job: "x" } }] }, { content: "next" }]);
			const agent = new Agent({ initialState: { model: scripted.model, tools: [stubborn] }, streamFn: scripted.streamFn, toolExecution: mode, toolAbortGraceMs: 100 });
			const events: string[] = [];
			agent.subscribe((event) => {
				events.push(event.type);
			});
			const run = agent.prompt("go");
			await running;
			agent.abort();
			await within(run, 3_000, "the aborted run");
			const result = agent.state.messages.find((m): m is ToolResultMessage => m.role === "toolResult");
			expect(result?.content[0]).toEqual({ type: "text", text: expect.stringContaining('Tool "stubborn" did not stop within 100 ms') });
			const count = events.length;
			finishLate();
			await sleep(20);
			expect(events.length).toBe(count); // the late result changes nothing
			await agent.prompt("again");
			expect(providerRequestViolations(agent.state.messages)).toEqual([]);
		});
	}
});

describe("bad input at the API boundary", () => {
	const cases: [string, (agent: Agent) => unknown, RegExp][] = [
		["prompt(undefined)", (agent) => agent.prompt(undefined as never), /^prompt\(input\): expected a text, a message or a list of messages, got undefined/],
		["prompt(null)", (agent) => agent.prompt(null as never), /^prompt\(input\): expected a text, a message or a list of messages, got null/],
		["prompt(42)", (agent) => agent.prompt(42 as never), /^prompt\(input\): expected .* got 42/],
		["prompt({})", (agent) => agent.prompt({} as never), /^prompt\(message\)\.role: expected a role/],
		["prompt([null])", (agent) => agent.prompt([null] as never), /^prompt\(messages\)\[0\]: expected a message object/],
		["prompt(text, a text/plain image)", (agent) => agent.prompt("see", [{ type: "image", data: "aGk=", mimeType: "text/plain" }]), /mimeType: expected an image MIME type such as "image\/png", got "text\/plain"/],
		["a user message with bad content", (agent) => agent.prompt({ role: "user", content: 42 } as never), /^prompt\(message\)\.content: expected a string or a list of text and image blocks/],
		// Taken before, stored, and every later request of the session failed on it ("reading 'length'").
		["an assistant message without content", (agent) => agent.prompt([{ role: "user", content: "hi", timestamp: 0 }, { role: "assistant" }] as never), /^prompt\(messages\)\[1\]\.content: expected a list of content blocks/],
		["an assistant block without a type", (agent) => agent.prompt({ role: "assistant", content: [{ text: "x" }] } as never), /^prompt\(message\)\.content\[0\]: expected a content block with a type/],
		["a tool result without its call's id", (agent) => agent.prompt({ role: "toolResult", content: [], toolName: "t" } as never), /^prompt\(message\)\.toolCallId: expected the id of the tool call it answers/],
	];
	for (const [name, call, message] of cases) {
		it(`${name} rejects with a TypeError and records nothing`, async () => {
			const scripted = createScriptedModel([{ content: "fine" }]);
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
			await expect(Promise.resolve().then(() => call(agent))).rejects.toThrow(TypeError);
			await expect(Promise.resolve().then(() => call(agent))).rejects.toThrow(message);
			expect(agent.state.messages).toEqual([]);
			expect(agent.state.isStreaming).toBe(false);
			await agent.prompt("hello");
			expect(agent.state.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
		});
	}

	it("steer(null) and followUp(null) throw and queue nothing", () => {
		const agent = new Agent();
		expect(() => agent.steer(null as never)).toThrow(/^steer\(message\): expected a message object/);
		expect(() => agent.followUp(null as never)).toThrow(/^followUp\(message\): expected a message object/);
		expect(() => agent.steer({ content: "x" } as never)).toThrow(/^steer\(message\)\.role/);
		expect(agent.hasQueuedMessages()).toBe(false);
	});

	it("subscribe() of something that is not a function throws, and the runs go on unharmed", async () => {
		const scripted = createScriptedModel([{ content: "fine" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		expect(() => agent.subscribe(42 as never)).toThrow(TypeError);
		expect(() => agent.subscribe({ handleEvent() {} } as never)).toThrow(/^subscribe\(listener\): expected a function \(event, signal\) => void, got/);
		expect(() => new Agent({ listeners: [null as never] })).toThrow(/^subscribe\(listener\): expected a function/);
		await agent.prompt("hello");
		expect(agent.state.errorMessage).toBeUndefined();
		expect(agent.state.messages.map((m) => `${m.role}:${(m as { stopReason?: string }).stopReason ?? ""}`)).toEqual(["user:", "assistant:stop"]);
	});

	it("a queue mode it does not have is refused where it is given: the constructor and the setters (it used to fail the next prompt with 'queues.steering is not iterable')", async () => {
		expect(() => new Agent({ steeringMode: "everything" as never })).toThrow(/^steeringMode must be "all" or "one-at-a-time", got "everything"/);
		expect(() => new Agent({ followUpMode: 1 as never })).toThrow(/^followUpMode must be "all" or "one-at-a-time", got 1/);
		const scripted = createScriptedModel([{ content: "fine" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn, steeringMode: "all" });
		expect(() => {
			agent.steeringMode = "everything" as never;
		}).toThrow(TypeError);
		expect(() => {
			agent.followUpMode = undefined as never;
		}).toThrow(/^agent\.followUpMode must be "all" or "one-at-a-time", got undefined/);
		expect([agent.steeringMode, agent.followUpMode]).toEqual(["all", "one-at-a-time"]);
		await agent.prompt("hello");
		expect(agent.state.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
	});

	it("a state no run can start with is refused when the run would start, recording nothing: with model null the process used to crash", async () => {
		const cases: [string, (agent: Agent) => void, RegExp][] = [
			["model null", (agent) => (agent.state.model = null as never), /^agent\.state\.model must be a model object, got null/],
			["model undefined", (agent) => (agent.state.model = undefined as never), /^agent\.state\.model must be a model object, got undefined/],
			["systemPrompt 42", (agent) => (agent.state.systemPrompt = 42 as never), /^agent\.state\.systemPrompt must be a string, got 42/],
		];
		for (const [, spoil, message] of cases) {
			const scripted = createScriptedModel([{ content: "fine" }]);
			const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
			const model = agent.state.model;
			spoil(agent);
			for (const start of [() => agent.prompt("hello"), () => agent.continue()]) {
				const thrown = await Promise.resolve().then(start).then(() => undefined, (error: unknown) => error);
				expect(thrown).toBeInstanceOf(TypeError);
				expect((thrown as Error).message).toMatch(message);
			}
			expect(agent.state.messages).toEqual([]);
			agent.state.model = model;
			agent.state.systemPrompt = "";
			await agent.prompt("hello");
			expect(agent.state.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
		}
	});

	it("options no agent can be made with are refused with a TypeError naming them: a store without a sessionId used to make an agent that stored nothing", async () => {
		const store = createMemoryStore();
		const snapshot = new Agent().snapshot();
		const refusals: [() => unknown, RegExp][] = [
			[() => new Agent({ store }), /^new Agent\(options\)\.sessionId: a store keeps sessions by id: expected a non-empty text, got undefined/],
			[() => new Agent({ store, sessionId: "" }), /^new Agent\(options\)\.sessionId: .*got ""/],
			[() => new Agent({ store, sessionId: 42 as never }), /^new Agent\(options\)\.sessionId: .*got 42/],
			[() => new Agent({ store: {} as never, sessionId: "s" }), /^new Agent\(options\)\.store: expected an AgentStore .*\(no load, saveSnapshot, appendJournal\)/],
			[() => new Agent({ store: { ...store, appendJournal: undefined } as never, sessionId: "s" }), /\(no appendJournal\)$/],
			[() => new Agent(null as never), /^new Agent\(options\): expected an object of options, got null/],
			[() => Agent.restore(snapshot, { store }), /^Agent\.restore\(options\)\.sessionId: a store keeps sessions by id/],
			[() => Agent.restore(snapshot, "x" as never), /^Agent\.restore\(options\): expected an object of options, got "x"/],
		];
		for (const [make, message] of refusals) expect(make).toThrow(message);
		for (const options of [undefined, {}, { sessionId: "s" }] as never[]) await expect(Agent.load(options)).rejects.toThrow(/^Agent\.load\(options\)\.(store|sessionId): /);
		expect(store.sessions()).toEqual([]);
		// What stays as it was: a sessionId without a store (pi's, passed to the provider), a restore whose snapshot names the session.
		expect(new Agent({ sessionId: "" }).sessionId).toBe("");
		const named = new Agent({ store, sessionId: "s1" });
		expect(Agent.restore(named.snapshot(), { store: createMemoryStore() }).sessionId).toBe("s1");
	});

	it("state.messages refuses entries that are not messages", () => {
		const agent = new Agent();
		expect(() => {
			agent.state.messages = [{ role: "user", content: "ok", timestamp: 0 }, null as never];
		}).toThrow(/^state\.messages\[1\]: expected a message object/);
		expect(agent.state.messages).toEqual([]);
	});
});

describe("a listener that throws", () => {
	it("aborts the run, and its error is the run's errorMessage", async () => {
		const scripted = createScriptedModel([{ content: "a long enough reply to stream in several deltas", delayMs: 2 }], { chunkSize: 3 });
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		agent.subscribe((event) => {
			if (event.type === "message_update") throw new Error("listener exploded");
		});
		await within(agent.prompt("hi"), 5_000, "the run");
		expect(agent.state.errorMessage).toBe("listener exploded");
		const last = agent.state.messages.at(-1) as AssistantMessage;
		expect([last.stopReason, last.errorMessage]).toEqual(["aborted", "listener exploded"]);
	});
});
