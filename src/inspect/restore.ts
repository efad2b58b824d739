/**
 * What an agent actor already holds when an inspector attaches to it, re-told as the
 * AgentEvents that would have shown it: an agent restored with `Agent.load` while its run waits
 * for a person has a transcript and calls waiting for approval, but emits nothing until someone
 * decides, so a viewer that only listened would show an empty conversation at exactly the
 * moment a person opens it.
 */
import type { DeltaSegment, TurnPosition } from "./records.js";

/** An event re-told from the context, and the turn it starts (on `turn_start`). */
export interface RestoredEvent {
	event: { type: string; [key: string]: unknown };
	turn?: TurnPosition | undefined;
	/**
	 * On the `message_start` of a reply still streaming: what had streamed by the attach, as the
	 * delta text that brought it (the deltas after the attach go on from there).
	 */
	streamed?: DeltaSegment[] | undefined;
}

/** Characters of a streaming reply re-told at most (as much as one delta record carries). */
export const MAX_RESTORED_STREAM_TEXT = 64_000;

/** Messages re-told at most: the page shows the last few hundred entries anyway, and attach must stay cheap. */
export const MAX_RESTORED_MESSAGES = 200;

/** Call statuses whose `tool_execution_start` was out while the call is still open. */
const OPEN_STATUSES: ReadonlySet<string> = new Set(["announced", "preparing", "prepared", "awaiting-approval", "running"]);

interface MessageLike {
	role?: unknown;
	content?: unknown;
	toolCallId?: unknown;
	toolName?: unknown;
	details?: unknown;
	isError?: unknown;
}

interface CallLike {
	toolCall: { id: string; name: string; arguments?: unknown };
	status: string;
	args?: unknown;
	started?: boolean | undefined;
	approval?: { reason?: string | undefined } | undefined;
}

interface RestorableContext {
	messages: MessageLike[];
	runs?: number | undefined;
	run?:
		| {
				turn?: number | undefined;
				newMessages?: unknown[] | undefined;
				assistant?: unknown;
				/** The reply as it began (`stream.start`). */
				partial?: MessageLike | undefined;
				/** The call in flight; its `partial` is the reply as the last delta left it. */
				stream?: { partial?: MessageLike | undefined } | undefined;
				batch?: { calls?: CallLike[] | undefined } | undefined;
		  }
		| undefined;
}

function isRestorable(context: unknown): context is RestorableContext {
	if (typeof context !== "object" || context === null) return false;
	const candidate = context as { messages?: unknown; steeringQueue?: unknown };
	// The agent machine's context (another machine's `messages` is not a transcript).
	return Array.isArray(candidate.messages) && Array.isArray(candidate.steeringQueue);
}

/** The arguments of each tool call the assistant messages made, by call id (a result is shown with them). */
function callArguments(messages: readonly MessageLike[]): Map<string, unknown> {
	const args = new Map<string, unknown>();
	for (const message of messages) {
		if (message.role !== "assistant" || !Array.isArray(message.content)) continue;
		for (const block of message.content as { type?: unknown; id?: unknown; arguments?: unknown }[]) {
			if (block?.type === "toolCall" && typeof block.id === "string") args.set(block.id, block.arguments);
		}
	}
	return args;
}

/** A message as the events that show it: a tool result as its call's start and end, the rest as message_start/end. */
function messageEvents(message: MessageLike, args: Map<string, unknown>): RestoredEvent[] {
	if (message.role === "toolResult" && typeof message.toolCallId === "string") {
		const id = message.toolCallId;
		return [
			{ event: { type: "tool_execution_start", toolCallId: id, toolName: message.toolName, args: args.get(id) } },
			{ event: { type: "tool_execution_end", toolCallId: id, toolName: message.toolName, result: { content: message.content, details: message.details }, isError: message.isError === true } },
		];
	}
	return [{ event: { type: "message_start", message } }, { event: { type: "message_end", message } }];
}

/** What an inspector attached before had told of an agent by the time it detached. */
interface Told {
	messages: ReadonlySet<unknown>;
	/** The run then in progress: its number, its turn, whether its reply was streaming, its calls started and waiting. */
	run?: { number: number; turn: number; streaming: boolean; started: ReadonlySet<string>; waiting: ReadonlySet<string> } | undefined;
}

/**
 * What `context` (the agent's context when an inspector detached) had been told: while attached,
 * the inspector heard every message, turn and call it holds. Messages are known by identity: the
 * agent appends to its transcript, it does not copy the messages it keeps.
 */
function toldBy(context: RestorableContext): Told {
	const told: Told = { messages: new Set(context.messages) };
	const run = context.run;
	if (!run) return told;
	const started = new Set<string>();
	const waiting = new Set<string>();
	for (const call of run.batch?.calls ?? []) {
		if (!OPEN_STATUSES.has(call.status)) continue;
		if (call.started === true || call.status === "running") started.add(call.toolCall.id);
		if (call.status === "awaiting-approval") waiting.add(call.toolCall.id);
	}
	const streaming = run.assistant === undefined && run.partial !== undefined;
	told.run = { number: context.runs ?? 1, turn: Math.max(1, run.turn ?? 1), streaming, started, waiting };
	return told;
}

