/**
 * The walk's hold on an agent: the stream function it drives, and your tools, hooks and
 * summariser wrapped so that each answers when the path says. With `outcomes: "path"`
 * (agentchart's own walk) they are puppets that answer what the path asks; with `"agent"` your
 * code runs at once, as the engine calls it, and its answer is held until the path releases it.
 * Either way, an answer held past the path's end is let go (`finish`).
 */
import { SUMMARIZATION_SYSTEM_PROMPT } from "../../compaction/summarize.js";
import type { AgentListener, AgentOptions } from "../../agent.js";
import type { AgentSnapshot } from "../../durable/snapshot.js";
import { AssistantMessageEventStream } from "../../providers/event-stream.js";
import { createScriptedModel, type ScriptedReply } from "../../providers/scripted.js";
import type { CompactionSettings } from "../../machines/types.js";
import type { AgentToolResult, AnyAgentTool, BeforeToolCallHook, BeforeToolCallResult } from "../../types/agent.js";
import type { StreamFn } from "../../types/stream.js";
import { beforeToolCallAnswer, checkedHooks, checkedNeedsApproval, checkedSummarize, reportThrows, runToolChecked, type Settlement } from "../instrument/checked-calls.js";
import { type AgentViolation, violation } from "../violations.js";
import { sentRequestViolations } from "../transcript-checks.js";
import { PuppetStream } from "./puppet-stream.js";

/**
 * What the walk gives your factory: build your agent with `kit.options(yourOptions)` (the walk's
 * stream function, your tools and hooks wrapped), and when `kit.snapshot` is set, restore it
 * (`Agent.restore(kit.snapshot, kit.options(yourOptions))`) instead of making a new one.
 *
 * @example
 * const factory: AgentFactory = (kit) => {
 *   const options = kit.options({ initialState: { model, tools: [lookupOrder] }, beforeToolCall: policy });
 *   return kit.snapshot ? Agent.restore(kit.snapshot, options) : new Agent(options);
 * };
 */
export interface AgentKit {
	/** The stream function the walk drives (`kit.options` sets it for you). */
	readonly streamFn: StreamFn;
	/** Set when the walk restores: continue from it with `Agent.restore`. */
	readonly snapshot: AgentSnapshot | undefined;
	/** Your options, ready for the walk: its stream function, your tools, hooks and summariser wrapped. */
	options(options: AgentOptions): AgentOptions;
}

/**
 * Builds the agent under test: a new one, or (when `kit.snapshot` is set) one restored from it.
 * A new `Agent` on every call, returned synchronously: the kit disposes each when done with it,
 * and throws at a Promise, an agent returned before, or a snapshot not restored.
 *
 * @example
 * exploreAgent((kit) => new Agent(kit.options({ initialState: { model, tools } })));
 */
export type AgentFactory = (kit: AgentKit) => import("../../agent.js").Agent;

/** A value the walk holds back until the path releases it. */
class Hold<T> {
	resolve!: (value: T) => void;
	reject!: (error: unknown) => void;
	readonly promise: Promise<T>;
	released = false;
	constructor(
		/** What your code answered (outcomes "agent"). */
		readonly produced?: Promise<Settlement<T>>,
	) {
		this.promise = new Promise<T>((resolve, reject) => {
			this.resolve = resolve;
			this.reject = reject;
		});
	}

	/** Lets go of the value: the one given, or what your code answered (waited for at most `timeoutMs`). */
	async release(given?: Settlement<T>, timeoutMs = 2000, keepAlive = true): Promise<Settlement<T> | undefined> {
		if (this.released) return undefined;
		this.released = true;
		const outcome = given ?? (this.produced ? await withTimeout(this.produced, timeoutMs, keepAlive) : undefined);
		if (!outcome) return undefined;
		if (outcome.ok) this.resolve(outcome.value);
		else this.reject(outcome.error);
		return outcome;
	}

	/**
	 * Lets go of the value once the path is over, with nobody waiting: what your code answers
	 * within a minute goes through, and a call of yours that never settles (reported by the walk)
	 * does not keep the process alive after the walk.
	 */
	letGo(given?: Settlement<T>): void {
		void this.release(given, 60_000, false);
	}
}

/** `promise`, or undefined after `ms`; `keepAlive: false` when nobody awaits it (the timer must not hold the process). */
async function withTimeout<T>(promise: Promise<T>, ms: number, keepAlive: boolean): Promise<T | undefined> {
	let timer: ReturnType<typeof setTimeout> | undefined;
	const timeout = new Promise<undefined>((resolve) => {
		timer = setTimeout(() => resolve(undefined), ms);
		// Awaited by the walk, the timer keeps the process alive as any wait would (else a step
		// waiting on a call that never settles would let the process exit mid-walk).
		if (!keepAlive) timer.unref?.();
	});
	try {
		return await Promise.race([promise, timeout]);
	} finally {
		clearTimeout(timer);
	}
}

function settleOf<T>(make: () => T | PromiseLike<T>): Promise<Settlement<T>> {
	try {
		return Promise.resolve(make()).then(
			(value) => ({ ok: true as const, value }),
			(error: unknown) => ({ ok: false as const, error }),
		);
	} catch (error) {
		return Promise.resolve({ ok: false as const, error });
	}
}

