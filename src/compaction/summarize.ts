import type { AgentMessage, AssistantMessage, Message } from "../types/messages.js";
import type { Model, SimpleStreamOptions } from "../types/model.js";
import type { ConvertToLlm, GetApiKey } from "../types/agent.js";
import type { StreamFn } from "../types/stream.js";
import { modelStallText, watchForStall } from "../util/stall-watch.js";
import { withStreamActivity } from "../providers/stream-activity.js";
import { failedStop } from "../util/stop-reason.js";

/** Tool results longer than this are truncated in the serialised conversation. */
export const TOOL_RESULT_SUMMARY_CHARS = 2000;

export const SUMMARIZATION_SYSTEM_PROMPT =
	"You summarise conversations between a user and an AI assistant that uses tools. Read the conversation and write " +
	"the structured summary in the format you are given, and nothing else. Do not continue the conversation and do " +
	"not answer questions asked in it.";

const SUMMARY_FORMAT = `Write the summary in exactly this format:

## Goal
What the user is trying to achieve.

## Constraints & Preferences
Requirements, preferences and limits the user stated.

## Progress
### Done
- [x] Completed work
### In Progress
- [ ] Work under way
### Blocked
- Anything blocked, and why

## Key Decisions
- **Decision**: why it was made

## Next Steps
1. What should happen next

## Critical Context
Facts the assistant must not lose: exact file paths, identifiers, commands, error messages, numbers.

Be brief in every section, but keep exact names, paths and error messages.`;

const NEW_SUMMARY_PROMPT = `Summarise the conversation above so that work can continue from the summary alone.\n\n${SUMMARY_FORMAT}`;

const UPDATE_SUMMARY_PROMPT = `The previous summary covers the conversation before the messages above. Write an updated summary that merges the previous summary with the new messages: keep what still holds, update progress, add new decisions and context.\n\n${SUMMARY_FORMAT}`;

const TURN_PREFIX_PROMPT = `The messages above are the beginning of a turn that is too large to keep; its end is kept verbatim. Summarise the beginning so the end makes sense:

## Original Request
What the user asked for in this turn.

## Early Progress
What was done so far in this turn.

## Context for Suffix
What is needed to understand the rest of the turn.`;

function textOf(content: Message["content"]): string {
	if (typeof content === "string") return content;
	return content
		.map((block) => (block.type === "text" ? block.text : block.type === "image" ? "[image]" : ""))
		.filter((part) => part.length > 0)
		.join("\n");
}

function truncate(text: string, max: number): string {
	if (text.length <= max) return text;
	return `${text.slice(0, max)}\n[... ${text.length - max} more characters truncated]`;
}

/**
 * Serialises messages as plain text for a summariser: one labelled line per part, tool
 * results truncated to 2000 characters.
 *
 * @example
 * serializeConversation([{ role: "user", content: "hi", timestamp: 0 }]); // "[User]: hi"
 */
export function serializeConversation(messages: Message[]): string {
	const lines: string[] = [];
	for (const message of messages) {
		if (message.role === "user") {
			lines.push(`[User]: ${textOf(message.content)}`);
		} else if (message.role === "toolResult") {
			lines.push(`[Tool result${message.isError ? " (error)" : ""}]: ${truncate(textOf(message.content), TOOL_RESULT_SUMMARY_CHARS)}`);
		} else {
			const calls: string[] = [];
			for (const block of message.content) {
				if (block.type === "thinking") lines.push(`[Assistant thinking]: ${block.thinking}`);
				else if (block.type === "text") lines.push(`[Assistant]: ${block.text}`);
				else {
					const args = Object.entries(block.arguments ?? {})
						.map(([key, value]) => `${key}=${JSON.stringify(value)}`)
						.join(", ");
					calls.push(`${block.name}(${args})`);
				}
			}
			if (calls.length > 0) lines.push(`[Assistant tool calls]: ${calls.join("; ")}`);
		}
	}
	return lines.join("\n\n");
}

/**
 * What the default summariser needs from the agent.
 *
 * @example
 * const summarize = (options: ModelSummarizerOptions) => `summary of at most ${options.reserveTokens} tokens by ${options.model.id}`;
 */
export interface ModelSummarizerOptions {
	streamFn: StreamFn;
	model: Model;
	convertToLlm: ConvertToLlm;
	reserveTokens: number;
	streamOptions: SimpleStreamOptions;
	/**
	 * Resolves the provider's API key before each summary request, as before each model call of a
	 * run (the agent's `getApiKey`); its key wins over `streamOptions.apiKey`.
	 */
	getApiKey?: GetApiKey | undefined;
	signal: AbortSignal;
	/**
	 * The longest silence of the model's stream, in ms, before the request is cancelled and the
	 * summary fails (the agent passes its `streamIdleTimeoutMs`); 0 or absent: no limit.
	 */
	idleTimeoutMs?: number | undefined;
}

/** The summary's stream events read so far, and a provider's signs of life: what its stall watch counts. */
interface SeenEvents {
	events: number;
}

/**
 * Counts a provider's sign of life. Made here, outside `callModel`: a closure made there would
 * hold the call's options (the agent's stream function) for as long as a stream function keeps
 * its options.
 */
