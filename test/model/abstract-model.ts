/**
 * The abstract model of the agent machine for `xstate/graph`: fixtures shared with the real
 * runs, the event alphabet offered in each state (commands, delivery acknowledgements, and the
 * events the machine's actors would send: stream events, `stream.done` in several reply
 * kinds, preflight and compaction done/error, tool settle/update/timeout, giving up on tools
 * after an abort), and the state
 * projection that keeps the state space finite.
 */
import type { AnyMachineSnapshot } from "xstate";
import { planCompaction } from "../../src/compaction/cut-point.js";
import { tokensNeedCompaction } from "../../src/machines/compaction-guards.js";
import type { AgentMachineEvent, AgentMachineInput, ToolCallEntry } from "../../src/machines/types.js";
import type { AgentToolCall, ToolExecutionMode } from "../../src/types/agent.js";
import { emptyUsage } from "../../src/types/content.js";
import type { AgentMessage, AssistantMessage, UserMessage } from "../../src/types/messages.js";
import type { Model } from "../../src/types/model.js";

/**
 * The configurations walked: each tool execution mode, with a `beforeToolCall` hook where the
 * chart has states for it (parallel and sequential: announcing, then asking), and parallel
 * without one (preflight inside the action).
 */
export interface ModelVariant {
	mode: ToolExecutionMode;
	hook: boolean;
	/**
	 * pi's loop API (`runAgentLoop`) instead of the Agent: one run, queues pulled through
	 * `getSteeringMessages`/`getFollowUpMessages`, `shouldStopAfterTurn` asked after each turn.
	 */
	loop?: boolean | undefined;
}
export const VARIANTS: ModelVariant[] = [
	{ mode: "parallel", hook: true },
	{ mode: "sequential", hook: true },
	{ mode: "streaming", hook: false },
	{ mode: "parallel", hook: false },
	{ mode: "parallel", hook: false, loop: true },
];
export const TOOL_NAME = "stub";
export const TOOL_TIMEOUT_MS = 600_000;
/** One resume turn: a second cut-off reply in a row then takes the ordinary path. */
export const OUTPUT_LIMIT_RECOVERY = { maxAttempts: 1 };
export const KEEP_RECENT_TOKENS = 1;
export const SUMMARY = "summary";
export const OVERFLOW_ERROR = "prompt is too long: 150000 tokens > 100000 maximum";

export const model: Model = {
	id: "scripted-1",
	name: "Scripted model",
	api: "scripted",
	provider: "scripted",
	baseUrl: "",
	reasoning: true,
	input: ["text"],
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
	contextWindow: 100_000,
	maxTokens: 16_384,
};
/** Compaction on; the threshold (window − reserve) is 1000 tokens: only the big prompt crosses it. */
export const compaction = { enabled: true, reserveTokens: 99_000, keepRecentTokens: KEEP_RECENT_TOKENS };
export const USAGE = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 };

function userMessage(text: string): UserMessage {
	return { role: "user", content: [{ type: "text", text }], timestamp: 0 };
}

export const SMALL_PROMPT = userMessage("p");
export const BIG_PROMPT = userMessage("B".repeat(8_000));
export const STEER = userMessage("steer");
export const FOLLOW_UP = userMessage("follow");

export function assistantMessage(content: AssistantMessage["content"], stopReason: AssistantMessage["stopReason"], errorMessage?: string): AssistantMessage {
	const message: AssistantMessage = {
		role: "assistant",
		content,
		api: model.api,
		provider: model.provider,
		model: model.id,
		usage: stopReason === "aborted" ? emptyUsage() : { ...emptyUsage(), ...USAGE },
		stopReason,
		timestamp: 0,
	};
	if (errorMessage !== undefined) message.errorMessage = errorMessage;
	return message;
}

export const INITIAL_TRANSCRIPT: AgentMessage[] = [userMessage("earlier"), assistantMessage([{ type: "text", text: "ok" }], "stop")];

