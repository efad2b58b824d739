/**
 * A model call as one journaled step: the stream function an agent gets inside a session
 * handler. The call runs in a `ctx.run` whose journaled result is the final assistant message;
 * the deltas go to the agent (and from it to live listeners) as they stream, never into the
 * journal. On a replay the step's journaled message comes back without a call, and the agent is
 * given the same reply as one quick stream of events, so it takes the same path.
 *
 * Crash rules: a call whose step had not completed when its worker died is simply made again
 * (Restate runs the `ctx.run` again): what streamed before is never sent to the model and
 * leaves nothing in the journal. Timers that decide what the reply is (the stall watch) run
 * inside the step, where their decision is journaled with the reply. The request is aborted
 * when its attempt ends (an attempt lost while this worker lives on is retried elsewhere, and
 * the request made there replaces this one), and a reply that is not JSON is journaled as a
 * failed reply (`storable.ts`) rather than retried.
 */
import type { ObjectContext } from "@restatedev/restate-sdk";
import { failedAssistantMessage } from "../actors/stream-actor.js";
import { AssistantMessageEventStream } from "../providers/event-stream.js";
import type { AssistantMessage } from "../types/messages.js";
import type { Context, Model, SimpleStreamOptions } from "../types/model.js";
import type { AssistantMessageEvent, StreamFn } from "../types/stream.js";
import { modelStallText } from "../util/stall-watch.js";
import type { JournalAwaiter } from "./journal-awaiter.js";
import { type SessionBudget, storableSerde } from "./storable.js";
import { failedStop } from "../util/stop-reason.js";

/** What a model step journals. */
export interface ModelStepOutcome {
	/** The reply, as the agent gets it (its `done` or `error` message). */
	message: AssistantMessage;
	/** Restate cancelled the invocation (`abort`) before the step ended: the run is aborted after this reply. */
	cancelled: boolean;
}

/** What a journaled stream function needs from the handler that runs it. */
export interface ModelStepHost {
	readonly ctx: ObjectContext;
	readonly awaiter: JournalAwaiter;
	/** Aborted when Restate cancels the invocation. */
	readonly cancelSignal: AbortSignal;
	/** The step's name (unique in the invocation, the same on every replay). */
	nextStepName(kind: "model"): string;
	/** The run is aborted (a journaled step said the invocation was cancelled). */
	abortRun(): void;
	/** A silent stream ends as an error after this long (ms; 0 disables). */
	readonly streamIdleTimeoutMs: number;
	/** The largest JSON a reply may journal (see `AgentSessionsOptions.maxStepBytes`). */
	readonly maxStepBytes: number;
	/** What the session may still grow by (see `AgentSessionsOptions.maxSessionBytes`); the step's outcome counts against it. */
	readonly sessionBudget?: SessionBudget | undefined;
}

/**
 * The events of a reply that is already complete: what the agent would have read had it
 * streamed in one go (one delta per block).
 *
 * @example
 * for (const event of replayEvents(message)) stream.push(event);
 */
export function replayEvents(message: AssistantMessage): AssistantMessageEvent[] {
	const partial: AssistantMessage = { ...message, content: [] };
	const events: AssistantMessageEvent[] = [{ type: "start", partial }];
	message.content.forEach((block, contentIndex) => {
		partial.content.push(block);
		switch (block.type) {
			case "text":
				events.push({ type: "text_start", contentIndex, partial }, { type: "text_delta", contentIndex, delta: block.text, partial }, { type: "text_end", contentIndex, content: block.text, partial });
				break;
			case "thinking":
				events.push(
					{ type: "thinking_start", contentIndex, partial },
					{ type: "thinking_delta", contentIndex, delta: block.thinking, partial },
					{ type: "thinking_end", contentIndex, content: block.thinking, partial },
				);
				break;
			case "toolCall":
				events.push(
					{ type: "toolcall_start", contentIndex, partial },
					{ type: "toolcall_delta", contentIndex, delta: JSON.stringify(block.arguments), partial },
					{ type: "toolcall_end", contentIndex, toolCall: block, partial },
				);
				break;
		}
	});
	return events;
}

