import type { StopReason, TextContent, ThinkingContent, ToolCall, Usage } from "../types/content.js";
import { emptyUsage } from "../types/content.js";
import { createAssistantMessage } from "./assistant-message.js";
import { sleepUnlessAborted } from "../util/sleep.js";
import type { AssistantMessage } from "../types/messages.js";
import type { Context, Model, SimpleStreamOptions } from "../types/model.js";
import type { StreamFn } from "../types/stream.js";
import { AssistantMessageEventStream } from "./event-stream.js";
import { failedStop } from "../util/stop-reason.js";
import { checkScriptEntries, checkScriptedOptions, checkScriptedReply } from "./scripted-checks.js";

/**
 * One content block of a scripted reply. Tool call ids are generated when omitted.
 *
 * @example
 * const blocks: ScriptedBlock[] = [{ type: "thinking", thinking: "The user wants the time." }, { type: "toolCall", name: "clock", arguments: {} }];
 * const scripted = createScriptedModel([{ content: blocks }, { content: "It is noon." }]);
 */
export type ScriptedBlock =
	| { type: "text"; text: string }
	| { type: "thinking"; thinking: string; signature?: string; redacted?: boolean }
	| { type: "toolCall"; name: string; arguments: Record<string, unknown>; id?: string };

/**
 * A reply the scripted model plays back.
 *
 * @example
 * const cutOff: ScriptedReply = { content: "The list goes on and", stopReason: "length", usage: { input: 900, output: 4096 } };
 * scripted.append(cutOff);
 */
export interface ScriptedReply {
	/** A string is one text block. */
	content: string | ScriptedBlock[];
	/** Defaults to "toolUse" when the reply has tool calls, otherwise "stop". */
	stopReason?: StopReason | undefined;
	/** For stopReason "error"/"aborted". */
	errorMessage?: string | undefined;
	/** Usage to report; defaults to a chars/4 estimate. */
	usage?: Partial<Omit<Usage, "cost">> | undefined;
	/** Overrides the model-wide delay between deltas, in milliseconds. */
	delayMs?: number | undefined;
	/** Overrides the model-wide delta size, in characters. */
	chunkSize?: number | undefined;
}

/**
 * Computes a reply from what the model was sent (the reply factory form).
 *
 * @example
 * const echo: ScriptedReplyFactory = (context, _options, callIndex) => ({ content: `Call ${callIndex}: I saw ${context.messages.length} messages.` });
 * const scripted = createScriptedModel([echo, echo]);
 */
export type ScriptedReplyFactory = (
	context: Context,
	options: SimpleStreamOptions | undefined,
	callIndex: number,
) => ScriptedReply | Promise<ScriptedReply>;

/**
 * Options of {@link createScriptedModel}.
 *
 * @example
 * const options: ScriptedModelOptions = { chunkSize: 4, delayMs: 5, whenExhausted: { content: "(no more replies)" } };
 * const scripted = createScriptedModel([{ content: "Hello there" }], options);
 */
export interface ScriptedModelOptions {
	/** Characters per delta (default 4). */
	chunkSize?: number | undefined;
	/** Delay between deltas in milliseconds (default 0: deltas are paced by microtasks). */
	delayMs?: number | undefined;
	/** Delay before the first event, in milliseconds (default 0). */
	firstEventDelayMs?: number | undefined;
	/** Model fields to override. */
	model?: Partial<Model> | undefined;
	/** What to play when the script is exhausted (default: an error reply). */
	whenExhausted?: ScriptedReply | undefined;
}

/**
 * A scripted model: its stream function, its model and what it was called with.
 *
 * @example
 * const scripted: ScriptedModel = createScriptedModel([{ content: "Hello!" }]);
 * const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
 * await agent.prompt("Hi");
 * console.log(scripted.calls.length, scripted.pending); // 1 0
 */
export interface ScriptedModel {
	/** The stream function to give an Agent. */
	streamFn: StreamFn;
	/** A model description whose api is "scripted". */
	model: Model;
	/** The contexts of every call so far, in order. */
	calls: Context[];
	/** The options of every call so far. */
	callOptions: (SimpleStreamOptions | undefined)[];
	/** Appends more replies to the script. */
	append(...replies: (ScriptedReply | ScriptedReplyFactory)[]): void;
	/** Replies not yet played. */
	readonly pending: number;
}

const ABORTED_MESSAGE = "Request was aborted";

const SCRIPTED_MODEL: Readonly<Model> = {
	id: "scripted-1",
	name: "Scripted model",
	api: "scripted",
	provider: "scripted",
	baseUrl: "",
	reasoning: true,
	input: ["text", "image"],
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
	contextWindow: 128_000,
	maxTokens: 16_384,
};

