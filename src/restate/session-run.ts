/**
 * One exclusive handler call of a session (`prompt`, `approve`, `reject`, a delivery of queued
 * messages, an abort of a run waiting for approval): the agent is restored from the session's
 * stored snapshot, given journaled effects, told the command, and run until it stops (the run
 * ended, or it waits for approval with nothing in flight); its new snapshot is stored.
 *
 * Everything the handler does to Restate happens at points the agent's chart decides, given
 * the journaled results of its steps, so a replay on another worker issues the same journal
 * operations in the same order:
 * - each model call and each tool call is a step (`journaled-model.ts`, `journaled-tools.ts`);
 * - at each turn's end the turn's messages are checkpointed (for `state` while the run goes on)
 *   and, if the mailbox awakeable fired, the session's inbox is asked for messages steered or
 *   queued meanwhile;
 * - at the end the snapshot is taken in a step and stored (its timestamps and `createdAt` are
 *   the first execution's: state writes must repeat byte for byte on a replay).
 * The agent's own timers are off (tool and stall time limits run inside the steps, approvals
 * wait without a deadline), since a replay gets every outcome at once.
 */
import { randomUUID } from "node:crypto";
import type { ObjectContext, RestatePromise, internal } from "@restatedev/restate-sdk";
import { Agent, type AgentOptions } from "../agent.js";
import type { AgentSnapshot } from "../durable/snapshot.js";
import { defaultStreamFn } from "../machines/defaults.js";
import { callKeyOf, callsNamed } from "../machines/run-helpers.js";
import type { AgentEvent, AnyAgentTool } from "../types/agent.js";
import type { AgentMessage } from "../types/messages.js";
import { describeError } from "../util/describe-error.js";
import { JournalAwaiter } from "./journal-awaiter.js";
import { type RestateSdk, SessionRefusal } from "./sdk.js";
import { journaledStreamFn } from "./journaled-model.js";
import { journaledTool } from "./journaled-tools.js";
import { deliverable, firstPoll } from "./session-input.js";
import { type SessionBudget, formatBytes, jsonBytes, measuringSerde } from "./storable.js";
import { type SessionEventSink, sessionEventOf } from "./session-events.js";
import type { HeldMail, PromptInput, QueuedMessage, RunInProgress, RunResult } from "./session-types.js";
import { isWaitingForApproval, toolGoneProblem, waitingCallsOf } from "./session-view.js";

/** The session object's state keys. */
export const STATE_KEYS = {
	snapshot: "snapshot",
	run: "run",
	runs: "runs",
	waiting: "waiting",
	/** The attempt of the one delivery scheduled again after a refusal (see the `deliver` handler). */
	redelivery: "redelivery",
	/** The last of the inbox's hand-overs a run that ended had taken in (see `HeldMail`). */
	handedOver: "handedOver",
	turn: (turn: number) => `turn:${turn}`,
} as const;

/** Messages a turn added, as checkpointed; `replace` when a compaction rewrote the transcript. */
export interface TurnCheckpoint {
	messages: AgentMessage[];
	replace?: boolean | undefined;
}

/** What an exclusive handler asks of the agent. */
export type SessionCommand =
	| { type: "prompt"; input: PromptInput }
	| { type: "approve"; toolCallId: string; arguments?: unknown }
	| { type: "reject"; toolCallId: string; reason?: string | undefined }
	/** `heldSeq`: the inbox's hand-over the items came in (see {@link HeldMail}), recorded by the run's first checkpoint. */
	| { type: "deliver"; items: QueuedMessage[]; heldSeq?: number | undefined }
	| { type: "abort" };

/** What the handlers of one worker share: how to make its agents, where events go. */
export interface SessionWorkerSetup {
	/** The SDK build that serves the session objects (see sdk.ts). */
	sdk: RestateSdk;
	/** The session inbox object's name (steered and queued messages wait there). */
	inboxName: string;
	/** The agent options for a session: tools, stream function, hooks, and for a new session its model and system prompt. */
	agentOptions(sessionId: string): AgentOptions;
	events: SessionEventSink | undefined;
	worker: string;
	/** The largest JSON a tool result or model reply may journal (see `AgentSessionsOptions.maxStepBytes`). */
	maxStepBytes: number;
	/** The most a stored session may hold (see `AgentSessionsOptions.maxSessionBytes`). */
	maxSessionBytes: number;
	onToolRun?: ((sessionId: string, toolName: string, toolCallId: string, kind: "ran" | "interrupted") => void) | undefined;
}

type InboxClient = { takeForRun(invocationId: string): RestatePromise<HeldMail>; begin(invocationId: string): RestatePromise<boolean> };

