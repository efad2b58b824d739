/**
 * Figures that concern a whole heap or a whole process (retained memory, peak RSS) are taken
 * in a child process of their own: a fresh `node --expose-gc --import tsx` that loads one
 * contender only, measures one figure and prints it as the last line of its output, as JSON.
 * Nothing another benchmark left in the parent's heap (or the other library's modules) can
 * move the figure.
 *
 * A paired timing (one contender's sample, then the other's, round after round) keeps each
 * contender in a process of its own the same way, alive for the whole measurement
 * ({@link startSampler}): the parent asks each in turn for a sample, and only the asked one runs.
 */
import { type ChildProcess, execFile, fork } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The repository root: children resolve `tsx` and the sources from here. */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Runs `script` as a child (`node --expose-gc --import tsx script --child <payload as JSON>`)
 * and returns the JSON of its last output line. Rejects with the child's stderr if it fails.
 * `nodeFlags`: more options for that `node` (a V8 heap setting the figure is measured under).
 *
 * @example
 * const figure = await runChild<{ bytes: number }>(fileURLToPath(import.meta.url), { agents: 1000 });
 * const capped = await runChild<{ bytes: number }>(fileURLToPath(import.meta.url), { agents: 1000 }, ["--max-semi-space-size=16"]);
 */
export function runChild<Result>(script: string, payload: unknown, nodeFlags: readonly string[] = []): Promise<Result> {
	return new Promise((resolve, reject) => {
		execFile(
			process.execPath,
			["--expose-gc", ...nodeFlags, "--import", "tsx", script, "--child", JSON.stringify(payload)],
			{ cwd: ROOT, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
			(error, stdout, stderr) => {
				if (error) {
					reject(new Error(`${[...nodeFlags, script].join(" ")} --child ${JSON.stringify(payload)} failed: ${stderr || error.message}`));
					return;
				}
				const last = stdout.trim().split("\n").at(-1) ?? "";
				try {
					resolve(JSON.parse(last) as Result);
				} catch {
					reject(new Error(`${script} --child printed no JSON result: ${JSON.stringify(stdout.slice(-500))}`));
				}
			},
		);
	});
}

/**
 * The payload when this process was started by {@link runChild}, otherwise undefined.
 *
 * @example
 * const payload = childPayload<MemoryChildPayload>();
 * if (payload) await measureInChild(payload);
 */
export function childPayload<Payload>(): Payload | undefined {
	return payloadAfter<Payload>("--child");
}

/** The JSON argument after `flag` on this process's command line, if the flag is there. */
function payloadAfter<Payload>(flag: string): Payload | undefined {
	const index = process.argv.indexOf(flag);
	if (index < 0) return undefined;
	return JSON.parse(process.argv[index + 1] ?? "{}") as Payload;
}

/**
 * Whether the module at `moduleUrl` is the script Node was started with (so a benchmark file
 * can both be imported by `run.ts` and run alone or as a child).
 *
 * @example
 * if (isEntryPoint(import.meta.url)) main();
 */
export function isEntryPoint(moduleUrl: string): boolean {
	return process.argv[1] !== undefined && fileURLToPath(moduleUrl) === process.argv[1];
}

/**
 * Prints a child's result (the last line of its output, which {@link runChild} parses) and
 * exits, or prints the error and exits non-zero.
 *
 * @example
 * if (isEntryPoint(import.meta.url)) reportFromChild(measureInChild(payload));
 */
export function reportFromChild(result: Promise<unknown>): void {
	result.then(
		(value) => {
			// Agents may hold timers (timeouts, inspectors); the figure is taken, the child is done.
			process.stdout.write(`${JSON.stringify(value)}\n`, () => process.exit(0));
		},
		(error: unknown) => {
			console.error(error);
			process.exit(1);
		},
	);
}

/** A child process that takes samples when asked (see {@link startSampler}). */
export interface Sampler<Result> {
	/** Asks the child for one sample and resolves with it; rejects if the child fails or exits. */
	sample(): Promise<Result>;
	/** Ends the child (also after a failure); resolves once it has exited. */
	stop(): Promise<void>;
}

/**
 * Starts `script` as a child (`node --expose-gc --import tsx script --sampler <payload as JSON>`)
 * that stays up: each {@link Sampler.sample} call asks it for one sample. The child answers with
 * {@link serveSamples}. Resolves once the child is ready (its set-up done).
 *
 * @example
 * const pi = await startSampler<number>(fileURLToPath(import.meta.url), { variant: "pi parallel" });
 * try { console.log(await pi.sample()); } finally { await pi.stop(); }
 */
export function startSampler<Result>(script: string, payload: unknown): Promise<Sampler<Result>> {
	const child: ChildProcess = fork(script, ["--sampler", JSON.stringify(payload)], { cwd: ROOT, execArgv: ["--expose-gc", "--import", "tsx"], stdio: ["ignore", "inherit", "pipe", "ipc"] });
	let stderr = "";
	child.stderr?.setEncoding("utf8").on("data", (text: string) => {
		stderr = (stderr + text).slice(-4000);
	});
	const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
	const failure = () => new Error(`${script} --sampler ${JSON.stringify(payload)} failed: ${stderr || `exit code ${child.exitCode}`}`);
	/** The next message from the child, or its exit (an error). */
	const next = () =>
		new Promise<ChildAnswer<Result>>((resolve, reject) => {
			const onMessage = (message: ChildAnswer<Result>) => {
				child.off("exit", onExit);
				resolve(message);
			};
			const onExit = () => {
				child.off("message", onMessage);
				reject(failure());
			};
			child.once("message", onMessage);
			child.once("exit", onExit);
		});
	const stop = async () => {
		if (child.exitCode === null && child.signalCode === null) child.kill();
		await exited;
	};
	const answer = (message: ChildAnswer<Result>): Result => {
		if ("error" in message) throw new Error(`${script} --sampler: ${message.error}`);
		return message.result as Result;
	};
	const sampler: Sampler<Result> = {
		sample: async () => {
			if (child.exitCode !== null || child.signalCode !== null) throw failure();
			const pending = next();
			child.send("sample");
			return answer(await pending);
		},
		stop,
	};
	return next().then(
		(ready) => {
			answer(ready);
			return sampler;
		},
	).catch(async (error: unknown) => {
		// A set-up that failed, or a child that died before it was ready: nothing is left running.
		await stop();
		throw error;
	});
}

type ChildAnswer<Result> = { result: Result | null } | { error: string };

/**
 * The payload when this process was started by {@link startSampler}, otherwise undefined.
 *
 * @example
 * const payload = samplerPayload<{ variant: string }>();
 */
export function samplerPayload<Payload>(): Payload | undefined {
	return payloadAfter<Payload>("--sampler");
}

/**
 * The child's side of {@link startSampler}: runs `setUp` once, then `take` for every sample the
 * parent asks for, one at a time; a failure is sent to the parent, which rejects with it.
 *
 * @example
 * if (samplerPayload()) await serveSamples(() => loadBenchAgentFactory("pi"), (factory) => timeTurns("pi parallel", factory, 500));
 */
export async function serveSamples<Made, Result>(setUp: () => Promise<Made>, take: (made: Made) => Promise<Result>): Promise<void> {
	const send = (message: ChildAnswer<Result>) => process.send?.(message);
	let made: Made;
	try {
		made = await setUp();
	} catch (error) {
		send({ error: String((error as Error)?.stack ?? error) });
		process.exit(1);
	}
	let queue = Promise.resolve();
	process.on("message", () => {
		queue = queue.then(async () => {
			try {
				send({ result: await take(made) });
			} catch (error) {
				send({ error: String((error as Error)?.stack ?? error) });
			}
		});
	});
	// The parent going away ends the child (its IPC channel closes).
	process.on("disconnect", () => process.exit(0));
	send({ result: null });
}
