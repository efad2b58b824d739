/**
 * `subscribeReplies`: turns the AgentEvents of a run into what a chat channel sends.
 *
 * Events are handled strictly in order. A handler that must wait (the flush before a tool, the
 * flush at `message_end` or `agent_end`) returns a promise; later events queue behind it, and an
 * `Agent` source is held back by it too. Compaction and subscription state live in a small
 * statechart (see subscriber-machine.ts); per-message state lives in a MessageAssembly that is
 * replaced at each `message_start`.
 */
import { createActor } from "xstate";
import type { AgentEvent, AgentMessage, AssistantMessage } from "../types/index.js";
import { type BlockChunkingOptions, checkChunkingOptions } from "./block-chunker.js";
import { shown } from "../agent-input.js";
import { withoutNulls } from "../util/without-nulls.js";
import { CallbackRunner } from "./callback-runner.js";
import { CompactionWait } from "./compaction-wait.js";
import { connectEventSource, type EventSourceConnection, type ReplyEventSource } from "./event-source.js";
import { MessageAssembly, type AssembledBlock } from "./message-assembly.js";
import {
	isCompactingSnapshot,
	isCompactionInFlightSnapshot,
	replySubscriberMachine,
} from "./subscriber-machine.js";
import type { ReplySubscription, SubscribeRepliesParams } from "./subscribe-replies-options.js";
import { isSilentText } from "./reply-directives.js";
import { ToolReporter } from "./tool-reporter.js";
import { SerialEventQueue } from "./serial-event-queue.js";
import { isCommentaryMessage, isCommentaryText, isPhasedText } from "./text-phase.js";
import { contentAsWritten, promoteThinkingTags } from "./thinking-promotion.js";
import type { MaybePromise, PartialReply, ReplyPayload } from "./types.js";
import { UsageAccumulator } from "./usage-totals.js";
import { failedStop } from "../util/stop-reason.js";

type AssistantMessageUpdate = Extract<AgentEvent, { type: "message_update" }>["assistantMessageEvent"];

/**
 * Without `onCallbackError`, a failing callback is still said somewhere: a channel's bug (a
 * TypeError in its send) must not vanish, though it never reaches the agent.
 */
function reportToConsole(error: unknown, callback: string): void {
	console.error(`agentchart/reply: ${callback} failed (pass onCallbackError to handle this yourself):`, error);
}

function isAssistant(message: AgentMessage): message is AssistantMessage {
	return (message as { role?: unknown }).role === "assistant";
}

class ReplySubscriber {
	readonly assistantTexts: string[] = [];
	readonly tools: ToolReporter;
	readonly usage = new UsageAccumulator();
	readonly lifecycle = createActor(replySubscriberMachine);
	readonly #params: SubscribeRepliesParams;
	readonly #breakMode: "text_end" | "message_end";
	readonly #emitPartials: boolean;
	readonly #callbacks: CallbackRunner;
	readonly #events: SerialEventQueue;
	/**
	 * The channel: block replies and tool results, one at a time, in order (a slow send is never
	 * overtaken by the next: the channel would post them out of order); with nothing pending, a
	 * delivery is handed over at once.
	 */
	readonly #blockReplies: SerialEventQueue;
	readonly #live: SerialEventQueue;
	/** Asked of a delivery when its turn comes: none goes out after unsubscribe(). */
	readonly #open = (): boolean => !this.unsubscribed;
	readonly #compactionWait: CompactionWait;
	#assembly: MessageAssembly | undefined;
	/**
	 * With `blockReplyBreak: "message_end"`, what the channel is to be told of tools that started
	 * or ended while the message still streamed (streaming tool execution starts a call as soon as
	 * it streamed): their summaries and outputs go out at the message's end, after its blocks. Sent
	 * at once, a tool's start flushed the message's text before its end, and text that an orphan
	 * `</think>` later in the message makes reasoning was sent to the channel. The calls are tracked
	 * at once: a messaging tool's send must be known when the message's text is checked against it.
	 */
	#heldToolReports: HeldToolReport[] = [];
	// Where the current message's entries of assistantTexts begin.
	#messageTextsStart = 0;
	#connection: EventSourceConnection | undefined;
	// Settles at unsubscribe(): a source held back by a callback that never settles is let go then.
	readonly #detached: Promise<void>;
	#detach: () => void = () => undefined;

