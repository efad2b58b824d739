/**
 * A session's live events: the agent's events as they happen on whichever worker runs the
 * session, sent on a side channel, never journaled. They are for watching (a chat UI, a log);
 * the transcript itself comes from the session's `state`.
 *
 * What a listener can rely on: events of one attempt arrive in order. A worker replaying a
 * journal after another died sends nothing for the steps it replays (they were sent when they
 * happened); a model call that was cut off is made again, so its deltas start over under a new
 * `attempt` (discard the partial reply of the old one). A listener that connects late gets the
 * events from then on; `state` has what came before.
 */
import type { AgentEvent } from "../types/agent.js";
import type { AssistantMessageEvent } from "../types/stream.js";

/**
 * A `message_update` delta without the partial message (a listener accumulates the deltas).
 *
 * @example
 * const delta: SlimAssistantMessageEvent = { type: "text_delta", contentIndex: 0, delta: "Hel" }; // no `partial`: the side channel leaves it out
 */
export type SlimAssistantMessageEvent = AssistantMessageEvent extends infer Event ? (Event extends { partial: unknown } ? Omit<Event, "partial"> : Event) : never;

/**
 * An agent event as the side channel carries it: as the agent emitted it, except that a
 * `message_update` carries its delta only (each one carried the whole partial reply so far).
 *
 * @example
 * for await (const { event } of watchSession(hubUrl, "user-42")) {
 *   if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") process.stdout.write(event.assistantMessageEvent.delta);
 * }
 */
export type SessionEvent = Exclude<AgentEvent, { type: "message_update" }> | { type: "message_update"; assistantMessageEvent: SlimAssistantMessageEvent };

/**
 * One event on the side channel, with where it comes from.
 *
 * @example
 * for await (const envelope of watchSession(hubUrl, undefined)) console.log(envelope.sessionId, envelope.seq, envelope.event.type);
 */
export interface SessionEventEnvelope {
	sessionId: string;
	/** The Restate invocation (one `prompt`, `approve`, ... call) the event belongs to. */
	invocationId: string;
	/** The worker that ran it (its `worker` option). */
	worker: string;
	/** One execution of the invocation on a worker; a retry after a crash has a new one. */
	attempt: string;
	/** Order within the attempt, from 1. */
	seq: number;
	event: SessionEvent;
}

/**
 * Where a worker sends live events. `publish` must not block: the agent waits for nothing.
 *
 * @example
 * const sink: SessionEventSink = { publish: (envelope) => socket.send(JSON.stringify(envelope)) };
 */
export interface SessionEventSink {
	publish(envelope: SessionEventEnvelope): void;
}

/**
 * The agent event as the side channel carries it (see {@link SessionEvent}).
 *
 * @example
 * sessionEventOf({ type: "agent_start" }); // { type: "agent_start" }
 */
export function sessionEventOf(event: AgentEvent): SessionEvent {
	if (event.type !== "message_update") return event;
	const { partial: _partial, ...delta } = event.assistantMessageEvent as AssistantMessageEvent & { partial?: unknown };
	return { type: "message_update", assistantMessageEvent: delta as SlimAssistantMessageEvent };
}

/**
 * A sink that POSTs events to an event hub (`createEventHub`) as newline-delimited JSON, in
 * order, several per request when they come fast (token deltas). Best effort: a batch the hub
 * does not take is dropped (and counted in `dropped`), the run never waits for it. A `hubUrl`
 * that is not an http(s) URL throws a `TypeError` at once.
 *
 * @example
 * const events = createHttpEventSink("http://127.0.0.1:9900");
 * createAgentSessions({ agent: () => ({ initialState: { model, tools }, streamFn }), events, worker: "worker-1" });
 */
export function createHttpEventSink(hubUrl: string): SessionEventSink & { readonly dropped: number; flush(): Promise<void> } {
	// Refused when made: a URL no request can go to (`localhost:9900`, without its scheme) would
	// drop every event, silently, since a failed send is only counted.
	const parsed = typeof hubUrl === "string" && URL.canParse(hubUrl) ? new URL(hubUrl) : undefined;
	if (parsed?.protocol !== "http:" && parsed?.protocol !== "https:") throw new TypeError(`agentchart/restate: createHttpEventSink(hubUrl): hubUrl must be the http(s) URL of an event hub, such as "http://127.0.0.1:9900", got ${JSON.stringify(hubUrl) ?? String(hubUrl)}`);
	let buffer: string[] = [];
	let sending: Promise<void> | undefined;
	let dropped = 0;
	const url = `${hubUrl.replace(/\/$/, "")}/publish`;
	const send = async (): Promise<void> => {
		while (buffer.length > 0) {
			const batch = buffer;
			buffer = [];
			try {
				const response = await fetch(url, { method: "POST", headers: { "content-type": "application/x-ndjson" }, body: batch.join("\n") });
				await response.arrayBuffer();
				if (!response.ok) dropped += batch.length;
			} catch {
				dropped += batch.length;
			}
		}
	};
	const kick = () => {
		if (sending) return;
		sending = new Promise<void>((resolve) => setImmediate(resolve))
			.then(send)
			.finally(() => {
				sending = undefined;
				if (buffer.length > 0) kick();
			});
	};
	return {
		publish(envelope) {
			buffer.push(JSON.stringify(envelope));
			kick();
		},
		get dropped() {
			return dropped;
		},
		async flush() {
			while (sending) await sending;
		},
	};
}
