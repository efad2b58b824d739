/**
 * What the caller of `agentLoop`'s stream learns when a hook throws, run as the same script on
 * pi-agent-core 0.73.1 and on agentchart, event by event and through `result()`:
 *
 * - `beforeToolCall`, `afterToolCall`: the call's error result, the run goes on (both, equal).
 * - `transformContext`, `convertToLlm`, `getApiKey`: pi's stream stops after the prompt and never
 *   ends, `result()` never settles, the error escapes as an unhandled rejection (which ends a Node
 *   process by default); agentchart's run ends with an error reply carrying the hook's message.
 * - `getSteeringMessages`, `getFollowUpMessages`, `shouldStopAfterTurn`: pi's stream stops where
 *   the hook was asked, likewise never ending, the error escaping unhandled. agentchart closes the
 *   run (`agent_end`) and its `result()` rejects with the hook's error, as `runAgentLoop` does.
 *   Before, agentchart's `result()` resolved with the run's messages: the error was nowhere.
 *
 * In every case agentchart's stream is pi's up to where pi's stops, and nothing escapes.
 */
import * as piModule from "@mariozechner/pi-agent-core";
import { describe, expect, it } from "vitest";
import * as ours from "../../src/index.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentContext, AgentEvent } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import type { StreamFn } from "../../src/types/stream.js";
import { describeEvent, echoTool, flush, sleep, user, watchEscapes } from "../agent/helpers.js";

type LoopConfig = ours.AgentLoopConfig;
interface LoopStream extends AsyncIterable<AgentEvent> {
	result(): Promise<AgentMessage[]>;
}
interface LoopApi {
	agentLoop(prompts: AgentMessage[], context: AgentContext, config: LoopConfig, signal?: AbortSignal, streamFn?: StreamFn): LoopStream;
	agentLoopContinue(context: AgentContext, config: LoopConfig, signal?: AbortSignal, streamFn?: StreamFn): LoopStream;
}
const pi = piModule as unknown as LoopApi;

const LLM_ROLES = new Set(["user", "assistant", "toolResult"]);
const convertToLlm: LoopConfig["convertToLlm"] = (messages) => messages.filter((m) => LLM_ROLES.has(m.role)) as never;

/** Where the caller of the stream finds the hook's error. */
type Surface = "tool result" | "error reply" | "result() rejects";

const hooks: [string, () => Partial<LoopConfig>, Surface][] = [
	["beforeToolCall", () => ({ beforeToolCall: async () => broke() }), "tool result"],
	["afterToolCall", () => ({ afterToolCall: async () => broke() }), "tool result"],
	["transformContext", () => ({ transformContext: async () => broke() }), "error reply"],
	["convertToLlm", () => ({ convertToLlm: async () => broke() }), "error reply"],
	["getApiKey", () => ({ getApiKey: async () => broke() }), "error reply"],
	["getSteeringMessages (at the start)", () => ({ getSteeringMessages: async () => broke() }), "result() rejects"],
	[
		"getSteeringMessages (after a turn)",
		() => {
			let polls = 0;
			return { getSteeringMessages: async () => (polls++ === 0 ? [] : broke()) };
		},
		"result() rejects",
	],
	["getFollowUpMessages", () => ({ getFollowUpMessages: async () => broke() }), "result() rejects"],
	["shouldStopAfterTurn", () => ({ shouldStopAfterTurn: () => broke() }), "result() rejects"],
];

function broke(): never {
	throw new Error("the hook broke");
}

interface Observed {
	lines: string[];
	ended: boolean;
	result: { resolved: AgentMessage[] } | { rejected: unknown } | "pending";
	escaped: unknown[];
}

/** Runs the script (a tool call, then an answer) and reads the stream as a caller does, until it ends or the error escapes. */
async function observe(api: LoopApi, extra: Partial<LoopConfig>, continued: boolean): Promise<Observed> {
	const escapes = watchEscapes();
	try {
		const scripted = createScriptedModel([{ content: [toolCall("echo", { value: "v" }, "c1")] }, { content: "final" }]);
		const config: LoopConfig = { model: scripted.model, convertToLlm, ...extra };
		const tools = [echoTool()] as AgentContext["tools"];
		const stream = continued
			? api.agentLoopContinue({ systemPrompt: "", messages: [user("go")], tools }, config, undefined, scripted.streamFn)
			: api.agentLoop([user("go")], { systemPrompt: "", messages: [], tools }, config, undefined, scripted.streamFn);
		const events: AgentEvent[] = [];
		let ended = false;
		void (async () => {
			for await (const event of stream) events.push(event);
			ended = true;
		})();
		for (let i = 0; i < 2000 && !ended && escapes.caught.length === 0; i++) await sleep(1);
		// Node reports a rejection nobody handled after the microtasks of its turn.
		await sleep(5);
		let result: Observed["result"] = "pending";
		stream.result().then(
			(messages) => (result = { resolved: messages }),
			(error: unknown) => (result = { rejected: error }),
		);
		await flush();
		return { lines: events.map((event) => describeEvent(event, true)).filter((line) => !line.startsWith("message_update")), ended, result, escaped: [...escapes.caught] };
	} finally {
		escapes.stop();
	}
}

