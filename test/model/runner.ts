/**
 * Runs an abstract path against the real Agent. Every asynchronous part of the system waits
 * for the path: the provider (the scripted model, whose events a puppet stream forwards only
 * when the path says so), beforeToolCall (preflight), tool executions, the compaction
 * summariser, and the facade's delivery acknowledgements (held, as a slow listener would).
 * Commands go through the Agent's public API. After each step the real machine must project
 * to the same abstract state as the model; the invariants are checked on every event.
 */
import type { AnyMachineSnapshot } from "xstate";
import { Agent } from "../../src/agent.js";
import { AssistantMessageEventStream } from "../../src/providers/event-stream.js";
import { createScriptedModel, type ScriptedBlock } from "../../src/providers/scripted.js";
import type { AgentMachineEvent } from "../../src/machines/types.js";
import type { AgentTool, AgentToolResult } from "../../src/types/agent.js";
import type { ToolCall } from "../../src/types/content.js";
import type { AgentMessage, AssistantMessage } from "../../src/types/messages.js";
import type { AssistantMessageEvent, StreamFn } from "../../src/types/stream.js";
import {
	compaction,
	compactionFailsAtOnce,
	eventLabel,
	INITIAL_TRANSCRIPT,
	model,
	project,
	replyCalls,
	replyError,
	replyKindOf,
	replyStop,
	SUMMARY,
	MISSING_TOOL,
	TOOL_NAME,
	TOOL_TIMEOUT_MS,
	OUTPUT_LIMIT_RECOVERY,
	type ReplyKind,
} from "./abstract-model.js";
import { definitions, type ModelPath } from "./graph.js";
import { EventInvariants, idleViolations, QueueLedger, transcriptViolations } from "../support/invariants.js";
import { providerRequestViolations } from "../support/provider-requests.js";

