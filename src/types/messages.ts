import type { ImageContent, StopReason, TextContent, ThinkingContent, ToolCall, Usage } from "./content.js";
import type { Api, Provider } from "./model.js";

/**
 * A message from the user: text, or text and images.
 *
 * @example
 * await agent.prompt({ role: "user", content: "Describe the picture", timestamp: Date.now() });
 */
export interface UserMessage {
	role: "user";
	/** A plain string, or content blocks for text mixed with images. */
	content: string | (TextContent | ImageContent)[];
	/** Milliseconds since the epoch. */
	timestamp: number;
}

/**
 * The error a diagnostic records (pi-ai's `DiagnosticErrorInfo`).
 *
 * @example
 * const info: DiagnosticErrorInfo = { name: "Error", message: "socket hang up", code: "ECONNRESET" };
 */
export interface DiagnosticErrorInfo {
	name?: string;
	message: string;
	stack?: string;
	/** A Node error code (`ECONNRESET`) or a provider's numeric code. */
	code?: string | number;
}

/**
 * A diagnostic a provider attached to a message (retries, repairs, warnings). The same shape as
 * pi-ai 0.73.1's, so messages pass between pi-ai's types and agentchart's both ways.
 *
 * @example
 * for (const diagnostic of reply.diagnostics ?? []) console.warn(diagnostic.type, diagnostic.error?.message);
 */
export interface AssistantMessageDiagnostic {
	type: string;
	timestamp: number;
	error?: DiagnosticErrorInfo;
	details?: Record<string, unknown>;
}

/**
 * A reply from the model. Also the shape of a failed or aborted call (see `stopReason`).
 *
 * @example
 * const last = agent.state.messages.at(-1);
 * if (last?.role === "assistant" && last.stopReason === "error") console.error(last.errorMessage);
 */
export interface AssistantMessage {
	role: "assistant";
	/** Text, reasoning and tool calls, in the order the model produced them. */
	content: (TextContent | ThinkingContent | ToolCall)[];
	/** The wire protocol used, e.g. "anthropic-messages". */
	api: Api;
	/** The provider that served the call, e.g. "anthropic". */
	provider: Provider;
	/** The model id that was requested. */
	model: string;
	/** The model id the provider reported, when it differs. */
	responseModel?: string;
	/** The provider's id for this response. */
	responseId?: string;
	/** Provider diagnostics. */
	diagnostics?: AssistantMessageDiagnostic[];
	/** Tokens and cost. */
	usage: Usage;
	/** Why the message ended. */
	stopReason: StopReason;
	/** Human-readable reason when `stopReason` is "error" or "aborted". */
	errorMessage?: string;
	/** Milliseconds since the epoch. */
	timestamp: number;
}

/**
 * The result of one tool call, sent back to the model.
 *
 * @example
 * const results = agent.state.messages.filter((message): message is ToolResultMessage => message.role === "toolResult");
 */
export interface ToolResultMessage<TDetails = any> {
	role: "toolResult";
	/** Id of the tool call this answers. */
	toolCallId: string;
	/** Name of the tool that ran. */
	toolName: string;
	/** What the model sees. */
	content: (TextContent | ImageContent)[];
	/** Structured data for the application (UIs, logs); never sent to the model. */
	details?: TDetails;
	/** True when the tool failed, was blocked, not found, or its arguments were invalid. */
	isError: boolean;
	/** Milliseconds since the epoch. */
	timestamp: number;
}

/**
 * The messages a model understands.
 *
 * @example
 * const llmMessages: Message[] = agent.state.messages.filter((message): message is Message => ["user", "assistant", "toolResult"].includes(message.role));
 */
export type Message = UserMessage | AssistantMessage | ToolResultMessage;

/**
 * Extension point for application-specific transcript entries, as in pi 0.73.1: empty by
 * default, so `AgentMessage` is `Message` and code written for pi (`messages.at(-1)?.content`,
 * a `switch` on `role` over the three LLM roles) compiles unchanged. Add your own entries by
 * declaration merging; `convertToLlm` decides how (or whether) they reach the model.
 *
 * agentchart writes one entry of its own, and only when compaction runs (`compaction.enabled`,
 * or `agent.compact()`): a {@link CompactionSummaryMessage}. Code that reads such transcripts
 * either reads it as {@link TranscriptMessage}s or declares the entry here, as below, so
 * that the type system makes it handle it. (pi's coding agent declares a `compactionSummary`
 * entry of its own, of which agentchart's is a superset.)
 *
 * @example
 * import type { CompactionSummaryMessage } from "agentchart";
 *
 * declare module "agentchart" {
 *   interface CustomAgentMessages {
 *     notification: { role: "notification"; text: string; timestamp: number };
 *     compactionSummary: CompactionSummaryMessage;
 *   }
 * }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface CustomAgentMessages {}

/**
 * The summary that replaces older messages after a compaction. The default `convertToLlm`
 * sends it to the model as a user message wrapped in `<summary>` tags.
 *
 * @example
 * const transcript: readonly TranscriptMessage[] = agent.state.messages;
 * const summaries = transcript.filter(isCompactionSummary).map((entry) => entry.summary);
 */
export interface CompactionSummaryMessage {
	role: "compactionSummary";
	/** The structured summary (Goal, Constraints & Preferences, Progress, ...). */
	summary: string;
	/** Estimated context tokens before the compaction. */
	tokensBefore: number;
	/** How many messages it replaced (including an earlier summary it absorbed). */
	messagesDropped: number;
	/**
	 * How many messages it kept, right after it in the transcript: a reply among them of the
	 * summary's own millisecond is told from a fresh one by it (the usage of a kept reply measured
	 * the transcript the summary replaced; an older one is told by its timestamp). Missing in a
	 * summary an agentchart before this field wrote.
	 */
	messagesKept?: number;
	/** Milliseconds since the epoch. */
	timestamp: number;
}

/**
 * Anything that can live in an agent's transcript: LLM messages plus the entries declared in
 * {@link CustomAgentMessages}. As pi's, it leaves out agentchart's compaction summary unless
 * you declare it; {@link TranscriptMessage} is the union with it.
 *
 * @example
 * const last = agent.state.messages.at(-1);
 * if (last?.role === "assistant") console.log(last.stopReason);
 */
export type AgentMessage = Message | CustomAgentMessages[keyof CustomAgentMessages];

/**
 * What a transcript can hold at run time once compaction has run: every {@link AgentMessage}
 * and agentchart's {@link CompactionSummaryMessage}. The stricter type to read a transcript
 * with, for code that must not miss the summary.
 *
 * @example
 * const transcript: readonly TranscriptMessage[] = agent.state.messages;
 * for (const entry of transcript) {
 *   console.log(entry.role === "compactionSummary" ? `summary of ${entry.messagesDropped} messages` : entry.role);
 * }
 */
export type TranscriptMessage = AgentMessage | CompactionSummaryMessage;
