/**
 * pi's loop API (`runAgentLoop`, what `agentLoop` streams) with every field of its config and
 * context, and every hook's answer, of the wrong kind: the run rejects with a `TypeError` that
 * names the field or the hook, or it goes on as it would without it, or, for a hook that shapes a
 * model call, the call ends as an error that names the hook; never a hang, an error that escapes,
 * or a transcript with entries that are not messages. The class: a `getSteeringMessages` that
 * answered a text had it spread into the transcript letter by letter (entries without a role), a
 * poller that was not a function failed with "hook is not a function", a `context.messages`
 * given as a text became a run over its letters, and a `convertToLlm` answering something other
 * than a list ended the call with "Cannot read properties of undefined (reading 'length')". An
 * optional hook given as null is none, as pi's loop takes it (a null poller failed with "hook is
 * not a function", the other null hooks with a TypeError).
 * Exhaustive over the fields and values, not sampled.
 */
import { type AnyActorLogic, createActor } from "xstate";
import { describe, expect, it } from "vitest";
import { runAgentLoop } from "../../src/loop/agent-loop.js";
import { agentLogic } from "../../src/machines/agent-logic.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { expectValidTranscript, makeTool, ok, watchEscapes } from "../agent/helpers.js";

const WRONG: [string, unknown][] = [
	["null", null],
	["42", 42],
	["-1", -1],
	['"x"', "x"],
	["{}", {}],
	["[]", []],
	["true", true],
];
/** A hook that answers each wrong value (a hook that is one is in WRONG's run). */
const ANSWERING = WRONG.map(([shown, value]): [string, unknown] => [`a function answering ${shown}`, () => value]);

const CONFIG_FIELDS = ["model", "convertToLlm", "transformContext", "getApiKey", "getSteeringMessages", "getFollowUpMessages", "beforeToolCall", "afterToolCall", "toolExecution", "shouldStopAfterTurn", "reasoning", "sessionId", "maxRetryDelayMs", "timeoutMs", "maxRetries", "maxReplyBytes", "streamIdleTimeoutMs", "toolTimeoutMs", "toolAbortGraceMs", "apiKey", "transport", "thinkingBudgets"];
const CONTEXT_FIELDS = ["systemPrompt", "messages", "tools"];
const OPTIONAL_HOOKS = ["transformContext", "getApiKey", "getSteeringMessages", "getFollowUpMessages", "beforeToolCall", "afterToolCall", "shouldStopAfterTurn"];

async function runWith(where: "config" | "context", field: string, value: unknown): Promise<{ messages?: AgentMessage[]; error?: unknown }> {
	const scripted = createScriptedModel([{ content: [toolCall("t", {}, "c1")] }, { content: "done" }, { content: "more" }]);
	const context: Record<string, unknown> = { systemPrompt: "", messages: [], tools: [makeTool("t", async () => ok("ran"))] };
	const config: Record<string, unknown> = { model: scripted.model, convertToLlm: (messages: AgentMessage[]) => messages };
	(where === "config" ? config : context)[field] = value;
	const prompt: AgentMessage = { role: "user", content: "go", timestamp: 1 };
	let timer: ReturnType<typeof setTimeout> | undefined;
	const hang = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Error(`${where}.${field}: the run did not settle in 5 s`)), 5000);
	});
	try {
		const messages = await Promise.race([runAgentLoop([prompt], context as never, config as never, async () => {}, undefined, scripted.streamFn), hang]);
		return { messages };
	} catch (error) {
		if ((error as Error).message.includes("did not settle")) throw error;
		return { error };
	} finally {
		clearTimeout(timer);
	}
}

describe("pi's loop API with a field of the wrong kind", () => {
	for (const [where, fields] of [["config", CONFIG_FIELDS], ["context", CONTEXT_FIELDS]] as const) {
		for (const field of fields) {
			it(`${where}.${field}: a TypeError naming it, a run as without it, or a call that ends naming it`, async () => {
				const escapes = watchEscapes();
				try {
					for (const [shown, value] of [...WRONG, ...ANSWERING]) {
						const label = `${where}.${field} = ${shown}`;
						const { messages, error } = await runWith(where, field, value);
						// An optional hook given as null is none, as pi's loop takes it.
						if (value === null && OPTIONAL_HOOKS.includes(field)) expect(error, label).toBeUndefined();
						if (error !== undefined) {
							expect(error, label).toBeInstanceOf(TypeError);
							expect((error as Error).message, label).toContain(field);
							continue;
						}
						const all = messages as AgentMessage[];
						for (const message of all) expect(typeof message?.role, label).toBe("string");
						expect(all[0]?.role, label).toBe("user");
						expectValidTranscript([{ role: "user", content: "go", timestamp: 1 }, ...all.slice(1)]);
						// A run that failed says why, naming the field (a hook's answer it could not take).
						const failure = all.flatMap((message) => (message.role === "assistant" && message.errorMessage ? [message.errorMessage] : []));
						for (const text of failure) expect(text, label).toContain(field);
					}
					await new Promise((resolve) => setTimeout(resolve, 5));
					expect(escapes.caught).toEqual([]);
				} finally {
					escapes.stop();
				}
			}, 60_000);
		}
	}
});

describe.each([
	["XState's interpreter", agentMachine],
	["agentchart's interpreter", agentLogic],
] as [string, AnyActorLogic][])("the bare machine with a poller that answers a text, on %s", (_name, logic) => {
	it("ends the run with an error naming the poller, its transcript whole (the text was spread into it letter by letter)", async () => {
		const scripted = createScriptedModel([{ content: "done" }]);
		const actor = createActor(logic, { input: { model: scripted.model, config: { streamFn: scripted.streamFn, getSteeringMessages: async () => "x" as never } } }).start();
		const ended = new Promise<AgentMessage[]>((resolve) => actor.on("agent_end", (event: { messages: AgentMessage[] }) => resolve(event.messages)));
		actor.send({ type: "prompt", messages: [{ role: "user", content: "go", timestamp: 1 }] });
		const messages = await ended;
		const context = (actor.getSnapshot() as { context: { messages: AgentMessage[] } }).context;
		actor.stop();
		for (const message of context.messages) expect(typeof message.role).toBe("string");
		expectValidTranscript(context.messages);
		expect(messages.flatMap((message) => (message.role === "assistant" && message.errorMessage ? [message.errorMessage] : []))).toEqual([expect.stringContaining("getSteeringMessages(): expected a list of messages, got \"x\"")]);
	});
});
