/**
 * The Anthropic provider: a stream function over the official SDK's streaming Messages API.
 *
 * It follows pi-ai's contract for `streamSimple`: it returns at once, never throws, and
 * encodes every failure (HTTP errors, a broken or truncated stream, an abort) as a final
 * `error` event whose message keeps whatever content and usage had arrived.
 */
import { streamContextProblem, streamOptionsProblem } from "./stream-option-check.js";
import type { MessageCreateParamsStreaming } from "@anthropic-ai/sdk/resources/messages";
import { type StopReason, usageCount } from "../types/content.js";
import { createAssistantMessage } from "./assistant-message.js";
import { endOnThrow } from "./unexpected-throw.js";
import type { AssistantMessage } from "../types/messages.js";
import type { Context, Model, SimpleStreamOptions } from "../types/model.js";
import { createAnthropicClient } from "./anthropic-client.js";
import type { BodyMeter } from "./reply-size.js";
import { type AnthropicSdk, loadAnthropicSdk } from "./anthropic-sdk.js";
import {
	abortedMessage,
	describeAnthropicError,
	missingApiKeyMessage,
	notAnEventStreamMessage,
	refusalMessage,
	truncatedStreamMessage,
} from "./anthropic-errors.js";
import { type AnthropicStreamEvent, checkStreamEvent, type TypedRecord } from "./anthropic-events.js";
import { nonEmptyText } from "../util/json-values.js";
import { buildAnthropicRequest, interleavedThinkingBeta } from "./anthropic-request.js";
import { AssistantMessageEventStream } from "./event-stream.js";
import { calculateCost } from "./models.js";
import { StreamingArguments } from "./partial-json.js";
import { watchForStall } from "../util/stall-watch.js";
import { environmentVariable } from "../util/host.js";
import { failedStop } from "../util/stop-reason.js";

/** Where a provider content block lives in the partial message, plus tool-call scratch. */
interface OpenBlock {
	contentIndex: number;
	kind: "text" | "thinking" | "toolCall";
	/** The tool call's arguments so far. */
	arguments?: StreamingArguments;
}

interface StopOutcome {
	stopReason: StopReason;
	errorMessage?: string | undefined;
}

function mapStopReason(reason: string): StopOutcome {
	switch (reason) {
		case "end_turn":
		case "stop_sequence":
		case "pause_turn":
			return { stopReason: "stop" };
		case "max_tokens":
		case "model_context_window_exceeded":
			return { stopReason: "length" };
		case "tool_use":
			return { stopReason: "toolUse" };
		case "refusal":
			return { stopReason: "error", errorMessage: refusalMessage() };
		default:
			return { stopReason: "error", errorMessage: `Unhandled stop reason: ${reason}` };
	}
}

/** Text the server sent, or undefined for anything else (a broken proxy's null or number). */
function textOrUndefined(value: unknown): string | undefined {
	return typeof value === "string" ? value : undefined;
}

/**
 * The message of a reply whose `tool_use` block came without a name.
 *
 * @example
 * namelessToolCallMessage(1, "toolu_01"); // "The model sent a tool call without a name (tool_use block 1, id toolu_01); the call was not run"
 */
export function namelessToolCallMessage(blockIndex: number, id: unknown): string {
	const idText = nonEmptyText(id);
	return `The model sent a tool call without a name (tool_use block ${blockIndex}${idText ? `, id ${idText}` : ""}); the call was not run`;
}

/** An id for a tool call the server sent without one, in the API's form. */
function newToolUseId(): string {
	const random = globalThis.crypto?.randomUUID?.().replace(/-/g, "") ?? Math.random().toString(36).slice(2);
	return `toolu_${random.slice(0, 24)}`;
}

/**
 * Applies Messages API stream events to the live partial message and emits the matching
 * {@link AssistantMessageEvent}s.
 */
