/**
 * checkAgentInvariants reads an event stream and a state, and says what is wrong in sentences:
 * streams that break each rule are built by hand here (an engine that works never emits them).
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { checkAgentInvariants, type CheckedState, idleViolations, recordAgent } from "../../src/testing/agent-checks.js";
import { EventInvariants } from "../../src/testing/event-invariants.js";
import { assertNoViolations, formatViolation } from "../../src/testing/violations.js";
import type { AgentEvent } from "../../src/types/agent.js";
import type { AgentMessage, AssistantMessage } from "../../src/types/messages.js";

const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const user: AgentMessage = { role: "user", content: [{ type: "text", text: "hi" }], timestamp: 1 };
function reply(...calls: string[]): AssistantMessage {
	return {
		role: "assistant",
		content: calls.length ? calls.map((id) => ({ type: "toolCall" as const, id, name: "lookup", arguments: {} })) : [{ type: "text", text: "hello" }],
		api: "scripted",
		provider: "scripted",
		model: "scripted-1",
		usage,
		stopReason: calls.length ? "toolUse" : "stop",
		timestamp: 2,
	};
}
function result(id: string): AgentMessage {
	return { role: "toolResult", toolCallId: id, toolName: "lookup", content: [{ type: "text", text: "ok" }], isError: false, timestamp: 3 } as AgentMessage;
}
const message = (m: AgentMessage): AgentEvent[] => [
	{ type: "message_start", message: m },
	{ type: "message_end", message: m },
];
const tool = (id: string): AgentEvent[] => [
	{ type: "tool_execution_start", toolCallId: id, toolName: "lookup", args: {} },
	{ type: "tool_execution_end", toolCallId: id, toolName: "lookup", result: { content: [], details: {} }, isError: false },
];
const idle = (messages: AgentMessage[]): CheckedState => ({ messages, isStreaming: false, pendingToolCalls: new Set(), streamingMessage: undefined });

function run(...inner: AgentEvent[][]): AgentEvent[] {
	return [{ type: "agent_start" }, { type: "turn_start" }, ...inner.flat(), { type: "turn_end", message: reply(), toolResults: [] }, { type: "agent_end", messages: [] }];
}

describe("the checks refuse what is not an agent, its state or its events", () => {
	const state: CheckedState = { messages: [], isStreaming: false, pendingToolCalls: new Set(), streamingMessage: undefined };
	it.each([
		["checkAgentInvariants without events", () => checkAgentInvariants(null as never, state), "agentchart/testing: checkAgentInvariants' events must be the list of events the agent emitted, got null"],
		["checkAgentInvariants without a state", () => checkAgentInvariants([], undefined as never), "agentchart/testing: checkAgentInvariants takes the agent, or its state (agent.state: messages, isStreaming, pendingToolCalls as a Set, streamingMessage), got undefined"],
		// A list of pending calls was read as nothing pending (its size is undefined).
		["a state whose pending calls are a list", () => checkAgentInvariants([], { ...state, pendingToolCalls: ["c1"] } as never), "agentchart/testing: checkAgentInvariants takes the agent, or its state"],
		["idleViolations of nothing", () => idleViolations(undefined as never), "agentchart/testing: idleViolations takes the agent, or its state"],
		["recordAgent of nothing", () => recordAgent(null as never), "agentchart/testing: recordAgent takes the Agent to record, got null"],
	])("%s", (_case, call, message) => {
		expect(call).toThrow(TypeError);
		expect(call).toThrow(message);
	});

	it("and take an agent and a state alike", () => {
		const agent = new Agent({ initialState: { model: createScriptedModel([]).model } });
		expect(checkAgentInvariants([], agent)).toEqual([]);
		expect(checkAgentInvariants([], agent.state)).toEqual([]);
		expect(idleViolations(agent)).toEqual([]);
		recordAgent(agent).stop();
		agent.dispose();
	});
});

describe("checkAgentInvariants", () => {
	it("passes a well-formed run with a tool call and its result", () => {
		const events = run(message(user), message(reply("c1")), tool("c1"), message(result("c1")));
		expect(checkAgentInvariants(events, idle([user, reply("c1"), result("c1")]))).toEqual([]);
	});

	it("says which tool call went unanswered", () => {
		const events = run(message(user), message(reply("c1", "c2")), tool("c1"), message(result("c1")));
		const found = checkAgentInvariants(events, idle([user, reply("c1", "c2"), result("c1")]));
		expect(found.map(formatViolation)).toContain("[tool-answered] turn_end: turn_end before results of c2 (event #10)");
		expect(found.map(formatViolation)).toContain("[transcript] transcript[1]: tool call c2 not answered in source order (found the end of the transcript)");
	});

	it("says when results come out of source order, and when a call is answered twice", () => {
		const outOfOrder = run(message(user), message(reply("c1", "c2")), tool("c1"), tool("c2"), message(result("c2")), message(result("c1")));
		expect(checkAgentInvariants(outOfOrder, idle([])).map(formatViolation)).toContain("[tool-answered] message_end: tool result c2 out of source order (expected c1) (event #11)");
		const twice = run(message(user), message(reply("c1")), tool("c1"), message(result("c1")), message(result("c1")));
		expect(checkAgentInvariants(twice, idle([])).map((each) => each.message)).toContain("message_end: second tool result for c1");
	});

	it("says when a run never ended although the agent is idle, and when idle is not idle", () => {
		const events: AgentEvent[] = [{ type: "agent_start" }, { type: "turn_start" }];
		const found = checkAgentInvariants(events, { ...idle([]), pendingToolCalls: new Set(["c9"]) });
		expect(found.map(formatViolation)).toEqual(["[settle] a run never ended (agent_start without agent_end) although the agent is idle", "[idle] idle: pendingToolCalls {c9}"]);
	});

	it("refuses a misspelt option, which it would otherwise leave unchecked, as recording.check does", () => {
		const events = run(message(user), message(reply()));
		// `convertToLLM` for `convertToLlm`: the requests would be checked through the default converter, not yours.
		const misspelt = { convertToLLM: (messages: AgentMessage[]) => messages } as unknown as Parameters<typeof checkAgentInvariants>[2];
		expect(() => checkAgentInvariants(events, idle([user, reply()]), misspelt)).toThrow(
			new TypeError('agentchart/testing: checkAgentInvariants has no option "convertToLLM" (its options: queued, convertToLlm); nothing was checked'),
		);
		const recording = recordAgent(new Agent({ initialState: { model: createScriptedModel([]).model } }));
		expect(() => recording.check({ queued: [] } as Parameters<typeof recording.check>[0])).toThrow(
			new TypeError('agentchart/testing: recording.check has no option "queued" (its options: convertToLlm); nothing was checked'),
		);
		expect(recording.check({ convertToLlm: undefined })).toEqual([]);
		recording.stop();
	});

	it("throws one readable error listing every violation (assertNoViolations)", () => {
		const events = run(message(user), message(reply("c1")));
		expect(() => assertNoViolations(checkAgentInvariants(events, idle([user, reply("c1")])), "after the lookup")).toThrow(/^after the lookup: \d+ invariant violation\(s\):\n {2}\[tool-answered\]/);
	});

	describe("across a restore in the middle of a streaming reply (EventInvariants.restored)", () => {
		// A reply streaming c1 had started it (streaming tool execution), asked about it and run it;
		// the snapshot is taken before the reply ends. The restored agent closes the reply again with
		// c1 and announces it anew: started, asked about, ended with its stored outcome.
		const streamed = reply("c1");
		const approval = (type: "approval_requested" | "approval_resolved"): AgentEvent =>
			type === "approval_requested" ? { type, toolCallId: "c1", callKey: "c1", toolName: "lookup", args: {} } : { type, toolCallId: "c1", callKey: "c1", toolName: "lookup", decision: "approved", args: {} };
		const beforeSnapshot: AgentEvent[] = [
			{ type: "agent_start" },
			{ type: "turn_start" },
			...message(user),
			{ type: "message_start", message: { ...streamed, content: [] } },
			{ type: "message_update", message: streamed, assistantMessageEvent: { type: "toolcall_end", contentIndex: 0, toolCall: streamed.content[0] as never, partial: streamed } },
			tool("c1")[0] as AgentEvent,
			approval("approval_requested"),
			approval("approval_resolved"),
			tool("c1")[1] as AgentEvent,
		];
		const afterRestore: AgentEvent[] = [
			{ type: "message_start", message: streamed },
			tool("c1")[0] as AgentEvent,
			{ type: "message_end", message: streamed },
			approval("approval_requested"),
			approval("approval_resolved"),
			tool("c1")[1] as AgentEvent,
			...message(result("c1")),
			{ type: "turn_end", message: streamed, toolResults: [] },
			{ type: "agent_end", messages: [] },
		];

		it("accepts the reply's calls announced again, ended ones included (found by the kit's fuzzer, streaming mode, seed 579757148)", () => {
			const invariants = new EventInvariants();
			for (const event of beforeSnapshot) invariants.onEvent(event);
			invariants.restored();
			for (const event of afterRestore) invariants.onEvent(event);
			expect(invariants.violations).toEqual([]);
		});

		it("accepts a decision taken before the restore replayed without being asked again (the restored agent answers it from the journal)", () => {
			const invariants = new EventInvariants();
			for (const event of beforeSnapshot) invariants.onEvent(event);
			invariants.restored();
			for (const event of afterRestore.filter((event) => event.type !== "approval_requested")) invariants.onEvent(event);
			expect(invariants.violations).toEqual([]);
		});

		it("still says a resolution had no request when the call was not asked about before the restore", () => {
			const invariants = new EventInvariants();
			for (const event of beforeSnapshot.filter((event) => !event.type.startsWith("approval_"))) invariants.onEvent(event);
			invariants.restored();
			for (const event of afterRestore.filter((event) => event.type !== "approval_requested")) invariants.onEvent(event);
			expect(invariants.violations.map((each) => each.message)).toEqual(["approval_resolved: approval of c1 resolved (approved) without a request, or twice"]);
		});

		it("still says a call started twice when nothing was restored", () => {
			const invariants = new EventInvariants();
			for (const event of [...beforeSnapshot, ...afterRestore]) invariants.onEvent(event);
			expect(invariants.violations.map((each) => each.message)).toContain("tool_execution_start: tool c1 started twice");
		});
	});
});
