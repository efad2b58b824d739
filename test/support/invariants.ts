/**
 * The agent's invariants, shared by the model-based and property tests. Checkers collect
 * violations as strings (so a property can report all of them, and a listener never throws
 * into the agent); `assertNoViolations` turns them into a test failure.
 */
import type { Agent } from "../../src/agent.js";
import type { AgentEvent } from "../../src/types/agent.js";
import type { AgentMessage, AssistantMessage } from "../../src/types/messages.js";
import { Counts, countsOf, toolCallIdsOf } from "./id-counts.js";

function failed(message: AgentMessage): boolean {
	const stop = (message as AssistantMessage).stopReason;
	return stop === "error" || stop === "aborted";
}

function roleOf(message: unknown): string | undefined {
	return (message as { role?: string } | undefined)?.role;
}

/**
 * Checks the AgentEvent stream incrementally, one event at a time, across any number of runs:
 * runs nest as agent_start … (turn_start … turn_end)* … agent_end; messages open and close
 * without interleaving; every tool_execution_start has exactly one tool_execution_end (and no
 * update outside); every tool call of a non-failed assistant message gets exactly one tool
 * result message in the same run, in source order; `pendingToolCalls` mirrors the open tool
 * executions. Calls that share an id are counted, not conflated: a reply with two calls "x"
 * has two executions and two results for "x", never one.
 */
export class EventInvariants {
	readonly violations: string[] = [];
	private inRun = false;
	private inTurn = false;
	private openMessage: string | undefined;
	private readonly openTools = new Counts();
	private readonly endedTools = new Counts();
	/** The tool calls of this run's assistant messages so far, by id (the one streaming included). */
	private readonly runCalls = new Counts();
	/** The calls of the assistant message streaming now (counted into runCalls when it ends). */
	private streamingCalls = new Counts();
	/** Tool call ids of this run's non-failed assistant messages still waiting for a result, in source order. */
	private awaitingResults: string[] = [];
	/** Tool call ids of this run's failed assistant messages: a result is allowed, not required. */
	private readonly optionalResults = new Counts();
	count = 0;

	constructor(private readonly agent?: Agent) {}

	private fail(text: string, event: AgentEvent): void {
		this.violations.push(`#${this.count} ${event.type}: ${text}`);
	}

