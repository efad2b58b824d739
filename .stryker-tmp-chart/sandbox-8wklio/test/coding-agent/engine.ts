/**
 * The engine switch: how to start pi's coding agent (`@mariozechner/pi-coding-agent`, its real
 * CLI) on the real `@mariozechner/pi-agent-core`, or on agentchart.
 *
 * The swap is done by `resolve-hook.mjs`, a Node module resolution hook loaded with
 * `node --import`: it resolves the specifier `@mariozechner/pi-agent-core` to the file named by
 * the `AGENTCHART_ENTRY` environment variable. Which agentchart is tested is the one switch
 * below, read from the same variable in the test process:
 *
 * - unset (default): the sources, `src/index.ts`, loaded through `tsx`;
 * - `AGENTCHART_ENTRY=dist/index.js`: the build (`npm run build`);
 * - `AGENTCHART_ENTRY=/tmp/x/node_modules/agentchart/dist/index.js`: the packed tarball
 *   installed into a temporary project;
 * - `AGENTCHART_ENTRY=packed` (what `npm test` sets): that, for the current build, installed by
 *   `global-setup.ts` before the tests start.
 *
 * A `.ts` entry gets `--import tsx`; a `.js` entry runs on plain Node, like pi does.
 */
// @ts-nocheck

import { createRequire } from "node:module";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export type Engine = "pi" | "agentchart";

/** Both engines, the reference first. */
export const ENGINES: readonly Engine[] = ["pi", "agentchart"];

/** The repository root. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

const require = createRequire(import.meta.url);

/** The coding agent's CLI (its package `bin`; the package exports no `package.json` to resolve). */
export const CODING_AGENT_CLI = join(REPO_ROOT, "node_modules/@mariozechner/pi-coding-agent/dist/cli.js");

/** The module that replaces `@mariozechner/pi-agent-core` when the engine is agentchart. */
export const AGENTCHART_ENTRY = resolveEntry(process.env["AGENTCHART_ENTRY"]);

const RESOLVE_HOOK = join(REPO_ROOT, "test/coding-agent/resolve-hook.mjs");

function resolveEntry(fromEnvironment: string | undefined): string {
	if (!fromEnvironment) return join(REPO_ROOT, "src/index.ts");
	return isAbsolute(fromEnvironment) ? fromEnvironment : resolve(REPO_ROOT, fromEnvironment);
}

/** How to start Node for one engine: arguments before the script, and environment additions. */
export interface EngineLaunch {
	execArgv: string[];
	env: Record<string, string>;
}

/**
 * The `node` arguments and environment that run a script on the given engine.
 *
 * @example
 * const { execArgv, env } = engineLaunch("agentchart");
 * spawn(process.execPath, [...execArgv, CODING_AGENT_CLI, "-p", "hi"], { env: { ...base, ...env } });
 */
export function engineLaunch(engine: Engine): EngineLaunch {
	if (engine === "pi") return { execArgv: [], env: {} };
	const execArgv: string[] = [];
	const env: Record<string, string> = { AGENTCHART_ENTRY };
	if (AGENTCHART_ENTRY.endsWith(".ts")) {
		execArgv.push("--import", pathToFileURL(require.resolve("tsx")).href);
		env["TSX_TSCONFIG_PATH"] = join(REPO_ROOT, "tsconfig.json");
	}
	execArgv.push("--import", pathToFileURL(RESOLVE_HOOK).href);
	return { execArgv, env };
}
