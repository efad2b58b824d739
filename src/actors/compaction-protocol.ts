// The compaction actor's contract, free of XState types (see stream-protocol.ts).
import type { CompactionSettings } from "../compaction/settings.js";
import type { CompactionResult, ConvertToLlm, GetApiKey } from "../types/agent.js";
import type { AgentMessage } from "../types/messages.js";
import type { Model, SimpleStreamOptions } from "../types/model.js";
import type { StreamFn } from "../types/stream.js";

/** Defaults of the compaction settings (pi's coding agent uses the same). */
export const DEFAULT_RESERVE_TOKENS = 16384;
export const DEFAULT_KEEP_RECENT_TOKENS = 20000;

/**
 * What the compaction actor needs.
 *
 * @example
 * const describe = (input: CompactionActorInput) => `${input.messages.length} messages to compact`;
 */
export interface CompactionActorInput {
	messages: AgentMessage[];
	settings: CompactionSettings;
	model: Model;
	streamFn: StreamFn;
	convertToLlm: ConvertToLlm;
	streamOptions: SimpleStreamOptions;
	/** The agent's `getApiKey`: the summary request gets its key as each model call does. */
	getApiKey?: GetApiKey | undefined;
	instructions?: string | undefined;
	/** The run's signal (the actor's own signal also aborts when the machine stops it). */
	signal?: AbortSignal | undefined;
	/** The agent's `streamIdleTimeoutMs`: a summary request whose stream is silent this long fails. */
	idleTimeoutMs?: number | undefined;
}

/**
 * What a compaction actor's persisted snapshot keeps of its input: enough to say it was interrupted.
 *
 * @example
 * const marker: RestoredCompactionInput = { restored: true };
 */
export interface RestoredCompactionInput {
	restored: true;
}

/**
 * Whether a stored compaction actor's input is the marker `compactionActor` persists: restored
 * with another, the actor would compact anew and the chart would not know it as a restart.
 *
 * @example
 * isRestoredCompactionInput({ restored: true }); // true
 */
export function isRestoredCompactionInput(input: unknown): input is RestoredCompactionInput {
	return typeof input === "object" && input !== null && (input as Partial<RestoredCompactionInput>).restored === true;
}

/** The error a restored compaction actor fails with: the chart makes the compaction again. */
export class InterruptedByRestart extends Error {
	readonly interruptedByRestart = true;
	constructor() {
		super("The compaction was interrupted by a restart");
	}
}

/**
 * Whether an actor's error says it was restored from a snapshot taken while it ran.
 *
 * @example
 * if (isInterruptedByRestart(event.error)) retry();
 */
export function isInterruptedByRestart(error: unknown): boolean {
	return (error as { interruptedByRestart?: unknown } | undefined)?.interruptedByRestart === true;
}

/**
 * The new transcript and what happened.
 *
 * @example
 * const kept = (output: CompactionOutput) => output.messages.length;
 */
export interface CompactionOutput {
	messages: AgentMessage[];
	result: CompactionResult;
}
