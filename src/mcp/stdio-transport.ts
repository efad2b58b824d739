/**
 * The stdio transport of an MCP session: the server as a child process, spoken to over its stdin
 * and stdout, one JSON-RPC message a line.
 *
 * The SDK's `StdioClientTransport` signals only the process it started. A server started through
 * a wrapper (`sh -c "node server.js"`, `npx`, `uv run`) or one with children of its own is a
 * process tree, and when its real process ignores the end of its input and SIGTERM, the SDK's
 * close leaves it running. So on POSIX the server runs as the leader of a process group of its
 * own, and close ends the group: input closed, a grace, SIGTERM to the group, a grace, SIGKILL to
 * the group (the MCP specification's order). Windows has no process groups to signal: there the
 * SDK's transport is used as it is (it also resolves `npx.cmd` and the like).
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { existsSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { invalidAnswerFor } from "./invalid-response.js";
import { signalProcessGroup, trackProcessGroup } from "./process-groups.js";
import type { McpSdk } from "./sdk.js";

/** What the stdio transports take from the SDK (loaded by the caller: see `loadMcpSdk`). */
export type StdioSdk = Pick<McpSdk, "getDefaultEnvironment" | "deserializeMessage" | "serializeMessage" | "StdioClientTransport">;

/** What starts a stdio server. */
export interface StdioServerParameters {
	command: string;
	args: readonly string[];
	/** Added to the safe part of this process's environment that the SDK passes (`getDefaultEnvironment`). */
	env?: Readonly<Record<string, string>> | undefined;
	cwd?: string | undefined;
	/** Given everything the server writes on stderr, as it arrives. */
	onStderr(text: string): void;
}

/** An MCP transport to a server process. */
export interface StdioProcessTransport extends Transport {
	/** The process started (on POSIX the leader of the server's process group) while it runs; null before and after. */
	readonly pid: number | null;
	/** Why the transport ended the server itself (a message over the size limit), when it did. */
	readonly failure?: string | undefined;
}

/**
 * The longest message (one line) a server may send: 64 MiB. A screenshot or a document as an
 * image or an embedded resource is base64 (a third larger) inside JSON, and the SDK's own 10 MiB
 * limit ended the connection for a 7.5 MB image. The limit stays, so that a server writing
 * without newlines cannot take all of this process's memory.
 */
export const MAX_STDIO_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * Node reports a working directory that does not exist as the command not found (`spawn node
 * ENOENT`), which sends the reader after the wrong setting: said as it is when that is the case.
 */
function cwdMissing(error: Error, command: string, cwd: string | undefined): Error | undefined {
	if (cwd === undefined || (error as NodeJS.ErrnoException).code !== "ENOENT" || existsSync(cwd)) return undefined;
	return new Error(`the server's working directory (cwd) ${JSON.stringify(cwd)} does not exist, so ${JSON.stringify(command)} could not be started`, { cause: error });
}

/** How long each step of ending a server waits. */
interface ShutdownTiming {
	/** After the input is closed, before SIGTERM (the SDK waits 2 s too). */
	inputClosedGraceMs: number;
	/** After SIGTERM, before SIGKILL. */
	terminateGraceMs: number;
	/** After SIGKILL: what is left then is a zombie nobody reaps, or a process stuck in the kernel; close() stops waiting. */
	killWaitMs: number;
	/** After the process exited by itself, how long a child that inherited its output may keep it open before the transport counts as closed. */
	outputDrainMs: number;
}

const TIMING: ShutdownTiming = { inputClosedGraceMs: 2000, terminateGraceMs: 2000, killWaitMs: 2000, outputDrainMs: 500 };
/** How often close() checks whether the group has ended: no event tells when a grandchild exits. */
const GROUP_POLL_MS = 25;

type ServerProcess = ChildProcessByStdio<Writable, Readable, Readable>;

function asError(error: unknown): Error {
	return error instanceof Error ? error : new Error(String(error));
}

