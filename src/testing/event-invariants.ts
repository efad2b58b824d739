/**
 * The event-stream invariants, checked one event at a time as an agent emits them (across any
 * number of runs, and across restores: a restored agent's events continue the stream of the
 * agent it was restored from).
 */
import type { AgentEvent } from "../types/agent.js";
import type { AgentMessage, AssistantMessage } from "../types/messages.js";
import { Counts, countsOf, toolCallIdsOf } from "./id-counts.js";
import { unstorableReason } from "../durable/journal.js";
import { jsonProblems } from "./json-check.js";
import { type AgentRule, type AgentViolation, violation } from "./violations.js";

function failed(message: AgentMessage): boolean {
	const stop = (message as AssistantMessage).stopReason;
	return stop === "error" || stop === "aborted";
}

/** JSON of a call's arguments (undefined when they have none, or are not JSON). */
function jsonOf(value: unknown): string | undefined {
	try {
		return JSON.stringify(value);
	} catch {
		return undefined;
	}
}

function roleOf(message: unknown): string | undefined {
	return (message as { role?: string } | undefined)?.role;
}

/** The rules that pair an event with earlier ones (a start with its end, a question with its answer). */
const PAIRING_RULES: ReadonlySet<AgentRule> = new Set(["run-nesting", "message-nesting", "tool-execution", "tool-answered", "approval"]);

/**
 * Checks the AgentEvent stream incrementally: runs nest as agent_start … (turn_start …
 * turn_end)* … agent_end; messages open and close without interleaving; every
 * tool_execution_start has exactly one tool_execution_end (and no update outside); every tool
 * call of a reply that did not fail gets exactly one tool result in the same run, in source
 * order; an approval is requested inside its call's execution and resolved once before the call
 * ends; a compaction's start has one end; `pendingToolCalls` (when given) mirrors the open executions. Calls that share an id are
 * counted, not conflated: a reply with two calls "x" has two executions and two results for "x".
 *
 * @example
 * const invariants = new EventInvariants(() => agent.state.pendingToolCalls);
 * agent.subscribe((event) => invariants.onEvent(event));
 * await agent.prompt("hi");
 * expect(invariants.violations).toEqual([]);
 */
export class EventInvariants {
	readonly violations: AgentViolation[] = [];
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
	/** Calls whose approval was requested and not yet resolved. */
	private readonly awaitingApproval = new Counts();
	/** Approvals requested in this run, by call id (resolved or not). */
	private readonly asked = new Counts();
	/**
	 * Calls of the reply streaming at a restore that had been asked about before it: the restored
	 * run closes that reply with them, and may replay a decision taken before the restart without
	 * asking again (the listeners heard the question already).
	 */
	private readonly askedBeforeRestore = new Counts();
	/** The arguments each waiting call was asked about with: the object, and its JSON then. */
	private readonly askedArgs = new Map<string, { json: string | undefined }>();
	/** The tool calls of the run's replies as the model sent them (the transcript's own objects, and their arguments' JSON then). */
	private sentCalls: { call: { id: string; name: string; arguments: unknown }; json: string | undefined }[] = [];
	/** The arguments (as JSON) of each call approved in this run: what its tool must run with. */
	private readonly approvedArgs = new Map<string, string | undefined>();
	/** The reason of the compaction started and not yet ended. */
	private openCompaction: string | undefined;
	/** Events seen so far. */
	count = 0;

	/** `pendingToolCalls`: the agent's state to compare with the open executions, if any (undefined: not now). */
	constructor(private readonly pendingToolCalls?: () => ReadonlySet<string> | undefined) {}

	/**
	 * Joins an agent's run already under way (an agent restored mid-run, or recorded late): the
	 * events of that run before now were never heard, so what follows of it (an approval resolved,
	 * a tool ended, `agent_end`) cannot be checked against them. Until its `agent_end` its events
	 * are judged only by the rules that need no earlier event (plain JSON, say); every later run
	 * is checked whole.
	 *
	 * @example
	 * const invariants = new EventInvariants();
	 * if (agent.state.isStreaming) invariants.joinRunUnderWay();
	 */
	joinRunUnderWay(): void {
		this.joinedMidRun = true;
		this.inRun = true;
		this.inTurn = true;
	}

	private joinedMidRun = false;

	private fail(rule: AgentRule, text: string, event: AgentEvent): void {
		// Of a run joined under way, only what pairs an event with one before the join is unknowable;
		// what an event says by itself (a result no store could write) is judged as in any run.
		if (this.joinedMidRun && PAIRING_RULES.has(rule)) return;
		this.violations.push(violation(rule, `${event.type}: ${text}`, this.count - 1));
	}