	constructor(params: SubscribeRepliesParams) {
		this.#params = params;
		this.#breakMode = params.blockReplyBreak ?? "text_end";
		// Reasoning shown as its own block, without block replies, would leave partials showing a draft.
		this.#emitPartials = !(params.reasoningMode === "on" && !params.onBlockReply);
		this.#callbacks = new CallbackRunner(params.onCallbackError ?? reportToConsole);
		this.#events = new SerialEventQueue((error) => this.#callbacks.report(error, "event handler"));
		this.#blockReplies = new SerialEventQueue((error) => this.#callbacks.report(error, "onBlockReply"));
		this.#live = new SerialEventQueue((error) => this.#callbacks.report(error, "live reply"));
		this.tools = new ToolReporter(params, this.#callbacks, this.#blockReplies, this.#open);
		this.#compactionWait = new CompactionWait(this.lifecycle);
		this.#detached = new Promise<void>((resolve) => {
			this.#detach = resolve;
		});
		this.lifecycle.start();
	}

	connect(source: ReplyEventSource): void {
		this.#connection = connectEventSource(source, (event) => this.receive(event));
	}

	get unsubscribed(): boolean {
		return this.lifecycle.getSnapshot().status === "done";
	}

	/** Runs handlers in order; returns the promise later events (and an Agent) wait for, if any. */
	receive(event: AgentEvent): Promise<void> | undefined {
		if (this.unsubscribed) return undefined;
		const pending = this.#events.run(() => this.#dispatch(event));
		// A hung channel send would otherwise hold an Agent for ever, even after unsubscribe().
		return pending ? Promise.race([pending, this.#detached]) : undefined;
	}

	#dispatch(event: AgentEvent): Promise<void> | undefined {
		if (this.unsubscribed) return undefined;
		switch (event.type) {
			case "message_start":
				if (isAssistant(event.message)) this.#startMessage(event.replayed === true);
				return undefined;
			case "message_update":
				if (isAssistant(event.message)) this.#updateMessage(event.message, event.assistantMessageEvent);
				return undefined;
			case "message_end":
				return isAssistant(event.message) ? this.#endMessage(event.message, event.replayed === true) : undefined;
			case "tool_execution_start":
			case "tool_execution_end":
				if (!event.replayed && this.#holdsToolEvents()) {
					this.#holdToolEvent(event);
					return undefined;
				}
				return this.#takeToolEvent(event);
			case "auto_compaction_start":
				this.lifecycle.send({ type: "compaction.start" });
				return undefined;
			case "auto_compaction_end":
				this.lifecycle.send({
					type: "compaction.end",
					willRetry: event.willRetry,
					completed: event.result !== undefined && !event.aborted,
				});
				if (event.willRetry) this.#resetForRetry();
				return undefined;
			case "agent_end":
				return this.#endAgent();
			default:
				return undefined;
		}
	}

	// ---- messages ----

	#startMessage(retold = false): MessageAssembly {
		this.lifecycle.send({ type: "message.start" });
		const index = this.lifecycle.getSnapshot().context.assistantMessageIndex;
		this.#messageTextsStart = this.assistantTexts.length;
		this.#assembly = new MessageAssembly(index, {
			enforceFinalTag: this.#params.enforceFinalTag === true,
			chunking: this.#params.blockReplyChunking,
		});
		const onAssistantMessageStart = this.#params.onAssistantMessageStart;
		if (onAssistantMessageStart && !retold) this.#sendLive("onAssistantMessageStart", () => onAssistantMessageStart());
		return this.#assembly;
	}

	#updateMessage(message: AssistantMessage, update: AssistantMessageUpdate): void {
		// A message-level phase may sit on the partial or on the event's copy of it.
		const partial = "partial" in update ? update.partial : message;
		const phaseSource = isCommentaryMessage(partial) ? partial : message;
		const assembly = this.#assembly ?? this.#joinMessage(partial, update, phaseSource);
		switch (update.type) {
			case "text_start":
			case "text_delta":
			case "text_end": {
				const content = update.partial.content[update.contentIndex];
				const block = content?.type === "text" ? content : undefined;
				const commentary = isCommentaryText(block, phaseSource);
				const kind = update.type === "text_start" ? "start" : update.type === "text_delta" ? "delta" : "end";
				const text =
					update.type === "text_delta" ? update.delta : update.type === "text_end" ? update.content : "";
				// The block as the partial has it is read to tell a replaced commentary (see MessageAssembly):
				// only for phased text, whose provider narrates; reading it for every delta of any other
				// stream would copy the growing text each time.
				assembly.ingestText(update.contentIndex, kind, text, { commentary, blockText: isPhasedText(block, phaseSource) ? block?.text : undefined });
				if (update.type === "text_end") assembly.endTextBlock(update.contentIndex);
				break;
			}
			case "thinking_delta":
				if (!isCommentaryMessage(phaseSource)) assembly.ingestThinking(update.contentIndex, "delta", update.delta);
				break;
			case "thinking_end":
				if (!isCommentaryMessage(phaseSource)) assembly.ingestThinking(update.contentIndex, "end", update.content);
				break;
			default:
				return;
		}
		this.#streamReasoning(assembly);
		this.#reportReasoningEnds(assembly);
		this.#emitPartial(assembly);
		if (!this.#params.onBlockReply || this.#breakMode !== "text_end") return;
		if (this.#params.blockReplyChunking) this.#deliverBlocks(assembly, assembly.drainBlocks(false));
		if (update.type === "text_end") this.#deliverBlocks(assembly, assembly.drainBlocks(true));
	}

	/**
	 * Subscribed while a message streamed: its first event seen is an update. The blocks before
	 * the one streaming have ended, and are taken whole from the partial message; the one
	 * streaming is taken whole at its end. The channel gets the message from its start, in order.
	 */
	#joinMessage(partial: AssistantMessage, update: AssistantMessageUpdate, phaseSource: AssistantMessage): MessageAssembly {
		const assembly = this.#startMessage();
		const contentIndex = "contentIndex" in update ? update.contentIndex : 0;
		if (update.type === "text_delta" || update.type === "thinking_delta") assembly.joinMidBlock(contentIndex);
		partial.content.slice(0, contentIndex).forEach((block, index) => {
			if (block.type === "text") {
				assembly.ingestText(index, "end", block.text, { commentary: isCommentaryText(block, phaseSource) });
				assembly.endTextBlock(index);
			} else if (block.type === "thinking" && !isCommentaryMessage(phaseSource)) assembly.ingestThinking(index, "end", block.thinking);
		});
		// Ended blocks are blocks of their own, as they would have been at their text_end.
		if (contentIndex > 0 && this.#breakMode === "text_end" && this.#params.onBlockReply) this.#deliverBlocks(assembly, assembly.drainBlocks(true));
		return assembly;
	}

	#endMessage(message: AssistantMessage, retold: boolean): Promise<void> | undefined {
		const current = this.#assembly;
		const assembly = current && !current.ended ? current : current ? undefined : this.#startMessage(retold);
		// Usage is keyed by the assembly: a repeated message_end cannot count twice.
		this.usage.commit(message.usage, assembly ?? current ?? message);
		if (!assembly) {
			this.#promoteThinkingTags(message);
			return undefined;
		}
		if (retold) {
			// Retold from a restored run's journal: recorded as without block replies, sent nowhere
			// (the channel had it from the process before the restart).
			assembly.finish(failedStop(message.stopReason));
			this.lifecycle.send({ type: "message.end" });
			this.#recordFinalText(message);
			this.#promoteThinkingTags(message);
			return undefined;
		}
		const commentaryMessage = isCommentaryMessage(message);
		// Another subscriber before this one may have promoted the message's thinking tags already.
		const content = contentAsWritten(message);
		const lastText = content.findLastIndex((block) => block.type === "text");
		content.forEach((block, index) => {
			if (block.type === "text") {
				assembly.ingestText(index, "end", block.text, { commentary: isCommentaryText(block, message) });
				// Each text block is Markdown of its own, also when the message comes whole (its
				// last one ends with the message).
				if (index < lastText) assembly.endTextBlock(index);
			} else if (block.type === "thinking" && !commentaryMessage) assembly.ingestThinking(index, "end", block.thinking);
		});
		assembly.finish(failedStop(message.stopReason));
		this.lifecycle.send({ type: "message.end" });
		this.#emitPartial(assembly);
		this.#streamReasoning(assembly);
		this.#reportReasoningEnds(assembly);
		if (this.#params.onBlockReply) this.#deliverMessageEnd(assembly);
		else this.#recordFinalText(message);
		// After the message's text was read as the model wrote it, and before anyone builds the
		// next request from the transcript.
		this.#promoteThinkingTags(message);
		const flushed = this.#breakMode === "message_end" && this.#params.onBlockReplyFlush ? this.#flushChannel() : undefined;
		return this.#takeHeldToolReports(flushed);
	}

	#promoteThinkingTags(message: AssistantMessage): void {
		if (this.#params.promoteThinkingTags !== false) promoteThinkingTags(message);
	}

	/**
	 * Without block replies, the answer recorded is the final message's own visible text, read as
	 * the block path reads it: block by block, so a fence one text block leaves open is closed at
	 * its end and does not turn the next block's reasoning tags into code that stays visible.
	 */
	#recordFinalText(message: AssistantMessage): void {
		const final = new MessageAssembly(0, { enforceFinalTag: this.#params.enforceFinalTag === true, chunking: undefined });
		const content = contentAsWritten(message);
		// As a message that comes whole is read (see above): the last text block ends with the message.
		const lastText = content.findLastIndex((block) => block.type === "text");
		content.forEach((block, index) => {
			if (block.type !== "text") return;
			final.ingestText(index, "end", block.text, { commentary: isCommentaryText(block, message) });
			if (index < lastText) final.endTextBlock(index);
		});
		final.finish(failedStop(message.stopReason));
		if (final.isSilent) return;
		// One block, as `blockReplyBreak: "message_end"` would send it: fences closed, and a block that
		// is the silent token alone (a glued token's remains: "NO_REPLYNO_REPLY") left out, as #deliver does.
		const text = final
			.drainBlocks(true)
			.map((block) => block.text)
			.filter((blockText) => blockText !== "" && !isSilentText(blockText))
			.join("\n\n");
		if (text.trim() !== "") this.assistantTexts.push(text);
	}

	#deliverMessageEnd(assembly: MessageAssembly): void {
		const reasoning =
			this.#params.reasoningMode === "on" ? assembly.formattedReasoning : "";
		// Reasoning goes before the answer when the whole answer is sent now, after what was already sent otherwise.
		const reasoningFirst = reasoning !== "" && this.#breakMode === "message_end" && assembly.deliveredBlocks === 0;
		if (reasoningFirst) this.#deliver(assembly, { text: reasoning, isReasoning: true });
		this.#deliverBlocks(assembly, assembly.drainBlocks(true));
		if (reasoning !== "" && !reasoningFirst) this.#deliver(assembly, { text: reasoning, isReasoning: true });
	}

	#emitPartial(assembly: MessageAssembly): void {
		if (!this.#params.onPartialReply || !this.#emitPartials) {
			// Nobody reads the text added since: not kept.
			assembly.takeUnshown();
			return;
		}
		// Half an emoji at the end waits, and whatever this partial had to say with it: the next delta
		// brings the second half and shows both. (A partial without the half would be a slice of the
		// growing text, which copies all of it.)
		if (assembly.waitsForSecondHalf) return;
		// The clean text only grows, except after a retraction: the delta is what it grew by, not a diff.
		const text = assembly.cleanText;
		const media = assembly.mediaCount;
		const retracted = assembly.takeRetracted();
		const shown = assembly.partialLength;
		if (!retracted && text.length === shown && media === assembly.lastPartialMediaCount) return;
		if (text === "" && media === 0 && shown === 0) return;
		const delta = assembly.takeUnshown();
		const partial: PartialReply = retracted ? { text, delta: "", replace: true } : { text, delta };
		if (media > 0) partial.mediaUrls = assembly.mediaUrls;
		assembly.lastPartialMediaCount = media;
		const onPartialReply = this.#params.onPartialReply;
		if (onPartialReply) this.#sendLive("onPartialReply", () => onPartialReply(partial));
	}

	#streamReasoning(assembly: MessageAssembly): void {
		if (this.#params.reasoningMode !== "stream" || !this.#params.onReasoningStream) return;
		if (assembly.reasoningVersion === assembly.streamedReasoningVersion) return;
		assembly.streamedReasoningVersion = assembly.reasoningVersion;
		const text = assembly.formattedReasoning;
		if (text === "" || text === assembly.streamedReasoning) return;
		assembly.streamedReasoning = text;
		const onReasoningStream = this.#params.onReasoningStream;
		this.#sendLive("onReasoningStream", () => onReasoningStream({ text }));
	}

	#reportReasoningEnds(assembly: MessageAssembly): void {
		const ends = assembly.takeReasoningEnds();
		const onReasoningEnd = this.#params.onReasoningEnd;
		if (!onReasoningEnd) return;
		for (let end = 0; end < ends; end += 1) this.#sendLive("onReasoningEnd", () => onReasoningEnd());
	}

	/**
	 * The live message's callbacks, one at a time and in order (a slow partial reply is never
	 * overtaken by the next, which would leave the live message showing an older text), tracked as
	 * block replies are: the flush before a tool and the run's end wait for them. A callback that
	 * answers synchronously is called at once.
	 */
	#sendLive(name: string, callback: () => MaybePromise<void>): void {
		this.#callbacks.deliverInOrder(name, this.#live, callback, this.#open);
	}

	// ---- block delivery ----

	#deliverBlocks(assembly: MessageAssembly, blocks: AssembledBlock[]): void {
		for (const block of blocks) {
			const payload: ReplyPayload = { text: block.text };
			if (block.mediaUrls.length > 0) payload.mediaUrls = block.mediaUrls;
			if (block.directives.replyToId !== undefined) payload.replyToId = block.directives.replyToId;
			if (block.directives.replyToCurrent) payload.replyToCurrent = true;
			if (block.directives.replyToTag) payload.replyToTag = true;
			if (block.directives.audioAsVoice) payload.audioAsVoice = true;
			this.#deliver(assembly, payload);
		}
	}

	#deliver(assembly: MessageAssembly, payload: ReplyPayload): void {
		const onBlockReply = this.#params.onBlockReply;
		if (!onBlockReply) return;
		let text = payload.text ?? "";
		// The model repeating what a messaging tool already sent is not sent twice.
		if (!payload.isReasoning && text !== "") text = this.tools.tracker.sends.beyondSent(text);
		// The silent token cut into a block of its own (after a paragraph the chunker sent) says nothing.
		if (!payload.isReasoning && isSilentText(text)) text = "";
		// A silent answer (NO_REPLY) sends nothing, the media it names included.
		const media = payload.isReasoning || !assembly.silentSoFar ? (payload.mediaUrls ?? []) : [];
		if (text === "" && media.length === 0) return;
		const delivered: ReplyPayload = { ...payload };
		if (text === "") delete delivered.text;
		else if (text !== payload.text) delivered.text = text;
		if (!payload.isReasoning && text !== "") {
			this.assistantTexts.push(text);
			assembly.deliveredBlocks += 1;
		}
		const context = { assistantMessageIndex: assembly.index };
		// Dropped when it comes to its turn after unsubscribe(): nobody is listening any more.
		this.#callbacks.deliverInOrder("onBlockReply", this.#blockReplies, () => onBlockReply(delivered, context), this.#open);
	}

	/** Sends what the chunker holds, waits for async block replies, then the channel flush. */
	#flushChannel(): Promise<void> | undefined {
		if (this.#assembly && this.#params.onBlockReply) this.#deliverBlocks(this.#assembly, this.#assembly.drainBlocks(true));
		const waiting = this.#callbacks.hasTracked ? this.#callbacks.settleTracked() : undefined;
		const flush = this.#params.onBlockReplyFlush;
		if (!flush) return waiting;
		if (waiting) return waiting.then(() => this.#callbacks.callAsync("onBlockReplyFlush", flush));
		// A synchronous flush keeps the event synchronous: the tool starts in the same tick.
		return this.#callbacks.callMaybeAsync("onBlockReplyFlush", flush);
	}

	// ---- tools ----

	/** Whether what the channel is told of a tool event now waits for the message's end (see `#heldToolReports`). */
	#holdsToolEvents(): boolean {
		return this.#breakMode === "message_end" && Boolean(this.#params.onBlockReply) && this.#assembly !== undefined && !this.#assembly.ended;
	}

	#takeToolEvent(event: Extract<AgentEvent, { type: "tool_execution_start" | "tool_execution_end" }>): Promise<void> | undefined {
		// A call a restored run retells from its journal: tracked, not reported to the channel again.
		if (event.replayed) {
			if (event.type === "tool_execution_start") this.tools.tracker.start(event.toolCallId, event.toolName, event.args);
			else this.tools.tracker.end(event.toolCallId, event.toolName, event.result, event.isError);
			return undefined;
		}
		if (event.type === "tool_execution_start") return this.#startTool(event.toolCallId, event.toolName, event.args);
		this.tools.end(event.toolCallId, event.toolName, event.result, event.isError);
		return undefined;
	}

	/** Tracks the call now; what the channel is told of it waits for the message's end. */
	#holdToolEvent(event: Extract<AgentEvent, { type: "tool_execution_start" | "tool_execution_end" }>): void {
		if (event.type === "tool_execution_start") {
			this.tools.tracker.start(event.toolCallId, event.toolName, event.args);
			this.#heldToolReports.push({ kind: "start", toolName: event.toolName, args: event.args });
		} else {
			const args = this.tools.tracker.end(event.toolCallId, event.toolName, event.result, event.isError);
			this.#heldToolReports.push({ kind: "end", toolName: event.toolName, args, result: event.result });
		}
	}

	/** What was held while the message streamed, in order, once its blocks are out. */
	#takeHeldToolReports(after: Promise<void> | undefined): Promise<void> | undefined {
		const held = this.#heldToolReports;
		if (held.length === 0) return after;
		this.#heldToolReports = [];
		let pending = after;
		for (const report of held) {
			const take = (): Promise<void> | undefined => {
				if (report.kind === "start") return this.#announceTool(report.toolName, report.args);
				this.tools.report(report.toolName, report.args, report.result);
				return undefined;
			};
			pending = pending ? pending.then(take) : take();
		}
		return pending;
	}

	#startTool(toolCallId: string, toolName: string, args: unknown): Promise<void> | undefined {
		this.tools.tracker.start(toolCallId, toolName, args);
		return this.#announceTool(toolName, args);
	}

	#announceTool(toolName: string, args: unknown): Promise<void> | undefined {
		// The user reads the narration before the tool's output: flush first, then the summary.
		const flushed = this.#flushChannel();
		if (flushed) return flushed.then(() => this.tools.announce(toolName, args));
		this.tools.announce(toolName, args);
		return undefined;
	}

	// ---- run end, compaction ----

	#endAgent(): Promise<void> | undefined {
		if (this.#assembly && this.#params.onBlockReply) this.#deliverBlocks(this.#assembly, this.#assembly.drainBlocks(true));
		// Settle the compaction wait before slow channel flushes, so a waiting caller is not held up by them.
		this.lifecycle.send({ type: "agent.end" });
		return this.#flushChannel();
	}

	/**
	 * The retry repeats only the call whose reply overflowed, in a new turn of the same run: what
	 * the earlier turns said, ran and sent stays true (forgetting a messaging tool's send would let
	 * the retried answer repeat it). Only the overflowing reply leaves the transcript, and its texts
	 * leave `assistantTexts`.
	 */
	#resetForRetry(): void {
		this.assistantTexts.length = this.#messageTextsStart;
		this.#assembly = undefined;
	}

	waitForCompactionRetry(): Promise<void> {
		return this.#compactionWait.whenSettled();
	}

	isCompacting(): boolean {
		return isCompactingSnapshot(this.lifecycle.getSnapshot());
	}

	isCompactionInFlight(): boolean {
		return isCompactionInFlightSnapshot(this.lifecycle.getSnapshot());
	}

	unsubscribe(): void {
		if (this.unsubscribed) return;
		const inFlight = this.isCompactionInFlight();
		this.lifecycle.send({ type: "unsubscribe" });
		if (inFlight) this.#callbacks.call("source.abort", () => this.#connection?.abort());
		this.#connection?.detach();
		this.#detach();
	}
}

