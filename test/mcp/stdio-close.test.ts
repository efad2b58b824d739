/**
 * Ending a stdio server, against one that does not want to end (`fixtures/stubborn-server.ts`:
 * it ignores the end of its input and SIGTERM, has a child that ignores SIGTERM, and runs behind
 * `sh -c`): `close()` ends the whole process tree, calls in flight fail at once when it is
 * called, a server that exits leaving its child behind is still seen as lost, and an
 * application that exits without closing takes the servers with it. Every test checks, by pid,
 * that no process it caused is left.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { connectMcpServers, type McpServers } from "../../src/mcp/index.js";
import { loadMcpSdk } from "../../src/mcp/sdk.js";
import { McpSession } from "../../src/mcp/session.js";
import { ProcessGroupStdioTransport } from "../../src/mcp/stdio-transport.js";
import { childPids, Cleanup, exists, killIfAlive, readServerPids, stubbornServer, toolNamed, waitUntil, withTimeout } from "./helpers.js";

const sdk = await loadMcpSdk();

const SESSION_HOST = fileURLToPath(new URL("./fixtures/session-host.ts", import.meta.url));

const cleanup = new Cleanup();
/** Every pid a test learned of; killed after it, whatever happened. */
let pids: number[] = [];
let pidFile = "";

afterEach(async () => {
	// Read before the cleanup removes the file.
	if (pidFile !== "" && existsSync(pidFile)) {
		const recorded = readServerPids(pidFile);
		pids.push(recorded.server, recorded.child);
	}
	await cleanup.run();
	killIfAlive(pids);
	pids = [];
	pidFile = "";
	await waitUntil(() => childPids().length === 0, 10_000, "every process the test started to exit");
});

function newPidFile(): string {
	const dir = mkdtempSync(join(tmpdir(), "agentchart-mcp-close-"));
	cleanup.add(async () => rmSync(dir, { recursive: true, force: true }));
	pidFile = join(dir, "pids.json");
	return pidFile;
}

function openSession(flags: string[] = []): McpSession {
	const session = new McpSession("stubborn", stubbornServer(newPidFile(), flags), sdk);
	cleanup.add(() => session.close());
	return session;
}

/** The session's own process (the shell), the server under it and the server's child. */
function treeOf(session: McpSession): number[] {
	const { server, child } = readServerPids(pidFile);
	const shell = session.pid;
	if (shell === undefined) throw new Error("the session has no process");
	pids.push(shell, server, child);
	return [shell, server, child];
}

function waitForGone(tree: readonly number[]): Promise<void> {
	return waitUntil(() => tree.every((pid) => !exists(pid)), 10_000, `processes ${tree.join(", ")} to be gone`);
}

/** Starts a `slow` call and resolves once the server has it (its first progress notification). */
async function callInFlight(session: McpSession): Promise<{ call: Promise<unknown> }> {
	let arrived!: () => void;
	const reached = new Promise<void>((resolve) => (arrived = resolve));
	const call = session.callTool("slow", { ms: 60_000 }, { onProgress: () => arrived() });
	call.catch(() => undefined);
	await withTimeout(reached, 10_000, "the call to reach the server");
	return { call };
}

/** The error `call` fails with (an Error if it succeeds), and whether `server` still ran when it failed. */
function failureOf(call: Promise<unknown>, server: number): { failure: Promise<unknown>; serverRan: () => boolean | undefined } {
	let ran: boolean | undefined;
	const failure = call.then(
		() => new Error("the call succeeded"),
		(error: unknown) => {
			ran = exists(server);
			return error;
		},
	);
	return { failure, serverRan: () => ran };
}

