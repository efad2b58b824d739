/**
 * Benchmark 2: the loop's own cost per turn. A 50-turn run where every reply but the last
 * calls one trivial tool; replies stream as one delta per block with no delay, so what is
 * left is the engine: events, state, preflight, tool dispatch and the next call.
 */
import { createScriptedModel, type ScriptedReply, text, toolCall } from "../src/providers/scripted.js";
import type { AgentTool } from "../src/types/agent.js";
import { type ContenderName, createBenchAgent, runFloor } from "./lib/contenders.js";
import { interleaved, mediansOf, timeAsync } from "./lib/stats.js";

/** Options of {@link measureToolLoop}. */
export interface ToolLoopOptions {
	/** Turns per run (default 50). */
	turns?: number;
	/** Recorded repetitions per contender (default 7). */
	repetitions?: number;
	/** Unrecorded rounds first (default 2). */
	warmups?: number;
}

/** Median microseconds per turn, per contender. */
export interface ToolLoopResult {
	turns: number;
	usPerTurn: Record<ContenderName, number>;
}

const CONTENDERS: readonly ContenderName[] = ["agentchart", "pi", "floor"];

/**
 * A tool that answers at once: measures dispatch, not work.
 *
 * @example
 * const tool = noopTool();
 */
export function noopTool(): AgentTool<object> {
	return {
		name: "noop",
		label: "No-op",
		description: "Does nothing",
		parameters: { type: "object", properties: { step: { type: "number" } } },
		execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
	};
}

// One tool object for every run: a fresh schema object per run would measure Ajv compiling
// it (about 1 ms, once per distinct schema), not the loop.
const SHARED_TOOL = noopTool();

function scriptFor(turns: number): ScriptedReply[] {
	const replies: ScriptedReply[] = [];
	for (let turn = 1; turn < turns; turn++) replies.push({ content: [toolCall("noop", { step: turn })] });
	replies.push({ content: [text("done")] });
	return replies;
}

/**
 * Runs one `turns`-turn tool loop in a contender; throws if the transcript is not the
 * expected length (user + turns replies + turns-1 tool results).
 *
 * @example
 * await runToolLoopOnce("agentchart", 5);
 */
export async function runToolLoopOnce(name: ContenderName, turns: number): Promise<void> {
	// One delta per block (chunkSize) and no pauses: the script costs the same for everyone.
	const scripted = createScriptedModel(scriptFor(turns), { chunkSize: 1_000, delayMs: 0 });
	const options = { streamFn: scripted.streamFn, model: scripted.model, tools: [SHARED_TOOL] };
	let count: number;
	if (name === "floor") {
		count = (await runFloor(options, "go")).messages.length;
	} else {
		const agent = createBenchAgent(name, options);
		await agent.prompt("go");
		count = agent.messageCount;
	}
	const expected = 1 + turns + (turns - 1);
	if (count !== expected) throw new Error(`${name}: ${count} messages after a ${turns}-turn loop, expected ${expected}`);
}

/**
 * Measures the time per turn of a tool loop, the three contenders interleaved.
 *
 * @example
 * const { usPerTurn } = await measureToolLoop({ turns: 5, repetitions: 1, warmups: 0 });
 */
export async function measureToolLoop(options: ToolLoopOptions = {}): Promise<ToolLoopResult> {
	const turns = options.turns ?? 50;
	const samples = await interleaved(CONTENDERS, options.repetitions ?? 7, options.warmups ?? 2, (name) =>
		timeAsync(() => runToolLoopOnce(name, turns)),
	);
	const ms = mediansOf(samples);
	const usPerTurn = {} as Record<ContenderName, number>;
	for (const name of CONTENDERS) usPerTurn[name] = (ms[name] * 1000) / turns;
	return { turns, usPerTurn };
}