	/** Checks one event (call from a subscriber: it sees agent.state already reduced). */
	onEvent(event: AgentEvent): void {
		this.count++;
		switch (event.type) {
			case "agent_start":
				if (this.inRun) this.fail("agent_start inside a run", event);
				this.inRun = true;
				this.inTurn = false;
				this.awaitingResults = [];
				this.optionalResults.clear();
				this.endedTools.clear();
				this.runCalls.clear();
				this.streamingCalls = new Counts();
				break;
			case "agent_end":
				if (!this.inRun) this.fail("agent_end outside a run", event);
				if (this.inTurn) this.fail("agent_end inside a turn", event);
				if (this.openMessage) this.fail(`agent_end with open message ${this.openMessage}`, event);
				if (this.openTools.size) this.fail(`agent_end with open tools ${this.openTools.keys()}`, event);
				if (this.awaitingResults.length) this.fail(`tool calls without results: ${this.awaitingResults}`, event);
				this.inRun = false;
				break;
			case "turn_start":
				if (!this.inRun) this.fail("turn_start outside a run", event);
				if (this.inTurn) this.fail("turn_start inside a turn", event);
				this.inTurn = true;
				break;
			case "turn_end":
				if (!this.inTurn) this.fail("turn_end outside a turn", event);
				if (this.openMessage) this.fail(`turn_end with open message ${this.openMessage}`, event);
				if (this.openTools.size) this.fail(`turn_end with open tools ${this.openTools.keys()}`, event);
				if (this.awaitingResults.length) this.fail(`turn_end before results of ${this.awaitingResults}`, event);
				this.inTurn = false;
				break;
			case "message_start":
				if (!this.inTurn) this.fail(`message_start(${roleOf(event.message)}) outside a turn`, event);
				if (this.openMessage) this.fail(`message_start while ${this.openMessage} is open`, event);
				this.openMessage = roleOf(event.message) ?? "?";
				this.streamingCalls = countsOf(toolCallIdsOf(event.message));
				break;
			case "message_update":
				if (this.openMessage !== "assistant") this.fail(`message_update while ${this.openMessage} is open`, event);
				// Streaming tool execution starts a call before its message ends: count what has streamed.
				this.streamingCalls = countsOf(toolCallIdsOf(event.message));
				break;
			case "message_end": {
				const role = roleOf(event.message);
				if (this.openMessage !== role) this.fail(`message_end(${role}) while ${this.openMessage} is open`, event);
				this.openMessage = undefined;
				if (role === "assistant") {
					const ids = toolCallIdsOf(event.message);
					this.streamingCalls = new Counts();
					for (const id of ids) this.runCalls.add(id);
					if (failed(event.message)) for (const id of ids) this.optionalResults.add(id);
					else this.awaitingResults.push(...ids);
				}
				if (role === "toolResult") {
					const id = (event.message as { toolCallId: string }).toolCallId;
					if (this.awaitingResults[0] === id) this.awaitingResults.shift();
					else if (this.awaitingResults.includes(id)) this.fail(`tool result ${id} out of source order (expected ${this.awaitingResults[0]})`, event);
					else if (this.optionalResults.get(id) > 0) this.optionalResults.add(id, -1);
					else if (this.runCalls.get(id) > 0) this.fail(`second tool result for ${id}`, event);
					else this.fail(`tool result ${id} answers no tool call of this run`, event);
				}
				break;
			}
			case "tool_execution_start": {
				const id = event.toolCallId;
				if (!this.inTurn) this.fail(`tool ${id} started outside a turn`, event);
				// More executions of an id than calls with it (in the messages so far and the one streaming): one ran twice.
				const calls = this.runCalls.get(id) + this.streamingCalls.get(id);
				if (this.openTools.get(id) + this.endedTools.get(id) >= calls) this.fail(`tool ${id} started twice`, event);
				this.openTools.add(id);
				break;
			}
			case "tool_execution_update":
				if (this.openTools.get(event.toolCallId) === 0) this.fail(`update of tool ${event.toolCallId} outside its execution`, event);
				break;
			case "tool_execution_end":
				if (this.openTools.get(event.toolCallId) === 0) this.fail(`tool ${event.toolCallId} ended without start (or twice)`, event);
				this.openTools.add(event.toolCallId, -1);
				this.endedTools.add(event.toolCallId);
				break;
			default:
				break;
		}
		if (this.agent && (event.type === "tool_execution_start" || event.type === "tool_execution_end")) {
			const pending = [...this.agent.state.pendingToolCalls].sort().join(",");
			const open = this.openTools.keys().sort().join(",");
			if (pending !== open) this.fail(`pendingToolCalls {${pending}} ≠ open tool executions {${open}}`, event);
		}
	}

	/** True between agent_start and agent_end. */
	get running(): boolean {
		return this.inRun;
	}
}

/**
 * The transcript is valid to send to a provider: every tool call of a non-failed assistant
 * message is answered by exactly one tool result, right after it and in source order; no
 * tool result answers nothing (results of a failed message's calls are tolerated).
 */
export function transcriptViolations(messages: readonly AgentMessage[]): string[] {
	const violations: string[] = [];
	// Counted: two calls that share an id are answered by two results.
	const calls = new Counts();
	const answered = new Counts();
	for (let index = 0; index < messages.length; index++) {
		const message = messages[index] as AgentMessage;
		if (roleOf(message) === "assistant") {
			const { stopReason, errorMessage } = message as AssistantMessage;
			// A reply that succeeded carries no error: a run reporting one says it failed when it did not.
			if ((stopReason === "stop" || stopReason === "toolUse") && errorMessage !== undefined) {
				violations.push(`transcript[${index}]: a ${stopReason} reply carries errorMessage "${errorMessage}"`);
			}
			const ids = toolCallIdsOf(message);
			for (const id of ids) calls.add(id);
			if (failed(message)) continue;
			for (let k = 0; k < ids.length; k++) {
				const next = messages[index + 1 + k] as { role?: string; toolCallId?: string } | undefined;
				if (next?.role !== "toolResult" || next.toolCallId !== ids[k]) {
					violations.push(`transcript[${index}]: tool call ${ids[k]} not answered in source order (found ${next?.role}:${next?.toolCallId ?? ""})`);
					break;
				}
			}
		}
		if (roleOf(message) === "toolResult") {
			const id = (message as { toolCallId: string }).toolCallId;
			if (calls.get(id) === 0) violations.push(`transcript[${index}]: orphan tool result ${id}`);
			else if (answered.get(id) >= calls.get(id)) violations.push(`transcript[${index}]: second result for ${id}`);
			answered.add(id);
		}
	}
	return violations;
}

