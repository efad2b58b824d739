/**
 * Reply assembly for chat channels: block replies, partial snapshots, reasoning, directives,
 * messaging-tool dedupe and delivery. See `subscribeReplies`.
 */
// @ts-nocheck

export { subscribeReplies } from "./subscribe-replies.js";
export type { ReplySubscription, SubscribeRepliesParams } from "./subscribe-replies-options.js";
export { ReplySubscriptionAbortedError } from "./errors.js";
export type { AgentEventEmitter, AgentEventSubscribable, ReplyEventSource } from "./event-source.js";
export { BlockChunker, DEFAULT_BLOCK_CHUNKING } from "./block-chunker.js";
export type { BlockChunk, BlockChunkingOptions, BreakPreference, DrainOptions, FollowingBreak } from "./block-chunker.js";
export { createBlockReplyCoalescer } from "./block-reply-coalescer.js";
export type { BlockReplyCoalescer, BlockReplyCoalescerOptions, BlockReplyCoalescing } from "./block-reply-coalescer.js";
export {
	createBlockReplyContentKey,
	createBlockReplyPayloadKey,
	createBlockReplyPipeline,
	DEFAULT_BLOCK_REPLY_TIMEOUT_MS,
} from "./block-reply-pipeline.js";
export type { BlockReplyDeliveryReport, BlockReplyPipeline, BlockReplyPipelineOptions } from "./block-reply-pipeline.js";
export { filterFinalPayloads } from "./final-payloads.js";
export type { DeliveredContent } from "./final-payloads.js";
export { ReasoningTagFilter, stripReasoningTags } from "./reasoning-tags.js";
export type { ReasoningTagOptions, ReasoningTagOutput } from "./reasoning-tags.js";
export { parseReplyDirectives, ReplyDirectiveFilter } from "./reply-directives.js";
export type { ParsedReply, ReplyDirectives } from "./reply-directives.js";
export { formatReasoningMessage } from "./reasoning-format.js";
export { promoteThinkingTags } from "./thinking-promotion.js";
export { isCommentaryMessage, isCommentaryText } from "./text-phase.js";
export { isMessagingToolDuplicate, MessagingSendLog, normalizeTextForComparison } from "./messaging-dedupe.js";
export { classifyToolAction, defaultMessagingToolExtractor, messagingToolsByName } from "./tool-tracker.js";
export { formatToolSummary } from "./tool-descriptions.js";
export type * from "./types.js";
