/**
 * Shapes shared by the reply-assembly layer: what a chat channel receives (payloads,
 * partial snapshots), and the bookkeeping the subscriber exposes (tool metas, errors, usage).
 *
 * Nothing here is part of the pi event protocol; these types describe what agentchart sends
 * to a chat channel after it has read the AgentEvents.
 */

/**
 * One message for a chat channel: text, media, or both, plus how to thread it.
 *
 * @example
 * const payload: ReplyPayload = { text: "Here is the chart.", mediaUrls: ["https://example.com/chart.png"], replyToId: "msg-7" };
 * pipeline.enqueue(payload);
 */
export interface ReplyPayload {
	/** Visible text, already cleaned of reasoning tags and reply directives. */
	text?: string;
	/** Media to attach (from `MEDIA:` lines or tool results). */
	mediaUrls?: string[];
	/** Reply to this message id (from `[[reply_to:<id>]]`). */
	replyToId?: string;
	/** Reply to the message that triggered the run (from `[[reply_to_current]]`). */
	replyToCurrent?: boolean;
	/** True when the text carried a reply directive of either kind. */
	replyToTag?: boolean;
	/** Send audio media as a voice note (from `[[audio_as_voice]]`). */
	audioAsVoice?: boolean;
	/** A "Reasoning:" block; never merged with visible text. */
	isReasoning?: boolean;
	/** A "compacting context" notice; never merged with visible text. */
	isCompactionNotice?: boolean;
}

/**
 * Where a block reply came from.
 *
 * @example
 * subscribeReplies(agent, { onBlockReply: (payload, context: BlockReplyContext) => console.log(context.assistantMessageIndex, payload.text) });
 */
export interface BlockReplyContext {
	/** 1-based count of assistant messages seen so far; the block belongs to this one. */
	assistantMessageIndex: number;
}

/**
 * A snapshot for channels that edit one live message.
 *
 * @example
 * subscribeReplies(agent, { onPartialReply: (partial: PartialReply) => (partial.replace ? live.set(partial.text) : live.append(partial.delta)) });
 */
export interface PartialReply {
	/** The cleaned visible text of the current assistant message so far. */
	text: string;
	/** What was appended since the previous snapshot ("" when `replace` is set). */
	delta: string;
	/** Set when earlier text changed: show `text` instead of appending `delta`. */
	replace?: true;
	/** Media found in the message so far. */
	mediaUrls?: string[];
}

/**
 * A reasoning update for `onReasoningStream`.
 *
 * @example
 * subscribeReplies(agent, { reasoningMode: "stream", onReasoningStream: (update: ReasoningUpdate) => console.log(update.text.length) });
 */
export interface ReasoningUpdate {
	/** All reasoning of the current message so far, formatted as a "Reasoning:" block. */
	text: string;
}

/**
 * How model reasoning reaches the channel.
 * - `off`: never shown.
 * - `on`: sent once per message as a separate "Reasoning:" block reply.
 * - `stream`: streamed through `onReasoningStream`.
 *
 * @example
 * const reasoningMode: ReasoningMode = "stream"; // reasoning goes to onReasoningStream as it streams
 * subscribeReplies(agent, { reasoningMode, onReasoningStream: (update) => chat.typing(update.text) });
 */
export type ReasoningMode = "off" | "on" | "stream";

/**
 * When buffered text becomes a block reply: at each text block's end, or at the message's end.
 *
 * @example
 * const blockReplyBreak: BlockReplyBreak = "message_end";
 * subscribeReplies(agent, { blockReplyBreak, onBlockReply: (payload) => chat.send(payload.text ?? "") });
 */
export type BlockReplyBreak = "text_end" | "message_end";

/**
 * How much tool activity is reported through `onToolResult`.
 *
 * @example
 * const verbose: ToolVerbosity = "full";
 * subscribeReplies(agent, { verbose, onToolResult: (payload) => chat.send(payload.text ?? "") });
 */
export type ToolVerbosity = "off" | "on" | "full";

/**
 * One finished tool call, in completion order.
 *
 * @example
 * const used = replies.toolMetas.map((tool: ToolMeta) => (tool.meta ? `${tool.toolName}: ${tool.meta}` : tool.toolName));
 */
export interface ToolMeta {
	toolName: string;
	/** A short description of what the call touched (a path, a command, a URL). */
	meta?: string;
}

/**
 * The most relevant tool failure of the run (see `getLastToolError`).
 *
 * @example
 * const error: ToolErrorInfo | undefined = replies.getLastToolError();
 * if (error) await chat.send(`${error.toolName} failed${error.timedOut ? " (timed out)" : ""}: ${error.error ?? ""}`);
 */
export interface ToolErrorInfo {
	toolName: string;
	meta?: string;
	error?: string;
	timedOut?: boolean;
	/** True when the failed call would have changed something (a write, an edit, a send). */
	mutatingAction?: boolean;
	/** Identifies the action, so that only a success of the same action clears the error. */
	actionFingerprint?: string;
}

/**
 * Token totals over the assistant messages of the subscription.
 *
 * @example
 * const usage: UsageTotals | undefined = replies.getUsageTotals();
 * if (usage) console.log(`${usage.input} in, ${usage.output} out, ${usage.cacheRead} from cache`);
 */
export interface UsageTotals {
	input: number;
	output: number;
	cacheRead: number;
	cacheWrite: number;
	total: number;
}

/**
 * Where a messaging tool sent a message.
 *
 * @example
 * const target: MessagingToolTarget = { tool: "slack_post", provider: "slack", to: "#releases", threadId: "1712.42" };
 */
export interface MessagingToolTarget {
	tool: string;
	provider?: string;
	to?: string;
	threadId?: string;
}

/**
 * What a messaging tool call is about to send.
 *
 * @example
 * const send: MessagingToolSend = { text: "Deployed to staging.", target: { tool: "slack_post", to: "#releases" } };
 */
export interface MessagingToolSend {
	text?: string;
	target?: MessagingToolTarget;
}

/**
 * Recognises messaging-tool sends: return what the call sends, or `undefined` when the call is
 * not a send.
 *
 * @example
 * const messagingTools: MessagingToolExtractor = (toolName, args) =>
 *   toolName === "slack_post" ? { text: String((args as { text?: unknown }).text ?? ""), target: { tool: toolName, provider: "slack" } } : undefined;
 * subscribeReplies(agent, { messagingTools });
 */
export type MessagingToolExtractor = (toolName: string, args: unknown) => MessagingToolSend | undefined;

/**
 * Whether a tool call changes something, and which action it is.
 *
 * @example
 * const action: ToolActionClass = classifyToolAction("write", { path: "notes.md" });
 * if (action.mutating) console.log("changes", action.fingerprint);
 */
export interface ToolActionClass {
	mutating: boolean;
	fingerprint?: string;
}

/**
 * A value or a promise of it: callbacks may be sync or async.
 *
 * @example
 * const onPartialReply = (partial: PartialReply): MaybePromise<void> => chat.typing(partial.text); // or return a promise to be awaited
 */
export type MaybePromise<T> = T | Promise<T>;