	/**
	 * The agent was restored from a snapshot taken at this point of the stream: a message that
	 * was streaming is dropped (the restored run makes its call again), the rest goes on.
	 */
	restored(): void {
		// A compaction in progress is made again (or fails) after a restore: it starts anew.
		this.openCompaction = undefined;
		if (this.openMessage === "assistant") {
			// The reply is made again, or (when some of its calls had started, in streaming mode) closed
			// again with those calls, each announced anew: started, asked about again (or, when it
			// was asked before, its decision replayed without a question), ended with its stored
			// outcome. What was heard of them before the snapshot is forgotten; whether a
			// tool really ran twice is the fuzzer's and the walk's "replay" check, not the events'.
			for (const id of this.streamingCalls.keys()) {
				this.openTools.add(id, -this.openTools.get(id));
				// Ids can repeat across replies: forget at most as many ended executions as this reply has calls with the id.
				this.endedTools.add(id, -Math.min(this.endedTools.get(id), this.streamingCalls.get(id)));
				this.awaitingApproval.add(id, -this.awaitingApproval.get(id));
				this.askedBeforeRestore.add(id, Math.min(this.asked.get(id), this.streamingCalls.get(id)));
				this.asked.add(id, -this.asked.get(id));
			}
			this.openMessage = undefined;
			this.streamingCalls = new Counts();
		}
	}

	/** Checks one event (call it from a listener: it sees the agent's state already updated). */
	onEvent(event: AgentEvent): void {
		this.count++;
		switch (event.type) {
			case "agent_start":
				if (this.inRun) this.fail("run-nesting", "agent_start inside a run", event);
				this.inRun = true;
				this.inTurn = false;
				this.awaitingResults = [];
				this.optionalResults.clear();
				this.endedTools.clear();
				this.runCalls.clear();
				this.awaitingApproval.clear();
				this.asked.clear();
				this.askedBeforeRestore.clear();
				this.askedArgs.clear();
				this.approvedArgs.clear();
				this.sentCalls = [];
				this.streamingCalls = new Counts();
				break;
			case "agent_end":
				this.checkSentCalls(event);
				this.sentCalls = [];
				if (!this.inRun) this.fail("run-nesting", "agent_end outside a run", event);
				if (this.inTurn) this.fail("run-nesting", "agent_end inside a turn", event);
				if (this.openMessage) this.fail("message-nesting", `agent_end with open message ${this.openMessage}`, event);
				if (this.openTools.size) this.fail("tool-execution", `agent_end with open tools ${this.openTools.keys()}`, event);
				if (this.awaitingResults.length) this.fail("tool-answered", `tool calls without results: ${this.awaitingResults}`, event);
				if (this.awaitingApproval.size) this.fail("approval", `approvals never resolved: ${this.awaitingApproval.keys()}`, event);
				if (this.openCompaction) this.fail("run-nesting", `agent_end with the ${this.openCompaction} compaction still open`, event);
				this.inRun = false;
				if (this.joinedMidRun) this.forgetJoinedRun();
				break;
			case "turn_start":
				if (!this.inRun) this.fail("run-nesting", "turn_start outside a run", event);
				if (this.inTurn) this.fail("run-nesting", "turn_start inside a turn", event);
				this.inTurn = true;
				break;
			case "turn_end":
				this.checkSentCalls(event);
				if (!this.inTurn) this.fail("run-nesting", "turn_end outside a turn", event);
				if (this.openMessage) this.fail("message-nesting", `turn_end with open message ${this.openMessage}`, event);
				if (this.openTools.size) this.fail("tool-execution", `turn_end with open tools ${this.openTools.keys()}`, event);
				if (this.awaitingResults.length) this.fail("tool-answered", `turn_end before results of ${this.awaitingResults}`, event);
				this.inTurn = false;
				break;
			case "message_start":
				if (!this.inTurn) this.fail("message-nesting", `message_start(${roleOf(event.message)}) outside a turn`, event);
				if (this.openMessage) this.fail("message-nesting", `message_start while ${this.openMessage} is open`, event);
				this.openMessage = roleOf(event.message) ?? "?";
				this.streamingCalls = countsOf(toolCallIdsOf(event.message));
				break;
			case "message_update":
				if (this.openMessage !== "assistant") this.fail("message-nesting", `message_update while ${this.openMessage} is open`, event);
				// Streaming tool execution starts a call before its message ends: count what has streamed.
				this.streamingCalls = countsOf(toolCallIdsOf(event.message));
				break;
			case "message_end":
				this.onMessageEnd(event);
				break;
			case "tool_execution_start": {
				const id = event.toolCallId;
				if (!this.inTurn) this.fail("tool-execution", `tool ${id} started outside a turn`, event);
				// More executions of an id than calls with it (in the messages so far and the one streaming): one ran twice.
				const calls = this.runCalls.get(id) + this.streamingCalls.get(id);
				if (this.openTools.get(id) + this.endedTools.get(id) >= calls) this.fail("tool-execution", `tool ${id} started twice`, event);
				this.openTools.add(id);
				break;
			}
			case "tool_execution_update":
				if (this.openTools.get(event.toolCallId) === 0) this.fail("tool-execution", `update of tool ${event.toolCallId} outside its execution`, event);
				break;
			case "tool_execution_end":
				if (this.openTools.get(event.toolCallId) === 0) this.fail("tool-execution", `tool ${event.toolCallId} ended without start (or twice)`, event);
				// Every open execution of the id waits for a person: none of them can have ended. (Two
				// calls of a reply may share an id: one approved and ended while the other waits.)
				if (this.openTools.get(event.toolCallId) > 0 && this.awaitingApproval.get(event.toolCallId) >= this.openTools.get(event.toolCallId)) {
					this.fail("approval", `tool ${event.toolCallId} ended while its approval was still requested`, event);
				}
				this.openTools.add(event.toolCallId, -1);
				this.endedTools.add(event.toolCallId);
				// The call that ended (its afterToolCall was just asked): the rest at the turn's end.
				this.checkSentCalls(event, event.toolCallId);
				break;
			case "approval_requested":
				// Asked again after a restore: the question the listeners heard before it, not a second one.
				if (this.askedBeforeRestore.get(event.toolCallId) > 0) this.askedBeforeRestore.add(event.toolCallId, -1);
				this.asked.add(event.toolCallId);
				if (this.openTools.get(event.toolCallId) === 0) this.fail("approval", `approval of ${event.toolCallId} requested outside its call's execution`, event);
				if (this.awaitingApproval.get(event.toolCallId) >= this.openTools.get(event.toolCallId)) this.fail("approval", `approval of ${event.toolCallId} requested twice`, event);
				this.awaitingApproval.add(event.toolCallId);
				// By the call's key: two calls of a reply that repeats an id are asked about apart.
				this.askedArgs.set(event.callKey, { json: jsonOf(event.args) });
				break;
			case "approval_resolved":
				if (this.awaitingApproval.get(event.toolCallId) === 0 && this.askedBeforeRestore.get(event.toolCallId) > 0) {
					// A decision taken before the restart, replayed as the restored run closes the reply.
					this.askedBeforeRestore.add(event.toolCallId, -1);
					break;
				}
				if (this.awaitingApproval.get(event.toolCallId) === 0) this.fail("approval", `approval of ${event.toolCallId} resolved (${event.decision}) without a request, or twice`, event);
				this.awaitingApproval.add(event.toolCallId, -1);
				if (event.decision === "approved") this.onApproved(event);
				break;
			case "auto_compaction_start":
				if (this.openCompaction) this.fail("run-nesting", `a ${event.reason} compaction started while the ${this.openCompaction} one was open`, event);
				this.openCompaction = event.reason;
				break;
			case "auto_compaction_end":
				if (!this.openCompaction) this.fail("run-nesting", `a ${event.reason} compaction ended without a start (or twice)`, event);
				this.openCompaction = undefined;
				break;
			default:
				break;
		}
		const pendingNow = event.type === "tool_execution_start" || event.type === "tool_execution_end" ? this.pendingToolCalls?.() : undefined;
		if (pendingNow) {
			const pending = [...pendingNow].sort().join(",");
			const open = this.openTools.keys().sort().join(",");
			if (pending !== open) this.fail("tool-execution", `pendingToolCalls {${pending}} ≠ open tool executions {${open}}`, event);
		}
	}

