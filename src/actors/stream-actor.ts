import type { EventObject } from "xstate";
import { emptyUsage } from "../types/content.js";
import type { AssistantMessage } from "../types/messages.js";
import type { Context, Model, SimpleStreamOptions } from "../types/model.js";
import type { AssistantMessageEventStreamLike } from "../types/stream.js";
import { describeError } from "../util/describe-error.js";
import { type Deadline, clearDeadline, setDeadline } from "../util/deadlines.js";
import { modelStallText, watchForStall } from "../util/stall-watch.js";
import type { StreamActorEvent, StreamActorInput } from "./stream-protocol.js";
import { callbackLogic } from "./callback-logic.js";

/**
 * An assistant message for a call that failed before or outside the provider (a throwing
 * `convertToLlm`, `streamFn`, ...), so the run still ends with the full lifecycle.
 *
 * @example
 * const message = failedAssistantMessage(model, new Error("boom"), false); // stopReason "error"
 */
export function failedAssistantMessage(model: Model, error: unknown, aborted: boolean, partial?: AssistantMessage): AssistantMessage {
	return {
		role: "assistant",
		content: partial ? [...partial.content] : [],
		api: partial?.api ?? model.api,
		provider: partial?.provider ?? model.provider,
		model: partial?.model ?? model.id,
		usage: partial ? { ...partial.usage } : emptyUsage(),
		stopReason: aborted ? "aborted" : "error",
		errorMessage: describeError(error),
		timestamp: partial?.timestamp ?? Date.now(),
	};
}

/**
 * The stream actor: one LLM call. It prepares the context (`transformContext`,
 * `convertToLlm`, `getApiKey`), calls the stream function and reads its events as pi's loop
 * does: each `message_update` goes to the listeners (`relay`) the moment it is read, with a
 * snapshot of the message as it is then, and the next event is read only once the consumer
 * has delivered it (`deliveryPending`). The machine hears only `stream.start`,
 * `stream.toolcall` (streaming tool execution) and exactly one `stream.done`, whatever the
 * stream function does: throws, ends without a terminal event, ignores an abort for longer
 * than `abortGraceMs`, or goes silent for `streamIdleTimeoutMs` (the call then ends as an
 * error that says it stalled, keeping what had streamed, and its request is cancelled).
 */
export const streamActor = callbackLogic<EventObject, StreamActorInput>(({ input, sendBack: send }) => {
	const sendBack = (event: StreamActorEvent) => send(event);
	const reading: Reading = { stopped: false, events: 0 };
	const { attempt, config, progress } = input;
	// This call's own signal: aborted with the run, and by a stall (which must cancel the request).
	const call = input.abort.callController();
	const signal = call.signal;
	let grace: Deadline | undefined;

	// The model's silence is timed from the request on: preparing it (transformContext, an OAuth
	// refresh in getApiKey) may take as long as it takes.
	let stall: ReturnType<typeof watchForStall> | undefined;
	const watchTheModel = () =>
		watchForStall(config.streamIdleTimeoutMs, () => {
			const error = new Error(`The ${modelStallText(config.streamIdleTimeoutMs)}; the request was cancelled`);
			// The request is cancelled first: the reply's end may start the run's next call at once.
			input.abort.cancelCall(call, new Error("stream stalled"));
			finish(failedAssistantMessage(input.model, error, false, progress.partial));
		}, () => reading.events);
	// The run's abort has aborted the call's signal already; a stream function that ignores it
	// would hang the run, so after a grace period the message is closed with what had streamed.
	const onRunAbort = () => {
		grace = setDeadline(config.abortGraceMs, () => finish(failedAssistantMessage(input.model, new Error("Request was aborted"), true, progress.partial)));
	};
	const removeAbortHook = input.abort.onAbort(onRunAbort);
	const release = () => {
		reading.stopped = true;
		clearDeadline(grace);
		stall?.stop();
		removeAbortHook();
		input.abort.endCall(call);
	};
	const finish = (message: AssistantMessage) => {
		if (reading.stopped) return;
		release();
		sendBack({ type: "stream.done", attempt, message });
	};

	const run = async () => {
		try {
			let messages = input.messages;
			if (config.transformContext) messages = await config.transformContext(messages, signal);
			const llmMessages = await config.convertToLlm(messages);
			const apiKey = (config.getApiKey ? await config.getApiKey(input.model.provider) : undefined) || input.options.apiKey;
			// Aborted while the context was being prepared: no request goes out (pi sends it, and a
			// stream function that ignores the signal would then call the model after abort()).
			// The run's flag, not the signal's getter: nothing else aborts the call before its request.
			if (reading.stopped || input.abort.aborted) return finish(failedAssistantMessage(input.model, new Error("Request was aborted"), true, progress.partial));
			stall = watchTheModel();
			const context: Context = { systemPrompt: input.systemPrompt, messages: llmMessages, tools: input.tools };
			// Copied, then extended: a spread copy that adds keys is V8's slow path.
			const options: SimpleStreamOptions = Object.assign({}, input.options);
			options.signal = signal;
			if (apiKey !== undefined) options.apiKey = apiKey;
			const stream: AssistantMessageEventStreamLike = await config.streamFn(input.model, context, options);
			if (await readStream(stream, reading, input, sendBack, finish)) return;
			const error = new Error("Stream ended without a done or error event");
			finish(failedAssistantMessage(input.model, error, signal.aborted, progress.partial));
		} catch (error) {
			finish(failedAssistantMessage(input.model, error, signal.aborted, progress.partial));
		}
	};
	void run();
	return release;
});