/** When idle (or disposed): not streaming, no pending tool calls, no child actor, no run in the machine. */
export function idleViolations(agent: Agent): string[] {
	const violations: string[] = [];
	const snapshot = agent.actor.getSnapshot();
	if (agent.state.isStreaming) violations.push("idle: isStreaming is true");
	if (agent.state.pendingToolCalls.size) violations.push(`idle: pendingToolCalls {${[...agent.state.pendingToolCalls]}}`);
	if (agent.state.streamingMessage) violations.push("idle: streamingMessage set");
	const children = Object.keys(snapshot.children);
	if (children.length) violations.push(`idle: child actors alive: ${children.join(",")}`);
	if (snapshot.status === "active" && snapshot.value !== "idle") violations.push(`idle: machine in ${JSON.stringify(snapshot.value)}`);
	if (snapshot.status === "active" && snapshot.context.run) violations.push("idle: a run is still in context");
	if (snapshot.status === "error") violations.push(`machine in error status: ${String(snapshot.error)}`);
	return violations;
}

/**
 * Exactly-once delivery of steering and follow-up messages: each tracked message was
 * delivered (message_end) at most once, and is delivered or still queued, never both and
 * never neither.
 */
export class QueueLedger {
	private readonly tracked: { message: AgentMessage; kind: "steer" | "followUp"; mayBeDropped?: boolean }[] = [];
	private readonly delivered = new Map<AgentMessage, number>();

	track(message: AgentMessage, kind: "steer" | "followUp"): void {
		this.tracked.push({ message, kind });
	}

	/**
	 * The queues were cleared: messages tracked so far may be gone without being delivered
	 * (one the machine had already taken is still delivered, once).
	 */
	cleared(): void {
		for (const entry of this.tracked) entry.mayBeDropped = true;
	}

	onEvent(event: AgentEvent): void {
		if (event.type !== "message_end") return;
		if (!this.tracked.some((entry) => entry.message === event.message)) return;
		this.delivered.set(event.message, (this.delivered.get(event.message) ?? 0) + 1);
	}

	/** Violations now; `lostAllowed` when the agent was disposed (queued messages stay in the dead queue). */
	violations(agent: Agent): string[] {
		const out: string[] = [];
		const { steeringQueue, followUpQueue } = agent.actor.getSnapshot().context;
		for (const { message, kind, mayBeDropped } of this.tracked) {
			const label = `${kind} "${(message as { content?: { text?: string }[] }).content?.[0]?.text ?? "?"}"`;
			const delivered = this.delivered.get(message) ?? 0;
			const queued = (kind === "steer" ? steeringQueue : followUpQueue).filter((m) => m === message).length;
			if (delivered > 1) out.push(`${label} delivered ${delivered} times`);
			if (queued > 1) out.push(`${label} queued ${queued} times`);
			if (delivered + queued === 0 && !mayBeDropped) out.push(`${label} lost (neither delivered nor queued)`);
			if (delivered > 0 && queued > 0) out.push(`${label} delivered and still queued`);
		}
		return out;
	}
}

/** Throws with every violation listed. */
export function assertNoViolations(violations: readonly string[], context = ""): void {
	if (violations.length === 0) return;
	throw new Error(`${context ? `${context}: ` : ""}${violations.length} invariant violation(s):\n  ${violations.join("\n  ")}`);
}
