/**
 * Bounded summaries of contexts and events. Everything here does work proportional to a
 * fixed budget, never to the transcript: an inspector that serialised the whole context per
 * event would make a long run quadratic (see reference/xstate.md §1.11).
 */
import { setOwnKey } from "../util/own-keys.js";

/**
 * Limits of {@link previewValue}.
 *
 * @example
 * const limits: Partial<PreviewLimits> = { depth: 3, stringLength: 120, arrayItems: 10 };
 * const preview = previewValue(toolArguments, limits);
 */
export interface PreviewLimits {
	/** Levels of objects and arrays shown (default 3). */
	depth: number;
	/** Characters kept of a string (default 160). */
	stringLength: number;
	/** Array items shown (default 4). */
	arrayItems: number;
	/** Object keys shown (default 12). */
	objectKeys: number;
	/** Values visited in total; what is left is elided (default 80). */
	budget: number;
	/** Characters of all strings together; later strings are cut to nothing (default 16,000). */
	characters: number;
}

const DEFAULT_LIMITS: PreviewLimits = { depth: 3, stringLength: 160, arrayItems: 4, objectKeys: 12, budget: 80, characters: 16_000 };

/**
 * JSON values a preview is made of.
 *
 * @example
 * const preview: PreviewJson = previewValue(toolArguments, { stringLength: 40 });
 * console.log(JSON.stringify(preview));
 */
export type PreviewJson = null | boolean | number | string | PreviewJson[] | { [key: string]: PreviewJson };

/** An actor, not data that has its field names (a tool's `{ id, sessionId, send: true }`): an actor's `send` is a method. */
function isActorRef(value: object): value is { id: string } {
	const actor = value as { id?: unknown; sessionId?: unknown; send?: unknown };
	return typeof actor.sessionId === "string" && typeof actor.send === "function" && typeof actor.id === "string";
}

/**
 * A JSON-safe, size-bounded preview of any value: long strings are cut, arrays show their
 * first items and length, deep objects are elided, functions, actors and abort signals are
 * named rather than walked. The values visited are bounded by `limits.budget`, whatever the
 * input (listing an object's keys still takes time in proportion to how many it has).
 *
 * @example
 * previewValue({ messages: new Array(5000).fill({ role: "user" }) });
 * // { messages: [{ role: "user" }, ..., "…(+4996)"] } — four items, not five thousand
 */
export function previewValue(value: unknown, limits: Partial<PreviewLimits> = {}): PreviewJson {
	const options = { ...DEFAULT_LIMITS, ...limits };
	let budget = options.budget;
	let characters = options.characters;
	const walk = (current: unknown, depth: number): PreviewJson => {
		budget--;
		if (current === null || current === undefined) return null;
		if (typeof current === "string") {
			const kept = Math.max(0, Math.min(options.stringLength, characters));
			characters -= Math.min(kept, current.length);
			return current.length > kept ? `${current.slice(0, kept)}…(+${current.length - kept})` : current;
		}
		if (typeof current === "number") return Number.isFinite(current) ? current : String(current);
		if (typeof current === "boolean") return current;
		if (typeof current === "bigint") return `${current}n`;
		if (typeof current === "function") return `[Function ${current.name || "anonymous"}]`;
		if (typeof current !== "object") return String(current);
		if (isActorRef(current)) return `[Actor ${current.id}]`;
		if (typeof AbortSignal !== "undefined" && current instanceof AbortSignal) return "[AbortSignal]";
		if (typeof AbortController !== "undefined" && current instanceof AbortController) return "[AbortController]";
		if (current instanceof Error) return { name: current.name, message: walk(current.message, depth + 1) };
		if (Array.isArray(current)) {
			if (depth >= options.depth || budget <= 0) return `[Array(${current.length})]`;
			const shown = current.slice(0, options.arrayItems).map((item) => walk(item, depth + 1));
			if (current.length > options.arrayItems) shown.push(`…(+${current.length - options.arrayItems})`);
			return shown;
		}
		const keys = Object.keys(current);
		if (depth >= options.depth || budget <= 0) return `{…${keys.length} keys}`;
		const out: { [key: string]: PreviewJson } = {};
		for (const key of keys.slice(0, options.objectKeys)) {
			const child = (current as Record<string, unknown>)[key];
			if (child === undefined) continue;
			setOwnKey(out, key, walk(child, depth + 1));
		}
		if (keys.length > options.objectKeys) out["…"] = `+${keys.length - options.objectKeys} keys`;
		return out;
	};
	return walk(value, 0);
}