/** Input of the abstract machine for one tool execution mode (the real Agent gets the same). */
export function abstractInput(variant: ModelVariant): AgentMachineInput {
	const { mode, hook } = variant;
	if (variant.loop) {
		// What runOnMachine configures: the loop API has no compaction and no output-limit recovery.
		return {
			model,
			tools: [{ name: TOOL_NAME, label: TOOL_NAME, description: "stub", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [], details: {} }) }],
			messages: [...INITIAL_TRANSCRIPT],
			config: {
				toolExecution: mode,
				getSteeringMessages: async () => [],
				getFollowUpMessages: async () => [],
				shouldStopAfterTurn: () => false,
			},
			awaitDelivery: true,
		};
	}
	return {
		model,
		tools: [{ name: TOOL_NAME, label: TOOL_NAME, description: "stub", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [], details: {} }) }],
		messages: [...INITIAL_TRANSCRIPT],
		config: {
			toolExecution: mode,
			toolTimeoutMs: TOOL_TIMEOUT_MS,
			toolAbortGraceMs: TOOL_TIMEOUT_MS,
			outputLimitRecovery: OUTPUT_LIMIT_RECOVERY,
			compaction,
			...(hook ? { beforeToolCall: async () => undefined } : {}),
		},
		awaitDelivery: true,
	};
}

/** The reply kinds a `stream.done` can carry. `k` tool calls already streamed (streaming mode). */
/** `missing1` calls a tool that does not exist (preflight refuses it without asking the hook). */
export type ReplyKind = "text" | "tools1" | "tools2" | "length1" | "missing1" | "error" | "overflow" | "aborted";

export function replyCalls(kind: ReplyKind, streamed: number): number {
	switch (kind) {
		case "tools1":
		case "length1":
		case "missing1":
			return 1;
		case "tools2":
			return 2;
		case "text":
		case "overflow":
			return 0;
		default:
			return streamed;
	}
}

export function replyStop(kind: ReplyKind): AssistantMessage["stopReason"] {
	switch (kind) {
		case "text":
			return "stop";
		case "tools1":
		case "tools2":
		case "missing1":
			return "toolUse";
		case "length1":
			return "length";
		case "error":
		case "overflow":
			return "error";
		case "aborted":
			return "aborted";
	}
}

export function replyError(kind: ReplyKind): string | undefined {
	if (kind === "error") return "boom";
	if (kind === "overflow") return OVERFLOW_ERROR;
	if (kind === "aborted") return "Request was aborted";
	return undefined;
}

/** A tool the agent does not have. */
export const MISSING_TOOL = "missing";

function abstractCall(attempt: number, index: number, name = TOOL_NAME): AgentToolCall {
	return { type: "toolCall", id: `a${attempt}_${index + 1}`, name, arguments: {} };
}

function abstractReply(kind: ReplyKind, attempt: number, streamed: number): AssistantMessage {
	const calls = Array.from({ length: replyCalls(kind, streamed) }, (_, i) => abstractCall(attempt, i, kind === "missing1" ? MISSING_TOOL : TOOL_NAME));
	const content: AssistantMessage["content"] = kind === "text" || kind === "error" || kind === "overflow" ? [{ type: "text", text: "hi" }] : [];
	return assistantMessage([...content, ...calls], replyStop(kind), replyError(kind));
}

function valueOf(snapshot: AnyMachineSnapshot): string {
	return typeof snapshot.value === "string" ? snapshot.value : JSON.stringify(snapshot.value);
}

export function inState(snapshot: AnyMachineSnapshot, value: string): boolean {
	return snapshot.matches(value as never);
}

/** The decision states: each emits a barrier on entry and stays until it is acknowledged. */
const BARRIER_STATES = ["running.run-starting", "running.before-call", "running.after-stream", "running.turn-ended", "running.tool-preparing.announcing"];

/** The machine waits for the consumer to acknowledge its last barrier (`delivered`). */
function awaitsDelivery(snapshot: AnyMachineSnapshot): boolean {
	return snapshot.context.awaitDelivery === true && BARRIER_STATES.some((state) => inState(snapshot, state));
}

