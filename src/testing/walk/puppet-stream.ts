/**
 * A model stream the walk holds on strings: a scripted reply's events are buffered and reach the
 * agent only when the path says (`stream.start`, each `stream.toolcall`, `stream.done`), so the
 * walk decides what the agent sees between any two of them.
 */
import { AssistantMessageEventStream } from "../../providers/event-stream.js";
import type { ToolCall } from "../../types/content.js";
import { emptyUsage } from "../../types/content.js";
import type { AssistantMessage } from "../../types/messages.js";
import type { Model } from "../../types/model.js";
import type { AssistantMessageEvent } from "../../types/stream.js";

/** Forwards a scripted stream's events to the agent only when told to. */
export class PuppetStream {
	readonly out = new AssistantMessageEventStream();
	private readonly buffer: AssistantMessageEvent[] = [];
	private lastPartial: AssistantMessage | undefined;
	private readonly streamedCalls: ToolCall[] = [];
	private waiting: (() => void) | undefined;
	ended = false;

	constructor(
		source: AsyncIterable<AssistantMessageEvent>,
		readonly signal: AbortSignal | undefined,
		private readonly model: Pick<Model, "api" | "provider" | "id">,
	) {
		void (async () => {
			for await (const event of source) {
				this.buffer.push(event);
				this.waiting?.();
			}
		})();
	}

	/** Resolves once the scripted source has produced its events (it plays on microtasks). */
	async ready(): Promise<void> {
		for (let i = 0; i < 1000 && !this.buffer.some((event) => event.type === "done" || event.type === "error"); i++) {
			await new Promise<void>((resolve) => {
				this.waiting = resolve;
				setImmediate(resolve);
			});
		}
		this.waiting = undefined;
	}

	/** Forwards buffered events up to and including the first one `until` accepts; false when none does. */
	forward(until: (event: AssistantMessageEvent) => boolean, skip?: (event: AssistantMessageEvent) => boolean): boolean {
		while (this.buffer.length && !this.ended) {
			const event = this.buffer.shift() as AssistantMessageEvent;
			if (skip?.(event)) continue;
			if ("partial" in event) this.lastPartial = event.partial;
			if (event.type === "toolcall_end") this.streamedCalls.push(event.toolCall);
			this.out.push(event);
			if (event.type === "done" || event.type === "error") this.ended = true;
			if (until(event)) return true;
		}
		return false;
	}

	/** Ends the stream as a provider honouring the abort signal does. */
	endAborted(): void {
		if (this.ended) return;
		this.ended = true;
		const base = this.lastPartial ?? ({ role: "assistant", api: this.model.api, provider: this.model.provider, model: this.model.id, timestamp: 0 } as AssistantMessage);
		const error: AssistantMessage = { ...base, content: [...this.streamedCalls], usage: emptyUsage(), stopReason: "aborted", errorMessage: "Request was aborted" };
		this.out.push({ type: "error", reason: "aborted", error });
	}

	/** When the path is over: everything now (aborted if the signal says so). */
	finish(): void {
		if (this.signal?.aborted) this.endAborted();
		else this.forward(() => false);
	}
}