function countEvent(seen: SeenEvents): () => void {
	return () => void seen.events++;
}

async function callModel(options: ModelSummarizerOptions, prompt: string, maxTokens: number): Promise<string> {
	// Aborted while the prompt was prepared (convertToLlm) or after the first of two summaries:
	// no request goes out, even through a stream function that ignores its signal.
	if (options.signal.aborted) throw new Error("Summarization aborted");
	// Resolved before the silence is watched, as for a run's call: a key's refresh takes what it takes.
	const apiKey = (options.getApiKey ? await options.getApiKey(options.model.provider) : undefined) || options.streamOptions.apiKey;
	if (options.signal.aborted) throw new Error("Summarization aborted");
	// The request's signal: the caller's, and a stall's (which must cancel the request).
	const stallAbort = new AbortController();
	const signal = AbortSignal.any([options.signal, stallAbort.signal]);
	const streamOptions: SimpleStreamOptions = { ...options.streamOptions, maxTokens, signal };
	if (apiKey !== undefined) streamOptions.apiKey = apiKey;
	let stalled!: (error: Error) => void;
	const stall = new Promise<never>((_, reject) => (stalled = reject));
	const idleMs = options.idleTimeoutMs ?? 0;
	const seen: SeenEvents = { events: 0 };
	const watch = watchForStall(
		idleMs,
		() => {
			stallAbort.abort(new Error("stream stalled"));
			stalled(new Error(`Summarization failed: the ${modelStallText(idleMs)}`));
		},
		() => seen.events,
	);
	// A built-in provider's retries and their waits are not the model's silence.
	withStreamActivity(streamOptions, countEvent(seen));
	const read = async (): Promise<AssistantMessage> => {
		const stream = await options.streamFn(
			options.model,
			{ systemPrompt: SUMMARIZATION_SYSTEM_PROMPT, messages: [{ role: "user", content: [{ type: "text", text: prompt }], timestamp: Date.now() }] },
			streamOptions,
		);
		for await (const _event of stream) seen.events++;
		return stream.result();
	};
	let message: AssistantMessage;
	const reading = read();
	// Once the stall has won, a late failure of the abandoned read is nobody's to handle.
	reading.catch(() => {});
	try {
		// A stream function that ignores its signal may never end: the stall ends the wait regardless.
		message = await Promise.race([reading, stall]);
	} finally {
		watch.stop();
	}
	if (failedStop(message.stopReason)) {
		throw new Error(`Summarization failed: ${message.errorMessage ?? message.stopReason}`);
	}
	const text = message.content
		.filter((block) => block.type === "text")
		.map((block) => (block.type === "text" ? block.text : ""))
		.join("\n")
		.trim();
	if (!text) throw new Error("Summarization failed: the model returned no text");
	return text;
}

/** A summary request's output limit below which no summary fits (a `reserveTokens` of 0 asked for none). */
const MIN_SUMMARY_TOKENS = 1024;

/**
 * A summary request's output limit: a share of `reserveTokens` (pi's), at least
 * {@link MIN_SUMMARY_TOKENS}, and no more than the model can write (its `maxTokens`, when known).
 */
function summaryTokens(options: ModelSummarizerOptions, share: number): number {
	const wanted = Math.max(MIN_SUMMARY_TOKENS, Math.floor(options.reserveTokens * share));
	const most = options.model.maxTokens;
	return typeof most === "number" && most > 0 ? Math.min(wanted, most) : wanted;
}

/**
 * Writes a compaction summary with the agent's own stream function: the history (with the
 * previous summary for an iterative update) and, for a split turn, the turn's early part
 * summarised separately and appended.
 *
 * @example
 * const summary = await summarizeWithModel({ history, turnPrefix: [] }, { streamFn, model, convertToLlm, reserveTokens: 16384, streamOptions: {}, signal });
 */
export async function summarizeWithModel(
	input: { history: AgentMessage[]; turnPrefix: AgentMessage[]; previousSummary?: string | undefined; instructions?: string | undefined },
	options: ModelSummarizerOptions,
): Promise<string> {
	const parts: string[] = [];
	if (input.history.length > 0 || input.previousSummary) {
		const conversation = serializeConversation(await options.convertToLlm(input.history));
		let prompt = `<conversation>\n${conversation}\n</conversation>\n\n`;
		if (input.previousSummary) prompt += `<previous-summary>\n${input.previousSummary}\n</previous-summary>\n\n`;
		prompt += input.previousSummary ? UPDATE_SUMMARY_PROMPT : NEW_SUMMARY_PROMPT;
		if (input.instructions) prompt += `\n\nAlso focus on: ${input.instructions}`;
		parts.push(await callModel(options, prompt, summaryTokens(options, 0.8)));
	}
	if (input.turnPrefix.length > 0) {
		const conversation = serializeConversation(await options.convertToLlm(input.turnPrefix));
		const prompt = `<conversation>\n${conversation}\n</conversation>\n\n${TURN_PREFIX_PROMPT}`;
		const prefix = await callModel(options, prompt, summaryTokens(options, 0.5));
		parts.push(parts.length > 0 ? `---\n\n**Turn context (split turn):**\n\n${prefix}` : prefix);
	}
	return parts.join("\n\n");
}