export async function settle(rounds = 8): Promise<void> {
	for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Forwards a scripted stream's events to the agent only when told to. */
export class PuppetStream {
	readonly out = new AssistantMessageEventStream();
	private readonly buffer: AssistantMessageEvent[] = [];
	private lastPartial: AssistantMessage | undefined;
	private readonly streamedCalls: ToolCall[] = [];
	ended = false;

	constructor(source: AsyncIterable<AssistantMessageEvent>, readonly signal: AbortSignal | undefined) {
		void (async () => {
			for await (const event of source) this.buffer.push(event);
		})();
	}

	/** Forwards buffered events up to and including the first one `until` accepts; false when none does. */
	forward(until: (event: AssistantMessageEvent) => boolean, skip?: (event: AssistantMessageEvent) => boolean): boolean {
		while (this.buffer.length && !this.ended) {
			const event = this.buffer.shift() as AssistantMessageEvent;
			if (skip?.(event)) continue;
			if ("partial" in event) this.lastPartial = event.partial;
			if (event.type === "toolcall_end") this.streamedCalls.push(event.toolCall);
			this.out.push(event);
			if (event.type === "done" || event.type === "error") this.ended = true;
			if (until(event)) return true;
		}
		return false;
	}

	/** Ends the stream as a provider honouring the abort signal does. */
	endAborted(): void {
		if (this.ended) return;
		this.ended = true;
		const base = this.lastPartial ?? ({ role: "assistant", api: model.api, provider: model.provider, model: model.id, timestamp: 0 } as AssistantMessage);
		const error: AssistantMessage = {
			...base,
			content: [...this.streamedCalls],
			usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
			stopReason: "aborted",
			errorMessage: "Request was aborted",
		};
		this.out.push({ type: "error", reason: "aborted", error });
	}

	/** Auto mode: everything now (aborted if the signal says so). */
	finish(): void {
		if (this.signal?.aborted) this.endAborted();
		else this.forward(() => false);
	}
}

export interface Gate<T> {
	resolve: (value: T) => void;
	reject: (error: Error) => void;
}

export interface ToolGate extends Gate<AgentToolResult<unknown>> {
	onUpdate?: ((partial: AgentToolResult<unknown>) => void) | undefined;
}

export interface RealRunResult {
	/** Definition transitions (keys) the real machine took. */
	taken: Set<string>;
	violations: string[];
	/** Steps executed before a divergence (all of them when none). */
	executed: number;
}

let callCounter = 0;

/** What the stream and tool events of a path act on. */
export interface PuppetParts {
	stream: PuppetStream | undefined;
	mode: ModelPath["mode"];
	tools: Map<string, ToolGate>;
	/** Sends an event to the real machine (its own delayed events are delivered this way, now). */
	send(event: AgentMachineEvent): void;
	/** The real id of an abstract tool call, in the state the step starts from. */
	realCallId(abstractId: string): string | undefined;
}

/**
 * Performs a stream or tool event of a path on the puppets (both runners use it): forwards the
 * puppet stream's events, settles or updates a gated tool, delivers the machine's own delayed
 * events. Returns what went wrong, if anything.
 */
export function performPuppetEvent(event: AgentMachineEvent, parts: PuppetParts): string | undefined {
	const { stream, tools, send } = parts;
	switch (event.type) {
		case "stream.start":
		case "stream.toolcall": {
			if (!stream) return "no stream";
			const wanted = event.type === "stream.start" ? "start" : "toolcall_end";
			if (!stream.forward((e) => e.type === wanted)) return `scripted stream has no ${wanted} left`;
			return undefined;
		}
		case "stream.done":
			if (!stream) return "no stream";
			if (event.message.stopReason === "aborted") stream.endAborted();
			// The path closed every tool call it wanted streamed; the rest the provider "never closed"
			// (in streaming mode a toolcall_end starts the tool, which the model did not ask for).
			else stream.forward(() => false, parts.mode === "streaming" ? (e) => e.type === "toolcall_end" : undefined);
			return undefined;
		case "tools.abandon":
			send(event);
			return undefined;
		case "tool.settled":
		case "tool.update":
		case "tool.timeout": {
			const id = parts.realCallId(event.callKey);
			if (!id) return `no real call for ${event.callKey}`;
			if (event.type === "tool.timeout") {
				send({ ...event, callKey: id });
				return undefined;
			}
			const gate = tools.get(id);
			if (!gate) return `tool ${id} is not executing`;
			if (event.type === "tool.update") {
				gate.onUpdate?.(event.partialResult);
				return undefined;
			}
			tools.delete(id);
			if (event.outcome.isError) gate.reject(new Error("fail"));
			else gate.resolve(event.outcome.result);
			return undefined;
		}
		default:
			return `no puppet executor for ${event.type}`;
	}
}

/** What a puppet stream function needs to know about the run that uses it. */
export interface PuppetRun {
	/** The step being performed. */
	index(): number;
	/** True once the path is done and everything may finish on its own. */
	auto(): boolean;
	/** A call started: its puppet stream. */
	started(puppet: PuppetStream): void;
}

/**
 * The stream function of a path: each call plays the reply the path's next `stream.done`
 * asks for, through a puppet stream that forwards events only when the path says so.
 */
export function puppetStreamFn(path: ModelPath, run: PuppetRun): StreamFn {
	const plannedReply = (): { kind: ReplyKind; streamed: number } => {
		let streamed = 0;
		if (!run.auto()) {
			for (let j = run.index() + 1; j < path.steps.length; j++) {
				const event = path.steps[j]?.event as AgentMachineEvent;
				if (event.type === "stream.toolcall") streamed++;
				if (event.type === "stream.done") {
					const kind = replyKindOf(event.message);
					if (kind !== "aborted") return { kind, streamed };
					break;
				}
				if (event.type === "dispose") break;
			}
		}
		return { kind: streamed === 0 ? "text" : streamed === 1 ? "tools1" : "tools2", streamed };
	};
	return (callModel, context, options) => {
		const { kind, streamed } = plannedReply();
		const blocks: ScriptedBlock[] = [];
		if (kind === "text" || kind === "error" || kind === "overflow") blocks.push({ type: "text", text: "hi" });
		const name = kind === "missing1" ? MISSING_TOOL : TOOL_NAME;
		for (let i = 0; i < replyCalls(kind, streamed); i++) blocks.push({ type: "toolCall", name, arguments: {}, id: `c${++callCounter}` });
		const scripted = createScriptedModel([{ content: blocks, stopReason: replyStop(kind), errorMessage: replyError(kind), usage: { input: 10, output: 5, totalTokens: 15 } }], {
			chunkSize: 64,
		});
		const { signal, ...rest } = options ?? {};
		const source = scripted.streamFn(callModel, context, rest) as AssistantMessageEventStream;
		const puppet = new PuppetStream(source, signal);
		run.started(puppet);
		if (run.auto()) void settle(2).then(() => puppet.finish());
		return puppet.out;
	};
}

/** Runs one model path on a fresh Agent. */
export async function runPath(path: ModelPath): Promise<RealRunResult> {
	const violations: string[] = [];
	const taken = new Set<string>();
	let auto = false;
	let index = -1;
	let stream: PuppetStream | undefined;
	const hooks: Gate<{ block: boolean; reason?: string } | undefined>[] = [];
	const summaries: Gate<string>[] = [];
	const tools = new Map<string, ToolGate>();

	const streamFn = puppetStreamFn(path, {
		index: () => index,
		auto: () => auto,
		started: (puppet) => (stream = puppet),
	});

	const tool: AgentTool<object, unknown> = {
		name: TOOL_NAME,
		label: TOOL_NAME,
		description: "stub",
		parameters: { type: "object", properties: {} },
		execute: (callKey, _params, _signal, onUpdate) =>
			new Promise((resolve, reject) => {
				if (auto) return resolve({ content: [{ type: "text", text: "ok" }], details: {} });
				tools.set(callKey, { resolve, reject, onUpdate: onUpdate as ToolGate["onUpdate"] });
			}),
	};

	const agent = new Agent({
		initialState: { model, tools: [tool], messages: [...INITIAL_TRANSCRIPT] },
		streamFn,
		toolExecution: path.mode,
		toolTimeoutMs: TOOL_TIMEOUT_MS,
		toolAbortGraceMs: TOOL_TIMEOUT_MS,
		outputLimitRecovery: OUTPUT_LIMIT_RECOVERY,
		compaction: {
			...compaction,
			summarize: () =>
				new Promise<string>((resolve, reject) => {
					if (auto) return resolve(SUMMARY);
					summaries.push({ resolve, reject });
				}),
		},
		beforeToolCall: !path.hook
			? undefined
			: () =>
						new Promise((resolve, reject) => {
							if (auto) return resolve(undefined);
							hooks.push({ resolve, reject });
						}),
	});

	// Hold the facade's delivery acknowledgements until the path delivers.
	const send = agent.actor.send.bind(agent.actor);
	let held: number | undefined;
	(agent.actor as { send: (event: AgentMachineEvent) => void }).send = (event: AgentMachineEvent) => {
		if (event.type === "delivered" && !auto) {
			held = Math.max(held ?? 0, event.barrier);
			return;
		}
		send(event);
	};
	agent.actor.system.inspect({
		next: (event) => {
			if (event.type !== "@xstate.microstep" || event.actorRef !== agent.actor) return;
			for (const t of (event as unknown as { _transitions: object[] })._transitions) {
				const definition = definitions.get(t);
				if (definition) taken.add(definition.key);
			}
		},
	});

	const invariants = new EventInvariants(agent);
	const ledger = new QueueLedger();
	agent.subscribe((event) => {
		invariants.onEvent(event);
		ledger.onEvent(event);
		if (event.type === "agent_end") violations.push(...transcriptViolations(agent.state.messages), ...providerRequestViolations(agent.state.messages));
	});

	const realCallId = (abstractId: string, from: AnyMachineSnapshot): string | undefined => {
		const position = from.context.run?.batch?.calls.findIndex((call: { toolCall: { id: string } }) => call.toolCall.id === abstractId) ?? -1;
		return agent.actor.getSnapshot().context.run?.batch?.calls[position]?.toolCall.id;
	};
	const ignore = (promise: Promise<unknown>) => promise.catch(() => {});
	const preparingIn = (from: AnyMachineSnapshot): string | undefined =>
		from.context.run?.batch?.calls.find((call: { status: string }) => call.status === "preparing")?.toolCall.id;
	const releaseHook = (decision: { block: boolean; reason?: string } | undefined): string | undefined => {
		const gate = hooks.pop();
		if (!gate) return "no beforeToolCall waiting";
		gate.resolve(decision);
		return undefined;
	};
	const fresh = (message: AgentMessage) => ({ ...message }) as AgentMessage;

	const perform = (step: ModelPath["steps"][number]): string | undefined => {
		const event = step.event;
		switch (event.type) {
			case "prompt":
				ignore(agent.prompt(event.messages));
				return;
			case "continue":
				ignore(agent.continue());
				return;
			case "update":
				return; // the facade sends `update` itself before every prompt, continue and compact
			case "reset":
				agent.reset();
				return;
			case "queue.clear":
				agent.clearAllQueues();
				return;
			case "queue.mode":
				agent.followUpMode = event.mode;
				return;
			case "compact":
				ignore(agent.compact());
				return;
			case "steer": {
				const message = fresh(event.message);
				ledger.track(message, "steer");
				agent.steer(message);
				return;
			}
			case "followUp": {
				const message = fresh(event.message);
				ledger.track(message, "followUp");
				agent.followUp(message);
				return;
			}
			case "abort":
				agent.abort();
				return;
			case "dispose":
				agent.dispose();
				return;
			case "listener.error":
				// What the facade sends when a listener throws (delivery is complete at this point, so inject it).
				send(event);
				return;
			case "delivered":
				if (held === undefined) return "no delivery acknowledgement to release";
				send({ type: "delivered", barrier: held });
				return;
			case "tool.prepared":
				return releaseHook(undefined);
			case "stream.start":
			case "stream.toolcall":
			case "stream.done":
			case "tools.abandon":
			case "tool.settled":
			case "tool.update":
			case "tool.timeout":
				// beforeToolCall blocking the call it was asked about.
				if (event.type === "tool.settled" && preparingIn(step.from) === event.callKey) return releaseHook({ block: true, reason: "blocked" });
				return performPuppetEvent(event, { stream, mode: path.mode, tools, send, realCallId: (id) => realCallId(id, step.from) });
			default: {
				const type = (event as { type: string }).type;
				if (type === "xstate.done.actor.compaction" || type === "xstate.error.actor.compaction") {
					if (compactionFailsAtOnce(step.from)) return; // the real actor already failed on its own
					const gate = summaries.pop();
					if (!gate) return "no summariser waiting";
					if (type === "xstate.done.actor.compaction") gate.resolve(SUMMARY);
					else gate.reject(new Error("summariser failed"));
					return;
				}
				return `no executor for ${type}`;
			}
		}
	};

	const conform = (expected: AnyMachineSnapshot, label: string): boolean => {
		if (compactionFailsAtOnce(expected)) return true;
		// While idle the facade owns the transcript (it sends it to the machine with the next command).
		const snapshot = agent.actor.getSnapshot() as AnyMachineSnapshot;
		const real = project(snapshot, snapshot.status !== "active" || snapshot.matches("idle" as never) ? agent.state.messages : undefined);
		const model = project(expected);
		if (real === model) return true;
		violations.push(`after ${label}: real ${real}\n    model ${model}`);
		return false;
	};

	let executed = 0;
	await settle();
	if (conform(path.initial, "start")) {
		for (index = 0; index < path.steps.length; index++) {
			const step = path.steps[index] as ModelPath["steps"][number];
			const problem = perform(step);
			if (problem) {
				violations.push(`step ${index} ${eventLabel(step.event)}: ${problem}`);
				break;
			}
			await settle();
			executed++;
			if (!conform(step.to, `step ${index} ${eventLabel(step.event)}`)) break;
		}
	}

	// Let everything finish: the run must settle, and leave nothing behind.
	auto = true;
	if (held !== undefined) send({ type: "delivered", barrier: held });
	stream?.finish();
	for (const gate of hooks.splice(0)) gate.resolve(undefined);
	for (const gate of summaries.splice(0)) gate.resolve(SUMMARY);
	for (const [id, gate] of tools) {
		tools.delete(id);
		gate.resolve({ content: [{ type: "text", text: "ok" }], details: {} });
	}
	const idle = await Promise.race([agent.waitForIdle().then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 3000))]);
	if (!idle) violations.push(`waitForIdle did not settle; machine in ${JSON.stringify(agent.actor.getSnapshot().value)}`);
	await settle();
	violations.push(...invariants.violations, ...idleViolations(agent), ...transcriptViolations(agent.state.messages), ...ledger.violations(agent));
	agent.dispose();
	await settle(2);
	if (Object.keys(agent.actor.getSnapshot().children).length) violations.push("children alive after dispose");
	return { taken, violations, executed };
}