/** The line's array, when it is a JSON array (of anything). */
function parsedArray(line: string): unknown[] | undefined {
	try {
		const parsed: unknown = JSON.parse(line);
		return Array.isArray(parsed) ? parsed : undefined;
	} catch {
		return undefined;
	}
}

function delay(ms: number): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A stdio transport that owns the server's whole process tree (POSIX). It implements the SDK's
 * `Transport`, so an SDK `Client` connects over it as over the SDK's own.
 *
 * - `start()` starts the server as a process group leader (`detached`), with the SDK's safe
 *   environment plus `env`, and stderr piped to `onStderr`. A transport closed before it
 *   started refuses to start: nothing may outlive a close.
 * - `onclose` fires once: when the server process has exited and its output is read, or when a
 *   child that inherited the output still holds it `outputDrainMs` after the server exited (the
 *   server is gone; waiting for its child could take for ever), or when close() is done.
 * - Each line of the server's output is one message, at most `maxMessageBytes` long (default
 *   {@link MAX_STDIO_MESSAGE_BYTES}); a longer one ends the server, with `failure` saying why.
 * - `close()` ends the group: input closed, then SIGTERM, then SIGKILL, each after a grace, and
 *   resolves once no process of the group is left (after SIGKILL, it waits `killWaitMs` at
 *   most). It returns the same promise every time.
 *
 * @example
 * const sdk = await loadMcpSdk();
 * const transport = new ProcessGroupStdioTransport(sdk, { command: "sh", args: ["-c", "node server.js"], onStderr: (text) => process.stderr.write(text) });
 * const client = new sdk.Client({ name: "app", version: "1.0.0" });
 * await client.connect(transport);
 * await client.close(); // ends sh, node, and whatever node started
 */
export class ProcessGroupStdioTransport implements StdioProcessTransport {
	onclose?: Transport["onclose"];
	onerror?: Transport["onerror"];
	onmessage?: Transport["onmessage"];

	private child: ServerProcess | undefined;
	/** The start of a message whose newline has not arrived, in chunks: joined once, when it has. */
	private pending: Buffer[] = [];
	private pendingBytes = 0;
	private failureReason: string | undefined;
	private leaderExited = false;
	/**
	 * True once the group was seen gone. Its id is then free for the kernel to give to a new
	 * process, which may lead a group of its own: nothing may be sent to that id after this.
	 */
	private groupGone = false;
	/** True once `onclose` has fired: nothing is delivered after it. */
	private ended = false;
	private closing: Promise<void> | undefined;
	private untrack: (() => void) | undefined;
	private drainTimer: ReturnType<typeof setTimeout> | undefined;
	private outputEndTimer: ReturnType<typeof setTimeout> | undefined;

	constructor(
		private readonly sdk: StdioSdk,
		private readonly parameters: StdioServerParameters,
		private readonly maxMessageBytes = MAX_STDIO_MESSAGE_BYTES,
	) {}

	get failure(): string | undefined {
		return this.failureReason;
	}

	get pid(): number | null {
		return this.child?.pid !== undefined && !this.leaderExited ? this.child.pid : null;
	}

