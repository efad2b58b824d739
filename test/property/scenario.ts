/**
 * The property scenarios: random scripts (text, thinking, tool calls, calls of a tool that runs
 * alone, empty replies, errors, "length" stops (also before anything streamed), context overflows reported as errors or silently by usage over
 * the window), random tool latencies and failures, beforeToolCall/afterToolCall hooks that
 * allow, block, rewrite or terminate (some after awaiting), either queue mode, a listener that
 * sometimes awaits a timer, a transformContext and convertToLlm that await one, compaction
 * summaries by a hook or by the model, and random prompt/steer/followUp/abort/continue/dispose calls at
 * random moments, manual compactions, resets, queue mode changes, a listener that throws,
 * cleared queues and stalls of the whole process (a loaded machine), in all three tool execution modes. After every event and at the end the
 * shared invariants hold: events nest, every tool execution ends once, the transcript is valid
 * to send, no steering or follow-up message is lost or delivered twice, every run settles and
 * leaves nothing running, and nothing makes XState warn (a command sent to an ended machine).
 */
import fc from "fast-check";
import { Agent } from "../../src/agent.js";
import { type AgentStore, createMemoryStore } from "../../src/durable/store.js";
import type { Api, Model } from "../../src/types/model.js";
import { SUMMARIZATION_SYSTEM_PROMPT } from "../../src/compaction/summarize.js";
import { defaultConvertToLlm } from "../../src/machines/run-helpers.js";
import { createScriptedModel, type ScriptedBlock, type ScriptedReply } from "../../src/providers/scripted.js";
import type { AfterToolCallHook, AgentEvent, AgentTool, AgentToolResult, BeforeToolCallHook, QueueMode, ToolExecutionMode } from "../../src/types/agent.js";
import type { AgentMessage, AssistantMessage } from "../../src/types/messages.js";
import { idleViolations, queuesOf } from "../../src/testing/agent-checks.js";
import { EventInvariants } from "../../src/testing/event-invariants.js";
import { providerRequestViolations } from "../../src/testing/provider-requests.js";
import { QueueLedger } from "../../src/testing/queue-ledger.js";
import { transcriptViolations as checkTranscriptViolations } from "../../src/testing/transcript-checks.js";
import type { AgentViolation } from "../../src/testing/violations.js";

const texts = (violations: readonly AgentViolation[]) => violations.map((v) => (v.event !== undefined ? `#${v.event} ${v.message}` : v.message));
const transcriptViolations = (messages: Parameters<typeof checkTranscriptViolations>[0]) => texts(checkTranscriptViolations(messages));

/**
 * `compact`: a manual compaction (idle only: refused while a run is in progress); `throw`: the
 * checking listener throws once, at the next event it gets; `clear`: both queues are cleared;
 * `reset`: transcript and queues cleared (refused during a run); `mode`: both queue modes flipped;
 * `pin`: reads `agent.actor` (the machine is handed out from then on) and listens on it with
 * `actor.on("*")`; `stall`: the process stops for longer than `toolAbortGraceMs` (a busy machine,
 * on which every timer may fire late, and after a pause in any order).
 */
type Command = "steer" | "followUp" | "abort" | "dispose" | "continue" | "prompt" | "compact" | "throw" | "clear" | "reset" | "mode" | "pin" | "stall";

/**
 * What beforeToolCall answers for a call: nothing, allow, block, block and stop the loop; `slow…`
 * after awaiting a timer; `approve`/`reject`: it asks a person (`approval: "required"`), and a
 * listener approves or rejects the call by its `callKey` a moment after `approval_requested`;
 * `late`: it asks, and the listener approves only after {@link LATE_DECISION_MS}, later than the
 * approval timeout when the scenario has one (`options.approvalTimeout`), so that the call times
 * out first unless the process stalled.
 */
type BeforeAnswer = "none" | "allow" | "block" | "blockTerminate" | "slowAllow" | "slowBlock" | "approve" | "reject" | "late";
/** What afterToolCall answers: nothing, the result kept, new content (`slowRewrite`: after a timer), the error flag flipped, stop the loop after the batch. */
type AfterAnswer = "none" | "keep" | "rewrite" | "slowRewrite" | "flipError" | "terminate";

