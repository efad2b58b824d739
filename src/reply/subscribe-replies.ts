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
import { connectEventSource, type EventSourceConnection, type ReplyEventSource } from "./event-source.js";
import { isCommentaryText, MessageAssembly, type AssembledBlock } from "./message-assembly.js";
import { formatReasoningMessage } from "./reasoning-format.js";
import { stripReasoningTags } from "./reasoning-tags.js";
import { parseReplyDirectives } from "./reply-directives.js";
import {
	isCompactingSnapshot,
	isCompactionInFlightSnapshot,
	replySubscriberMachine,
} from "./subscriber-machine.js";
import type { ReplySubscription, SubscribeRepliesParams } from "./subscribe-replies-options.js";
import { formatToolOutput, formatToolSummary } from "./tool-descriptions.js";
import {
	classifyToolAction,
	defaultMessagingToolExtractor,
	messagingToolsByName,
	ToolTracker,
} from "./tool-tracker.js";
import type { MaybePromise, ReplyPayload } from "./types.js";
import { UsageAccumulator } from "./usage-totals.js";

/** The error `waitForCompactionRetry()` rejects with after `unsubscribe()`. */
export class ReplySubscriptionAbortedError extends Error {
	override readonly name = "AbortError";
	constructor(message = "Unsubscribed during compaction wait") {
		super(message);
	}
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
	return typeof (value as PromiseLike<unknown> | undefined)?.then === "function";
}

function isAssistant(message: AgentMessage): message is AssistantMessage {
	return (message as { role?: unknown }).role === "assistant";
}

class ReplySubscriber {
	readonly assistantTexts: string[] = [];
	readonly tools: ToolTracker;
	readonly usage = new UsageAccumulator();
	readonly lifecycle = createActor(replySubscriberMachine);
	readonly #params: SubscribeRepliesParams;
	readonly #breakMode: "text_end" | "message_end";
	readonly #emitPartials: boolean;
	readonly #pendingDeliveries = new Set<Promise<unknown>>();
	readonly #toolArgs = new Map<string, unknown>();
	readonly #summarised = new Set<string>();
	#assembly: MessageAssembly | undefined;
	#eventChain: Promise<void> | undefined;
	#toolResultChain: Promise<void> = Promise.resolve();
	#toolResultsInFlight = 0;
	#waiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
	#connection: EventSourceConnection | undefined;

