/**
 * Decisions on calls waiting for approval: which one a decision names, whether it still counts
 * (a call past its deadline is rejected as timed out, whenever its timer fires), why one the
 * machine does not take was left, and the deadlines a restored run waits with.
 */
import { type Ctx, type Enqueue, patchRun, runOf } from "../context.js";
import { callsNamed, findTool, patchBatch, patchCall, replyFailed } from "../run-helpers.js";
import { approvalTimeout, awaitingCall } from "./tools.js";
import type { ApprovalIgnoredEvent, ToolCallEntry } from "../types.js";
import { approvedArguments } from "../../tools/preflight.js";

/** A decision as the machine gets it (`approve`, `reject`). */
interface Decision {
	type: "approve" | "reject";
	toolCallId: string;
	decidedAt?: number | undefined;
}

/**
 * The calls of the current turn a decision names (see `callsNamed`): those that wait, if any
 * (more than one when the name is ambiguous), else the first of the others.
 */
function namedCalls(context: Ctx, toolCallId: string): ToolCallEntry[] {
	const calls = context.run?.batch?.calls ?? [];
	const waiting = callsNamed(calls.filter((call) => call.status === "awaiting-approval"), toolCallId);
	return waiting.length > 0 ? waiting : callsNamed(calls, toolCallId).slice(0, 1);
}

/**
 * When the decision was made: what the event says (a decision made in time and replayed after
 * a restart), otherwise now, on the clock the deadlines are set by.
 */
function decisionTime(decision: Decision): number {
	return typeof decision.decidedAt === "number" && Number.isFinite(decision.decidedAt) ? decision.decidedAt : Date.now();
}

/**
 * Past its deadline the call is not waiting: the timer's rejection is its answer, also before the timer fires.
 *
 * @example
 * approvalExpired(call, Date.now()); // true once call.approval.deadline has passed
 */
export function approvalExpired(call: ToolCallEntry, at: number): boolean {
	const deadline = call.approval?.deadline;
	return deadline !== undefined && deadline <= at;
}

/**
 * The call waiting for approval that a decision names, if the decision counts: made before the
 * call's deadline. The same rule as the Agent's `approve()`, which throws where this finds none.
 */
export function decidedCall(context: Ctx, decision: Decision): ToolCallEntry | undefined {
	// The one call the name gives that waits, as approveCall and rejectCall take it (ids may repeat in a batch).
	const call = awaitingCall(context, decision.toolCallId);
	return call && !approvalExpired(call, decisionTime(decision)) ? call : undefined;
}

/** Why the machine took no transition for a decision (see {@link ApprovalIgnoredEvent}). */
export function ignoredDecision(context: Ctx, decision: Decision & { args?: unknown }): ApprovalIgnoredEvent {
	const named = namedCalls(context, decision.toolCallId);
	const call = named[0];
	const ignored: ApprovalIgnoredEvent = { type: "agentchart.approval.ignored", toolCallId: decision.toolCallId, decision: decision.type, reason: "not-waiting" };
	if (call === undefined) ignored.reason = "unknown";
	else if (call.status !== "awaiting-approval") ignored.reason = "not-waiting";
	else if (context.run?.aborted === true) ignored.reason = "aborted";
	else if (replyFailed(context.run)) ignored.reason = "reply-failed";
	else if (named.length > 1) ignored.reason = "ambiguous";
	else if (approvalExpired(call, decisionTime(decision))) ignored.reason = "timed-out";
	else if (decision.type === "approve") {
		const { problem } = approvedArguments(findTool(context.tools, call.toolCall.name), call, decision.args);
		if (problem !== undefined) {
			ignored.reason = "invalid-arguments";
			ignored.problem = problem;
		}
	}
	return ignored;
}

/**
 * A restored run's calls waiting without a deadline get the restored machine's
 * `approvalTimeoutMs`, from now: an agent configured with a timeout lets no call wait for ever,
 * and nobody loses time they were given. A deadline a call was asked with stands (a restart gives
 * no fresh timeout, and a shorter one takes no time away).
 */
export function startDeadlinesOfRestoredWaits(context: Ctx, enqueue: Enqueue): void {
	const timeout = approvalTimeout(context);
	const batch = context.run?.batch;
	if (timeout === undefined || !batch?.calls.some((call) => call.status === "awaiting-approval" && call.approval?.deadline === undefined)) return;
	const deadline = Date.now() + timeout;
	const calls = batch.calls.map((call) => (call.status === "awaiting-approval" && call.approval?.deadline === undefined ? patchCall(call, { approval: { ...call.approval, deadline } }) : call));
	enqueue.assign({ run: patchRun(runOf(context), { batch: patchBatch(batch, { calls }) }) });
}
