/**
 * Where AgentEvents come from: an `Agent` (or anything with pi's `subscribe`) or a bare actor
 * of the agent machine. The two are told apart by shape, so the reply layer depends on neither.
 */
import type { AgentEvent } from "../types/index.js";
import type { MaybePromise } from "./types.js";

/**
 * An `Agent`-like source: awaits async listeners one at a time, in order.
 *
 * @example
 * const source: AgentEventSubscribable = agent; // an Agent, or anything with subscribe(listener)
 * const replies = subscribeReplies(source, { onBlockReply: (payload) => chat.send(payload.text ?? "") });
 */
export interface AgentEventSubscribable {
	subscribe(listener: (event: AgentEvent, signal?: AbortSignal) => MaybePromise<void>): () => void;
	abort?(): void;
}

/**
 * An actor of the agent machine: emits AgentEvents (plus internal `agentchart.*` events),
 * aborted with `send({ type: "abort" })`. Listeners cannot hold it back.
 *
 * @example
 * const source: AgentEventEmitter = agent.actor; // an agent machine actor, or one that embeds it
 * const replies = subscribeReplies(source, { onBlockReply: (payload) => chat.send(payload.text ?? "") });
 */
export interface AgentEventEmitter {
	// Method syntax keeps the parameter bivariant, so a typed XState actor fits.
	on(type: "*", handler: (event: { type: string }) => void): { unsubscribe(): void };
	send(event: { type: "abort" }): void;
}

/**
 * Anything `subscribeReplies` can listen to.
 *
 * @example
 * const sources: ReplyEventSource[] = [agent, agent.actor]; // the facade, or its machine actor
 * for (const source of sources) subscribeReplies(source, { onPartialReply: (partial) => chat.typing(partial.text) });
 */
export type ReplyEventSource = AgentEventSubscribable | AgentEventEmitter;

/** A live connection to a source. */
export interface EventSourceConnection {
	/** Stops listening. */
	detach(): void;
	/** Aborts the source's current run. */
	abort(): void;
}

const AGENT_EVENT_TYPES = new Set<string>([
	"agent_start",
	"agent_end",
	"turn_start",
	"turn_end",
	"message_start",
	"message_update",
	"message_end",
	"tool_execution_start",
	"tool_execution_update",
	"tool_execution_end",
	"auto_compaction_start",
	"auto_compaction_end",
]);

function isAgentEvent(event: { type: string }): event is AgentEvent {
	return AGENT_EVENT_TYPES.has(event.type);
}

function isSubscribable(source: ReplyEventSource): source is AgentEventSubscribable {
	return typeof (source as Partial<AgentEventSubscribable>).subscribe === "function" && !isEmitter(source);
}

function isEmitter(source: ReplyEventSource): source is AgentEventEmitter {
	const candidate = source as Partial<AgentEventEmitter>;
	return typeof candidate.on === "function" && typeof candidate.send === "function";
}

/**
 * Connects a listener to a source. With an `Agent`, a listener that returns a promise holds the
 * agent back until it settles; with a bare actor, events are only observed.
 *
 * @example
 * const connection = connectEventSource(agent, (event) => console.log(event.type));
 * connection.detach();
 */
export function connectEventSource(
	source: ReplyEventSource,
	listener: (event: AgentEvent) => MaybePromise<void>,
): EventSourceConnection {
	if (isEmitter(source)) {
		const subscription = source.on("*", (event) => {
			// Internal machine events ("agentchart.*") and anything unknown are not ours.
			if (isAgentEvent(event)) void listener(event);
		});
		return { detach: () => subscription.unsubscribe(), abort: () => source.send({ type: "abort" }) };
	}
	if (isSubscribable(source)) {
		const unsubscribe = source.subscribe((event) => listener(event));
		return { detach: unsubscribe, abort: () => source.abort?.() };
	}
	throw new TypeError("subscribeReplies: the source has neither subscribe() nor on()/send()");
}
