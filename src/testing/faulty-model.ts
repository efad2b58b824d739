/**
 * The fault-scripting model: the scripted model's replies, broken the way real providers break
 * them. A stream stalls (no event until the agent gives up on it), the connection resets or the
 * provider errors mid-stream (an `error` event with what had streamed), the reply stops on the
 * output limit (`done` with stopReason "length", the open tool call lost), or the request
 * overflows the context (the error a provider sends before any output). Faults go at chosen
 * calls and points (`faults`) or at seeded random ones (`random`), and every fault that
 * happened is listed in `injected`, so a test can say what its agent went through.
 */
import { createAssistantMessage } from "../providers/assistant-message.js";
import { AssistantMessageEventStream } from "../providers/event-stream.js";
import { createScriptedModel, type ScriptedModel, type ScriptedModelOptions, type ScriptedReply, type ScriptedReplyFactory } from "../providers/scripted.js";
import type { AssistantMessage } from "../types/messages.js";
import type { Context, Model, SimpleStreamOptions } from "../types/model.js";
import type { AssistantMessageEvent, StreamFn } from "../types/stream.js";
import { describeError } from "../util/describe-error.js";
import { seededRandom } from "../util/seeded-random.js";
import { ALL_FAULTS, checkFault, checkFaultOptions } from "./faulty-checks.js";

/**
 * How a reply breaks.
 *
 * @example
 * const kinds: FaultKind[] = ["stall", "reset"]; // only these, at random
 * const model = createFaultyModel([{ content: "Hello" }], { random: { seed: 7, kinds } });
 */
export type FaultKind =
	/** No more events: the stream hangs until the agent aborts it (its idle timeout, or your abort). */
	| "stall"
	/** The connection resets: an `error` event ("read ECONNRESET") with what had streamed. */
	| "reset"
	/** The provider fails mid-stream: an `error` event (HTTP 529 overloaded) with what had streamed. */
	| "error"
	/** The reply stops on the output limit: `done` with stopReason "length"; a tool call still streaming is lost. */
	| "output-limit"
	/** The request is larger than the context window: the provider's error, before any output. */
	| "overflow";

/**
 * A fault in one model call.
 *
 * @example
 * const fault: Fault = { kind: "reset", afterDeltas: 3 }; // the connection resets after 3 deltas
 */
export interface Fault {
	kind: FaultKind;
	/** How many deltas (text, thinking or tool-call argument chunks) stream before it (default 0). Ignored by "overflow". */
	afterDeltas?: number | undefined;
	/** The error message ("reset", "error", "overflow"; each has a realistic default). */
	message?: string | undefined;
}

/**
 * A fault that happened.
 *
 * @example
 * expect(model.injected).toEqual([{ call: 0, kind: "reset", afterDeltas: 3 }]);
 */
export interface InjectedFault {
	/** The model call (0 = the first). */
	call: number;
	kind: FaultKind;
	/** Deltas streamed before it. */
	afterDeltas: number;
}

/**
 * Options of {@link createFaultyModel}: the scripted model's, and where the faults go.
 *
 * @example
 * const options: FaultyModelOptions = { faults: { 0: { kind: "reset", afterDeltas: 2 } } }; // the first call breaks after 2 deltas
 * const model = createFaultyModel([{ content: "Hello there" }, { content: "Hello there" }], options);
 */
export interface FaultyModelOptions extends ScriptedModelOptions {
	/** Faults by model call (0 = the first call), or a function of the call index. */
	faults?: Readonly<Record<number, Fault>> | ((call: number) => Fault | undefined) | undefined;
	/**
	 * Seeded random faults, for calls `faults` leaves alone: each call breaks with `probability`
	 * (default 0.3), with one of `kinds` (default all), after 0 to `maxDeltas` (default 8) deltas.
	 */
	random?: { seed: number; probability?: number | undefined; kinds?: readonly FaultKind[] | undefined; maxDeltas?: number | undefined } | undefined;
}

/**
 * The fault-scripting model: a scripted model, and the faults it injected so far.
 *
 * @example
 * const model: FaultyModel = createFaultyModel([{ content: "Hello" }], { random: { seed: 42, probability: 0.5 } });
 * const agent = new Agent({ initialState: { model: model.model }, streamFn: model.streamFn });
 * await agent.prompt("Hi");
 * console.log(model.injected); // what broke where: [{ call, kind, afterDeltas }, ...]
 */
export interface FaultyModel extends ScriptedModel {
	/** The faults that happened, in order (a fault planned after more deltas than its reply had did not happen). */
	readonly injected: readonly InjectedFault[];
}