function inboxOf(ctx: ObjectContext, name: string): InboxClient {
	return ctx.objectClient<{ takeForRun: (ctx: ObjectContext, invocationId: string) => Promise<HeldMail>; begin: (ctx: ObjectContext, invocationId: string) => Promise<boolean> }>({ name }, ctx.key) as unknown as InboxClient;
}

/** Tells the inbox that the command of `invocationId` is over (`abort` no longer cancels it). */
function endOf(ctx: ObjectContext, name: string, invocationId: string): void {
	ctx.objectSendClient<{ end: (ctx: ObjectContext, invocationId: string) => Promise<void> }>({ name }, ctx.key).end(invocationId);
}

/** Whether the chart waits for approval (with nothing in flight: the state is entered only then). */
function awaitingApproval(value: unknown): boolean {
	return typeof value === "object" && value !== null && (value as { running?: unknown }).running === "awaiting-approval";
}

/** Resolves once the run stops: "idle" when it ended, "waiting" when it waits for approval. */
function untilStopped(agent: Agent, ended: Promise<void>): Promise<"idle" | "waiting"> {
	return new Promise((resolve, reject) => {
		const actor = agent.actor;
		let subscription: { unsubscribe(): void } | undefined;
		const check = (snapshot: { value: unknown }) => {
			if (!awaitingApproval(snapshot.value)) return;
			subscription?.unsubscribe();
			resolve("waiting");
		};
		subscription = actor.subscribe(check);
		check(actor.getSnapshot());
		ended.then(() => {
			subscription?.unsubscribe();
			resolve("idle");
		}, reject);
	});
}

/** Whether two sets of queues hold the same messages. */
function sameQueues(a: NonNullable<RunInProgress["queued"]>, b: NonNullable<RunInProgress["queued"]>): boolean {
	return JSON.stringify(a) === JSON.stringify(b);
}

/** The messages the agent holds queued. */
function queuesOf(agent: Agent): NonNullable<RunInProgress["queued"]> {
	if (!agent.hasQueuedMessages()) return { steer: [], followUp: [] };
	const { steeringQueue, followUpQueue } = agent.snapshot().machine.context;
	return { steer: steeringQueue, followUp: followUpQueue };
}

/**
 * Runs `action`, turning what it throws (an unknown approval id, arguments the tool's schema
 * refuses, a snapshot that cannot be restored) into a terminal error: retrying cannot help.
 * `refused` runs first (it takes back what the refused command wrote).
 */
function terminally<T>(action: () => T, refused: () => void): T {
	try {
		return action();
	} catch (error) {
		refused();
		throw new SessionRefusal(describeError(error), 409);
	}
}

/**
 * The terminal error (413) of a call whose input would take the session over `maxSessionBytes`.
 *
 * @example
 * throw sessionFull("prompt", storedBytes, inputBytes, setup.maxSessionBytes);
 */
export function sessionFull(handler: string, storedBytes: number, inputBytes: number, maxBytes: number): SessionRefusal {
	return new SessionRefusal(
		`agentchart/restate: ${handler} refused: the session holds ${formatBytes(storedBytes)} and this input is ${formatBytes(inputBytes)}, over the ${formatBytes(maxBytes)} a session may hold (maxSessionBytes). ` +
			"Start a new session (a full one takes no further prompt, so keep sessions under the limit with compaction in the agent options before they fill up); raise maxSessionBytes only with restate-server's message size limit (worker.invoker.message-size-limit)",
		413,
	);
}

/**
 * The stored snapshot with only the tools the worker offers in the agent's tool list (the worker's
 * tools are the session's; `Agent.restore` refuses a snapshot naming a tool it is not given).
 */
function withToolsOffered(stored: AgentSnapshot, offered: ReadonlySet<string>): AgentSnapshot {
	const context = stored.machine.context;
	if (context.tools.every((tool) => offered.has(tool.name))) return stored;
	return { ...stored, machine: { ...stored.machine, context: { ...context, tools: context.tools.filter((tool) => offered.has(tool.name)) } } };
}

/**
 * Runs one session command in an exclusive handler and stores the session (see the module
 * comment). The handler must have `explicitCancellation: true` (`abort` cancels it).
 *
 * @example
 * prompt: restate.handlers.object.exclusive({ explicitCancellation: true }, (ctx, input) => runSessionCommand(ctx, setup, { type: "prompt", input }))
 */
