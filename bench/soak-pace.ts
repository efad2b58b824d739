/**
 * The long session's time per prompt, agentchart and pi side by side: one agent of one library
 * per child process takes `prompts` prompts of the soak's session (one tool call each, the same
 * stream and tool as benchmark 8), yielding to the event loop between prompts, and reports the
 * mean time per prompt of each block of `block` prompts. Both libraries' times grow with the
 * transcript (every model call converts all of it); this shows how fast each grows.
 *
 * `npm run build && npx tsx bench/soak-pace.ts [prompts] [block]` (default 4000 and 500).
 */
import { fileURLToPath } from "node:url";
import { type AgentName, loadBenchAgentFactory } from "./lib/contenders.js";
import { childPayload, isEntryPoint, reportFromChild, runChild } from "./lib/child.js";
import { nextTurnOfTheLoop } from "./lib/stats.js";
import { search, sessionModel } from "./soak.js";

const SCRIPT = fileURLToPath(import.meta.url);

interface PacePayload {
	agent: AgentName;
	prompts: number;
	block: number;
}

/** Milliseconds per prompt, one entry per block of prompts. */
type Pace = number[];

async function paceInChild(payload: PacePayload): Promise<Pace> {
	const create = await loadBenchAgentFactory(payload.agent);
	const { model, streamFn } = sessionModel();
	const agent = create({ model, streamFn, tools: [search] });
	const pace: Pace = [];
	let start = performance.now();
	for (let prompt = 1; prompt <= payload.prompts; prompt++) {
		await agent.prompt(`Question ${prompt}: ${"please explain this part of the system in detail. ".repeat(3)}`);
		await nextTurnOfTheLoop();
		if (prompt % payload.block === 0) {
			const now = performance.now();
			pace.push((now - start) / payload.block);
			start = now;
		}
	}
	// Each prompt records four messages: the prompt, the reply with the tool call, the result, the answer.
	if (agent.messageCount !== payload.prompts * 4) throw new Error(`${payload.agent}: ${agent.messageCount} messages, expected ${payload.prompts * 4}`);
	return pace;
}

/**
 * Runs the session once per library, each in a child process, and returns the time per prompt
 * of every block.
 *
 * @example
 * const { agentchart, pi } = await measurePace(4000, 500);
 */
export async function measurePace(prompts: number, block: number): Promise<Record<AgentName, Pace>> {
	const result = {} as Record<AgentName, Pace>;
	for (const agent of ["agentchart", "pi"] as const) {
		result[agent] = await runChild<Pace>(SCRIPT, { agent, prompts, block } satisfies PacePayload);
	}
	return result;
}

if (isEntryPoint(import.meta.url)) {
	const payload = childPayload<PacePayload>();
	if (payload) reportFromChild(paceInChild(payload));
	else {
		const prompts = Number(process.argv[2] ?? 4000);
		const block = Number(process.argv[3] ?? 500);
		measurePace(prompts, block).then(
			(pace) => {
				console.log(`ms per prompt, blocks of ${block} prompts (up to ${prompts}):`);
				for (const agent of ["agentchart", "pi"] as const) console.log(agent.padEnd(10), pace[agent].map((ms) => ms.toFixed(2)).join(" "));
				const last = pace.agentchart.length - 1;
				console.log(`last block, ours / pi: ${((pace.agentchart[last] ?? Number.NaN) / (pace.pi[last] ?? Number.NaN)).toFixed(2)}x`);
			},
			(error: unknown) => {
				console.error(error);
				process.exitCode = 1;
			},
		);
	}
}