/** The terminal event that hands `message` to the agent. */
function terminalEvent(message: AssistantMessage): AssistantMessageEvent {
	if (failedStop(message.stopReason)) return { type: "error", reason: message.stopReason, error: message };
	return { type: "done", reason: message.stopReason, message };
}

/**
 * Runs `streamFn` to its end, forwarding every event but the terminal one to `live`; the final
 * message is what the step journals. Never throws (a stream function's failure is its reply).
 */
async function streamToEnd(streamFn: StreamFn, model: Model, context: Context, options: SimpleStreamOptions, live: AssistantMessageEventStream, idleTimeoutMs: number): Promise<AssistantMessage> {
	const signal = options.signal;
	let partial: AssistantMessage | undefined;
	let stalled = false;
	let timer: ReturnType<typeof setTimeout> | undefined;
	const controller = new AbortController();
	const watch = () => {
		if (idleTimeoutMs <= 0) return;
		clearTimeout(timer);
		timer = setTimeout(() => {
			stalled = true;
			controller.abort(new Error("stream stalled"));
		}, idleTimeoutMs);
	};
	const combined = signal ? AbortSignal.any([signal, controller.signal]) : controller.signal;
	try {
		watch();
		const stream = await streamFn(model, context, { ...options, signal: combined });
		const iterator = stream[Symbol.asyncIterator]();
		for (;;) {
			// A stalled stream may never yield again: the watch ends the read itself.
			const next = await Promise.race([iterator.next(), new Promise<"stalled">((resolve) => controller.signal.addEventListener("abort", () => resolve("stalled"), { once: true }))]);
			if (next === "stalled") break;
			if (next.done) break;
			const event = next.value;
			watch();
			if (event.type === "done") return event.message;
			if (event.type === "error") return event.error;
			if ("partial" in event) partial = event.partial;
			live.push(event);
		}
		if (stalled) return failedAssistantMessage(model, new Error(`The ${modelStallText(idleTimeoutMs)}; the request was cancelled`), false, partial);
		return await stream.result();
	} catch (error) {
		return failedAssistantMessage(model, error, combined.aborted && !stalled, partial);
	} finally {
		clearTimeout(timer);
	}
}

/**
 * `streamFn` as journaled steps of the handler `host` runs: each call is one `ctx.run`.
 *
 * @example
 * const agent = new Agent({ streamFn: journaledStreamFn(streamFn, host), streamIdleTimeoutMs: 0 });
 */
export function journaledStreamFn(streamFn: StreamFn, host: ModelStepHost): StreamFn {
	return (model, context, options) => {
		const agentFacing = new AssistantMessageEventStream();
		let ranHere = false;
		const attemptEnded = host.ctx.request().attemptCompletedSignal;
		const serde = storableSerde<ModelStepOutcome>(
			(outcome, why) => ({ message: failedAssistantMessage(model, new Error(`The model's reply could not be stored: ${why}`), false), cancelled: outcome.cancelled }),
			host.maxStepBytes,
			host.sessionBudget,
		);
		const run = async (): Promise<ModelStepOutcome> => {
			ranHere = true;
			const cancelSignal = host.cancelSignal;
			if (cancelSignal.aborted) {
				return { message: failedAssistantMessage(model, new Error("Request was aborted"), true), cancelled: true };
			}
			const signals = options?.signal ? [options.signal, cancelSignal, attemptEnded] : [cancelSignal, attemptEnded];
			const message = await streamToEnd(streamFn, model, context, { ...options, signal: AbortSignal.any(signals) }, agentFacing, host.streamIdleTimeoutMs);
			return { message, cancelled: cancelSignal.aborted };
		};
		const step = host.ctx.run(host.nextStepName("model"), run, { serde });
		host.awaiter.await(step).then(
			(outcome) => {
				// Replayed: the reply was journaled by an earlier attempt; the agent reads it in one go.
				if (!ranHere) for (const event of replayEvents(outcome.message)) agentFacing.push(event);
				agentFacing.push(terminalEvent(outcome.message));
				if (outcome.cancelled) host.abortRun();
			},
			(error: unknown) => agentFacing.push(terminalEvent(failedAssistantMessage(model, error, false))),
		);
		return agentFacing;
	};
}
