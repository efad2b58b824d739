/**
 * What a session's handlers take and return: plain JSON, the same for the worker that serves
 * them and the client that calls them (`client.ts` imports only types from here).
 */
import type { AgentSnapshot } from "../durable/snapshot.js";
import type { AgentMessage } from "../types/messages.js";
import type { PendingApproval } from "../types/agent.js";

/**
 * What `prompt` takes: a text (a user message is made of it), a message, or messages.
 *
 * @example
 * const input: PromptInput = "Summarise the thread"; // or a message, or several
 * const result = await session.prompt(input);
 */
export type PromptInput = string | AgentMessage | AgentMessage[];

/**
 * What `steer` and `followUp` take: a text or a message.
 *
 * @example
 * const input: QueuedInput = "Use metric units.";
 * await session.steer(input);
 */
export type QueuedInput = string | AgentMessage;

/**
 * A message waiting to reach a session's run (`steer` / `followUp`).
 *
 * @example
 * const steering = queued.filter((entry: QueuedMessage) => entry.mode === "steer").map((entry) => entry.message);
 */
export interface QueuedMessage {
	mode: "steer" | "followUp";
	message: AgentMessage;
}

/**
 * Where a session is between two handler calls.
 *
 * @example
 * const status: SessionStatus = (await session.state()).status;
 * if (status === "awaiting-approval") console.log("waiting for a person");
 */
export type SessionStatus = "idle" | "running" | "awaiting-approval";

/**
 * What a handler that runs the agent (`prompt`, `approve`, `reject`) answers, once the run has
 * stopped: ended (`idle`), or waiting for a person (`awaiting-approval`, with the calls that wait).
 *
 * @example
 * const result: RunResult = await session.prompt("Deploy it");
 * if (result.status === "awaiting-approval") console.log(result.pendingApprovals.map((pending) => pending.toolName));
 */
export interface RunResult {
	status: Exclude<SessionStatus, "running">;
	/** The calls waiting for `approve` / `reject`, in source order. */
	pendingApprovals: PendingApproval[];
	/** The messages this call added to the transcript. */
	newMessages: AgentMessage[];
	/** The error of the last failed turn, if the run ended with one. */
	errorMessage?: string | undefined;
	/** The run was aborted (`abort`). */
	aborted: boolean;
}

/**
 * The run in progress, as the `state` handler reports it.
 *
 * @example
 * const run: RunInProgress | undefined = (await session.state()).run;
 * if (run) console.log(`run ${run.number}, turn ${run.turns}, invocation ${run.invocationId}`);
 */
export interface RunInProgress {
	/** The Restate invocation running it (what `abort` cancels). */
	invocationId: string;
	/** The session's run number (1, 2, ...). */
	number: number;
	/** Turns finished so far in this invocation (their messages are in `messages`). */
	turns: number;
	/** The awakeable that `steer` and `followUp` resolve to tell the run its inbox has mail. */
	mailbox?: string | undefined;
	/**
	 * The messages the run holds queued at its last turn's end (taken from the inbox, not yet in
	 * the transcript); undefined until they first differ from the stored snapshot's queues.
	 */
	queued?: { steer: AgentMessage[]; followUp: AgentMessage[] } | undefined;
	/** The last hand-over from the inbox this run has in `queued` (see {@link HeldMail}). */
	heldSeq?: number | undefined;
	/**
	 * The `createdAt` of the stored snapshot the run went on from (null: the session had none).
	 * A run stores its end (the snapshot) before it clears itself and its checkpoints, in writes
	 * a reader can come between: once the stored snapshot is another, it is this run's end, and
	 * `state` reads the session from it alone. Absent in runs written by older worker code.
	 */
	from?: string | null | undefined;
	/**
	 * A run going on from a wait for approval: the `callKey`s of the stored run's calls that still
	 * wait as its command left them (all but the one decided; none after an abort).
	 */
	stillWaiting?: string[] | undefined;
}

/**
 * What the inbox handed a run at a turn's end. The inbox keeps it (`held`) after the hand-over,
 * until the run's `heldSeq` says the run has it, so that `state` finds a message in one place
 * or the other at every moment.
 *
 * @example
 * const mail: HeldMail = { seq: 3, invocationId: "inv_1", items: [{ mode: "steer", message }] };
 */
export interface HeldMail {
	/** The hand-over's number, one more than the inbox's last. */
	seq: number;
	/** The invocation of the run it went to (a later run's `state` does not count it). */
	invocationId: string;
	items: QueuedMessage[];
	/**
	 * Taken by a delivery, to start (or go on with) a run: counted by `state` from the take on,
	 * before that run is announced, until the run records it (`heldSeq`) or stores its end.
	 */
	delivery?: true | undefined;
}

/**
 * A session as the `state` handler reports it: transcript, queues, pending approvals.
 *
 * @example
 * const state: SessionState = await session.state();
 * console.log(state.status, state.messages.length, state.steeringQueue.length);
 */
export interface SessionState {
	sessionId: string;
	status: SessionStatus;
	/** The transcript: the stored one, plus the turns that finished in the run in progress. */
	messages: AgentMessage[];
	pendingApprovals: PendingApproval[];
	/** Steering messages no run has taken yet: the stored session's, then those waiting in the inbox (also while a run goes on). */
	steeringQueue: AgentMessage[];
	/** Follow-up messages no run has taken yet, in the same order. */
	followUpQueue: AgentMessage[];
	errorMessage?: string | undefined;
	run?: RunInProgress | undefined;
}

/**
 * `approve`'s input.
 *
 * @example
 * const input: ApproveInput = { toolCallId: "toolu_01", arguments: { path: "/tmp/report.txt" } };
 * await session.approve(input.toolCallId, { arguments: input.arguments });
 */
export interface ApproveInput {
	toolCallId: string;
	/** Run the call with these arguments instead of the model's (validated against the tool's schema). */
	arguments?: unknown;
}

/**
 * `reject`'s input.
 *
 * @example
 * const input: RejectInput = { toolCallId: "toolu_01", reason: "Not on production." };
 * await session.reject(input.toolCallId, input.reason);
 */
export interface RejectInput {
	toolCallId: string;
	reason?: string | undefined;
}

/**
 * What `abort` did. Besides, every exclusive call received before the abort and not yet started
 * (`prompt`, `approve`, `reject`, a delivery) ends as an aborted run when it starts.
 *
 * @example
 * const { cancelled, waiting }: AbortResult = await session.abort();
 * if (cancelled) console.log(`cancelled ${cancelled}`);
 */
export interface AbortResult {
	/**
	 * The invocation that was going on when the abort was handled, now sent a cancellation; null
	 * if none. One that was ending at that moment may have ended as it would have: its own answer
	 * (`aborted`) says whether it was.
	 */
	cancelled: string | null;
	/**
	 * No run was going on, and one waits for approval: it will be aborted (after any call already
	 * queued before the abort, a delivery of steered messages included). A run going on is
	 * cancelled instead (`cancelled`), and aborted all the same should it stop to wait for
	 * approval before the cancellation reaches it.
	 */
	waiting: boolean;
}

/**
 * What `steer` and `followUp` answer.
 *
 * @example
 * const { queued }: QueuedResult = await session.followUp("Then draft the email.");
 */
export interface QueuedResult {
	queued: true;
}

/**
 * The stored snapshot, as the `snapshot` handler returns it (null for a session never run).
 *
 * @example
 * const snapshot: StoredSnapshot = await session.snapshot(); // null for a session never run
 * console.log(snapshot?.machine.context.messages.length ?? 0);
 */
export type StoredSnapshot = AgentSnapshot | null;
