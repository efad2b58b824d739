/**
 * What the abstract model of one configuration is built from: the machine input the chart runs
 * with (the agent's own tools, hooks, approval rules, compaction and limits, with the model
 * stream left out), the tool calls its replies make, and which events the walk offers.
 */
import { DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS } from "../../actors/compaction-protocol.js";
import type { EffectJournal } from "../../durable/journal.js";
import type { AgentMachineInput } from "../../machines/types.js";
import type { AnyAgentTool, ToolExecutionMode } from "../../types/agent.js";
import type { AgentMessage, UserMessage } from "../../types/messages.js";
import { assistantMessage, type SampleCall, STUB_TOOL, SUMMARY, userMessage, walkModel } from "./fixtures.js";

/**
 * One configuration the walk explores.
 *
 * `outcomes` says who decides how tools, hooks and summaries answer: `"path"` (agentchart's own
 * walk: puppets answer what the path asks, so every answer kind is offered) or `"agent"` (your
 * agent: your tools and hooks answer; the path only says when, and the walk follows what they
 * answered).
 *
 * @example
 * const describe = (config: ModelConfig) => `${config.name}: ${config.mode}${config.hook ? " with beforeToolCall" : ""}`;
 */
export interface ModelConfig {
	/** A short name for reports. */
	name: string;
	mode: ToolExecutionMode;
	/** The agent has a `beforeToolCall` hook. */
	hook: boolean;
	/** pi's loop API (`runAgentLoop`) instead of an Agent (agentchart's own walk only). */
	loop: boolean;
	/** The machine input of the abstract chart (and, for agentchart's walk, of the real one). */
	input: AgentMachineInput;
	/** The tool calls replies make: `tools` replies call these (by index). */
	samples: SampleCall[];
	outcomes: "path" | "agent";
	/** Offer what a restore tells a restored chart (`stream.interrupted`, `tools.interrupted`, an interrupted compaction), sent as events. */
	interruptions: boolean;
	/** Offer real restores (snapshot → JSON → a restored agent) as steps. */
	restores: boolean;
	/** Offer `tool.timeout` (the agent has a tool timeout). */
	toolTimeouts: boolean;
	/** Offer `approval.timeout` (the agent has an approval timeout). */
	approvalTimeout: boolean;
	prompt: UserMessage;
	/** A prompt large enough to cross the compaction threshold (undefined: compaction is off, or the threshold is out of reach). */
	bigPrompt: UserMessage | undefined;
	steer: UserMessage;
	followUp: UserMessage;
	keepRecentTokens: number;
	/** A summary as the summariser writes it (agentchart's walk) or a stand-in (yours). */
	summary: string;
}

/** The tool timeout of agentchart's walk: long enough never to fire by itself (the walk sends `tool.timeout`). */
export const WALK_TOOL_TIMEOUT_MS = 600_000;
/** The approval timeout of agentchart's walk: never fires by itself (the walk sends `approval.timeout`). */
export const WALK_APPROVAL_TIMEOUT_MS = 600_000;

/** The variants of agentchart's own walk. */
export interface WalkVariant {
	mode: ToolExecutionMode;
	hook: boolean;
	loop?: boolean | undefined;
	/** The stub tool needs approval; `timeout`: with an approval timeout. */
	approval?: "always" | "timeout" | undefined;
	/** Offer the events a restore sends. */
	interruptions?: boolean | undefined;
	/** Walk real restores too (snapshot → JSON → Agent.restore), from every kind of state. */
	restores?: boolean | undefined;
}

/**
 * The configurations agentchart's own walk takes: each tool execution mode, with a
 * `beforeToolCall` hook where the chart has states for it (parallel and sequential: announcing,
 * then asking), parallel without one (preflight inside the action), pi's loop API (also in
 * streaming mode with what a restore sends: it keeps no journal, as the bare machine), and a tool
 * that needs approval in parallel without a hook (with an approval timeout), sequential with a
 * hook (a waiting call holds the batch) and streaming with a hook (the batch actor holds the call
 * back: `tool.approval`; with an approval timeout, which runs out while the reply still streams).
 */
export const WALK_VARIANTS: WalkVariant[] = [
	{ mode: "parallel", hook: true, interruptions: true, restores: true },
	{ mode: "sequential", hook: true },
	{ mode: "streaming", hook: false, interruptions: true, restores: true },
	{ mode: "parallel", hook: false, restores: true },
	{ mode: "parallel", hook: false, loop: true },
	// pi's loop API keeps no journal: a restored reply of streaming tool execution is closed from the calls the chart knows.
	{ mode: "streaming", hook: false, loop: true, interruptions: true },
	{ mode: "parallel", hook: false, approval: "timeout", restores: true },
	{ mode: "sequential", hook: true, approval: "always" },
	{ mode: "streaming", hook: true, approval: "timeout" },
	// The batch actor asks the hook, then tells the chart the call runs (`tool.executing`): an abort before that answers it.
	{ mode: "streaming", hook: true, interruptions: true, restores: true },
];

