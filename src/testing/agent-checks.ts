/**
 * `checkAgentInvariants`: everything the kit checks of an agent after the fact, from the events
 * it emitted and the state it is in; `recordAgent` records both (and what was queued) for it.
 */
import type { Agent } from "../agent.js";
import type { AgentEvent, AgentState } from "../types/agent.js";
import type { AgentMessage, Message } from "../types/messages.js";
import { EventInvariants } from "./event-invariants.js";
import { type QueueContents, type QueueKind, QueueLedger } from "./queue-ledger.js";
import { checkTranscript } from "./transcript-checks.js";
import { type AgentViolation, violation } from "./violations.js";
import { refuseUnknownOptions } from "./option-checks.js";
import { shown } from "../agent-input.js";
import { defaultConvertToLlm } from "../machines/run-helpers.js";

/**
 * The part of an agent's state the checks read (an `Agent`'s `state`, or the `Agent` itself for the machine checks too).
 *
 * @example
 * const state: CheckedState = { messages: agent.state.messages, isStreaming: false, pendingToolCalls: new Set(), streamingMessage: undefined };
 * expect(checkAgentInvariants(events, state)).toEqual([]);
 */
export type CheckedState = Pick<AgentState, "messages" | "isStreaming" | "pendingToolCalls" | "streamingMessage">;

/**
 * The agent, or its state, that a check reads: anything else would fail inside the check with a
 * message about a field, or (a list of pending calls instead of their set) pass it unread.
 */
function checkSubject(caller: string, subject: unknown): void {
	const state = subject as Partial<CheckedState> | null;
	const fits = typeof subject === "object" && state !== null && typeof state.isStreaming === "boolean" && state.pendingToolCalls instanceof Set && Array.isArray(state.messages);
	if (fits || (typeof subject === "object" && subject !== null && isAgent(subject as Agent))) return;
	throw new TypeError(`agentchart/testing: ${caller} takes the agent, or its state (agent.state: messages, isStreaming, pendingToolCalls as a Set, streamingMessage), got ${shown(subject)}`);
}

function isAgent(value: Agent | CheckedState): value is Agent {
	return typeof (value as Agent).subscribe === "function" && "actor" in value;
}

/**
 * An idle agent is idle: not streaming, no pending tool calls, no streaming message; with the
 * agent itself, also no child actor, no run in the machine and the machine in `idle` (or ended).
 *
 * @example
 * await agent.waitForIdle();
 * expect(idleViolations(agent)).toEqual([]);
 */
export function idleViolations(subject: Agent | CheckedState): AgentViolation[] {
	checkSubject("idleViolations", subject);
	const state = isAgent(subject) ? subject.state : subject;
	const out: AgentViolation[] = [];
	const fail = (text: string) => out.push(violation("idle", text));
	if (state.isStreaming) fail("idle: isStreaming is true");
	if (state.pendingToolCalls.size) fail(`idle: pendingToolCalls {${[...state.pendingToolCalls]}}`);
	if (state.streamingMessage) fail("idle: streamingMessage set");
	if (!isAgent(subject)) return out;
	const snapshot = subject.actor.getSnapshot();
	const children = Object.keys(snapshot.children);
	if (children.length) fail(`idle: child actors alive: ${children.join(",")}`);
	if (snapshot.status === "active" && snapshot.value !== "idle") fail(`idle: machine in ${JSON.stringify(snapshot.value)}`);
	if (snapshot.status === "active" && snapshot.context.run) fail("idle: a run is still in the machine's context");
	if (snapshot.status === "error") fail(`machine in error status: ${String(snapshot.error)}`);
	return out;
}

/**
 * What a run that does not settle is still waiting on, as the end of a sentence (empty when the
 * machine shows nothing your code holds up): the calls whose `execute`, `afterToolCall` or
 * `beforeToolCall` has not answered, by tool and call, so a report names the code to look at;
 * or, when it emitted `eventsMeanwhile` events while the kit waited, that it keeps going rather
 * than waits.
 *
 * @example
 * report(violation("settle", `waitForIdle did not settle${stillWaitingOn(agent)}`));
 * // waitForIdle did not settle: tool "lookup_order" (call c1) has not settled (its execute's promise is still pending)
 */