	private onMessageEnd(event: Extract<AgentEvent, { type: "message_end" }>): void {
		const role = roleOf(event.message);
		this.checkJson(event);
		if (this.openMessage !== role) this.fail("message-nesting", `message_end(${role}) while ${this.openMessage} is open`, event);
		this.openMessage = undefined;
		if (role === "assistant") {
			for (const block of (event.message as { content?: unknown }).content as { type?: string; id: string; name: string; arguments: unknown }[]) {
				if (block?.type === "toolCall") this.sentCalls.push({ call: block, json: jsonOf(block.arguments) });
			}
			const ids = toolCallIdsOf(event.message);
			this.streamingCalls = new Counts();
			for (const id of ids) this.runCalls.add(id);
			if (failed(event.message)) for (const id of ids) this.optionalResults.add(id);
			else this.awaitingResults.push(...ids);
		}
		if (role !== "toolResult") return;
		const id = (event.message as { toolCallId: string }).toolCallId;
		if (this.awaitingResults[0] === id) this.awaitingResults.shift();
		else if (this.awaitingResults.includes(id)) this.fail("tool-answered", `tool result ${id} out of source order (expected ${this.awaitingResults[0]})`, event);
		else if (this.optionalResults.get(id) > 0) this.optionalResults.add(id, -1);
		else if (this.runCalls.get(id) > 0) this.fail("tool-answered", `second tool result for ${id}`, event);
		else this.fail("tool-answered", `tool result ${id} answers no tool call of this run`, event);
	}