/** A running call's hold, with the engine's progress callback. */
interface ToolHold {
	hold: Hold<AgentToolResult<unknown>>;
	onUpdate: ((partial: AgentToolResult<unknown>) => void) | undefined;
	toolName: string;
}

const OK_RESULT: AgentToolResult<unknown> = { content: [{ type: "text", text: "ok" }], details: {} };

/** What the cast needs from the path it plays. */
export interface CastDirector {
	/** The reply the next model call should play (the path's next `stream.done`, and the calls streamed before it). */
	plannedReply(): ScriptedReply;
	/** The summary the walk's summariser writes. */
	readonly summary: string;
	/** Your tool is about to run a call with these arguments (checked against what was approved). */
	executing?(toolCallId: string, toolName: string, args: unknown): void;
}

let toolCallCounter = 0;

/** The walk's puppets and wrappers for one agent (and the agents restored from it). */
export class WalkCast {
	/** The latest model call's stream. */
	stream: PuppetStream | undefined;
	readonly tools = new Map<string, ToolHold>();
	readonly hooks = new Map<string, Hold<BeforeToolCallResult | undefined>>();
	readonly summaries: Hold<string>[] = [];
	/** True once the path is over: everything answers at once. */
	auto = false;
	/** Tool call ids that ran, by tool (for the replay rule across restores). */
	readonly executions = new Map<string, number>();
	/** Calls in flight when the agent was last restored: one whose tool is not replay-safe must not run again. */
	restoredInFlight = new Set<string>();
	private readonly wrapped = new WeakSet<object>();

	constructor(
		readonly outcomes: "path" | "agent",
		private readonly director: CastDirector,
		readonly report: (found: AgentViolation) => void,
	) {}

	/** The stream function the agent calls. */
	readonly streamFn: StreamFn = (model, context, options) => {
		if (options?.signal?.aborted) this.report(violation("after-abort", `the model was called for a run that was already aborted${context.systemPrompt === SUMMARIZATION_SYSTEM_PROMPT ? " (for a compaction summary)" : ""}`));
		if (context.systemPrompt === SUMMARIZATION_SYSTEM_PROMPT) return this.summaryStream(model, context, options);
		for (const found of sentRequestViolations(context.messages)) this.report(found);
		const reply = this.director.plannedReply();
		const scripted = createScriptedModel([reply], { chunkSize: 64 });
		const { signal, ...rest } = options ?? {};
		const source = scripted.streamFn(model, context, rest) as AssistantMessageEventStream;
		const puppet = new PuppetStream(source, signal, model);
		this.stream = puppet;
		// After a macrotask, as a provider's reply (network I/O) comes: a run your code keeps going
		// (a listener that steers on every turn) then lets the walk's timers fire and is reported as
		// not settling, instead of holding the process on microtasks forever.
		if (this.auto) void puppet.ready().then(() => setImmediate(() => puppet.finish()));
		return puppet.out;
	};

	/** A compaction summary asked of the model (no `summarize` hook): held like a summariser's answer. */
	private summaryStream(...args: Parameters<StreamFn>): ReturnType<StreamFn> {
		const out = new AssistantMessageEventStream();
		const hold = new Hold<string>();
		if (this.auto) hold.resolve(this.director.summary);
		else this.summaries.push(hold);
		const play = (reply: ScriptedReply) => {
			void (async () => {
				for await (const event of createScriptedModel([reply]).streamFn(...args) as AssistantMessageEventStream) out.push(event);
			})();
		};
		hold.promise.then(
			(summary) => play({ content: summary }),
			(error: unknown) => play({ content: [], stopReason: "error", errorMessage: String(error) }),
		);
		return out;
	}

	/** A id for the next scripted tool call (unique across the walk, as a provider's are). */
	static nextCallId(): string {
		return `c${++toolCallCounter}`;
	}

	/** A tool wrapped: the walk decides when it answers. */
	wrapTool(tool: AnyAgentTool): AnyAgentTool {
		if (this.wrapped.has(tool)) return tool;
		const wrapped: AnyAgentTool = { ...tool, ...(typeof tool.needsApproval === "function" ? { needsApproval: checkedNeedsApproval(tool, this.report) } : {}), execute: (id, params, signal, onUpdate) => this.execute(tool, id, params, signal, onUpdate as ToolHold["onUpdate"]) };
		this.wrapped.add(wrapped);
		return wrapped;
	}

	private execute(tool: AnyAgentTool, id: string, params: unknown, signal: AbortSignal | undefined, onUpdate: ToolHold["onUpdate"]): Promise<AgentToolResult<unknown>> {
		if (signal?.aborted) this.report(violation("after-abort", `tool "${tool.name}" (call ${id}) started for a run that was already aborted`));
		this.executions.set(id, (this.executions.get(id) ?? 0) + 1);
		if (this.restoredInFlight.has(id) && tool.replay !== "safe") this.report(violation("replay", `tool "${tool.name}" (call ${id}) ran again after a restore although it is not replay: "safe"`));
		if (this.outcomes === "path") {
			if (this.auto) return Promise.resolve(OK_RESULT);
			const hold = new Hold<AgentToolResult<unknown>>();
			this.tools.set(id, { hold, onUpdate, toolName: tool.name });
			return hold.promise;
		}
		this.director.executing?.(id, tool.name, params);
		const produced = runToolChecked(tool, id, params, signal, onUpdate, this.report);
		const hold = new Hold(produced);
		if (this.auto) hold.letGo();
		else this.tools.set(id, { hold, onUpdate, toolName: tool.name });
		return hold.promise;
	}