/** What the channel is still to be told of a tool event held while its message streamed. */
type HeldToolReport = { kind: "start"; toolName: string; args: unknown } | { kind: "end"; toolName: string; args: unknown; result: unknown };

const FUNCTION_OPTIONS = [
	"onBlockReply",
	"onPartialReply",
	"onReasoningStream",
	"onReasoningEnd",
	"onToolResult",
	"onBlockReplyFlush",
	"onAssistantMessageStart",
	"onCallbackError",
	"shouldEmitToolResult",
	"shouldEmitToolOutput",
	"classifyToolAction",
] as const satisfies readonly (keyof SubscribeRepliesParams)[];

const CHOICES = {
	blockReplyBreak: ["text_end", "message_end"],
	reasoningMode: ["off", "on", "stream"],
	verbose: ["off", "on", "full"],
	toolResultFormat: ["markdown", "plain"],
} as const satisfies Partial<Record<keyof SubscribeRepliesParams, readonly string[]>>;

/**
 * The options as the subscriber reads them (fields given as `null` left out). Refuses, naming
 * it, an option that would fail only once text streams: there, a chunker that cannot cut would
 * hold the agent's event for ever, and a misspelt mode would quietly act as another.
 */
function readParams(raw: SubscribeRepliesParams): SubscribeRepliesParams {
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new TypeError(`subscribeReplies: the options must be an object, got ${shown(raw)}`);
	// null is none for an optional setting, as leaving it out (a value read from a config that has none).
	const params = withoutNulls(raw);
	const chunking: unknown = params.blockReplyChunking;
	if (chunking !== undefined) {
		if (typeof chunking !== "object" || chunking === null || Array.isArray(chunking)) throw new TypeError(`subscribeReplies: blockReplyChunking must be an object of block sizes ({ minChars, maxChars }), got ${shown(chunking)}`);
		const sizes = withoutNulls(chunking as BlockChunkingOptions);
		checkChunkingOptions(sizes);
		if (sizes !== chunking) return checkParams({ ...params, blockReplyChunking: sizes });
	}
	return checkParams(params);
}

