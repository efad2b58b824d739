/**
 * Checks of what a caller sends a session's handlers, at the handler boundary. A handler's input
 * comes from anyone who can reach Restate's ingress (a JSON body, or none); what the agent would
 * refuse must be refused here with a terminal error, before anything is stored or queued: a plain
 * error would make Restate retry the call (for an hour, by default), and every later exclusive
 * call of the session would queue behind it. The checks are the agent's own (`agent-input.ts`),
 * so what passes here the agent takes.
 */
import { assertAgentMessage, promptMessages, shown, unknownKeys } from "../agent-input.js";
import { describeError } from "../util/describe-error.js";
import { SessionRefusal } from "./sdk.js";
import { takeFromQueue } from "../machines/run-helpers.js";
import type { QueueMode } from "../types/agent.js";
import type { ApproveInput, PromptInput, QueuedInput, QueuedMessage, RejectInput } from "./session-types.js";

/** The code of a refused input: the caller's to fix, nothing to retry. */
const BAD_INPUT = 400;

/** A refusal (a terminal error, once served) naming the handler and what was wrong with its input. */
function refused(handler: string, why: string): SessionRefusal {
	return new SessionRefusal(`agentchart/restate: ${handler} refused its input: ${why}`, BAD_INPUT);
}

const DECIDE_FIELDS: Record<"approve" | "reject", readonly string[]> = { approve: ["toolCallId", "arguments"] satisfies (keyof ApproveInput)[], reject: ["toolCallId", "reason"] satisfies (keyof RejectInput)[] };
const PROMPT_EXPECTED = 'a text, a message ({ "role": "user", "content": "...", "timestamp": 0 }) or a list of messages';
const QUEUED_EXPECTED = 'a text or a message ({ "role": "user", "content": "...", "timestamp": 0 })';

/**
 * `input` as `prompt` takes it, or a terminal 400 error saying what was wrong.
 *
 * @example
 * checkPromptInput("hello"); // "hello"
 * checkPromptInput(null); // throws SessionRefusal (answered as a terminal error, 400): "prompt refused its input: ... got null"
 */
export function checkPromptInput(input: unknown): PromptInput {
	if (typeof input === "string") return input;
	if (input === undefined) throw refused("prompt", `the call had no input (expected ${PROMPT_EXPECTED})`);
	try {
		promptMessages(input, undefined);
	} catch (error) {
		throw refused("prompt", describeError(error));
	}
	return input as PromptInput;
}

/**
 * `input` as `steer` or `followUp` takes it (checked before the message is queued), or a
 * terminal 400 error saying what was wrong.
 *
 * @example
 * checkQueuedInput("steer", "also check staging"); // "also check staging"
 */
export function checkQueuedInput(handler: "steer" | "followUp", input: unknown): QueuedInput {
	if (typeof input === "string") return input;
	if (input === undefined) throw refused(handler, `the call had no input (expected ${QUEUED_EXPECTED})`);
	try {
		assertAgentMessage(input, `${handler}(message)`);
	} catch (error) {
		throw refused(handler, describeError(error));
	}
	return input;
}

/**
 * `input` as `approve` or `reject` takes it, or a terminal 400 error saying what was wrong (a
 * bare tool call id is refused too: it is `{ "toolCallId": "..." }`).
 *
 * @example
 * checkDecisionInput("approve", { toolCallId: "toolu_01" }); // { toolCallId: "toolu_01" }
 */
export function checkDecisionInput(handler: "approve", input: unknown): ApproveInput;
export function checkDecisionInput(handler: "reject", input: unknown): RejectInput;
export function checkDecisionInput(handler: "approve" | "reject", input: unknown): ApproveInput | RejectInput {
	const expected = handler === "approve" ? '{ "toolCallId": "...", "arguments"?: {...} }' : '{ "toolCallId": "...", "reason"?: "..." }';
	if (input === undefined) throw refused(handler, `the call had no input (expected ${expected})`);
	if (typeof input === "string") throw refused(handler, `expected ${expected}, got the bare text ${shown(input)} (send { "toolCallId": ${shown(input)} })`);
	if (typeof input !== "object" || input === null || Array.isArray(input)) throw refused(handler, `expected ${expected}, got ${shown(input)}`);
	const decision = input as { toolCallId?: unknown; reason?: unknown };
	if (typeof decision.toolCallId !== "string" || decision.toolCallId === "") throw refused(handler, `toolCallId: expected a non-empty text, got ${shown(decision.toolCallId)}`);
	if (handler === "reject" && decision.reason !== undefined && typeof decision.reason !== "string") throw refused(handler, `reason: expected a text, got ${shown(decision.reason)}`);
	// A misspelt field is refused, not ignored: an approval whose `args` went unread would run the model's arguments.
	const unknown = unknownKeys(decision, DECIDE_FIELDS[handler]);
	if (unknown !== undefined) throw refused(handler, `unknown field ${unknown} (expected ${expected}); nothing was decided`);
	return input as ApproveInput | RejectInput;
}

/**
 * The problem with a message taken from the inbox, or undefined when the agent takes it. The
 * inbox is written only by `steer` and `followUp`, which check first; this guards a delivery
 * against what older code (or a call between objects) may have left there.
 *
 * @example
 * queuedProblem({ mode: "steer", message: 123 }); // "steer(message): expected a message object ..."
 */
export function queuedProblem(item: unknown): string | undefined {
	const queued = item as Partial<QueuedMessage> | null;
	if (typeof item !== "object" || queued === null) return `expected a queued message { mode, message }, got ${shown(item)}`;
	if (queued.mode !== "steer" && queued.mode !== "followUp") return `mode: expected "steer" or "followUp", got ${shown(queued.mode)}`;
	try {
		assertAgentMessage(queued.message, `${queued.mode}(message)`);
		return undefined;
	} catch (error) {
		return describeError(error);
	}
}

/**
 * The messages taken from the inbox that the agent takes; each of the others is dropped and
 * `drop` told why (a message that cannot be delivered must not fail the delivery: Restate would
 * retry it for ever, with the session's exclusive calls queued behind).
 *
 * @example
 * const items = deliverable((await inbox.takeForRun(invocationId)).items, (problem) => ctx.console.warn(problem));
 */
export function deliverable(items: readonly unknown[], drop: (problem: string) => void): QueuedMessage[] {
	const usable: QueuedMessage[] = [];
	for (const item of items) {
		const problem = queuedProblem(item);
		if (problem === undefined) usable.push(item as QueuedMessage);
		else drop(`agentchart/restate: a queued message was dropped, the agent cannot take it: ${problem}`);
	}
	return usable;
}

/**
 * The messages one poll of an agent's queues takes of `items` (messages that reached an idle
 * session together): steering before follow-ups; in `"one-at-a-time"` mode the first of that
 * kind, in `"all"` mode all of it. They start the run; the others wait in the queues for the
 * turns after it, as they would have in a run going on.
 *
 * @example
 * firstPoll([{ mode: "followUp", message: f }, { mode: "steer", message: s }], { steeringMode: "one-at-a-time", followUpMode: "one-at-a-time" }); // the steer
 */
export function firstPoll(items: readonly QueuedMessage[], modes: { steeringMode: QueueMode; followUpMode: QueueMode }): QueuedMessage[] {
	const kind = items.some((item) => item.mode === "steer") ? "steer" : "followUp";
	const ofKind = items.filter((item) => item.mode === kind);
	const { taken } = takeFromQueue(ofKind.map((item) => item.message), kind === "steer" ? modes.steeringMode : modes.followUpMode);
	return ofKind.filter((item) => taken.includes(item.message));
}
