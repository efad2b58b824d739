/**
 * Shared pieces of the MCP tests: how to start the servers (the real `server-everything`
 * from its installed bin, and the SDK-built fault server), bounded waiting, and a look at
 * this process's children so a test can prove none is left behind.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { McpAgentTool, McpServers, McpConnectionState, McpStdioServerConfig } from "../../src/mcp/index.js";

const require = createRequire(import.meta.url);
const FAULT_SERVER = fileURLToPath(new URL("./fixtures/fault-server.ts", import.meta.url));
const STUBBORN_SERVER = fileURLToPath(new URL("./fixtures/stubborn-server.ts", import.meta.url));

/** The installed `@modelcontextprotocol/server-everything` entry point (its package `bin`). */
export function everythingBin(): string {
	const manifestPath = require.resolve("@modelcontextprotocol/server-everything/package.json");
	const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { bin: Record<string, string> };
	const bin = manifest.bin["mcp-server-everything"];
	if (!bin) throw new Error("server-everything has no mcp-server-everything bin");
	return join(dirname(manifestPath), bin);
}

/** server-everything over stdio, run by this Node (no npx, no network). */
export function everythingServer(extra: Partial<McpStdioServerConfig> = {}): McpStdioServerConfig {
	return { command: process.execPath, args: [everythingBin(), "stdio"], stderr: "ignore", ...extra };
}

/** The fault server over stdio. */
export function faultServer(extra: Partial<McpStdioServerConfig> = {}, flags: string[] = []): McpStdioServerConfig {
	return { command: process.execPath, args: ["--import", "tsx", FAULT_SERVER, "stdio", ...flags], stderr: "ignore", ...extra };
}

/**
 * The stubborn server (ignores the end of its input and SIGTERM, and has a child that ignores
 * SIGTERM too) behind a shell that waits for it, as `sh -c "node server.js"` configurations do:
 * the process this side starts is the shell, not the server. The server writes its own and its
 * child's pid to `pidFile` (see `readServerPids`).
 */
export function stubbornServer(pidFile: string, flags: string[] = []): McpStdioServerConfig {
	// `; exit $?` keeps the shell from exec-ing node in its place: it stays the server's parent.
	return { command: "sh", args: ["-c", '"$0" --import tsx "$@"; exit $?', process.execPath, STUBBORN_SERVER, pidFile, ...flags], stderr: "ignore" };
}

/** The pids the stubborn server wrote: its own and its child's. */
export function readServerPids(pidFile: string): { server: number; child: number } {
	return JSON.parse(readFileSync(pidFile, "utf8")) as { server: number; child: number };
}

/** True while a process with this id exists, zombie or not (`kill(pid, 0)` does not throw ESRCH). */
export function exists(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code !== "ESRCH";
	}
}

/** Sends SIGKILL to each pid that still exists: the last resort of a test's cleanup. */
export function killIfAlive(pids: readonly number[]): void {
	for (const pid of pids) {
		try {
			process.kill(pid, "SIGKILL");
		} catch {
			// Already gone.
		}
	}
}

/** A fault server running over Streamable HTTP, as a process of the test's own. */
export interface HttpFaultServer {
	port: number;
	url: string;
	process: ChildProcess;
	/** Kills the process and waits for it to exit. */
	kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts the fault server over Streamable HTTP on 127.0.0.1 (`port` 0: any free port). */
export async function startHttpFaultServer(port = 0, timeoutMs = 10_000): Promise<HttpFaultServer> {
	const child = spawn(process.execPath, ["--import", "tsx", FAULT_SERVER, "http", String(port)], { stdio: ["ignore", "pipe", "ignore"] });
	const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
	const kill = async (signal: NodeJS.Signals = "SIGKILL") => {
		if (child.exitCode === null && child.signalCode === null) child.kill(signal);
		await exited;
	};
	try {
		const listening = await withTimeout(
			new Promise<number>((resolve, reject) => {
				if (!child.stdout) return reject(new Error("no stdout"));
				createInterface({ input: child.stdout }).once("line", (line) => resolve((JSON.parse(line) as { port: number }).port));
				child.once("exit", (code) => reject(new Error(`fault server exited with ${code} before listening`)));
			}),
			timeoutMs,
			"the HTTP fault server to listen",
		);
		return { port: listening, url: `http://127.0.0.1:${listening}/mcp`, process: child, kill };
	} catch (error) {
		await kill();
		throw error;
	}
}

/** Rejects when `promise` has not settled within `ms`. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
	let timer: ReturnType<typeof setTimeout> | undefined;
	try {
		return await Promise.race([
			promise,
			new Promise<never>((_, reject) => {
				timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
			}),
		]);
	} finally {
		clearTimeout(timer);
	}
}

/** Polls `condition` every 10 ms until it holds; fails after `timeoutMs`. */
export async function waitUntil(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!condition()) {
		if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 10));
	}
}

/** Waits until a server's connection is in `state` (the default bound leaves a busy machine seconds per process start, within the 30 s a test may take). */
export function waitForState(mcp: McpServers, server: string, state: McpConnectionState, timeoutMs = 25_000): Promise<void> {
	return waitUntil(() => mcp.status().find((status) => status.server === server)?.state === state, timeoutMs, `server "${server}" to be ${state}`);
}

/** The tool of that agent-facing name; fails the test when it is missing. */
export function toolNamed(mcp: McpServers, name: string): McpAgentTool {
	const tool = mcp.tools().find((candidate) => candidate.name === name);
	if (!tool) throw new Error(`no tool named ${name}; tools: ${mcp.tools().map((each) => each.name).join(", ")}`);
	return tool;
}

/** The text blocks of a result, joined. */
export function textOf(result: { content: { type: string; text?: string }[] }): string {
	return result.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("\n");
}

export { childPids, isAlive } from "../processes.js";

/** Closes what a test opened, whatever happened in it. */
export class Cleanup {
	private readonly tasks: (() => Promise<void>)[] = [];
	add(task: () => Promise<void>): void {
		this.tasks.push(task);
	}
	async run(): Promise<void> {
		const tasks = this.tasks.splice(0).reverse();
		for (const task of tasks) await task().catch(() => undefined);
	}
}