function checkParams(params: SubscribeRepliesParams): SubscribeRepliesParams {
	// A callback that is not a function failed at every delivery, each reported as a TypeError after the fact.
	for (const option of FUNCTION_OPTIONS) {
		const value: unknown = params[option];
		if (value != null && typeof value !== "function") throw new TypeError(`subscribeReplies: ${option} must be a function, got ${shown(value)}`);
	}
	for (const option of ["enforceFinalTag", "promoteThinkingTags"] as const) {
		const value: unknown = params[option];
		if (value != null && typeof value !== "boolean") throw new TypeError(`subscribeReplies: ${option} must be true or false, got ${shown(value)}`);
	}
	const messaging: unknown = params.messagingTools;
	if (messaging != null && typeof messaging !== "function" && !(Array.isArray(messaging) && messaging.every((name) => typeof name === "string"))) {
		throw new TypeError(`subscribeReplies: messagingTools must be a list of tool names or a function, got ${shown(messaging)}`);
	}
	for (const [option, choices] of Object.entries(CHOICES) as [keyof typeof CHOICES, readonly string[]][]) {
		const value: unknown = params[option];
		if (value !== undefined && !choices.includes(value as string)) {
			throw new RangeError(`subscribeReplies: ${option} must be ${choices.map((choice) => JSON.stringify(choice)).join(", ")}; got ${JSON.stringify(value)}`);
		}
	}
	return params;
}