/**
 * A deterministic stream function that plays back a script of replies, one per LLM call:
 * each block is streamed as start / deltas of `chunkSize` characters / end, then `done` (or
 * `error` for error and aborted replies). It honours the abort signal between deltas: the
 * aborted message keeps what had streamed, with stopReason "aborted".
 *
 * Used by tests, the demo and benchmarks; no network, no key.
 *
 * The script and options are checked when given (and by `append`): a reply it could not play as
 * written (`{ text: "hi" }`, a block of unknown type, an unknown stop reason, a negative delay)
 * throws a `TypeError` naming it (`replies[2].content[0].type`). A reply function's reply is
 * checked when it is called, and a wrong one is played as an error reply that says so.
 *
 * @example
 * const scripted = createScriptedModel([
 *   { content: [{ type: "toolCall", name: "clock", arguments: {} }] },
 *   (context) => ({ content: `I saw ${context.messages.length} messages.` }),
 * ], { chunkSize: 3, delayMs: 5 });
 * const agent = new Agent({ initialState: { model: scripted.model, tools: [clock] }, streamFn: scripted.streamFn });
 */
export function createScriptedModel(
	replies: (ScriptedReply | ScriptedReplyFactory)[],
	options: ScriptedModelOptions = {},
): ScriptedModel {
	if (!Array.isArray(replies)) throw new TypeError(`createScriptedModel: replies must be an array of replies and reply functions, got ${replies === null ? "null" : typeof replies}`);
	checkScriptEntries(replies, 0);
	checkScriptedOptions(options);
	const script = [...replies];
	let cursor = 0;
	let toolCallCounter = 0;
	const model: Model = { ...structuredClone(SCRIPTED_MODEL), ...options.model };
	const calls: Context[] = [];
	const callOptions: (SimpleStreamOptions | undefined)[] = [];

	const streamFn: StreamFn = (callModel, context, streamOptions) => {
		const callIndex = calls.length;
		calls.push(context);
		callOptions.push(streamOptions);
		const entry = script[cursor];
		cursor++;
		const stream = new AssistantMessageEventStream();
		const nextId = () => `call_${++toolCallCounter}`;
		void play(stream, callModel, entry, context, streamOptions, callIndex, options, nextId);
		return stream;
	};

	return {
		streamFn,
		model,
		calls,
		callOptions,
		append(...more) {
			checkScriptEntries(more, script.length);
			script.push(...more);
		},
		get pending() {
			return Math.max(0, script.length - cursor);
		},
	};
}

