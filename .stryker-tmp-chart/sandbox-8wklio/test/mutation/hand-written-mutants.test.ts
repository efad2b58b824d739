/**
 * The deliberate bugs of the former hand-written mutant catalogue that StrykerJS cannot
 * generate (it changes one operator, literal or block at a time; these drop an argument,
 * add a transition or an assignment, or remove three guards at once), as behaviour tests.
 * Each test names the bug it kills.
 */
// @ts-nocheck

import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentToolUpdateCallback } from "../../src/types/agent.js";
import type { AgentMessage, ToolResultMessage } from "../../src/types/messages.js";
import { deferred, expectWellFormedRun, makeTool, ok, record, sleep, textOf, user, whenAborted } from "../agent/helpers.js";

/** The texts of the user messages of a transcript or a model call's context. */
function userTexts(messages: readonly AgentMessage[]): string[] {
	return messages.filter((message) => (message as { role?: string }).role === "user").map((message) => textOf(message));
}

describe("queued messages (drop-steering, follow-ups-before-steering, abort-consumes-steering)", () => {
	it("a message steered during a reply starts the next turn, and the model sees it", async () => {
		const scripted = createScriptedModel([{ content: "first" }, { content: "second" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		agent.subscribe((event) => {
			if (event.type === "message_start" && (event.message as { role?: string }).role === "assistant" && scripted.calls.length === 1) agent.steer(user("steered"));
		});
		await agent.prompt("go");
		expect(scripted.calls).toHaveLength(2);
		expect(userTexts(scripted.calls[1]?.messages ?? [])).toEqual(["go", "steered"]);
		expect(userTexts(agent.state.messages)).toEqual(["go", "steered"]);
	});

	it("steering queued beside a follow-up is taken first; the follow-up only when nothing else is left", async () => {
		const scripted = createScriptedModel([{ content: "one" }, { content: "two" }, { content: "three" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		agent.subscribe((event) => {
			if (event.type === "message_start" && (event.message as { role?: string }).role === "assistant" && scripted.calls.length === 1) {
				agent.followUp(user("follow-up"));
				agent.steer(user("steer"));
			}
		});
		await agent.prompt("go");
		expect(userTexts(agent.state.messages)).toEqual(["go", "steer", "follow-up"]);
		expect(scripted.calls.map((context) => userTexts(context.messages).at(-1))).toEqual(["go", "steer", "follow-up"]);
	});

	it("abort() leaves steered messages queued, and continue() delivers them", async () => {
		const streaming = deferred();
		const scripted = createScriptedModel([{ content: "a long reply that is aborted", delayMs: 20, chunkSize: 2 }, { content: "after" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		agent.subscribe((event) => {
			if (event.type === "message_update") streaming.resolve();
		});
		const run = agent.prompt("go");
		await streaming.promise;
		agent.steer(user("kept"));
		agent.abort();
		await run;
		expect(scripted.calls).toHaveLength(1);
		expect(agent.hasQueuedMessages()).toBe(true);
		await agent.continue();
		expect(userTexts(scripted.calls[1]?.messages ?? [])).toEqual(["go", "kept"]);
	});
});

describe("tool calls (skip-aborted-tool-results, timeout-leaves-tool-running, late-on-update)", () => {
	it("after abort() during a batch, every call of the batch still gets its result message", async () => {
		const bothRunning = { a: deferred(), b: deferred() };
		const waits = (id: "a" | "b") =>
			makeTool(`wait-${id}`, async (_id, _params, signal) => {
				bothRunning[id].resolve();
				await whenAborted(signal);
				return ok(`${id} stopped`);
			});
		const scripted = createScriptedModel([{ content: [toolCall("wait-a", {}, "a"), toolCall("wait-b", {}, "b")] }, { content: "never" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [waits("a"), waits("b")] }, streamFn: scripted.streamFn });
		const rec = record(agent);
		const run = agent.prompt("go");
		await Promise.all([bothRunning.a.promise, bothRunning.b.promise]);
		agent.abort();
		await run;
		expectWellFormedRun(rec.events);
		const results = agent.state.messages.filter((message): message is ToolResultMessage => message.role === "toolResult");
		expect(results.map((result) => [result.toolCallId, textOf(result)])).toEqual([
			["a", "a stopped"],
			["b", "b stopped"],
		]);
		const turnEnd = rec.events.find((event) => event.type === "turn_end");
		expect(turnEnd?.type === "turn_end" ? turnEnd.toolResults.length : -1).toBe(2);
	});

	it("a tool that runs past its timeout is told to stop: its signal aborts before the run ends", async () => {
		let signalAtEnd: boolean | undefined;
		let reason: unknown;
		const slow = makeTool(
			"slow",
			async (_id, _params, signal) => {
				await Promise.race([whenAborted(signal), sleep(1000)]);
				reason = signal?.reason;
				return ok("late");
			},
			{ timeoutMs: 30 },
		);
		const scripted = createScriptedModel([{ content: [toolCall("slow", {}, "s")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [slow] }, streamFn: scripted.streamFn });
		let toolSignal: AbortSignal | undefined;
		agent.subscribe((event) => {
			if (event.type === "agent_end") signalAtEnd = toolSignal?.aborted;
		});
		const original = slow.execute;
		slow.execute = (id, params, signal, onUpdate) => {
			toolSignal = signal;
			return original(id, params, signal, onUpdate);
		};
		await agent.prompt("go");
		expect(signalAtEnd).toBe(true);
		expect(String(reason)).toContain("timed out after 30 ms");
		const result = agent.state.messages.find((message): message is ToolResultMessage => message.role === "toolResult");
		expect(result?.isError).toBe(true);
		expect(textOf(result)).toBe('Tool "slow" timed out after 30 ms');
	});

	it("an onUpdate after the tool's call settled is not reported, while a sibling call still runs", async () => {
		let lateUpdate: AgentToolUpdateCallback<unknown> | undefined;
		const siblingRunning = deferred();
		const releaseSibling = deferred();
		const quick = makeTool("quick", async (_id, _params, _signal, onUpdate) => {
			lateUpdate = onUpdate;
			onUpdate?.(ok("in time"));
			return ok("quick done");
		});
		const sibling = makeTool("sibling", async () => {
			siblingRunning.resolve();
			await releaseSibling.promise;
			return ok("sibling done");
		});
		const scripted = createScriptedModel([{ content: [toolCall("quick", {}, "q"), toolCall("sibling", {}, "s")] }, { content: "done" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [quick, sibling] }, streamFn: scripted.streamFn });
		const rec = record(agent);
		const quickEnded = deferred();
		agent.subscribe((event) => {
			if (event.type === "tool_execution_end" && event.toolCallId === "q") quickEnded.resolve();
		});
		const run = agent.prompt("go");
		await Promise.all([siblingRunning.promise, quickEnded.promise]);
		lateUpdate?.(ok("too late"));
		await sleep(5);
		releaseSibling.resolve();
		await run;
		expectWellFormedRun(rec.events);
		const updates = rec.events.filter((event) => event.type === "tool_execution_update").map((event) => (event.type === "tool_execution_update" ? textOf(event.partialResult) : ""));
		expect(updates).toEqual(["in time"]);
	});
});
