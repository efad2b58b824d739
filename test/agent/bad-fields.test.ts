/**
 * Every field a caller can set on an Agent, set from JavaScript to each value of the wrong kind:
 * whatever it is, the assignment throws a `TypeError`, or the next `prompt()` rejects with one
 * that names the field and records nothing, or the run goes on as it would without it (a setting
 * that only shapes a request). Never a crash of the process, an error escaping, an error that
 * names nothing, or an agent that no longer runs once the field is set back. The class this
 * covers: a queue mode set to "everything" failed the next prompt with "queues.steering is not
 * iterable", and `state.model = null` crashed the process from inside the chart. Exhaustive over
 * the fields and values (few enough to try each), not sampled.
 */
import { Agent as PiAgent } from "@mariozechner/pi-agent-core";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import { expectValidTranscript, makeTool, ok, watchEscapes } from "./helpers.js";

/** The fields, each with where it sits: on the agent, or on `agent.state`. */
const FIELDS: [string, "agent" | "state"][] = [
	...[
		"streamFn",
		"convertToLlm",
		"transformContext",
		"getApiKey",
		"onPayload",
		"onResponse",
		"beforeToolCall",
		"afterToolCall",
		"steeringMode",
		"followUpMode",
		"sessionId",
		"thinkingBudgets",
		"transport",
		"maxRetryDelayMs",
		"toolExecution",
		"toolTimeoutMs",
		"compaction",
		"timeoutMs",
		"maxRetries",
		"maxReplyBytes",
		"streamIdleTimeoutMs",
		"toolAbortGraceMs",
		"outputLimitRecovery",
		"approvalTimeoutMs",
	].map((field) => [field, "agent"] as [string, "agent"]),
	...["systemPrompt", "model", "thinkingLevel", "tools", "messages"].map((field) => [field, "state"] as [string, "state"]),
];

const WRONG: [string, unknown][] = [
	["null", null],
	["42", 42],
	["-1", -1],
	["NaN", Number.NaN],
	['"x"', "x"],
	["{}", {}],
	["[]", []],
	["a function", () => "x"],
	["true", true],
];

function agentWithATool() {
	const scripted = createScriptedModel([{ content: [toolCall("t", {}, "c1")] }, { content: "done" }, { content: "again" }]);
	const tool = makeTool("t", async () => ok("ran"));
	const agent = new Agent({ initialState: { model: scripted.model, tools: [tool] }, streamFn: scripted.streamFn });
	agent.subscribe(() => {});
	return agent;
}

describe("a field set to a value of the wrong kind", () => {
	for (const [field, where] of FIELDS) {
		it(`${where === "state" ? "state." : ""}${field}: refused where it is set or when the run would start, or harmless; never a crash`, async () => {
			const escapes = watchEscapes();
			try {
				for (const [shown, value] of WRONG) {
					const agent = agentWithATool();
					const target = (where === "agent" ? agent : agent.state) as unknown as Record<string, unknown>;
					const original = target[field];
					const label = `${field} = ${shown}`;
					try {
						target[field] = value;
					} catch (error) {
						expect(error, label).toBeInstanceOf(TypeError);
						continue;
					}
					const outcome = await agent.prompt("go").then(
						() => undefined,
						(error: unknown) => error,
					);
					if (outcome !== undefined) {
						expect(outcome, label).toBeInstanceOf(TypeError);
						expect((outcome as Error).message, label).toContain(field);
						expect(agent.state.messages, label).toEqual([]);
					} else {
						expectValidTranscript(agent.state.messages);
						expect(agent.state.messages[0]?.role, label).toBe("user");
					}
					target[field] = original;
					await agent.prompt("and now");
					expect(agent.state.messages.at(-1)?.role, label).toBe("assistant");
					expect(agent.state.isStreaming, label).toBe(false);
				}
				await new Promise((resolve) => setTimeout(resolve, 5));
				expect(escapes.caught).toEqual([]);
			} finally {
				escapes.stop();
			}
		});
	}
});

describe("a hook set to null", () => {
	// pi's Agent hands its hooks to its loop, which asks `if (config.beforeToolCall)` and falls back
	// to `streamSimple` for a stream function that is not there: code written for pi clears a hook so.
	it.each(["transformContext", "getApiKey", "beforeToolCall", "afterToolCall"])("%s = null: the run goes on as without it, as on pi's Agent", async (field) => {
		const roles: string[][] = [];
		for (const Make of [Agent, PiAgent as unknown as typeof Agent]) {
			const scripted = createScriptedModel([{ content: [toolCall("t", {}, "c1")] }, { content: "done" }]);
			const agent = new Make({ initialState: { model: scripted.model, tools: [makeTool("t", async () => ok("ran"))] }, streamFn: scripted.streamFn });
			(agent as unknown as Record<string, unknown>)[field] = null;
			await agent.prompt("go");
			expect(agent.state.errorMessage).toBeUndefined();
			roles.push(agent.state.messages.map((message) => message.role));
		}
		expect(roles[0]).toEqual(["user", "assistant", "toolResult", "assistant"]);
		expect(roles[0]).toEqual(roles[1]);
	});

	it("streamFn = null: the default stream function, as leaving it out", async () => {
		const model = { ...createScriptedModel([]).model, api: "no-such-api" };
		const agent = new Agent({ initialState: { model } });
		agent.streamFn = null as never;
		await agent.prompt("go");
		const failure = agent.state.errorMessage;
		const left = new Agent({ initialState: { model } });
		await left.prompt("go");
		expect(failure).toBe(left.state.errorMessage);
		expect(failure).toContain("no-such-api");
	});

	it("convertToLlm = null is refused when the run would start (pi's run fails on it too)", async () => {
		const agent = agentWithATool();
		(agent as unknown as Record<string, unknown>)["convertToLlm"] = null;
		await expect(agent.prompt("go")).rejects.toThrow(/agent\.convertToLlm must be a function, got null/);
		expect(agent.state.messages).toEqual([]);
	});
});