export function stillWaitingOn(agent: Agent, eventsMeanwhile = 0): string {
	const snapshot = agent.actor.getSnapshot();
	const waits: string[] = [];
	// Aborted, a call still running is one whose execute does not end on its signal.
	const aborted = snapshot.context.run?.aborted === true ? "; the run was aborted: it does not end on its signal" : "";
	for (const call of snapshot.context.run?.batch?.calls ?? []) {
		const name = `tool "${call.toolCall.name}" (call ${call.toolCall.id})`;
		// The call stays "running" while afterToolCall is asked about its result: the kit cannot tell which of the two holds it.
		if (call.status === "running") waits.push(`${name} has not settled (${agent.afterToolCall ? "its execute's promise, or your afterToolCall after it, is" : "its execute's promise is"} still pending${aborted})`);
		else if (call.status === "preparing") waits.push(`${name} is still being prepared (your beforeToolCall has not answered)`);
		else if (call.status === "awaiting-approval") waits.push(`${name} still waits for approval`);
	}
	// Held by a listener: the run waits for its listeners to take each event before it goes on.
	if (waits.length === 0 && snapshot.context.config.deliveryPending?.() !== undefined) {
		waits.push("a listener has not answered an event (the promise it returned is still pending): the run waits for its listeners before it goes on");
	}
	// Busy rather than stuck: turn after turn while the kit waited.
	else if (waits.length === 0 && eventsMeanwhile > 0) waits.push(`the run kept going (${eventsMeanwhile} events while the kit waited): something starts turn after turn, such as a listener that steers or follows up on every turn`);
	else if (waits.length === 0 && snapshot.matches({ running: "streaming" } as never)) {
		// Nothing streamed yet: the request may not have gone out, held by the hooks that prepare it.
		const hooks = [agent.transformContext ? "transformContext" : "", agent.convertToLlm !== defaultConvertToLlm ? "convertToLlm" : "", agent.getApiKey ? "getApiKey" : ""].filter(Boolean);
		if (agent.state.streamingMessage === undefined && hooks.length > 0) waits.push(`the model's reply has not started: the model has not answered, or your ${hooks.join(", ")} (run before the request) has not`);
		else waits.push("the model's reply is still streaming");
	}
	return waits.length ? `: ${waits.join("; ")}` : "";
}

/** The queues of an agent as they are now (its machine's, which `agent.actor` keeps). */
export function queuesOf(agent: Agent): QueueContents {
	const context = agent.actor.getSnapshot().context;
	return { steering: context.steeringQueue, followUps: context.followUpQueue };
}

/**
 * Options of {@link checkAgentInvariants}.
 *
 * @example
 * const options: CheckOptions = { queued: [{ message: steer, kind: "steer" }] };
 * expect(checkAgentInvariants(events, agent, options)).toEqual([]);
 */
export interface CheckOptions {
	/** The messages given to `steer` and `followUp` (checked delivered once or still queued); needs the `Agent` as the state. */
	queued?: readonly { message: AgentMessage; kind: QueueKind; cleared?: boolean | undefined }[] | undefined;
	/** Your `convertToLlm`, if the agent has one that answers synchronously (the provider-request check uses it). */
	convertToLlm?: ((messages: AgentMessage[]) => Message[]) | undefined;
}

/** Every option of {@link CheckOptions} (the type makes the list whole). */
const CHECK_OPTIONS = Object.keys({ queued: true, convertToLlm: true } satisfies Record<keyof CheckOptions, true>);
/** What `recording.check` takes: the recording keeps `queued` itself. */
const RECORDING_CHECK_OPTIONS = CHECK_OPTIONS.filter((name) => name !== "queued");

/**
 * Checks an agent's recorded events and its state against agentchart's invariants: events nest
 * (runs, turns, messages), every tool execution starts and ends once, every tool call is answered
 * once and in source order, approvals are requested inside their call and resolved once, the
 * transcript is valid for a provider and what Anthropic's and OpenAI's converters would send is a
 * valid request, a run that ended left nothing running (idle means idle), and, given what was
 * queued, no steering or follow-up message was lost or delivered twice. Returns every violation
 * (empty when all hold); see {@link recordAgent} to record what it needs. Asked while a run is
 * under way (a call waiting for approval), it checks the events so far and leaves the transcript
 * and the idle state for a check once the run ended.
 *
 * The events are read as they are now: tool arguments that code of yours kept and changed in
 * place after an event (a hook that edits `args` later) read changed here, and a change between
 * an approval's request and its decision goes unseen. {@link recordAgent} checks each event as
 * it arrives and keeps a copy of its arguments, and so sees it.
 *
 * The events must start with the run: for an agent restored in the middle of one (waiting for
 * approval, say), whose run's start, turn and calls came before the restore, it reports each
 * end without its start. Record such an agent with {@link recordAgent}, which knows it was restored.
 *
 * @example
 * const events: AgentEvent[] = [];
 * agent.subscribe((event) => void events.push(event));
 * await agent.prompt("Where is my order?");
 * expect(checkAgentInvariants(events, agent)).toEqual([]);
 */
