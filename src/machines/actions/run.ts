/**
 * Run lifecycle: starting a run (prompt, continue, queued messages), taking queued messages
 * into the transcript, starting the next turn, closing a turn that was aborted before its
 * call, aborting it, and the end of the run.
 */
import type { AgentMessage } from "../../types/messages.js";
import { type Ctx, type EffectEnqueue, type Enqueue, appendMessages, messageEvents, newRun, patchContext, patchRun, runOf } from "../context.js";
import { abortedAssistantMessage, takeFromQueue } from "../run-helpers.js";
import { lengthCutOffText } from "../streaming-tools.js";
import type { ToolCallEntry } from "../types.js";

/**
 * Starts a run with these messages (prompts, or queued messages taken by `continue()`):
 * `agent_start`, `turn_start`, then each message's start and end.
 *
 * @example
 * startRun(context, [prompt], false, enqueue);
 */
export function startRun(context: Ctx, prompts: AgentMessage[], skipInitialSteeringPoll: boolean, enqueue: Enqueue): void {
	const runs = context.runs + 1;
	const run = newRun(`r${runs}`, skipInitialSteeringPoll);
	run.newMessages = [...prompts];
	enqueue.assign({ run, runs, messages: context.messages.concat(prompts) });
	enqueue.emit({ type: "agent_start" });
	enqueue.emit({ type: "turn_start" });
	for (const message of prompts) for (const event of messageEvents(message)) enqueue.emit(event);
}

/**
 * Takes messages into the transcript inside the current turn (steering before the first call).
 *
 * @example
 * injectMessages(context, steering, enqueue);
 */
export function injectMessages(context: Ctx, messages: AgentMessage[], enqueue: Enqueue): void {
	const run = runOf(context);
	appendMessages(context, messages, enqueue);
	enqueue.assign({ run: patchRun(run, { newMessages: [...run.newMessages, ...messages] }) });
	for (const message of messages) for (const event of messageEvents(message)) enqueue.emit(event);
}

/**
 * Starts the next turn: `turn_start`, then the messages it begins with.
 *
 * @example
 * startNextTurn(context, [steer], enqueue);
 */
export function startNextTurn(context: Ctx, messages: AgentMessage[], enqueue: Enqueue): void {
	const run = runOf(context);
	appendMessages(context, messages, enqueue);
	enqueue.assign({
		run: patchRun(run, {
			turn: run.turn + 1,
			turnEnded: false,
			compactedThisTurn: false,
			steeringPolled: false,
			followUpsPolled: false,
			stopAsked: false,
			assistant: undefined,
			batch: undefined,
			toolResults: [],
			newMessages: [...run.newMessages, ...messages],
		}),
	});
	enqueue.emit({ type: "turn_start" });
	for (const message of messages) for (const event of messageEvents(message)) enqueue.emit(event);
}

/**
 * Takes from a queue per its mode, keeping the rest queued.
 *
 * @example
 * const taken = takeQueued(context, "steering", enqueue);
 */
export function takeQueued(context: Ctx, queue: "steering" | "followUp", enqueue: Enqueue): AgentMessage[] {
	if (queue === "steering") {
		const { taken, rest } = takeFromQueue(context.steeringQueue, context.steeringMode);
		enqueue.assign({ steeringQueue: rest });
		return taken;
	}
	const { taken, rest } = takeFromQueue(context.followUpQueue, context.followUpMode);
	enqueue.assign({ followUpQueue: rest });
	return taken;
}

/**
 * Closes the open turn of a run aborted before its LLM call: an empty aborted assistant
 * message (with the listener's error when one threw), and `turn_end`.
 *
 * @example
 * closeTurnAsAborted(context, enqueue);
 */
export function closeTurnAsAborted(context: Ctx, enqueue: Enqueue): void {
	const run = runOf(context);
	const message = abortedAssistantMessage(context, run.failure ?? "Request was aborted");
	appendMessages(context, [message], enqueue);
	enqueue.assign({ run: patchRun(run, { assistant: message, turnEnded: true, newMessages: [...run.newMessages, message] }) });
	for (const event of messageEvents(message)) enqueue.emit(event);
	enqueue.emit({ type: "turn_end", message, toolResults: [] });
}

