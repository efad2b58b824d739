/**
 * The events the walk offers in each abstract state: commands (prompt, continue, steer, abort,
 * dispose...), delivery acknowledgements, decisions on calls waiting for approval, the events the
 * machine's actors would send (stream events, `stream.done` in several reply kinds, preflight,
 * tool settle/update/timeout, compaction done/error), the machine's own delayed events (giving up
 * on tools after an abort, an approval timeout), and what a restore does (its interruption events,
 * or a real restore). Queues are capped at one message each to keep the space finite.
 */
import type { AnyMachineSnapshot } from "xstate";
import { InterruptedByRestart } from "../../actors/compaction-protocol.js";
import { findTool, replyFailed } from "../../machines/run-helpers.js";
import type { AgentMachineEvent, ToolCallEntry } from "../../machines/types.js";
import { approvalNeeded, errorResult } from "../../tools/preflight.js";
import type { ModelConfig } from "./config.js";
import { WALK_TOOL_TIMEOUT_MS } from "./config.js";
import { awaitsDelivery, inState } from "./projection.js";
import { abstractCall, abstractReply, compactionOutput, replyOptions, sampleOf, streamableSamples } from "./replies.js";

/** The walk's own step that is no event of the chart: a real restore (snapshot → JSON → a restored agent). */
export const RESTORE = "agentchart.testing.restore";

/** The restore step. */
export const restoreEvent = { type: RESTORE } as unknown as AgentMachineEvent;

/** True for the restore step. */
export function isRestore(event: { type: string }): boolean {
	return event.type === RESTORE;
}

/**
 * The id agentchart's own walk decides on where no call waits (its actor is sent the decision, as
 * a bare machine's user may): the machine says it ignored it (`agentchart.approval.ignored`).
 */
export const NO_SUCH_CALL = "no-such-call";

/** The messages the compaction actor would work on (the overflowing reply excluded). */
function compactionMessages(snapshot: AnyMachineSnapshot) {
	const { messages, run } = snapshot.context;
	if (run?.compactionReason === "overflow" && run.assistant && messages[messages.length - 1] === run.assistant) return messages.slice(0, -1);
	return messages;
}

function compacting(snapshot: AnyMachineSnapshot): boolean {
	return inState(snapshot, "compacting") || inState(snapshot, "running.compacting");
}

/** True in a compacting state whose transcript cannot be compacted: the real actor fails at once, on its own. */
export function compactionFailsAtOnce(config: ModelConfig, snapshot: AnyMachineSnapshot): boolean {
	return compacting(snapshot) && compactionOutput(config, compactionMessages(snapshot)) === undefined;
}

/** What the compaction would produce now (for the `done` event). */
export function compactionResultIn(config: ModelConfig, snapshot: AnyMachineSnapshot) {
	return compactionOutput(config, compactionMessages(snapshot));
}

const ok = (text: string, terminate = false) => ({ result: { content: [{ type: "text" as const, text }], details: {}, ...(terminate ? { terminate: true } : {}) }, isError: false });
const failedOutcome = (text: string) => ({ result: { content: [{ type: "text" as const, text }], details: {} }, isError: true });

/**
 * A call the batch actor answers on its own, at once: streaming mode with a hook prepares a call
 * of a tool the agent does not have, and preflight refuses it before asking the hook.
 */
export function settlesAtOnce(snapshot: AnyMachineSnapshot): AgentMachineEvent | undefined {
	const call = snapshot.context.run?.batch?.calls.find((each: ToolCallEntry) => each.status === "running" && each.args === undefined && !findTool(snapshot.context.tools, each.toolCall.name));
	return call && { type: "tool.settled", callKey: call.key, outcome: failedOutcome(`Tool ${call.toolCall.name} not found`) };
}

/** The alphabet of a configuration: the events offered in a state. */
export function alphabetOf(config: ModelConfig): (snapshot: AnyMachineSnapshot) => AgentMachineEvent[] {
	return (snapshot) => {
		if (snapshot.status !== "active") return [];
		// The real compaction actor rejects at once when there is nothing to compact: nothing else can happen first.
		if (compactionFailsAtOnce(config, snapshot)) return [{ type: "xstate.error.actor.compaction", error: new Error("Nothing to compact") } as unknown as AgentMachineEvent];
		const atOnce = settlesAtOnce(snapshot);
		if (atOnce) return [atOnce];
		if (config.loop) return [...loopCommands(config, snapshot), ...actorEvents(config, snapshot)];
		return [...commands(config, snapshot), ...actorEvents(config, snapshot)];
	};
}

