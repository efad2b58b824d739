/**
 * A stored run: the agent machine in XState's persisted format, as plain JSON (what a run is
 * made of that is data), plus the journal of the run in progress. Functions (tools' `execute`,
 * hooks, the stream function, listeners) are not data: they come back from the options given
 * when the snapshot is restored ({@link hydrateAgentContext}).
 *
 * The format has a version: a newer agentchart reads every older one ({@link readAgentSnapshot}).
 */
import { RunAbort } from "../util/run-abort.js";
import type { AgentToolCall, AnyAgentTool } from "../types/agent.js";
import type { AgentMessage } from "../types/messages.js";
import type { AgentMachineConfig, AgentMachineContext, RunContext, ToolBatch, ToolCallEntry } from "../machines/types.js";
import { validateToolArguments } from "../tools/validate-arguments.js";
import { describeError } from "../util/describe-error.js";
import { setOwnKey } from "../util/own-keys.js";
import { unwritableJson } from "../util/json-writable.js";
import { type StoredJournalEntry, turnEffectPrefix } from "./journal.js";
import { checkSnapshotShape } from "./snapshot-shape.js";
import { shown } from "../agent-input.js";

/**
 * What every agentchart snapshot says it is.
 *
 * @example
 * const stored = JSON.parse(text) as { format?: unknown };
 * if (stored.format !== SNAPSHOT_FORMAT) throw new Error("not an agentchart snapshot");
 */
export const SNAPSHOT_FORMAT = "agentchart.snapshot";

/**
 * The version this agentchart writes (and the newest it reads). 2 added the session's line
 * (`lineage`): an agentchart that reads only 1 would continue such a session without it, and its
 * entries would not be read after. 3 added the prefix of a batch's effect ids
 * (`run.batch.effectPrefix`), which a restore compares with the run's counters; an older
 * snapshot's batch is given the one its run makes.
 *
 * @example
 * agent.snapshot().version === SNAPSHOT_VERSION; // true: a snapshot is written in the newest version
 */
export const SNAPSHOT_VERSION = 3;

/**
 * A child actor in a persisted machine snapshot (XState's format).
 *
 * @example
 * const child: PersistedChildActor | undefined = agent.snapshot().machine.children["stream"];
 */
export interface PersistedChildActor {
	snapshot: unknown;
	src: unknown;
	systemId?: string | undefined;
	syncSnapshot?: boolean | undefined;
}

/**
 * The agent machine in XState's persisted format, its context plain data.
 *
 * @example
 * const machine: PersistedAgentMachine = agent.snapshot().machine;
 * console.log(machine.value, machine.context.messages.length);
 */
export interface PersistedAgentMachine {
	status: "active" | "done" | "error" | "stopped";
	value: unknown;
	context: PlainAgentContext;
	children: Record<string, PersistedChildActor>;
	historyValue?: Record<string, unknown> | undefined;
	output?: unknown;
	error?: unknown;
}

/**
 * A tool as a snapshot keeps it: what describes it, without its functions.
 *
 * @example
 * const names = agent.snapshot().machine.context.tools.map((tool: PlainTool) => tool.name);
 */
export interface PlainTool {
	name: string;
	[key: string]: unknown;
}

/**
 * The machine's context as data: the loop configuration's settings, tools by description, the run without its cancellation.
 *
 * @example
 * const context: PlainAgentContext = agent.snapshot().machine.context;
 * console.log(context.systemPrompt, context.tools.map((tool) => tool.name));
 */
export type PlainAgentContext = Omit<AgentMachineContext, "config" | "tools" | "run"> & {
	config: Record<string, unknown>;
	tools: PlainTool[];
	run?: PlainRun | undefined;
};

/**
 * The run in progress as data (its cancellation and stream progress are the process's: never kept).
 *
 * @example
 * const run: PlainRun | undefined = agent.snapshot().machine.context.run; // set when the snapshot caught a run
 * console.log(run?.id, run?.newMessages.length);
 */
