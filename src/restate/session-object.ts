/**
 * Agent sessions as a Restate virtual object, keyed by session id, and the small inbox object
 * beside it.
 *
 * Exclusive handlers run the agent, one at a time per session (Restate queues the others):
 * `prompt`, `approve`, `reject`, and those that only the session itself calls (`deliver`, which
 * starts or feeds a run with queued messages, and `settleAbort`). Shared handlers answer while
 * a run goes on: `steer` and `followUp` (they leave the message in the inbox, where the run
 * takes it at its next turn's end, and make sure a run takes it when none is going on),
 * `abort` (it cancels the running invocation: the cancellation reaches the run's steps), and
 * `snapshot` and `state`.
 *
 * Why an inbox object: a shared handler cannot write the session's state, and an exclusive one
 * would wait behind the run it means to steer. The inbox keeps the messages in Restate's own
 * state (no queue of ours), and the run reads it with a journaled call, at a point its chart
 * decides, so a replay reads the same messages at the same place.
 *
 * The inbox is also where `abort` meets the calls queued before it, which have not announced a
 * run (Restate's queue of a key cannot be read, and its invocation ids are not known before a
 * call starts): each command registers with the inbox as it starts (`begin`), an abort marks the
 * inbox and sends a mark of its own (`settleAbort`) through the session's queue, behind every
 * call received before it, and answers only once the mark has arrived there (`arrived`). A
 * command that starts while the mark is still ahead of it was received before the abort, and is
 * aborted at once; once the mark came through, calls run again.
 */
import type * as restate from "@restatedev/restate-sdk";
import { shown, unknownKeys } from "../agent-input.js";
import { describeError } from "../util/describe-error.js";
import type { AgentOptions } from "../agent.js";
import type { AgentSnapshot } from "../durable/snapshot.js";
import type { AnyAgentTool } from "../types/agent.js";
import type { AgentMessage } from "../types/messages.js";
import { type RestateSdk, SessionRefusal, asTerminalErrorOf } from "./sdk.js";
import { type SessionEventSink } from "./session-events.js";
import { STATE_KEYS, type SessionWorkerSetup, type TurnCheckpoint, runSessionCommand, sessionFull } from "./session-run.js";
import type { AbortResult, ApproveInput, HeldMail, PromptInput, QueuedInput, QueuedMessage, QueuedResult, RejectInput, RunInProgress, RunResult, SessionState, StoredSnapshot } from "./session-types.js";
import { checkDecisionInput, checkPromptInput, checkQueuedInput, deliverable } from "./session-input.js";
import { describeSession, isWaitingForApproval, runGoingOn } from "./session-view.js";
import { DEFAULT_MAX_SESSION_BYTES, DEFAULT_MAX_STEP_BYTES, jsonBytes, measuringSerde } from "./storable.js";

/**
 * Options of {@link createAgentSessions}.
 *
 * @example
 * const options: AgentSessionsOptions = { agent: (sessionId) => ({ sessionId, initialState: { model, tools }, streamFn }), events: createHttpEventSink("http://localhost:9900") };
 * const sessions = createAgentSessions(options);
 */