export interface Scenario {
	/** `serialTool`: a call of a tool whose `executionMode` is "sequential" (it runs alone). */
	/**
	 * `sameIds`: every call of the reply has one id (models do this; each call is still a call of
	 * its own). In the first two replies that id is a name every object has ("constructor",
	 * "__proto__"): an id read as a property would find Object's.
	 */
	replies: { blocks: ("text" | "thinking" | "tool" | "serialTool" | "missingTool")[]; stop: "auto" | "error" | "length" | "overflow" | "silentOverflow"; sameIds?: boolean }[];
	/** `hangs`: never returns unless its signal aborts (and not even then unless it honours it). */
	tools: { latency: number; fail: boolean; honoursAbort: boolean; hangs?: boolean }[];
	/** Commands keyed to the index of the event (across the whole scenario) they are issued at. */
	schedule: { at: number; command: Command }[];
	/** Hooks, queue modes and a slow listener; absent (the recorded regressions): none of them, one-at-a-time. */
	options?: {
		steeringMode: QueueMode;
		followUpMode: QueueMode;
		/** Cycled over the calls the hook is asked about; all "none": no hook at all. */
		before: BeforeAnswer[];
		after: AfterAnswer[];
		/** A second listener awaits this many ms on every third event (0: it returns at once). */
		slowListenerMs: number;
		/** `transformContext` awaits this many ms before each request (0 or absent: no transformContext). */
		prepareMs?: number;
		/** Who writes compaction summaries: a `summarize` hook (absent: this), or the agent's own model. */
		summarizer?: "hook" | "model";
		/** `approvalTimeoutMs` of {@link APPROVAL_TIMEOUT_MS} (absent or false: none). */
		approvalTimeout?: boolean;
		/**
		 * The agent saves to a memory store: once it rests, an agent loaded from the store must hold
		 * its transcript, queues and queue modes, whatever the commands did meanwhile.
		 */
		store?: boolean;
	};
}

/** Random scenarios: replies, tool behaviours and a schedule of commands. */
export const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
	replies: fc.array(
		fc.record({
			blocks: fc.array(fc.constantFrom("text", "thinking", "tool", "tool", "serialTool", "missingTool"), { minLength: 0, maxLength: 3 }),
			stop: fc.constantFrom("auto", "auto", "auto", "error", "length", "overflow", "silentOverflow"),
			sameIds: fc.constantFrom(false, false, false, true),
		}),
		{ minLength: 2, maxLength: 4 },
	),
	tools: fc.array(
		fc.record({ latency: fc.integer({ min: 0, max: 30 }), fail: fc.boolean(), honoursAbort: fc.boolean(), hangs: fc.constantFrom(false, false, false, true) }),
		{ minLength: 1, maxLength: 4 },
	),
	schedule: fc.array(fc.record({ at: fc.integer({ min: 0, max: 60 }), command: fc.constantFrom<Command>("steer", "followUp", "abort", "dispose", "continue", "prompt", "compact", "throw", "clear", "reset", "mode", "pin", "stall") }), {
		maxLength: 6,
	}),
	options: fc.record({
		steeringMode: fc.constantFrom<QueueMode>("one-at-a-time", "all"),
		followUpMode: fc.constantFrom<QueueMode>("one-at-a-time", "all"),
		before: fc.oneof(
			fc.constant<BeforeAnswer[]>(["none"]),
			fc.array(fc.constantFrom<BeforeAnswer>("allow", "allow", "block", "blockTerminate", "slowAllow", "slowBlock", "approve", "reject", "late"), { minLength: 1, maxLength: 4 }),
		),
		after: fc.oneof(
			fc.constant<AfterAnswer[]>(["none"]),
			fc.array(fc.constantFrom<AfterAnswer>("keep", "keep", "rewrite", "slowRewrite", "flipError", "terminate"), { minLength: 1, maxLength: 4 }),
		),
		slowListenerMs: fc.constantFrom(0, 0, 1, 3),
		prepareMs: fc.constantFrom(0, 0, 1, 2),
		summarizer: fc.constantFrom<"hook" | "model">("hook", "model"),
		approvalTimeout: fc.boolean(),
		store: fc.boolean(),
	}),
}) as fc.Arbitrary<Scenario>;

const CONTEXT_WINDOW = 1_000_000;

function user(text: string): AgentMessage {
	return { role: "user", content: [{ type: "text", text }], timestamp: Date.now() };
}

function toReply(reply: Scenario["replies"][number], n: number): ScriptedReply {
	const blocks: ScriptedBlock[] = reply.blocks.map((kind, i) => {
		if (kind === "text") return { type: "text", text: `text ${n}.${i}` };
		if (kind === "thinking") return { type: "thinking", thinking: `hmm ${n}.${i}` };
		const name = kind === "tool" ? "work" : kind === "serialTool" ? "serial" : "nope";
		return reply.sameIds ? { type: "toolCall", name, arguments: { n, i }, id: n === 0 ? "constructor" : n === 1 ? "__proto__" : `same_${n}` } : { type: "toolCall", name, arguments: { n, i } };
	});
	if (reply.stop === "auto") return { content: blocks };
	// Overflows are judged against CONTEXT_WINDOW, which the scripts' real context never nears, so
	// only these replies trigger overflow recovery (never the threshold check before a call).
	if (reply.stop === "silentOverflow") return { content: blocks, usage: { input: CONTEXT_WINDOW + 1 } };
	if (reply.stop === "overflow") return { content: blocks, stopReason: "error", errorMessage: "prompt is too long: 2000000 tokens > 1000000 maximum" };
	return { content: blocks, stopReason: reply.stop, errorMessage: reply.stop === "error" ? "scripted failure" : undefined };
}