export type PlainRun = Omit<RunContext, "controller" | "stream"> & { controller?: undefined; stream?: undefined };

/**
 * A stored agent: `agent.snapshot()`, `Agent.restore(snapshot, options)`, and what an
 * `AgentStore` keeps. Plain JSON.
 *
 * @example
 * const json = JSON.stringify(agent.snapshot());
 * const again = Agent.restore(JSON.parse(json), { initialState: { tools }, streamFn });
 */
export interface AgentSnapshot {
	format: typeof SNAPSHOT_FORMAT;
	/** The format's version (see {@link SNAPSHOT_VERSION}). */
	version: number;
	/** When it was taken (ISO 8601). */
	createdAt: string;
	/** The session it belongs to, if the agent has one. */
	sessionId?: string | undefined;
	/** Where the run is: the agent machine, persisted. */
	machine: PersistedAgentMachine;
	/** The journal of the run in progress: what its effects did (see `durable/journal.ts`). */
	journal: StoredJournalEntry[];
	/** The number of the last journal entry appended when the snapshot was taken (a store drops those up to it). */
	journalSeq: number;
	/**
	 * The session's line: every agent that starts a session anew on a store (`new Agent`, or
	 * `Agent.restore`, with the store and the id) starts a line of its own, and a load continues the
	 * stored one. Entries stored after the snapshot belong to it only if they have its line: those
	 * of an agent it replaced are not read. Absent in snapshots of agents without a store, and of
	 * agentchart before 0.1.
	 */
	lineage?: string | undefined;
	/** What the agent keeps beside the machine. */
	agent: {
		/** The error of the last failed turn (`agent.state.errorMessage`). */
		errorMessage?: string | undefined;
		/**
		 * `abort()` was called (from a listener, while the machine finished a step) and the machine
		 * had not taken it yet: the restored machine takes it first. Queue commands given so are in
		 * the machine's context already.
		 */
		abortPending?: true | undefined;
		/**
		 * `agent.state.messages` during a run, where your code changed it (a note added while a call
		 * waits for approval, a message redacted): the run's own transcript is the machine's, and
		 * does not hold the change. Absent when `agent.state.messages` is the run's transcript so far.
		 * The restored agent's `agent.state.messages` is this one, as the run's end would have saved it.
		 */
		transcript?: AgentMessage[] | undefined;
	};
}

const toolDescriptions = new WeakMap<AnyAgentTool, PlainTool>();

/** A tool as data: its JSON (functions left out), made once per tool. */
function plainTool(tool: AnyAgentTool | PlainTool): PlainTool {
	if (typeof (tool as Partial<AnyAgentTool>).execute !== "function") return tool as PlainTool;
	let plain = toolDescriptions.get(tool as AnyAgentTool);
	if (!plain) {
		plain = JSON.parse(JSON.stringify(tool)) as PlainTool;
		toolDescriptions.set(tool as AnyAgentTool, plain);
	}
	return plain;
}

/**
 * The loop configuration's settings, as data: no function, no journal.
 *
 * @example
 * loopConfigData(context.config); // { toolExecution: "parallel", toolTimeoutMs: 180000, ... }
 */
export function loopConfigData(config: Partial<AgentMachineConfig> | Record<string, unknown>): Record<string, unknown> {
	let data = configData.get(config);
	if (!data) {
		data = configDataOf(config);
		configData.set(config, data);
	}
	return data;
}

/** A run's configuration is replaced, never changed: its data is made once (as a tool's is). */
const configData = new WeakMap<object, Record<string, unknown>>();

function configDataOf(config: Partial<AgentMachineConfig> | Record<string, unknown>): Record<string, unknown> {
	const data: Record<string, unknown> = {};
	for (const key of Object.keys(config)) {
		if (key === "journal") continue;
		const value = (config as Record<string, unknown>)[key];
		// As JSON has them: what it cannot write is left out, a number that is not finite is null.
		if (value === undefined || typeof value === "function" || typeof value === "symbol") continue;
		if (typeof value === "bigint") throw new TypeError(`agentchart: the setting "${key}" is a BigInt, which JSON cannot write (a snapshot is JSON)`);
		const kept = value !== null && typeof value === "object" ? nestedData(value, key) : typeof value === "number" && !Number.isFinite(value) ? null : value;
		// A toJSON that gives nothing JSON can write leaves the key out, as JSON.stringify does.
		if (kept !== undefined) setOwnKey(data, key, kept);
	}
	return data;
}