describe("close() of a stdio session", () => {
	it("ends the whole process tree of a wrapped server that ignores the end of its input and SIGTERM", async () => {
		const listeners = () => ["exit", "removeListener", "SIGINT", "SIGTERM", "SIGHUP"].map((event) => process.listenerCount(event));
		const before = listeners();
		const session = openSession();
		await session.connect(AbortSignal.timeout(20_000));
		const tree = treeOf(session);
		expect(tree.every(exists)).toBe(true);
		await withTimeout(session.close(), 20_000, "close()");
		await waitForGone(tree);
		expect(session.isClosed).toBe(true);
		// The hooks that end live servers when this process ends go with the last of them.
		expect(listeners()).toEqual(before);
	});

	it("fails a call in flight at once, saying the session was closed, while the server is still running", async () => {
		const session = openSession();
		await session.connect(AbortSignal.timeout(20_000));
		const tree = treeOf(session);
		const server = tree[1]!;
		const { call } = await callInFlight(session);
		const { failure, serverRan } = failureOf(call, server);
		const closing = session.close();
		expect(String(await withTimeout(failure, 10_000, "the call to fail"))).toMatch(/the MCP session with server "stubborn" was closed by the application/);
		expect(serverRan()).toBe(true);
		await withTimeout(closing, 20_000, "close()");
		await waitForGone(tree);
	});

	it("fails a tool call in flight at once through McpServers.close(), naming the server", async () => {
		const mcp: McpServers = await connectMcpServers({ servers: { stubborn: stubbornServer(newPidFile()) }, onProblem: () => undefined });
		cleanup.add(() => mcp.close());
		const shell = mcp.status()[0]?.pid;
		const { server, child } = readServerPids(pidFile);
		pids.push(shell!, server, child);
		let arrived!: () => void;
		const reached = new Promise<void>((resolve) => (arrived = resolve));
		const call = toolNamed(mcp, "stubborn__slow").execute("c1", { ms: 60_000 }, undefined, () => arrived());
		call.catch(() => undefined);
		await withTimeout(reached, 10_000, "the call to reach the server");
		const { failure, serverRan } = failureOf(call, server);
		const closing = mcp.close();
		expect(String(await withTimeout(failure, 10_000, "the call to fail"))).toContain(
			'MCP server "stubborn" was closed by the application during the call (close()); the tool may or may not have run',
		);
		expect(serverRan()).toBe(true);
		await withTimeout(closing, 20_000, "close()");
		await waitForGone([shell!, server, child]);
	});

	it("during the handshake ends connect() at once with the same error, and the process tree", async () => {
		const session = openSession(["--silent"]);
		const connecting = session.connect(new AbortController().signal);
		connecting.catch(() => undefined);
		await waitUntil(() => existsSync(pidFile), 10_000, "the server to start");
		const tree = treeOf(session);
		let serverRanWhenConnectFailed: boolean | undefined;
		const failure = connecting.then(
			() => new Error("connect() succeeded"),
			(error: unknown) => {
				serverRanWhenConnectFailed = exists(tree[1]!);
				return error;
			},
		);
		const closing = session.close();
		expect(String(await withTimeout(failure, 10_000, "connect() to fail"))).toMatch(/was closed by the application/);
		expect(serverRanWhenConnectFailed).toBe(true);
		await withTimeout(closing, 20_000, "close()");
		await waitForGone(tree);
	});

	it("before connect() means connect() starts no process", async () => {
		const session = openSession();
		await session.close();
		await expect(session.connect(new AbortController().signal)).rejects.toThrow(/was closed by the application/);
		expect(childPids()).toEqual([]);
		expect(existsSync(pidFile)).toBe(false);
	});

	it("twice at once ends the tree once, and both calls resolve", async () => {
		const session = openSession();
		await session.connect(AbortSignal.timeout(20_000));
		const tree = treeOf(session);
		const first = session.close();
		const second = session.close();
		expect(second).toBe(first);
		await withTimeout(Promise.all([first, second]), 20_000, "both close() calls");
		await waitForGone(tree);
	});
});

