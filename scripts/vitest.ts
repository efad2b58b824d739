/**
 * `tsx scripts/vitest.ts <newest|oldest> [vitest arguments]`: runs vitest on a Node line that
 * agentchart supports (`engines`). On a supported Node it is vitest as usual. On another one (a
 * machine still on Node 20, which reached its end of life) the suite would test a runtime nobody
 * can install agentchart on, so it runs on the registry's binary of a declared line instead
 * (`test/runtimes/`, installed with `npm ci` when missing): `npm test` takes the newest line for
 * the main run and the oldest for the run on XState's interpreter, so such a machine tests both.
 * Where those binaries cannot run (not linux-x64) it says so and runs where it is.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { supportedNodeToRunOn } from "../test/package/node-runtimes.js";

const [which, ...args] = process.argv.slice(2);
if (which !== "newest" && which !== "oldest") {
	console.error(`scripts/vitest.ts: the first argument is the Node line to run on when this one is not supported, "newest" or "oldest", not ${JSON.stringify(which)}`);
	process.exit(2);
}

const node = (await supportedNodeToRunOn(which, "testing")) ?? process.execPath;
// vitest's command, as `npx vitest` finds it: the `bin` of its package.json (the file is not among its exports).
const manifest = createRequire(import.meta.url).resolve("vitest/package.json");
const { bin } = JSON.parse(readFileSync(manifest, "utf8")) as { bin: Record<string, string> };
const vitest = join(dirname(manifest), bin["vitest"] ?? "vitest.mjs");
const child = spawn(node, [vitest, ...args], { stdio: "inherit" });
// Stopping `npm test` stops the suite, and with it every process the suite started.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
