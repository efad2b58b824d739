/**
 * Rebuilds the assistant message on the client from the proxy's stripped events, so that
 * consumers see the same {@link AssistantMessageEvent}s, with the same live `partial`, as
 * from a provider called directly.
 */
import { emptyUsage, usageCount, type TextContent, type ThinkingContent, type ToolCall, type Usage } from "../types/content.js";
import type { AssistantMessage } from "../types/messages.js";
import type { AssistantMessageEvent } from "../types/stream.js";
import { StreamingArguments } from "./partial-json.js";
import { ProxyStreamError, type ProxyAssistantMessageEvent } from "./proxy-events.js";

type Block = TextContent | ThinkingContent | ToolCall;

const blockNames: Record<Block["type"], string> = { text: "a text block", thinking: "a thinking block", toolCall: "a tool call" };

function outOfOrder(eventNumber: number, detail: string): ProxyStreamError {
	return new ProxyStreamError(`Out-of-order event ${eventNumber} in the proxy stream: ${detail}`);
}

/**
 * The usage a server sent, with anything missing or not a count (null, a string, a negative
 * number) as zero: consumers add these numbers up, and one `undefined` would turn a whole
 * session's total into NaN, one "12" into a string.
 */
function usageOf(value: unknown, current: Usage): Usage {
	if (value === null || typeof value !== "object") return current;
	const sent = value as Record<string, unknown>;
	const sentCost = sent["cost"] !== null && typeof sent["cost"] === "object" ? (sent["cost"] as Record<string, unknown>) : {};
	const usage = emptyUsage();
	usage.input = usageCount(sent["input"]);
	usage.output = usageCount(sent["output"]);
	usage.cacheRead = usageCount(sent["cacheRead"]);
	usage.cacheWrite = usageCount(sent["cacheWrite"]);
	usage.totalTokens = usageCount(sent["totalTokens"]);
	usage.cost = {
		input: usageCount(sentCost["input"]),
		output: usageCount(sentCost["output"]),
		cacheRead: usageCount(sentCost["cacheRead"]),
		cacheWrite: usageCount(sentCost["cacheWrite"]),
		total: usageCount(sentCost["total"]),
	};
	return usage;
}


/**
 * Applies proxy events, in order, to one assistant message and returns the event to emit for
 * each. Throws a {@link ProxyStreamError} for an event that does not fit the message so far
 * (a delta for a block that was never started, or of another kind).
 *
 * @example
 * const builder = new ProxyMessageBuilder(createAssistantMessage(model));
 * builder.apply({ type: "text_start", contentIndex: 0 }, 1); // { type: "text_start", contentIndex: 0, partial }
 * builder.apply({ type: "text_delta", contentIndex: 0, delta: "Hi" }, 2);
 */
export class ProxyMessageBuilder {
	/**
	 * Each open tool call's arguments so far, by content index. Kept beside the message, not in
	 * it, so the JSON text never ends up in a stored message or in an error's partial content.
	 */
	private readonly toolCallJson = new Map<number, StreamingArguments>();

	constructor(readonly message: AssistantMessage) {}