const DEFAULT_MESSAGES: Record<Exclude<FaultKind, "stall" | "output-limit">, string> = {
	reset: "read ECONNRESET",
	error: '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
	overflow: "400 prompt is too long: 212000 tokens > 200000 maximum",
};

function isDelta(event: AssistantMessageEvent): boolean {
	return event.type === "text_delta" || event.type === "thinking_delta" || event.type === "toolcall_delta";
}

/** The block whose `_start` came and whose `_end` did not. */
function openBlock(events: readonly AssistantMessageEvent[]): { type: "text" | "thinking" | "toolCall"; index: number } | undefined {
	let open: { type: "text" | "thinking" | "toolCall"; index: number } | undefined;
	for (const event of events) {
		if (event.type === "text_start") open = { type: "text", index: event.contentIndex };
		else if (event.type === "thinking_start") open = { type: "thinking", index: event.contentIndex };
		else if (event.type === "toolcall_start") open = { type: "toolCall", index: event.contentIndex };
		else if (event.type === "text_end" || event.type === "thinking_end" || event.type === "toolcall_end") open = undefined;
	}
	return open;
}

/**
 * A scripted model whose replies break at chosen or random points: stalls, connection resets,
 * provider errors mid-stream, stops on the output limit and context overflows, each as a real
 * provider's stream function reports it (a stream function never throws). Give it to your agent
 * as you would the scripted model, and read `injected` for what happened.
 *
 * @example
 * const model = createFaultyModel(
 *   [{ content: "Your order ships tomorrow." }, { content: "Your order ships tomorrow." }],
 *   { faults: { 0: { kind: "reset", afterDeltas: 2 } } },
 * );
 * const agent = new Agent({ initialState: { model: model.model }, streamFn: model.streamFn });
 * await agent.prompt("Where is my order?"); // the first reply fails with "read ECONNRESET"
 * await agent.prompt("Where is my order?"); // the second one arrives whole
 */
export function createFaultyModel(replies: (ScriptedReply | ScriptedReplyFactory)[], options: FaultyModelOptions = {}): FaultyModel {
	if (!Array.isArray(replies)) throw new TypeError(`createFaultyModel: replies must be an array of replies and reply functions, got ${replies === null ? "null" : typeof replies}`);
	checkFaultOptions(options);
	const { faults, random, ...scriptedOptions } = options;
	const scripted = createScriptedModel(replies, scriptedOptions);
	const play = scripted.streamFn;
	const injected: InjectedFault[] = [];
	const next = random ? seededRandom(random.seed) : undefined;
	const faultOf = (call: number): Fault | undefined => {
		const chosen = typeof faults === "function" ? faults(call) : faults?.[call];
		if (typeof faults === "function" && chosen !== undefined) checkFault(chosen, `the fault returned for call ${call}`);
		if (chosen || !next || !random) return chosen;
		// Three draws per call whether or not it breaks: a seed then replays call by call.
		const [breaks, kind, after] = [next(), next(), next()];
		if (breaks >= (random.probability ?? 0.3)) return undefined;
		const kinds = random.kinds?.length ? random.kinds : ALL_FAULTS;
		return { kind: kinds[Math.floor(kind * kinds.length)] as FaultKind, afterDeltas: Math.floor(after * ((random.maxDeltas ?? 8) + 1)) };
	};

	const streamFn: StreamFn = (model, context, streamOptions) => {
		const call = scripted.calls.length;
		let fault: Fault | undefined;
		try {
			fault = faultOf(call);
		} catch (error) {
			// A `faults` function that throws or answers no fault is a test bug; a stream function still never throws.
			return failedCall(play, model, context, streamOptions, error);
		}
		if (!fault) return play(model, context, streamOptions);
		const out = new AssistantMessageEventStream();
		// The reply under the fault is cut off with a signal of its own, so it stops when the fault hits.
		const underneath = new AbortController();
		const signal = streamOptions?.signal;
		const source = play(model, context, { ...streamOptions, signal: underneath.signal }) as AssistantMessageEventStream;
		void relay(source, out, fault, signal, underneath, (afterDeltas) => injected.push({ call, kind: fault.kind, afterDeltas }));
		return out;
	};
	return Object.assign(scripted, { streamFn, injected }) as FaultyModel;
}