	start(): Promise<void> {
		if (this.closing) return Promise.reject(new Error("the stdio transport was closed before it was started"));
		if (this.child) return Promise.reject(new Error("the stdio transport is already started"));
		const { command, args, env, cwd, onStderr } = this.parameters;
		const child = spawn(command, [...args], {
			env: { ...this.sdk.getDefaultEnvironment(), ...env },
			...(cwd !== undefined ? { cwd } : {}),
			stdio: ["pipe", "pipe", "pipe"],
			// setsid(): the server leads a process group, and everything it starts joins it.
			detached: true,
			shell: false,
		});
		this.child = child;
		// The pid is known as soon as spawn() returns (undefined when it failed, ENOENT say).
		if (child.pid !== undefined) this.untrack = trackProcessGroup(child.pid, () => child.stdin.destroy());
		child.stdout.on("data", (chunk: Buffer) => this.receive(chunk));
		child.stdout.on("error", (error) => this.onerror?.(error));
		// A server that closes its output and keeps running can never answer again: ended as lost.
		// Its output also ends as it exits, just before the exit is seen, so the exit gets a moment first.
		child.stdout.once("end", () => {
			this.outputEndTimer = setTimeout(() => this.outputClosed(), TIMING.outputDrainMs);
			this.outputEndTimer.unref();
		});
		// EPIPE when the server is gone: reported; the exit that follows closes the transport.
		child.stdin.on("error", (error) => this.onerror?.(error));
		child.stderr.setEncoding("utf8");
		child.stderr.on("data", (text: string) => onStderr(text));
		child.stderr.on("error", (error) => this.onerror?.(error));
		child.once("exit", () => {
			this.leaderExited = true;
			clearTimeout(this.outputEndTimer);
			if (this.closing) return;
			this.drainTimer = setTimeout(() => this.end(), TIMING.outputDrainMs);
			this.drainTimer.unref();
		});
		child.once("close", () => {
			// Ended by itself, leaving no child behind: nothing is left for close() or the exit hook to end.
			if (child.pid !== undefined && this.groupIsGone(child.pid)) this.untrack?.();
			this.end();
		});
		return new Promise((resolve, reject) => {
			let spawned = false;
			child.once("spawn", () => {
				spawned = true;
				resolve();
			});
			child.on("error", (error) => {
				if (!spawned) reject(cwdMissing(error, command, cwd) ?? error);
				this.onerror?.(error);
			});
		});
	}

	send(message: JSONRPCMessage): Promise<void> {
		const stdin = this.child?.stdin;
		if (!stdin || this.closing || this.ended || !stdin.writable) return Promise.reject(new Error("Not connected"));
		// Resolves once written (or refused), so a full pipe holds the sender back.
		return new Promise((resolve, reject) => {
			stdin.write(this.sdk.serializeMessage(message), (error) => (error ? reject(error) : resolve()));
		});
	}

	close(): Promise<void> {
		this.closing ??= this.shutDown();
		return this.closing;
	}

	/**
	 * Splits the output into lines, one JSON-RPC message each. Not the SDK's ReadBuffer: it joins
	 * the whole buffer again for every chunk (seconds for a message of a few megabytes) and allows
	 * 10 MiB (see `MAX_STDIO_MESSAGE_BYTES`).
	 */
	private receive(chunk: Buffer): void {
		let start = 0;
		while (!this.ended && !this.failureReason) {
			const newline = chunk.indexOf(0x0a, start);
			const piece = chunk.subarray(start, newline === -1 ? chunk.length : newline);
			if (this.pendingBytes + piece.length > this.maxMessageBytes) {
				this.overflow();
				return;
			}
			if (newline === -1) {
				if (piece.length > 0) {
					this.pending.push(piece);
					this.pendingBytes += piece.length;
				}
				return;
			}
			const line = this.pending.length === 0 ? piece : Buffer.concat([...this.pending, piece]);
			this.pending = [];
			this.pendingBytes = 0;
			start = newline + 1;
			this.deliver(line.toString("utf8").replace(/\r$/, ""));
		}
	}

	private deliver(line: string): void {
		if (line.trim() === "") return;
		// A batch (JSON-RPC 2.0, and MCP's 2025-03-26 revision) is its messages, each read as a line
		// of its own; one level only (a batch in a batch is no message, and a line of nested
		// brackets must not recurse through this process's stack).
		if (line.trimStart().startsWith("[")) {
			const batch = parsedArray(line);
			if (batch) {
				for (const message of batch) {
					if (Array.isArray(message)) this.onerror?.(new Error("the server sent a batch inside a batch, which is no JSON-RPC message; it was skipped"));
					else this.deliverOne(JSON.stringify(message));
				}
				return;
			}
		}
		this.deliverOne(line);
	}

	private deliverOne(line: string): void {
		let message: JSONRPCMessage;
		try {
			message = this.sdk.deserializeMessage(line);
		} catch (error) {
			// A line that is not a message (a log line on stdout): report it and go on with the next one.
			this.onerror?.(asError(error));
			// But an answer to a request, malformed, fails that request instead of leaving it waiting.
			const answer = invalidAnswerFor(line);
			if (answer) this.onmessage?.(answer);
			return;
		}
		this.onmessage?.(message);
	}

