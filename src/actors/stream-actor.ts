import type { EventObject } from "xstate";
import { emptyUsage, type ThinkingContent } from "../types/content.js";
import type { AgentToolCall } from "../types/agent.js";
import type { AssistantMessage } from "../types/messages.js";
import type { Context, Model, SimpleStreamOptions } from "../types/model.js";
import type { AssistantMessageEvent, AssistantMessageEventStreamLike } from "../types/stream.js";
import { shown } from "../agent-input.js";
import { isRecord } from "../util/json-values.js";
import { describeError } from "../util/describe-error.js";
import { type Deadline, clearDeadline, setDeadline } from "../util/deadlines.js";
import { unlessAborted } from "../util/sleep.js";
import { modelStallText, watchForStall } from "../util/stall-watch.js";
import { withStreamActivity } from "../providers/stream-activity.js";
import type { RestoredStreamInput, StreamActorEvent, StreamActorInput } from "./stream-protocol.js";
import { fromCallback } from "xstate";

/**
 * The reply of a model call a restart interrupted after some of its tool calls had started:
 * those calls, as the model sent them, after the reasoning (thinking blocks) the reply had
 * before them, and nothing else of what had streamed.
 *
 * @example
 * replyOfStartedCalls(model, journal.startedDuring("r1.m1")); // stopReason "toolUse", content: the started calls
 */
export function replyOfStartedCalls(model: Model, started: readonly (AgentToolCall | ThinkingContent)[]): AssistantMessage {
	return { role: "assistant", content: [...started], api: model.api, provider: model.provider, model: model.id, usage: emptyUsage(), stopReason: "toolUse", timestamp: Date.now() };
}

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
 * What is wrong with a stream's final message, if its shape is not a reply's: a hand-written or
 * proxied stream that ends with no `content` list, say. Taken as it is, the run would fail on it
 * later, inside the chart; pi's loop ends the run with an error reply, and so does this one, with
 * an error that says what was wrong.
 */
function replyProblem(reply: unknown): string | undefined {
	if (typeof reply !== "object" || reply === null) return `is not a message, got ${shown(reply)}`;
	const content: unknown = (reply as { content?: unknown }).content;
	if (!Array.isArray(content)) return `has no list of content blocks, its content is ${shown(content)}`;
	for (let index = 0; index < content.length; index++) {
		const block: unknown = content[index];
		if (!isRecord(block) || typeof block["type"] !== "string") return `has content[${index}] that is not a content block, got ${shown(block)}`;
	}
	return undefined;
}

