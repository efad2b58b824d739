/**
 * Everything `agentchart` exports but the file store: the entry for Node (index.ts) and the one
 * for browser bundles (index.browser.ts) each add their own `createFileStore`.
 */
export * from "./types/index.js";
export { Agent, type AgentOptions, type AgentListener, type ApproveOptions } from "./agent.js";
// Durable runs: snapshots, the effect journal, stores
export { SNAPSHOT_FORMAT, SNAPSHOT_VERSION, readAgentSnapshot, type AgentSnapshot, type PersistedAgentMachine, type PersistedChildActor, type PlainAgentContext, type PlainRun, type PlainTool } from "./durable/snapshot.js";
export {
	interruptedText,
	modelEffectId,
	toolEffectId,
	JournalIndex,
	type ApprovalDecision,
	type ApprovalRequest,
	type CompactionEnd,
	type CompactionStart,
	type EffectJournal,
	type EffectRecord,
	type JournalEntry,
	type ModelIntent,
	type ModelOutcome,
	type ReplayPolicy,
	type RunEnd,
	type RunStart,
	type StoredJournalEntry,
	type ToolIntent,
	type ToolOutcomeEntry,
	type ToolProgress,
} from "./durable/journal.js";
export { createMemoryStore, journalAfter, ofLineage, SessionTakenOverError, type AgentStore, type LoadedSession } from "./durable/store.js";
export {
	agentLoop,
	agentLoopContinue,
	runAgentLoop,
	runAgentLoopContinue,
	type AgentEventSink,
	type AgentEventStream,
	type AgentLoopConfig,
} from "./loop/agent-loop.js";
export { LOOP_API_REJECTS_APPROVALS } from "./loop/loop-approvals.js";
export type { EventSink } from "./loop/sink-delivery.js";
export type { AgentActor, AgentMachineEmittedOf, AgentMachineSnapshot, AgentStateValue, ChildActorLike } from "./machines/agent-actor.js";
export type {
	ActorInspectionEvent,
	ActorSystemLike,
	EventObjectLike,
	InspectableActorRef,
	InspectedActorLike,
	StateMachineLike,
	StateNodeLike,
	SubscriptionLike,
	TransitionDefinitionLike,
} from "./types/actor-shapes.js";
export type {
	AgentMachineConfig,
	AgentMachineCommand,
	AgentMachineContext,
	AgentMachineEmitted,
	AgentMachineEvent,
	AgentMachineInput,
	AgentMachineOutput,
	AgentMachineOwnEvent,
	AgentRunState,
	ApprovalIgnoredEvent,
	ApprovalWait,
	CheckpointEvent,
	CompactionSettings,
	OutputLimitRecovery,
	DeliveryBarrierEvent,
	FinalizedToolResult,
	QueuePollers,
	RunContext,
	RunOverrides,
	SummarizeRequest,
	ToolBatch,
	ToolCallEntry,
	ToolCallStatus,
	TranscriptReplacedEvent,
} from "./machines/types.js";
export type { DeltaSink, MessageUpdateEvent, StreamActorEvent, StreamProgress } from "./actors/stream-protocol.js";
export type { ToolBatchEvent } from "./actors/tool-batch-protocol.js";
export type { ToolOutcome } from "./tools/preflight.js";
export type { RunAbort, RunAbortView } from "./util/run-abort.js";
export { defaultConvertToLlm } from "./machines/run-helpers.js";
export { outputLimitResumeText } from "./machines/actions/run.js";
export { createDefaultStreamFn, defaultLoopConfig, defaultModel, defaultStreamFn, type PiAiLoader } from "./machines/defaults.js";
export {
	AssistantMessageEventStream,
	EventStream,
	createAssistantMessageEventStream,
} from "./providers/event-stream.js";
export {
	createScriptedModel,
	text,
	thinking,
	toolCall,
	type ScriptedBlock,
	type ScriptedModel,
	type ScriptedModelOptions,
	type ScriptedReply,
	type ScriptedReplyFactory,
} from "./providers/scripted.js";
export { validateToolArguments } from "./tools/validate-arguments.js";
export { assertValidTools, toolSchemaIssues } from "./tools/tool-schema.js";
export { streamAnthropic } from "./providers/anthropic.js";
export { anthropicModels, calculateCost, getModel, getModels } from "./providers/models.js";
export { getOverflowPatterns, isContextOverflow } from "./providers/overflow.js";
export { estimateContextTokens, estimateMessageTokens } from "./compaction/estimate.js";
export { planCompaction, type CompactionPlan } from "./compaction/cut-point.js";
export { serializeConversation, summarizeWithModel, type ModelSummarizerOptions } from "./compaction/summarize.js";
export { isCompactionSummary } from "./compaction/is-compaction-summary.js";
// OpenAI-compatible provider
export { streamOpenAICompletions } from "./providers/openai-completions.js";
export { createOpenAICompatibleModel, type OpenAICompatibleModelOptions } from "./providers/openai-models.js";
export {
	detectOpenAICompatibleServer,
	isLocalBaseUrl,
	openAICompatibleServers,
	resolveOpenAICompat,
	type OpenAICompatibleServer,
	type OpenAICompletionsCompat,
	type OpenAIThinkingFormat,
	type OpenAIToolCallIdFormat,
	type ResolvedOpenAICompat,
} from "./providers/openai-compat.js";
export type { OpenAICompletionsOptions, OpenAIToolChoice } from "./providers/openai-options.js";
// pi's proxy stream function
export { streamProxy, type ProxyAssistantMessageEvent, type ProxySerializableStreamOptions, type ProxyStreamOptions } from "./providers/proxy.js";