async function play(
	stream: AssistantMessageEventStream,
	model: Model,
	entry: ScriptedReply | ScriptedReplyFactory | undefined,
	context: Context,
	streamOptions: SimpleStreamOptions | undefined,
	callIndex: number,
	options: ScriptedModelOptions,
	nextId: () => string,
): Promise<void> {
	const signal = streamOptions?.signal;
	// Called with no model (a loop API caller's context without one), the reply still has a shape.
	const output = createAssistantMessage(typeof model === "object" && model !== null ? model : SCRIPTED_MODEL);
	const finishAborted = () => {
		output.stopReason = "aborted";
		output.errorMessage = ABORTED_MESSAGE;
		stream.push({ type: "error", reason: "aborted", error: output });
	};
	try {
		let reply: ScriptedReply;
		if (entry === undefined) {
			reply = options.whenExhausted ?? {
				content: [],
				stopReason: "error",
				errorMessage: `Scripted model has no reply for call ${callIndex + 1}`,
			};
		} else {
			reply = typeof entry === "function" ? await entry(context, streamOptions, callIndex) : entry;
			if (typeof entry === "function") checkScriptedReply(reply, `the reply returned for call ${callIndex + 1}`);
		}
		const delayMs = reply.delayMs ?? options.delayMs ?? 0;
		const chunkSize = reply.chunkSize ?? options.chunkSize ?? 4;
		if (options.firstEventDelayMs) await sleepUnlessAborted(options.firstEventDelayMs, signal);
		if (signal?.aborted) return finishAborted();
		stream.push({ type: "start", partial: output });

		const blocks: ScriptedBlock[] =
			typeof reply.content === "string" ? [{ type: "text", text: reply.content }] : reply.content;
		for (const block of blocks) {
			const contentIndex = output.content.length;
			if (block.type === "text") {
				const content: TextContent = { type: "text", text: "" };
				output.content.push(content);
				stream.push({ type: "text_start", contentIndex, partial: output });
				for (const delta of chunks(block.text, chunkSize)) {
					await sleepUnlessAborted(delayMs, signal);
					if (signal?.aborted) return finishAborted();
					content.text += delta;
					stream.push({ type: "text_delta", contentIndex, delta, partial: output });
				}
				stream.push({ type: "text_end", contentIndex, content: content.text, partial: output });
			} else if (block.type === "thinking") {
				const content: ThinkingContent = { type: "thinking", thinking: "" };
				if (block.redacted) content.redacted = true;
				output.content.push(content);
				stream.push({ type: "thinking_start", contentIndex, partial: output });
				for (const delta of chunks(block.thinking, chunkSize)) {
					await sleepUnlessAborted(delayMs, signal);
					if (signal?.aborted) return finishAborted();
					content.thinking += delta;
					stream.push({ type: "thinking_delta", contentIndex, delta, partial: output });
				}
				if (block.signature !== undefined) content.thinkingSignature = block.signature;
				stream.push({ type: "thinking_end", contentIndex, content: content.thinking, partial: output });
			} else {
				const toolCall: ToolCall = { type: "toolCall", id: block.id ?? nextId(), name: block.name, arguments: {} };
				output.content.push(toolCall);
				stream.push({ type: "toolcall_start", contentIndex, partial: output });
				const json = JSON.stringify(block.arguments);
				for (const delta of chunks(json, chunkSize)) {
					await sleepUnlessAborted(delayMs, signal);
					if (signal?.aborted) return finishAborted();
					stream.push({ type: "toolcall_delta", contentIndex, delta, partial: output });
				}
				toolCall.arguments = structuredClone(block.arguments);
				stream.push({ type: "toolcall_end", contentIndex, toolCall, partial: output });
			}
		}
		await sleepUnlessAborted(delayMs, signal);
		if (signal?.aborted) return finishAborted();

		output.usage = estimateUsage(context, output, reply.usage);
		const hasToolCalls = output.content.some((block) => block.type === "toolCall");
		const stopReason = reply.stopReason ?? (hasToolCalls ? "toolUse" : "stop");
		output.stopReason = stopReason;
		if (failedStop(stopReason)) {
			output.errorMessage = reply.errorMessage ?? (stopReason === "aborted" ? ABORTED_MESSAGE : "Scripted error");
			stream.push({ type: "error", reason: stopReason, error: output });
		} else {
			stream.push({ type: "done", reason: stopReason, message: output });
		}
	} catch (error) {
		// A throwing reply factory is a test bug, but the stream contract still holds: encode it.
		output.stopReason = signal?.aborted ? "aborted" : "error";
		output.errorMessage = error instanceof Error ? error.message : String(error);
		stream.push({ type: "error", reason: output.stopReason, error: output });
	}
}

function* chunks(text: string, size: number): Generator<string> {
	for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

function estimateUsage(context: Context, output: AssistantMessage, given: ScriptedReply["usage"]): Usage {
	let inputChars = context.systemPrompt?.length ?? 0;
	// Only when it is to be estimated: a whole transcript as JSON at every call made each turn of a
	// long session cost its length (a benchmark of one measured this, not the agent).
	if (given?.input === undefined) for (const message of context.messages) inputChars += JSON.stringify(message.content).length;
	let outputChars = 0;
	for (const block of output.content) {
		outputChars += block.type === "text" ? block.text.length : block.type === "thinking" ? block.thinking.length : JSON.stringify(block.arguments).length;
	}
	const usage = emptyUsage();
	usage.input = given?.input ?? Math.ceil(inputChars / 4);
	usage.output = given?.output ?? Math.ceil(outputChars / 4);
	usage.cacheRead = given?.cacheRead ?? 0;
	usage.cacheWrite = given?.cacheWrite ?? 0;
	usage.totalTokens = given?.totalTokens ?? usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
	return usage;
}

/**
 * A text block for a scripted reply.
 *
 * @example
 * createScriptedModel([{ content: [text("Hello")] }]);
 */
export function text(value: string): ScriptedBlock {
	return { type: "text", text: value };
}

/**
 * A thinking block for a scripted reply.
 *
 * @example
 * createScriptedModel([{ content: [thinking("Let me see"), text("42")] }]);
 */
export function thinking(value: string, signature?: string): ScriptedBlock {
	return signature === undefined ? { type: "thinking", thinking: value } : { type: "thinking", thinking: value, signature };
}

/**
 * A tool call block for a scripted reply.
 *
 * @example
 * createScriptedModel([{ content: [toolCall("add", { a: 1, b: 2 }, "t1")] }]);
 */
export function toolCall(name: string, args: Record<string, unknown> = {}, id?: string): ScriptedBlock {
	return id === undefined ? { type: "toolCall", name, arguments: args } : { type: "toolCall", name, arguments: args, id };
}
