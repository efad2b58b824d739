/**
 * Your agent's configuration, read as the walk's model: its tools (and their approval rules),
 * hooks, tool execution mode, compaction settings, limits and transcript. The factory is called
 * once for it (with a kit that wraps nothing), and the agent it made is disposed.
 */
import type { Agent } from "../agent.js";
import { AGENT_JOURNAL, bigPromptFor, keepRecentOf, type ModelConfig } from "./model/config.js";
import { type SampleCall, userMessage } from "./model/fixtures.js";
import { sampleArguments } from "./model/sample-arguments.js";
import { callFactory, refusedSettings } from "./factory-calls.js";
import { findTool } from "../machines/run-helpers.js";
import { prepareToolCall } from "../tools/preflight.js";
import type { AgentFactory } from "./walk/cast.js";

/** What the walk's model is made of, besides your agent. */
export interface ConfigChoices {
	/** The tool calls the walk's model makes (default: one per tool, its arguments made from its schema). */
	calls?: readonly SampleCall[] | undefined;
	/** The text of the walk's prompts. */
	prompt?: string | undefined;
	/** Walk real restores. */
	restores: boolean;
}

/** The agent the factory makes, read without being driven (a factory written wrong throws here, before any run). */
export function probeAgent(factory: AgentFactory): Agent {
	const probe = callFactory(factory, { streamFn: () => Promise.reject(new Error("agentchart/testing: the configuration probe never calls the model")) as never, snapshot: undefined, options: (options) => options });
	const refused = refusedSettings(probe);
	if (refused) {
		probe.dispose();
		throw refused;
	}
	return probe;
}

function describeTools(agent: Agent): string {
	if (agent.state.tools.length === 0) return "no tools";
	const names = agent.state.tools.map((tool) => {
		const notes = [tool.needsApproval === true ? "needs approval" : tool.needsApproval ? "approval rule" : "", tool.executionMode === "sequential" ? "runs alone" : "", tool.replay === "safe" ? "replay-safe" : ""].filter(Boolean);
		return notes.length ? `${tool.name} (${notes.join(", ")})` : tool.name;
	});
	return `tools ${names.join(", ")}`;
}

/** A one-line description of an agent's configuration, for reports. */
export function describeAgent(agent: Agent): string {
	const parts = [
		`${agent.toolExecution} tool execution`,
		agent.beforeToolCall ? "beforeToolCall" : "",
		agent.afterToolCall ? "afterToolCall" : "",
		describeTools(agent),
		agent.compaction?.enabled ? `compaction (${agent.compaction.summarize ? "your summariser" : "the model summarises"})` : "",
		agent.approvalTimeoutMs ? `approval timeout ${agent.approvalTimeoutMs} ms` : "",
		agent.outputLimitRecovery ? `output-limit recovery ×${agent.outputLimitRecovery.maxAttempts}` : "",
	];
	return parts.filter(Boolean).join(", ");
}

/**
 * The tool calls the model makes: `calls` as given, or one per tool with arguments made from its
 * schema. A call naming no tool of the agent is refused (a typo would leave your tools unrun
 * while the report says all is well, its coverage of a model without them included).
 *
 * @example
 * samplesOf(agent, [{ name: "lookup_order", arguments: { id: "A-17" } }]);
 * samplesOf(agent, undefined); // one call per tool
 */
export function samplesOf(agent: Agent, calls: readonly SampleCall[] | undefined): SampleCall[] {
	const tools = agent.state.tools;
	if (!calls) return tools.map((tool) => ({ name: tool.name, arguments: sampleArguments(tool.parameters) }));
	const names = new Set(tools.map((tool) => tool.name));
	const unknown = [...new Set(calls.map((call) => call.name).filter((name) => !names.has(name)))];
	if (unknown.length) {
		const have = tools.length ? `its tools are ${tools.map((tool) => JSON.stringify(tool.name)).join(", ")}` : "it has no tools";
		throw new Error(`agentchart/testing: calls name ${unknown.map((name) => JSON.stringify(name)).join(", ")}, which ${unknown.length === 1 ? "is" : "are"} not a tool of the agent your factory made (${have})`);
	}
	const samples = calls.map((call) => ({ name: call.name, arguments: { ...call.arguments } }));
	// A call the tool's schema refuses never reaches the tool (the model gets the validation error):
	// with only such calls, the tool would never run while the report read as a pass.
	samples.forEach((call, index) => {
		const outcome = prepareToolCall(findTool(tools, call.name), { type: "toolCall", id: `calls-${index}`, name: call.name, arguments: call.arguments });
		if (outcome.kind === "prepared") return;
		const why = outcome.outcome.result.content.map((block) => (block.type === "text" ? block.text : "")).join(" ");
		throw new Error(`agentchart/testing: calls[${index}] (${JSON.stringify(call.name)}) has arguments the tool refuses, so it would never run (the model would be told why instead): ${why}. Give arguments the tool accepts`);
	});
	return samples;
}

/** The walk's model of this agent. */
export function configOf(agent: Agent, choices: ConfigChoices): ModelConfig {
	const tools = [...agent.state.tools];
	const samples = samplesOf(agent, choices.calls);
	const compaction = agent.compaction;
	return {
		name: describeAgent(agent),
		mode: agent.toolExecution,
		hook: agent.beforeToolCall != null,
		loop: false,
		input: {
			systemPrompt: agent.state.systemPrompt,
			model: agent.state.model,
			thinkingLevel: agent.state.thinkingLevel,
			tools,
			messages: [...agent.state.messages],
			config: {
				toolExecution: agent.toolExecution,
				toolTimeoutMs: agent.toolTimeoutMs,
				toolAbortGraceMs: agent.toolAbortGraceMs,
				streamIdleTimeoutMs: agent.streamIdleTimeoutMs,
				outputLimitRecovery: agent.outputLimitRecovery,
				compaction: compaction ? { ...compaction } : undefined,
				approvalTimeoutMs: agent.approvalTimeoutMs,
				// The model never calls it: its presence is what the chart reads.
				...(agent.beforeToolCall ? { beforeToolCall: async () => undefined } : {}),
				journal: AGENT_JOURNAL,
			},
			steeringMode: agent.steeringMode,
			followUpMode: agent.followUpMode,
			awaitDelivery: true,
		},
		samples,
		outcomes: "agent",
		interruptions: false,
		restores: choices.restores,
		toolTimeouts: agent.toolTimeoutMs > 0,
		approvalTimeout: (agent.approvalTimeoutMs ?? 0) > 0,
		prompt: userMessage(choices.prompt ?? "Hello"),
		bigPrompt: bigPromptFor(agent.state.model.contextWindow, compaction),
		steer: userMessage("One more thing"),
		followUp: userMessage("And then"),
		keepRecentTokens: keepRecentOf(compaction),
		summary: "## Goal\nThe walk's summary",
	};
}
