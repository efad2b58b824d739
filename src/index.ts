export * from "./types/index.js";
export { Agent, type AgentOptions, type AgentListener } from "./agent.js";
export { agentMachine } from "./machines/agent-machine.js";
export type {
	AgentLoopConfig,
	AgentMachineCommand,
	AgentMachineContext,
	AgentMachineEmitted,
	AgentMachineEvent,
	AgentMachineInput,
	AgentMachineOutput,
	AgentRunState,
	CompactionSettings,
	DeliveryBarrierEvent,
	RunOverrides,
	SummarizeRequest,
	ToolBatch,
	ToolCallEntry,
} from "./machines/types.js";
export { defaultConvertToLlm } from "./machines/run-helpers.js";
export { defaultLoopConfig, defaultModel } from "./machines/defaults.js";
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
export { streamAnthropic } from "./providers/anthropic.js";
export { anthropicModels, calculateCost, getModel, getModels } from "./providers/models.js";
export { getOverflowPatterns, isContextOverflow } from "./providers/overflow.js";
export { estimateContextTokens, estimateMessageTokens } from "./compaction/estimate.js";
export { planCompaction, type CompactionPlan } from "./compaction/cut-point.js";
export { serializeConversation, summarizeWithModel } from "./compaction/summarize.js";
