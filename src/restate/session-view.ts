/**
 * A stored session read as plain data, without restoring an agent: what the shared handlers
 * (`state`) answer while a run may be going on elsewhere. Reads the snapshot format of
 * `durable/snapshot.ts`.
 */
import { type AgentSnapshot, recheckArguments } from "../durable/snapshot.js";
import { pendingApproval } from "../machines/run-helpers.js";
import type { ToolCallEntry } from "../machines/types.js";
import type { AnyAgentTool, PendingApproval } from "../types/agent.js";
import type { AgentMessage } from "../types/messages.js";
import type { QueuedMessage, RunInProgress, SessionState } from "./session-types.js";

/**
 * The calls of a stored run that wait for a person's decision, as stored, in source order.
 *
 * @example
 * callsNamed(waitingCallsOf(snapshot), "toolu_01#1"); // the call a decision by that name answers
 */
export function waitingCallsOf(snapshot: AgentSnapshot | null | undefined): ToolCallEntry[] {
	const batch = snapshot?.machine.status === "active" ? snapshot.machine.context.run?.batch : undefined;
	return batch ? batch.calls.filter((call) => call.status === "awaiting-approval") : [];
}

/**
 * The calls of a stored run that wait for a person's decision, in source order: what
 * `agent.pendingApprovals` says of the agent restored from the snapshot. Given the tools a
 * restore would have, a call whose tool's schema changed since and no longer accepts its
 * arguments has the validation error in `argsProblem`, and arguments the new schema coerces are
 * shown coerced (as `Agent.restore` does); without them, as stored.
 *
 * @example
 * pendingApprovalsOf(snapshot); // [{ toolCallId: "toolu_01", callKey: "toolu_01#1", toolName: "deploy", args: {...} }]
 * pendingApprovalsOf(snapshot, tools); // the same, as a worker deployed with `tools` would restore it
 */
export function pendingApprovalsOf(snapshot: AgentSnapshot | null | undefined, tools?: readonly AnyAgentTool[]): PendingApproval[] {
	const context = snapshot?.machine.status === "active" ? snapshot.machine.context : undefined;
	const stored = context?.run?.batch;
	if (!context || !stored) return [];
	const byName = tools && new Map(tools.map((tool) => [tool.name, tool]));
	const batch = byName ? recheckArguments(stored, byName) : stored;
	return batch.calls
		.filter((call) => call.status === "awaiting-approval")
		.map((call) => (byName && !byName.has(call.toolCall.name) ? { ...pendingApproval(call), argsProblem: toolGoneProblem(call.toolCall.name) } : pendingApproval(call)));
}

/**
 * Why a waiting call cannot be approved when the worker no longer offers its tool (a deploy
 * removed it): it can be rejected, or its run aborted.
 *
 * @example
 * toolGoneProblem("deploy"); // 'tool "deploy" is not among the worker\'s tools any more ...'
 */
export function toolGoneProblem(toolName: string): string {
	return `tool "${toolName}" is not among the worker's tools any more (a deploy removed it), so the call cannot run: reject it or abort the run, or give the worker the tool again`;
}

/**
 * Whether a stored snapshot is a run waiting for approval (as opposed to an idle agent).
 *
 * @example
 * if (isWaitingForApproval(snapshot)) for (const { callKey } of pendingApprovalsOf(snapshot)) await client.session(sessionId).approve(callKey);
 */
export function isWaitingForApproval(snapshot: AgentSnapshot | null | undefined): boolean {
	return snapshot?.machine.status === "active" && snapshot.machine.context.run !== undefined;
}

/**
 * The run going on as a reader should count it: `stored` (the session's `run`), unless the stored
 * snapshot is already that run's end (stored before the run and its checkpoints are cleared, in
 * writes a reader can come between), when its checkpoints and what it took from the inbox are in
 * the snapshot: null then.
 *
 * @example
 * const run = runGoingOn(snapshot, await ctx.get<RunInProgress>("run")); // null in the moment after a run stored its end
 */
export function runGoingOn(snapshot: AgentSnapshot | null | undefined, stored: RunInProgress | null | undefined): RunInProgress | null {
	if (!stored) return null;
	if (stored.from === undefined) return stored;
	return (snapshot?.createdAt ?? null) === stored.from ? stored : null;
}

/**
 * The session's state from its stored snapshot, the run in progress (if any) and the messages
 * of the turns that run finished so far (`replaced`: a compaction in the run rewrote the
 * transcript, and those messages are the whole of it). `inbox` holds the messages steered or
 * queued that no run has taken yet: they come after the stored queues (a run takes them later).
 * `tools`: those a restore would have (see {@link pendingApprovalsOf}).
 *
 * @example
 * describeSession("s1", snapshot, undefined, []).status; // "idle"
 */
export function describeSession(
	sessionId: string,
	snapshot: AgentSnapshot | null | undefined,
	run: RunInProgress | null | undefined,
	runMessages: readonly AgentMessage[],
	replaced = false,
	inbox: readonly QueuedMessage[] = [],
	tools?: readonly AnyAgentTool[],
): SessionState {
	const context = snapshot?.machine.context;
	const waiting = (mode: QueuedMessage["mode"]) => inbox.filter((item) => item?.mode === mode).map((item) => item.message);
	const status = run ? "running" : isWaitingForApproval(snapshot) ? "awaiting-approval" : "idle";
	return {
		sessionId,
		status,
		messages: replaced ? [...runMessages] : [...(context?.messages ?? []), ...runMessages],
		// A run going on from a wait (a decision, a steer, an abort) has the stored run's calls that
		// still wait as its command left them: the others wait on while an approved call runs.
		pendingApprovals: run ? pendingApprovalsOf(snapshot, tools).filter((call) => run.stillWaiting?.includes(call.callKey) === true) : pendingApprovalsOf(snapshot, tools),
		// A run's own queues, once a turn of it ended, hold what the stored ones did and what it took from the inbox since.
		steeringQueue: [...((run?.queued ? run.queued.steer : context?.steeringQueue) ?? []), ...waiting("steer")],
		followUpQueue: [...((run?.queued ? run.queued.followUp : context?.followUpQueue) ?? []), ...waiting("followUp")],
		errorMessage: snapshot?.agent.errorMessage,
		run: run ?? undefined,
	};
}