/** Reports the error as the call's reply. The scripted reply is taken all the same (and dropped), so later calls keep their indexes. */
function failedCall(play: StreamFn, model: Model, context: Context, streamOptions: SimpleStreamOptions | undefined, error: unknown): AssistantMessageEventStream {
	void play(model, context, { ...streamOptions, signal: AbortSignal.abort() });
	const out = new AssistantMessageEventStream();
	const message = createAssistantMessage(model, { stopReason: "error", errorMessage: describeError(error) });
	out.push({ type: "error", reason: "error", error: message });
	out.end();
	return out;
}

async function relay(source: AssistantMessageEventStream, out: AssistantMessageEventStream, fault: Fault, signal: AbortSignal | undefined, underneath: AbortController, happened: (afterDeltas: number) => void): Promise<void> {
	const forwardAbort = () => underneath.abort();
	signal?.addEventListener("abort", forwardAbort, { once: true });
	const seen: AssistantMessageEvent[] = [];
	let deltas = 0;
	let partial: AssistantMessage | undefined;
	const at = fault.kind === "overflow" ? 0 : Math.max(0, fault.afterDeltas ?? 0);
	try {
		for await (const event of source) {
			if (event.type === "start") partial = event.partial;
			// The fault hits before the next delta once `at` have streamed (or before the end, which it then replaces).
			const hits = partial !== undefined && deltas === at && (isDelta(event) || event.type === "done" || event.type === "error" || fault.kind === "overflow");
			if (hits && partial) {
				happened(deltas);
				const sofar = streamedSoFar(partial, seen);
				underneath.abort();
				await breakStream(out, fault, sofar, seen, signal);
				return;
			}
			if (isDelta(event)) deltas++;
			seen.push(event);
			out.push(event);
		}
	} finally {
		signal?.removeEventListener("abort", forwardAbort);
		out.end();
	}
}

/**
 * The message as the forwarded events built it. The reply underneath runs ahead of the relay and
 * goes on changing its own message (when stopped, too), so its partial is not what was streamed.
 */
function streamedSoFar(partial: AssistantMessage, seen: readonly AssistantMessageEvent[]): AssistantMessage {
	const content: AssistantMessage["content"] = [];
	for (const event of seen) {
		if (event.type === "text_start") content[event.contentIndex] = { type: "text", text: "" };
		else if (event.type === "thinking_start") content[event.contentIndex] = { type: "thinking", thinking: "" };
		else if (event.type === "toolcall_start") {
			const call = partial.content[event.contentIndex];
			if (call?.type === "toolCall") content[event.contentIndex] = { type: "toolCall", id: call.id, name: call.name, arguments: {} };
		} else if (event.type === "text_delta" || event.type === "thinking_delta") {
			const block = content[event.contentIndex];
			if (block?.type === "text") block.text += event.delta;
			else if (block?.type === "thinking") block.thinking += event.delta;
		} else if (event.type === "toolcall_end") content[event.contentIndex] = structuredClone(event.toolCall);
	}
	return { ...structuredClone({ ...partial, content: [] }), content: content.filter((block) => block !== undefined) };
}

async function breakStream(out: AssistantMessageEventStream, fault: Fault, sofar: AssistantMessage, seen: readonly AssistantMessageEvent[], signal: AbortSignal | undefined): Promise<void> {
	const fail = (reason: "error" | "aborted", message: string) => {
		sofar.stopReason = reason;
		sofar.errorMessage = message;
		out.push({ type: "error", reason, error: sofar });
	};
	switch (fault.kind) {
		case "stall":
			// Nothing more until the agent gives up on the stream (its idle timeout aborts it too).
			if (!signal) return new Promise<never>(() => undefined);
			if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
			return fail("aborted", "Request was aborted");
		case "reset":
		case "error":
			return fail("error", fault.message ?? DEFAULT_MESSAGES[fault.kind]);
		case "overflow":
			sofar.content = [];
			return fail("error", fault.message ?? DEFAULT_MESSAGES.overflow);
		case "output-limit": {
			const open = openBlock(seen);
			if (open?.type === "toolCall") sofar.content.splice(open.index);
			else if (open?.type === "text") {
				const block = sofar.content[open.index];
				out.push({ type: "text_end", contentIndex: open.index, content: block?.type === "text" ? block.text : "", partial: sofar });
			} else if (open?.type === "thinking") {
				const block = sofar.content[open.index];
				out.push({ type: "thinking_end", contentIndex: open.index, content: block?.type === "thinking" ? block.thinking : "", partial: sofar });
			}
			sofar.stopReason = "length";
			out.push({ type: "done", reason: "length", message: sofar });
			return;
		}
	}
}