export async function runSessionCommand(ctx: ObjectContext, setup: SessionWorkerSetup, command: SessionCommand): Promise<RunResult> {
	const internalCtx = ctx as unknown as internal.ContextInternal;
	const cancel = new AbortController();
	let agent: Agent | undefined;
	// Read before anything else is awaited (the awaiter takes over from the first step on).
	let storedBytes = 0;
	const stored = (await ctx.get<AgentSnapshot>(STATE_KEYS.snapshot, measuringSerde((bytes) => (storedBytes = bytes)))) ?? null;
	const waiting = isWaitingForApproval(stored);
	const storedQueues = { steer: stored?.machine.context.steeringQueue ?? [], followUp: stored?.machine.context.followUpQueue ?? [] };
	if (command.type === "prompt" && waiting) {
		throw new SessionRefusal("agentchart: the session's run waits for approval: approve or reject its calls (or abort it) before a new prompt", 409);
	}
	// A session over restate-server's message size limit takes no further call and answers
	// none: it hangs. So the session is kept under `maxSessionBytes`: a prompt that would take
	// it over is refused here, and during the run each step's outcome counts against what is
	// left (one that does not fit is journaled as an error instead, see `storable.ts`).
	// A reject's reason becomes the call's stored result (one without a reason can always be given:
	// a full session must still be able to decline a call it could run).
	const reason = command.type === "reject" ? command.reason : undefined;
	const inputBytes =
		command.type === "prompt" ? jsonBytes(command.input) : command.type === "deliver" ? jsonBytes(command.items.map((item) => item.message)) : reason !== undefined ? jsonBytes(reason) : 0;
	const budget: SessionBudget = { max: setup.maxSessionBytes, used: storedBytes + inputBytes };
	if ((command.type === "prompt" || reason !== undefined) && budget.used > budget.max) throw sessionFull(command.type, storedBytes, inputBytes, budget.max);
	// The calls a decision names, as the agent names them (`callsNamed`): the agent refuses a name
	// that fits two.
	const waitingCalls = waitingCallsOf(stored);
	const named = command.type === "approve" || command.type === "reject" ? callsNamed(waitingCalls, command.toolCallId) : [];
	if ((command.type === "approve" || command.type === "reject") && named.length === 0) {
		const why = waiting ? `the calls waiting are ${waitingCalls.map((call) => `"${callKeyOf(call)}"`).join(", ")}` : "the session has no run waiting";
		throw new SessionRefusal(`agentchart: tool call "${command.toolCallId}" is not waiting for approval (${why})`, 409);
	}
	// A command that goes on with a run waiting for approval (a decision, a delivery, an abort)
	// goes on with the same run, under its number: an abort aimed at that run
	// (`abortWaiting(number)`) must still find it after a delivery stored it again meanwhile.
	const going = waiting ? await ctx.get<number>(STATE_KEYS.waiting) : null;
	// Before the command is announced to the inbox: options the worker cannot give refuse the call
	// (terminal) with nothing to take back.
	const base = setup.agentOptions(ctx.key);
	// The worker's tools are the session's: a deploy may have removed one the stored session has.
	// The session goes on without it (a call of it in the transcript is history), and a call of it
	// still waiting can be rejected or aborted, not approved.
	const offered = new Set((base.initialState?.tools ?? []).map((tool: AnyAgentTool) => tool.name));
	const gone = command.type === "approve" && named.length === 1 ? named.find((call) => !offered.has(call.toolCall.name)) : undefined;
	if (gone) throw new SessionRefusal(`agentchart: tool call "${callKeyOf(gone)}" cannot be approved: ${toolGoneProblem(gone.toolCall.name)}`, 409);
	// Registered with the inbox, where `abort` looks (both are exclusive calls of the inbox, so
	// one comes first): an abort after this cancels this invocation; an abort received before
	// this command started, and not yet settled (its mark waits behind this command in the
	// session's queue), aborts the run at once. The answer is journaled: a replay decides alike.
	const invocationId = ctx.request().id;
	const abortedBeforeStart = command.type !== "abort" && (await inboxOf(ctx, setup.inboxName).begin(invocationId));
	const number = going ?? ((await ctx.get<number>(STATE_KEYS.runs)) ?? 0) + 1;
	if (going === null) ctx.set(STATE_KEYS.runs, number);
	const run: RunInProgress = { invocationId, number, turns: 0, from: stored?.createdAt ?? null };
	if (waiting) run.stillWaiting = command.type === "abort" ? [] : waitingCalls.filter((call) => named.length !== 1 || call !== named[0]).map(callKeyOf);
	const awaiter = new JournalAwaiter(internalCtx, setup.sdk.RestatePromise, () => cancel.abort(new Error("The run was aborted")));
	// As if Restate had cancelled it before its first step: each step journals that it was cancelled.
	if (abortedBeforeStart) cancel.abort(new Error("The run was aborted before it started"));

	let modelSteps = 0;
	const host = {
		ctx,
		awaiter,
		cancelSignal: cancel.signal,
		nextStepName: () => `model ${++modelSteps}`,
		abortRun: () => agent?.abort(),
		streamIdleTimeoutMs: base.streamIdleTimeoutMs ?? 120_000,
		toolTimeoutMs: base.toolTimeoutMs ?? 180_000,
		maxStepBytes: setup.maxStepBytes,
		sessionBudget: budget,
		onToolRun: setup.onToolRun ? (toolName: string, toolCallId: string, kind: "ran" | "interrupted") => setup.onToolRun?.(ctx.key, toolName, toolCallId, kind) : undefined,
	};
	const tools = (base.initialState?.tools ?? []).map((tool: AnyAgentTool) => journaledTool(tool, host));

	// Live events: sent only while the attempt makes progress (not for steps it replays).
	const attempt = randomUUID();
	let seq = 0;
	let open = true;
	const publish = (event: AgentEvent) => {
		if (!open || !setup.events || !internalCtx.isProcessing()) return;
		setup.events.publish({ sessionId: ctx.key, invocationId: run.invocationId, worker: setup.worker, attempt, seq: ++seq, event: sessionEventOf(event) });
	};

	// Turn checkpoints and the inbox, at each turn's end (the chart waits for its listeners there).
	let checkpointed = stored?.machine.context.messages.length ?? base.initialState?.messages?.length ?? 0;
	let compacted = false;
	// Messages steered or queued meanwhile wait in the inbox; reading it is a call to another
	// object, so the run reads it only after the mailbox awakeable said something arrived (the
	// `steer` handler resolves it). A message that arrives as the mailbox is renewed is found by
	// the delivery that `steer` also queues behind this run.
	const inbox = inboxOf(ctx, setup.inboxName);
	let mailArrived = false;
	// The hand-over a delivery took its messages in: shown as waiting by `state` until a checkpoint has them.
	let delivered = command.type === "deliver" ? command.heldSeq : undefined;
	const openMailbox = () => {
		const mailbox = ctx.awakeable<boolean>();
		run.mailbox = mailbox.id;
		awaiter.watch(mailbox.promise, () => (mailArrived = true));
	};
	openMailbox();
	ctx.set(STATE_KEYS.run, run);
	const atTurnEnd = async (event: AgentEvent) => {
		if (event.type === "auto_compaction_end" && event.result) compacted = true;
		if (event.type !== "turn_end" || !open || !agent) return;
		// A final turn (a plain reply, nothing queued) needs no checkpoint: the store follows at
		// once. Should the run go on after all, the next checkpoint takes these messages too.
		const final = event.toolResults.length === 0 && event.message.role === "assistant" && event.message.stopReason === "stop" && !mailArrived && !agent.hasQueuedMessages();
		if (final) return;
		const current = agent.state.messages;
		const checkpoint: TurnCheckpoint = compacted ? { messages: current.slice(), replace: true } : { messages: current.slice(checkpointed) };
		compacted = false;
		checkpointed = current.length;
		const turn = ++run.turns;
		const journaled = await awaiter.await(ctx.run(`checkpoint ${turn}`, () => checkpoint));
		ctx.set(STATE_KEYS.turn(turn), journaled);
		const readInbox = mailArrived;
		if (readInbox) {
			mailArrived = false;
			openMailbox();
		}
		// `state` shows the run's queues (from its first change on: before, the stored snapshot's
		// are the run's), written with the checkpoint that holds what the turn took from them.
		const queued = queuesOf(agent);
		if (run.queued !== undefined || !sameQueues(queued, storedQueues)) run.queued = queued;
		// What the delivery that started this run took from the inbox is in this checkpoint (or in
		// the run's queues): from here `state` reads it there, not from the inbox's hand-over.
		if (delivered !== undefined) {
			run.heldSeq = Math.max(run.heldSeq ?? 0, delivered);
			delivered = undefined;
		}
		ctx.set(STATE_KEYS.run, run);
		if (!readInbox) return;
		// The inbox holds what it hands over (`held`) until the run says it has it (`heldSeq`):
		// in between, `state` shows it from there, so it is never in neither place.
		const mail = await awaiter.await(inbox.takeForRun(run.invocationId));
		const items = deliverable(mail.items, (problem) => ctx.console.warn(problem));
		budget.used += jsonBytes(items.map((item) => item.message));
		for (const item of items) {
			if (item.mode === "steer") agent.steer(item.message);
			else agent.followUp(item.message);
		}
		run.queued = queuesOf(agent);
		run.heldSeq = mail.seq;
		ctx.set(STATE_KEYS.run, run);
	};

	const options: AgentOptions = {
		...base,
		initialState: { ...base.initialState, tools },
		streamFn: journaledStreamFn(base.streamFn ?? defaultStreamFn, host),
		// Time limits run inside the steps; an abort waits for the calls' journaled outcomes.
		toolTimeoutMs: 0,
		streamIdleTimeoutMs: 0,
		toolAbortGraceMs: 0,
		approvalTimeoutMs: undefined,
		store: undefined,
		sessionId: ctx.key,
		listeners: [...(base.listeners ?? []), publish, atTurnEnd],
	};
	// A command refused after the run was announced takes the announcement back: `state` must
	// not report a run that never started (a failed invocation's state writes are kept).
	const refused = () => {
		ctx.clear(STATE_KEYS.run);
		endOf(ctx, setup.inboxName, invocationId);
	};
	agent = terminally(() => (stored ? Agent.restore(withToolsOffered(stored, offered), options) : new Agent(options)), refused);
	const restored = agent;
	const baseline = restored.state.messages.length;

	let ended: Promise<void>;
	switch (command.type) {
		case "prompt":
			ended = typeof command.input === "string" ? restored.prompt(command.input) : restored.prompt(command.input);
			break;
		case "approve":
			// The promise approve/reject return resolves once a store has the decision: there is
			// none here (Restate's journal has the command), so nothing waits for it.
			void terminally(() => restored.approve(command.toolCallId, command.arguments === undefined ? {} : { arguments: command.arguments }), refused);
			ended = restored.waitForIdle();
			break;
		case "reject":
			void terminally(() => restored.reject(command.toolCallId, command.reason), refused);
			ended = restored.waitForIdle();
			break;
		case "deliver":
			if (waiting) {
				for (const item of command.items) {
					if (item.mode === "steer") restored.steer(item.message);
					else restored.followUp(item.message);
				}
				ended = restored.waitForIdle();
			} else {
				// What one poll of the agent's queues takes starts the run; the rest wait in its queues.
				const now = firstPoll(command.items, { steeringMode: restored.steeringMode, followUpMode: restored.followUpMode });
				ended = restored.prompt(now.map((item) => item.message));
				for (const item of command.items) {
					if (now.includes(item)) continue;
					if (item.mode === "steer") restored.steer(item.message);
					else restored.followUp(item.message);
				}
			}
			break;
		case "abort":
			restored.abort();
			ended = restored.waitForIdle();
			break;
	}
	const stopped = await untilStopped(restored, ended);
	open = false;

	// The new messages are not journaled beside the snapshot that holds them: each journal entry
	// must fit restate-server's message size limit, and twice the messages would halve what one
	// call can add. They are the snapshot's messages from `baseline` on (see docs/restate.md, Limits).
	const saved = await awaiter.await(
		ctx.run("store", (): StoreStep => ({
			snapshot: restored.snapshot(),
			status: stopped === "waiting" ? "awaiting-approval" : "idle",
			pendingApprovals: stopped === "waiting" ? restored.pendingApprovals : [],
			errorMessage: restored.state.errorMessage,
			aborted: cancel.signal.aborted || command.type === "abort",
		})),
	);
	const { snapshot, ...outcome } = saved;
	ctx.set(STATE_KEYS.snapshot, snapshot);
	// What the run took from the inbox is in the snapshot now: `state` no longer counts it there.
	const tookIn = Math.max(run.heldSeq ?? 0, delivered ?? 0);
	if (tookIn > ((await ctx.get<number>(STATE_KEYS.handedOver)) ?? 0)) ctx.set(STATE_KEYS.handedOver, tookIn);
	for (let turn = 1; turn <= run.turns; turn++) ctx.clear(STATE_KEYS.turn(turn));
	ctx.clear(STATE_KEYS.run);
	if (outcome.status === "awaiting-approval") ctx.set(STATE_KEYS.waiting, number);
	else ctx.clear(STATE_KEYS.waiting);
	if (command.type !== "abort") endOf(ctx, setup.inboxName, invocationId);
	return { ...outcome, newMessages: snapshot.machine.context.messages.slice(baseline) };
}

/** What the final step journals: the snapshot to store, and the call's answer but its new messages (they are in the snapshot). */
type StoreStep = Omit<RunResult, "newMessages"> & { snapshot: AgentSnapshot };