/** One resume turn: a second cut-off reply in a row then takes the ordinary path. */
export const WALK_OUTPUT_LIMIT_RECOVERY = { maxAttempts: 1 };
/** Compaction on; the threshold (window − reserve) is 1000 tokens: only the big prompt crosses it. */
export const WALK_COMPACTION = { enabled: true, reserveTokens: 99_000, keepRecentTokens: 1 };

/**
 * An agent keeps an effect journal; the bare machine does not, and the chart reads which it is
 * (a restored reply of streaming tool execution is closed from the journal, or from the calls
 * the chart knows). The abstract chart of an agent gets one that holds nothing: its lookups are
 * answered by the walk, as the puppets answer the actors.
 */
export const AGENT_JOURNAL: EffectJournal = { lookup: () => undefined, append: () => undefined };
export const WALK_INITIAL_TRANSCRIPT: AgentMessage[] = [userMessage("earlier"), assistantMessage(walkModel, [{ type: "text", text: "ok" }], "stop")];

/** The stub tool of agentchart's walk (its `execute` is the real runner's business). */
export function stubTool(approval: boolean): AnyAgentTool {
	return {
		name: STUB_TOOL,
		label: STUB_TOOL,
		description: "stub",
		parameters: { type: "object", properties: {} },
		// Restores re-dispatch interrupted calls: the stub runs again, as the model expects.
		replay: "safe",
		...(approval ? { needsApproval: true } : {}),
		execute: async () => ({ content: [], details: {} }),
	} as AnyAgentTool;
}

/** A variant's name for reports. */
export function variantName(variant: WalkVariant): string {
	const parts = [variant.loop ? "loop API" : "", `${variant.mode}`, variant.hook ? "beforeToolCall" : "no hook", variant.approval ? `approval${variant.approval === "timeout" ? " with timeout" : ""}` : "", variant.interruptions ? "interruptions" : "", variant.restores ? "restores" : ""];
	return parts.filter(Boolean).join(", ");
}

/** The model configuration of one variant of agentchart's own walk. */
export function walkConfig(variant: WalkVariant): ModelConfig {
	const tools = [stubTool(variant.approval !== undefined)];
	const loop = variant.loop === true;
	const input: AgentMachineInput = loop
		? {
				// What runOnMachine configures: the loop API has no compaction and no output-limit recovery.
				model: walkModel,
				tools,
				messages: [...WALK_INITIAL_TRANSCRIPT],
				config: { toolExecution: variant.mode, getSteeringMessages: async () => [], getFollowUpMessages: async () => [], shouldStopAfterTurn: () => false },
				awaitDelivery: true,
			}
		: {
				model: walkModel,
				tools,
				messages: [...WALK_INITIAL_TRANSCRIPT],
				config: {
					toolExecution: variant.mode,
					toolTimeoutMs: WALK_TOOL_TIMEOUT_MS,
					toolAbortGraceMs: WALK_TOOL_TIMEOUT_MS,
					outputLimitRecovery: WALK_OUTPUT_LIMIT_RECOVERY,
					compaction: WALK_COMPACTION,
					...(variant.approval === "timeout" ? { approvalTimeoutMs: WALK_APPROVAL_TIMEOUT_MS } : {}),
					...(variant.hook ? { beforeToolCall: async () => undefined } : {}),
					journal: AGENT_JOURNAL,
				},
				awaitDelivery: true,
			};
	return {
		name: variantName(variant),
		mode: variant.mode,
		hook: variant.hook,
		loop,
		input,
		samples: [{ name: STUB_TOOL, arguments: {} }],
		outcomes: "path",
		interruptions: variant.interruptions === true,
		restores: variant.restores === true,
		toolTimeouts: !loop,
		approvalTimeout: variant.approval === "timeout",
		prompt: userMessage("p"),
		// Compaction is walked in the variants without approvals: with both, the space doubles for nothing new.
		bigPrompt: loop || variant.approval ? undefined : userMessage("B".repeat(8_000)),
		steer: userMessage("steer"),
		followUp: userMessage("follow"),
		keepRecentTokens: WALK_COMPACTION.keepRecentTokens,
		summary: SUMMARY,
	};
}

/** A prompt that crosses the compaction threshold of these settings (undefined when compaction is off or it would be huge). */
export function bigPromptFor(contextWindow: number, compaction: { enabled: boolean; reserveTokens?: number | undefined } | undefined): UserMessage | undefined {
	if (!compaction?.enabled || !contextWindow) return undefined;
	const threshold = contextWindow - (compaction.reserveTokens ?? DEFAULT_RESERVE_TOKENS);
	const chars = (Math.max(threshold, 0) + 64) * 4;
	// Past a few megabytes every step copies too much to be worth walking.
	if (chars > 4_000_000) return undefined;
	return userMessage("B".repeat(chars));
}

/** The `keepRecentTokens` compaction works with. */
export function keepRecentOf(compaction: { keepRecentTokens?: number | undefined } | undefined): number {
	return compaction?.keepRecentTokens ?? DEFAULT_KEEP_RECENT_TOKENS;
}