class AnthropicStreamReader {
	private readonly openBlocks = new Map<number, OpenBlock>();
	private stopErrorMessage: string | undefined;
	/** Set once `message_stop` arrived: anything else means the stream was cut short. */
	completed = false;

	constructor(
		private readonly output: AssistantMessage,
		private readonly model: Model,
		private readonly stream: AssistantMessageEventStream,
	) {}

	get errorMessage(): string | undefined {
		return this.stopErrorMessage;
	}

	handle(event: AnthropicStreamEvent): void {
		switch (event.type) {
			case "message_start": {
				const { message } = event;
				// Kept only as text: the id and model are shown and logged, and a number or object there is a broken server's.
				const id = nonEmptyText(message["id"]);
				if (id) this.output.responseId = id;
				const responseModel = nonEmptyText(message["model"]);
				if (responseModel && responseModel !== this.model.id) this.output.responseModel = responseModel;
				this.updateUsage(message["usage"]);
				break;
			}
			case "content_block_start":
				this.startBlock(event.index, event.content_block);
				break;
			case "content_block_delta":
				this.applyDelta(event.index, event.delta);
				break;
			case "content_block_stop":
				this.stopBlock(event.index, false);
				break;
			case "message_delta": {
				if (event.stopReason) {
					const outcome = mapStopReason(event.stopReason);
					this.output.stopReason = outcome.stopReason;
					this.stopErrorMessage = outcome.errorMessage;
				}
				this.updateUsage(event.usage);
				break;
			}
			case "message_stop":
				// A block a server never stopped ends with the message: a tool call keeps the arguments
				// its whole text says, not the streaming preview, which lags a long one.
				for (const index of [...this.openBlocks.keys()]) this.stopBlock(index, true);
				this.completed = true;
				break;
		}
	}

	private updateUsage(value: unknown): void {
		// A proxy or compatible server may leave usage out or send counts the API never would.
		if (value === null || typeof value !== "object") return;
		const usage = value as Readonly<Record<string, unknown>>;
		// message_delta repeats cumulative counts; a null means "unchanged", not zero.
		const target = this.output.usage;
		target.input = usageCount(usage["input_tokens"], target.input);
		target.output = usageCount(usage["output_tokens"], target.output);
		target.cacheRead = usageCount(usage["cache_read_input_tokens"], target.cacheRead);
		target.cacheWrite = usageCount(usage["cache_creation_input_tokens"], target.cacheWrite);
		target.totalTokens = target.input + target.output + target.cacheRead + target.cacheWrite;
		calculateCost(this.model, target);
	}

	private startBlock(index: number, block: TypedRecord): void {
		const content = this.output.content;
		const contentIndex = content.length;
		const partial = this.output;
		switch (block.type) {
			case "text":
				content.push({ type: "text", text: "" });
				this.openBlocks.set(index, { contentIndex, kind: "text" });
				this.stream.push({ type: "text_start", contentIndex, partial });
				this.appendText(contentIndex, nonEmptyText(block["text"]));
				break;
			case "thinking":
				// A signature that is not text would be sent back as it is, and the API would refuse the request.
				content.push({ type: "thinking", thinking: "", thinkingSignature: textOrUndefined(block["signature"]) ?? "" });
				this.openBlocks.set(index, { contentIndex, kind: "thinking" });
				this.stream.push({ type: "thinking_start", contentIndex, partial });
				this.appendThinking(contentIndex, nonEmptyText(block["thinking"]));
				break;
			case "redacted_thinking":
				// The opaque payload travels in thinkingSignature so it can be sent back unchanged.
				// Without its data (a broken server's) it is left out of later requests.
				content.push({ type: "thinking", thinking: "[Reasoning redacted]", thinkingSignature: textOrUndefined(block["data"]) ?? "", redacted: true });
				this.openBlocks.set(index, { contentIndex, kind: "thinking" });
				this.stream.push({ type: "thinking_start", contentIndex, partial });
				break;
			case "tool_use": {
				// A call without a name cannot run, and sent back with name "" it makes the API refuse
				// every later request of the session: the reply ends here, before the call is in it.
				const name = nonEmptyText(block["name"]);
				if (name === undefined) throw new Error(namelessToolCallMessage(index, block["id"]));
				// A broken proxy may leave out the id: an id that is not text made every later request
				// of the session fail while it was being built.
				content.push({ type: "toolCall", id: nonEmptyText(block["id"]) ?? newToolUseId(), name, arguments: {} });
				this.openBlocks.set(index, { contentIndex, kind: "toolCall", arguments: new StreamingArguments() });
				this.stream.push({ type: "toolcall_start", contentIndex, partial });
				break;
			}
			default:
				// Server-side tool blocks (web search and the like) are not part of this protocol.
				break;
		}
	}