function commands(config: ModelConfig, snapshot: AnyMachineSnapshot): AgentMachineEvent[] {
	const context = snapshot.context;
	const events: AgentMachineEvent[] = [];
	const running = inState(snapshot, "running");
	if (inState(snapshot, "idle")) {
		events.push({ type: "prompt", messages: [config.prompt] });
		if (config.bigPrompt && context.messages.length > 0) events.push({ type: "prompt", messages: [config.bigPrompt] });
		events.push({ type: "continue" }, { type: "reset" }, { type: "queue.clear", queue: "all" }, { type: "update" });
		events.push({ type: "queue.mode", queue: "followUp", mode: context.followUpMode });
		if (compactionOutput(config, context.messages)) events.push({ type: "compact" });
		if (config.outcomes === "path") events.push({ type: "approve", toolCallId: NO_SUCH_CALL }, { type: "reject", toolCallId: NO_SUCH_CALL, reason: "no" });
	}
	if (context.steeringQueue.length < 1) events.push({ type: "steer", message: config.steer });
	if (context.followUpQueue.length < 1) events.push({ type: "followUp", message: config.followUp });
	if (running || inState(snapshot, "compacting")) events.push({ type: "abort" });
	if (running) events.push({ type: "listener.error", error: "listener failed" });
	events.push({ type: "dispose" });
	if (awaitsDelivery(snapshot)) events.push({ type: "delivered", barrier: context.barrier });
	let waiting = false;
	for (const call of context.run?.batch?.calls ?? []) {
		if (call.status !== "awaiting-approval") continue;
		waiting = true;
		// After an abort nothing is answerable: the agent refuses (the abort rejects what waits); nor
		// once the reply the call came in failed (streaming mode: it never runs).
		// By the batch's key: the model's call ids are unique in a reply, so it names its call (and the path's label stays "approve(a1_1)").
		if (context.run?.aborted !== true && !replyFailed(context.run)) events.push({ type: "approve", toolCallId: call.key }, { type: "reject", toolCallId: call.key, reason: "no" });
	}
	// A deadline runs out wherever the run is while a call waits (siblings running, the reply streaming).
	if (waiting && config.approvalTimeout) events.push({ type: "approval.timeout" });
	if (inState(snapshot, "running.awaiting-approval") && config.outcomes === "path" && (config.interruptions || config.approvalTimeout)) events.push({ type: "agentchart.resumed" });
	// Also during a manual compaction (its compact() promise goes with the process; the restored agent makes it again).
	if (config.restores && (running || inState(snapshot, "compacting"))) events.push({ type: "agentchart.testing.restore" } as unknown as AgentMachineEvent);
	return events;
}

/**
 * The loop API's alphabet: one prompt (the run is the whole life of its machine), abort through
 * the signal, a throwing sink, and the answers of the queue polls and of shouldStopAfterTurn.
 */
function loopCommands(config: ModelConfig, snapshot: AnyMachineSnapshot): AgentMachineEvent[] {
	const context = snapshot.context;
	const events: AgentMachineEvent[] = [];
	if (inState(snapshot, "idle") && context.messages.length === (config.input.messages?.length ?? 0)) events.push({ type: "prompt", messages: [config.prompt] });
	if (inState(snapshot, "running")) events.push({ type: "abort" }, { type: "listener.error", error: "sink failed" });
	if (awaitsDelivery(snapshot)) events.push({ type: "delivered", barrier: context.barrier });
	const done = (id: string, output: unknown) => ({ type: `xstate.done.actor.${id}`, output }) as unknown as AgentMachineEvent;
	const failed = (id: string) => ({ type: `xstate.error.actor.${id}`, error: new Error(`${id} failed`) }) as unknown as AgentMachineEvent;
	if (inState(snapshot, "running.polling-steering-at-start") || inState(snapshot, "running.polling-steering")) {
		events.push(done("steeringPoll", []), done("steeringPoll", [config.steer]), failed("steeringPoll"));
	}
	if (inState(snapshot, "running.polling-follow-ups")) events.push(done("followUpPoll", []), done("followUpPoll", [config.followUp]), failed("followUpPoll"));
	if (inState(snapshot, "running.asking-whether-to-stop")) events.push(done("stopCheck", false), done("stopCheck", true), failed("stopCheck"));
	return events;
}

/** Whether a call of this configuration waits for approval once prepared (its tool's rule on its arguments). */
function needsApproval(snapshot: AnyMachineSnapshot, call: ToolCallEntry): boolean {
	return approvalNeeded(findTool(snapshot.context.tools, call.toolCall.name), call.args ?? call.toolCall.arguments, undefined) !== undefined;
}