export interface AgentSessionsOptions {
	/**
	 * The agent options of a session on this worker: its tools, its stream function and hooks,
	 * and, for a session that has never run, its model and system prompt (a stored session keeps
	 * its own). Called at every handler call, replays included: return the same tools and
	 * functions each time (and deterministic hooks: they run again on a replay). Should it throw,
	 * the call is refused with a terminal error (500) that quotes it, not retried.
	 */
	agent: (sessionId: string) => AgentOptions;
	/** The virtual object's name (default `"AgentSession"`); the inbox is `${name}Inbox`. */
	name?: string | undefined;
	/** Where live events go (default: nowhere). See `createHttpEventSink` and `createEventHub`. */
	events?: SessionEventSink | undefined;
	/** This worker's name in events (default: `pid-` and the process id). */
	worker?: string | undefined;
	/**
	 * The largest JSON, in bytes, one step may journal: a tool call's result, a model's reply
	 * (default 8 MiB, a quarter of restate-server's default message size limit). A tool result
	 * over it is answered with an error the model reads ("ran, but its result could not be
	 * stored: its JSON is 17.0 MiB, over the 8.0 MiB a step may journal ..."), a reply over it ends the turn as a failed
	 * request. Without the cap, an entry over the server's limit makes Restate retry the call for
	 * ever, and every later call of the session waits behind it. Keep it well under
	 * `worker.invoker.message-size-limit`: a turn's checkpoint and the stored session carry the
	 * results again (see docs/restate.md, Limits).
	 */
	maxStepBytes?: number | undefined;
	/**
	 * The most a session may hold, in bytes of its stored JSON (default 12 MiB). A session over
	 * restate-server's message size limit takes no further call and answers none (it hangs, and
	 * so does its `state`), so it is kept under this: a `prompt`, `steer` or `followUp` whose
	 * input would take the session over it is refused (status 413, the sizes in the message),
	 * and in a run a tool result or model reply over what the session has left is answered as
	 * one over `maxStepBytes` is ("... over the 1.2 MiB the session has left of its 12.0 MiB
	 * (maxSessionBytes)"). Keep it well under `worker.invoker.message-size-limit` (a session of
	 * 16 MiB was measured to hang at the default 32 MiB; see docs/restate.md, Limits).
	 */
	maxSessionBytes?: number | undefined;
	/** Told when a tool call actually runs on this worker, or is answered as interrupted (metrics, tests). */
	onToolRun?: ((sessionId: string, toolName: string, toolCallId: string, kind: "ran" | "interrupted") => void) | undefined;
}

/**
 * The handlers of an agent session, as a client sees them (see `createSessionClient`).
 *
 * @example
 * // Restate's HTTP ingress, without the client: POST /<object name>/<session id>/<handler>
 * const response = await fetch("http://localhost:8080/AgentSession/user-42/state", { method: "POST" });
 * const state = (await response.json()) as Awaited<ReturnType<AgentSessionHandlers["state"]>>;
 */
export interface AgentSessionHandlers {
	prompt(input: PromptInput): Promise<RunResult>;
	approve(input: ApproveInput): Promise<RunResult>;
	reject(input: RejectInput): Promise<RunResult>;
	steer(input: QueuedInput): Promise<QueuedResult>;
	followUp(input: QueuedInput): Promise<QueuedResult>;
	abort(): Promise<AbortResult>;
	snapshot(): Promise<StoredSnapshot>;
	state(): Promise<SessionState>;
}

/**
 * What {@link createAgentSessions} returns: the two objects to serve.
 *
 * @example
 * const sessions: AgentSessions = createAgentSessions({ agent: () => ({ initialState: { model, tools }, streamFn }) });
 * restate.serve({ services: sessions.services, port: 9080 });
 */
export interface AgentSessions {
	/** The session object (serve it, and call it by its name). */
	readonly object: restate.VirtualObjectDefinition<string, unknown>;
	/** The inbox object beside it. */
	readonly inbox: restate.VirtualObjectDefinition<string, unknown>;
	/** Both, for `restate.serve({ services })` or `createEndpointHandler({ services })`. */
	readonly services: restate.VirtualObjectDefinition<string, unknown>[];
	/** The session object's name. */
	readonly name: string;
}

/** What `steer` and `followUp` ask the inbox to keep: the message, if the session can still hold it. */
interface BoundedPush {
	item: QueuedMessage;
	/** What the session holds besides the inbox: its stored snapshot and the turns a run going on checkpointed. */
	sessionBytes: number;
	maxSessionBytes: number;
}

/**
 * The turns a run going on has checkpointed since the stored snapshot, in order, each with its
 * stored size: what `state` shows of the run and what `steer` counts against `maxSessionBytes`.
 */