describe("a stdio server that exits by itself", () => {
	it("is seen as lost mid-call though its child still holds its output, and close() ends the child", async () => {
		const session = openSession(["--child-holds-output"]);
		await session.connect(AbortSignal.timeout(20_000));
		const [shell, server, child] = treeOf(session);
		await expect(withTimeout(session.callTool("crash", {}), 10_000, "the crashing call")).rejects.toThrow(/Connection closed/);
		expect(session.isLost).toBe(true);
		expect(exists(server!)).toBe(false);
		expect(exists(child!)).toBe(true);
		await withTimeout(session.close(), 20_000, "close()");
		await waitForGone([shell!, server!, child!]);
	});
});

/** Whether this process may choose the next pid (Linux, root): a test can then make a pid be reused at once. */
function canChooseNextPid(): boolean {
	try {
		accessSync("/proc/sys/kernel/ns_last_pid", constants.W_OK);
		return true;
	} catch {
		return false;
	}
}

/** Starts a process-group leader that does nothing, as `pid`; undefined if another process took that pid first. */
function startLeaderWithPid(pid: number): ChildProcess | undefined {
	for (let attempt = 0; attempt < 20; attempt++) {
		writeFileSync("/proc/sys/kernel/ns_last_pid", String(pid - 1));
		const leader = spawn("sleep", ["60"], { detached: true, stdio: "ignore" });
		if (leader.pid === pid) return leader;
		leader.kill("SIGKILL");
	}
	return undefined;
}

describe("a stdio server whose process group has ended", () => {
	it.skipIf(!canChooseNextPid())("is not signalled again by close(): its group id may now be another process's group", async () => {
		const transport = new ProcessGroupStdioTransport(sdk, { command: "sh", args: ["-c", "exit 0"], onStderr: () => undefined });
		const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
		await transport.start();
		const pgid = (transport as unknown as { child: ChildProcess }).child.pid!;
		await withTimeout(closed, 10_000, "the server to exit by itself");
		const other = startLeaderWithPid(pgid);
		if (!other) throw new Error(`pid ${pgid} could not be made to be reused`);
		pids.push(pgid);
		const otherExit = new Promise<NodeJS.Signals | null>((resolve) => other.once("exit", (_code, signal) => resolve(signal)));
		await withTimeout(transport.close(), 20_000, "close()");
		expect(other.exitCode).toBe(null);
		expect(other.signalCode).toBe(null);
		other.kill("SIGKILL");
		expect(await otherExit).toBe("SIGKILL");
	});
});