/** What the machine's actors (and its own timers) would send in this state. */
function actorEvents(config: ModelConfig, snapshot: AnyMachineSnapshot): AgentMachineEvent[] {
	const run = snapshot.context.run;
	const events: AgentMachineEvent[] = [];
	if (run && inState(snapshot, "running.streaming")) {
		const attempt = run.attempt;
		const streamed = run.batch?.mode === "streaming" ? run.batch.calls.map((call: ToolCallEntry) => sampleOf(config, call.toolCall)) : [];
		if (!run.partial) {
			events.push({ type: "stream.start", attempt, partial: abstractReply(config, "text", attempt, []) });
		} else {
			// After an abort too: a provider that has not seen the signal yet still closes calls.
			if (snapshot.context.config.toolExecution === "streaming") {
				for (const sample of streamableSamples(config, streamed)) events.push({ type: "stream.toolcall", attempt, toolCall: abstractCall(config, attempt, streamed.length, sample), partial: run.partial });
			}
			for (const { kind, samples } of replyOptions(config, streamed, run.aborted)) events.push({ type: "stream.done", attempt, message: abstractReply(config, kind, attempt, samples) });
		}
		if (config.interruptions) events.push({ type: "stream.interrupted", attempt });
	}
	const preparing = run?.batch?.calls.find((call: ToolCallEntry) => call.status === "preparing");
	if (preparing && inState(snapshot, "running.tool-preparing.checking")) {
		events.push({ type: "tool.prepared", callKey: preparing.key, args: preparing.toolCall.arguments });
		if (config.outcomes === "agent") events.push({ type: "tool.prepared", callKey: preparing.key, args: preparing.toolCall.arguments, approval: { reason: "beforeToolCall asked" } });
		events.push({ type: "tool.settled", callKey: preparing.key, outcome: failedOutcome("blocked") });
	}
	for (const call of run?.batch?.calls ?? []) {
		if (call.status === "running") events.push(...runningCallEvents(config, snapshot, call));
	}
	// After an abort, the machine's own delayed event gives up on tools that did not stop.
	if (run?.aborted && run.batch?.calls.some((call: ToolCallEntry) => call.status === "running")) events.push({ type: "tools.abandon" });
	if (config.interruptions && run?.batch?.actorStarted) events.push({ type: "tools.interrupted" });
	if (compacting(snapshot)) {
		const output = compactionResultIn(config, snapshot);
		// A compaction whose run was aborted (a listener failed meanwhile) fails once its summary comes.
		if (output && !run?.aborted) events.push({ type: "xstate.done.actor.compaction", output } as unknown as AgentMachineEvent);
		events.push({ type: "xstate.error.actor.compaction", error: new Error("summariser failed") } as unknown as AgentMachineEvent);
		// A manual compaction (outside a run) too: its restored listeners must hear its start before its end.
		if (config.interruptions) events.push({ type: "xstate.error.actor.compaction", error: new InterruptedByRestart() } as unknown as AgentMachineEvent);
	}
	return events;
}

/** The events of one running call. */
function runningCallEvents(config: ModelConfig, snapshot: AnyMachineSnapshot, call: ToolCallEntry): AgentMachineEvent[] {
	const callKey = call.key;
	const events: AgentMachineEvent[] = [];
	const timeout: AgentMachineEvent = { type: "tool.timeout", callKey, timeoutMs: WALK_TOOL_TIMEOUT_MS };
	// Streaming mode with a hook: the batch actor asks the hook, then holds the call back for approval or runs it.
	const beingPrepared = call.args === undefined;
	if (beingPrepared && needsApproval(snapshot, call)) {
		events.push({ type: "tool.approval", callKey, args: call.toolCall.arguments }, { type: "tool.settled", callKey, outcome: failedOutcome("blocked") });
		if (config.toolTimeouts) events.push(timeout);
		return events;
	}
	if (beingPrepared) {
		if (config.outcomes === "agent" && config.hook) events.push({ type: "tool.approval", callKey, args: call.toolCall.arguments, approval: { reason: "beforeToolCall asked" } });
		// The hook lets the call through: it runs, and only then answers (an abort before this answers it as not run).
		events.push({ type: "tool.executing", callKey, args: call.toolCall.arguments });
		if (config.toolTimeouts) events.push(timeout);
		return events;
	}
	if (config.outcomes === "agent") {
		// Your tool answers (modelled as a plain success): the path only says when.
		events.push({ type: "tool.settled", callKey, outcome: ok("ok") });
	} else {
		events.push({ type: "tool.settled", callKey, outcome: ok("ok") }, { type: "tool.settled", callKey, outcome: failedOutcome("fail") }, { type: "tool.settled", callKey, outcome: ok("done", true) });
		events.push({ type: "tool.update", callKey, partialResult: { content: [{ type: "text", text: "…" }], details: {} } });
	}
	if (config.toolTimeouts) events.push(timeout);
	return events;
}

/** The outcome the chart gets for a call a restore interrupted that its tool does not allow to run again. */
export function interruptedOutcome(toolName: string) {
	return errorResult(`Tool "${toolName}" was interrupted by a restart and not run again`);
}
