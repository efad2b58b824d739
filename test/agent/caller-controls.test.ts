/**
 * The caller's controls at points of a run that the state matrix does not reach: a decision on
 * a call waiting for approval after `state.tools` was changed for the next run, `afterToolCall`
 * while a tool's progress is still being delivered to the listeners (compared with pi 0.73.1,
 * whose loop asks the hook only once those deliveries settled), and a message the caller puts
 * in `state.messages` while a compaction runs.
 */
import { Agent as PiAgent } from "@mariozechner/pi-agent-core";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentEvent, ToolExecutionMode } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { assistant, expectValidTranscript, expectWellFormedRun, flush, makeTool, ok, record, textOf, user } from "./helpers.js";

describe("approve() with arguments", () => {
	it("validates them against the run's tool, not a tool list changed for the next run", async () => {
		const ran: unknown[] = [];
		const schema = { type: "object", properties: { n: { type: "number" } }, required: ["n"] } as const;
		const deploy = makeTool(
			"deploy",
			async (_id, args) => {
				ran.push(args);
				return ok("deployed");
			},
			{ parameters: schema, needsApproval: true },
		);
		const scripted = createScriptedModel([{ content: [toolCall("deploy", { n: 1 }, "c1")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [deploy] }, streamFn: scripted.streamFn });
		const rec = record(agent);
		const outcomes: string[] = [];
		agent.subscribe((event) => {
			if (event.type !== "approval_requested") return;
			// The next run's tools: this run keeps the list it started with (as in pi).
			agent.state.tools = [];
			try {
				void agent.approve(event.toolCallId, { arguments: { n: 2 } });
				outcomes.push("approved");
			} catch (error) {
				outcomes.push((error as Error).message);
				void agent.reject(event.toolCallId);
			}
		});
		await agent.prompt("deploy");
		expect(outcomes).toEqual(["approved"]);
		expect(ran).toEqual([{ n: 2 }]);
		expectWellFormedRun(rec.events);
		expectValidTranscript(agent.state.messages);
	});
});

type Impl = "pi" | "agentchart";

/**
 * Two calls of a tool that reports progress once and returns; a listener that takes a few
 * macrotasks over each `tool_execution_update`; an `afterToolCall` that logs whether the
 * update of its call had reached that listener by then.
 */
async function afterToolCallTrace(impl: Impl, toolExecution: ToolExecutionMode): Promise<string[]> {
	const log: string[] = [];
	const delivered = new Set<string>();
	const progress = makeTool("progress", async (id, _args, _signal, onUpdate) => {
		onUpdate?.(ok(`half of ${id}`));
		return ok(`all of ${id}`);
	});
	const scripted = createScriptedModel([{ content: [toolCall("progress", {}, "t1"), toolCall("progress", {}, "t2")] }, { content: "done" }]);
	const options = {
		initialState: { model: scripted.model, tools: [progress] },
		streamFn: scripted.streamFn,
		toolExecution,
		afterToolCall: async ({ toolCall: call }: { toolCall: { id: string } }) => {
			log.push(`afterToolCall ${call.id}: update ${delivered.has(call.id) ? "delivered" : "NOT delivered"}`);
			return undefined;
		},
	};
	const agent = impl === "pi" ? new PiAgent(options as unknown as ConstructorParameters<typeof PiAgent>[0]) : new Agent(options);
	agent.subscribe(async (event: AgentEvent) => {
		if (event.type !== "tool_execution_update") return;
		await flush(3);
		delivered.add(event.toolCallId);
	});
	await agent.prompt("go");
	log.push(...agent.state.messages.filter((message) => message.role === "toolResult").map((message) => textOf(message)));
	return log;
}

describe("afterToolCall and a tool's progress", () => {
	const expected = ["afterToolCall t1: update delivered", "afterToolCall t2: update delivered", "all of t1", "all of t2"];
	for (const toolExecution of ["sequential", "parallel", "streaming"] as const) {
		it(`is asked once the call's tool_execution_update reached every listener (${toolExecution})`, async () => {
			expect(await afterToolCallTrace("agentchart", toolExecution)).toEqual(expected);
		});
	}
	for (const toolExecution of ["sequential", "parallel"] as const) {
		it(`as pi's is (${toolExecution})`, async () => {
			expect(await afterToolCallTrace("pi", toolExecution)).toEqual(expected);
		});
	}
});

/** Each message as `role:text` (a compaction summary as `compactionSummary`). */
function labels(messages: readonly AgentMessage[]): string[] {
	return messages.map((message) => (message.role === "user" || message.role === "assistant" ? `${message.role}:${textOf(message)}` : message.role));
}

describe("a message the caller puts in state.messages while a compaction runs", () => {
	it("stays after a manual compaction, placed after the compacted transcript", async () => {
		const long = (label: string) => `${label} ${"x".repeat(400)}`;
		const summarizing = deferredVoid();
		const release = deferredVoid();
		const agent = new Agent({
			initialState: { model: createScriptedModel([]).model, messages: [user(long("u1")), assistant(long("a1")), user("u2"), assistant("a2")] },
			compaction: {
				enabled: true,
				keepRecentTokens: 1,
				summarize: async () => {
					summarizing.resolve();
					await release.promise;
					return "summary";
				},
			},
		});
		const compacting = agent.compact();
		await summarizing.promise;
		agent.state.messages.push(user("NOTE"));
		release.resolve();
		await compacting;
		expect(labels(agent.state.messages)).toEqual(["compactionSummary", "assistant:a2", "user:NOTE"]);
	});

	it("stays after a compaction inside a run (threshold), which does not send it, as a run does not send such a message without compaction", async () => {
		const long = "word ".repeat(2000);
		const scripted = createScriptedModel([{ content: "answer" }, { content: "next answer" }], { model: { contextWindow: 3000 } });
		const agent = new Agent({
			initialState: { model: scripted.model, messages: [user(long), assistant(long)] },
			streamFn: scripted.streamFn,
			compaction: { enabled: true, reserveTokens: 1000, keepRecentTokens: 200, summarize: async () => "summary" },
		});
		const rec = record(agent);
		agent.subscribe((event) => {
			if (event.type === "auto_compaction_start") agent.state.messages.push(user("NOTE"));
		});
		await agent.prompt("go");
		expect(rec.events.some((event) => event.type === "auto_compaction_end" && event.result !== undefined)).toBe(true);
		expect(labels(agent.state.messages).filter((label) => label === "user:NOTE")).toHaveLength(1);
		expect(scripted.calls[0]?.messages.map(textOf)).not.toContain("NOTE");
		await agent.prompt("again");
		expect(scripted.calls[1]?.messages.map(textOf)).toContain("NOTE");
		expectValidTranscript(agent.state.messages);
	});
});

function deferredVoid(): { promise: Promise<void>; resolve: () => void } {
	let resolve!: () => void;
	const promise = new Promise<void>((done) => (resolve = done));
	return { promise, resolve };
}