describe("an application that ends without closing its session", () => {
	/** Runs `session-host.ts` in `mode`; resolves with it once its session is connected. */
	async function startHost(
		mode: "exit" | "wait" | "handle-sigint" | "once-sigint" | "reraise-sigint" | "signal-exit-3" | "signal-exit-4" | "signal-exit-4-takeover" | "second-copy",
	): Promise<{ host: ChildProcess; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>; shell: number; lines: string[] }> {
		const host = spawn(process.execPath, ["--import", "tsx", SESSION_HOST, newPidFile(), mode], { stdio: ["ignore", "pipe", "inherit"] });
		pids.push(host.pid!);
		const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => host.once("exit", (code, signal) => resolve({ code, signal })));
		const lines: string[] = [];
		const ready = new Promise<number>((resolve, reject) => {
			const output = createInterface({ input: host.stdout! });
			output.on("line", (line) => lines.push(line));
			output.once("line", (line) => resolve((JSON.parse(line) as { pid: number }).pid));
			host.once("exit", (code, signal) => reject(new Error(`the host exited (${code ?? signal}) before its session was connected`)));
		});
		const shell = await withTimeout(ready, 20_000, "the host's session to connect");
		pids.push(shell);
		return { host, exited, shell, lines };
	}

	it("takes the server's process tree with it when it calls process.exit()", async () => {
		const { exited, shell } = await startHost("exit");
		expect(await withTimeout(exited, 10_000, "the host to exit")).toEqual({ code: 0, signal: null });
		const { server, child } = readServerPids(pidFile);
		await waitForGone([shell, server, child]);
	});

	it("takes it with it when SIGINT ends it (no handler of its own), and still dies of SIGINT", async () => {
		const { host, exited, shell } = await startHost("wait");
		const { server, child } = readServerPids(pidFile);
		host.kill("SIGINT");
		expect(await withTimeout(exited, 10_000, "the host to exit")).toEqual({ code: null, signal: "SIGINT" });
		await waitForGone([shell, server, child]);
	});

	it("leaves SIGINT to its own handler: the server still answers there, and its close() ends the tree", async () => {
		const { host, exited, shell } = await startHost("handle-sigint");
		const { server, child } = readServerPids(pidFile);
		host.kill("SIGINT");
		expect(await withTimeout(exited, 20_000, "the host to exit")).toEqual({ code: 130, signal: null });
		await waitForGone([shell, server, child]);
	});

	it("takes it with it when a second SIGINT ends it, after a handler of its own (process.once) took the first", async () => {
		const { host, exited, shell, lines } = await startHost("once-sigint");
		const { server, child } = readServerPids(pidFile);
		host.kill("SIGINT");
		await waitUntil(() => lines.includes(JSON.stringify({ handled: "SIGINT" })), 10_000, "the host to handle the first SIGINT");
		expect([shell, server, child].every(exists)).toBe(true);
		host.kill("SIGINT");
		expect(await withTimeout(exited, 10_000, "the host to exit")).toEqual({ code: null, signal: "SIGINT" });
		await waitForGone([shell, server, child]);
	});

	it("takes it with it when its own SIGINT handler (process.once) sends SIGINT again to die of it", async () => {
		const { host, exited, shell, lines } = await startHost("reraise-sigint");
		const { server, child } = readServerPids(pidFile);
		host.kill("SIGINT");
		expect(await withTimeout(exited, 10_000, "the host to exit")).toEqual({ code: null, signal: "SIGINT" });
		expect(lines).toContain(JSON.stringify({ handled: "SIGINT" }));
		await waitForGone([shell, server, child]);
	});

	// signal-exit (3 and 4 differ in how they count each other's listeners) removes its listeners
	// and re-raises the signal in one go; its exit callback runs first, with the servers still up.
	describe.each([3, 4] as const)("with signal-exit %i loaded (no handler of its own)", (major) => {
		it.each(["SIGINT", "SIGTERM", "SIGHUP"] as const)("takes it with it when %s ends it through signal-exit's re-raise", async (signal) => {
			const { host, exited, shell, lines } = await startHost(`signal-exit-${major}`);
			const { server, child } = readServerPids(pidFile);
			host.kill(signal);
			expect(await withTimeout(exited, 10_000, "the host to exit")).toEqual({ code: null, signal });
			expect(lines.slice(1)).toEqual([JSON.stringify({ exitCallback: signal, serverRan: true })]);
			await waitForGone([shell, server, child]);
		});
	});

	it("takes both copies' servers with it when SIGTERM ends it with two copies of the hook loaded (two agentchart versions)", async () => {
		const { host, exited, shell, lines } = await startHost("second-copy");
		const { server, child } = readServerPids(pidFile);
		await waitUntil(() => lines.length > 1, 10_000, "the second copy's process group");
		const { group } = JSON.parse(lines[1]!) as { group: number };
		pids.push(group);
		expect(exists(group)).toBe(true);
		host.kill("SIGTERM");
		expect(await withTimeout(exited, 10_000, "the host to exit")).toEqual({ code: null, signal: "SIGTERM" });
		await waitForGone([shell, server, child, group]);
	});

	it("leaves SIGINT to a signal-exit 4 exit callback that takes over: the server still answers there, and its close() ends the tree", async () => {
		const { host, exited, shell } = await startHost("signal-exit-4-takeover");
		const { server, child } = readServerPids(pidFile);
		host.kill("SIGINT");
		expect(await withTimeout(exited, 20_000, "the host to exit")).toEqual({ code: 130, signal: null });
		await waitForGone([shell, server, child]);
	});
});
