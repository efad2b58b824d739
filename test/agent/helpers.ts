import { expect } from "vitest";
import { Agent } from "../../src/agent.js";
import { AssistantMessageEventStream } from "../../src/providers/event-stream.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentEvent, AgentTool, AgentToolResult, AgentToolUpdateCallback } from "../../src/types/agent.js";
import { emptyUsage } from "../../src/types/content.js";
import type { ToolCall } from "../../src/types/content.js";
import type { AgentMessage, AssistantMessage, UserMessage } from "../../src/types/messages.js";
import type { Model } from "../../src/types/model.js";
import type { AssistantMessageEvent, StreamFn } from "../../src/types/stream.js";
import { Counts, countsOf, toolCallIdsOf } from "../../src/testing/id-counts.js";

// ---------------------------------------------------------------------------------------
// Messages

/** A value through JSON, as a snapshot travels between processes (and a store keeps it). */
export function throughJson<T>(value: T): T {
	return JSON.parse(JSON.stringify(value)) as T;
}

/** A user message with one text block. */
export function user(text: string): UserMessage {
	return { role: "user", content: [{ type: "text", text }], timestamp: Date.now() };
}

/** A complete assistant message (for transcripts and hand-made streams). */
export function assistant(
	content: AssistantMessage["content"] | string,
	stopReason: AssistantMessage["stopReason"] = "stop",
	errorMessage?: string,
): AssistantMessage {
	const message: AssistantMessage = {
		role: "assistant",
		content: typeof content === "string" ? [{ type: "text", text: content }] : content,
		api: "scripted",
		provider: "scripted",
		model: "scripted-1",
		usage: emptyUsage(),
		stopReason,
		timestamp: Date.now(),
	};
	if (errorMessage !== undefined) message.errorMessage = errorMessage;
	return message;
}

/** A tool call content block. */
export function call(id: string, name: string, args: Record<string, unknown> = {}): ToolCall {
	return { type: "toolCall", id, name, arguments: args };
}

/** The text of a message's text blocks (string content as is). */
export function textOf(message: unknown): string {
	const content = (message as { content?: unknown } | undefined)?.content;
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.filter((block): block is { type: "text"; text: string } => (block as { type?: string }).type === "text")
		.map((block) => block.text)
		.join("");
}

/** Roles of a transcript; assistants as `assistant(stopReason)`, tool results as `toolResult:<id>`. */
export function roles(messages: readonly unknown[]): string[] {
	return messages.map((message) => {
		const m = message as { role?: string; stopReason?: string; toolCallId?: string };
		if (m.role === "assistant") return `assistant(${m.stopReason})`;
		if (m.role === "toolResult") return `toolResult:${m.toolCallId}`;
		return String(m.role);
	});
}

/** Plain roles of a transcript. */
export function plainRoles(messages: readonly unknown[]): string[] {
	return messages.map((message) => String((message as { role?: string }).role));
}

// ---------------------------------------------------------------------------------------
// Promises

export interface Deferred<T = void> {
	promise: Promise<T>;
	resolve: (value: T) => void;
	reject: (error: unknown) => void;
}

/** A promise with its resolve/reject exposed: the barrier of the choreography tests. */
export function deferred<T = void>(): Deferred<T> {
	let resolve!: (value: T) => void;
	let reject!: (error: unknown) => void;
	const promise = new Promise<T>((res, rej) => {
		resolve = res;
		reject = rej;
	});
	return { promise, resolve, reject };
}

