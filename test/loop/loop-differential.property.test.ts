/**
 * Random runs of pi's low-level loop API, each through pi-agent-core 0.73.1 and through ours:
 * replies with text and tool calls, tools that answer, throw or terminate, steering and
 * follow-ups returned at random polls, one or two messages a poll (a poll of two took two turns
 * and lost the second when the run ended first, until a probe found it), `shouldStopAfterTurn` at a random turn, `agentLoop` or
 * `agentLoopContinue`, parallel or sequential. The hooks answer as plain JS may, outside their
 * types: a stop as any truthy value, no stop and an empty queue as any falsy one. Every event a sink receives must be the same
 * JSON, byte for byte (timestamps aside), and so must the result.
 *
 * Only behaviour where agentchart does not deliberately differ is generated (no aborts, no
 * streams that break off: see agent-loop.test.ts for those).
 */
import * as piModule from "@mariozechner/pi-agent-core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as ours from "../../src/index.js";
import { createScriptedModel, type ScriptedBlock, type ScriptedReply, text, toolCall } from "../../src/providers/scripted.js";
import type { AgentContext, AgentEvent, AgentTool } from "../../src/types/agent.js";
import type { AgentMessage } from "../../src/types/messages.js";
import type { StreamFn } from "../../src/types/stream.js";
import { makeTool, ok } from "../agent/helpers.js";

type Sink = (event: AgentEvent) => Promise<void> | void;
interface LoopApi {
	runAgentLoop(prompts: AgentMessage[], context: AgentContext, config: ours.AgentLoopConfig, emit: Sink, signal?: AbortSignal, streamFn?: StreamFn): Promise<AgentMessage[]>;
	runAgentLoopContinue(context: AgentContext, config: ours.AgentLoopConfig, emit: Sink, signal?: AbortSignal, streamFn?: StreamFn): Promise<AgentMessage[]>;
}
const pi = piModule as unknown as LoopApi;

interface Scenario {
	entry: "loop" | "continue";
	toolExecution: "parallel" | "sequential";
	/** Every tool call of a reply has one id (models do this; each call still runs and is answered). */
	sameIds: boolean;
	replies: { blocks: ({ kind: "text"; words: number } | { kind: "tool"; name: "echo" | "fail" | "stop" | "missing" })[]; error: boolean }[];
	/** Poll number (0-based, per queue) → the messages it returns (pi injects all of a poll's in one turn). */
	steering: Record<number, string[]>;
	followUps: Record<number, string[]>;
	stopAfterTurn: number | undefined;
	/** What `shouldStopAfterTurn` answers to stop, and otherwise (pi tests truthiness). */
	stopAnswer: unknown;
	goAnswer: unknown;
	/** What a queue poll with nothing to give answers. */
	emptyPoll: unknown;
	/** A sink that awaits a macrotask on these event types (backpressure). */
	slowOn: string[];
	chunkSize: number;
}

const block = fc.oneof(
	{ weight: 2, arbitrary: fc.record({ kind: fc.constant("text" as const), words: fc.integer({ min: 1, max: 6 }) }) },
	{ weight: 2, arbitrary: fc.record({ kind: fc.constant("tool" as const), name: fc.constantFrom("echo" as const, "fail" as const, "stop" as const, "missing" as const) }) },
);

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
	entry: fc.constantFrom("loop" as const, "continue" as const),
	toolExecution: fc.constantFrom("parallel" as const, "sequential" as const),
	sameIds: fc.constantFrom(false, false, false, true),
	replies: fc.array(fc.record({ blocks: fc.array(block, { minLength: 1, maxLength: 3 }), error: fc.integer({ min: 0, max: 5 }).map((n) => n === 0) }), { minLength: 1, maxLength: 4 }),
	steering: fc.dictionary(fc.integer({ min: 0, max: 4 }).map(String), fc.array(fc.constantFrom("steer-a", "steer-b"), { minLength: 1, maxLength: 2 }), { maxKeys: 2 }) as fc.Arbitrary<Record<number, string[]>>,
	followUps: fc.dictionary(fc.integer({ min: 0, max: 3 }).map(String), fc.array(fc.constantFrom("follow-a", "follow-b"), { minLength: 1, maxLength: 2 }), { maxKeys: 2 }) as fc.Arbitrary<Record<number, string[]>>,
	stopAfterTurn: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
	stopAnswer: fc.constantFrom<unknown>(true, 1, "stop", {}),
	goAnswer: fc.constantFrom<unknown>(false, 0, "", undefined, null),
	emptyPoll: fc.constantFrom<unknown>([], undefined, null),
	slowOn: fc.subarray(["message_start", "message_update", "message_end", "tool_execution_end", "turn_end"]),
	chunkSize: fc.integer({ min: 1, max: 8 }),
});

const WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];

function repliesOf(scenario: Scenario): ScriptedReply[] {
	let id = 0;
	return scenario.replies.map((reply, n) => {
		const callId = () => {
			const unique = `call-${id++}`;
			return scenario.sameIds ? `same-${n}` : unique;
		};
		const content: ScriptedBlock[] = reply.blocks.map((b) => (b.kind === "text" ? text(WORDS.slice(0, b.words).join(" ")) : toolCall(b.name, { value: `v${id}` }, callId())));
		return reply.error ? { content, stopReason: "error", errorMessage: "overloaded" } : { content };
	});
}

function toolsOf(): AgentTool<object, unknown>[] {
	return [
		makeTool("echo", async (_id, params) => ok(`echo:${String(params["value"])}`)),
		makeTool("fail", async () => {
			throw new Error("disk full");
		}),
		makeTool("stop", async () => ({ ...ok("stopping"), terminate: true })),
	];
}

const normalise = (json: string) => json.replace(/"timestamp":\d+/g, '"timestamp":0');
const message = (text: string): AgentMessage => ({ role: "user", content: [{ type: "text", text }], timestamp: 0 });

async function play(api: LoopApi, scenario: Scenario): Promise<{ lines: string[]; result: string; calls: number }> {
	const scripted = createScriptedModel(repliesOf(scenario), { chunkSize: scenario.chunkSize, whenExhausted: { content: "that is all" } });
	const lines: string[] = [];
	let steeringPolls = 0;
	let followUpPolls = 0;
	let turns = 0;
	const config: ours.AgentLoopConfig = {
		model: scripted.model,
		// A new array, as every real convertToLlm returns (pi pushes its partial reply into the array it was given).
		convertToLlm: (messages) => [...messages] as never,
		toolExecution: scenario.toolExecution,
		getSteeringMessages: async () => {
			const texts = scenario.steering[steeringPolls++];
			return texts ? texts.map(message) : (scenario.emptyPoll as AgentMessage[]);
		},
		getFollowUpMessages: async () => {
			const texts = scenario.followUps[followUpPolls++];
			return texts ? texts.map(message) : (scenario.emptyPoll as AgentMessage[]);
		},
		shouldStopAfterTurn: () => (turns++ === scenario.stopAfterTurn ? scenario.stopAnswer : scenario.goAnswer) as boolean,
	};
	const sink: Sink = (event) => {
		lines.push(normalise(JSON.stringify(event)));
		if (scenario.slowOn.includes(event.type)) return new Promise((resolve) => setImmediate(resolve));
	};
	const context: AgentContext = { systemPrompt: "Be brief.", messages: scenario.entry === "continue" ? [message("start")] : [], tools: toolsOf() as AgentContext["tools"] };
	const result =
		scenario.entry === "loop"
			? await api.runAgentLoop([message("go")], context, config, sink, undefined, scripted.streamFn)
			: await api.runAgentLoopContinue(context, config, sink, undefined, scripted.streamFn);
	return { lines, result: normalise(JSON.stringify(result)), calls: scripted.calls.length };
}

/** Runs of the property: `PROPERTY_RUNS` (default 150). */
const PROPERTY_RUNS = Number(process.env["PROPERTY_RUNS"] ?? 150);

describe("pi's loop API, random runs on pi and on agentchart", () => {
	it("delivers the same events, byte for byte, and resolves with the same messages", async () => {
		await fc.assert(
			fc.asyncProperty(scenarioArb, async (scenario) => {
				const expected = await play(pi, scenario);
				const actual = await play(ours, scenario);
				expect(actual.calls).toBe(expected.calls);
				expect(actual.lines).toEqual(expected.lines);
				expect(actual.result).toBe(expected.result);
			}),
			// PROPERTY_SEED (set by the mutation run) replays one seed; otherwise fast-check draws one.
			{ numRuns: PROPERTY_RUNS, ...(process.env["PROPERTY_SEED"] ? { seed: Number(process.env["PROPERTY_SEED"]) } : {}) },
		);
	}, Math.max(120_000, PROPERTY_RUNS * 1_000));
});
