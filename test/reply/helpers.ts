/**
 * A fake event source for reply tests: an Agent-shaped object whose `emit` pushes realistic
 * AgentEvents to the subscriber and returns what the listener returned (so tests can await it).
 */
import type {
	AgentEvent,
	AssistantMessage,
	AssistantMessageEvent,
	TextContent,
	ThinkingContent,
	ToolCall,
	Usage,
} from "../../src/types/index.js";
import { emptyUsage } from "../../src/types/index.js";
import { parseFenceSpans } from "../../src/reply/fences.js";

type Listener = (event: AgentEvent, signal?: AbortSignal) => void | Promise<void>;
type Block = TextContent | ThinkingContent | ToolCall;

/**
 * Fields of an assistant message, plus the message-level `phase` some providers set
 * ("commentary" or "final_answer"), which pi's type does not declare.
 */
export type AssistantOverrides = Partial<AssistantMessage> & { phase?: string };

/** A `textSignature` as OpenAI-Responses-style providers write it, with the item's phase. */
export function phaseSignature(phase: "commentary" | "final_answer", id = `item_${phase}`): string {
	return JSON.stringify({ v: 1, id, phase });
}

/** Builds an assistant message with every required field. */
export function assistantMessage(content: Block[] | string, overrides: AssistantOverrides = {}): AssistantMessage {
	return {
		role: "assistant",
		content: typeof content === "string" ? [{ type: "text", text: content }] : content,
		api: "anthropic-messages",
		provider: "anthropic",
		model: "claude-test",
		usage: emptyUsage(),
		stopReason: "stop",
		timestamp: 0,
		...overrides,
	};
}

/** A usage record with the given input/output tokens. */
export function usage(input: number, output: number): Usage {
	return { ...emptyUsage(), input, output, totalTokens: input + output };
}

/**
 * An Agent-like source that records abort calls and streams one assistant message at a time,
 * keeping the `partial` message of each update consistent with what was streamed.
 */
export class FakeAgent {
	aborts = 0;
	readonly #listeners = new Set<Listener>();
	#partial: AssistantMessage = assistantMessage([]);

	subscribe(listener: Listener): () => void {
		this.#listeners.add(listener);
		return () => this.#listeners.delete(listener);
	}

	abort(): void {
		this.aborts += 1;
	}

	get listenerCount(): number {
		return this.#listeners.size;
	}

