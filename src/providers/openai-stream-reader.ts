/**
 * Applies Chat Completions chunks to the live partial message and emits the matching
 * {@link AssistantMessageEvent}s, in pi-ai's order for this API: one text block and one
 * thinking block per reply (later deltas extend them), one block per tool call, and every
 * block's `*_end` event once the stream is complete, in content order, before `done`.
 *
 * Chunks are untrusted JSON from servers that follow the format loosely, so every field is
 * checked before use, and the known tool-call quirks are absorbed here: calls without
 * `index` (matched by id, or continuing the latest call), several calls sharing index 0
 * (a new id starts a new call), missing or repeated ids (made unique, so results pair up),
 * names repeated in every chunk, and arguments sent as an object instead of JSON text.
 */
import { type StopReason, usageCount } from "../types/content.js";
import type { AssistantMessage } from "../types/messages.js";
import type { Model } from "../types/model.js";
import type { AssistantMessageEventStream } from "./event-stream.js";
import { calculateCost } from "./models.js";
import type { ResolvedOpenAICompat } from "./openai-compat.js";
import { OpenAIStreamError } from "./openai-errors.js";
import { ArgumentsTooDeepError, StreamingArguments } from "./partial-json.js";
import { asRecord, nonEmptyText } from "../util/json-values.js";

type Json = Record<string, unknown>;

/** Content is a string, or (Mistral and a few others) an array of typed parts. */
function textOf(content: unknown): string | undefined {
	if (!Array.isArray(content)) return nonEmptyText(content);
	const text = content
		.map((part) => asRecord(part))
		.map((part) => (part?.["type"] === "text" && typeof part["text"] === "string" ? part["text"] : ""))
		.join("");
	return text !== "" ? text : undefined;
}

/**
 * Arguments a server sent as an object, as JSON text. Nested a few thousand levels deep they
 * overflow JSON.stringify's stack: that reads as what it is, not "Maximum call stack size exceeded".
 */
function argumentsText(args: unknown): string {
	try {
		return JSON.stringify(args);
	} catch (error) {
		if (error instanceof RangeError) throw new ArgumentsTooDeepError();
		throw error;
	}
}

/** A tool call being streamed: where it lives in the message, and its arguments so far. */
interface ToolCallState {
	contentIndex: number;
	arguments: StreamingArguments;
	/** The id the server used, for matching later deltas (the message may hold a uniquified one). */
	serverId?: string;
}

/** How the reply ended, mapped from `finish_reason`. */
export interface OpenAIStopOutcome {
	stopReason: StopReason;
	errorMessage?: string;
}

/**
 * Maps a `finish_reason` to a stop reason. Servers that answer with tool calls but report
 * `stop` (Ollama did) get `toolUse`, so callers can trust the stop reason.
 *
 * @example
 * mapFinishReason("length", false); // { stopReason: "length" }
 * mapFinishReason("stop", true); // { stopReason: "toolUse" }
 */
export function mapFinishReason(reason: string | undefined, hasToolCalls: boolean): OpenAIStopOutcome {
	switch (reason) {
		case undefined:
		case "stop":
		case "end":
		case "eos":
		case "eos_token":
		case "stop_sequence":
			return { stopReason: hasToolCalls ? "toolUse" : "stop" };
		case "length":
		case "max_tokens":
			return { stopReason: "length" };
		case "tool_calls":
		case "function_call":
		case "tool_use":
			return { stopReason: "toolUse" };
		case "content_filter":
			return { stopReason: "error", errorMessage: 'The provider\'s content filter stopped the reply (finish_reason "content_filter")' };
		default:
			return { stopReason: "error", errorMessage: `The provider ended the reply with finish_reason "${reason}"` };
	}
}

/**
 * The message of a reply with a tool call whose name never came.
 *
 * @example
 * namelessToolCallMessage("call_1"); // "The model sent a tool call without a name (call call_1); the call was not run"
 */
export function namelessToolCallMessage(id: string): string {
	return `The model sent a tool call without a name (call ${id}); the call was not run`;
}

function newToolCallId(): string {
	const random = globalThis.crypto?.randomUUID?.().replace(/-/g, "") ?? Math.random().toString(36).slice(2);
	return `call_${random.slice(0, 24)}`;
}

/**
 * Reads the chunks of one reply into `output`, pushing events to `stream`.
 *
 * @example
 * const reader = new OpenAIChunkReader(output, model, resolveOpenAICompat(model), stream);
 * for (const chunk of chunks) reader.handle(chunk);
 * const { stopReason } = reader.finish(chunks.length); // pushes every *_end event
 */
export class OpenAIChunkReader {
	private textIndex: number | undefined;
	private thinkingIndex: number | undefined;
	private readonly toolCalls: ToolCallState[] = [];
	private readonly toolCallsByIndex = new Map<number, ToolCallState>();
	private readonly toolCallsById = new Map<string, ToolCallState>();
	private finishReason: string | undefined;
	/** Set when `[DONE]` arrived. */
	sawDone = false;

