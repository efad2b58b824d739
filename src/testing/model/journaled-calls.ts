/**
 * What the run's journal holds of the calls of a reply still streaming (streaming tool
 * execution), read from the chart's call entries. A restore from such a reply closes it with the
 * calls the journal has (see `startedDuring` in src/durable/journal.ts) and answers each from
 * its entries, so the walk's model reads the same entries off the abstract state: the calls that
 * started, the decisions a person made on them, and the outcomes stored.
 */
import type { AnyMachineSnapshot } from "xstate";
import { findTool } from "../../machines/run-helpers.js";
import type { ToolCallEntry } from "../../machines/types.js";
import { approvalNeeded, rejectedText, type ToolOutcome } from "../../tools/preflight.js";
import type { AnyAgentTool } from "../../types/agent.js";

/** A call the journal has: it was asked about, or it ran. */
export interface JournaledCall {
	call: ToolCallEntry;
	/** Its intent is journaled: it ran (or runs). */
	ran: boolean;
	/** The decision the journal holds (undefined: asked and not answered, its wait expired, or no approval needed). */
	decision: "approved" | "rejected" | undefined;
	/** The reason a rejection gave. */
	reason: string | undefined;
	/** The outcome the journal holds (the call ran to its end, or timed out); undefined: it was still running. */
	outcome: ToolOutcome | undefined;
}

const REJECTED = rejectedText("rejected", undefined);
const EXPIRED = rejectedText("timed-out", undefined);
/** A sibling's failure cancels a call without recording an outcome (its intent stays alone). */
const CANCELLED_BY_SIBLING = "Cancelled: sibling tool call";

function textOf(outcome: ToolOutcome | undefined): string {
	const block = outcome?.result.content[0];
	return block?.type === "text" ? block.text : "";
}

/**
 * What the journal holds of one call of a streaming batch without a `beforeToolCall` hook
 * (undefined: nothing, the call never started). A call has arguments once it was prepared: then
 * it was asked about (an approval request) or ran (an intent), and how it settled says the rest.
 *
 * @example
 * journaledCall(tools, { key: "c1", toolCall, status: "running", args: {}, started: true, message: undefined }); // { ran: true, decision: undefined, outcome: undefined, ... }
 */
export function journaledCall(tools: readonly AnyAgentTool[], call: ToolCallEntry): JournaledCall | undefined {
	if (call.args === undefined) return undefined;
	const asksApproval = approvalNeeded(findTool(tools as AnyAgentTool[], call.toolCall.name), call.args, undefined) !== undefined;
	const ran = (outcome: ToolOutcome | undefined): JournaledCall => ({ call, ran: true, decision: asksApproval ? "approved" : undefined, reason: undefined, outcome });
	const asked = (decision: JournaledCall["decision"], reason?: string): JournaledCall => ({ call, ran: false, decision, reason, outcome: undefined });
	switch (call.status) {
		case "awaiting-approval":
			return asked(undefined);
		case "prepared":
		case "running":
			return ran(undefined);
		case "settled": {
			const text = textOf(call.outcome);
			if (text === EXPIRED) return asked(undefined);
			if (text.startsWith(REJECTED)) return asked("rejected", text.slice(REJECTED.length + 2) || undefined);
			return ran(text.startsWith(CANCELLED_BY_SIBLING) ? undefined : call.outcome);
		}
		default:
			return undefined;
	}
}

/**
 * The calls a restore closes a reply with: in a reply still streaming in streaming tool
 * execution (also in a run aborted before it was stored), those of its calls the journal has, in
 * the order they started.
 */
export function journaledCallsOfStreamingReply(snapshot: AnyMachineSnapshot): JournaledCall[] {
	const run = snapshot.context.run;
	const batch = run?.batch;
	if (!run || batch?.mode !== "streaming" || !snapshot.matches({ running: "streaming" } as never)) return [];
	const tools = snapshot.context.tools as AnyAgentTool[];
	// Without a hook a streaming batch starts its calls in the order they streamed.
	return batch.calls.map((call: ToolCallEntry) => journaledCall(tools, call)).filter((each: JournaledCall | undefined): each is JournaledCall => each !== undefined);
}

/**
 * How a settled call of a streaming reply stands in the journal, as the abstract state shows it:
 * `j` ran (its outcome is stored), `c` ran and was cancelled (its intent alone is), `x` a person
 * rejected it, `w` asked and not answered (its wait expired), none: never started. Calls in other
 * statuses say it by their status.
 */
export function journalMark(tools: readonly AnyAgentTool[], call: ToolCallEntry): string {
	if (call.status !== "settled") return "";
	const journaled = journaledCall(tools, call);
	if (!journaled) return "";
	if (journaled.decision === "rejected") return "x";
	if (!journaled.ran) return "w";
	return journaled.outcome ? "j" : "c";
}