/** The messages the compaction actor would work on (the overflowing reply excluded). */
function compactionMessages(snapshot: AnyMachineSnapshot): AgentMessage[] {
	const { messages, run } = snapshot.context;
	if (run?.compactionReason === "overflow" && run.assistant && messages[messages.length - 1] === run.assistant) return messages.slice(0, -1);
	return messages;
}

/** The output the real compaction actor produces with the test's summariser (undefined when nothing can be compacted). */
export function compactionOutput(messages: AgentMessage[]) {
	const plan = planCompaction(messages, KEEP_RECENT_TOKENS);
	if (!plan) return undefined;
	const summary = { role: "compactionSummary", summary: SUMMARY, tokensBefore: 0, messagesDropped: plan.dropped, timestamp: 0 } as unknown as AgentMessage;
	const kept = [summary, ...plan.kept];
	return {
		messages: kept,
		result: { summary: SUMMARY, tokensBefore: 0, tokensAfter: 0, messagesDropped: plan.dropped, messagesKept: plan.kept.length, splitTurn: plan.turnPrefix.length > 0 },
	};
}

/** True in a compacting state whose transcript the real actor cannot compact: it fails at once, on its own. */
export function compactionFailsAtOnce(snapshot: AnyMachineSnapshot): boolean {
	const compacting = inState(snapshot, "compacting") || inState(snapshot, "running.compacting");
	return compacting && compactionOutput(compactionMessages(snapshot)) === undefined;
}

/** The events offered in a state. Queues are capped at one message each to keep the space finite. */
export function alphabet(snapshot: AnyMachineSnapshot): AgentMachineEvent[] {
	if (snapshot.status !== "active") return [];
	// The real compaction actor rejects at once when there is nothing to compact: nothing else can happen first.
	if (compactionFailsAtOnce(snapshot)) return [{ type: "xstate.error.actor.compaction", error: new Error("Nothing to compact") } as unknown as AgentMachineEvent];
	const context = snapshot.context;
	const events: AgentMachineEvent[] = [];
	const idle = inState(snapshot, "idle");
	const running = inState(snapshot, "running");
	if (context.config.getSteeringMessages) return [...loopAlphabet(snapshot), ...actorEvents(snapshot)];
	if (idle) {
		events.push({ type: "prompt", messages: [SMALL_PROMPT] });
		if (context.messages.length > 0) events.push({ type: "prompt", messages: [BIG_PROMPT] });
		events.push({ type: "continue" }, { type: "reset" }, { type: "queue.clear", queue: "all" }, { type: "update" });
		events.push({ type: "queue.mode", queue: "followUp", mode: context.followUpMode });
		if (compactionOutput(context.messages)) events.push({ type: "compact" });
	}
	if (context.steeringQueue.length < 1) events.push({ type: "steer", message: STEER });
	if (context.followUpQueue.length < 1) events.push({ type: "followUp", message: FOLLOW_UP });
	if (running || inState(snapshot, "compacting")) events.push({ type: "abort" });
	if (running) events.push({ type: "listener.error", error: "listener failed" });
	events.push({ type: "dispose" });
	if (awaitsDelivery(snapshot)) events.push({ type: "delivered", barrier: context.barrier });
	return [...events, ...actorEvents(snapshot)];
}

/**
 * The loop API's alphabet: one prompt (the run is the whole life of its machine), abort through
 * the signal, a throwing sink, and the answers of the queue polls and of shouldStopAfterTurn.
 */
function loopAlphabet(snapshot: AnyMachineSnapshot): AgentMachineEvent[] {
	const context = snapshot.context;
	const events: AgentMachineEvent[] = [];
	if (inState(snapshot, "idle") && context.messages.length === INITIAL_TRANSCRIPT.length) events.push({ type: "prompt", messages: [SMALL_PROMPT] });
	if (inState(snapshot, "running")) events.push({ type: "abort" }, { type: "listener.error", error: "sink failed" });
	if (awaitsDelivery(snapshot)) events.push({ type: "delivered", barrier: context.barrier });
	const done = (id: string, output: unknown) => ({ type: `xstate.done.actor.${id}`, output }) as unknown as AgentMachineEvent;
	const failed = (id: string) => ({ type: `xstate.error.actor.${id}`, error: new Error(`${id} failed`) }) as unknown as AgentMachineEvent;
	if (inState(snapshot, "running.polling-steering-at-start") || inState(snapshot, "running.polling-steering")) {
		events.push(done("steeringPoll", []), done("steeringPoll", [STEER]), failed("steeringPoll"));
	}
	if (inState(snapshot, "running.polling-follow-ups")) events.push(done("followUpPoll", []), done("followUpPoll", [FOLLOW_UP]), failed("followUpPoll"));
	if (inState(snapshot, "running.asking-whether-to-stop")) events.push(done("stopCheck", false), done("stopCheck", true), failed("stopCheck"));
	return events;
}