	/**
	 * The transcript says what the model asked for: a tool call's arguments, as its reply ended,
	 * still read the same (a call's as its tool ends; all of the run's at each turn's and the run's
	 * end, so that checking costs the run's calls once a turn, not once a tool). Ones
	 * that do not were changed in place by code that was handed the call (`afterToolCall`'s or
	 * `beforeToolCall`'s `toolCall`, a listener's message): the model's own request then reads as
	 * something it never asked, in every later request and in the stored session. Reported once a call.
	 */
	private checkSentCalls(event: AgentEvent, onlyId?: string): void {
		for (const sent of this.sentCalls) {
			if (onlyId !== undefined && sent.call.id !== onlyId) continue;
			const now = jsonOf(sent.call.arguments);
			if (now === sent.json) continue;
			this.fail("transcript", `the arguments of tool call ${sent.call.id} (tool "${sent.call.name}") in the transcript changed after the model sent them: sent ${sent.json}, now ${now}; code of yours was handed the call (afterToolCall's or beforeToolCall's toolCall, a listener's message) and changed it in place (the arguments a call runs with are the args beforeToolCall is handed, a copy; a person's change goes through approve(id, { arguments }))`, event);
			sent.json = now;
		}
	}

	/**
	 * What the person approved is what runs: unless they gave arguments of their own (`approve(id, {
	 * arguments })`, `argumentsGiven`), the arguments must still read as they did when asked about.
	 * Ones that do not were changed in place by code that kept them (a hook that edits `args` after
	 * it returned).
	 */
	private onApproved(event: Extract<AgentEvent, { type: "approval_resolved" }>): void {
		const asked = this.askedArgs.get(event.callKey);
		this.askedArgs.delete(event.callKey);
		const now = jsonOf(event.args);
		this.approvedArgs.set(event.toolCallId, now);
		if (asked && event.argumentsGiven !== true && asked.json !== now) {
			this.fail("approval", `the arguments of tool "${event.toolName}" (call ${event.toolCallId}) changed while it waited for approval: asked about ${asked.json}, approved ${now}; code of yours kept the arguments object and changed it (a person changes them with approve(id, { arguments }))`, event);
		}
	}

	/**
	 * Your tool is about to run a call with `args`: if the call was approved, they must be the
	 * approved ones (the kit's tool wrappers call this).
	 *
	 * @example
	 * invariants.executing("c1", "refund", { id: "A-17", amount: 5 });
	 */
	executing(toolCallId: string, toolName: string, args: unknown): void {
		if (!this.approvedArgs.has(toolCallId)) return;
		const approved = this.approvedArgs.get(toolCallId);
		this.approvedArgs.delete(toolCallId);
		const now = jsonOf(args);
		if (now !== approved) this.violations.push(violation("approval", `tool "${toolName}" (call ${toolCallId}) ran with arguments other than those approved: approved ${approved}, ran with ${now}; code of yours kept the arguments object and changed it after the decision`, this.count - 1));
	}

	/**
	 * A message is in the transcript from its end on, and the transcript is in every snapshot:
	 * checked now, while it is as your code made it (a tool result's details, say).
	 */
	private checkJson(event: Extract<AgentEvent, { type: "message_end" }>): void {
		const message = event.message as { role?: string; toolName?: string; toolCallId?: string };
		const result = message.role === "toolResult";
		const problems = jsonProblems(event.message, result ? "result" : "message");
		// With a store, a result no store could write never reaches the transcript: the agent answers
		// the call with an error saying why, and the tool's result is lost.
		const first = result ? (event.message as { content?: { type?: string; text?: string }[] }).content?.[0] : undefined;
		const unstorable = first?.type === "text" && first.text !== undefined ? unstorableReason(message.toolName ?? "", first.text) : undefined;
		if (unstorable !== undefined) problems.push(`it could not be stored (${unstorable}), so the agent answered the call with an error and the result is lost`);
		if (problems.length === 0) return;
		const what = result ? `the result of tool "${message.toolName}" (call ${message.toolCallId}), from its execute or your afterToolCall,` : `a ${message.role ?? "?"} message`;
		this.fail("snapshot", `${what} is not plain JSON, which agent.snapshot() must be: ${problems.join("; ")}`, event);
	}

	/**
	 * The run joined under way ended: what was counted of it would read as open in the next run.
	 * Only what `agent_start` does not start afresh is forgotten here.
	 */
	private forgetJoinedRun(): void {
		this.joinedMidRun = false;
		this.openMessage = undefined;
		this.openTools.clear();
		this.openCompaction = undefined;
	}

	/** True between agent_start and agent_end. */
	get running(): boolean {
		return this.inRun;
	}
}