/**
 * Reads one call's stream, relaying each event as it is read; answers whether the loop stopped
 * early (the call was stopped or the stream ended it: `done`/`error`, after `finish`). Its own
 * function, with only the loop's locals, because every await suspends and resumes the frame
 * it is in, and a delta pays two.
 */
async function readStream(
	stream: AssistantMessageEventStreamLike,
	reading: Reading,
	input: StreamActorInput,
	sendBack: (event: StreamActorEvent) => void,
	finish: (message: AssistantMessage) => void,
): Promise<boolean> {
	const { attempt, config, progress, relay } = input;
	let started = false;
	const announce = input.announceToolCalls;
	// The blocks whose calls were announced: a provider that ends one block twice must not
	// run its call twice (two blocks with one id are two calls, each announced).
	let announced: Set<number> | undefined;
	for await (const event of stream) {
		if (reading.stopped) return true;
		reading.events++;
		// What this event's delivery settles with (the relay answers it for a delta, the
		// consumer's queue otherwise).
		let pending: PromiseLike<void> | undefined | void;
		switch (event.type) {
			case "start":
				started = true;
				progress.partial = event.partial;
				sendBack({ type: "stream.start", attempt, partial: event.partial });
				pending = config.deliveryPending?.();
				break;
			case "done":
			case "error":
				finish(await stream.result());
				return true;
			default:
				// As in pi: updates before `start` have no message to belong to.
				if (!started) {
					pending = config.deliveryPending?.();
					break;
				}
				progress.partial = event.partial;
				// A relay that does not pace the stream (an actor's emitter) answers nothing.
				pending = relay({ type: "message_update", assistantMessageEvent: event, message: { ...event.partial } }) ?? config.deliveryPending?.();
				if (announce && event.type === "toolcall_end" && !announced?.has(event.contentIndex)) {
					(announced ??= new Set()).add(event.contentIndex);
					sendBack({ type: "stream.toolcall", attempt, toolCall: event.toolCall, partial: event.partial });
					pending = config.deliveryPending?.();
				}
		}
		// One await per event, as pi's loop has (`await emit(event)`): the provider keeps
		// mutating its partial meanwhile, so how many microtasks pass here decides what
		// each delivered snapshot shows. A failing listener is reported by the delivery.
		try {
			await pending;
		} catch {}
	}
	return reading.stopped;
}

/** One call's reading, shared by the actor and its read loop: plain fields, read and written per event. */
interface Reading {
	/** The call is over (finished or stopped): nothing more is read or reported. */
	stopped: boolean;
	/** Events read so far: the stall watch's sign of life. */
	events: number;
}
