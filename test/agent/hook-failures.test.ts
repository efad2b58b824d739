/**
 * Every function a user hands the agent, failing every way JavaScript lets it (throwing,
 * rejecting, or returning a promise where a value is expected): the run ends (or waits for a
 * person, where the docs say a failing approval rule does), the transcript stays valid for the
 * provider, and nothing reaches the process's last-resort handlers, which end a Node process.
 * The class of two defects found by probing: a `prepareArguments` or `needsApproval` returning a
 * rejected promise was an unhandled rejection.
 */
import { Type } from "typebox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Agent, type AgentOptions } from "../../src/agent.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AnyAgentTool } from "../../src/types/agent.js";
import { type Escapes, expectValidTranscript, ok, watchEscapes } from "./helpers.js";

let escapes: Escapes;
beforeEach(() => {
	escapes = watchEscapes();
});
afterEach(() => escapes.stop());

type Failing = () => never;
const HOW = {
	throws: (what: string): Failing => () => {
		throw new Error(`${what} throws`);
	},
	rejects: (what: string): Failing => (() => Promise.reject(new Error(`${what} rejects`))) as Failing,
};

/** Where a failing function goes: the agent's options, or the tool's fields. */
const PLACES: Record<string, { options?: (fail: Failing) => Partial<AgentOptions>; tool?: (fail: Failing) => Partial<AnyAgentTool> }> = {
	convertToLlm: { options: (fail) => ({ convertToLlm: fail }) },
	transformContext: { options: (fail) => ({ transformContext: fail }) },
	getApiKey: { options: (fail) => ({ getApiKey: fail }) },
	streamFn: { options: (fail) => ({ streamFn: fail }) },
	onPayload: { options: (fail) => ({ onPayload: fail }) },
	beforeToolCall: { options: (fail) => ({ beforeToolCall: fail }) },
	afterToolCall: { options: (fail) => ({ afterToolCall: fail }) },
	"tool.execute": { tool: (fail) => ({ execute: fail }) },
	"tool.prepareArguments": { tool: (fail) => ({ prepareArguments: fail }) },
	"tool.needsApproval": { tool: (fail) => ({ needsApproval: fail }) },
};

describe.each(Object.keys(PLACES))("a failing %s", (place) => {
	it.each(Object.keys(HOW) as (keyof typeof HOW)[])("that %s: the run ends, the transcript is valid, nothing escapes", async (how) => {
		const fail = HOW[how](place);
		const spot = PLACES[place] ?? {};
		const scripted = createScriptedModel([{ content: [toolCall("noop", {}, "c1")] }, { content: "done" }]);
		const tool: AnyAgentTool = { name: "noop", label: "noop", description: "does nothing", parameters: Type.Object({}), execute: async () => ok("ran"), ...spot.tool?.(fail) };
		const agent = new Agent({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn, ...spot.options?.(fail) });
		// A failing approval rule makes the call wait for a person (docs/durable.md): one says no.
		agent.subscribe((event) => {
			if (event.type === "approval_requested") queueMicrotask(() => agent.reject(event.toolCallId, "no"));
		});
		let settled = false;
		const run = agent.prompt("go").finally(() => (settled = true));
		await Promise.race([run, new Promise((resolve) => setTimeout(resolve, 5_000))]);
		expect(settled, "the run did not end").toBe(true);
		await new Promise((resolve) => setTimeout(resolve, 10));
		expect(agent.state.isStreaming).toBe(false);
		expectValidTranscript(agent.state.messages);
		expect(escapes.caught).toEqual([]);
	});
});