/** A hook's answer that must be a list of messages; a `TypeError` naming the hook, which ends the call as an error, otherwise. */
function listFrom<T>(answer: T[], hook: "transformContext" | "convertToLlm"): T[] {
	if (!Array.isArray(answer)) throw new TypeError(`${hook} must return a list of messages, got ${shown(answer)}`);
	return answer;
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
const streamCallback = fromCallback<EventObject, StreamActorInput | RestoredStreamInput>(({ input: given, sendBack: send }) => {
	const sendBack = (event: StreamActorEvent) => send(event);
	if ("restored" in given) {
		// Restored from a snapshot taken while the call was in flight: the chart makes it again.
		sendBack({ type: "stream.interrupted", attempt: given.attempt });
		return;
	}
	const input = given;
	const reading: Reading = { stopped: false, events: 0, delivering: false };
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
		}, () => reading.events, () => reading.delivering);
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
	};
	const journal = input.journal;
	const effect = input.effect;
	let replayed = false;
	// The reply is retold from the journal (its outcome, or the calls that had started): its events say so.
	let retold = false;
	const finish = (reply: AssistantMessage) => {
		if (reading.stopped) return;
		release();
		const malformed = replyProblem(reply);
		let message = malformed === undefined ? reply : failedAssistantMessage(input.model, new TypeError(`The stream's final message ${malformed}`), false);
		if (journal && effect && !replayed) {
			// A reply no store could write would fail every save of the session after it: the turn ends as a failed request.
			const why = journal.unstorable?.(message, "message");
			if (why !== undefined) message = failedAssistantMessage(input.model, new Error(`The model's reply could not be stored: ${why}`), false);
			// The outcome is not waited for: a later entry (the next call's intent) is only durable after it.
			void journal.append({ kind: "model", phase: "outcome", effect, message });
		}
		sendBack(retold ? { type: "stream.done", attempt, message, replayed: true } : { type: "stream.done", attempt, message });
	};

	const run = async () => {
		try {
			if (journal && effect) {
				const record = journal.lookup(effect);
				if (record?.outcome?.kind === "model") {
					replayed = true;
					return replay(record.outcome.message);
				}
				// Interrupted after calls of its reply had started (streaming tool execution): the reply
				// is closed with them, so that what they did is answered; asking again would orphan them.
				const started = record?.intent ? journal.startedDuring?.(effect) : undefined;
				if (started && started.length > 0) return replay(replyOfStartedCalls(input.model, started));
			}
			if (input.afterAbort) return finish(failedAssistantMessage(input.model, new Error("Request was aborted"), true));
			if (journal && effect) {
				// Recorded before the request goes out: a restart after it makes the request again.
				const pending = journal.append({ kind: "model", phase: "intent", effect, model: input.model.id, messages: input.messages.length });
				// An abort does not wait for the store (nor for the grace meant for a stream that ignores it).
				if (pending) await unlessAborted(pending, signal);
			}
			let messages = input.messages;
			if (config.transformContext) messages = listFrom(await config.transformContext(messages, signal), "transformContext");
			const llmMessages = listFrom(await config.convertToLlm(messages), "convertToLlm");
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
			// A built-in provider's retries and their waits are not the model's silence.
			withStreamActivity(options, signOfLife(reading));
			const stream: AssistantMessageEventStreamLike = await config.streamFn(input.model, context, options);
			if (await readStream(stream, reading, input, sendBack, finish)) return;
			// Ended without `done`: pi's loop then takes the stream's result, which a stream ended
			// with `end(message)` holds already (one that never gets one would hold pi for ever).
			const ended = await resultAtHand(stream);
			if (ended) return finish(ended);
			const error = new Error("Stream ended without a done or error event");
			finish(failedAssistantMessage(input.model, error, signal.aborted, progress.partial));
		} catch (error) {
			finish(failedAssistantMessage(input.model, error, signal.aborted, progress.partial));
		}
	};
	/** The call's outcome is in the journal: its message is the reply, as if it had just streamed (without deltas). */
	const replay = (message: AssistantMessage) => {
		progress.partial = message;
		retold = true;
		sendBack({ type: "stream.start", attempt, partial: message, replayed: true });
		if (input.announceToolCalls) {
			for (const block of message.content) if (block.type === "toolCall") sendBack({ type: "stream.toolcall", attempt, toolCall: block, partial: message });
		}
		finish(message);
	};
	void run();
	// Stopped before its reply ended (the state that invoked it was left, or a parent machine
	// stopped): the request must not outlive the actor, streaming tokens nobody reads and holding
	// its connection open. Its signal aborts, as a tool call's does when its batch is stopped.
	return () => {
		if (!reading.stopped) input.abort.cancelCall(call, input.abort.signal.reason);
		release();
	};
});

/**
 * The stream actor's logic: `streamCallback`, persisted as a marker of the call in flight (its
 * input holds the run's functions, which no snapshot can keep), so that a restored actor tells
 * the chart the call was interrupted.
 */
export const streamActor = {
	...streamCallback,
	getPersistedSnapshot(snapshot: { status: string; input: StreamActorInput | RestoredStreamInput }) {
		return { status: snapshot.status, output: undefined, error: undefined, input: { restored: true, attempt: snapshot.input.attempt } satisfies RestoredStreamInput };
	},
} as typeof streamCallback;