/**
 * The instruction of a resume turn after a reply cut off by the output token limit
 * (`outputLimitRecovery`): the user message the agent adds to the transcript before it calls the
 * model again. `toolCallsCutOff` when tool calls were cut off; `someCallsRan` when, in streaming
 * tool mode, calls of the reply that were complete before the cut ran.
 *
 * @example
 * // A chat UI that does not show the resume turns as the user's own messages:
 * const resumes = new Set([outputLimitResumeText(false), outputLimitResumeText(true), outputLimitResumeText(true, true)]);
 * const shown = agent.state.messages.filter((m) => !(m.role === "user" && Array.isArray(m.content) && m.content.length === 1 && m.content[0]?.type === "text" && resumes.has(m.content[0].text)));
 */
export function outputLimitResumeText(toolCallsCutOff: boolean, someCallsRan = false): string {
	if (toolCallsCutOff && someCallsRan) {
		return "Your reply was cut off by the output token limit before all its tool calls were complete. The calls that were complete ran (their results are above); the ones cut off did not. Issue only the cut-off calls again, keeping each call's arguments short enough to fit (split large content across several calls).";
	}
	return toolCallsCutOff
		? "Your reply was cut off by the output token limit before its tool calls were complete, so they did not run. Issue them again, keeping each call's arguments short enough to fit (split large content across several calls)."
		: "Your reply was cut off by the output token limit. Continue exactly where it stopped, without repeating anything you already wrote.";
}

/**
 * Streaming mode: whether a call of a reply cut off by the output token limit was complete and
 * went its way (ran, or was refused or rejected) rather than being cut off itself.
 */
function handledBeforeCutOff(call: ToolCallEntry): boolean {
	const first = call.outcome?.result.content[0];
	return call.status === "settled" && !(call.outcome?.isError === true && first?.type === "text" && first.text === lengthCutOffText(call.toolCall.name));
}

/**
 * Starts a resume turn after a reply cut off by the output token limit: queued steering first,
 * then the resume instruction.
 *
 * @example
 * startOutputLimitRecoveryTurn(context, enqueue);
 */
export function startOutputLimitRecoveryTurn(context: Ctx, enqueue: Enqueue): void {
	const run = runOf(context);
	const steering = takeQueued(context, "steering", enqueue);
	// Streaming mode ran the calls that were complete before the cut: the model must not issue those again.
	const batch = run.batch;
	const someRan = batch?.mode === "streaming" && batch.calls.some(handledBeforeCutOff);
	const resume: AgentMessage = { role: "user", content: [{ type: "text", text: outputLimitResumeText(batch?.truncated === true, someRan) }], timestamp: Date.now() };
	const next: Ctx = patchContext(context, { run: patchRun(run, { outputLimitAttempts: (run.outputLimitAttempts ?? 0) + 1 }) });
	startNextTurn(next, [...steering, resume], enqueue);
}

/** The id of the delayed `tools.abandon` an abort schedules (cancelled when the run ends). */
export const ABANDON_TOOLS_ID = "tools.abandon";

/**
 * Aborts the run: its signal (running actors see it), the flag the guards read, and, with calls
 * still running, the deadline after which they are given up on (`tools.abandon`). A listener's
 * failure is kept as the reason the reply and the run report. The chart calls it only on a run
 * not aborted yet.
 *
 * @example
 * abortRun: enqueueActions(({ context, enqueue }) => abortRun(context, undefined, enqueue)),
 */
export function abortRun(context: Ctx, failure: string | undefined, enqueue: EffectEnqueue): void {
	const run = runOf(context);
	run.controller.abort();
	const grace = context.config.toolAbortGraceMs;
	const abandonScheduled = grace > 0 && run.batch?.calls.some((call) => call.status === "running") === true;
	enqueue.assign({ run: patchRun(run, { aborted: true, failure: failure ?? run.failure, abandonScheduled }) });
	if (abandonScheduled) enqueue.raise({ type: "tools.abandon" }, { delay: grace, id: ABANDON_TOOLS_ID });
}

/**
 * The end of a run (or of a manual compaction): the run is forgotten, and the give-up timer of
 * an abort, if one was set, cancelled.
 *
 * @example
 * clearRun: enqueueActions(({ context, enqueue }) => clearRun(context, enqueue)),
 */
export function clearRun(context: Ctx, enqueue: EffectEnqueue): void {
	if (context.run?.abandonScheduled) enqueue.cancel(ABANDON_TOOLS_ID);
	enqueue.assign({ run: undefined });
}
