/**
 * The options and the handle of `subscribeReplies`.
 */
import type { BlockChunkingOptions } from "./block-chunker.js";
import type {
	BlockReplyBreak,
	BlockReplyContext,
	MaybePromise,
	MessagingToolExtractor,
	MessagingToolTarget,
	PartialReply,
	ReasoningMode,
	ReasoningUpdate,
	ReplyPayload,
	ToolActionClass,
	ToolErrorInfo,
	ToolMeta,
	ToolVerbosity,
	UsageTotals,
} from "./types.js";

/**
 * What `subscribeReplies` should do with the events it reads.
 *
 * @example
 * const params: SubscribeRepliesParams = { blockReplyBreak: "text_end", reasoningMode: "off", onBlockReply: (payload) => chat.send(payload.text ?? "") };
 * const replies = subscribeReplies(agent, params);
 */
export interface SubscribeRepliesParams {
	/**
	 * Receives each block reply, one at a time: a returned promise delays the next block reply
	 * until it settles, and flushes wait for it, without a timeout (`createBlockReplyPipeline`
	 * has one per send).
	 */
	onBlockReply?: (payload: ReplyPayload, context: BlockReplyContext) => MaybePromise<void>;
	/**
	 * Receives snapshots of the current message's visible text, for a live-edited message. Not
	 * called with `reasoningMode: "on"` and no `onBlockReply`: the reasoning block would come after
	 * a draft that partials had already shown.
	 */
	onPartialReply?: (partial: PartialReply) => MaybePromise<void>;
	/** Receives the reasoning so far when `reasoningMode` is "stream". */
	onReasoningStream?: (update: ReasoningUpdate) => MaybePromise<void>;
	/**
	 * Called once when a reasoning block ends: a native thinking block (at its `thinking_end`),
	 * a thinking tag (at its closing tag), or reasoning still open at `message_end`. Native and
	 * tagged reasoning that overlap end once. In every reasoning mode.
	 */
	onReasoningEnd?: () => MaybePromise<void>;
	/** Receives tool summaries and outputs (see `verbose`); deliveries are serialised. */
	onToolResult?: (payload: ReplyPayload) => MaybePromise<void>;
	/**
	 * Called (and awaited) after buffered blocks were handed to `onBlockReply`, before a tool
	 * starts, at `message_end` in "message_end" mode, and at `agent_end`: the place to flush a
	 * delivery pipeline so the user reads the narration before the tool output.
	 */
	onBlockReplyFlush?: () => MaybePromise<void>;
	/** Called when an assistant message starts (a typing indicator). */
	onAssistantMessageStart?: () => MaybePromise<void>;
	/**
	 * Called when a callback throws or rejects; errors never reach the agent. Without it, they go
	 * to `console.error`. It may be async (a remote logger); its own failure is ignored.
	 */
	onCallbackError?: (error: unknown, callback: string) => MaybePromise<void>;
	/** When text becomes block replies (default "text_end"). */
	blockReplyBreak?: BlockReplyBreak;
	/** Block sizes. Absent: each text block (or message) is one block, however long. */
	blockReplyChunking?: BlockChunkingOptions;
	/** How reasoning reaches the channel (default "off"; "on" without `onBlockReply` turns partial replies off). */
	reasoningMode?: ReasoningMode;
	/** Show only text inside `<final>…</final>`. */
	enforceFinalTag?: boolean;
	/**
	 * At `message_end`, rewrite the assistant message so that reasoning written in thinking tags
	 * becomes a `thinking` block before the text, and the text keeps what the user saw (default
	 * true, as in OpenClaw). The message object is changed in place: an `Agent`'s transcript and
	 * the next request see the rewrite. Listeners that run before this subscriber see the message
	 * as the model wrote it.
	 */
	promoteThinkingTags?: boolean;
	/** Tool reporting: "on" sends a summary per call, "full" also its output (default "off"). */
	verbose?: ToolVerbosity;
	/** Overrides `verbose` for tool summaries. */
	shouldEmitToolResult?: () => boolean;
	/** Overrides `verbose` for tool outputs. */
	shouldEmitToolOutput?: () => boolean;
	/** How tool summaries are formatted (default "markdown"). */
	toolResultFormat?: "markdown" | "plain";
	/**
	 * Which tools send messages themselves: tool names (each call sends `message ?? content ??
	 * text` to `to ?? target`) or an extractor. Default: `message` (send actions) and `sessions_send`.
	 */
	messagingTools?: readonly string[] | MessagingToolExtractor;
	/** Which tool calls change something (for `getLastToolError`). */
	classifyToolAction?: (toolName: string, args: unknown) => ToolActionClass;
}

/**
 * The handle `subscribeReplies` returns.
 *
 * @example
 * const replies: ReplySubscription = subscribeReplies(agent, { onBlockReply: (payload) => chat.send(payload.text ?? "") });
 * await agent.prompt("Summarise the thread");
 * console.log(replies.assistantTexts, replies.getUsageTotals());
 * replies.unsubscribe();
 */
export interface ReplySubscription {
	/** Visible answer texts: one per delivered block, or one per message without `onBlockReply`. Live array. */
	assistantTexts: string[];
	/** Finished tool calls, in completion order. Live array. */
	toolMetas: ToolMeta[];
	/**
	 * Stops listening. Idempotent. Rejects pending `waitForCompactionRetry()` calls with an
	 * `AbortError`, and aborts the source when a compaction is in flight (`agent.abort()`, or
	 * `send({ type: "abort" })` for an actor), since nobody would receive its retry. An `Agent`
	 * held back by a callback that has not settled (a channel send that hangs) goes on at once.
	 */
	unsubscribe(): void;
	/** True while a compaction runs or its announced retry has not finished. */
	isCompacting(): boolean;
	/** True while a compaction runs. */
	isCompactionInFlight(): boolean;
	/**
	 * Resolves when no compaction is in flight and no retry is pending; checks once more on the
	 * next microtask, so a compaction that starts right after the call is still awaited. Rejects
	 * with an `AbortError` after `unsubscribe()`.
	 */
	waitForCompactionRetry(): Promise<void>;
	/** Token totals, counted once per assistant message; `undefined` before any. */
	getUsageTotals(): UsageTotals | undefined;
	/** Compactions that produced a result. */
	getCompactionCount(): number;
	/** The tool failure to report, if any. */
	getLastToolError(): ToolErrorInfo | undefined;
	/** Texts messaging tools sent successfully (the last 200). */
	getMessagingToolSentTexts(): string[];
	/** Where messaging tools sent them. */
	getMessagingToolSentTargets(): MessagingToolTarget[];
	/** True when a messaging tool sent some text successfully. */
	didSendViaMessagingTool(): boolean;
}
