/**
 * The package as users install it: the benchmarks load agentchart from `dist/` (what `npm run
 * build` emits and the tarball ships), not the TypeScript sources through tsx, whose
 * transform changes what is measured (a constructed agent retained about twice the heap under
 * tsx). The path is computed so that type-checking a fresh clone needs no build.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

type Agentchart = typeof import("../../src/index.js");
type AgentchartInspect = typeof import("../../src/inspect/index.js");

async function importBuilt<T>(path: string, dist?: string): Promise<T> {
	const url = dist ? pathToFileURL(resolve(dist, path)).href : new URL(`../../dist/${path}`, import.meta.url).href;
	try {
		return (await import(url)) as T;
	} catch (error) {
		throw new Error(`bench: cannot load ${url}; run \`npm run build\` first (npm run bench does)`, { cause: error });
	}
}

/**
 * agentchart's main entry, built: this checkout's `dist/`, or another build's (an earlier
 * commit's, built in a worktree) to compare two builds.
 *
 * @example
 * const { Agent } = await loadAgentchart();
 */
export function loadAgentchart(dist?: string): Promise<Agentchart> {
	return importBuilt<Agentchart>("index.js", dist);
}

/**
 * `agentchart/inspect`, built.
 *
 * @example
 * const { createAgentInspector } = await loadAgentchartInspect();
 */
export function loadAgentchartInspect(): Promise<AgentchartInspect> {
	return importBuilt<AgentchartInspect>("inspect/index.js");
}