/** A text delta's text, for a `message_update` that carries one. */
function textDelta(event: AgentEvent): string | undefined {
	return event.type === "message_update" && event.assistantMessageEvent.type === "text_delta" ? event.assistantMessageEvent.delta : undefined;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
	return new Promise((resolve) => {
		const timer = setTimeout(resolve, ms);
		signal?.addEventListener("abort", () => {
			clearTimeout(timer);
			resolve();
		});
	});
}

/**
 * What the hooks decided, by call (see {@link callName}: ids repeat in replies with `sameIds`),
 * to check against what ran and what the transcript says.
 */
interface HookLedger {
	blocked: Set<string>;
	/** The person's decision on a call beforeToolCall asked one for, by call. */
	decisions: Map<string, "approve" | "reject" | "late">;
	/** The result afterToolCall asked for (its text, or its error flag), and the reply its call came from. */
	rewritten: Map<string, { text?: string; isError?: boolean; reply: number }>;
}

/** The scripted reply a tool call came from (`toReply` puts its index in the arguments). */
function replyOf(args: unknown): number {
	return (args as { n?: number } | undefined)?.n ?? -1;
}

/** One call, told apart from another with its id: the id and the block `toReply` made it from. */
function callName(id: string, args: unknown): string {
	const { n, i } = (args ?? {}) as { n?: number; i?: number };
	return `${id}@${n}.${i}`;
}

function beforeHook(answers: readonly BeforeAnswer[], ledger: HookLedger): BeforeToolCallHook {
	let asked = 0;
	return async ({ toolCall }) => {
		const answer = answers[asked++ % answers.length] as BeforeAnswer;
		if (answer === "slowAllow" || answer === "slowBlock") await sleep(2);
		if (answer === "block" || answer === "slowBlock" || answer === "blockTerminate" || answer === "reject") ledger.blocked.add(callName(toolCall.id, toolCall.arguments));
		if (answer === "approve" || answer === "reject" || answer === "late") {
			ledger.decisions.set(callName(toolCall.id, toolCall.arguments), answer);
			return { approval: "required", reason: "asked by the property" };
		}
		if (answer === "block" || answer === "slowBlock") return { block: true, reason: "blocked by the hook" };
		if (answer === "blockTerminate") return { block: true, reason: "blocked, and stop", terminate: true };
		return answer === "none" ? undefined : {};
	};
}

function afterHook(answers: readonly AfterAnswer[], ledger: HookLedger): AfterToolCallHook {
	let asked = 0;
	return async ({ toolCall, isError }) => {
		const answer = answers[asked++ % answers.length] as AfterAnswer;
		if (answer === "slowRewrite") await sleep(2);
		if (answer === "rewrite" || answer === "slowRewrite") {
			ledger.rewritten.set(callName(toolCall.id, toolCall.arguments), { text: "rewritten by the hook", reply: replyOf(toolCall.arguments) });
			return { content: [{ type: "text", text: "rewritten by the hook" }] };
		}
		if (answer === "flipError") {
			ledger.rewritten.set(callName(toolCall.id, toolCall.arguments), { isError: !isError, reply: replyOf(toolCall.arguments) });
			return { isError: !isError };
		}
		if (answer === "terminate") return { terminate: true };
		return answer === "none" ? undefined : {};
	};
}

/**
 * A call the hook blocked never runs; a result the hook rewrote reaches the transcript as
 * rewritten. Not when the run stopped the call while the hook was deciding (an abort, dispose,
 * or, in streaming mode, its reply failing): the call is then closed at once with an error, and
 * a hook's late answer is dropped like a tool's.
 */
