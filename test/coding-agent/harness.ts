/**
 * Runs pi's coding agent CLI as a child process against a local Anthropic stand-in, in a
 * throwaway workspace: its own config dir (`PI_CODING_AGENT_DIR`, with a `models.json` that
 * declares the local provider), working directory, session dir and `HOME`. Nothing leaves
 * 127.0.0.1: startup network work is off (`--offline`, `PI_TELEMETRY=0`) and the only model is
 * the local one.
 *
 * Every child gets a hard timeout and is killed (with its process group) when it overruns or
 * when its run is disposed.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AnthropicTestServer, type ScriptedResponse, startAnthropicServer } from "../providers/anthropic-server.js";
import { CODING_AGENT_CLI, type Engine, engineLaunch } from "./engine.js";

/** The provider and model declared in the workspace's `models.json`. */
export const PROVIDER = "local";
export const MODEL_ID = "claude-local";

/** The tools the coding agent gets (all run in-process or through bash; none downloads). */
const TOOLS = "read,bash,ls";

/** A JSON value as the coding agent writes it. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** One temporary workspace for one run. */
export interface Workspace {
	/** The temp root; everything below is inside it. */
	root: string;
	/** `PI_CODING_AGENT_DIR`: `models.json`, `settings.json`. */
	agentDir: string;
	/** The agent's working directory (where its tools act). */
	cwd: string;
	/** `--session-dir`. */
	sessionDir: string;
	/** `HOME`, empty, so nothing of the real user's config is read. */
	home: string;
}

export interface WorkspaceOptions {
	/** Files to create in the working directory, by relative path. */
	files?: Record<string, string>;
	/** `settings.json` contents (merged over the defaults below). */
	settings?: JsonObject;
	/** Fields merged over the local model's declaration (`reasoning`, `input`, ...). */
	model?: JsonObject;
}

/**
 * Creates a workspace whose `models.json` points the `local` provider at `baseUrl`.
 *
 * @example
 * const ws = await createWorkspace(server.baseUrl, { files: { "a.txt": "alpha\n" } });
 */
export async function createWorkspace(baseUrl: string, options: WorkspaceOptions = {}): Promise<Workspace> {
	// realpath: on some systems tmpdir() is a symlink, and the agent reports real paths.
	const root = await realpath(await mkdtemp(join(tmpdir(), "agentchart-coding-agent-")));
	const ws: Workspace = {
		root,
		agentDir: join(root, "agent"),
		cwd: join(root, "work"),
		sessionDir: join(root, "sessions"),
		home: join(root, "home"),
	};
	for (const dir of [ws.agentDir, ws.cwd, ws.sessionDir, ws.home]) await mkdir(dir, { recursive: true });
	const models = {
		providers: {
			[PROVIDER]: {
				baseUrl,
				api: "anthropic-messages",
				apiKey: "test-key",
				models: [
					{
						id: MODEL_ID,
						name: "Local Claude",
						reasoning: false,
						input: ["text"],
						contextWindow: 200000,
						maxTokens: 8192,
						cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
						...options.model,
					},
				],
			},
		},
	};
	await writeFile(join(ws.agentDir, "models.json"), JSON.stringify(models, null, 2));
	const settings: JsonObject = { enableInstallTelemetry: false, ...options.settings };
	await writeFile(join(ws.agentDir, "settings.json"), JSON.stringify(settings, null, 2));
	for (const [path, content] of Object.entries(options.files ?? {})) {
		await writeFile(join(ws.cwd, path), content);
	}
	return ws;
}

/** The environment of a child: minimal and fixed, so both engines see the same one. */
function childEnv(engine: Engine, ws: Workspace): NodeJS.ProcessEnv {
	return {
		PATH: process.env["PATH"] ?? "/usr/bin:/bin",
		HOME: ws.home,
		TZ: "UTC",
		LANG: "C.UTF-8",
		PI_CODING_AGENT_DIR: ws.agentDir,
		PI_OFFLINE: "1",
		PI_TELEMETRY: "0",
		PI_SKIP_VERSION_CHECK: "1",
		NO_COLOR: "1",
		...engineLaunch(engine).env,
	};
}