	private applyDelta(index: number, delta: TypedRecord): void {
		const block = this.openBlocks.get(index);
		if (!block) return;
		switch (delta.type) {
			case "text_delta":
				this.appendText(block.contentIndex, delta["text"]);
				break;
			case "thinking_delta":
				this.appendThinking(block.contentIndex, delta["thinking"]);
				break;
			case "signature_delta": {
				// A missing signature would be appended as "undefined", and the API would refuse the block when sent back.
				const signature = textOrUndefined(delta["signature"]);
				const part = this.output.content[block.contentIndex];
				if (part?.type === "thinking" && signature !== undefined) part.thinkingSignature = (part.thinkingSignature ?? "") + signature;
				break;
			}
			case "input_json_delta": {
				const fragment = textOrUndefined(delta["partial_json"]);
				const part = this.output.content[block.contentIndex];
				if (part?.type !== "toolCall" || !block.arguments || fragment === undefined) break;
				part.arguments = block.arguments.append(fragment);
				this.stream.push({
					type: "toolcall_delta",
					contentIndex: block.contentIndex,
					delta: fragment,
					partial: this.output,
				});
				break;
			}
			default:
				break;
		}
	}

	private appendText(contentIndex: number, text: unknown): void {
		const part = this.output.content[contentIndex];
		// A delta without text (null from a broken proxy) would be appended as "null".
		if (part?.type !== "text" || typeof text !== "string") return;
		part.text += text;
		this.stream.push({ type: "text_delta", contentIndex, delta: text, partial: this.output });
	}

	private appendThinking(contentIndex: number, text: unknown): void {
		const part = this.output.content[contentIndex];
		if (part?.type !== "thinking" || typeof text !== "string") return;
		part.thinking += text;
		this.stream.push({ type: "thinking_delta", contentIndex, delta: text, partial: this.output });
	}

	/** Ends a block: at its `content_block_stop`, or with the message (`messageEnd`) for one a server never stopped. */
	private stopBlock(index: number, messageEnd: boolean): void {
		const block = this.openBlocks.get(index);
		if (!block) return;
		this.openBlocks.delete(index);
		const { contentIndex } = block;
		const part = this.output.content[contentIndex];
		const partial = this.output;
		if (part?.type === "text") {
			this.stream.push({ type: "text_end", contentIndex, content: part.text, partial });
		} else if (part?.type === "thinking") {
			this.stream.push({ type: "thinking_end", contentIndex, content: part.thinking, partial });
		} else if (part?.type === "toolCall") {
			const reading = block.arguments?.finalReading() ?? { arguments: {}, complete: true };
			part.arguments = reading.arguments;
			if (!reading.complete) {
				// Maybe cut off by the output limit (the API stops the block before it says
				// "max_tokens"), or a call without arguments, which streams none: the call's end
				// waits for the message's. Cut off, it never ends, and the loop answers it with the
				// output-limit error instead of running it with what was cut (or with nothing).
				if (!messageEnd) this.openBlocks.set(index, block);
				if (!messageEnd || this.output.stopReason === "length") return;
			}
			this.stream.push({ type: "toolcall_end", contentIndex, toolCall: part, partial });
		}
	}
}