/**
 * Reads one call's stream, relaying each event as it is read; resolves with whether the read
 * stopped early (the call was stopped or the stream ended it: `done`/`error`, after `finish`),
 * and rejects with what the stream threw.
 *
 * It is pi's `for await` loop with one `await` per event, spelled out as {@link StreamReader}'s
 * `then` callbacks: an `await` in an async function suspends its frame to the heap, about 200
 * bytes a token delta, where a `then` on the same promise resumes at the same microtask.
 */
function readStream(
	stream: AssistantMessageEventStreamLike,
	reading: Reading,
	input: StreamActorInput,
	sendBack: (event: StreamActorEvent) => void,
	finish: (message: AssistantMessage) => void,
): Promise<boolean> {
	return new Promise<boolean>((resolve, reject) => {
		let iterator: AsyncIterator<AssistantMessageEvent>;
		try {
			iterator = asyncIteratorOf(stream);
		} catch (error) {
			reject(error);
			return;
		}
		new StreamReader(stream, iterator, reading, input, sendBack, finish, resolve, reject).next();
	});
}

/**
 * One read of a call's stream: {@link readStream}'s loop. Each step is what `for await` does at
 * that point, microtask for microtask: `next()` and an await of its result, the event's
 * relay, an await of its delivery, the next `next()`; leaving the loop early closes the
 * iterator (`return()`, awaited), as leaving a `for await` does. (Unlike `for await`, a
 * `return()` that answers something other than an object is not an error: the call has ended.)
 *
 * @example
 * new StreamReader(stream, stream[Symbol.asyncIterator](), reading, input, sendBack, finish, resolve, reject).next();
 */
class StreamReader {

	#started = false;
	/**
	 * The blocks whose calls were announced: a provider that ends one block twice must not run
	 * its call twice (two blocks with one id are two calls, each announced).
	 */
	#announced: Set<number> | undefined;
	/** Read once, as `for await` reads it once. */
	readonly #nextMethod: AsyncIterator<AssistantMessageEvent>["next"];

	constructor(
		private readonly stream: AssistantMessageEventStreamLike,
		private readonly iterator: AsyncIterator<AssistantMessageEvent>,
		private readonly reading: Reading,
		private readonly input: StreamActorInput,
		private readonly sendBack: (event: StreamActorEvent) => void,
		private readonly finish: (message: AssistantMessage) => void,
		private readonly resolve: (stoppedEarly: boolean) => void,
		private readonly reject: (error: unknown) => void,
	) {
		this.#nextMethod = iterator.next;
	}

