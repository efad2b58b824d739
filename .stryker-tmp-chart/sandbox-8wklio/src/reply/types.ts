/**
 * Shapes shared by the reply-assembly layer: what a chat channel receives (payloads,
 * partial snapshots), and the bookkeeping the subscriber exposes (tool metas, errors, usage).
 *
 * Nothing here is part of the pi event protocol; these types describe what agentchart sends
 * to a chat channel after it has read the AgentEvents.
 */
// @ts-nocheck


/** One message for a chat channel: text, media, or both, plus how to thread it. */
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

/** Where a block reply came from. */
export interface BlockReplyContext {
	/** 1-based count of assistant messages seen so far; the block belongs to this one. */
	assistantMessageIndex: number;
}

/** A snapshot for channels that edit one live message. */
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

/** A reasoning update for `onReasoningStream`. */
export interface ReasoningUpdate {
	/** All reasoning of the current message so far, formatted as a "Reasoning:" block. */
	text: string;
}

/**
 * How model reasoning reaches the channel.
 * - `off`: never shown.
 * - `on`: sent once per message as a separate "Reasoning:" block reply.
 * - `stream`: streamed through `onReasoningStream`.
 */
export type ReasoningMode = "off" | "on" | "stream";

/** When buffered text becomes a block reply: at each text block's end, or at the message's end. */
export type BlockReplyBreak = "text_end" | "message_end";

/** How much tool activity is reported through `onToolResult`. */
export type ToolVerbosity = "off" | "on" | "full";

/** One finished tool call, in completion order. */
export interface ToolMeta {
	toolName: string;
	/** A short description of what the call touched (a path, a command, a URL). */
	meta?: string;
}

/** The most relevant tool failure of the run (see `getLastToolError`). */
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

/** Token totals over the assistant messages of the subscription. */
export interface UsageTotals {
	input: number;
	output: number;
	cacheRead: number;
	cacheWrite: number;
	total: number;
}

/** Where a messaging tool sent a message. */
export interface MessagingToolTarget {
	tool: string;
	provider?: string;
	to?: string;
	threadId?: string;
}

/** What a messaging tool call is about to send. */
export interface MessagingToolSend {
	text?: string;
	target?: MessagingToolTarget;
}

/**
 * Recognises messaging-tool sends: return what the call sends, or `undefined` when the call is
 * not a send.
 */
export type MessagingToolExtractor = (toolName: string, args: unknown) => MessagingToolSend | undefined;

/** Whether a tool call changes something, and which action it is. */
export interface ToolActionClass {
	mutating: boolean;
	fingerprint?: string;
}

/** A value or a promise of it: callbacks may be sync or async. */
export type MaybePromise<T> = T | Promise<T>;