export function checkAgentInvariants(events: readonly AgentEvent[], state: Agent | CheckedState, options: CheckOptions = {}): AgentViolation[] {
	if (!Array.isArray(events)) throw new TypeError(`agentchart/testing: checkAgentInvariants' events must be the list of events the agent emitted, got ${shown(events)}`);
	checkSubject("checkAgentInvariants", state);
	refuseUnknownOptions("checkAgentInvariants", options, CHECK_OPTIONS, "nothing was checked");
	const invariants = new EventInvariants();
	for (const event of events) invariants.onEvent(event);
	return checkAfterEvents(invariants, events, state, options);
}

/** {@link checkAgentInvariants} once `invariants` has been fed `events`. */
function checkAfterEvents(invariants: EventInvariants, events: readonly AgentEvent[], state: Agent | CheckedState, options: CheckOptions): AgentViolation[] {
	const out = [...invariants.violations];
	const current = isAgent(state) ? state.state : state;
	if (!current.isStreaming) {
		if (invariants.running) out.push(violation("settle", "a run never ended (agent_start without agent_end) although the agent is idle"));
		out.push(...idleViolations(state));
	}
	// A run under way has calls its results are still to answer (one waits for approval): its transcript is whole once it ends.
	if (!current.isStreaming) out.push(...checkTranscript(current.messages, options.convertToLlm));
	if (options.queued && isAgent(state)) {
		const ledger = new QueueLedger();
		for (const entry of options.queued) {
			ledger.track(entry.message, entry.kind);
			// Cleared after it: so was every message of its queue given before it.
			if (entry.cleared) ledger.cleared([entry.kind]);
		}
		for (const event of events) ledger.onEvent(event);
		out.push(...ledger.violations(queuesOf(state)));
	}
	return out;
}

/** The methods by which your code empties an agent's queues, and which queues each empties. */
const QUEUE_CLEARS = { clearSteeringQueue: ["steer"], clearFollowUpQueue: ["followUp"], clearAllQueues: ["steer", "followUp"], reset: ["steer", "followUp"] } as const satisfies Record<string, readonly QueueKind[]>;

/**
 * Calls `cleared` each time the agent's queues are emptied on purpose (`clearSteeringQueue`,
 * `clearFollowUpQueue`, `clearAllQueues`, `reset`; wrapped on this instance), so that a queue
 * ledger does not count a message your code dropped as one the engine lost. Returns what undoes
 * the wrapping (the class's methods show through again).
 *
 * @example
 * const ledger = new QueueLedger();
 * const unwatch = watchQueueClears(agent, (kinds) => ledger.cleared(kinds));
 * agent.clearFollowUpQueue(); // the ledger hears of it
 * unwatch();
 */
export function watchQueueClears(agent: Agent, cleared: (kinds: readonly QueueKind[]) => void): () => void {
	let watching = true;
	const unwrappers = (Object.keys(QUEUE_CLEARS) as (keyof typeof QUEUE_CLEARS)[]).map((name) =>
		wrapMethod(agent, name, (original) => () => {
			original.call(agent);
			if (watching) cleared(QUEUE_CLEARS[name]);
		}),
	);
	return () => {
		watching = false;
		for (const unwrap of unwrappers) unwrap();
	};
}

/** The wrappers of recordings: what each replaced, and whether its recording stopped. */
const wrappers = new WeakMap<object, { own: boolean; before: unknown; stopped: boolean }>();

/**
 * Puts `make(original)` on the agent instance in place of its method `name`; returns what takes it
 * off. A wrapper another recording wrapped since stays in that chain, doing nothing of its own
 * (its maker's flag), so stopping one recording leaves the other recording; once the one on top
 * stops, the stopped ones beneath it go too, and the class's method shows through again.
 */