/**
 * One tool call of the run in progress, as the visualizer shows it.
 *
 * @example
 * const summary = summarizeContext(agent.actor.getSnapshot().context) as AgentContextSummary;
 * for (const call of summary.run?.toolCalls ?? []) console.log(call.name, call.status, call.isError);
 */
export interface ToolCallSummary {
	/** The call's id, as the model sent it. */
	id: string;
	/** The call's key in its batch: its id, or `id#2`, `id#3`… when the reply repeated the id (tell calls apart by this). */
	key: string;
	name: string;
	/** queued, announced, preparing, prepared, awaiting-approval, running, settled. */
	status: string;
	/** Epoch ms when execution started. */
	startedAt?: number | undefined;
	isError?: boolean | undefined;
}

/**
 * The agent machine's context, summarised: counts, ids, queue lengths, the tool calls.
 *
 * @example
 * const summary = summarizeContext(agent.actor.getSnapshot().context) as AgentContextSummary; // an agent's context summarises as one
 * console.log(summary.messages, summary.tools, summary.run?.streaming);
 */
export interface AgentContextSummary {
	kind: "agent";
	messages: number;
	steeringQueue: number;
	followUpQueue: number;
	steeringMode?: string | undefined;
	followUpMode?: string | undefined;
	tools: number;
	model?: string | undefined;
	/** Runs started in the session (the run in progress is run number `runs`, id `r<runs>`). */
	runs?: number | undefined;
	run?: {
		turn?: number | undefined;
		attempt?: number | undefined;
		aborted?: boolean | undefined;
		newMessages?: number | undefined;
		/** True while an assistant message is streaming. */
		streaming: boolean;
		/** Tool calls of the current batch. */
		toolCalls: ToolCallSummary[];
		compactionReason?: string | undefined;
	};
}

interface AgentLikeContext {
	messages: unknown[];
	steeringQueue: unknown[];
	followUpQueue: unknown[];
	steeringMode?: string | undefined;
	followUpMode?: string | undefined;
	tools?: unknown[] | undefined;
	model?: { id?: string } | undefined;
	runs?: number | undefined;
	run?: {
		turn?: number | undefined;
		attempt?: number | undefined;
		aborted?: boolean | undefined;
		newMessages?: unknown[] | undefined;
		partial?: unknown | undefined;
		compactionReason?: string | undefined;
		batch?: {
			calls?: {
				key?: string | undefined;
				toolCall: { id: string; name: string };
				status: string;
				startedAt?: number | undefined;
				outcome?: { isError?: boolean } | undefined;
			}[];
		};
	};
}

function isAgentContext(context: unknown): context is AgentLikeContext {
	if (!context || typeof context !== "object") return false;
	const candidate = context as Partial<AgentLikeContext>;
	return Array.isArray(candidate.messages) && Array.isArray(candidate.steeringQueue) && Array.isArray(candidate.followUpQueue);
}

/** Tool calls shown per batch; a batch of hundreds is rare and the rest is counted. */
const MAX_TOOL_CALLS = 32;

/**
 * Summarises a machine context for inspection: the agent machine's context becomes an
 * {@link AgentContextSummary} (lengths, not contents); any other context gets a bounded
 * {@link previewValue}.
 *
 * @example
 * summarizeContext(actor.getSnapshot().context);
 * // { kind: "agent", messages: 12, steeringQueue: 0, followUpQueue: 1, tools: 3, run: { turn: 2, toolCalls: [...] } }
 */