/** CLI arguments common to every mode: the model, the tools, and no discovery of resources. */
function baseArgs(ws: Workspace): string[] {
	return [
		"--provider",
		PROVIDER,
		"--model",
		MODEL_ID,
		"--tools",
		TOOLS,
		"--session-dir",
		ws.sessionDir,
		"--offline",
		"--no-extensions",
		"--no-skills",
		"--no-prompt-templates",
		"--no-themes",
		"--no-context-files",
	];
}

/** A started child process with its output collected. */
export interface CliProcess {
	child: ChildProcessWithoutNullStreams;
	/** Resolves when the process exits (or is killed). */
	exited: Promise<CliExit>;
	/** Kills the process group now (no-op once exited). */
	kill(): void;
}

export interface CliExit {
	code: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
	/** True when the hard timeout killed it. */
	timedOut: boolean;
}

/** Every child still running, with its workspace root, so teardown can kill them. */
const running = new Map<CliProcess, string>();

/**
 * Starts the coding agent CLI on `engine` with `args` (after the common ones).
 *
 * @example
 * const cli = startCli("pi", ws, ["-p", "hello"], 10_000);
 * const { stdout } = await cli.exited;
 */
export function startCli(engine: Engine, ws: Workspace, args: string[], timeoutMs: number): CliProcess {
	const { execArgv } = engineLaunch(engine);
	const child = spawn(process.execPath, [...execArgv, CODING_AGENT_CLI, ...baseArgs(ws), ...args], {
		cwd: ws.cwd,
		env: childEnv(engine, ws),
		stdio: ["pipe", "pipe", "pipe"],
		// Its own process group, killed as a whole. (Its bash tool puts each shell in a group of
		// its own; the scenarios' shell loops are bounded, so none outlives a test for long.)
		detached: true,
	});
	const out: Buffer[] = [];
	const err: Buffer[] = [];
	child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
	child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
	let timedOut = false;
	let exited = false;
	const killGroup = () => {
		if (exited || child.pid === undefined) return;
		try {
			process.kill(-child.pid, "SIGKILL");
		} catch {
			child.kill("SIGKILL");
		}
	};
	const timer = setTimeout(() => {
		timedOut = true;
		killGroup();
	}, timeoutMs);
	const cli: CliProcess = {
		child,
		kill: killGroup,
		exited: new Promise<CliExit>((resolve) => {
			child.on("close", (code, signal) => {
				exited = true;
				clearTimeout(timer);
				running.delete(cli);
				resolve({
					code,
					signal,
					stdout: Buffer.concat(out).toString("utf8"),
					stderr: Buffer.concat(err).toString("utf8"),
					timedOut,
				});
			});
		}),
	};
	running.set(cli, ws.root);
	// Print mode reads piped stdin until it ends (and appends it to the prompt); only RPC talks.
	if (!args.includes("rpc")) child.stdin.end();
	return cli;
}

/** Kills every child still running (of one workspace, or all of them). */
export function killAllChildren(ws?: Workspace): void {
	for (const [cli, root] of running) if (!ws || root === ws.root) cli.kill();
}

/** Parses JSON lines (LF-separated, as pi writes them), skipping blank ones. */
export function parseJsonLines(text: string): JsonObject[] {
	return text
		.split("\n")
		.filter((line) => line.trim() !== "")
		.map((line) => JSON.parse(line) as JsonObject);
}

/** The session files the run wrote, each as its parsed lines, in file-name order. */
export async function readSessions(ws: Workspace): Promise<JsonObject[][]> {
	const files = (await readdir(ws.sessionDir, { recursive: true })).filter((name) => name.endsWith(".jsonl")).sort();
	return Promise.all(files.map(async (name) => parseJsonLines(await readFile(join(ws.sessionDir, name), "utf8"))));
}

/**
 * A JSON-lines conversation with `--mode rpc`: send commands, wait for records.
 *
 * @example
 * const rpc = new RpcClient(startCli("pi", ws, ["--mode", "rpc"], 10_000));
 * rpc.send({ type: "prompt", message: "hi" });
 * await rpc.waitFor((r) => r["type"] === "agent_end");
 */