function wrapMethod<K extends "steer" | "followUp" | keyof typeof QUEUE_CLEARS>(agent: Agent, name: K, make: (original: Agent[K]) => Agent[K]): () => void {
	const before = agent[name];
	const wrapper = make(before);
	const entry = { own: Object.hasOwn(agent, name), before: before as unknown, stopped: false };
	wrappers.set(wrapper, entry);
	agent[name] = wrapper;
	return () => {
		entry.stopped = true;
		if (agent[name] !== wrapper) return;
		let top: unknown = wrapper;
		for (let below = wrappers.get(top as object); below?.stopped; below = wrappers.get(top as object)) {
			if (!below.own) {
				Reflect.deleteProperty(agent, name);
				return;
			}
			top = below.before;
		}
		agent[name] = top as Agent[K];
	};
}

/**
 * What {@link recordAgent} keeps.
 *
 * @example
 * const recording: AgentRecording = recordAgent(agent);
 * await agent.prompt("Hi");
 * expect(recording.check()).toEqual([]);
 * recording.stop();
 */
export interface AgentRecording {
	/** Every event, in order; tool arguments (`args`) as they were when the event was emitted (a copy). */
	readonly events: readonly AgentEvent[];
	/** Every message given to `steer` or `followUp`, and whether the queues were cleared after it. */
	readonly queued: readonly { message: AgentMessage; kind: QueueKind; cleared: boolean }[];
	/** {@link checkAgentInvariants} over what was recorded, the event rules checked as each event arrived. */
	check(options?: Omit<CheckOptions, "queued">): AgentViolation[];
	/** Stops recording. */
	stop(): void;
}

/**
 * Records an agent's events, and the messages it is given to steer and follow up with (its
 * `steer`, `followUp`, `clear*Queue(s)` and `reset` are wrapped on this instance), for
 * {@link checkAgentInvariants}. Recorded from an agent whose run is under way (restored from a
 * snapshot taken mid-run, such as one waiting for approval), that run's events are heard but
 * judged only by the rules that need no earlier event (its start was never heard); the runs after it are checked whole, and
 * the transcript, idle state and queues once it ended.
 *
 * @example
 * const recording = recordAgent(agent);
 * await agent.prompt("hi");
 * agent.followUp(message);
 * await agent.continue();
 * expect(recording.check()).toEqual([]);
 */
export function recordAgent(agent: Agent): AgentRecording {
	if (typeof agent !== "object" || agent === null || !isAgent(agent)) throw new TypeError(`agentchart/testing: recordAgent takes the Agent to record, got ${shown(agent)}`);
	const events: AgentEvent[] = [];
	const queued: { message: AgentMessage; kind: QueueKind; cleared: boolean }[] = [];
	// Checked now, not when check() replays them: the agent's argument objects are live, and code
	// that kept one (a hook, a listener) may change it after the event, which a later reading of
	// the same object cannot tell.
	const invariants = new EventInvariants();
	// Restored mid-run (waiting for approval, say), or recorded late: that run's start was never heard.
	if (agent.state.isStreaming || agent.pendingApprovals.length > 0) invariants.joinRunUnderWay();
	const unsubscribe = agent.subscribe((event) => {
		invariants.onEvent(event);
		events.push(withArgumentsAsEmitted(event));
	});
	let recording = true;
	const unwrapSteer = wrapMethod(agent, "steer", (original) => (message) => {
		original.call(agent, message);
		if (recording) queued.push({ message, kind: "steer", cleared: false });
	});
	const unwrapFollowUp = wrapMethod(agent, "followUp", (original) => (message) => {
		original.call(agent, message);
		if (recording) queued.push({ message, kind: "followUp", cleared: false });
	});
	const unwatch = watchQueueClears(agent, (kinds) => {
		for (const entry of queued) if (kinds.includes(entry.kind)) entry.cleared = true;
	});
	return {
		events,
		queued,
		check: (options) => {
			// `queued` is the recording's own: given here, it would be dropped as a misspelt option would.
			refuseUnknownOptions("recording.check", options, RECORDING_CHECK_OPTIONS, "nothing was checked");
			return checkAfterEvents(invariants, events, agent, { ...options, queued });
		},
		stop() {
			recording = false;
			unsubscribe();
			unwrapSteer();
			unwrapFollowUp();
			unwatch();
		},
	};
}

/**
 * The event with a copy of its tool arguments as they are now. Arguments are small JSON-like
 * objects; one that cannot be cloned (it holds a function) is kept as it is.
 */
function withArgumentsAsEmitted(event: AgentEvent): AgentEvent {
	if (!("args" in event) || typeof event.args !== "object" || event.args === null) return event;
	try {
		return { ...event, args: structuredClone(event.args) };
	} catch {
		return event;
	}
}