	constructor(
		private readonly output: AssistantMessage,
		private readonly model: Model,
		private readonly compat: ResolvedOpenAICompat,
		private readonly stream: AssistantMessageEventStream,
	) {}

	/** True once the server said how the reply ended. */
	get finished(): boolean {
		return this.finishReason !== undefined || this.sawDone;
	}

	handle(chunk: Json): void {
		const output = this.output;
		const id = nonEmptyText(chunk["id"]);
		if (id && !output.responseId) output.responseId = id;
		const responseModel = nonEmptyText(chunk["model"]);
		if (responseModel && responseModel !== this.model.id && !output.responseModel) output.responseModel = responseModel;

		const choices = Array.isArray(chunk["choices"]) ? (chunk["choices"] as unknown[]).map(asRecord) : [];
		const choice = choices.find((c) => c?.["index"] === 0) ?? choices[0];
		// Some servers (Moonshot) put usage on the choice instead of the chunk.
		const usage = asRecord(chunk["usage"]) ?? asRecord(choice?.["usage"]);
		if (usage) this.updateUsage(usage);
		if (!choice) return;

		const finishReason = nonEmptyText(choice["finish_reason"]);
		if (finishReason) this.finishReason = finishReason;
		const delta = asRecord(choice["delta"]);
		if (!delta) return;

		const reasoning = this.reasoningOf(delta);
		if (reasoning) this.appendThinking(reasoning.text, reasoning.field);
		const content = textOf(delta["content"]);
		if (content) this.appendText(content);
		// OpenAI streams a refusal instead of content; it is the model's answer, so it is shown as text.
		const refusal = nonEmptyText(delta["refusal"]);
		if (refusal) this.appendText(refusal);
		if (Array.isArray(delta["tool_calls"])) {
			for (const toolCall of delta["tool_calls"] as unknown[]) {
				const record = asRecord(toolCall);
				if (record) this.applyToolCallDelta(record);
			}
		}
		if (Array.isArray(delta["reasoning_details"])) this.attachReasoningDetails(delta["reasoning_details"] as unknown[]);
	}

	/**
	 * Ends every open block (in content order) and returns how the reply ended. Throws when
	 * the stream stopped before the server said it was complete, or a tool call has no name.
	 */
	finish(lastEvent: number): OpenAIStopOutcome {
		if (!this.finished) {
			throw new OpenAIStreamError(
				`The provider's stream ended before the reply was complete (no finish_reason and no [DONE] after event ${lastEvent})`,
			);
		}
		// A call without a name cannot run, and sent back with name "" it makes the API refuse every
		// later request of the session. The name may come in any delta, so this is known only now,
		// before any call's end is announced (a streaming tool would start at its end).
		const nameless = this.output.content.find((part) => part.type === "toolCall" && part.name === "");
		if (nameless?.type === "toolCall") throw new OpenAIStreamError(namelessToolCallMessage(nameless.id));
		const partial = this.output;
		const outcome = mapFinishReason(this.finishReason, this.toolCalls.length > 0);
		partial.content.forEach((part, contentIndex) => {
			if (part.type === "text") this.stream.push({ type: "text_end", contentIndex, content: part.text, partial });
			else if (part.type === "thinking") this.stream.push({ type: "thinking_end", contentIndex, content: part.thinking, partial });
			else {
				const state = this.toolCalls.find((call) => call.contentIndex === contentIndex);
				const reading = state?.arguments.finalReading();
				if (reading) part.arguments = reading.arguments;
				// A call whose arguments the output limit cut off never ends: the loop answers it
				// with the output-limit error instead of running it with what was cut.
				if (reading?.complete === false && outcome.stopReason === "length") return;
				this.stream.push({ type: "toolcall_end", contentIndex, toolCall: part, partial });
			}
		});
		return outcome;
	}

	private reasoningOf(delta: Json): { field: string; text: string } | undefined {
		// Only the first non-empty field counts: some servers send the same text in two of them.
		for (const field of this.compat.reasoningFields) {
			const text = nonEmptyText(delta[field]);
			if (text) return { field, text };
		}
		return undefined;
	}

	private updateUsage(raw: Json): void {
		const details = asRecord(raw["prompt_tokens_details"]);
		const prompt = usageCount(raw["prompt_tokens"]);
		// DeepSeek reports cache hits as prompt_cache_hit_tokens.
		const cached = usageCount(details?.["cached_tokens"] ?? raw["prompt_cache_hit_tokens"]);
		const cacheWrite = usageCount(details?.["cache_write_tokens"]);
		// OpenRouter counts this request's cache writes among cached_tokens; a read is what an earlier request wrote.
		const cacheRead = cacheWrite > 0 ? Math.max(0, cached - cacheWrite) : cached;
		const usage = this.output.usage;
		usage.input = Math.max(0, prompt - cacheRead - cacheWrite);
		usage.output = usageCount(raw["completion_tokens"]);
		usage.cacheRead = cacheRead;
		usage.cacheWrite = cacheWrite;
		usage.totalTokens = usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
		calculateCost(this.model, usage);
	}