async function turnCheckpoints(ctx: restate.ObjectSharedContext, run: RunInProgress | null): Promise<{ checkpoint: TurnCheckpoint; bytes: number }[]> {
	const turns: { checkpoint: TurnCheckpoint; bytes: number }[] = [];
	for (let turn = 1; run && turn <= run.turns; turn++) {
		let bytes = 0;
		const checkpoint = await ctx.get<TurnCheckpoint>(STATE_KEYS.turn(turn), measuringSerde((measured) => (bytes = measured)));
		if (checkpoint) turns.push({ checkpoint, bytes });
	}
	return turns;
}

/** A user message from a text, stamped with Restate's journaled clock (a replay gets the same one). */
async function messageOf(ctx: restate.ObjectSharedContext, input: QueuedInput): Promise<AgentMessage> {
	if (typeof input !== "string") return input;
	return { role: "user", content: [{ type: "text", text: input }], timestamp: await ctx.date.now() };
}

/**
 * How long a delivery whose agent could not be made waits before it is tried again: 1 s, then
 * twice as long each time, at most a minute.
 *
 * @example
 * redeliveryDelayMs(3); // 4000
 */
export function redeliveryDelayMs(attempt: number): number {
	return Math.min(1000 * 2 ** Math.max(0, attempt - 1), 60_000);
}

/**
 * The tools a session's agent options give it, or undefined when the options cannot be made:
 * `state` then answers from what is stored, and the next command that restores the session
 * reports the options' error.
 */
function toolsOf(agentOptions: () => AgentOptions): readonly AnyAgentTool[] | undefined {
	try {
		return agentOptions().initialState?.tools ?? [];
	} catch {
		return undefined;
	}
}

/** Every option of {@link AgentSessionsOptions} (the type makes the list whole). */
const SESSIONS_OPTIONS = Object.keys({
	agent: true,
	name: true,
	events: true,
	worker: true,
	maxStepBytes: true,
	maxSessionBytes: true,
	onToolRun: true,
} satisfies Record<keyof AgentSessionsOptions, true>);

/**
 * Refuses options no session could run with, when the objects are made: found at a handler's
 * first call instead, a plain error there (`options.agent is not a function`) would make Restate
 * retry the call (for an hour, by default), and every later call of the session would queue
 * behind it.
 */
function checkSessionsOptions(options: AgentSessionsOptions): void {
	const problem = (field: string, expected: string, value: unknown) => new TypeError(`agentchart/restate: createAgentSessions: ${field} must be ${expected}, got ${shown(value)}`);
	if (typeof options !== "object" || options === null) throw problem("its options", "an object such as { agent: (sessionId) => agentOptions }", options);
	// Ignored, a misspelt `event` would publish nothing, a misspelt byte limit leave the default: refused instead.
	const unknown = unknownKeys(options, SESSIONS_OPTIONS);
	if (unknown !== undefined) throw new TypeError(`agentchart/restate: createAgentSessions has no option ${unknown} (its options: ${SESSIONS_OPTIONS.join(", ")})`);
	if (typeof options.agent !== "function") throw problem("agent", "a function (sessionId) => agent options", options.agent);
	if (options.name !== undefined && (typeof options.name !== "string" || options.name === "")) throw problem("name", "a non-empty text", options.name);
	if (options.worker !== undefined && typeof options.worker !== "string") throw problem("worker", "a text", options.worker);
	if (options.events !== undefined && typeof (options.events as { publish?: unknown } | null)?.publish !== "function") throw problem("events", "a sink with a publish(envelope) method (createHttpEventSink)", options.events);
	if (options.onToolRun !== undefined && typeof options.onToolRun !== "function") throw problem("onToolRun", "a function", options.onToolRun);
}

/**
 * The byte limit `field` was given, or `fallback`; a TypeError for what is not a number of at
 * least 1024. A string is named as one: shown bare, "2048" looked like a number, and a large enough one.
 *
 * @example
 * byteLimit("maxStepBytes", undefined, DEFAULT_MAX_STEP_BYTES); // 8 MiB
 * byteLimit("maxStepBytes", "2048", DEFAULT_MAX_STEP_BYTES); // throws: ... (got the string "2048")
 */