export class RpcClient {
	/** Every record received, in order. */
	readonly records: JsonObject[] = [];
	private buffer = "";
	private waiters: Array<{ test: (record: JsonObject) => boolean; resolve: (record: JsonObject) => void; reject: (error: Error) => void }> = [];
	private exitedEarly = false;

	constructor(readonly cli: CliProcess) {
		cli.child.stdout.on("data", (chunk: Buffer) => this.receive(chunk.toString("utf8")));
		void cli.exited.then((exit) => {
			this.exitedEarly = true;
			const error = new Error(`RPC: the agent exited (code ${exit.code}, signal ${exit.signal}) while waiting; stderr: ${exit.stderr.slice(0, 2000)}`);
			for (const waiter of this.waiters.splice(0)) waiter.reject(error);
		});
	}

	/** Writes one command line. */
	send(command: JsonObject): void {
		this.cli.child.stdin.write(`${JSON.stringify(command)}\n`);
	}

	/**
	 * Resolves with the first record (already received or future) that passes `test`, counting
	 * from record index `from`. Rejects after `timeoutMs`, or when the agent exits first.
	 */
	waitFor(test: (record: JsonObject) => boolean, timeoutMs = 20_000, from = 0): Promise<JsonObject> {
		const seen = this.records.slice(from).find(test);
		if (seen) return Promise.resolve(seen);
		if (this.exitedEarly) return Promise.reject(new Error("RPC: the agent has exited"));
		return new Promise<JsonObject>((resolve, reject) => {
			const timer = setTimeout(() => {
				this.waiters = this.waiters.filter((w) => w !== waiter);
				reject(new Error(`RPC: no matching record within ${timeoutMs} ms; got ${this.records.map(describe).join(", ")}`));
			}, timeoutMs);
			const waiter = {
				test,
				resolve: (record: JsonObject) => {
					clearTimeout(timer);
					resolve(record);
				},
				reject: (error: Error) => {
					clearTimeout(timer);
					reject(error);
				},
			};
			this.waiters.push(waiter);
		});
	}

	/** The `response` record for a command type (the n-th, from 0). */
	waitForResponse(command: string, nth = 0, timeoutMs = 20_000): Promise<JsonObject> {
		let count = 0;
		return this.waitFor((r) => r["type"] === "response" && r["command"] === command && count++ === nth, timeoutMs);
	}

	/** Closes stdin (the agent shuts down) and waits for the exit. */
	async close(): Promise<CliExit> {
		this.cli.child.stdin.end();
		return this.cli.exited;
	}

	private receive(text: string): void {
		this.buffer += text;
		let newline = this.buffer.indexOf("\n");
		while (newline !== -1) {
			const line = this.buffer.slice(0, newline).replace(/\r$/, "");
			this.buffer = this.buffer.slice(newline + 1);
			if (line.trim() !== "") this.accept(JSON.parse(line) as JsonObject);
			newline = this.buffer.indexOf("\n");
		}
	}

	private accept(record: JsonObject): void {
		this.records.push(record);
		for (const waiter of [...this.waiters]) {
			if (waiter.test(record)) {
				this.waiters = this.waiters.filter((w) => w !== waiter);
				waiter.resolve(record);
			}
		}
	}
}

/** A short label for a record: its type, plus the command of a response. */
export function describe(record: JsonObject): string {
	const type = String(record["type"]);
	if (type === "response") return `response:${String(record["command"])}`;
	return type;
}

/** One engine's run of one scenario: a server, a workspace, and cleanup. */
export interface RunContext {
	engine: Engine;
	server: AnthropicTestServer;
	ws: Workspace;
}

/**
 * Starts a server scripted with `responses` and a workspace, runs `body`, and always cleans up
 * (children killed, server closed, temp dir removed).
 */
export async function withRun<T>(
	engine: Engine,
	responses: ScriptedResponse[],
	options: WorkspaceOptions,
	body: (run: RunContext) => Promise<T>,
): Promise<T> {
	const server = await startAnthropicServer();
	server.respond(...responses);
	const ws = await createWorkspace(server.baseUrl, options);
	try {
		return await body({ engine, server, ws });
	} finally {
		killAllChildren(ws);
		await server.close();
		await rm(ws.root, { recursive: true, force: true });
	}
}
