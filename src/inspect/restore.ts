/**
 * What an agent actor already holds when an inspector attaches to it, re-told as the
 * AgentEvents that would have shown it: an agent restored with `Agent.load` while its run waits
 * for a person has a transcript and calls waiting for approval, but emits nothing until someone
 * decides, so a viewer that only listened would show an empty conversation at exactly the
 * moment a person opens it.
 */
import { callKeyOf } from "../machines/run-helpers.js";
import { rejectedText } from "../tools/preflight.js";
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
	/**
	 * An ending of what an inspector told before it detached (see {@link restoredEvents}): told
	 * before the actor tree is announced again, whose changes (a child gone) would otherwise close
	 * what it ends as stopped.
	 */
	ending?: boolean | undefined;
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
	/** Its key in the batch: the id, or `id#2`… for a call repeating an earlier call's id. */
	key: string;
	toolCall: { id: string; name: string; arguments?: unknown };
	status: string;
	args?: unknown;
	started?: boolean | undefined;
	approval?: { reason?: string | undefined } | undefined;
	/** Once settled; its result message comes later (results reach the transcript in source order). */
	outcome?: { result: { content?: unknown; details?: unknown }; isError?: boolean } | undefined;
	/** Its result message, once emitted. */
	message?: unknown;
}

interface RestorableContext {
	messages: MessageLike[];
	runs?: number | undefined;
	run?:
		| {
				turn?: number | undefined;
				/** Its `turn_end` went out (until the next turn starts). */
				turnEnded?: boolean | undefined;
				newMessages?: MessageLike[] | undefined;
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

/**
 * The arguments of the call each tool result answers (a result is shown with them). A reply's
 * results follow it in source order, so where the model repeated an id, the n-th result with that
 * id answers the reply's n-th call with it.
 */
function callArguments(messages: readonly MessageLike[]): Map<MessageLike, unknown> {
	const args = new Map<MessageLike, unknown>();
	let calls = new Map<string, unknown[]>();
	for (const message of messages) {
		if (message.role === "assistant" && Array.isArray(message.content)) {
			calls = new Map();
			for (const block of message.content as { type?: unknown; id?: unknown; arguments?: unknown }[]) {
				if (block?.type !== "toolCall" || typeof block.id !== "string") continue;
				const same = calls.get(block.id);
				if (same) same.push(block.arguments);
				else calls.set(block.id, [block.arguments]);
			}
		} else if (message.role === "toolResult" && typeof message.toolCallId === "string") {
			args.set(message, calls.get(message.toolCallId)?.shift());
		}
	}
	return args;
}

/** A message as the events that show it: a tool result as its call's start and end, the rest as message_start/end. */
function messageEvents(message: MessageLike, args: Map<MessageLike, unknown>): RestoredEvent[] {
	if (message.role === "toolResult" && typeof message.toolCallId === "string") {
		const id = message.toolCallId;
		return [
			{ event: { type: "tool_execution_start", toolCallId: id, toolName: message.toolName, args: args.get(message) } },
			{ event: { type: "tool_execution_end", toolCallId: id, toolName: message.toolName, result: { content: message.content, details: message.details }, isError: message.isError === true } },
		];
	}
	return [{ event: { type: "message_start", message } }, { event: { type: "message_end", message } }];
}

/** The run an inspector saw in progress when it detached. */
interface ToldRun {
	number: number;
	turn: number;
	/** That turn's `turn_end` was told. */
	turnEnded: boolean;
	/** Its reply was streaming (its `message_start` was told, not its end). */
	streaming: boolean;
	/** The turn's reply, if it had ended. */
	reply: MessageLike | undefined;
	/** The messages it had added. */
	added: readonly MessageLike[];
	/**
	 * Calls whose `tool_execution_start` was told, and calls whose `approval_requested` was, in batch
	 * order, by their key in the batch (a reply may repeat an id; the key tells its calls apart).
	 */
	started: ReadonlySet<string>;
	waiting: ReadonlySet<string>;
	/** Calls settled whose result message had not come: their start and end were told. */
	ended: ReadonlySet<string>;
	/**
	 * Each of those calls' tool call id and its place among the batch's calls with that id (from 1),
	 * by key: its result is the reply's n-th with that id (a key's number need not be its place: a
	 * model's own id may look like a key, `x`, `x#2`, `x` are keyed `x`, `x#2`, `x#3`).
	 */
	calls: ReadonlyMap<string, { id: string; occurrence: number }>;
}

/** What an inspector attached before had told of an agent by the time it detached. */
interface Told {
	messages: ReadonlySet<unknown>;
	run?: ToldRun | undefined;
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
	const ended = new Set<string>();
	const calls = new Map<string, { id: string; occurrence: number }>();
	const seen = new Map<string, number>();
	for (const call of run.batch?.calls ?? []) {
		const occurrence = (seen.get(call.toolCall.id) ?? 0) + 1;
		seen.set(call.toolCall.id, occurrence);
		calls.set(call.key, { id: call.toolCall.id, occurrence });
		if (call.status === "settled" && call.message === undefined) ended.add(call.key);
		if (!OPEN_STATUSES.has(call.status)) continue;
		if (call.started === true || call.status === "running") started.add(call.key);
		if (call.status === "awaiting-approval") waiting.add(call.key);
	}
	const streaming = run.assistant === undefined && run.partial !== undefined;
	const reply = run.assistant as MessageLike | undefined;
	told.run = { number: context.runs ?? 1, turn: Math.max(1, run.turn ?? 1), turnEnded: run.turnEnded === true, streaming, reply, added: run.newMessages ?? [], started, waiting, ended, calls };
	return told;
}

/** How a call that waited for approval was decided, read from its result (the rejections' texts are ours). */
function decisionOf(result: MessageLike): { decision: "approved" | "rejected" | "timed-out" | "aborted"; reason?: string } {
	const first = Array.isArray(result.content) ? (result.content as { type?: unknown; text?: unknown }[])[0] : undefined;
	const text = first?.type === "text" && typeof first.text === "string" ? first.text : "";
	if (result.isError === true) {
		for (const decision of ["rejected", "timed-out", "aborted"] as const) {
			const base = rejectedText(decision, undefined);
			if (text === base) return { decision };
			if (text.startsWith(`${base}: `)) return { decision, reason: text.slice(base.length + 2) };
		}
	}
	return { decision: "approved" };
}

/** A settled call's result: from its message in the transcript, or from the batch before that message comes. */
interface SettledResult {
	toolName: unknown;
	content: unknown;
	details: unknown;
	isError: boolean;
	/** The transcript's message, when it is there. */
	message?: MessageLike | undefined;
}

/** The `tool_execution_end` of a settled call. */
function endEvent(id: string, settled: SettledResult): RestoredEvent {
	return { event: { type: "tool_execution_end", toolCallId: id, toolName: settled.toolName, result: { content: settled.content, details: settled.details }, isError: settled.isError } };
}

/** A settled call of the batch whose result message has not come yet, as a {@link SettledResult}. */
function settledInBatch(call: CallLike): SettledResult | undefined {
	if (call.status !== "settled" || call.message !== undefined || call.outcome === undefined) return undefined;
	return { toolName: call.toolCall.name, content: call.outcome.result.content, details: call.outcome.result.details, isError: call.outcome.isError === true };
}

/**
 * What ended, while an inspector was detached, of what it had told as open: the reply that was
 * streaming, the calls started and the approvals asked, the turn and the run. Without these its
 * pages would show them open for good. The messages whose events these carry, and those of calls
 * whose end it had told, are added to `closed`, and the calls whose end these tell to
 * `endedCalls`, so that they are not told again as new ones.
 */
function endingsSince(told: Told & { run: ToldRun }, context: RestorableContext, closed: Set<unknown>, endedCalls: Set<string>): RestoredEvent[] {
	const toldRun = told.run;
	const { messages, run } = context;
	const sameRun = run !== undefined && (context.runs ?? 1) === toldRun.number;
	const currentTurn = sameRun ? Math.max(1, run.turn ?? 1) : undefined;
	const fresh = messages.filter((message) => !told.messages.has(message));
	const events: RestoredEvent[] = [];
	const stillStreaming = sameRun && currentTurn === toldRun.turn && run.assistant === undefined && run.partial !== undefined;
	let reply = toldRun.reply;
	if (toldRun.streaming && !stillStreaming) {
		// The first reply added since is the one that was streaming: the transcript only grows within a run.
		const ended = fresh.find((message) => message.role === "assistant");
		if (ended) {
			events.push({ event: { type: "message_end", message: ended } });
			closed.add(ended);
			reply = ended;
		}
	}
	const batchNow = new Map<string, CallLike>();
	if (sameRun) for (const call of run.batch?.calls ?? []) batchNow.set(call.key, call);
	// The told batch's results follow its reply, in source order: where the model repeated an id,
	// the n-th result with it answers the n-th call with it.
	const replyAt = reply === undefined ? -1 : messages.indexOf(reply);
	const resultMessage = (key: string): MessageLike | undefined => {
		const call = toldRun.calls.get(key);
		const id = call?.id ?? key;
		let occurrence = call?.occurrence ?? 1;
		for (let index = replyAt + 1; index < messages.length; index++) {
			const message = messages[index];
			if (message?.role === "assistant") break;
			if (message?.role === "toolResult" && message.toolCallId === id && --occurrence === 0) return told.messages.has(message) ? undefined : message;
		}
		return undefined;
	};
	// Calls whose start and end were both told: their result message, come since, is nothing new.
	for (const key of toldRun.ended) {
		const message = resultMessage(key);
		if (message) closed.add(message);
		endedCalls.add(key);
	}
	const results: MessageLike[] = [];
	for (const key of new Set([...toldRun.started, ...toldRun.waiting])) {
		const id = toldRun.calls.get(key)?.id ?? key;
		const call = batchNow.get(key);
		if (call && OPEN_STATUSES.has(call.status)) {
			// Still open: only an approval may have been given meanwhile.
			if (toldRun.waiting.has(key) && call.status !== "awaiting-approval") events.push({ event: { type: "approval_resolved", toolCallId: id, callKey: callKeyOf(call), toolName: call.toolCall.name, decision: "approved", args: call.args } });
			continue;
		}
		const message = resultMessage(key);
		const settled: SettledResult | undefined = message
			? { toolName: message.toolName, content: message.content, details: message.details, isError: message.isError === true, message }
			: call && settledInBatch(call);
		if (!settled) continue;
		if (toldRun.waiting.has(key)) events.push({ event: { type: "approval_resolved", toolCallId: id, callKey: callKeyOf({ key, toolCall: { id } }), toolName: settled.toolName, ...decisionOf({ content: settled.content, isError: settled.isError }) } });
		// A call that was only waiting started after its approval: its start is told with its end, below.
		if (!toldRun.started.has(key)) continue;
		events.push(endEvent(id, settled));
		endedCalls.add(key);
		if (settled.message) {
			closed.add(settled.message);
			results.push(settled.message);
		}
	}
	// The run ended meanwhile: its turn and itself. (In the same run, the walk ends the turn where it ended.)
	if (!sameRun) {
		if (!toldRun.turnEnded) events.push({ event: { type: "turn_end", message: reply, toolResults: results } });
		events.push({ event: { type: "agent_end", messages: [...toldRun.added, ...closed] } });
	}
	return events;
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
 * What it had told as open and what ended meanwhile (a streaming reply, calls, approvals, the
 * turn, the run) is closed first.
 *
 * @example
 * for (const { event, turn } of restoredEvents(agent.actor.getSnapshot().context)) console.log(event.type, turn);
 * // message_start, message_end, agent_start, turn_start { run: 1, turn: 1 }, …, approval_requested
 */
export function restoredEvents(context: unknown, toldBefore?: unknown): RestoredEvent[] {
	if (!isRestorable(context)) return [];
	const told = isRestorable(toldBefore) ? toldBy(toldBefore) : undefined;
	const { messages, run } = context;
	const closed = new Set<unknown>();
	const endedCalls = new Set<string>();
	const events: RestoredEvent[] = told?.run ? endingsSince(told as Told & { run: ToldRun }, context, closed, endedCalls).map((ending) => Object.assign(ending, { ending: true })) : [];
	const isNew = (message: MessageLike) => !told?.messages.has(message) && !closed.has(message);
	const args = callArguments(messages.slice(-MAX_RESTORED_MESSAGES));
	const inRun = run ? Math.min(run.newMessages?.length ?? 0, messages.length) : 0;
	const runStart = messages.length - inRun;
	const first = Math.max(0, messages.length - MAX_RESTORED_MESSAGES);
	for (let index = first; index < runStart; index++) {
		const message = messages[index];
		if (message && isNew(message)) events.push(...messageEvents(message, args));
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
	let turnReply: MessageLike | undefined;
	let turnResults: MessageLike[] = [];
	// A turn that ended: its end is told unless it was, before a detach.
	const endTurn = () => {
		const toldEnded = toldRun !== undefined && (turn < toldRun.turn || (turn === toldRun.turn && toldRun.turnEnded));
		if (!toldEnded) events.push({ event: { type: "turn_end", message: turnReply, toolResults: turnResults } });
	};
	for (const message of runMessages) {
		const answersReply = message.role === "toolResult" || (message.role === "assistant" && !replied);
		if (replied && !answersReply && turn < currentTurn) {
			endTurn();
			turn++;
			if (!toldTurn(turn)) events.push({ event: { type: "turn_start" }, turn: { run: runNumber, turn } });
			replied = false;
			turnReply = undefined;
			turnResults = [];
		}
		if (message.role === "assistant") {
			replied = true;
			turnReply = message;
		}
		if (message.role === "toolResult") turnResults.push(message);
		if (isNew(message)) events.push(...messageEvents(message, args));
	}
	if (turn < currentTurn) {
		endTurn();
		turn = currentTurn;
		turnReply = undefined;
		turnResults = [];
		if (!toldTurn(currentTurn)) events.push({ event: { type: "turn_start" }, turn: { run: runNumber, turn: currentTurn } });
	}
	// The turn in progress may have ended already (its next one not begun).
	if (run.turnEnded === true) endTurn();
	// A reply streaming now: its start, and what streamed so far (its deltas reached nobody here).
	// `run.partial` is set by the reply's start and cleared by its end: the stream's own progress
	// outlives the reply (it holds the last turn's reply until the next call starts).
	const streaming = run.assistant === undefined && run.partial !== undefined ? (run.stream?.partial ?? run.partial) : undefined;
	// A reply that was already streaming at the detach was told then: its end will complete it.
	const streamingTold = toldRun?.streaming === true && toldRun.turn === currentTurn;
	if (streaming && !streamingTold) events.push({ event: { type: "message_start", message: { ...streaming, content: [] } }, streamed: streamedSegments(streaming) });
	for (const call of run.batch?.calls ?? []) {
		const base = { toolCallId: call.toolCall.id, toolName: call.toolCall.name, args: call.args ?? call.toolCall.arguments };
		// Settled, its result message not come yet (results come in source order): its start and end
		// went out while nobody here listened, and the message will not tell them.
		const settled = settledInBatch(call);
		if (settled && !endedCalls.has(call.key)) {
			if (!toldRun?.started.has(call.key)) events.push({ event: { type: "tool_execution_start", ...base } });
			events.push(endEvent(call.toolCall.id, settled));
			continue;
		}
		if (!OPEN_STATUSES.has(call.status)) continue;
		if ((call.started === true || call.status === "running") && !toldRun?.started.has(call.key)) events.push({ event: { type: "tool_execution_start", ...base } });
		if (call.status === "awaiting-approval" && !toldRun?.waiting.has(call.key)) events.push({ event: { type: "approval_requested", ...base, callKey: callKeyOf(call), reason: call.approval?.reason } });
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
