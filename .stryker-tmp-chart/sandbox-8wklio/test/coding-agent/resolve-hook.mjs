/**
 * Swaps pi's engine: loaded with `node --import <this file>`, it makes every
 * `import "@mariozechner/pi-agent-core"` (in pi-coding-agent and anything else) load the module
 * at `AGENTCHART_ENTRY` instead (an absolute path: `src/index.ts` under tsx, `dist/index.js`, or
 * an installed tarball's entry). Without `AGENTCHART_ENTRY` it does nothing, so the same command
 * line runs on the real pi-agent-core.
 *
 * Hooks run on their own thread, so the entry is passed through `register`'s `data`. The entry is
 * resolved through the rest of the chain (not short-circuited), so a loader registered before
 * this one (`--import tsx` for a `.ts` entry) still claims the file.
 */
// @ts-nocheck

import { register } from "node:module";
import { isAbsolute, resolve as resolvePath } from "node:path";
import { pathToFileURL } from "node:url";
import { isMainThread } from "node:worker_threads";

const ENGINE_SPECIFIER = "@mariozechner/pi-agent-core";

/** @type {string | undefined} */
let entryUrl;

/** @param {{ entryUrl?: string } | undefined} data */
export function initialize(data) {
	entryUrl = data?.entryUrl;
}

/**
 * @param {string} specifier
 * @param {unknown} context
 * @param {(specifier: string, context: unknown) => unknown} nextResolve
 */
export function resolve(specifier, context, nextResolve) {
	if (entryUrl !== undefined && specifier === ENGINE_SPECIFIER) return nextResolve(entryUrl, context);
	return nextResolve(specifier, context);
}

// Registers on the main thread (via --import). The hooks thread loads this same file for
// `initialize`/`resolve` and must not register again.
const entry = process.env["AGENTCHART_ENTRY"];
if (isMainThread && entry) {
	const path = isAbsolute(entry) ? entry : resolvePath(entry);
	register(import.meta.url, { data: { entryUrl: pathToFileURL(path).href } });
}
