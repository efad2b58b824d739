/**
 * Tool activity as a channel sees it: a summary line when a call starts ("verbose" on), its
 * output when it ends ("verbose" full), delivered through `onToolResult` one at a time, in order
 * with the block replies around it (one channel queue), plus the bookkeeping of the {@link ToolTracker}.
 */
import type { CallbackRunner } from "./callback-runner.js";
import { SerialEventQueue } from "./serial-event-queue.js";
import type { SubscribeRepliesParams } from "./subscribe-replies-options.js";
import { formatToolOutput, formatToolSummary } from "./tool-descriptions.js";
import { classifyToolAction, defaultMessagingToolExtractor, messagingToolsByName, ToolTracker } from "./tool-tracker.js";
import type { ReplyPayload } from "./types.js";

type ToolReporterParams = Pick<
	SubscribeRepliesParams,
	| "onToolResult"
	| "verbose"
	| "shouldEmitToolResult"
	| "shouldEmitToolOutput"
	| "toolResultFormat"
	| "messagingTools"
	| "classifyToolAction"
>;

/**
 * Reports tool calls.
 *
 * @example
 * const reporter = new ToolReporter({ verbose: "on", onToolResult: (p) => channel.send(p.text) }, new CallbackRunner());
 * reporter.start("t1", "read", { path: "/tmp/a.txt" }); // sends "📖 Read: `/tmp/a.txt`"
 * reporter.end("t1", "read", { content: [] }, false);
 */
export class ToolReporter {
	readonly tracker: ToolTracker;
	readonly #params: ToolReporterParams;
	readonly #callbacks: CallbackRunner;
	// The channel's queue: a slow delivery is never overtaken by the next one, a block reply's
	// included, and with nothing pending a delivery happens at once, synchronously.
	readonly #channel: SerialEventQueue;
	readonly #open: () => boolean;

	/**
	 * @param channel the queue block replies go through too (a queue of its own by default)
	 * @param open false once the subscriber is gone: what is still queued then is dropped
	 */
	constructor(params: ToolReporterParams, callbacks: CallbackRunner, channel?: SerialEventQueue, open: () => boolean = () => true) {
		this.#params = params;
		this.#callbacks = callbacks;
		this.#channel = channel ?? new SerialEventQueue((error) => callbacks.report(error, "onToolResult"));
		this.#open = open;
		const messaging = params.messagingTools;
		this.tracker = new ToolTracker({
			messagingTool:
				messaging === undefined
					? defaultMessagingToolExtractor
					: typeof messaging === "function"
						? messaging
						: messagingToolsByName(messaging),
			classifyAction: params.classifyToolAction ?? classifyToolAction,
		});
	}

	/** A call started (after the narration before it was flushed). */
	start(toolCallId: string, toolName: string, args: unknown): void {
		this.tracker.start(toolCallId, toolName, args);
		this.announce(toolName, args);
	}

	/** The summary of a call that started, for the channel (its tracking is {@link start}'s or the tracker's own). */
	announce(toolName: string, args: unknown): void {
		if (this.#shouldEmitSummary()) this.#send({ text: formatToolSummary(toolName, args, this.#params.toolResultFormat) });
	}

	/** A call ended. */
	end(toolCallId: string, toolName: string, result: unknown, isError: boolean): void {
		const args = this.tracker.end(toolCallId, toolName, result, isError);
		this.report(toolName, args, result);
	}

	/** The output of a call that ended, for the channel (`args`: what the tracker's end gave back). */
	report(toolName: string, args: unknown, result: unknown): void {
		if (this.#shouldEmitOutput()) this.#send(formatToolOutput(toolName, args, result, this.#params.toolResultFormat));
	}

	#shouldEmitSummary(): boolean {
		if (!this.#params.onToolResult) return false;
		if (this.#params.shouldEmitToolResult) return this.#params.shouldEmitToolResult();
		return this.#params.verbose === "on" || this.#params.verbose === "full";
	}

	#shouldEmitOutput(): boolean {
		if (!this.#params.onToolResult) return false;
		if (this.#params.shouldEmitToolOutput) return this.#params.shouldEmitToolOutput();
		return this.#params.verbose === "full";
	}

	#send(payload: ReplyPayload): void {
		const onToolResult = this.#params.onToolResult;
		if (!onToolResult) return;
		// Tracked: the flush before the next tool and the run's end wait for it, as for a block reply.
		this.#callbacks.deliverInOrder("onToolResult", this.#channel, () => onToolResult(payload), this.#open);
	}
}