/**
 * A nested setting as JSON keeps it (stream options, compaction settings may hold functions):
 * copied field by field when its fields are plain values, which they are in the common case (a
 * JSON round trip costs a snapshot more than the rest of its configuration).
 */
function nestedData(value: object, key: string): unknown {
	const copy: Record<string, unknown> = {};
	if (!Array.isArray(value) && typeof (value as { toJSON?: unknown }).toJSON !== "function") {
		let plain = true;
		for (const key of Object.keys(value)) {
			const field = (value as Record<string, unknown>)[key];
			if (field === undefined || typeof field === "function" || typeof field === "symbol") continue;
			if ((field !== null && typeof field === "object") || typeof field === "bigint" || (typeof field === "number" && !Number.isFinite(field))) {
				plain = false;
				break;
			}
			setOwnKey(copy, key, field);
		}
		if (plain) return copy;
	}
	let text: string | undefined;
	try {
		text = JSON.stringify(value) as string | undefined;
	} catch (error) {
		// Named as a setting that is a BigInt itself is: JSON's own message says neither which nor where.
		const where = unwritableJson(value, key) ?? `${key} could not be written`;
		throw new TypeError(`agentchart: the setting ${where}, which JSON cannot write (a snapshot is JSON)`, { cause: error });
	}
	return text === undefined ? undefined : (JSON.parse(text) as unknown);
}

/**
 * The run as data: its cancellation and stream progress are the process's (left undefined, as
 * JSON leaves them out); the rest is kept.
 *
 * @example
 * plainRun(context.run);
 */
function plainRun(run: RunContext | PlainRun): PlainRun {
	// A spread that only overwrites keys the run has copies its shape at once; leaving keys out costs a rebuild.
	return { ...run, controller: undefined, stream: undefined };
}

/**
 * The machine's context as plain data (what `JSON.stringify` of the context gives, built
 * without it: the transcript and queues are shared, not copied). Idempotent.
 *
 * @example
 * const plain = persistAgentContext(actor.getSnapshot().context);
 */
export function persistAgentContext(context: AgentMachineContext | PlainAgentContext): PlainAgentContext {
	if (plainContexts.has(context)) return context as PlainAgentContext;
	const plain = plainContext(context, loopConfigData);
	plainContexts.add(plain);
	return plain;
}

/** The context with its configuration made data by `configToData`, its tools by description, its run without its cancellation. */
function plainContext(context: AgentMachineContext | PlainAgentContext, configToData: (config: AgentMachineContext["config"] | Record<string, unknown>) => Record<string, unknown>): PlainAgentContext {
	const { config, tools, run } = context;
	return { ...context, config: configToData(config), tools: tools.map(plainTool), run: run && plainRun(run) };
}

/**
 * A context made for one snapshot (an idle agent's, from its state) as plain data. Unlike
 * {@link persistAgentContext} it remembers neither the context nor its configuration: both are
 * new at every call, so an entry in a weak table would only cost (see docs/performance.md).
 *
 * @example
 * const plain = plainFreshContext(initialContext(input));
 */
export function plainFreshContext(context: AgentMachineContext): PlainAgentContext {
	return plainContext(context, configDataOf);
}

/** The contexts made plain here: the agent persists a context the chart's logic made plain already. */
const plainContexts = new WeakSet<object>();

/**
 * What a restored run needs that no snapshot keeps: the tools and the loop's functions.
 *
 * @example
 * const runtime: AgentRuntime = { tools, config: { streamFn } };
 * const snapshot = hydrateAgentSnapshot(JSON.parse(text), runtime);
 */
