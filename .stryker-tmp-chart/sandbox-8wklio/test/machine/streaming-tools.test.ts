// @ts-nocheck
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel, text, toolCall, type ScriptedReply } from "../../src/providers/scripted.js";
import type { AgentEvent, AgentTool } from "../../src/types/agent.js";
import type { AssistantMessage } from "../../src/types/messages.js";
import type { StreamFn } from "../../src/types/stream.js";
import { emptyUsage } from "../../src/types/content.js";
import { AssistantMessageEventStream } from "../../src/providers/event-stream.js";

const params = Type.Object({ ms: Type.Number(), fail: Type.Optional(Type.Boolean()) });

function sleepTool(name: string, log: string[], extra: Partial<AgentTool<typeof params>> = {}): AgentTool<typeof params> {
	return {
		name,
		label: name,
		description: "sleeps",
		parameters: params,
		async execute(id, { ms, fail }, signal) {
			log.push(`start:${id}`);
			await new Promise<void>((resolve) => {
				const timer = setTimeout(resolve, ms);
				signal?.addEventListener("abort", () => {
					clearTimeout(timer);
					resolve();
				});
			});
			log.push(`end:${id}${signal?.aborted ? ":aborted" : ""}`);
			if (signal?.aborted) throw new Error("aborted");
			if (fail) throw new Error(`${name} failed`);
			return { content: [{ type: "text", text: `${name} ${id}` }], details: {} };
		},
		...extra,
	};
}

function run(replies: ScriptedReply[], tools: AgentTool<typeof params>[], delayMs = 10) {
	const scripted = createScriptedModel(replies, { chunkSize: 8, delayMs });
	const agent = new Agent({ initialState: { model: scripted.model, tools }, streamFn: scripted.streamFn, toolExecution: "streaming" });
	const events: AgentEvent[] = [];
	agent.subscribe((event) => {
		events.push(event);
	});
	return { agent, events, scripted };
}

const label = (event: AgentEvent): string => {
	if (event.type === "tool_execution_start" || event.type === "tool_execution_end") return `${event.type}(${event.toolCallId})`;
	if (event.type === "message_start" || event.type === "message_end") return `${event.type}(${(event.message as { role: string }).role})`;
	return event.type;
};

