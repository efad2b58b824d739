/**
 * The turn of benchmark 2 (one prompt: a reply with 1 text delta and 3 instant tool calls, then
 * a 1-delta reply), agentchart and pi measured in one process in many short alternating blocks:
 * each block builds `prompts` agents of one library, then times their prompts in CPU time
 * (user + system, so another process on the machine costs neither side), and the ratio is taken
 * per pair of neighbouring blocks. On a shared machine this is steadier than the full bench's
 * rounds, since load that comes and goes hits both sides of a pair alike.
 *
 * `npm run build && npx tsx bench/turn-paired.ts [parallel|streaming] [blocks] [prompts]`
 * (default parallel, 60 blocks, 300 prompts; pi always runs parallel).
 */
import { type AgentName, instantTool, loadBenchAgentFactory } from "./lib/contenders.js";
import { median } from "./lib/stats.js";
import { rerunOnSupportedNode } from "./lib/supported-node.js";
import { benchModel, toolTurnStreamFn } from "./lib/streams.js";

const rerun = await rerunOnSupportedNode();
if (rerun !== undefined) process.exit(rerun);

const mode = process.argv[2] === "streaming" ? "streaming" : "parallel";
const blocks = Number(process.argv[3] ?? 60);
const prompts = Number(process.argv[4] ?? 300);
const WARM_UP_BLOCKS = 5;

const model = benchModel();
const tool = instantTool("noop");
const streamFn = toolTurnStreamFn(model, { turns: 1, callsPerTurn: 3, toolName: tool.name });
const factories = { agentchart: await loadBenchAgentFactory("agentchart"), pi: await loadBenchAgentFactory("pi") };
const samples: Record<AgentName, number[]> = { agentchart: [], pi: [] };

for (let block = -WARM_UP_BLOCKS; block < blocks; block++) {
	// Alternate who goes first, so neither side always runs right after the other's garbage.
	const order: AgentName[] = block % 2 === 0 ? ["agentchart", "pi"] : ["pi", "agentchart"];
	for (const name of order) {
		const agents = Array.from({ length: prompts }, () => {
			const agent = factories[name]({ model, streamFn, tools: [tool], toolExecution: name === "pi" ? "parallel" : mode });
			agent.subscribe(() => {});
			return agent;
		});
		const start = process.cpuUsage();
		for (const agent of agents) await agent.prompt("go");
		const used = process.cpuUsage(start);
		if (block >= 0) samples[name].push((used.user + used.system) / prompts);
	}
}

const ratios = samples.agentchart.map((ours, index) => ours / (samples.pi[index] ?? Number.NaN)).sort((a, b) => a - b);
const quantile = (q: number) => ratios[Math.min(ratios.length - 1, Math.floor(ratios.length * q))] ?? Number.NaN;
console.log(`3-tool prompt, agentchart ${mode} vs pi parallel, CPU µs per prompt (median of ${blocks} blocks of ${prompts}):`);
console.log(`  agentchart ${median(samples.agentchart).toFixed(1)}   pi ${median(samples.pi).toFixed(1)}`);
console.log(`  ours / pi ${median(ratios).toFixed(2)}× (interquartile ${quantile(0.25).toFixed(2)}–${quantile(0.75).toFixed(2)}, min–max ${quantile(0).toFixed(2)}–${quantile(1).toFixed(2)})`);