export function summarizeContext(context: unknown): AgentContextSummary | PreviewJson {
	if (!isAgentContext(context)) return previewValue(context, { depth: 2 });
	const summary: AgentContextSummary = {
		kind: "agent",
		messages: context.messages.length,
		steeringQueue: context.steeringQueue.length,
		followUpQueue: context.followUpQueue.length,
		tools: context.tools?.length ?? 0,
	};
	if (context.steeringMode) summary.steeringMode = context.steeringMode;
	if (context.followUpMode) summary.followUpMode = context.followUpMode;
	if (context.model?.id) summary.model = context.model.id;
	if (typeof context.runs === "number") summary.runs = context.runs;
	const run = context.run;
	if (run) {
		const calls = run.batch?.calls ?? [];
		summary.run = {
			streaming: run.partial !== undefined,
			toolCalls: calls.slice(0, MAX_TOOL_CALLS).map((call) => {
				const entry: ToolCallSummary = { id: call.toolCall.id, key: call.key ?? call.toolCall.id, name: call.toolCall.name, status: call.status };
				if (call.startedAt !== undefined) entry.startedAt = call.startedAt;
				if (call.outcome) entry.isError = call.outcome.isError === true;
				return entry;
			}),
		};
		if (run.turn !== undefined) summary.run.turn = run.turn;
		if (run.attempt !== undefined) summary.run.attempt = run.attempt;
		if (run.aborted !== undefined) summary.run.aborted = run.aborted;
		if (run.newMessages) summary.run.newMessages = run.newMessages.length;
		if (run.compactionReason) summary.run.compactionReason = run.compactionReason;
	}
	return summary;
}

/**
 * How much of an event's payload a record keeps (see {@link summarizeEvent}). Deep and long
 * enough for a message with its content blocks, a tool call's arguments and its result to be
 * read whole in the visualizer; the budget still bounds what one event can cost, whatever it
 * carries (`agent_end` carries every message of the run).
 *
 * @example
 * // Longer tool results in the visualizer:
 * createAgentInspector({ payload: { ...EVENT_PREVIEW_LIMITS, stringLength: 20_000, characters: 100_000 } });
 */
export const EVENT_PREVIEW_LIMITS: PreviewLimits = { depth: 8, stringLength: 4000, arrayItems: 64, objectKeys: 40, budget: 600, characters: 32_000 };

/**
 * Fields that carry settings and a copy of the whole transcript, sent again with every call:
 * the agent's commands' overrides (`prompt`, `update`: `state`, `config`) and a child actor's
 * `input` (`xstate.init`; the stream actor's is the LLM context). Previewed shallowly, as a
 * context is: the conversation itself is recorded once, by the message events.
 */
const SETTINGS_FIELDS: ReadonlySet<string> = new Set(["state", "config", "input"]);

/**
 * A bounded preview of an event sent to or emitted by an actor: messages, tool arguments and
 * results are kept whole up to `limits` ({@link EVENT_PREVIEW_LIMITS} by default), so the
 * visualizer's transcript and log can show them. Stream events lose their `partial` message
 * (the whole reply so far, which grows with every delta) and keep the delta.
 *
 * @example
 * const event = { type: "stream.event", attempt: 1, event: { type: "text_delta", delta: "Hel", partial } };
 * summarizeEvent(event); // { type: "stream.event", attempt: 1, event: { type: "text_delta", delta: "Hel" } }
 */
export function summarizeEvent(event: { type: string }, limits: Partial<PreviewLimits> = EVENT_PREVIEW_LIMITS): { type: string; [key: string]: PreviewJson } {
	const record = event as { type: string; [key: string]: unknown };
	const out: { type: string; [key: string]: PreviewJson } = { type: record.type };
	// One budget for the whole event, not one per field: an event's cost is bounded as a whole.
	const options = { ...EVENT_PREVIEW_LIMITS, ...limits };
	const fields: Record<string, unknown> = {};
	for (const key of Object.keys(record)) {
		if (key === "type" || key === "partial") continue;
		const value = record[key];
		if (value === undefined) continue;
		if (SETTINGS_FIELDS.has(key)) {
			setOwnKey(out, key, previewValue(value, { depth: 2 }));
			continue;
		}
		if ((key === "event" || key === "assistantMessageEvent") && value && typeof value === "object") {
			// Provider stream events: the partial message is the transcript in disguise.
			const { partial: _partial, ...rest } = value as Record<string, unknown>;
			setOwnKey(fields, key, rest);
			continue;
		}
		setOwnKey(fields, key, value);
	}
	const preview = previewValue(fields, { ...options, depth: options.depth + 1 });
	// Key by key: Object.assign would set the prototype for an own "__proto__" (a model's argument).
	if (preview && typeof preview === "object" && !Array.isArray(preview)) for (const key of Object.keys(preview)) setOwnKey(out, key, preview[key]);
	return out;
}