function headersToRecord(headers: Headers): Record<string, string> {
	const record: Record<string, string> = {};
	headers.forEach((value, key) => {
		record[key] = value;
	});
	return record;
}

async function runAnthropicCall(
	model: Model,
	context: Context,
	options: SimpleStreamOptions,
	stream: AssistantMessageEventStream,
): Promise<void> {
	const output = createAssistantMessage(model);
	const signal = options.signal;
	// The request's own signal: the caller's abort, or a stream that went silent (timeoutMs).
	const request = new AbortController();
	const onAbort = () => request.abort(signal?.reason);
	if (signal?.aborted) onAbort();
	else signal?.addEventListener("abort", onAbort, { once: true });
	let stalled = false;
	// Watched from the response's headers on: until then the SDK's own timeout (the same
	// timeoutMs) bounds each attempt, and its retries and their waits (a 429's retry-after) are not silence.
	let stall: ReturnType<typeof watchForStall> | undefined;
	let received = 0;
	let lastEvent = "none";
	// The body's bytes, and how many had come by the last event: more since then were pings
	// (the SDK drops them) or an event that never completed, not silence. Its start says what
	// a body that held no event was.
	const meter: BodyMeter = { bytes: 0, start: "" };
	let bytesAtLastEvent = 0;
	const stalledText = () => stalledMessage(options.timeoutMs ?? 0, received, meter.bytes > bytesAtLastEvent);
	let sdk: AnthropicSdk | undefined;
	try {
		const optionProblem = streamContextProblem(context) ?? streamOptionsProblem(options, "options");
		if (optionProblem) throw new TypeError(optionProblem);
		const apiKey = options.apiKey ?? environmentVariable("ANTHROPIC_API_KEY");
		if (!apiKey) throw new Error(missingApiKeyMessage("anthropic"));
		sdk = await loadAnthropicSdk();
		const client = createAnthropicClient(sdk, model, apiKey, options, meter);

		let body = buildAnthropicRequest(model, context, options);
		const replacement = await options.onPayload?.(body, model);
		if (replacement !== undefined) body = { ...(replacement as MessageCreateParamsStreaming), stream: true };

		const headers = body.thinking?.type === "enabled" ? { "anthropic-beta": interleavedThinkingBeta } : undefined;
		const { data: events, response } = await client.messages.create(body, { signal: request.signal, ...(headers ? { headers } : {}) }).withResponse();
		stall = watchForStall(options.timeoutMs ?? 0, () => {
			stalled = true;
			request.abort(new Error("stream stalled"));
		});
		await options.onResponse?.({ status: response.status, headers: headersToRecord(response.headers) }, model);
		stream.push({ type: "start", partial: output });
		const notAStream = await nonStreamAnswerMessage(response, model.baseUrl);
		if (notAStream) throw new Error(notAStream);

		const reader = new AnthropicStreamReader(output, model, stream);
		try {
			for await (const raw of events) {
				stall.touch();
				bytesAtLastEvent = meter.bytes;
				received++;
				// The SDK types its events, but they are the server's JSON as it came.
				const event = checkStreamEvent(raw as unknown, received, lastEvent);
				lastEvent = raw.type;
				if (event === undefined) continue;
				reader.handle(event);
				if (reader.completed) break;
			}
		} catch (error) {
			// The SDK parses each event's JSON itself; its SyntaxError says nothing of where it came from.
			if (error instanceof SyntaxError) {
				throw new Error(`Malformed event in Anthropic's stream (event ${received + 1}, after ${lastEvent}): not valid JSON (${error.message})`);
			}
			throw error;
		}
		if (stalled) throw new Error(stalledText());
		// The SDK ends iteration quietly when the request is aborted, so check before trusting the end.
		if (signal?.aborted) throw new Error(abortedMessage);
		if (!reader.completed) {
			// Not one event, and no sign of one: what came was something else under the event-stream type (or none).
			if (received === 0 && !looksLikeEventStream(meter.start ?? "")) {
				throw new Error(notAnEventStreamMessage(model.baseUrl, response.status, response.headers.get("content-type") ?? "", meter.start));
			}
			throw new Error(truncatedStreamMessage);
		}
		if (failedStop(output.stopReason)) {
			output.errorMessage = reader.errorMessage ?? "The model stopped with an error";
			stream.push({ type: "error", reason: output.stopReason, error: output });
			return;
		}
		stream.push({ type: "done", reason: output.stopReason, message: output });
	} catch (error) {
		const aborted = signal?.aborted === true;
		output.stopReason = aborted ? "aborted" : "error";
		output.errorMessage = aborted ? abortedMessage : stalled ? stalledText() : describeAnthropicError(error, sdk);
		stream.push({ type: "error", reason: output.stopReason, error: output });
	} finally {
		stall?.stop();
		signal?.removeEventListener("abort", onAbort);
	}
}