	private appendText(text: string): void {
		const content = this.output.content;
		if (this.textIndex === undefined) {
			this.textIndex = content.length;
			content.push({ type: "text", text: "" });
			this.stream.push({ type: "text_start", contentIndex: this.textIndex, partial: this.output });
		}
		const part = content[this.textIndex];
		if (part?.type !== "text") return;
		part.text += text;
		this.stream.push({ type: "text_delta", contentIndex: this.textIndex, delta: text, partial: this.output });
	}

	private appendThinking(text: string, field: string): void {
		const content = this.output.content;
		if (this.thinkingIndex === undefined) {
			this.thinkingIndex = content.length;
			// The field name is the signature: the reasoning is sent back in the same field.
			content.push({ type: "thinking", thinking: "", thinkingSignature: field });
			this.stream.push({ type: "thinking_start", contentIndex: this.thinkingIndex, partial: this.output });
		}
		const part = content[this.thinkingIndex];
		if (part?.type !== "thinking") return;
		part.thinking += text;
		this.stream.push({ type: "thinking_delta", contentIndex: this.thinkingIndex, delta: text, partial: this.output });
	}

	private findToolCall(streamIndex: number | undefined, id: string | undefined): ToolCallState | undefined {
		if (streamIndex !== undefined) {
			const known = this.toolCallsByIndex.get(streamIndex);
			// A different id at a known index is a new call: some servers give every call index 0.
			if (known && (!id || !known.serverId || id === known.serverId)) return known;
			return undefined;
		}
		if (id) return this.toolCallsById.get(id);
		// Neither index nor id: the continuation of the call being streamed.
		return this.toolCalls.at(-1);
	}

	private startToolCall(streamIndex: number | undefined, id: string | undefined, name: string | undefined): ToolCallState {
		const content = this.output.content;
		const contentIndex = content.length;
		let messageId = id ?? newToolCallId();
		// Results are paired with calls by id, so two calls must never share one.
		if (content.some((part) => part.type === "toolCall" && part.id === messageId)) messageId = `${messageId}_${contentIndex}`;
		content.push({ type: "toolCall", id: messageId, name: name ?? "", arguments: {} });
		const state: ToolCallState = { contentIndex, arguments: new StreamingArguments(), ...(id ? { serverId: id } : {}) };
		this.toolCalls.push(state);
		if (streamIndex !== undefined) this.toolCallsByIndex.set(streamIndex, state);
		if (id) this.toolCallsById.set(id, state);
		this.stream.push({ type: "toolcall_start", contentIndex, partial: this.output });
		return state;
	}

	private applyToolCallDelta(delta: Json): void {
		const streamIndex = typeof delta["index"] === "number" ? delta["index"] : undefined;
		const id = nonEmptyText(delta["id"]);
		const fn = asRecord(delta["function"]);
		const name = nonEmptyText(fn?.["name"]);
		const state = this.findToolCall(streamIndex, id) ?? this.startToolCall(streamIndex, id, name);
		const part = this.output.content[state.contentIndex];
		if (part?.type !== "toolCall") return;
		if (!part.name && name) part.name = name;
		if (id && !state.serverId) {
			state.serverId = id;
			this.toolCallsById.set(id, state);
		}

		const args = fn?.["arguments"];
		let fragment = "";
		if (typeof args === "string") {
			fragment = args;
			part.arguments = state.arguments.append(args);
		} else if (asRecord(args)) {
			// Some servers send the arguments as an object, complete, instead of JSON text.
			fragment = argumentsText(args);
			part.arguments = state.arguments.replace(fragment);
		}
		this.stream.push({ type: "toolcall_delta", contentIndex: state.contentIndex, delta: fragment, partial: this.output });
	}

	/** OpenRouter's encrypted reasoning for a tool call must be sent back with it (Gemini through OpenRouter). */
	private attachReasoningDetails(details: unknown[]): void {
		for (const raw of details) {
			const detail = asRecord(raw);
			const id = nonEmptyText(detail?.["id"]);
			if (!detail || detail["type"] !== "reasoning.encrypted" || !id || !nonEmptyText(detail["data"])) continue;
			const state = this.toolCallsById.get(id);
			const part = state ? this.output.content[state.contentIndex] : undefined;
			if (part?.type === "toolCall") part.thoughtSignature = JSON.stringify(detail);
		}
	}
}