/**
 * Listens to an agent (or a bare agent-machine actor) and assembles chat replies: block replies,
 * partial snapshots, reasoning, tool summaries, with reasoning tags and directives removed and
 * nothing sent twice.
 *
 * @throws {RangeError} (or `TypeError`) at once, before it listens, for options that cannot
 * work: `blockReplyChunking` sizes that are `NaN` or not numbers, an unknown
 * `breakPreference`, `blockReplyBreak`, `reasoningMode`, `verbose` or `toolResultFormat`.
 *
 * @example
 * const replies = subscribeReplies(agent, {
 *   blockReplyChunking: { minChars: 200, maxChars: 1500 },
 *   onBlockReply: (payload) => channel.send(payload.text ?? "", { replyTo: payload.replyToId }),
 *   onPartialReply: ({ text }) => liveMessage.edit(text),
 * });
 * await agent.prompt("Summarise the release notes");
 * await replies.waitForCompactionRetry();
 * replies.unsubscribe();
 */
export function subscribeReplies(source: ReplyEventSource, params: SubscribeRepliesParams = {}): ReplySubscription {
	if (typeof source !== "object" || source === null) throw new TypeError(`subscribeReplies: the source must be an Agent or an agent machine actor, got ${shown(source)}`);
	const given = readParams(params);
	const subscriber = new ReplySubscriber(given);
	subscriber.connect(source);
	return {
		assistantTexts: subscriber.assistantTexts,
		toolMetas: subscriber.tools.tracker.metas,
		unsubscribe: () => subscriber.unsubscribe(),
		isCompacting: () => subscriber.isCompacting(),
		isCompactionInFlight: () => subscriber.isCompactionInFlight(),
		waitForCompactionRetry: () => subscriber.waitForCompactionRetry(),
		getUsageTotals: () => subscriber.usage.totals,
		getCompactionCount: () => subscriber.lifecycle.getSnapshot().context.compactionCount,
		getLastToolError: () => subscriber.tools.tracker.lastError,
		getMessagingToolSentTexts: () => subscriber.tools.tracker.sends.texts,
		getMessagingToolSentTargets: () => subscriber.tools.tracker.sends.targets,
		didSendViaMessagingTool: () => subscriber.tools.tracker.sends.texts.length > 0,
	};
}