/** What the machine's actors would send in this state: stream, tool and compaction events. */
function actorEvents(snapshot: AnyMachineSnapshot): AgentMachineEvent[] {
	const context = snapshot.context;
	const run = context.run;
	const events: AgentMachineEvent[] = [];
	if (run && inState(snapshot, "running.streaming")) {
		const attempt = run.attempt;
		const streamedCalls = run.batch?.mode === "streaming" ? run.batch.calls.length : 0;
		if (!run.partial) {
			events.push({ type: "stream.start", attempt, partial: abstractReply("text", attempt, 0) });
		} else {
			const streamingMode = context.config.toolExecution === "streaming";
			// After an abort too: a provider that has not seen the signal yet still closes calls.
			if (streamingMode && streamedCalls < 2) {
				events.push({ type: "stream.toolcall", attempt, toolCall: abstractCall(attempt, streamedCalls), partial: run.partial });
			}
			const hook = context.config.beforeToolCall !== undefined;
			const kinds: ReplyKind[] = run.aborted
				? ["aborted"]
				: (["text", "tools1", "tools2", "length1", "missing1", "error", "overflow"] as ReplyKind[]).filter((kind) => {
						if (kind === "text" || kind === "overflow") return streamedCalls === 0;
						// Only the hook's states treat a refused call differently.
						if (kind === "missing1") return hook && streamedCalls === 0;
						if (kind === "error") return true;
						return replyCalls(kind, streamedCalls) >= streamedCalls;
					});
			for (const kind of kinds) events.push({ type: "stream.done", attempt, message: abstractReply(kind, attempt, streamedCalls) });
		}
	}
	const preparing = run?.batch?.calls.find((call: ToolCallEntry) => call.status === "preparing");
	if (preparing && inState(snapshot, "running.tool-preparing.checking")) {
		const callKey = preparing.key;
		events.push({ type: "tool.prepared", callKey, args: {} });
		events.push({ type: "tool.settled", callKey, outcome: { result: { content: [{ type: "text", text: "blocked" }], details: {} }, isError: true } });
	}
	for (const call of run?.batch?.calls ?? []) {
		if (call.status !== "running") continue;
		const callKey = call.key;
		events.push({ type: "tool.settled", callKey, outcome: { result: { content: [{ type: "text", text: "ok" }], details: {} }, isError: false } });
		events.push({ type: "tool.settled", callKey, outcome: { result: { content: [{ type: "text", text: "fail" }], details: {} }, isError: true } });
		events.push({ type: "tool.settled", callKey, outcome: { result: { content: [{ type: "text", text: "done" }], details: {}, terminate: true }, isError: false } });
		events.push({ type: "tool.update", callKey, partialResult: { content: [{ type: "text", text: "…" }], details: {} } });
		events.push({ type: "tool.timeout", callKey, timeoutMs: TOOL_TIMEOUT_MS });
	}
	// After an abort, the machine's own delayed event gives up on tools that did not stop.
	if (run?.aborted && run.batch?.calls.some((call: ToolCallEntry) => call.status === "running")) events.push({ type: "tools.abandon" });
	if (inState(snapshot, "compacting") || inState(snapshot, "running.compacting")) {
		const output = compactionOutput(compactionMessages(snapshot));
		if (output) events.push({ type: "xstate.done.actor.compaction", output } as unknown as AgentMachineEvent);
		events.push({ type: "xstate.error.actor.compaction", error: new Error("summariser failed") } as unknown as AgentMachineEvent);
	}
	return events;
}