	/** `beforeToolCall` wrapped (and a throw reported). */
	wrapBeforeToolCall(hook: AgentOptions["beforeToolCall"]): AgentOptions["beforeToolCall"] {
		if (!hook || this.wrapped.has(hook)) return hook;
		const checked = reportThrows<Parameters<BeforeToolCallHook>, ReturnType<BeforeToolCallHook>>("beforeToolCall", hook, (input) => `tool "${input.toolCall.name}", call ${input.toolCall.id}`, this.report, beforeToolCallAnswer);
		const wrapped: NonNullable<AgentOptions["beforeToolCall"]> = (input, signal) => {
			if (this.outcomes === "path") {
				if (this.auto) return Promise.resolve(undefined);
				const hold = new Hold<BeforeToolCallResult | undefined>();
				this.hooks.set(input.toolCall.id, hold);
				return hold.promise;
			}
			const hold = new Hold(settleOf(() => checked(input, signal)));
			if (this.auto) hold.letGo();
			else this.hooks.set(input.toolCall.id, hold);
			return hold.promise;
		};
		this.wrapped.add(wrapped);
		return wrapped;
	}

	/** Compaction settings with the summariser held (none: the model writes it, through the stream function). */
	wrapCompaction(settings: CompactionSettings | undefined): CompactionSettings | undefined {
		const summarize = settings?.summarize;
		if (!settings || !summarize || this.wrapped.has(summarize)) return settings;
		const checked = checkedSummarize(summarize, this.report);
		const wrapped: NonNullable<CompactionSettings["summarize"]> = (request: Parameters<NonNullable<CompactionSettings["summarize"]>>[0]) => {
			const hold = this.outcomes === "path" ? new Hold<string>() : new Hold(settleOf(() => checked(request)));
			if (this.auto) hold.letGo(this.outcomes === "path" ? { ok: true, value: this.director.summary } : undefined);
			else this.summaries.push(hold);
			return hold.promise;
		};
		this.wrapped.add(wrapped);
		return { ...settings, summarize: wrapped };
	}

	/**
	 * The walk's listener for the agent being made (first of its listeners, so it hears what a
	 * restored run emits while it is restored); undefined while no agent is being made.
	 */
	listener: AgentListener | undefined;
	/** Set when the agent being made got the walk's listener through `options`. */
	listening = false;

	/** Your options, with the walk's stream function and your tools, hooks and summariser wrapped. */
	options(options: AgentOptions): AgentOptions {
		const report = this.report;
		const listener = this.listener;
		if (listener) this.listening = true;
		const wrapped: AgentOptions = {
			...options,
			...(listener ? { listeners: [listener, ...(options.listeners ?? [])] } : {}),
			streamFn: this.streamFn,
			beforeToolCall: this.wrapBeforeToolCall(options.beforeToolCall),
			compaction: this.wrapCompaction(options.compaction),
		};
		if (options.initialState) wrapped.initialState = { ...options.initialState, ...(options.initialState.tools ? { tools: options.initialState.tools.map((tool) => this.wrapTool(tool)) } : {}) };
		return this.outcomes === "agent" ? { ...wrapped, ...checkedHooks(options, report) } : wrapped;
	}

	/** Wraps what a factory set up without `kit.options` (a new agent reads these fields at each run). */
	instrument(agent: import("../../agent.js").Agent): void {
		if (agent.streamFn !== this.streamFn) agent.streamFn = this.streamFn;
		agent.state.tools = agent.state.tools.map((tool) => this.wrapTool(tool));
		agent.beforeToolCall = this.wrapBeforeToolCall(agent.beforeToolCall);
		agent.compaction = this.wrapCompaction(agent.compaction);
	}

	/** Forgets what the agents before a restore held (their process is gone). */
	forgetHeld(): void {
		this.stream = undefined;
		this.tools.clear();
		this.hooks.clear();
		this.summaries.length = 0;
	}

	/**
	 * The path is over: every held answer goes now (yours as soon as your code gives it), and from
	 * here on each answers at once.
	 */
	finish(): void {
		this.auto = true;
		this.stream?.finish();
		const path = this.outcomes === "path";
		for (const hold of this.hooks.values()) hold.letGo(path ? { ok: true, value: undefined } : undefined);
		for (const hold of this.summaries.splice(0)) hold.letGo(path || !hold.produced ? { ok: true, value: this.director.summary } : undefined);
		for (const { hold } of this.tools.values()) hold.letGo(path ? { ok: true, value: OK_RESULT } : undefined);
		this.hooks.clear();
		this.tools.clear();
	}
}