	/** A delivery the read waited on settled: the model's silence is timed again from here. */
	readonly #delivered = (): void => {
		this.reading.delivering = false;
		this.reading.events++;
		this.next();
	};

	/** Asks for the next event and awaits it. (Also the callback of a delivery that settled.) */
	readonly next = (): void => {
		let step: unknown;
		try {
			step = this.#nextMethod.call(this.iterator);
		} catch (error) {
			// Thrown by the iterator itself: the loop ends without closing it.
			this.reject(error);
			return;
		}
		Promise.resolve(step).then(this.#read, this.reject);
	};

	/** An event was read: relays it, then awaits its delivery before asking for the next. */
	readonly #read = (step: unknown): void => {
		if (typeof step !== "object" || step === null) {
			this.reject(new TypeError(`Iterator result ${String(step)} is not an object`));
			return;
		}
		const { done, value: event } = step as IteratorResult<AssistantMessageEvent>;
		if (done) {
			this.resolve(this.reading.stopped);
			return;
		}
		// What this event's delivery settles with (the relay answers it for a delta, the
		// consumer's queue otherwise).
		let pending: PromiseLike<void> | undefined | void;
		try {
			if (this.reading.stopped) {
				this.#close();
				return;
			}
			this.reading.events++;
			const { attempt, config, progress, relay } = this.input;
			switch (event.type) {
				case "start":
					// A start with no partial message has nothing to show: the final message starts and ends alone.
					if (typeof event.partial !== "object" || event.partial === null) {
						pending = config.deliveryPending?.();
						break;
					}
					this.#started = true;
					progress.partial = event.partial;
					this.sendBack({ type: "stream.start", attempt, partial: event.partial });
					pending = config.deliveryPending?.();
					break;
				case "done":
				case "error":
					this.#end();
					return;
				case "text_start":
				case "text_delta":
				case "text_end":
				case "thinking_start":
				case "thinking_delta":
				case "thinking_end":
				case "toolcall_start":
				case "toolcall_delta":
				case "toolcall_end":
					// As in pi: updates before `start` have no message to belong to.
					if (!this.#started) {
						pending = config.deliveryPending?.();
						break;
					}
					progress.partial = event.partial;
					// A relay that does not pace the stream (an actor's emitter) answers nothing.
					if (relay) pending = relay({ type: "message_update", assistantMessageEvent: event, message: { ...event.partial } }) ?? config.deliveryPending?.();
					else {
						this.sendBack({ type: "stream.delta", attempt, update: { type: "message_update", assistantMessageEvent: event, message: { ...event.partial } } });
						pending = config.deliveryPending?.();
					}
					if (this.input.announceToolCalls && event.type === "toolcall_end" && !this.#announced?.has(event.contentIndex)) {
						(this.#announced ??= new Set()).add(event.contentIndex);
						this.sendBack({ type: "stream.toolcall", attempt, toolCall: event.toolCall, partial: event.partial });
						pending = config.deliveryPending?.();
					}
					break;
				default:
					// An event of a kind pi's loop does not know (a proxy's keep-alive, a later pi-ai's) is
					// skipped, as pi skips it: it has no partial message to show, and pi awaits nothing
					// for it, so the next event is asked for at once (an await here would let the
					// provider change its partial before the next event is read, which pi does not).
					this.next();
					return;
			}
		} catch (error) {
			this.#closeAfter(error);
			return;
		}
		// One await per event, as pi's loop has (`await emit(event)`): the provider keeps
		// mutating its partial meanwhile, so how many microtasks pass here decides what each
		// delivered snapshot shows. A failing delivery is reported by the delivery itself.
		if (pending === undefined) SETTLED.then(this.next, this.next);
		else {
			// Listeners take their time: the model is not read meanwhile, so its silence is not timed.
			this.reading.delivering = true;
			Promise.resolve(pending).then(this.#delivered, this.#delivered);
		}
	};

	/** `done` or `error`: the call ends with the stream's final message. */
	#end(): void {
		let final: Promise<AssistantMessage>;
		try {
			// Named for the user: the engine's own field name in "x.result is not a function" says nothing to them.
			if (typeof this.stream.result !== "function") throw new TypeError("the stream function's stream has no result() method: return an AssistantMessageEventStream (its result() resolves to the final message)");
			final = this.stream.result();
		} catch (error) {
			this.#closeAfter(error);
			return;
		}
		Promise.resolve(final).then(
			(message) => {
				try {
					this.finish(message);
				} catch (error) {
					this.#closeAfter(error);
					return;
				}
				// At once, with the final message in hand (pi closes once `message_end` was delivered).
				this.#close();
			},
			(error: unknown) => this.#closeAfter(error),
		);
	}

	/**
	 * Leaves the loop early, as a `for await` left by `return` does: closes the iterator (its
	 * `return()`, awaited) and resolves. The call is over by then (stopped, or finished), so how
	 * the close goes matters to the iterator alone.
	 */
	#close(): void {
		this.#closeThen(this.#stoppedEarly);
	}

	readonly #stoppedEarly = (): void => this.resolve(true);

	/** Leaves the loop because of an error: closes the iterator (its own failure ignored), then rejects. */
	#closeAfter(error: unknown): void {
		this.#closeThen(() => this.reject(error));
	}

	/** Calls the iterator's `return()`, if it has one, and `then` once what it returned settles. */
	#closeThen(then: () => void): void {
		try {
			const close = this.iterator.return;
			if (typeof close === "function") {
				Promise.resolve(close.call(this.iterator)).then(then, then);
				return;
			}
		} catch {
			// A `return` getter or call that throws: the loop is left all the same.
		}
		then();
	}
}