	/** Delivers an event; resolves when every listener has settled (as the Agent does). */
	async emit(event: AgentEvent): Promise<void> {
		for (const listener of this.#listeners) await listener(event);
	}

	/** Delivers an event and returns the listener's raw return value (sync or promise). */
	emitRaw(event: AgentEvent): unknown {
		let result: unknown;
		for (const listener of this.#listeners) result = listener(event);
		return result;
	}

	messageStart(overrides: AssistantOverrides = {}): unknown {
		this.#partial = assistantMessage([], overrides);
		return this.emitRaw({ type: "message_start", message: this.#partial });
	}

	/** Changes a field of the streaming message (a provider that learns the phase late). */
	setMessageField(field: "phase", value: string): void {
		Object.assign(this.#partial, { [field]: value });
	}

	#update(assistantMessageEvent: AssistantMessageEvent): unknown {
		return this.emitRaw({ type: "message_update", message: this.#partial, assistantMessageEvent });
	}

	#textBlock(index: number, extra: Partial<TextContent> = {}): TextContent {
		const existing = this.#partial.content[index];
		// Extra fields (a phase signature) may change while the block streams.
		if (existing?.type === "text") return Object.assign(existing, extra);
		const block: TextContent = { type: "text", text: "", ...extra };
		this.#partial.content[index] = block;
		return block;
	}

	textStart(index = 0, extra: Partial<TextContent> = {}): unknown {
		this.#textBlock(index, extra);
		return this.#update({ type: "text_start", contentIndex: index, partial: this.#partial });
	}

	delta(text: string, index = 0, extra: Partial<TextContent> = {}): unknown {
		const block = this.#textBlock(index, extra);
		block.text += text;
		return this.#update({ type: "text_delta", contentIndex: index, delta: text, partial: this.#partial });
	}

	textEnd(content?: string, index = 0): unknown {
		const block = this.#textBlock(index);
		return this.#update({ type: "text_end", contentIndex: index, content: content ?? block.text, partial: this.#partial });
	}

	/** A text_end whose content is empty (a provider that only sends deltas). */
	bareTextEnd(index = 0): unknown {
		this.#textBlock(index);
		return this.#update({ type: "text_end", contentIndex: index, content: "", partial: this.#partial });
	}

	thinkingDelta(text: string, index = 0): unknown {
		const existing = this.#partial.content[index];
		if (existing?.type === "thinking") existing.thinking += text;
		else this.#partial.content[index] = { type: "thinking", thinking: text };
		return this.#update({ type: "thinking_delta", contentIndex: index, delta: text, partial: this.#partial });
	}

	thinkingEnd(content: string, index = 0): unknown {
		this.#partial.content[index] = { type: "thinking", thinking: content };
		return this.#update({ type: "thinking_end", contentIndex: index, content, partial: this.#partial });
	}

	messageEnd(content?: Block[] | string, overrides: AssistantOverrides = {}): unknown {
		const message =
			content === undefined ? { ...this.#partial, ...overrides } : assistantMessage(content, overrides);
		return this.emitRaw({ type: "message_end", message });
	}

	toolStart(toolName: string, args: unknown = {}, toolCallId = `call-${toolName}`): unknown {
		return this.emitRaw({ type: "tool_execution_start", toolCallId, toolName, args });
	}

	toolEnd(toolName: string, result: unknown, isError = false, toolCallId = `call-${toolName}`): unknown {
		return this.emitRaw({ type: "tool_execution_end", toolCallId, toolName, result, isError });
	}

	compactionStart(): unknown {
		return this.emitRaw({ type: "auto_compaction_start", reason: "overflow" });
	}

	compactionEnd(options: { willRetry?: boolean; result?: boolean; aborted?: boolean } = {}): unknown {
		const event: AgentEvent = {
			type: "auto_compaction_end",
			reason: "overflow",
			aborted: options.aborted ?? false,
			willRetry: options.willRetry ?? false,
		};
		if (options.result) {
			event.result = { summary: "s", tokensBefore: 10, tokensAfter: 5, messagesDropped: 2, messagesKept: 1, splitTurn: false };
		}
		return this.emitRaw(event);
	}

	agentEnd(): unknown {
		return this.emitRaw({ type: "agent_end", messages: [] });
	}
}

/** A tool result in pi's shape. */
export function toolResult(text: string, details: unknown = {}): { content: TextContent[]; details: unknown } {
	return { content: [{ type: "text", text }], details };
}

/** Waits for queued microtasks and promise chains to run. */
export async function settle(rounds = 5): Promise<void> {
	for (let round = 0; round < rounds; round += 1) await new Promise<void>((resolve) => setTimeout(resolve, 0));
}

/** What {@link unclosedFences} leaves out. */
export interface FenceAllowance {
	/** A fence whose opening line, a first character of `room` code units and closing line exceed this cannot be closed by any cut. */
	maxChars?: number;
	room?: number;
}

/**
 * The opening lines of the code fences a text opens and does not close, but for those listed in
 * {@link FenceAllowance}. A block reply is a chat message of its own: one that leaves a fence
 * open makes the chat client show the rest of the conversation as code. (Read with the fence
 * parser, not with the function the reply layer closes fences with.)
 */
export function unclosedFences(text: string, allowance: FenceAllowance = {}): string[] {
	const { maxChars = Number.MAX_SAFE_INTEGER, room = 1 } = allowance;
	return parseFenceSpans(text)
		.filter((span) => !span.closed)
		.filter((span) => span.marker.openLine.length + 1 + room + 1 + span.marker.indent.length + span.marker.length <= maxChars)
		.map((span) => span.marker.openLine);
}

/**
 * The opening lines of code fences a block opens that the text it was cut from does not open:
 * a piece of a line cut mid-line that reads as a fence line though the whole line was none
 * ("see ```ts" cut after "see"). Closed or not, the chat client shows a code block the model
 * never wrote. Compared without indentation: a reopened fence keeps the original opening line.
 * `sources` are the texts a block may come from (one per text block of a message). With the
 * allowance of {@link unclosedFences}: when a fence of the source is too long to close within
 * `maxChars`, no cut keeps it whole, and nothing is reported.
 */
export function inventedFences(block: string, sources: string | string[], allowance: FenceAllowance = {}): string[] {
	const { maxChars = Number.MAX_SAFE_INTEGER, room = 1 } = allowance;
	const texts = typeof sources === "string" ? [sources] : sources;
	const spans = texts.flatMap((source) => parseFenceSpans(source));
	if (spans.some((span) => span.marker.openLine.length + 1 + room + 1 + span.marker.indent.length + span.marker.length > maxChars)) return [];
	const opened = new Set(spans.map((span) => span.marker.openLine.trim()));
	const uncuttable = texts.flatMap((source) => source.split("\n")).filter((line) => !hasSafeCut(line, maxChars));
	return parseFenceSpans(block)
		.map((span) => span.marker.openLine)
		.filter((line) => !opened.has(line.trim()) && !uncuttable.some((whole) => whole.includes(line.trim())));
}

/**
 * Whether a line that must be cut within `maxChars` has a cut that makes a fence line of neither
 * piece: the head read as a line, the rest from its first characters (what comes after them may
 * not have arrived when the cut is made). "`````Hello<thinking>…</ thinking >```" is no fence
 * line (its info string has backticks), but every cut before the last backticks makes its head
 * one, and every cut inside the leading run makes its rest start with three backticks: no cut
 * keeps it whole, and the block reader is not asked to.
 */
function hasSafeCut(line: string, maxChars: number): boolean {
	if (line.length <= maxChars) return true;
	for (let at = 1; at <= maxChars; at += 1) {
		const head = parseFenceSpans(line.slice(0, at).trimEnd()).length > 0;
		const rest = /^ {0,3}(?:`{3}|~{3})/.test(line.slice(at));
		if (!head && !rest) return true;
	}
	return false;
}