export interface AgentRuntime {
	/** The tools, by name: every tool the snapshot names must be here. */
	tools: readonly AnyAgentTool[];
	/** The loop's functions and the process's settings (stream function, hooks, journal, ...). */
	config: Partial<AgentMachineConfig>;
}

/**
 * The machine's context from its plain data and a runtime: the snapshot's tools matched by name,
 * the loop configuration's settings with the runtime's functions, a fresh cancellation for the run
 * (aborted, if the run was). Throws, naming it, when a tool of the snapshot is not in the runtime.
 * A call that may still run, of a tool whose schema is not the one the snapshot has, gets its
 * arguments validated again against the runtime's tool (`argsProblem` when they do not fit).
 *
 * @example
 * const context = hydrateAgentContext(snapshot.machine.context, { tools, config: { streamFn } }, loopConfig);
 */
export function hydrateAgentContext(
	plain: PlainAgentContext,
	runtime: AgentRuntime,
	makeConfig: (...parts: Partial<AgentMachineConfig>[]) => AgentMachineConfig,
): AgentMachineContext {
	const byName = new Map(runtime.tools.map((tool) => [tool.name, tool]));
	const tools = plain.tools.map((tool) => {
		const found = byName.get(tool.name);
		if (!found) throw new Error(`agentchart: the snapshot's tool "${tool.name}" is not among the tools given to restore it (${[...byName.keys()].join(", ") || "none"}); pass every tool the stored session offered (one that cannot run now, such as a tool of an MCP server that is down, as a tool of that name whose execute says so)`);
		return found;
	});
	// A runtime setting given as undefined is not given: the stored one stands (or the default).
	const given = Object.fromEntries(Object.entries(runtime.config).filter(([, value]) => value !== undefined)) as Partial<AgentMachineConfig>;
	const config = makeConfig(plain.config as Partial<AgentMachineConfig>, given);
	const { run: plainRunData, ...rest } = plain;
	const context: AgentMachineContext = { ...(rest as Omit<AgentMachineContext, "config" | "tools" | "run">), config, tools, run: undefined };
	if (plainRunData) {
		const controller = new RunAbort();
		if (plainRunData.aborted) controller.abort();
		const batch = plainRunData.batch && recheckArguments(plainRunData.batch, byName);
		context.run = { ...plainRunData, batch, controller, stream: { partial: undefined } };
		// The run's reply and the transcript's last message were one object in the run that stored
		// them (an overflowed reply waiting for its compaction, which leaves that object out): one
		// again here, or the restored compaction would summarise or keep the failed reply.
		const last = context.messages[context.messages.length - 1];
		const reply = context.run.assistant;
		if (reply && last && last !== reply && last.role === "assistant" && JSON.stringify(last) === JSON.stringify(reply)) context.run.assistant = last;
	}
	return context;
}

/**
 * A stored batch as a restore with these tools has it: the stored arguments of every call that
 * may still run are validated again against the tool given, and coerced as a model's are. Where
 * the tool's schema is not the one the snapshot has, the tool was changed between the store and
 * the restore (a deploy while a call waited for approval); where it is the same, this finds a
 * snapshot edited by hand since, which no other check reads into. Calls whose arguments the tool
 * rejects keep the reason (`argsProblem`) and never run with them: a tool receives only arguments
 * its own schema accepts. A tool not given leaves its calls as stored.
 *
 * @example
 * const batch = recheckArguments(snapshot.machine.context.run.batch, new Map(tools.map((tool) => [tool.name, tool])));
 */
export function recheckArguments(batch: ToolBatch, given: ReadonlyMap<string, AnyAgentTool>): ToolBatch {
	let calls: ToolCallEntry[] | undefined;
	batch.calls.forEach((call, index) => {
		const tool = given.get(call.toolCall.name);
		if (!tool || call.args === undefined || (call.status !== "prepared" && call.status !== "awaiting-approval" && call.status !== "running")) return;
		let rechecked: ToolCallEntry;
		try {
			rechecked = { ...call, args: validateToolArguments(tool, { ...call.toolCall, arguments: call.args as AgentToolCall["arguments"] }), argsProblem: undefined };
		} catch (error) {
			rechecked = { ...call, argsProblem: describeError(error) };
		}
		(calls ??= batch.calls.slice())[index] = rechecked;
	});
	return calls ? { ...batch, calls } : batch;
}