describe.each([
	["agentLoop", false],
	["agentLoopContinue", true],
])("%s's stream when a hook throws: agentchart against pi-agent-core 0.73.1", (_name, continued) => {
	it.each(hooks)("%s", async (_hook, makeHooks, surface) => {
		const theirs = await observe(pi, makeHooks(), continued);
		const mine = await observe(ours, makeHooks(), continued);

		// pi's stream, up to where it stops, is ours.
		expect(mine.lines.slice(0, theirs.lines.length)).toEqual(theirs.lines);
		// Ours ends, with agent_end, and nothing escapes.
		expect(mine.ended).toBe(true);
		expect(mine.lines.at(-1)).toMatch(/^agent_end/);
		expect(mine.escaped).toEqual([]);

		if (surface === "tool result") {
			// Equal on both: the error is the call's result, and the run goes on.
			expect(mine.lines).toEqual(theirs.lines);
			expect(theirs.ended).toBe(true);
			expect(mine.lines).toContain("message_end:toolResult(c1,err:the hook broke)");
			const roles = (observed: Observed) => ("resolved" in (observed.result as object) ? (observed.result as { resolved: AgentMessage[] }).resolved.map((message) => message.role) : observed.result);
			expect(roles(mine)).toEqual(roles(theirs));
			expect(roles(mine)).toEqual(continued ? ["assistant", "toolResult", "assistant"] : ["user", "assistant", "toolResult", "assistant"]);
			return;
		}
		// pi: the stream never ends and result() never settles; the error escapes unhandled.
		expect(theirs.ended).toBe(false);
		expect(theirs.result).toBe("pending");
		expect(theirs.escaped).toEqual([expect.objectContaining({ message: "the hook broke" })]);
		if (surface === "error reply") {
			expect(mine.lines.slice(-3)).toEqual(["message_end:assistant(error:the hook broke)", "turn_end(toolResults=0)", expect.stringMatching(/^agent_end/)]);
			const added = (mine.result as { resolved: AgentMessage[] }).resolved;
			expect(added.at(-1)).toMatchObject({ role: "assistant", stopReason: "error", errorMessage: "the hook broke" });
			return;
		}
		// The run is closed, and result() rejects with the hook's own error.
		expect(mine.result).toEqual({ rejected: expect.objectContaining({ message: "the hook broke" }) });
	});
});

describe("agentLoop's result() when the run fails before agent_end", () => {
	it("a poll that answers with something that is not a list fails as one that throws: the run is closed (agent_end), then result() rejects with a TypeError naming the poller (it used to stop the chart before agent_end)", async () => {
		const escapes = watchEscapes();
		try {
			const scripted = createScriptedModel([{ content: "first" }]);
			let polls = 0;
			const notAList = { messages: [] } as unknown as AgentMessage[];
			const getSteeringMessages = async () => (polls++ === 0 ? [] : notAList);
			const stream = ours.agentLoop([user("go")], { systemPrompt: "", messages: [], tools: [] }, { model: scripted.model, convertToLlm, getSteeringMessages }, undefined, scripted.streamFn);
			const types: string[] = [];
			for await (const event of stream) types.push(event.type);
			await expect(stream.result()).rejects.toThrow(TypeError);
			await expect(stream.result()).rejects.toThrow(/^getSteeringMessages\(\): expected a list of messages/);
			expect(types.at(-1)).toBe("agent_end");
			await sleep(5);
			expect(escapes.caught).toEqual([]);
		} finally {
			escapes.stop();
		}
	});

	it("resolves with the run's messages when the caller awaits it inside the loop, at agent_end", async () => {
		const scripted = createScriptedModel([{ content: "first" }]);
		const stream = ours.agentLoop([user("go")], { systemPrompt: "", messages: [], tools: [] }, { model: scripted.model, convertToLlm }, undefined, scripted.streamFn);
		let added: AgentMessage[] | undefined;
		for await (const event of stream) if (event.type === "agent_end") added = await stream.result();
		expect(added?.map((message) => message.role)).toEqual(["user", "assistant"]);
	});
});