/**
 * The error message for a successful answer that is plainly not an event stream (no body, a web
 * page, a JSON body), read whole; undefined for one to read as events. The SDK would find no
 * event in it and end with "stream ended before message_stop", or, without a body, its own
 * "Attempted to iterate over a response with no body".
 */
async function nonStreamAnswerMessage(response: Response, baseUrl: string): Promise<string | undefined> {
	const contentType = response.headers.get("content-type") ?? "";
	if (response.body === null) return notAnEventStreamMessage(baseUrl, response.status, contentType, undefined);
	if (!/html|json/i.test(contentType)) return undefined;
	return notAnEventStreamMessage(baseUrl, response.status, contentType, await response.text());
}

/** True for text with an SSE field or comment line: a stream's start, even if it held no event the SDK passes on (pings). */
function looksLikeEventStream(text: string): boolean {
	return /^(?:event|data|id|retry)?:/m.test(text);
}

function stalledMessage(timeoutMs: number, received: number, keptAlive: boolean): string {
	const where = received === 0 ? "before the first event" : `after event ${received}`;
	// A server that sends only pings is not silent: saying "nothing arrived" sends people looking at the network.
	const what = keptAlive
		? `the server kept the connection alive (pings or an unfinished event) but sent no event with content for ${timeoutMs} ms ${where}`
		: `nothing arrived for ${timeoutMs} ms ${where}`;
	return `Anthropic's stream stalled: ${what} (timeoutMs); the request was cancelled`;
}

/**
 * Streams one Claude reply. Same signature and contract as pi-ai's `streamSimple` for
 * Anthropic models, so it plugs into an `Agent` as its `streamFn`.
 *
 * Never throws: HTTP errors (400 "prompt is too long", 401, 429 after retries, 529 …), a
 * mid-stream `error` event, a stream that ends early and an abort all end the stream with an
 * `error` event carrying a readable `errorMessage` and whatever content had arrived.
 *
 * @example
 * import { Agent, getModel, streamAnthropic } from "agentchart";
 *
 * const agent = new Agent({
 *   initialState: { model: getModel("anthropic", "claude-haiku-4-5"), systemPrompt: "Be brief.", tools: [] },
 *   streamFn: streamAnthropic,
 * });
 * await agent.prompt("Hello!");
 *
 * // Or on its own:
 * const stream = streamAnthropic(model, { messages: [{ role: "user", content: "Hi", timestamp: Date.now() }] }, { reasoning: "low" });
 * for await (const event of stream) if (event.type === "text_delta") process.stdout.write(event.delta);
 */
export function streamAnthropic(
	model: Model,
	context: Context,
	options: SimpleStreamOptions = {},
): AssistantMessageEventStream {
	const stream = new AssistantMessageEventStream();
	endOnThrow(runAnthropicCall(model, context, options, stream), stream, model, "streamAnthropic");
	return stream;
}
