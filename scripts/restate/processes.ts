/**
 * Child processes that the Restate tests, demo and bench start, each in a process group of its
 * own so that it is stopped with everything it started (`kill(-pid)`), and all of them stopped
 * when this process ends, however it ends (an exception, a failed test, Ctrl-C). Nothing here is
 * found by name: only the groups this process started are ever signalled.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";

/** A started child process and what it printed so far. */
export interface ManagedProcess {
	readonly name: string;
	readonly child: ChildProcess;
	readonly pid: number;
	/** Stdout and stderr, as printed (kept for failure messages). */
	readonly output: string[];
	/** Resolves with the exit code (or signal name) once the process ended. */
	readonly exited: Promise<number | string>;
	/** Sends `signal` to the whole process group (default SIGTERM); waits until it exited. */
	stop(signal?: NodeJS.Signals): Promise<void>;
}

const running = new Set<ManagedProcess>();

function killGroup(pid: number, signal: NodeJS.Signals): void {
	try {
		process.kill(-pid, signal);
	} catch {
		// Already gone.
	}
}

let hooked = false;
/** On any exit of this process, every group still running is killed (synchronously: `exit` allows nothing else). */
function hookExit(): void {
	if (hooked) return;
	hooked = true;
	process.on("exit", () => {
		for (const managed of running) killGroup(managed.pid, "SIGKILL");
	});
	for (const signal of ["SIGINT", "SIGTERM"] as const) {
		process.once(signal, () => {
			for (const managed of running) killGroup(managed.pid, "SIGKILL");
			process.exit(130);
		});
	}
}

/**
 * Starts `command` in a process group of its own, keeping what it prints.
 *
 * @example
 * const server = startProcess("restate", binary, ["--config-file", file]);
 * await server.stop();
 */
export function startProcess(name: string, command: string, args: readonly string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; onLine?: (line: string) => void } = {}): ManagedProcess {
	hookExit();
	const child = spawn(command, args, { env: options.env ?? process.env, cwd: options.cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
	if (child.pid === undefined) throw new Error(`could not start ${name} (${command})`);
	const pid = child.pid;
	const output: string[] = [];
	const exited = new Promise<number | string>((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
	let partial = "";
	const take = (chunk: Buffer) => {
		const text = partial + chunk.toString("utf8");
		const lines = text.split("\n");
		partial = lines.pop() ?? "";
		for (const line of lines) {
			output.push(line);
			if (output.length > 2000) output.splice(0, 1000);
			options.onLine?.(line);
		}
	};
	child.stdout?.on("data", take);
	child.stderr?.on("data", take);
	const managed: ManagedProcess = {
		name,
		child,
		pid,
		output,
		exited,
		async stop(signal: NodeJS.Signals = "SIGTERM") {
			killGroup(pid, signal);
			const late = setTimeout(() => killGroup(pid, "SIGKILL"), 5000);
			await exited;
			clearTimeout(late);
			running.delete(managed);
		},
	};
	running.add(managed);
	void exited.then(() => running.delete(managed));
	return managed;
}

/**
 * Stops every process this module started and that still runs.
 *
 * @example
 * try { ... } finally { await stopAllProcesses(); }
 */
export async function stopAllProcesses(): Promise<void> {
	await Promise.all([...running].map((managed) => managed.stop("SIGKILL")));
}

/**
 * A TCP port free on 127.0.0.1 right now. The OS picks it, and another process can take it before
 * it is used: this happened once in CI (restate-server's admin port, "Address in use"), so the
 * callers that bind it in another process retry with new ports when that happens (see
 * `startRestateServer`).
 *
 * @example
 * const port = await freePort();
 */
export async function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = createServer();
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => {
			const address = server.address();
			const port = typeof address === "object" && address ? address.port : 0;
			server.close(() => resolve(port));
		});
	});
}

/**
 * Polls `check` until it resolves true, or throws after `timeoutMs` with `what` and the tail of
 * `process`'s output. When `process` ends first, it throws at once (a process that exited will
 * not come up, however long one waits), also while a check is still pending. A check that hangs
 * does not hold the wait past `timeoutMs` either; the check should still bound itself (a fetch
 * with a timeout), since the wait does not cancel it.
 *
 * @example
 * await waitUntil("restate's ingress", () => ok(url), 30_000, server);
 */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number, process?: ManagedProcess): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	const tail = () => (process ? `\n--- ${process.name} output ---\n${process.output.slice(-40).join("\n")}` : "");
	let exit: number | string | undefined;
	const ended = process?.exited.then((code) => {
		exit = code;
		return false;
	});
	for (;;) {
		let timer: NodeJS.Timeout | undefined;
		const late = new Promise<false>((resolve) => {
			timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
		});
		const answered = await Promise.race([check().catch(() => false), late, ...(ended ? [ended] : [])]);
		clearTimeout(timer);
		if (answered) return;
		if (exit !== undefined) throw new Error(`${process?.name ?? "the process"} exited (${exit}) while waiting for ${what}${tail()}`);
		if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${tail()}`);
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
}
