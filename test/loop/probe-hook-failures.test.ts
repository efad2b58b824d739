/**
 * pi's loop API when a hook the loop asks between turns fails (`getSteeringMessages`,
 * `getFollowUpMessages`, `shouldStopAfterTurn`): pi's `runAgentLoop` rejects with the hook's
 * error, so the caller learns of it. agentchart closes the run first (every start has its end)
 * and then rejects the same way; an error thrown after a turn used to vanish (the run resolved
 * as if it had ended normally).
 */
import * as piModule from "@mariozechner/pi-agent-core";
import { describe, expect, it } from "vitest";
import * as ours from "../../src/index.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import type { AgentContext, AgentEvent } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import type { StreamFn } from "../../src/types/stream.js";
import { deferred, user } from "../agent/helpers.js";

type LoopConfig = ours.AgentLoopConfig;
type Sink = (event: AgentEvent) => Promise<void> | void;
interface RunLoop {
	runAgentLoop(prompts: AgentMessage[], context: AgentContext, config: LoopConfig, emit: Sink, signal?: AbortSignal, streamFn?: StreamFn): Promise<AgentMessage[]>;
}

const IMPLS: [string, RunLoop][] = [
	["pi-agent-core 0.73.1", piModule as unknown as RunLoop],
	["agentchart", ours],
];

const failingHooks: [string, (error: Error) => Partial<LoopConfig>][] = [
	["getSteeringMessages at the start", (error) => ({ getSteeringMessages: async () => Promise.reject(error) })],
	[
		"getSteeringMessages after a turn",
		(error) => {
			let polls = 0;
			return { getSteeringMessages: async () => (polls++ === 0 ? [] : Promise.reject(error)) };
		},
	],
	["getFollowUpMessages", (error) => ({ getFollowUpMessages: async () => Promise.reject(error) })],
	[
		"shouldStopAfterTurn (throwing)",
		(error) => ({
			shouldStopAfterTurn: () => {
				throw error;
			},
		}),
	],
];

async function runWith(api: RunLoop, extra: Partial<LoopConfig>, signal?: AbortSignal) {
	const scripted = createScriptedModel([{ content: "first" }, { content: "second" }]);
	const events: AgentEvent[] = [];
	const config: LoopConfig = { model: scripted.model, convertToLlm: (messages) => messages as never, ...extra };
	const run = api.runAgentLoop([user("go")], { systemPrompt: "", messages: [], tools: [] }, config, (event) => {
		events.push(event);
	}, signal, scripted.streamFn);
	return { run, events };
}

describe.each(IMPLS)("%s: runAgentLoop when a hook fails", (_name, api) => {
	it.each(failingHooks)("rejects with the error of %s", async (_hook, hooks) => {
		const error = new Error("the hook broke");
		const { run } = await runWith(api, hooks(error));
		await expect(run).rejects.toBe(error);
	});
});

describe("agentchart: runAgentLoop when a hook fails", () => {
	it.each(failingHooks)("closes the run (turn_end, agent_end) before rejecting with the error of %s", async (_hook, hooks) => {
		const { run, events } = await runWith(ours, hooks(new Error("the hook broke")));
		await expect(run).rejects.toThrow("the hook broke");
		expect(events.at(-1)?.type).toBe("agent_end");
		expect(events.filter((event) => event.type === "turn_start")).toHaveLength(events.filter((event) => event.type === "turn_end").length);
	});

	it("resolves when the poll it stopped waiting for (after an abort) fails before the run has settled", async () => {
		const poll = deferred<AgentMessage[]>();
		const controller = new AbortController();
		const scripted = createScriptedModel([{ content: "first" }]);
		const events: AgentEvent[] = [];
		const config: LoopConfig = { model: scripted.model, convertToLlm: (messages) => messages as never, getFollowUpMessages: () => poll.promise };
		const run = ours.runAgentLoop([user("go")], { systemPrompt: "", messages: [], tools: [] }, config, async (event) => {
			events.push(event);
			// A slow sink: the run settles only once agent_end has been delivered, after the poll failed.
			if (event.type === "agent_end") await new Promise((resolve) => setTimeout(resolve, 20));
		}, controller.signal, scripted.streamFn);
		while (events.at(-1)?.type !== "turn_end") await new Promise((resolve) => setTimeout(resolve, 1));
		await new Promise((resolve) => setTimeout(resolve, 1));
		controller.abort();
		poll.reject(new Error("answered after the abort"));
		await expect(run).resolves.toHaveLength(2);
		expect(events.at(-1)?.type).toBe("agent_end");
	});

	it("rejects, instead of never settling, when a poll answers with something that is not a list", async () => {
		let polls = 0;
		const notAList = { messages: [] } as unknown as AgentMessage[];
		const { run, events } = await runWith(ours, { getSteeringMessages: async () => (polls++ === 0 ? [] : notAList) });
		const settled = run.then(
			() => "resolved",
			(error: unknown) => (error instanceof TypeError ? "rejected with a TypeError" : `rejected with ${String(error)}`),
		);
		const pending = new Promise((resolve) => setTimeout(() => resolve("still pending"), 2_000));
		expect(await Promise.race([settled, pending])).toBe("rejected with a TypeError");
		expect(events.filter((event) => event.type === "turn_end")).toHaveLength(1);
	});
});