function byteLimit(field: string, value: unknown, fallback: number): number {
	const limit = value ?? fallback;
	if (typeof limit === "number" && Number.isFinite(limit) && limit >= 1024) return limit;
	const got = typeof value === "number" ? String(value) : typeof value === "string" ? `the string ${JSON.stringify(value)}` : shown(value);
	throw new TypeError(`agentchart/restate: ${field} must be a number of bytes, at least 1024 (got ${got})`);
}

/**
 * `createAgentSessions` (see `index.ts`) with the SDK build that will serve the objects (see sdk.ts).
 *
 * @example
 * import * as restate from "@restatedev/restate-sdk";
 * const sessions = createAgentSessionsWith(restate, { agent: () => ({ initialState: { model, tools }, streamFn }) });
 */
export function createAgentSessionsWith(sdk: RestateSdk, options: AgentSessionsOptions): AgentSessions {
	checkSessionsOptions(options);
	const maxStepBytes = byteLimit("maxStepBytes", options.maxStepBytes, DEFAULT_MAX_STEP_BYTES);
	const maxSessionBytes = byteLimit("maxSessionBytes", options.maxSessionBytes, DEFAULT_MAX_SESSION_BYTES);
	if (typeof (Promise as { withResolvers?: unknown }).withResolvers !== "function") {
		throw new Error(`agentchart/restate: the Restate SDK needs Node 22 or newer (this is Node ${process.versions.node})`);
	}
	const name = options.name ?? "AgentSession";
	const inboxName = `${name}Inbox`;
	const setup: SessionWorkerSetup = {
		sdk,
		inboxName,
		agentOptions: (sessionId) => {
			// Terminal: a retry would call it again as it is (it is synchronous), and while Restate
			// retried the call, every later call of the session, an abort included, would wait behind it.
			let agentOptions: AgentOptions;
			try {
				agentOptions = options.agent(sessionId);
			} catch (error) {
				throw new SessionRefusal(`agentchart/restate: the worker's agent(${JSON.stringify(sessionId)}) threw: ${describeError(error)}`, 500);
			}
			if (agentOptions === null || typeof agentOptions !== "object") throw new SessionRefusal(`agentchart/restate: the worker's agent(${JSON.stringify(sessionId)}) must return agent options (an object), got ${shown(agentOptions)}`, 500);
			const tools: unknown = agentOptions.initialState?.tools;
			if (tools !== undefined && (!Array.isArray(tools) || !tools.every((tool) => tool !== null && typeof tool === "object"))) {
				throw new SessionRefusal(`agentchart/restate: the worker's agent(${JSON.stringify(sessionId)}) must give initialState.tools as a list of tools, got ${shown(tools)}`, 500);
			}
			if (agentOptions.approvalTimeoutMs !== undefined) throw new SessionRefusal("agentchart/restate: approvalTimeoutMs is not supported on Restate (a session waiting for approval holds nothing to time it); reject late approvals from your application", 500);
			if (agentOptions.store !== undefined) throw new SessionRefusal("agentchart/restate: an agent store is not used on Restate (the session's state is Restate's)", 500);
			return agentOptions;
		},
		events: options.events,
		worker: options.worker ?? `pid-${process.pid}`,
		maxStepBytes,
		maxSessionBytes,
		onToolRun: options.onToolRun,
	};
	const exclusive = { explicitCancellation: true } as const;
	// A refusal is answered as the terminal error of the build that serves the objects.
	const objectOptions = { asTerminalError: asTerminalErrorOf(sdk) };
	const self = { name };

	const inbox = sdk.object({
		name: inboxName,
		options: objectOptions,
		handlers: {
			// Kept for calls sent by older worker code (`steer` and `followUp` now call `pushWithin`).
			push: sdk.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: restate.ObjectContext, item: QueuedMessage): Promise<void> => {
				const items = (await ctx.get<QueuedMessage[]>("items")) ?? [];
				items.push(item);
				ctx.set("items", items);
			}),
			// The session's size is checked here, where the messages already waiting are counted and
			// no other push comes between the check and the write: checked by each `steer` alone,
			// messages that each fit would pile up in the inbox and take the session over its cap
			// together (towards the size at which restate-server hangs the session).
			pushWithin: sdk.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: restate.ObjectContext, input: BoundedPush): Promise<void> => {
				let waitingBytes = 0;
				const items = (await ctx.get<QueuedMessage[]>("items", measuringSerde((bytes) => (waitingBytes = bytes)))) ?? [];
				const messageBytes = jsonBytes(input.item.message);
				if (input.sessionBytes + waitingBytes + messageBytes > input.maxSessionBytes) throw sessionFull(input.item.mode, input.sessionBytes + waitingBytes, messageBytes, input.maxSessionBytes);
				items.push(input.item);
				ctx.set("items", items);
			}),
			// What a delivery took and could not deliver (its agent could not be made), back in front
			// of what arrived since.
			// `{ items, seq }`: the delivery's hand-over (`seq`) is void, what it took waits in `items`
			// again, shown once. Emptied, not cleared: hand-overs stay numbered after it, since a run's
			// `heldSeq` and the session's `handedOver` count them.
			giveBack: sdk.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: restate.ObjectContext, given: QueuedMessage[] | { items: QueuedMessage[]; seq: number }): Promise<void> => {
				const returned = Array.isArray(given) ? { items: given, seq: undefined } : given;
				ctx.set("items", [...returned.items, ...((await ctx.get<QueuedMessage[]>("items")) ?? [])]);
				const held = await ctx.get<HeldMail>("held");
				if (held?.delivery && held.seq === returned.seq) ctx.set("held", { ...held, items: [] });
			}),
			// Kept for deliveries sent by older worker code (a delivery now takes with `takeForRun`).
			take: sdk.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: restate.ObjectContext): Promise<QueuedMessage[]> => {
				const items = (await ctx.get<QueuedMessage[]>("items")) ?? [];
				if (items.length > 0) ctx.clear("items");
				return items;
			}),
			// A run's take at a turn's end: kept as `held` until the run's state says it has it (see HeldMail).
			// A delivery's take (`{ invocationId, delivery: true }`) is a hand-over too, made before its run is announced.
			takeForRun: sdk.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: restate.ObjectContext, taker: string | { invocationId: string; delivery: true }): Promise<HeldMail> => {
				const items = (await ctx.get<QueuedMessage[]>("items")) ?? [];
				const seq = ((await ctx.get<HeldMail>("held"))?.seq ?? 0) + 1;
				if (items.length > 0) ctx.clear("items");
				const held: HeldMail = typeof taker === "string" ? { seq, invocationId: taker, items } : { seq, invocationId: taker.invocationId, items, delivery: true };
				ctx.set("held", held);
				return held;
			}),
			// What `abort` needs to reach commands that have not announced a run yet: the one
			// that began last (`begin`, cleared by `end`), and an abort whose mark has not yet
			// come through the session's queue (`abortPending`, cleared by `settleAbort`). These
			// calls are exclusive, so an abort and a command's start are seen in one order.
			begin: sdk.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: restate.ObjectContext, invocationId: string): Promise<boolean> => {
				ctx.set("current", invocationId);
				return (await ctx.get<number>("abortPending")) !== null;
			}),
			end: sdk.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: restate.ObjectContext, invocationId: string): Promise<void> => {
				if ((await ctx.get<string>("current")) === invocationId) ctx.clear("current");
			}),
			abort: sdk.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: restate.ObjectContext): Promise<{ mark: number; current: string | null }> => {
				const mark = ((await ctx.get<number>("aborts")) ?? 0) + 1;
				ctx.set("aborts", mark);
				ctx.set("abortPending", mark);
				return { mark, current: (await ctx.get<string>("current")) ?? null };
			}),
			settleAbort: sdk.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: restate.ObjectContext, mark: number): Promise<void> => {
				if ((await ctx.get<number>("abortPending")) === mark) ctx.clear("abortPending");
			}),
			// Kept for calls sent by older worker code (`state` now reads `view`).
			peek: sdk.handlers.object.shared({ ingressPrivate: true }, async (ctx: restate.ObjectSharedContext): Promise<QueuedMessage[]> => (await ctx.get<QueuedMessage[]>("items")) ?? []),
			// What `state` reads: what waits, and the last hand-over to a run.
			view: sdk.handlers.object.shared(
				{ ingressPrivate: true },
				async (ctx: restate.ObjectSharedContext): Promise<{ items: QueuedMessage[]; held: HeldMail | null }> => ({
					items: (await ctx.get<QueuedMessage[]>("items")) ?? [],
					held: (await ctx.get<HeldMail>("held")) ?? null,
				}),
			),
		},
	});
	const inboxApi = { name: inboxName } as restate.VirtualObjectDefinition<
		string,
		{
			pushWithin: (ctx: restate.ObjectContext, input: BoundedPush) => Promise<void>;
			takeForRun: (ctx: restate.ObjectContext, taker: { invocationId: string; delivery: true }) => Promise<HeldMail>;
			giveBack: (ctx: restate.ObjectContext, given: { items: QueuedMessage[]; seq: number }) => Promise<void>;
			peek: (ctx: restate.ObjectSharedContext) => Promise<QueuedMessage[]>;
			view: (ctx: restate.ObjectSharedContext) => Promise<{ items: QueuedMessage[]; held: HeldMail | null }>;
			abort: (ctx: restate.ObjectContext) => Promise<{ mark: number; current: string | null }>;
			settleAbort: (ctx: restate.ObjectContext, mark: number) => Promise<void>;
		}
	>;
	type SelfApi = {
		deliver: (ctx: restate.ObjectContext, attempt?: number | null) => Promise<RunResult | null>;
		settleAbort: (ctx: restate.ObjectContext, mark: number) => Promise<RunResult | null>;
		arrived: (ctx: restate.ObjectSharedContext) => Promise<boolean>;
	};
	const selfApi = self as restate.VirtualObjectDefinition<string, SelfApi>;

	const queue = async (ctx: restate.ObjectSharedContext, mode: QueuedMessage["mode"], input: unknown): Promise<QueuedResult> => {
		// Checked before it is queued: a message the agent refuses must never reach a delivery.
		const message = await messageOf(ctx, checkQueuedInput(mode, input));
		// What the session holds: the stored snapshot, and the turns a run going on checkpointed
		// since (as `state` adds them up). The inbox adds what waits there, and refuses with 413.
		let sessionBytes = 0;
		const snapshot = await ctx.get<AgentSnapshot>(STATE_KEYS.snapshot, measuringSerde((bytes) => (sessionBytes = bytes)));
		// A compaction in the run rewrote the transcript: that checkpoint is the whole of it.
		for (const { checkpoint, bytes } of await turnCheckpoints(ctx, runGoingOn(snapshot, await ctx.get<RunInProgress>(STATE_KEYS.run)))) sessionBytes = checkpoint.replace ? bytes : sessionBytes + bytes;
		await ctx.objectClient(inboxApi, ctx.key).pushWithin({ item: { mode, message }, sessionBytes, maxSessionBytes });
		// A run going on takes it at its next turn's end (told by its mailbox); otherwise this
		// delivery (queued behind the run, if one is going on) starts or feeds one. Whichever
		// comes first finds the message.
		const run = await ctx.get<RunInProgress>(STATE_KEYS.run);
		if (run?.mailbox) ctx.resolveAwakeable(run.mailbox, true);
		ctx.objectSendClient(selfApi, ctx.key).deliver();
		return { queued: true };
	};

	const object = sdk.object({
		name,
		options: objectOptions,
		handlers: {
			// Inputs are checked first (a terminal 400 error): a call the agent would refuse must not be retried.
			prompt: sdk.handlers.object.exclusive(exclusive, (ctx: restate.ObjectContext, input: PromptInput) => runSessionCommand(ctx, setup, { type: "prompt", input: checkPromptInput(input) })),
			approve: sdk.handlers.object.exclusive(exclusive, (ctx: restate.ObjectContext, input: ApproveInput) => {
				const decision = checkDecisionInput("approve", input);
				return runSessionCommand(ctx, setup, { type: "approve", toolCallId: decision.toolCallId, arguments: decision.arguments });
			}),
			reject: sdk.handlers.object.exclusive(exclusive, (ctx: restate.ObjectContext, input: RejectInput) => {
				const decision = checkDecisionInput("reject", input);
				return runSessionCommand(ctx, setup, { type: "reject", toolCallId: decision.toolCallId, reason: decision.reason });
			}),
			// `attempt`: how many deliveries of these messages were refused before (see below).
			deliver: sdk.handlers.object.exclusive({ ...exclusive, ingressPrivate: true }, async (ctx: restate.ObjectContext, attempt?: number | null): Promise<RunResult | null> => {
				// The one delivery scheduled again (see below), if this is not it: a steer's own.
				const scheduled = await ctx.get<number>(STATE_KEYS.redelivery);
				const again = typeof attempt === "number" && attempt === scheduled;
				// Taken as a hand-over to this invocation (`held`): until the run's first checkpoint has
				// them, `state` shows them from there, as it shows what a run takes at a turn's end.
				const mail = await ctx.objectClient(inboxApi, ctx.key).takeForRun({ invocationId: ctx.request().id, delivery: true });
				const items = deliverable(mail.items, (problem) => ctx.console.warn(problem));
				if (items.length === 0) {
					if (again) ctx.clear(STATE_KEYS.redelivery);
					return null;
				}
				try {
					const result = await runSessionCommand(ctx, setup, { type: "deliver", items, heldSeq: mail.seq });
					ctx.clear(STATE_KEYS.redelivery);
					return result;
				} catch (error) {
					// Refused before a run took them (the worker's agent options or the stored session
					// could not be made): the messages were accepted (`steer` answered), so they go back
					// to the inbox, where `state` shows them, and one delivery is tried again later, less
					// often each time, until a worker can make the session's agent. A steer meanwhile
					// leaves its message with them: the delivery scheduled takes it too.
					if (!(error instanceof SessionRefusal)) throw error;
					ctx.objectSendClient(inboxApi, ctx.key).giveBack({ items, seq: mail.seq });
					if (scheduled === null || again) {
						const tries = again ? scheduled + 1 : 1;
						ctx.set(STATE_KEYS.redelivery, tries);
						ctx.objectSendClient(selfApi, ctx.key).deliver(tries, sdk.rpc.sendOpts({ delay: redeliveryDelayMs(tries) }));
					}
					throw error;
				}
			}),
			// Kept for calls sent by older worker code (an abort now sends `settleAbort`).
			abortWaiting: sdk.handlers.object.exclusive({ ...exclusive, ingressPrivate: true }, async (ctx: restate.ObjectContext, run: number | null): Promise<RunResult | null> => {
				const waiting = await ctx.get<number>(STATE_KEYS.waiting);
				if (waiting === null || (run !== null && waiting !== run)) return null;
				return runSessionCommand(ctx, setup, { type: "abort" });
			}),
			// An abort's mark, queued behind every exclusive call received before the abort: those
			// have run (each aborted at its start, or cancelled), so from here on calls run again;
			// and a run that waits for approval now was stopped by one of them: it is aborted.
			settleAbort: sdk.handlers.object.exclusive({ ...exclusive, ingressPrivate: true }, async (ctx: restate.ObjectContext, mark: number): Promise<RunResult | null> => {
				await ctx.objectClient(inboxApi, ctx.key).settleAbort(mark);
				if ((await ctx.get<number>(STATE_KEYS.waiting)) === null) return null;
				return runSessionCommand(ctx, setup, { type: "abort" });
			}),
			steer: sdk.handlers.object.shared((ctx: restate.ObjectSharedContext, input: QueuedInput) => queue(ctx, "steer", input)),
			followUp: sdk.handlers.object.shared((ctx: restate.ObjectSharedContext, input: QueuedInput) => queue(ctx, "followUp", input)),
			abort: sdk.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<AbortResult> => {
				// The command going on (also one that has not announced its run yet) is cancelled;
				// those still queued are aborted as they start, until the mark sent below comes
				// through the queue behind them.
				const { mark, current } = await ctx.objectClient(inboxApi, ctx.key).abort();
				if (current !== null) ctx.invocation(sdk.InvocationIdParser.fromString(current)).cancel();
				const waiting = await ctx.get<number>(STATE_KEYS.waiting);
				ctx.objectSendClient(selfApi, ctx.key).settleAbort(mark);
				// A one-way message reaches the session's queue some time after it is sent, and the
				// answer could go out first: a prompt sent on that answer then arrived ahead of the
				// mark, and was aborted (or refused by the run waiting for approval, which the mark
				// aborts). Calls from one handler to one object arrive in the order they were made
				// (Restate's ordering guarantee), so once this call behind the mark has answered, the
				// mark is queued, and every call received after this abort answers queues behind it.
				// (Waiting for `settleAbort` itself would hold the answer until the cancelled run and
				// the calls before the mark have ended, as long as a tool that ignores its signal.)
				await ctx.objectClient(selfApi, ctx.key).arrived();
				return { cancelled: current, waiting: current === null && waiting !== null };
			}),
			// What `abort` calls behind its mark (see there): shared, so it answers on arrival, not
			// behind the session's queue.
			arrived: sdk.handlers.object.shared({ ingressPrivate: true }, async (): Promise<boolean> => true),
			snapshot: sdk.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<StoredSnapshot> => (await ctx.get<AgentSnapshot>(STATE_KEYS.snapshot)) ?? null),
			state: sdk.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<SessionState> => {
				const snapshot = await ctx.get<AgentSnapshot>(STATE_KEYS.snapshot);
				const storedRun = await ctx.get<RunInProgress>(STATE_KEYS.run);
				// Null in the moment after the run stored its end and before it cleared itself: the snapshot has it all.
				const run = runGoingOn(snapshot, storedRun);
				let messages: AgentMessage[] = [];
				let replaced = false;
				for (const { checkpoint } of await turnCheckpoints(ctx, run)) {
					// A compaction in the run rewrote the transcript: that checkpoint is the whole of it.
					if (checkpoint.replace) replaced = true;
					messages = checkpoint.replace ? checkpoint.messages : messages.concat(checkpoint.messages);
				}
				// Steered and queued messages wait in the inbox until a run takes them: they are queued too.
				// (What a delivery would drop is not shown: it will never reach a run.)
				// Read with the run, before the inbox: a run that stores its end meanwhile has recorded
				// less here than the inbox then shows, so its mail is counted (once) rather than not at all.
				const recorded = Math.max(storedRun?.heldSeq ?? 0, (await ctx.get<number>(STATE_KEYS.handedOver)) ?? 0);
				const inboxView = await ctx.objectClient(inboxApi, ctx.key).view();
				// A hand-over the run has not recorded yet is in flight to it: still shown as waiting. A
				// delivery's from its take on (its run is not announced yet), until a run recorded it.
				const held = inboxView.held;
				// What a run whose end the snapshot already is took (its delivery's hand-over too) is in the snapshot.
				const ended = storedRun && !run ? storedRun.invocationId : undefined;
				const inFlight = held?.delivery
					? held.seq > recorded && held.invocationId !== ended && (!run || run.invocationId === held.invocationId)
					: run && held && held.invocationId === run.invocationId && held.seq !== run.heldSeq;
				const handedOver = held && inFlight ? held.items : [];
				const waitingMail = deliverable([...handedOver, ...inboxView.items], () => undefined);
				// Calls waiting for a person are shown as this worker's tools would restore them: a
				// deploy may have changed a tool so that it no longer accepts a call's arguments.
				const tools = isWaitingForApproval(snapshot) ? toolsOf(() => setup.agentOptions(ctx.key)) : undefined;
				return describeSession(ctx.key, snapshot, run, messages, replaced, waitingMail, tools);
			}),
		},
	});
	return { object, inbox, services: [object, inbox], name } as unknown as AgentSessions;
}