function kindOf(message: AssistantMessage | undefined): string {
	if (!message) return "-";
	const calls = message.content.filter((block) => block.type === "toolCall").length;
	const missing = message.content.some((block) => block.type === "toolCall" && block.name === MISSING_TOOL) ? "?" : "";
	return `${message.stopReason}${calls}${missing}${message.errorMessage && /too long/.test(message.errorMessage) ? "!" : ""}`;
}

/** The projection both the traversal and the real-run conformance check use. */
export function project(snapshot: AnyMachineSnapshot, transcript?: AgentMessage[]): string {
	const context = transcript ? { ...snapshot.context, messages: transcript } : snapshot.context;
	const run = context.run;
	const last = context.messages[context.messages.length - 1] as { role?: string } | undefined;
	return JSON.stringify({
		st: snapshot.status,
		v: valueOf(snapshot),
		s: context.steeringQueue.length,
		f: context.followUpQueue.length,
		tail: last?.role ?? "none",
		wait: awaitsDelivery(snapshot),
		big: tokensNeedCompaction(context),
		run: run && {
			ab: run.aborted,
			p: run.partial !== undefined,
			a: kindOf(run.assistant),
			te: run.turnEnded,
			cr: run.compactionReason ?? "",
			or: run.overflowRetried,
			ct: run.compactedThisTurn === true,
			ol: run.outputLimitAttempts ?? 0,
			q: `${run.steeringPolled ? "S" : ""}${run.followUpsPolled ? "F" : ""}${run.stopAsked ? "A" : ""}${run.stopRequested ? "R" : ""}`,
			b: run.batch && {
				m: run.batch.mode,
				t: run.batch.truncated,
				c: run.batch.calls.map((call: ToolCallEntry) => `${call.status}${call.started ? "s" : ""}${call.message ? "m" : ""}${call.outcome?.result.terminate ? "T" : ""}`).join(" "),
			},
		},
	});
}

/** A short, distinct label of an abstract event (payload kinds, not payload objects). */
export function eventLabel(event: AgentMachineEvent): string {
	const e = event as { type: string; output?: { kind?: string }; messages?: AgentMessage[] };
	switch (e.type) {
		case "prompt":
			return e.messages?.[0] === BIG_PROMPT ? "prompt(big)" : "prompt";
		case "stream.toolcall":
			return event.type === "stream.toolcall" ? `stream.toolcall(${event.toolCall.id})` : e.type;
		case "tool.prepared":
			return event.type === "tool.prepared" ? `tool.prepared(${event.callKey})` : e.type;
		case "stream.done":
			return event.type === "stream.done" ? `stream.done(${replyKindOf(event.message)})` : e.type;
		case "tool.settled":
			return event.type === "tool.settled"
				? `tool.settled(${event.callKey},${event.outcome.result.terminate ? "terminate" : event.outcome.isError ? "error" : "ok"})`
				: e.type;
		case "tool.update":
		case "tool.timeout":
			return `${e.type}(${(event as { callKey: string }).callKey})`;
		default: {
			// Poll answers: how many messages, or the stop decision.
			const output = (event as { output?: unknown }).output;
			if (e.type.startsWith("xstate.done.actor.") && (Array.isArray(output) || typeof output === "boolean")) {
				return `${e.type}(${Array.isArray(output) ? output.length : String(output)})`;
			}
			return e.type;
		}
	}
}

/** The reply kind of an abstract `stream.done` message. */
export function replyKindOf(message: AssistantMessage): ReplyKind {
	const calls = message.content.filter((block) => block.type === "toolCall").length;
	switch (message.stopReason) {
		case "aborted":
			return "aborted";
		case "error":
			return message.errorMessage === OVERFLOW_ERROR ? "overflow" : "error";
		case "length":
			return "length1";
		case "toolUse":
			if (message.content.some((block) => block.type === "toolCall" && block.name === MISSING_TOOL)) return "missing1";
			return calls === 2 ? "tools2" : "tools1";
		default:
			return "text";
	}
}
