// @ts-nocheck
// The compaction actor's contract, free of XState types (see stream-protocol.ts).
import type { CompactionSettings } from "../compaction/settings.js";
import type { CompactionResult, ConvertToLlm } from "../types/agent.js";
import type { AgentMessage } from "../types/messages.js";
import type { Model, SimpleStreamOptions } from "../types/model.js";
import type { StreamFn } from "../types/stream.js";

/** Defaults of the compaction settings (pi's coding agent uses the same). */
export const DEFAULT_RESERVE_TOKENS = 16384;
export const DEFAULT_KEEP_RECENT_TOKENS = 20000;

/** What the compaction actor needs. */
export interface CompactionActorInput {
	messages: AgentMessage[];
	settings: CompactionSettings;
	model: Model;
	streamFn: StreamFn;
	convertToLlm: ConvertToLlm;
	streamOptions: SimpleStreamOptions;
	instructions?: string | undefined;
	/** The run's signal (the actor's own signal also aborts when the machine stops it). */
	signal?: AbortSignal | undefined;
	/** The agent's `streamIdleTimeoutMs`: a summary request whose stream is silent this long fails. */
	idleTimeoutMs?: number | undefined;
}

/** The new transcript and what happened. */
export interface CompactionOutput {
	messages: AgentMessage[];
	result: CompactionResult;
}