function hookViolations(ledger: HookLedger, executed: ReadonlySet<string>, messages: readonly AgentMessage[], scenario: Scenario, stopped: boolean): string[] {
	const violations: string[] = [];
	for (const name of ledger.blocked) if (executed.has(name)) violations.push(`tool call ${name} ran although beforeToolCall blocked it`);
	if (stopped) return violations;
	// A result answers the call of the assistant message before it at its own position (the
	// transcript invariant holds results to source order): that pairs results of one id apart.
	let answering: { id: string; arguments: unknown }[] = [];
	for (const message of messages) {
		if (message.role === "assistant") answering = message.content.flatMap((block) => (block.type === "toolCall" ? [block] : []));
		if (message.role !== "toolResult") continue;
		const call = answering.shift();
		const asked = call && call.id === message.toolCallId ? ledger.rewritten.get(callName(call.id, call.arguments)) : undefined;
		const stop = asked ? scenario.replies[asked.reply]?.stop : undefined;
		if (!asked || (stop !== "auto" && stop !== "silentOverflow")) continue;
		const text = message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
		if (asked.text !== undefined && text !== asked.text) violations.push(`tool result ${message.toolCallId}: afterToolCall rewrote it to ${JSON.stringify(asked.text)}, the transcript has ${JSON.stringify(text)}`);
		if (asked.isError !== undefined && message.isError !== asked.isError) violations.push(`tool result ${message.toolCallId}: afterToolCall set isError ${asked.isError}, the transcript has ${message.isError}`);
	}
	return violations;
}

/** A scenario's approval timeout, and when a `late` decision comes (after it). */
const APPROVAL_TIMEOUT_MS = 15;
const LATE_DECISION_MS = 40;

/** Each call of a hanging tool ends at the tool timeout. */
const TOOL_TIMEOUT_MS = 400;
/** After an abort, running tools get this long to stop; after dispose, a listener holding the run's last events. */
const ABORT_GRACE_MS = 50;
/**
 * How long a run may take before it counts as hung: the script's calls (at most 4 replies of 3)
 * may all hang until the tool timeout, one after the other in sequential mode, with time to spare
 * (3 s was less than such a run takes: seed 681705056 in sequential mode, 9 hanging calls).
 */
const SETTLE_MS = 4 * 3 * TOOL_TIMEOUT_MS + 3000;

/**
 * What the store holds of a resting agent, once `saved()` resolved: an agent loaded from it holds
 * the same transcript, queues and queue modes (compared as JSON: the store's copy went through it
 * or will, with the file store). Loaded through a view that only reads (a store of its own to the
 * process's claims), so the agent under test keeps writing its session.
 */
async function storeViolations(agent: Agent, store: AgentStore, model: Model<Api>, tools: AgentTool<object, unknown>[]): Promise<string[]> {
	let timer: ReturnType<typeof setTimeout> | undefined;
	const saved = await Promise.race([
		agent.saved().then(
			() => "saved",
			(error: unknown) => `saved() rejected: ${String(error)}`,
		),
		new Promise<string>((resolve) => {
			timer = setTimeout(() => resolve(`saved() did not settle within ${SETTLE_MS} ms`), SETTLE_MS);
		}),
	]);
	clearTimeout(timer);
	if (saved !== "saved") return [saved];
	let loaded: Agent;
	try {
		const view: AgentStore = { load: (sessionId) => store.load(sessionId, { peek: true }), saveSnapshot: () => {}, appendJournal: () => {} };
		loaded = await Agent.load({ store: view, sessionId: "property", initialState: { model, tools }, streamFn: () => Promise.reject(new Error("the loaded agent is only read")) });
	} catch (error) {
		return [`Agent.load of the saved session threw: ${String(error)}`];
	}
	const held = (of: Agent) =>
		JSON.stringify({ messages: of.state.messages, steering: queuesOf(of).steering, followUp: queuesOf(of).followUps, modes: [of.steeringMode, of.followUpMode], running: of.state.isStreaming, waiting: of.pendingApprovals.length });
	const violations = held(loaded) === held(agent) ? [] : [`the agent loaded from its store holds ${held(loaded).slice(0, 600)}, the agent ${held(agent).slice(0, 600)}`];
	loaded.dispose();
	return violations;
}

async function settles(agent: Agent): Promise<boolean> {
	let timer: ReturnType<typeof setTimeout> | undefined;
	const result = await Promise.race([
		agent.waitForIdle().then(() => true),
		new Promise<boolean>((resolve) => {
			timer = setTimeout(() => resolve(false), SETTLE_MS);
		}),
	]);
	clearTimeout(timer);
	return result;
}