describe("streaming tool execution", () => {
	it("starts each call as soon as its toolcall_end has streamed, before the message ends", async () => {
		const log: string[] = [];
		const { agent, events } = run(
			[{ content: [toolCall("sleep", { ms: 5 }, "a"), text("x".repeat(80)), toolCall("sleep", { ms: 5 }, "b")] }, { content: "done" }],
			[sleepTool("sleep", log)],
		);
		await agent.prompt("go");
		const labels = events.map(label);
		expect(labels.indexOf("tool_execution_start(a)")).toBeLessThan(labels.indexOf("message_end(assistant)"));
		expect(labels.indexOf("tool_execution_end(a)")).toBeLessThan(labels.indexOf("message_end(assistant)"));
		const results = agent.state.messages.filter((m) => (m as { role: string }).role === "toolResult");
		expect(results.map((m) => (m as { toolCallId: string }).toolCallId)).toEqual(["a", "b"]);
	});

	it("keeps tool result messages in source order when later calls finish first", async () => {
		const log: string[] = [];
		const { agent, events } = run(
			[{ content: [toolCall("sleep", { ms: 80 }, "slow"), toolCall("sleep", { ms: 1 }, "fast")] }, { content: "done" }],
			[sleepTool("sleep", log)],
		);
		await agent.prompt("go");
		const ends = events.filter((e) => e.type === "tool_execution_end").map((e) => (e as { toolCallId: string }).toolCallId);
		expect(ends).toEqual(["fast", "slow"]);
		const turnEnd = events.find((e) => e.type === "turn_end" && e.toolResults.length > 0);
		expect(turnEnd?.type === "turn_end" && turnEnd.toolResults.map((r) => r.toolCallId)).toEqual(["slow", "fast"]);
	});

	it("a sequential tool waits for running calls and holds back the calls after it", async () => {
		const log: string[] = [];
		const { agent } = run(
			[
				{ content: [toolCall("par", { ms: 40 }, "p1"), toolCall("seq", { ms: 20 }, "s"), toolCall("par", { ms: 1 }, "p2")] },
				{ content: "done" },
			],
			[sleepTool("par", log), sleepTool("seq", log, { executionMode: "sequential" })],
			1,
		);
		await agent.prompt("go");
		expect(log.indexOf("start:s")).toBeGreaterThan(log.indexOf("end:p1"));
		expect(log.indexOf("start:p2")).toBeGreaterThan(log.indexOf("end:s"));
	});

	it("aborts running calls and never starts the rest when the message ends in error", async () => {
		const log: string[] = [];
		const { agent, events } = run(
			[{ content: [toolCall("sleep", { ms: 500 }, "a"), text("y".repeat(40))], stopReason: "error", errorMessage: "boom" }],
			[sleepTool("sleep", log)],
		);
		await agent.prompt("go");
		const end = events.find((e) => e.type === "tool_execution_end");
		expect(end).toMatchObject({ toolCallId: "a", isError: true });
		expect(agent.state.messages.filter((m) => (m as { role: string }).role === "toolResult")).toHaveLength(1);
		expect(agent.state.errorMessage).toBe("boom");
		expect(Object.keys(agent.actor.getSnapshot().children)).toEqual([]);
	});

	it("abort while the message streams aborts running tools and every started call gets a result", async () => {
		const log: string[] = [];
		const { agent, events } = run(
			[{ content: [toolCall("sleep", { ms: 1000 }, "a"), text("z".repeat(400))] }, { content: "never" }],
			[sleepTool("sleep", log)],
		);
		agent.subscribe((event) => {
			if (event.type === "tool_execution_start") setTimeout(() => agent.abort(), 20);
		});
		await agent.prompt("go");
		expect(events.filter((e) => e.type === "tool_execution_end")).toHaveLength(1);
		const last = agent.state.messages.filter((m) => (m as { role: string }).role === "assistant").pop() as { stopReason: string };
		expect(last.stopReason).toBe("aborted");
		expect(agent.state.messages.filter((m) => (m as { role: string }).role === "toolResult")).toHaveLength(1);
	});

	it("cancels running siblings when a tool with cancelSiblingsOnError fails", async () => {
		const log: string[] = [];
		const { agent, events } = run(
			[{ content: [toolCall("slow", { ms: 1000 }, "a"), toolCall("bash", { ms: 10, fail: true }, "b")] }, { content: "done" }],
			[sleepTool("slow", log), sleepTool("bash", log, { cancelSiblingsOnError: true })],
			1,
		);
		await agent.prompt("go");
		const endA = events.find((e) => e.type === "tool_execution_end" && e.toolCallId === "a");
		expect(endA).toMatchObject({ isError: true });
		expect(JSON.stringify(endA)).toContain("Cancelled: sibling tool call bash failed");
	});

	it("does not execute a call cut off by the output token limit", async () => {
		const log: string[] = [];
		const tool = sleepTool("sleep", log);
		let call = 0;
		const streamFn: StreamFn = (model) => {
			const stream = new AssistantMessageEventStream();
			call++;
			const partial: AssistantMessage = {
				role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id,
				usage: emptyUsage(), stopReason: "stop", timestamp: Date.now(),
			};
			queueMicrotask(() => {
				stream.push({ type: "start", partial });
				if (call === 1) {
					const complete = { type: "toolCall" as const, id: "whole", name: "sleep", arguments: { ms: 1 } };
					partial.content.push(complete);
					stream.push({ type: "toolcall_start", contentIndex: 0, partial });
					stream.push({ type: "toolcall_end", contentIndex: 0, toolCall: complete, partial });
					partial.content.push({ type: "toolCall", id: "cut", name: "sleep", arguments: { ms: 1 } });
					stream.push({ type: "toolcall_start", contentIndex: 1, partial });
					partial.stopReason = "length";
					stream.push({ type: "done", reason: "length", message: partial });
				} else {
					partial.content.push({ type: "text", text: "ok" });
					stream.push({ type: "done", reason: "stop", message: partial });
				}
			});
			return stream;
		};
		const agent = new Agent({ initialState: { tools: [tool] }, streamFn, toolExecution: "streaming" });
		const events: AgentEvent[] = [];
		agent.subscribe((event) => {
			events.push(event);
		});
		await agent.prompt("go");
		expect(log).toEqual(["start:whole", "end:whole"]);
		const cut = events.find((e) => e.type === "tool_execution_end" && e.toolCallId === "cut");
		expect(cut).toMatchObject({ isError: true });
		expect(JSON.stringify(cut)).toContain("output token limit");
		expect(call).toBe(2);
	});
});