/**
 * The events that re-tell an agent machine's context: its last messages (at most
 * {@link MAX_RESTORED_MESSAGES}); for a run in progress, its start and turns (numbered as the
 * agent numbers them), and its calls still open, each waiting for approval asked again. Any
 * other context gives nothing.
 *
 * Given `toldBefore`, the context as the same inspector left it when it detached, what that
 * context had been told is not told again: an inspector detached and attached again re-tells
 * only what happened while it was away, so its pages and recordings show each message once.
 *
 * @example
 * for (const { event, turn } of restoredEvents(agent.actor.getSnapshot().context)) console.log(event.type, turn);
 * // message_start, message_end, agent_start, turn_start { run: 1, turn: 1 }, …, approval_requested
 */
export function restoredEvents(context: unknown, toldBefore?: unknown): RestoredEvent[] {
	if (!isRestorable(context)) return [];
	const told = isRestorable(toldBefore) ? toldBy(toldBefore) : undefined;
	const { messages, run } = context;
	const events: RestoredEvent[] = [];
	const args = callArguments(messages.slice(-MAX_RESTORED_MESSAGES));
	const inRun = run ? Math.min(run.newMessages?.length ?? 0, messages.length) : 0;
	const runStart = messages.length - inRun;
	const first = Math.max(0, messages.length - MAX_RESTORED_MESSAGES);
	for (let index = first; index < runStart; index++) {
		const message = messages[index];
		if (message && !told?.messages.has(message)) events.push(...messageEvents(message, args));
	}
	if (!run) return events;
	const runNumber = context.runs ?? 1;
	const currentTurn = Math.max(1, run.turn ?? 1);
	// The same run was in progress at the detach: its start and its turns up to then were told.
	const toldRun = told?.run?.number === runNumber ? told.run : undefined;
	const toldTurn = (turn: number) => toldRun !== undefined && turn <= toldRun.turn;
	// A turn is a model call: it starts with the messages before a reply and ends with the reply's
	// tool results. The run's messages are split at that boundary; the last turn is the current one.
	const runMessages = messages.slice(Math.max(first, runStart));
	let replies = 0;
	for (const message of runMessages) if (message.role === "assistant") replies++;
	const currentHasReply = run.assistant !== undefined || run.batch !== undefined;
	let turn = Math.max(1, currentTurn - replies + (currentHasReply ? 1 : 0));
	if (!toldRun) events.push({ event: { type: "agent_start" } });
	if (!toldTurn(turn)) events.push({ event: { type: "turn_start" }, turn: { run: runNumber, turn } });
	let replied = false;
	for (const message of runMessages) {
		const answersReply = message.role === "toolResult" || (message.role === "assistant" && !replied);
		if (replied && !answersReply && turn < currentTurn) {
			turn++;
			if (!toldTurn(turn)) events.push({ event: { type: "turn_start" }, turn: { run: runNumber, turn } });
			replied = false;
		}
		if (message.role === "assistant") replied = true;
		if (!told?.messages.has(message)) events.push(...messageEvents(message, args));
	}
	if (turn < currentTurn && !toldTurn(currentTurn)) events.push({ event: { type: "turn_start" }, turn: { run: runNumber, turn: currentTurn } });
	// A reply streaming now: its start, and what streamed so far (its deltas reached nobody here).
	// `run.partial` is set by the reply's start and cleared by its end: the stream's own progress
	// outlives the reply (it holds the last turn's reply until the next call starts).
	const streaming = run.assistant === undefined && run.partial !== undefined ? (run.stream?.partial ?? run.partial) : undefined;
	// A reply that was already streaming at the detach was told then: its end will complete it.
	const streamingTold = toldRun?.streaming === true && toldRun.turn === currentTurn;
	if (streaming && !streamingTold) events.push({ event: { type: "message_start", message: { ...streaming, content: [] } }, streamed: streamedSegments(streaming) });
	for (const call of run.batch?.calls ?? []) {
		if (!OPEN_STATUSES.has(call.status)) continue;
		const base = { toolCallId: call.toolCall.id, toolName: call.toolCall.name, args: call.args ?? call.toolCall.arguments };
		if ((call.started === true || call.status === "running") && !toldRun?.started.has(call.toolCall.id)) events.push({ event: { type: "tool_execution_start", ...base } });
		if (call.status === "awaiting-approval" && !toldRun?.waiting.has(call.toolCall.id)) events.push({ event: { type: "approval_requested", ...base, reason: call.approval?.reason } });
	}
	return events;
}

/**
 * A streaming reply's content as the delta segments that would have brought it, read now: a
 * provider grows its partial message in place, so what it holds later is not what it held at
 * the attach. Text and thinking as far as they came; a tool call's arguments only from the
 * attach on (see below).
 */
function streamedSegments(message: MessageLike): DeltaSegment[] {
	const segments: DeltaSegment[] = [];
	if (!Array.isArray(message.content)) return segments;
	let left = MAX_RESTORED_STREAM_TEXT;
	(message.content as { type?: unknown; text?: unknown; thinking?: unknown; arguments?: unknown }[]).forEach((block, contentIndex) => {
		let segment: DeltaSegment | undefined;
		if (block?.type === "text" && typeof block.text === "string") segment = { kind: "text", contentIndex, text: block.text };
		else if (block?.type === "thinking" && typeof block.thinking === "string") segment = { kind: "thinking", contentIndex, text: block.thinking };
		// A tool call's arguments are held parsed, not as the text that streamed: the deltas after the
		// attach go on from text the page never had. Its block is kept in place; its text starts there.
		else if (block?.type === "toolCall") segment = { kind: "toolcall", contentIndex, text: "" };
		if (!segment || left <= 0) return;
		segment.text = segment.text.slice(0, left);
		left -= segment.text.length;
		segments.push(segment);
	});
	return segments;
}