/**
 * The stream's result if it has one already (within a task): what a stream ended by
 * `end(message)` without a `done` event holds. A result that is not an assistant message, a
 * `result()` that throws or rejects, or none yet, is none.
 */
function resultAtHand(stream: AssistantMessageEventStreamLike): Promise<AssistantMessage | undefined> {
	let result: unknown;
	try {
		result = typeof stream.result === "function" ? stream.result() : undefined;
	} catch {
		return Promise.resolve(undefined);
	}
	if (result === undefined) return Promise.resolve(undefined);
	return new Promise((resolve) => {
		// A task, not a microtask: a result already given settles through any chain of promises before it.
		const none = setTimeout(() => resolve(undefined), 0);
		Promise.resolve(result).then(
			(message: unknown) => {
				clearTimeout(none);
				const reply = message as Partial<AssistantMessage> | null | undefined;
				resolve(typeof reply === "object" && reply !== null && reply.role === "assistant" && Array.isArray(reply.content) ? (reply as AssistantMessage) : undefined);
			},
			() => {
				clearTimeout(none);
				resolve(undefined);
			},
		);
	});
}

/** A settled promise: a `then` on it runs its callback a microtask later, as `await undefined` resumes. */
const SETTLED: Promise<void> = Promise.resolve();

/**
 * The iterator `for await` would read: the stream's async iterator, or, for a stream that is
 * only a sync iterable, that iterator wrapped as `for await` wraps it (each value awaited).
 */
function asyncIteratorOf(stream: AssistantMessageEventStreamLike): AsyncIterator<AssistantMessageEvent> {
	const method = stream[Symbol.asyncIterator];
	if (method !== undefined && method !== null) return method.call(stream);
	const syncMethod = (stream as unknown as Partial<Iterable<AssistantMessageEvent>>)[Symbol.iterator];
	if (typeof syncMethod !== "function") throw new TypeError("The stream function's result is not async iterable");
	const sync = syncMethod.call(stream);
	// A step that throws is a rejected promise, as in `for await`'s own wrapper.
	const settle = (take: () => IteratorResult<AssistantMessageEvent>): Promise<IteratorResult<AssistantMessageEvent>> => {
		try {
			const step = take();
			return Promise.resolve(step.value).then((value) => ({ value, done: step.done === true }) as IteratorResult<AssistantMessageEvent>);
		} catch (error) {
			return Promise.reject(error);
		}
	};
	return {
		next: () => settle(() => sync.next()),
		return: () => (typeof sync.return === "function" ? settle(() => (sync.return as () => IteratorResult<AssistantMessageEvent>)()) : Promise.resolve({ value: undefined, done: true })),
	};
}

/**
 * Counts a provider's sign of life as an event read. Made here, outside the actor's callback: a
 * closure made there would hold the whole call (its input, the run's stream function) for as long
 * as a stream function keeps its options.
 */
function signOfLife(reading: Reading): () => void {
	return () => void reading.events++;
}

/** One call's reading, shared by the actor and its read loop: plain fields, read and written per event. */
interface Reading {
	/** The call is over (finished or stopped): nothing more is read or reported. */
	stopped: boolean;
	/** Events read so far, and deliveries that settled: the stall watch's sign of life. */
	events: number;
	/** The read waits for listeners to take an event: the stall watch does not count the time. */
	delivering: boolean;
}