	/** The event to emit for `event`; `eventNumber` (1-based) only names it in errors. */
	apply(event: ProxyAssistantMessageEvent, eventNumber: number): AssistantMessageEvent {
		const partial = this.message;
		switch (event.type) {
			case "start":
				return { type: "start", partial };
			case "text_start":
				this.place({ type: "text", text: "" }, event.contentIndex, event.type, eventNumber);
				return { type: "text_start", contentIndex: event.contentIndex, partial };
			case "text_delta": {
				const block = this.block("text", event.contentIndex, event.type, eventNumber);
				block.text += event.delta;
				return { type: "text_delta", contentIndex: event.contentIndex, delta: event.delta, partial };
			}
			case "text_end": {
				const block = this.block("text", event.contentIndex, event.type, eventNumber);
				if (typeof event.contentSignature === "string") block.textSignature = event.contentSignature;
				return { type: "text_end", contentIndex: event.contentIndex, content: block.text, partial };
			}
			case "thinking_start":
				this.place({ type: "thinking", thinking: "" }, event.contentIndex, event.type, eventNumber);
				return { type: "thinking_start", contentIndex: event.contentIndex, partial };
			case "thinking_delta": {
				const block = this.block("thinking", event.contentIndex, event.type, eventNumber);
				block.thinking += event.delta;
				return { type: "thinking_delta", contentIndex: event.contentIndex, delta: event.delta, partial };
			}
			case "thinking_end": {
				const block = this.block("thinking", event.contentIndex, event.type, eventNumber);
				if (typeof event.contentSignature === "string") block.thinkingSignature = event.contentSignature;
				if (event.redacted === true) {
					block.redacted = true;
					// As streamAnthropic shows it: a redacted block streams no text.
					if (block.thinking === "") block.thinking = "[Reasoning redacted]";
				}
				return { type: "thinking_end", contentIndex: event.contentIndex, content: block.thinking, partial };
			}
			case "toolcall_start":
				this.place({ type: "toolCall", id: event.id, name: event.toolName, arguments: {} }, event.contentIndex, event.type, eventNumber);
				this.toolCallJson.set(event.contentIndex, new StreamingArguments());
				return { type: "toolcall_start", contentIndex: event.contentIndex, partial };
			case "toolcall_delta": {
				const block = this.block("toolCall", event.contentIndex, event.type, eventNumber);
				// A fragment after the call's toolcall_end changes nothing: the call was final there (in
				// streaming mode it may be running with those arguments). Read afresh, it replaced them.
				block.arguments = this.toolCallJson.get(event.contentIndex)?.append(event.delta) ?? block.arguments;
				return { type: "toolcall_delta", contentIndex: event.contentIndex, delta: event.delta, partial };
			}
			case "toolcall_end": {
				const block = this.block("toolCall", event.contentIndex, event.type, eventNumber);
				const json = this.toolCallJson.get(event.contentIndex);
				// A call without deltas keeps the arguments it started with ({}), as a provider's would.
				if (json !== undefined) block.arguments = json.final();
				this.toolCallJson.delete(event.contentIndex);
				return { type: "toolcall_end", contentIndex: event.contentIndex, toolCall: block, partial };
			}
			case "done":
				this.finishOpenCalls();
				partial.stopReason = event.reason;
				partial.usage = usageOf(event.usage, partial.usage);
				return { type: "done", reason: event.reason, message: partial };
			case "error":
				this.finishOpenCalls();
				partial.stopReason = event.reason;
				partial.errorMessage =
					typeof event.errorMessage === "string" && event.errorMessage !== ""
						? event.errorMessage
						: `The proxy reported ${event.reason === "aborted" ? "an abort" : "an error"} without a message`;
				partial.usage = usageOf(event.usage, partial.usage);
				return { type: "error", reason: event.reason, error: partial };
		}
	}

	/**
	 * Calls the proxy never ended (no `toolcall_end`) take the arguments their whole text says, as
	 * pi's proxy reads them, not the streaming preview, which lags a long one.
	 */
	private finishOpenCalls(): void {
		for (const [index, json] of this.toolCallJson) {
			const block = this.message.content[index];
			if (block?.type === "toolCall") block.arguments = json.final();
		}
		this.toolCallJson.clear();
	}

	/** Puts a new block at `index`: the next free slot, or over an existing one, never past the end. */
	private place(block: Block, index: number, type: string, eventNumber: number): void {
		const { content } = this.message;
		if (index > content.length) {
			throw outOfOrder(eventNumber, `${type} for content ${index}, but the message has ${content.length} block(s) so far`);
		}
		content[index] = block;
		this.toolCallJson.delete(index);
	}

	private block<K extends Block["type"]>(kind: K, index: number, type: string, eventNumber: number): Extract<Block, { type: K }> {
		const block = this.message.content[index];
		if (block === undefined) throw outOfOrder(eventNumber, `${type} for content ${index}, which was never started`);
		if (block.type !== kind) throw outOfOrder(eventNumber, `${type} for content ${index}, which is ${blockNames[block.type]}`);
		return block as Extract<Block, { type: K }>;
	}
}