	constructor(params: SubscribeRepliesParams) {
		this.#params = params;
		this.#breakMode = params.blockReplyBreak ?? "text_end";
		// Reasoning shown as its own block, without block replies, would leave partials showing a draft.
		this.#emitPartials = !(params.reasoningMode === "on" && !params.onBlockReply);
		const messaging = params.messagingTools;
		this.tools = new ToolTracker({
			messagingTool:
				messaging === undefined
					? defaultMessagingToolExtractor
					: typeof messaging === "function"
						? messaging
						: messagingToolsByName(messaging),
			classifyAction: params.classifyToolAction ?? classifyToolAction,
		});
		this.lifecycle.subscribe(() => this.#settleWaiters());
		this.lifecycle.start();
	}

	connect(source: ReplyEventSource): void {
		this.#connection = connectEventSource(source, (event) => this.receive(event));
	}

	get unsubscribed(): boolean {
		return this.lifecycle.getSnapshot().status === "done";
	}

	/** Runs handlers in order; returns the promise later events wait for, if any. */
	receive(event: AgentEvent): Promise<void> | undefined {
		if (this.unsubscribed) return undefined;
		if (this.#eventChain) {
			const chained = this.#eventChain.then(() => this.#run(event));
			return this.#track(chained);
		}
		const result = this.#run(event);
		return result ? this.#track(result) : undefined;
	}

	#track(task: Promise<void>): Promise<void> {
		const tracked: Promise<void> = task
			.catch((error: unknown) => this.#report(error, "event handler"))
			.finally(() => {
				if (this.#eventChain === tracked) this.#eventChain = undefined;
			});
		this.#eventChain = tracked;
		return tracked;
	}

	#run(event: AgentEvent): Promise<void> | undefined {
		try {
			return this.#dispatch(event);
		} catch (error) {
			this.#report(error, `${event.type} handler`);
			return undefined;
		}
	}

	#dispatch(event: AgentEvent): Promise<void> | undefined {
		if (this.unsubscribed) return undefined;
		switch (event.type) {
			case "message_start":
				if (isAssistant(event.message)) this.#startMessage();
				return undefined;
			case "message_update":
				if (isAssistant(event.message)) this.#updateMessage(event.assistantMessageEvent);
				return undefined;
			case "message_end":
				return isAssistant(event.message) ? this.#endMessage(event.message) : undefined;
			case "tool_execution_start":
				return this.#startTool(event.toolCallId, event.toolName, event.args);
			case "tool_execution_end":
				this.#endTool(event.toolCallId, event.toolName, event.result, event.isError);
				return undefined;
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

	#startMessage(): MessageAssembly {
		this.lifecycle.send({ type: "message.start" });
		const index = this.lifecycle.getSnapshot().context.assistantMessageIndex;
		this.#assembly = new MessageAssembly(index, {
			enforceFinalTag: this.#params.enforceFinalTag === true,
			chunking: this.#params.blockReplyChunking,
		});
		this.#call("onAssistantMessageStart", () => this.#params.onAssistantMessageStart?.());
		return this.#assembly;
	}

	#updateMessage(update: Extract<AgentEvent, { type: "message_update" }>["assistantMessageEvent"]): void {
		const assembly = this.#assembly ?? this.#startMessage();
		switch (update.type) {
			case "text_start":
			case "text_delta":
			case "text_end": {
				const block = update.partial.content[update.contentIndex];
				const commentary = block?.type === "text" && isCommentaryText(block);
				const kind = update.type === "text_start" ? "start" : update.type === "text_delta" ? "delta" : "end";
				const text =
					update.type === "text_delta" ? update.delta : update.type === "text_end" ? update.content : "";
				assembly.ingestText(update.contentIndex, kind, text, commentary);
				break;
			}
			case "thinking_delta":
				assembly.ingestThinking(update.contentIndex, "delta", update.delta);
				break;
			case "thinking_end":
				assembly.ingestThinking(update.contentIndex, "end", update.content);
				break;
			default:
				return;
		}
		this.#streamReasoning(assembly);
		this.#emitPartial(assembly);
		if (!this.#params.onBlockReply || this.#breakMode !== "text_end") return;
		if (this.#params.blockReplyChunking) this.#deliverBlocks(assembly, assembly.drainBlocks(false));
		if (update.type === "text_end") this.#deliverBlocks(assembly, assembly.drainBlocks(true));
	}

	#endMessage(message: AssistantMessage): Promise<void> | undefined {
		const current = this.#assembly;
		const assembly = current && !current.ended ? current : current ? undefined : this.#startMessage();
		// Usage is keyed by the assembly: a repeated message_end cannot count twice.
		this.usage.commit(message.usage, assembly ?? current ?? message);
		if (!assembly) return undefined;
		message.content.forEach((block, index) => {
			if (block.type === "text") assembly.ingestText(index, "end", block.text, isCommentaryText(block));
			else if (block.type === "thinking") assembly.ingestThinking(index, "end", block.thinking);
		});
		assembly.finish();
		this.lifecycle.send({ type: "message.end" });
		this.#emitPartial(assembly);
		this.#streamReasoning(assembly);
		if (this.#params.onBlockReply) this.#deliverMessageEnd(assembly);
		else this.#recordFinalText(message);
		if (this.#breakMode === "message_end" && this.#params.onBlockReplyFlush) return this.#flushChannel();
		return undefined;
	}

	/** Without block replies, the answer recorded is the final message's own visible text. */
	#recordFinalText(message: AssistantMessage): void {
		const raw = message.content
			.filter((block) => block.type === "text" && !isCommentaryText(block))
			.map((block) => (block.type === "text" ? block.text : ""))
			.join("\n\n");
		const visible = stripReasoningTags(raw, { enforceFinalTag: this.#params.enforceFinalTag === true }).visible;
		const parsed = parseReplyDirectives(visible);
		if (!parsed.isSilent && parsed.text.trim() !== "") this.assistantTexts.push(parsed.text.trim());
	}

	#deliverMessageEnd(assembly: MessageAssembly): void {
		const reasoning =
			this.#params.reasoningMode === "on" ? formatReasoningMessage(assembly.reasoningText) : "";
		// Reasoning goes before the answer when the whole answer is sent now, after what was already sent otherwise.
		const reasoningFirst = reasoning !== "" && this.#breakMode === "message_end" && assembly.deliveredBlocks === 0;
		if (reasoningFirst) this.#deliver(assembly, { text: reasoning, isReasoning: true });
		this.#deliverBlocks(assembly, assembly.drainBlocks(true));
		if (reasoning !== "" && !reasoningFirst) this.#deliver(assembly, { text: reasoning, isReasoning: true });
	}

	#emitPartial(assembly: MessageAssembly): void {
		if (!this.#params.onPartialReply || !this.#emitPartials) return;
		const text = assembly.cleanText.trimEnd();
		const media = assembly.mediaUrls;
		const retracted = assembly.takeRetracted();
		const previous = assembly.lastPartialText;
		if (!retracted && text === previous && media.length === assembly.lastPartialMediaCount) return;
		if (text === "" && media.length === 0 && previous === "") return;
		const replace = retracted || !text.startsWith(previous);
		const partial = replace
			? { text, delta: "", replace: true as const }
			: { text, delta: text.slice(previous.length) };
		assembly.lastPartialText = text;
		assembly.lastPartialMediaCount = media.length;
		this.#call("onPartialReply", () =>
			this.#params.onPartialReply?.(media.length > 0 ? { ...partial, mediaUrls: media } : partial),
		);
	}

	#streamReasoning(assembly: MessageAssembly): void {
		if (this.#params.reasoningMode !== "stream" || !this.#params.onReasoningStream) return;
		const text = formatReasoningMessage(assembly.reasoningText);
		if (text === "" || text === assembly.lastReasoningStreamed) return;
		assembly.lastReasoningStreamed = text;
		this.#call("onReasoningStream", () => this.#params.onReasoningStream?.({ text }));
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
		if (!payload.isReasoning && text !== "" && this.tools.sends.isDuplicate(text)) text = "";
		const media = payload.mediaUrls ?? [];
		if (text === "" && media.length === 0) return;
		const delivered: ReplyPayload = { ...payload };
		if (text === "") delete delivered.text;
		if (!payload.isReasoning && text !== "") {
			this.assistantTexts.push(text);
			assembly.deliveredBlocks += 1;
		}
		this.#call("onBlockReply", () => onBlockReply(delivered, { assistantMessageIndex: assembly.index }), true);
	}

	/** Sends what the chunker holds, waits for async block replies, then the channel flush. */
	#flushChannel(): Promise<void> | undefined {
		if (this.#assembly && this.#params.onBlockReply) this.#deliverBlocks(this.#assembly, this.#assembly.drainBlocks(true));
		const waiting = this.#pendingDeliveries.size > 0 ? this.#settleDeliveries() : undefined;
		const flush = this.#params.onBlockReplyFlush;
		if (!flush) return waiting;
		if (waiting) return waiting.then(() => this.#callAsync("onBlockReplyFlush", flush));
		return this.#callAsync("onBlockReplyFlush", flush);
	}

	async #settleDeliveries(): Promise<void> {
		while (this.#pendingDeliveries.size > 0) await Promise.allSettled([...this.#pendingDeliveries]);
	}

	// ---- tools ----

	#startTool(toolCallId: string, toolName: string, args: unknown): Promise<void> | undefined {
		const flushed = this.#flushChannel();
		const start = (): void => {
			this.#toolArgs.set(toolCallId, args);
			this.tools.start(toolCallId, toolName, args);
			if (this.#shouldEmitToolResult() && !this.#summarised.has(toolCallId)) {
				this.#summarised.add(toolCallId);
				this.#sendToolResult({ text: formatToolSummary(toolName, args, this.#params.toolResultFormat) });
			}
		};
		if (!flushed) {
			start();
			return undefined;
		}
		return flushed.then(start);
	}

	#endTool(toolCallId: string, toolName: string, result: unknown, isError: boolean): void {
		const args = this.#toolArgs.get(toolCallId);
		this.#toolArgs.delete(toolCallId);
		this.#summarised.delete(toolCallId);
		this.tools.end(toolCallId, toolName, result, isError);
		if (this.#shouldEmitToolOutput()) {
			this.#sendToolResult(formatToolOutput(toolName, args, result, this.#params.toolResultFormat));
		}
	}

	#shouldEmitToolResult(): boolean {
		if (!this.#params.onToolResult) return false;
		if (this.#params.shouldEmitToolResult) return this.#params.shouldEmitToolResult();
		return this.#params.verbose === "on" || this.#params.verbose === "full";
	}

	#shouldEmitToolOutput(): boolean {
		if (!this.#params.onToolResult) return false;
		if (this.#params.shouldEmitToolOutput) return this.#params.shouldEmitToolOutput();
		return this.#params.verbose === "full";
	}

	#sendToolResult(payload: ReplyPayload): void {
		const onToolResult = this.#params.onToolResult;
		if (!onToolResult) return;
		// Serialised: a slow first delivery must not be overtaken by the next one. When nothing
		// is in flight the delivery starts at once.
		const deliver = (): Promise<void> =>
			this.#callAsync("onToolResult", () => onToolResult(payload)).finally(() => {
				this.#toolResultsInFlight -= 1;
			});
		this.#toolResultChain = this.#toolResultsInFlight === 0 ? deliver() : this.#toolResultChain.then(deliver);
		this.#toolResultsInFlight += 1;
	}

	// ---- run end, compaction ----

	#endAgent(): Promise<void> | undefined {
		if (this.#assembly && this.#params.onBlockReply) this.#deliverBlocks(this.#assembly, this.#assembly.drainBlocks(true));
		// Settle the compaction wait before slow channel flushes, so a waiting caller is not held up by them.
		this.lifecycle.send({ type: "agent.end" });
		return this.#flushChannel();
	}

	#resetForRetry(): void {
		this.assistantTexts.length = 0;
		this.tools.clear();
		this.#toolArgs.clear();
		this.#summarised.clear();
		this.#assembly = undefined;
	}

	waitForCompactionRetry(): Promise<void> {
		if (this.unsubscribed) return Promise.reject(new ReplySubscriptionAbortedError());
		return new Promise<void>((resolve, reject) => {
			if (this.isCompacting()) {
				this.#waiters.push({ resolve, reject });
				return;
			}
			// A compaction may start synchronously right after this call: look once more.
			queueMicrotask(() => {
				if (this.unsubscribed) reject(new ReplySubscriptionAbortedError());
				else if (this.isCompacting()) this.#waiters.push({ resolve, reject });
				else resolve();
			});
		});
	}

	isCompacting(): boolean {
		return isCompactingSnapshot(this.lifecycle.getSnapshot());
	}

	isCompactionInFlight(): boolean {
		return isCompactionInFlightSnapshot(this.lifecycle.getSnapshot());
	}

	#settleWaiters(): void {
		if (this.#waiters.length === 0) return;
		const snapshot = this.lifecycle.getSnapshot();
		if (snapshot.status !== "done" && isCompactingSnapshot(snapshot)) return;
		const waiters = this.#waiters;
		this.#waiters = [];
		for (const waiter of waiters) {
			if (snapshot.status === "done") waiter.reject(new ReplySubscriptionAbortedError());
			else waiter.resolve();
		}
	}

	unsubscribe(): void {
		if (this.unsubscribed) return;
		const inFlight = this.isCompactionInFlight();
		this.lifecycle.send({ type: "unsubscribe" });
		if (inFlight) this.#call("source.abort", () => this.#connection?.abort());
		this.#connection?.detach();
	}

	// ---- callbacks ----

	#call(name: string, callback: () => MaybePromise<void> | undefined, track = false): void {
		try {
			const result = callback();
			if (!isPromiseLike(result)) return;
			const settled = Promise.resolve(result).catch((error: unknown) => this.#report(error, name));
			if (!track) return;
			this.#pendingDeliveries.add(settled);
			void settled.finally(() => this.#pendingDeliveries.delete(settled));
		} catch (error) {
			this.#report(error, name);
		}
	}

	async #callAsync(name: string, callback: () => MaybePromise<void>): Promise<void> {
		try {
			await callback();
		} catch (error) {
			this.#report(error, name);
		}
	}

	#report(error: unknown, callback: string): void {
		try {
			this.#params.onCallbackError?.(error, callback);
		} catch {
			// An error reporter that throws has nowhere left to report to.
		}
	}
}

/**
 * Listens to an agent (or a bare agent-machine actor) and assembles chat replies: block replies,
 * partial snapshots, reasoning, tool summaries, with reasoning tags and directives removed and
 * nothing sent twice.
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
	const subscriber = new ReplySubscriber(params);
	subscriber.connect(source);
	return {
		assistantTexts: subscriber.assistantTexts,
		toolMetas: subscriber.tools.metas,
		unsubscribe: () => subscriber.unsubscribe(),
		isCompacting: () => subscriber.isCompacting(),
		isCompactionInFlight: () => subscriber.isCompactionInFlight(),
		waitForCompactionRetry: () => subscriber.waitForCompactionRetry(),
		getUsageTotals: () => subscriber.usage.totals,
		getCompactionCount: () => subscriber.lifecycle.getSnapshot().context.compactionCount,
		getLastToolError: () => subscriber.tools.lastError,
		getMessagingToolSentTexts: () => subscriber.tools.sends.texts,
		getMessagingToolSentTargets: () => subscriber.tools.sends.targets,
		didSendViaMessagingTool: () => subscriber.tools.sends.texts.length > 0,
	};
}