/** Real time, for the few tests that need it (timeouts). */
export function sleep(ms: number): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Lets queued microtasks and a macrotask turn run. */
export async function flush(turns = 3): Promise<void> {
	for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

// ---------------------------------------------------------------------------------------
// Event normalisation (pi's trace notation of reference §1.6)

type Loose = Record<string, unknown>;

function messageLabel(message: unknown, withText: boolean): string {
	const m = (message ?? {}) as Loose;
	const role = m["role"];
	if (role === "user") return `user(${textOf(m)})`;
	if (role === "assistant") {
		const error = typeof m["errorMessage"] === "string" ? `:${m["errorMessage"]}` : "";
		return `assistant(${String(m["stopReason"])}${error})`;
	}
	if (role === "toolResult") {
		const err = m["isError"] ? ",err" : "";
		const text = withText ? `:${textOf(m)}` : "";
		return `toolResult(${String(m["toolCallId"])}${err}${text})`;
	}
	return String(role);
}

/**
 * One event in pi's trace notation: `message_start:user(hi)`, `message_end:assistant(stop)`
 * (`message_start:assistant` without the stopReason),
 * `tool_execution_end(t1,err:boom)`, `turn_end(toolResults=2)`. With `withText`, tool
 * results also carry their text.
 */
export function describeEvent(event: { type: string }, withText = false): string {
	const e = event as Loose & { type: string };
	switch (e.type) {
		case "message_start":
			// An assistant's message_start carries the provider's partial, whose stopReason is
			// whatever the provider put there first: the label shows the role only.
			if ((e["message"] as Loose | undefined)?.["role"] === "assistant") return "message_start:assistant";
			return `${e.type}:${messageLabel(e["message"], withText)}`;
		case "message_end":
			return `${e.type}:${messageLabel(e["message"], withText)}`;
		case "message_update":
			return `message_update:${String((e["assistantMessageEvent"] as Loose | undefined)?.["type"])}`;
		case "tool_execution_start":
		case "tool_execution_update":
			return `${e.type}(${String(e["toolCallId"])})`;
		case "tool_execution_end": {
			const text = textOf(e["result"]);
			if (e["isError"]) return `tool_execution_end(${String(e["toolCallId"])},err:${text})`;
			return withText ? `tool_execution_end(${String(e["toolCallId"])}:${text})` : `tool_execution_end(${String(e["toolCallId"])})`;
		}
		case "turn_end":
			return `turn_end(toolResults=${(e["toolResults"] as unknown[]).length})`;
		case "agent_end":
			return `agent_end(messages=${(e["messages"] as unknown[]).length})`;
		default:
			return e.type;
	}
}

/** Collapses runs of identical lines into `line xN`, as the reference traces do. */
export function collapse(lines: string[]): string[] {
	const out: string[] = [];
	let i = 0;
	while (i < lines.length) {
		let j = i;
		while (j + 1 < lines.length && lines[j + 1] === lines[i]) j++;
		const count = j - i + 1;
		out.push(count > 1 ? `${lines[i]} x${count}` : (lines[i] as string));
		i = j + 1;
	}
	return out;
}

/** Drops message_update events (for comparisons that do not care about chunking). */
export function withoutUpdates(lines: string[]): string[] {
	return lines.filter((line) => !line.startsWith("message_update"));
}

export interface Recorder {
	events: AgentEvent[];
	/** Events in trace notation. */
	lines(withText?: boolean): string[];
	/** Trace notation without message_update lines. */
	skeleton(): string[];
	types(): string[];
}

/** Subscribes a recording listener (first, so later listeners run after it). */
export function record(agent: Pick<Agent, "subscribe">): Recorder {
	const events: AgentEvent[] = [];
	agent.subscribe((event) => {
		events.push(event);
	});
	return recorderOf(events);
}

export function recorderOf(events: AgentEvent[]): Recorder {
	return {
		events,
		lines: (withText = false) => events.map((event) => describeEvent(event, withText)),
		skeleton: () => withoutUpdates(events.map((event) => describeEvent(event))),
		types: () => events.map((event) => event.type),
	};
}

// ---------------------------------------------------------------------------------------
// Tools

/** `{ value: string }` as plain JSON Schema. */
export const valueSchema = {
	type: "object",
	properties: { value: { type: "string" } },
	additionalProperties: true,
} as const;

/** `{}` as plain JSON Schema. */
export const anySchema = { type: "object", properties: {} } as const;

export type ToolExecute = (
	toolCallId: string,
	params: Record<string, unknown>,
	signal?: AbortSignal,
	onUpdate?: AgentToolUpdateCallback<unknown>,
) => Promise<AgentToolResult<unknown>>;

/** A text result. */
export function ok(text: string, details: unknown = {}): AgentToolResult<unknown> {
	return { content: [{ type: "text", text }], details };
}

/** A tool over a plain JSON schema (accepts any object). */
export function makeTool(
	name: string,
	execute: ToolExecute,
	extra: Partial<AgentTool<object, unknown>> = {},
): AgentTool<object, unknown> {
	// The schema accepts any object, so the validated arguments are always a record.
	return { name, label: name, description: `The ${name} tool`, parameters: anySchema, execute: execute as AgentTool<object, unknown>["execute"], ...extra };
}

/** A tool that answers `echo:<value>` immediately and logs its calls. */
export function echoTool(log: string[] = [], name = "echo"): AgentTool<object, unknown> {
	return makeTool(name, async (_id, params) => {
		log.push(String(params["value"]));
		return ok(`echo:${String(params["value"])}`);
	});
}

/** Resolves when the tool's signal aborts (immediately if already aborted). */
export function whenAborted(signal: AbortSignal | undefined): Promise<void> {
	return new Promise((resolve) => {
		if (!signal || signal.aborted) return resolve();
		signal.addEventListener("abort", () => resolve(), { once: true });
	});
}

// ---------------------------------------------------------------------------------------
// Hand-made stream functions (pi-specific stream shapes)

/** A stream function whose stream pushes only `done` (no `start`, no updates): pi's own mock. */
export function doneOnlyStreamFn(reply: (callIndex: number) => AssistantMessage): StreamFn & { calls: number } {
	const fn = Object.assign(
		(() => {
			const message = reply(fn.calls++);
			const stream = new AssistantMessageEventStream();
			queueMicrotask(() => {
				if (message.stopReason === "error" || message.stopReason === "aborted") {
					stream.push({ type: "error", reason: message.stopReason, error: message });
				} else {
					stream.push({ type: "done", reason: message.stopReason, message });
				}
			});
			return stream;
		}) as StreamFn,
		{ calls: 0 },
	);
	return fn;
}

/**
 * A stream function that emits `start`, then waits for the abort signal and ends with
 * `error{aborted}` (pi's A8/A9 mock). `started` resolves when the first call streamed `start`.
 */
export function waitForAbortStreamFn(): { streamFn: StreamFn; started: Promise<void>; calls: () => number } {
	const started = deferred();
	let calls = 0;
	const streamFn: StreamFn = (model: Model, _context, options) => {
		calls++;
		const stream = new AssistantMessageEventStream();
		const partial: AssistantMessage = {
			...assistant([], "stop"),
			api: model.api,
			provider: model.provider,
			model: model.id,
		};
		queueMicrotask(() => {
			stream.push({ type: "start", partial });
			started.resolve();
			void whenAborted(options?.signal).then(() => {
				stream.push({
					type: "error",
					reason: "aborted",
					error: { ...partial, stopReason: "aborted", errorMessage: "Request was aborted" },
				});
			});
		});
		return stream;
	};
	return { streamFn, started: started.promise, calls: () => calls };
}

/** A stream the test writes to by hand, event by event; see `manualStream`. */
export interface ManualStream {
	/** Opens a new stream on each call; the test writes to the latest one. */
	streamFn: StreamFn;
	/** Resolves once the first call has opened its stream. */
	opened: Promise<void>;
	/** How many calls the stream function has had. */
	calls(): number;
	/** Pushes any event onto the latest stream, as it is. */
	push(event: AssistantMessageEvent): void;
	/** `start`, with the content streamed so far as its partial. */
	start(): void;
	/** A `text_delta` that makes `value` the reply's only text block. */
	text(value: string): void;
	/** A `toolcall_end` that appends `toolCall` to the reply. */
	toolCallEnd(toolCall: ToolCall): void;
	/** An `error` that ends the reply with what streamed, stopReason "error" and this message. */
	fail(errorMessage: string): void;
}

/**
 * A stream function whose events the test pushes by hand, for choreographies that act between
 * two events (abort after a call started, a listener failing mid-reply). The helpers other than
 * `push` keep the reply's content and give every event a fresh partial of it, as real providers'
 * snapshots differ from event to event; a new call starts with empty content.
 *
 * @example
 * const hand = manualStream();
 * const agent = new Agent({ initialState: { model }, streamFn: hand.streamFn });
 * const run = agent.prompt("go");
 * await hand.opened;
 * hand.start();
 * hand.fail("connection lost");
 * await run;
 */
export function manualStream(): ManualStream {
	let stream: AssistantMessageEventStream | undefined;
	let calls = 0;
	let content: AssistantMessage["content"] = [];
	const opened = deferred();
	const partial = (): AssistantMessage => assistant([...content], "stop");
	const push = (event: AssistantMessageEvent) => stream?.push(event);
	return {
		streamFn: () => {
			stream = new AssistantMessageEventStream();
			calls++;
			content = [];
			opened.resolve();
			return stream;
		},
		opened: opened.promise,
		calls: () => calls,
		push,
		start: () => push({ type: "start", partial: partial() }),
		text: (value) => {
			content = [{ type: "text", text: value }];
			push({ type: "text_delta", contentIndex: 0, delta: value, partial: partial() });
		},
		toolCallEnd: (toolCall) => {
			content = [...content, toolCall];
			push({ type: "toolcall_end", contentIndex: content.length - 1, toolCall, partial: partial() });
		},
		fail: (errorMessage) => push({ type: "error", reason: "error", error: { ...partial(), stopReason: "error", errorMessage } }),
	};
}

/** A stream function that throws synchronously (a contract violation). */
export function throwingStreamFn(message: string): StreamFn {
	return () => {
		throw new Error(message);
	};
}

// ---------------------------------------------------------------------------------------
// Invariants

/**
 * A failed (error/aborted) assistant message: its tool calls are never run and providers
 * never replay it, so they need no results.
 */
function failed(message: AssistantMessage): boolean {
	return message.stopReason === "error" || message.stopReason === "aborted";
}

/**
 * Asserts one run's events nest: agent_start first and agent_end last (once each), turns
 * alternate start/end, messages open and close without interleaving, every tool execution
 * that starts ends exactly once (no update after its end), and every tool call of an
 * assistant message gets exactly one tool result message.
 */
export function expectWellFormedRun(events: readonly AgentEvent[]): void {
	const types = events.map((event) => event.type);
	expect(types[0]).toBe("agent_start");
	expect(types[types.length - 1]).toBe("agent_end");
	expect(types.filter((type) => type === "agent_start")).toHaveLength(1);
	expect(types.filter((type) => type === "agent_end")).toHaveLength(1);

	let inTurn = false;
	let openMessage: string | undefined;
	// Counted by id: two calls of one reply may share an id, and each runs and ends on its own.
	const toolOpen = new Counts();
	const toolStarted = new Counts();
	/** Calls of the run's assistant messages so far, and of the one streaming (streaming tool execution starts calls before it ends). */
	const runCalls = new Counts();
	let streamingCalls = new Counts();
	const toolCallIds: string[] = [];
	const resultIds: string[] = [];
	/** Calls waiting for a decision (approval_requested without its approval_resolved yet). */
	const awaiting = new Counts();
	for (const event of events.slice(1, -1)) {
		const where = describeEvent(event);
		switch (event.type) {
			case "turn_start":
				expect(inTurn, `turn_start inside a turn: ${where}`).toBe(false);
				inTurn = true;
				break;
			case "turn_end":
				expect(inTurn, "turn_end outside a turn").toBe(true);
				expect(openMessage, "turn_end with an open message").toBeUndefined();
				expect(toolOpen.keys(), "turn_end with running tools").toEqual([]);
				inTurn = false;
				break;
			case "message_start":
				expect(inTurn, `message outside a turn: ${where}`).toBe(true);
				expect(openMessage, `message_start while ${openMessage} is open`).toBeUndefined();
				openMessage = (event.message as { role?: string }).role;
				break;
			case "message_update":
				expect(openMessage).toBe("assistant");
				streamingCalls = countsOf(toolCallIdsOf(event.message));
				break;
			case "message_end": {
				const role = (event.message as { role?: string }).role;
				expect(openMessage, `message_end without start: ${where}`).toBe(role);
				openMessage = undefined;
				if (role === "assistant") {
					for (const id of toolCallIdsOf(event.message)) runCalls.add(id);
					streamingCalls = new Counts();
				}
				if (role === "assistant" && !failed(event.message as AssistantMessage)) toolCallIds.push(...toolCallIdsOf(event.message));
				if (role === "toolResult") resultIds.push((event.message as { toolCallId: string }).toolCallId);
				break;
			}
			case "tool_execution_start": {
				expect(inTurn).toBe(true);
				const calls = runCalls.get(event.toolCallId) + streamingCalls.get(event.toolCallId);
				expect(toolStarted.get(event.toolCallId), `tool started twice: ${where}`).toBeLessThan(calls);
				toolStarted.add(event.toolCallId);
				toolOpen.add(event.toolCallId);
				break;
			}
			case "tool_execution_update":
				expect(toolOpen.get(event.toolCallId), `update outside execution: ${where}`).toBeGreaterThan(0);
				break;
			case "tool_execution_end":
				expect(toolOpen.get(event.toolCallId), `end without start: ${where}`).toBeGreaterThan(0);
				expect(awaiting.get(event.toolCallId), `end while waiting for approval: ${where}`).toBe(0);
				toolOpen.add(event.toolCallId, -1);
				break;
			case "approval_requested":
				expect(toolOpen.get(event.toolCallId), `approval asked for a call not started: ${where}`).toBeGreaterThan(0);
				expect(awaiting.get(event.toolCallId), `approval asked twice: ${where}`).toBeLessThan(toolOpen.get(event.toolCallId));
				awaiting.add(event.toolCallId);
				break;
			case "approval_resolved":
				expect(awaiting.get(event.toolCallId), `decision without a request: ${where}`).toBeGreaterThan(0);
				awaiting.add(event.toolCallId, -1);
				break;
			default:
				expect.fail(`unexpected event inside a run: ${where}`);
		}
	}
	expect(inTurn, "run ended inside a turn").toBe(false);
	expect(awaiting.keys(), "run ended with calls waiting for approval").toEqual([]);
	expect([...resultIds].sort()).toEqual([...toolCallIds].sort());
}

/** Asserts every tool call in a transcript (of a non-failed assistant message) has exactly one later tool result. */
export function expectValidTranscript(messages: readonly AgentMessage[]): void {
	// Calls waiting for a result, by id and counted: two calls of one reply may share an id.
	const pending = new Counts();
	for (const message of messages) {
		if (message.role === "assistant" && !failed(message)) for (const id of toolCallIdsOf(message)) pending.add(id);
		if (message.role === "toolResult") {
			expect(pending.get(message.toolCallId) > 0, `orphan tool result ${message.toolCallId}`).toBe(true);
			pending.add(message.toolCallId, -1);
		}
	}
	expect(pending.keys(), "tool calls without results").toEqual([]);
}

/** Asserts the agent is idle and clean: no run, no pending tool calls, no child actors. */
export function expectIdle(agent: Agent): void {
	expect(agent.state.isStreaming).toBe(false);
	expect(agent.state.pendingToolCalls.size).toBe(0);
	expect(agent.state.streamingMessage).toBeUndefined();
	const snapshot = agent.actor.getSnapshot();
	expect(snapshot.value).toBe("idle");
	expect(Object.keys(snapshot.children)).toEqual([]);
}

/** Splits recorded events into runs (agent_start … agent_end). */
export function runsOf(events: readonly AgentEvent[]): AgentEvent[][] {
	const runs: AgentEvent[][] = [];
	let current: AgentEvent[] | undefined;
	for (const event of events) {
		if (event.type === "agent_start") current = [];
		current?.push(event);
		if (event.type === "agent_end" && current) {
			runs.push(current);
			current = undefined;
		}
	}
	return runs;
}

/** Texts of the user messages the model saw in one call. */
export function userTextsOf(context: { messages: readonly unknown[] }): string[] {
	return context.messages
		.filter((message) => (message as { role?: string }).role === "user")
		.map((message) => textOf(message));
}

/**
 * An idle agent whose `compact()` holds in its summariser until the compaction's signal aborts
 * (at most 500 ms): for abort and dispose during a manual compaction. The transcript is long
 * enough that there is something to compact.
 *
 * @example
 * const held = agentWithHeldCompaction();
 * const compacting = held.agent.compact();
 * await held.summarizing;
 * held.agent.abort();
 * await expect(compacting).rejects.toThrow("Compaction aborted");
 * expect(held.sawAbort()).toBe(true);
 */
export function agentWithHeldCompaction(): { agent: Agent; summarizing: Promise<void>; sawAbort: () => boolean } {
	const summarizing = deferred();
	let sawAbort = false;
	const scripted = createScriptedModel([]);
	const long = (label: string) => `${label} ${"x".repeat(400)}`;
	const agent = new Agent({
		initialState: { model: scripted.model, messages: [user(long("u1")), assistant(long("a1")), user("u2")] },
		streamFn: scripted.streamFn,
		compaction: {
			enabled: true,
			keepRecentTokens: 1,
			summarize: async ({ signal }) => {
				summarizing.resolve();
				await Promise.race([whenAborted(signal), sleep(500)]);
				sawAbort = signal?.aborted === true;
				return "summary";
			},
		},
	});
	return { agent, summarizing: summarizing.promise, sawAbort: () => sawAbort };
}

/**
 * What `build` threw, as text; "nothing" when it did not throw. Vitest's `toThrow(regex)` passes
 * when `undefined` is thrown, so a check that an error names something reads the message here.
 */
export function thrownBy(build: () => unknown): string {
	try {
		build();
	} catch (error) {
		return error instanceof Error ? error.message : `a non-error: ${String(error)}`;
	}
	return "nothing";
}

/** What reached the process's last-resort handlers while watched (see {@link watchEscapes}). */
export interface Escapes {
	/** Rejections nobody handled and exceptions nobody caught, in order. */
	readonly caught: unknown[];
	/** Stops watching. */
	stop(): void;
}

/**
 * Watches `unhandledRejection` and `uncaughtException` (each ends a Node process by default):
 * code under test that lets one escape is a defect even when the test's own assertions pass.
 * Node reports a rejection nobody handled after the microtasks of its turn: wait a timer before
 * reading `caught`.
 *
 * @example
 * const escapes = watchEscapes();
 * try { await agent.prompt("go"); await sleep(5); expect(escapes.caught).toEqual([]); } finally { escapes.stop(); }
 */
export function watchEscapes(): Escapes {
	const caught: unknown[] = [];
	const onEscape = (reason: unknown) => caught.push(reason);
	process.on("unhandledRejection", onEscape);
	process.on("uncaughtException", onEscape);
	return {
		caught,
		stop() {
			process.off("unhandledRejection", onEscape);
			process.off("uncaughtException", onEscape);
		},
	};
}