/** Runs a scenario; returns every invariant violation (empty when the properties hold). */
export async function runScenario(mode: ToolExecutionMode, scenario: Scenario): Promise<string[]> {
	const violations: string[] = [];
	const scripted = createScriptedModel(
		scenario.replies.map((reply, n) => toReply(reply, n)),
		{ chunkSize: 6, whenExhausted: { content: "that is all" }, model: { contextWindow: CONTEXT_WINDOW } },
	);
	const summaries = createScriptedModel([], { chunkSize: 6, whenExhausted: { content: "## Goal\nsummary" }, model: { contextWindow: CONTEXT_WINDOW } });
	let toolCalls = 0;
	const executed = new Set<string>();
	/** Per call id: executions, and tool_execution_start events the slow listener settled. */
	const executions = new Map<string, number>();
	const startsSettled = new Map<string, number>();
	const hooks: HookLedger = { blocked: new Set(), decisions: new Map(), rewritten: new Map() };
	/** Model requests and tool calls that have not returned: once the agent is disposed, each one's signal must be aborted. */
	const open = new Set<{ what: string; signal: AbortSignal | undefined }>();
	const runWork = async (id: string, params: unknown, signal: AbortSignal | undefined): Promise<AgentToolResult<unknown>> => {
		executed.add(callName(id, params));
		// A call runs only once its tool_execution_start reached the listeners and they settled (every mode).
		const runs = (executions.get(id) ?? 0) + 1;
		executions.set(id, runs);
		if (scenario.options && scenario.options.slowListenerMs > 0 && (startsSettled.get(id) ?? 0) < runs) violations.push(`tool call ${id} executed before its tool_execution_start listeners settled`);
		// A call starts only in a run that is not aborted: its signal cannot be aborted already.
		if (signal?.aborted) violations.push(`tool call ${id} executed after its run was aborted`);
		const behaviour = scenario.tools[toolCalls++ % scenario.tools.length] as Scenario["tools"][number];
		if (behaviour.hangs) {
			// An uncooperative tool: the tool timeout, or the grace after an abort, must end the call.
			await new Promise<void>((resolve) => (behaviour.honoursAbort ? signal?.addEventListener("abort", () => resolve()) : undefined));
		}
		await sleep(behaviour.latency, behaviour.honoursAbort ? signal : undefined);
		if (behaviour.honoursAbort && signal?.aborted) throw new Error("aborted");
		if (behaviour.fail) throw new Error("tool failed");
		return { content: [{ type: "text" as const, text: "worked" }], details: {} };
	};
	const work: AgentTool<object, unknown> = {
		name: "work",
		label: "work",
		description: "does work",
		parameters: { type: "object", properties: {}, additionalProperties: true },
		execute: async (id, params, signal) => {
			const entry = { what: `tool call ${id}`, signal };
			open.add(entry);
			try {
				return await runWork(id, params, signal);
			} finally {
				open.delete(entry);
			}
		},
	};
	const serial: AgentTool<object, unknown> = { ...work, name: "serial", label: "serial", description: "does work alone", executionMode: "sequential" };
	const options = scenario.options;
	let preparing = () => {};
	const store = options?.store ? createMemoryStore() : undefined;
	const agent = new Agent({
		...(store ? { store, sessionId: "property" } : {}),
		...(options?.approvalTimeout ? { approvalTimeoutMs: APPROVAL_TIMEOUT_MS } : {}),
		initialState: { model: scripted.model, tools: [work, serial] },
		// A request starts only in a run that is not aborted (an abort while it is prepared stops it).
		streamFn: (model, context, streamOptions) => {
			const summary = context.systemPrompt === SUMMARIZATION_SYSTEM_PROMPT;
			if (streamOptions?.signal?.aborted) violations.push(`the model was called after its run was aborted${summary ? " (for a compaction summary)" : ""}`);
			// The default summariser's requests are answered aside, so they do not use up the script.
			const stream = (summary ? summaries : scripted).streamFn(model, context, streamOptions);
			const entry = { what: summary ? "a summary request" : "a model request", signal: streamOptions?.signal };
			open.add(entry);
			void Promise.resolve(stream).then((opened) => opened.result()).finally(() => open.delete(entry));
			return stream;
		},
		// Commands may land while a request is prepared: between the decision to call the model and
		// the call (transformContext for replies; convertToLlm for replies and compaction summaries).
		...(options?.prepareMs
			? {
					transformContext: async (messages: AgentMessage[]) => {
						preparing();
						await sleep(options.prepareMs ?? 0);
						return messages;
					},
					convertToLlm: async (messages: AgentMessage[]) => {
						preparing();
						await sleep(options.prepareMs ?? 0);
						return defaultConvertToLlm(messages);
					},
				}
			: {}),
		toolExecution: mode,
		...(options ? { steeringMode: options.steeringMode, followUpMode: options.followUpMode } : {}),
		...(options && !options.before.every((answer) => answer === "none") ? { beforeToolCall: beforeHook(options.before, hooks) } : {}),
		...(options && !options.after.every((answer) => answer === "none") ? { afterToolCall: afterHook(options.after, hooks) } : {}),
		// Bounds for hanging tools, well inside SETTLE_MS: every run must end, abort or not.
		toolTimeoutMs: TOOL_TIMEOUT_MS,
		toolAbortGraceMs: ABORT_GRACE_MS,
		compaction: { enabled: true, keepRecentTokens: 1, ...(options?.summarizer === "model" ? {} : { summarize: async () => "## Goal\nsummary" }) },
	});
	const onUnhandled = (reason: unknown) => violations.push(`unhandled rejection: ${String(reason)}`);
	process.on("unhandledRejection", onUnhandled);
	// Nothing the agent does may make XState warn: a warning is a command that went to a machine
	// that can no longer take it (sent to a stopped actor), dropped.
	const warn = console.warn;
	console.warn = (...args: unknown[]) => {
		violations.push(`console.warn: ${args.map(String).join(" ").slice(0, 200)}`);
	};
	const invariants = new EventInvariants(() => agent.state.pendingToolCalls);
	const ledger = new QueueLedger();
	let disposed = false;
	/** An abort or dispose was issued, or a listener threw during a run (which aborts it): calls may have been closed while a hook was deciding. */
	let stoppedByCommand = false;
	let counter = 0;
	/** The checking listener throws at the next event (a `throw` command). */
	let throwNext = false;
	/** A listener threw during the current run: its error is recorded too, so the run's error need not be its last reply's. */
	let listenerThrewInRun = false;
	/** Manual compactions that have not settled yet. */
	const compactions = new Set<Promise<unknown>>();
	/** Every text delta the agent's listener got, in order, and the open reply's. */
	const facadeDeltas: string[] = [];
	let replyText = "";
	/** The text deltas an `agent.actor.on("*")` listener got, once a `pin` command handed the actor out. */
	let pinnedDeltas: string[] | undefined;
	/** How many text deltas the agent's listener had when the machine was handed out. */
	let facadeDeltasAtPin = 0;
	const pending = [...scenario.schedule].sort((a, b) => a.at - b.at);
	const issue = (command: Command): void => {
		const refusedWhileDisposed = (fn: () => unknown) => {
			try {
				const wasDisposed = disposed;
				const result = fn();
				if (result instanceof Promise) {
					result.then(
						() => wasDisposed && violations.push(`${command} after dispose resolved`),
						() => {},
					);
				} else if (wasDisposed) violations.push(`${command} after dispose did not throw`);
			} catch (error) {
				if (!disposed && (command === "steer" || command === "followUp")) violations.push(`${command} threw: ${String(error)}`);
			}
		};
		switch (command) {
			case "steer":
			case "followUp": {
				const message = user(`${command} ${++counter}`);
				refusedWhileDisposed(() => (command === "steer" ? agent.steer(message) : agent.followUp(message)));
				if (!disposed) ledger.track(message, command);
				return;
			}
			case "abort":
				stoppedByCommand = true;
				agent.abort();
				return;
			case "dispose":
				stoppedByCommand = true;
				// Before the call: dispose() delivers the run's closing events at once when it is not
				// called from a listener, and the listener issues the commands due meanwhile.
				disposed = true;
				agent.dispose();
				return;
			case "continue":
				refusedWhileDisposed(() => agent.continue());
				return;
			case "prompt":
				refusedWhileDisposed(() => agent.prompt(`prompt ${++counter}`));
				return;
			case "compact": {
				// Refused while disposed or while a run is in progress; otherwise it compacts, or
				// rejects (nothing to compact, aborted, disposed). Either way it settles.
				const wasDisposed = disposed;
				const busy = invariants.running;
				const compaction = agent.compact().then(
					() => {
						if (wasDisposed) violations.push("compact after dispose resolved");
						if (busy) violations.push("compact during a run resolved");
					},
					(error: unknown) => {
						const text = error instanceof Error ? error.message : String(error);
						if (!/^(Compaction failed: Nothing to compact|Compaction aborted|Agent has been disposed|Agent is already processing)/.test(text)) violations.push(`compact rejected with ${JSON.stringify(text)}`);
					},
				);
				compactions.add(compaction);
				void compaction.then(() => compactions.delete(compaction));
				return;
			}
			case "throw":
				throwNext = true;
				return;
			case "reset":
				try {
					agent.reset();
					ledger.cleared();
					if (agent.state.messages.length > 0 || agent.hasQueuedMessages()) violations.push("reset() left messages in the transcript or the queues");
				} catch (error) {
					const text = error instanceof Error ? error.message : String(error);
					if (!/^(Agent has been disposed|Agent is already processing)/.test(text)) violations.push(`reset() threw ${JSON.stringify(text)}`);
				}
				return;
			case "mode": {
				const flip = (mode: QueueMode): QueueMode => (mode === "all" ? "one-at-a-time" : "all");
				const wanted = [flip(agent.steeringMode), flip(agent.followUpMode)];
				agent.steeringMode = wanted[0] as QueueMode;
				agent.followUpMode = wanted[1] as QueueMode;
				if (agent.steeringMode !== wanted[0] || agent.followUpMode !== wanted[1]) violations.push(`queue modes read back ${agent.steeringMode}/${agent.followUpMode} right after being set to ${wanted.join("/")}`);
				return;
			}
			case "pin":
				if (pinnedDeltas) return;
				pinnedDeltas = [];
				facadeDeltasAtPin = facadeDeltas.length;
				agent.actor.on("*", (event) => {
					const delta = textDelta(event as AgentEvent);
					if (delta !== undefined) pinnedDeltas?.push(delta);
				});
				return;
			case "stall": {
				const end = Date.now() + ABORT_GRACE_MS + 10;
				while (Date.now() < end);
				return;
			}
			case "clear":
				agent.clearAllQueues();
				if (agent.hasQueuedMessages()) violations.push("queues not empty right after clearAllQueues()");
				ledger.cleared();
				return;
		}
	};
	let index = 0;
	/** Issues the commands scheduled up to this point (each event, and each request being prepared, is a point). */
	const issueDue = () => {
		while (pending.length && (pending[0] as { at: number }).at <= index) issue((pending.shift() as { command: Command }).command);
		index++;
	};
	preparing = issueDue;
	let slowCount = 0;
	if (options && options.slowListenerMs > 0) {
		// A listener that returns a promise now and then: the loop must wait for it, and commands
		// issued meanwhile must still land where they belong.
		// Events reach a listener one at a time, each after its call for the one before settled
		// (pi delivers parallel tool calls' events concurrently; agentchart never does).
		let busyWith: string | undefined;
		agent.subscribe(async (event) => {
			if (busyWith !== undefined) violations.push(`${event.type} reached a listener whose call for ${busyWith} had not settled`);
			busyWith = event.type;
			try {
				if (slowCount++ % 3 === 0) await sleep(options.slowListenerMs);
			} finally {
				busyWith = undefined;
				if (event.type === "tool_execution_start") startsSettled.set(event.toolCallId, (startsSettled.get(event.toolCallId) ?? 0) + 1);
			}
		});
	}
	agent.subscribe((event) => {
		invariants.onEvent(event);
		ledger.onEvent(event);
		// The person answers each question a moment later, by the call's key (ids repeat with
		// `sameIds`). A call the run stopped meanwhile (an abort, its reply failing) is not waiting
		// any more, and the decision is refused: that is the agent's answer, not a violation.
		if (event.type === "approval_requested") {
			const decision = hooks.decisions.get(callName(event.toolCallId, event.args));
			setTimeout(
				() => {
				if (decision === "late" && options?.approvalTimeout) {
					// Past its deadline (by the clock, whatever its timer did meanwhile): refused.
					let taken = false;
					try {
						void agent.approve(event.callKey).catch(() => undefined);
						taken = true;
					} catch {
						// refused, as it must be
					}
					if (taken) violations.push(`approve(${event.callKey}) taken ${LATE_DECISION_MS} ms after it was asked, past its ${APPROVAL_TIMEOUT_MS} ms approvalTimeoutMs`);
					return;
				}
				if (!agent.pendingApprovals.some((call) => call.callKey === event.callKey)) return;
				try {
					void (decision === "reject" ? agent.reject(event.callKey, "rejected by the property") : agent.approve(event.callKey)).catch((error: unknown) => violations.push(`${decision} ${event.callKey}: ${String(error)}`));
				} catch (error) {
					violations.push(`${decision} ${event.callKey} of a call pendingApprovals lists: ${String(error)}`);
				}
				},
				decision === "late" ? LATE_DECISION_MS : 1,
			);
		}
		// A reply's text deltas, once each and in order, are its text, whoever else listens on the
		// machine. Checked on replies that ended well ("stop"): one that failed or was aborted ends
		// with what the provider or the agent made of it (a streaming reply whose calls had started is
		// split into those calls and the failure).
		if (event.type === "message_start") replyText = "";
		const delta = textDelta(event);
		if (delta !== undefined) {
			facadeDeltas.push(delta);
			replyText += delta;
		}
		const reply = event.type === "message_end" && (event.message as { role?: string }).role === "assistant" ? (event.message as AssistantMessage) : undefined;
		if (reply?.stopReason === "stop") {
			const text = reply.content.map((block) => (block.type === "text" ? block.text : "")).join("");
			if (replyText !== text) violations.push(`a reply's text deltas say ${JSON.stringify(replyText)}, its message ${JSON.stringify(text)}`);
		}
		if (event.type === "agent_start") listenerThrewInRun = false;
		if (event.type === "agent_end" && !listenerThrewInRun) {
			// The run's error is its last reply's: set when that reply failed, and not left over from a
			// reply the run recovered from (an overflow that was compacted and retried).
			const replies = event.messages.filter((m): m is AssistantMessage => (m as { role?: string }).role === "assistant");
			const expected = replies.at(-1)?.errorMessage;
			if (agent.state.errorMessage !== expected) {
				violations.push(`at agent_end: state.errorMessage ${JSON.stringify(agent.state.errorMessage)}, the run's last reply says ${JSON.stringify(expected)}`);
			}
		}
		if (event.type === "agent_end") {
			violations.push(...transcriptViolations(agent.state.messages).map((v) => `at agent_end: ${v}`));
			violations.push(...providerRequestViolations(agent.state.messages).map((v) => `at agent_end: ${v}`));
		}
		issueDue();
		if (throwNext) {
			throwNext = false;
			if (invariants.running) {
				listenerThrewInRun = true;
				// The failure aborts the run: a hook still deciding when the abort grace runs out is given up on, its answer dropped.
				stoppedByCommand = true;
			}
			throw new Error("listener failed on purpose");
		}
	});

	const idle = async (label: string) => {
		if (!(await settles(agent))) {
			violations.push(`${label}: waitForIdle did not settle within ${SETTLE_MS} ms (machine in ${JSON.stringify(agent.actor.getSnapshot().value)})`);
			return false;
		}
		await new Promise<void>((resolve) => setImmediate(resolve));
		violations.push(...texts(idleViolations(agent)).map((v) => `${label}: ${v}`));
		// Commands issued by listeners may still land after the agent came to rest: checked once quiet.
		if (store && !disposed && !agent.state.isStreaming) violations.push(...(await storeViolations(agent, store, scripted.model, [work, serial])).map((v) => `${label}: ${v}`));
		return true;
	};

	const finish = () => {
		process.off("unhandledRejection", onUnhandled);
		console.warn = warn;
		return [...violations, ...texts(invariants.violations)];
	};
	agent.prompt("start").catch(() => {});
	if (!(await idle("first run"))) return finish();
	// Commands scheduled after the last event run between runs, in order.
	while (pending.length) {
		issue((pending.shift() as { command: Command }).command);
		if (!(await idle("after a command between runs"))) return finish();
	}
	// Flush the queues: every queued message must come out exactly once.
	for (let i = 0; i < 6 && !disposed && agent.hasQueuedMessages(); i++) {
		// continue() needs a transcript to continue from (pi's rule); after a reset, a prompt takes the queues.
		const flush = agent.state.messages.length > 0 ? agent.continue() : agent.prompt("flush");
		flush.catch((error) => violations.push(`flushing queued messages threw: ${String(error)}`));
		if (!(await idle("flushing queues"))) break;
	}
	if (!disposed && agent.hasQueuedMessages()) violations.push("queues still hold messages after flushing");
	if (compactions.size > 0) violations.push(`${compactions.size} compact() call(s) never settled`);
	violations.push(...transcriptViolations(agent.state.messages), ...providerRequestViolations(agent.state.messages));
	violations.push(...hookViolations(hooks, executed, agent.state.messages, scenario, stoppedByCommand));
	violations.push(...texts(invariants.violations), ...texts(ledger.violations(queuesOf(agent))));
	if (invariants.running) violations.push("a run never ended (agent_start without agent_end)");
	// A listener on the handed-out machine got the deltas from when it was added: the end of the agent's.
	if (pinnedDeltas && facadeDeltas.slice(facadeDeltas.length - pinnedDeltas.length).join("|") !== pinnedDeltas.join("|")) {
		violations.push(`the actor's listener got ${pinnedDeltas.length} text deltas that are not the last of the agent listener's ${facadeDeltas.length}`);
	}
	// And it got all of them from its addition on: the stream reads on only once a delta reached the
	// agent's listener, so at most one delta emitted before the addition was still on its way there.
	// (Without this, a listener that got nothing passed: nothing is the end of every list.)
	if (pinnedDeltas && pinnedDeltas.length < facadeDeltas.length - facadeDeltasAtPin - 1) {
		violations.push(`the actor's listener got ${pinnedDeltas.length} text deltas, where the agent's listener got ${facadeDeltas.length - facadeDeltasAtPin} after it was added`);
	}
	if (store && !disposed) violations.push(...(await storeViolations(agent, store, scripted.model, [work, serial])).map((v) => `at the end: ${v}`));
	agent.dispose();
	await new Promise<void>((resolve) => setImmediate(resolve));
	if (Object.keys(agent.actor.getSnapshot().children).length) violations.push("child actors alive after dispose");
	// Nothing the agent started may go on unheeded once it is disposed: what has not returned was told to stop.
	for (const { what, signal } of open) if (signal?.aborted !== true) violations.push(`${what} still running after dispose, its signal not aborted`);
	process.off("unhandledRejection", onUnhandled);
	console.warn = warn;
	return violations;
}