	/** A message over the limit: the stream can no longer be framed, so the server is ended, saying why. */
	private overflow(): void {
		this.pending = [];
		this.pendingBytes = 0;
		const mib = 1024 * 1024;
		const limit = this.maxMessageBytes % mib === 0 ? `${this.maxMessageBytes / mib} MiB` : `${this.maxMessageBytes} bytes`;
		this.failureReason = `the server sent a message of more than ${limit} (the most one stdio message may bring); the connection was closed`;
		this.onerror?.(new Error(this.failureReason));
		void this.close();
	}

	/** The server's output ended while it still runs (see `start`). */
	private outputClosed(): void {
		if (this.leaderExited || this.closing || this.ended || this.failureReason) return;
		this.failureReason = `the server closed its output (stdout) and had not exited ${TIMING.outputDrainMs} ms later: it could not answer again, so the connection was closed`;
		this.onerror?.(new Error(this.failureReason));
		void this.close();
	}

	private end(): void {
		if (this.ended) return;
		this.ended = true;
		clearTimeout(this.drainTimer);
		clearTimeout(this.outputEndTimer);
		this.pending = [];
		this.pendingBytes = 0;
		this.onclose?.();
	}

	private async shutDown(): Promise<void> {
		const child = this.child;
		try {
			const pgid = child?.pid;
			if (child === undefined || pgid === undefined || this.groupGone) return;
			// The end of its input is how MCP asks a stdio server to stop.
			child.stdin.end();
			if (await this.groupEnded(pgid, TIMING.inputClosedGraceMs)) return;
			signalProcessGroup(pgid, "SIGTERM");
			if (await this.groupEnded(pgid, TIMING.terminateGraceMs)) return;
			signalProcessGroup(pgid, "SIGKILL");
			await this.groupEnded(pgid, TIMING.killWaitMs);
		} finally {
			this.untrack?.();
			// A process that left the group (setsid) may still hold the pipes: release ours now.
			child?.stdin.destroy();
			child?.stdout.destroy();
			child?.stderr.destroy();
			this.end();
		}
	}

	/** Whether the group is gone (and stays counted as gone: see `groupGone`). */
	private groupIsGone(pgid: number): boolean {
		if (!this.groupGone && signalProcessGroup(pgid, 0) === "gone") this.groupGone = true;
		return this.groupGone;
	}

	/**
	 * Waits up to `ms` for every process of the group to be gone. The group outlives its leader
	 * while a child is left; it is gone once its last process has exited and been reaped.
	 */
	private async groupEnded(pgid: number, ms: number): Promise<boolean> {
		const deadline = Date.now() + ms;
		for (;;) {
			if (this.groupIsGone(pgid)) return true;
			const left = deadline - Date.now();
			if (left <= 0) return false;
			await delay(Math.min(GROUP_POLL_MS, left));
		}
	}
}

/**
 * The stdio transport for this platform: a `ProcessGroupStdioTransport` on POSIX, the SDK's
 * `StdioClientTransport` on Windows (no process groups to signal).
 *
 * @example
 * const sdk = await loadMcpSdk();
 * const transport = createStdioTransport(sdk, { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"], onStderr: () => {} });
 * await new sdk.Client({ name: "app", version: "1.0.0" }).connect(transport);
 */
export function createStdioTransport(sdk: StdioSdk, parameters: StdioServerParameters): StdioProcessTransport {
	if (process.platform !== "win32") return new ProcessGroupStdioTransport(sdk, parameters);
	const transport = new sdk.StdioClientTransport({
		command: parameters.command,
		args: [...parameters.args],
		...(parameters.env ? { env: { ...parameters.env } } : {}),
		...(parameters.cwd !== undefined ? { cwd: parameters.cwd } : {}),
		stderr: "pipe",
	});
	transport.stderr?.on("data", (chunk: Buffer | string) => parameters.onStderr(chunk.toString()));
	return transport;
}
