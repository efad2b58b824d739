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