/**
 * `snapshot`, if the agent machine it describes can run: a machine still active must have its
 * functions back (`hydrateAgentSnapshot`, {@link hydrateAgentContext}), since no snapshot keeps
 * them. Restored without, it failed at its next step with a TypeError that named nothing
 * (`config.convertToLlm is not a function`, `reading 'callController'`); this throws as it
 * starts instead, saying what to do. XState keeps the error as the actor's, and an embedding
 * parent's `onError` gets it.
 *
 * @example
 * agentMachine.start(requireHydrated(snapshot));
 */
export function requireHydrated<S>(snapshot: S): S {
	const shape = snapshot as { status?: unknown; context?: { config?: { streamFn?: unknown; convertToLlm?: unknown } | undefined } | undefined } | null | undefined;
	const config = shape?.context?.config;
	// JSON keeps neither function; a hydrated context has both (the defaults, or the runtime's).
	if (shape?.status !== "active" || typeof config?.streamFn === "function" || typeof config?.convertToLlm === "function") return snapshot;
	throw new Error(
		'agentchart: the agent machine has no functions (no streamFn, no convertToLlm in its config): it was restored from a persisted snapshot, which keeps no functions (stream function, tools, hooks), without them. Pass the snapshot through hydrateAgentSnapshot(snapshot, { tools, config: { streamFn } }) from "agentchart/machine" before createActor; for an agent your machine invokes or spawns, hydrate its entry in the parent\'s snapshot (children["<id>"].snapshot)',
	);
}

/**
 * A snapshot as this agentchart reads it: checked, and brought up to the current version.
 * Throws when it is not an agentchart snapshot or is newer than this agentchart.
 *
 * @example
 * const snapshot = readAgentSnapshot(JSON.parse(text));
 */
export function readAgentSnapshot(value: unknown): AgentSnapshot {
	const snapshot = value as Partial<AgentSnapshot> | undefined;
	if (!snapshot || typeof snapshot !== "object" || snapshot.format !== SNAPSHOT_FORMAT) {
		throw new Error(`agentchart: not an agentchart snapshot (no format "${SNAPSHOT_FORMAT}")`);
	}
	const version = snapshot.version;
	if (typeof version !== "number" || !Number.isInteger(version) || version < 1) throw new Error(`agentchart: a snapshot without a valid version (${shown(version)})`);
	if (version > SNAPSHOT_VERSION) {
		throw new Error(`agentchart: the snapshot's format is version ${snapshot.version}, newer than this agentchart reads (${SNAPSHOT_VERSION}); upgrade agentchart to restore it`);
	}
	checkSnapshotShape(snapshot);
	// The steps that bring an older version up to this one, oldest first.
	let machine = snapshot.machine as AgentSnapshot["machine"];
	if (version < 3) machine = withBatchEffectPrefix(machine);
	// No children is none (a snapshot between runs may be written without them); XState's restore needs the record.
	const read = machine.children === undefined ? { ...machine, children: {} } : machine;
	return { ...snapshot, machine: read, journal: snapshot.journal ?? [], journalSeq: snapshot.journalSeq ?? 0, agent: snapshot.agent ?? {} } as AgentSnapshot;
}

/** Version 3: a stored batch records the prefix of its calls' effect ids; before, it was the run's. */
function withBatchEffectPrefix(machine: AgentSnapshot["machine"]): AgentSnapshot["machine"] {
	const run = machine.context.run;
	if (!run?.batch) return machine;
	const batch = { ...run.batch, effectPrefix: turnEffectPrefix(run.id, run.turn) };
	return { ...machine, context: { ...machine.context, run: { ...run, batch } } };
}
