/**
 * Streaming tool execution with a `beforeToolCall` hook, aborted while the hook has not answered
 * (probe AT, 2026-12-07): the call never ran, so it is answered at once as aborted before it ran,
 * as parallel and sequential mode answer a call still being prepared. Before, the run waited out
 * `toolAbortGraceMs` and then told the model the tool "did not stop", though it never started.
 * A call the hook let through before the abort is the tool's to finish, as before.
 */
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { agentLoop, type AgentLoopConfig, defaultConvertToLlm } from "../../src/index.js";
import { createScriptedModel, text, toolCall } from "../../src/providers/scripted.js";
import { checkAgentInvariants } from "../../src/testing/agent-checks.js";
import type { AgentEvent, BeforeToolCallResult } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { makeTool, ok, textOf, user } from "./helpers.js";

/** A hook that answers only when told to (and never looks at its signal). */
function heldHook() {
	const asked: string[] = [];
	let answer: (value: BeforeToolCallResult | undefined) => void = () => undefined;
	const answered = new Promise<BeforeToolCallResult | undefined>((resolve) => (answer = resolve));
	const hook = async ({ toolCall: call }: { toolCall: { id: string } }) => {
		asked.push(call.id);
		return answered;
	};
	return { hook, asked, letThrough: () => answer(undefined) };
}

function results(messages: AgentMessage[]): string[] {
	return messages.filter((message) => message.role === "toolResult").map((message) => textOf(message));
}

const until = async (ready: () => boolean) => {
	for (let i = 0; i < 500 && !ready(); i++) await new Promise((resolve) => setTimeout(resolve, 2));
	expect(ready()).toBe(true);
};

describe("streaming tool execution, aborted while beforeToolCall has not answered", () => {
	it("answers the call as aborted before it ran, without waiting out the abort grace, and never runs it", async () => {
		const runs: string[] = [];
		const echo = makeTool("echo", async (id) => (runs.push(id), ok("echoed")));
		const held = heldHook();
		// The reply ends before the abort: the run waits for the call alone.
		const scripted = createScriptedModel([{ content: [toolCall("echo", {}, "a")] }, { content: "done" }]);
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [echo] },
			streamFn: scripted.streamFn,
			toolExecution: "streaming",
			beforeToolCall: held.hook,
			// Short, so that the old behaviour shows as its give-up text rather than as a test timeout.
			toolAbortGraceMs: 200,
		});
		const events: AgentEvent[] = [];
		agent.subscribe((event) => void events.push(event));
		const prompted = agent.prompt("go");
		await until(() => held.asked.length === 1);
		agent.abort();
		await prompted;
		expect(results(agent.state.messages)).toEqual(["Tool call was aborted before it ran"]);
		// The hook's late answer lets nothing run.
		held.letThrough();
		await new Promise((resolve) => setTimeout(resolve, 20));
		expect(runs).toEqual([]);
		expect(checkAgentInvariants(events, agent)).toEqual([]);
		// The agent goes on.
		await agent.prompt("again");
		expect(textOf(agent.state.messages.at(-1))).toBe("done");
	});

	it("answers it so also while the reply still streams, beside a call the hook had let through", async () => {
		const runs: string[] = [];
		const stopped: string[] = [];
		// The first call's tool runs until the abort reaches it, and says so.
		const slow = makeTool("slow", (id, _args, signal) => {
			runs.push(id);
			return new Promise((resolve) => signal?.addEventListener("abort", () => (stopped.push(id), resolve(ok("stopped by the abort"))), { once: true }));
		});
		const asked: string[] = [];
		let answerSecond: () => void = () => undefined;
		const scripted = createScriptedModel([{ content: [toolCall("slow", {}, "a"), toolCall("slow", {}, "b"), text("a long tail ".repeat(200))] }, { content: "done" }], { delayMs: 1 });
		const agent = new Agent({
			initialState: { model: scripted.model, tools: [slow] },
			streamFn: scripted.streamFn,
			toolExecution: "streaming",
			beforeToolCall: async ({ toolCall: call }) => {
				asked.push(call.id);
				if (call.id === "b") await new Promise<void>((resolve) => (answerSecond = resolve));
				return undefined;
			},
			toolAbortGraceMs: 200,
		});
		const events: AgentEvent[] = [];
		agent.subscribe((event) => void events.push(event));
		const prompted = agent.prompt("go");
		await until(() => runs.length === 1 && asked.length === 2);
		agent.abort();
		await prompted;
		answerSecond();
		// "a" ran and stopped at the abort with its own answer; "b" never ran.
		expect(stopped).toEqual(["a"]);
		expect(runs).toEqual(["a"]);
		expect(results(agent.state.messages)).toEqual(["stopped by the abort", "Tool call was aborted before it ran"]);
		expect(checkAgentInvariants(events, agent)).toEqual([]);
	});

	it("is the same through pi's loop API (agentLoop)", async () => {
		const runs: string[] = [];
		const echo = makeTool("echo", async (id) => (runs.push(id), ok("echoed")));
		const held = heldHook();
		const scripted = createScriptedModel([{ content: [toolCall("echo", {}, "a")] }, { content: "done" }]);
		const controller = new AbortController();
		const config: AgentLoopConfig = {
			model: scripted.model,
			convertToLlm: defaultConvertToLlm,
			toolExecution: "streaming",
			beforeToolCall: held.hook,
			toolAbortGraceMs: 200,
		};
		const stream = agentLoop([user("go")], { systemPrompt: "", messages: [], tools: [echo] }, config, controller.signal, scripted.streamFn);
		const events: AgentEvent[] = [];
		const read = (async () => {
			for await (const event of stream) events.push(event);
		})();
		await until(() => held.asked.length === 1);
		controller.abort();
		await read;
		const messages = await stream.result();
		expect(results(messages)).toEqual(["Tool call was aborted before it ran"]);
		held.letThrough();
		await new Promise((resolve) => setTimeout(resolve, 20));
		expect(runs).toEqual([]);
	});
});
