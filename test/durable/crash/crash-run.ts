/**
 * The crash test's driver. Sessions run in worker processes (worker.ts, on the built package and
 * the file store); each process is killed with SIGKILL at a random point (or tears one of its
 * own writes and dies in it), and the next one loads the session and goes on, until a process
 * completes it. Then the session is checked against the crash rules:
 *
 * - its transcript is valid for a provider: every tool call answered once, right after its
 *   message, in order; no reply that failed or was aborted;
 * - no message lost or duplicated: each task and its follow-up are there exactly once, in order;
 * - no tool without `replay: "safe"` executed twice, and every tool that ran belongs to a call
 *   of the transcript (counted by the tools in a side file);
 * - no approval lost: a call a person was asked about ends approved (run, or interrupted while
 *   running) or rejected; a rejected call never ran; a call that needs approval never ran
 *   without one;
 * - in the two sessions of five that compact (`agent.compact()` before each task after the
 *   first), the rules hold for the whole session: the summaries write down what they summarise
 *   (summaries.ts), and a session told to compact stores a summary.
 *
 * `npm run crash -- --kills 500 --seed 7` runs it from the command line (crash-cli.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { appendFile, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { createFileStore } from "../../../src/durable/file-store.js";
import type { AgentMessage } from "../../../src/types/messages.js";
import { expandSummaries } from "./summaries.js";
import type { WorkerArgs } from "./worker.js";
import { seededRandom as generator } from "../../../src/util/seeded-random.js";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, "../../..");

/** Options of {@link runCrashTest}. */
export interface CrashRunOptions {
	/** How many kills in all (at least; the last sessions may end with a few more). */
	kills: number;
	seed: number;
	/** Sessions run side by side (default 2). */
	parallel?: number | undefined;
	/** Lines of progress. */
	log?: ((line: string) => void) | undefined;
	/** The tool execution modes sessions pick from (default: all three). */
	modes?: ReadonlyArray<"parallel" | "sequential" | "streaming"> | undefined;
	/** The share of kills that leave the process running beside the next one for a while (default 0.2; see {@link HandOver}). */
	handOvers?: number | undefined;
}

/** What a crash run found. */
export interface CrashRunReport {
	seed: number;
	kills: number;
	sessions: number;
	processes: number;
	/** Kills by where they landed (a kill may count in several). */
	landed: Record<string, number>;
	violations: string[];
	seconds: number;
}

/**
 * Where a kill can land, as told by the worker's lines; "taken over alive" counts the processes
 * the next one loaded the session beside, "left to stop by itself" those of them not killed (see
 * {@link HandOver}; they are not counted as kills, nor where they were).
 */
const PLACES = ["loading", "streaming", "mid-tool", "between intent and result", "waiting for approval", "mid-compaction", "mid-write", "torn write", "elsewhere", "taken over alive", "left to stop by itself"] as const;

/** What one worker process was doing, from its lines. */
class Watch {
	ready = false;
	done = false;
	streaming = false;
	compacting = false;
	readonly tools = new Set<string>();
	readonly approvals = new Set<string>();
	writes = 0;
	torn = false;
	/** Tool intents stored minus tool outcomes stored. */
	intentsOpen = 0;
	problems = "";
	/** Every line, kept for the session's log when a rule is broken. */
	readonly lines: string[] = [];
	#rest = "";

	feed(chunk: string): void {
		const lines = (this.#rest + chunk).split("\n");
		this.#rest = lines.pop() ?? "";
		for (const line of lines) {
			this.lines.push(line);
			this.#line(line);
		}
	}

	#line(line: string): void {
		const [kind, what, detail, phase] = line.split(" ");
		switch (kind) {
			case "ready":
				this.ready = true;
				if (what?.startsWith("problems=")) this.problems = line.slice("ready problems=".length);
				break;
			case "done":
				this.done = true;
				break;
			case "stream-start":
				this.streaming = true;
				break;
			case "stream-end":
				this.streaming = false;
				break;
			case "compaction-start":
				this.compacting = true;
				break;
			case "compaction-end":
				this.compacting = false;
				break;
			case "tool-start":
				this.tools.add(what ?? "");
				break;
			case "tool-end":
				this.tools.delete(what ?? "");
				break;
			case "approval-start":
				this.approvals.add(what ?? "");
				break;
			case "approval-end":
				this.approvals.delete(what ?? "");
				break;
			case "write-start":
				if (what === "torn") this.torn = true;
				this.writes++;
				break;
			case "write-end":
				this.writes--;
				if (what === "journal" && detail === "tool" && phase === "intent") this.intentsOpen++;
				if (what === "journal" && detail === "tool" && phase === "outcome") this.intentsOpen = Math.max(0, this.intentsOpen - 1);
				break;
		}
	}

	places(): string[] {
		if (this.torn) return ["torn write", "mid-write"];
		if (!this.ready) return ["loading"];
		const places: string[] = [];
		if (this.streaming) places.push("streaming");
		if (this.tools.size > 0) places.push("mid-tool");
		if (this.intentsOpen > 0) places.push("between intent and result");
		if (this.approvals.size > 0) places.push("waiting for approval");
		if (this.compacting) places.push("mid-compaction");
		if (this.writes > 0) places.push("mid-write");
		return places.length > 0 ? places : ["elsewhere"];
	}
}

/** Builds the worker for plain Node, next to the package, so that `import "agentchart"` is the built package. */
async function buildWorker(dir: string): Promise<string> {
	const outfile = join(dir, "worker.mjs");
	await build({ entryPoints: [join(here, "worker.ts")], outfile, format: "esm", platform: "node", target: "node20", bundle: true, packages: "external", logLevel: "error" });
	return outfile;
}

/** How a worker process ended, or was left (see {@link HandOver}). */
interface WorkerOutcome {
	watch: Watch;
	code: number | null;
	signal: NodeJS.Signals | null;
	stderr: string;
	/** Killed by the test, or handed over alive to be killed later (not one left to stop by itself). */
	killed: boolean;
	hung: boolean;
	/** Handed over alive: resolves once the process has exited, with whether it had to be killed for not stopping by itself. */
	exited?: Promise<{ hung: boolean }> | undefined;
	/** Handed over alive to be killed at random: called once the next process is ready, kills it `ms` later. */
	afterNextReady?: ((ms: number) => void) | undefined;
}

/**
 * The next process starts `afterReadyMs` after this one is ready, while this one lives on (two
 * processes of one session, as when a supervisor gives up on a process that is only slow). What
 * it writes after the next one opened the session must be refused, and what it had stored must be
 * seen. It is killed a while after the next one has loaded the session, or, `untilItStops`, left
 * to find out by itself that it lost the session: each of its writes is refused from then on, and
 * a run waiting for a person (which writes nothing) learns of it from the store's watch. It must
 * then end within {@link STOPS_WITHIN_MS} of the hand-over; one that does not is a hang the kill would hide.
 */
interface HandOver {
	afterReadyMs: number;
	untilItStops: boolean;
}

/**
 * How long a process handed over alive may run on before it counts as hung: the file store looks
 * for a takeover once a second, and a session's whole work takes a few seconds.
 */
const STOPS_WITHIN_MS = 30_000;

/** Runs one worker process; `kill` decides when (or whether) the parent kills it, `handOver` when it leaves it running. */
function runWorker(worker: string, args: WorkerArgs, killAfterReadyMs: number | undefined, killBeforeReadyMs: number | undefined, handOver?: HandOver, onReady?: () => void): Promise<WorkerOutcome> {
	return new Promise((resolve) => {
		const child: ChildProcess = spawn(process.execPath, [worker, JSON.stringify(args)], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
		const watch = new Watch();
		let stderr = "";
		let killed = false;
		let hung = false;
		const timers: NodeJS.Timeout[] = [];
		const kill = () => {
			if (child.exitCode !== null || child.signalCode !== null) return;
			killed = true;
			child.kill("SIGKILL");
		};
		let exited: ((how: { hung: boolean }) => void) | undefined;
		const leave = () => {
			if (child.exitCode !== null || child.signalCode !== null) return;
			const gone = new Promise<{ hung: boolean }>((done) => (exited = done));
			const stopBy = () => {
				hung = true;
				kill();
			};
			// From the hand-over, as the next process may die before it loads the session (then this one is still its writer, and goes on).
			if (handOver?.untilItStops) timers.push(setTimeout(stopBy, STOPS_WITHIN_MS));
			// Killed at random, it is killed 5 s after the hand-over at the latest.
			else timers.push(setTimeout(kill, 5_000));
			resolve({ watch, code: null, signal: null, stderr, killed: !handOver?.untilItStops, hung: false, exited: gone, afterNextReady: handOver?.untilItStops ? undefined : (ms) => timers.push(setTimeout(kill, ms)) });
		};
		if (killBeforeReadyMs !== undefined) timers.push(setTimeout(kill, killBeforeReadyMs));
		child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
			const wasReady = watch.ready;
			watch.feed(chunk);
			if (!wasReady && watch.ready && killAfterReadyMs !== undefined) timers.push(setTimeout(kill, killAfterReadyMs));
			if (!wasReady && watch.ready && handOver) timers.push(setTimeout(leave, handOver.afterReadyMs));
			if (!wasReady && watch.ready) onReady?.();
		});
		child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
			stderr += chunk;
		});
		// No process may hang the test: one that has not finished in a minute is a failure.
		timers.push(
			setTimeout(() => {
				hung = true;
				child.kill("SIGKILL");
			}, 60_000),
		);
		child.on("exit", (code, signal) => {
			for (const timer of timers) clearTimeout(timer);
			// Left running (resolved already): what it did after is in the side file and the store.
			exited?.({ hung });
			resolve({ watch, code, signal, stderr, killed: killed || (signal === "SIGKILL" && watch.torn), hung });
		});
	});
}

function textOf(message: AgentMessage | undefined): string {
	const content = (message as { content?: unknown } | undefined)?.content;
	if (typeof content === "string") return content;
	if (Array.isArray(content)) return content.map((block: { type?: string; text?: string }) => (block.type === "text" ? (block.text ?? "") : "")).join("");
	return "";
}

/** The crash rules, checked on a completed session: what breaks them, as sentences. */
export function checkSession(messages: readonly AgentMessage[], sideLines: readonly string[], prompts: number, label: string): string[] {
	const problems: string[] = [];
	const fail = (text: string) => problems.push(`${label}: ${text}`);

	// No message lost or duplicated.
	const users = messages.filter((message) => message.role === "user").map((message) => textOf(message));
	const expected = Array.from({ length: prompts }, (_, task) => [`task ${task}`, `follow-up ${task}`]).flat();
	if (JSON.stringify(users) !== JSON.stringify(expected)) fail(`user messages ${JSON.stringify(users)}, expected ${JSON.stringify(expected)}`);

	// Valid for a provider: each call answered once, right after its message, in order.
	const calls = new Map<string, { name: string; result?: string }>();
	for (let index = 0; index < messages.length; index++) {
		const message = messages[index] as AgentMessage;
		if (message.role === "toolResult") {
			fail(`message ${index} is a tool result no assistant message asked for right before it`);
			continue;
		}
		if (message.role !== "assistant") continue;
		if (message.stopReason === "error" || message.stopReason === "aborted") fail(`message ${index} is a failed reply (${message.stopReason}: ${message.errorMessage ?? ""})`);
		const asked = message.content.flatMap((block) => (block.type === "toolCall" ? [block] : []));
		for (let offset = 0; offset < asked.length; offset++) {
			const call = asked[offset] as { id: string; name: string };
			const answer = messages[index + 1 + offset];
			if (calls.has(call.id)) fail(`tool call ${call.id} appears twice`);
			if (answer?.role !== "toolResult" || answer.toolCallId !== call.id) {
				fail(`tool call ${call.id} (message ${index}) is not answered right after it, in order`);
				calls.set(call.id, { name: call.name });
				continue;
			}
			calls.set(call.id, { name: call.name, result: textOf(answer) });
		}
		index += asked.length;
	}

	// The side file: what ran, what a person chose, which decisions were stored, who was asked.
	const execs = new Map<string, number>();
	const stored = new Map<string, string[]>();
	const chosen = new Map<string, string[]>();
	const requested = new Set<string>();
	const firstExec = new Map<string, number>();
	const firstApproval = new Map<string, number>();
	sideLines.forEach((line, at) => {
		const [kind, a, b] = line.split(" ");
		if (kind === "exec" && b) {
			execs.set(b, (execs.get(b) ?? 0) + 1);
			if (!firstExec.has(b)) firstExec.set(b, at);
		} else if (kind === "choose" && a && b) {
			chosen.set(a, [...(chosen.get(a) ?? []), b]);
			if (b === "approve" && !firstApproval.has(a)) firstApproval.set(a, at);
		} else if (kind === "decide" && a && b) stored.set(a, [...(stored.get(a) ?? []), b]);
		else if (kind === "requested" && a) requested.add(a);
	});
	for (const [id, count] of execs) {
		const call = calls.get(id);
		if (!call) fail(`a tool ran for call ${id}, which the transcript does not have (an effect lost)`);
		else if (count > 1 && call.name !== "lookup") fail(`${call.name} call ${id} (not replay-safe) ran ${count} times`);
	}
	for (const [id, call] of calls) {
		const ran = execs.get(id) ?? 0;
		const result = call.result ?? "";
		const finished = result.startsWith(`${call.name} done`);
		if (finished && ran === 0) fail(`${call.name} call ${id} has a result but its tool never ran`);
		if (call.name === "lookup" && !finished) fail(`lookup call ${id} (replay-safe) did not finish: ${result}`);
		if (call.name !== "deploy") continue;
		const choices = chosen.get(id) ?? [];
		const decisions = stored.get(id) ?? [];
		if (choices.length === 0) fail(`deploy call ${id} was answered (${result}) without anyone deciding it (an approval lost or skipped)`);
		if (new Set(decisions).size > 1) fail(`deploy call ${id} has stored decisions both ways: ${decisions.join(", ")} (a stored decision was not kept)`);
		if (decisions.includes("reject") && (ran > 0 || !/rejected/.test(result))) fail(`deploy call ${id} was rejected (stored), yet it ran ${ran} times with result: ${result}`);
		if (decisions.includes("approve") && /rejected/.test(result)) fail(`deploy call ${id} was approved (stored), yet its result is: ${result}`);
		if (/rejected/.test(result) && !choices.includes("reject")) fail(`deploy call ${id} is rejected though nobody chose to reject it`);
		if (ran > 0 && !((firstApproval.get(id) ?? Number.POSITIVE_INFINITY) < (firstExec.get(id) as number))) fail(`deploy call ${id} ran without an approval before it`);
		if (/interrupted by a restart/.test(result) && !choices.includes("approve")) fail(`deploy call ${id} was answered as interrupted without being approved (an approval lost)`);
	}
	for (const id of requested) if (!calls.has(id)) fail(`a person was asked about call ${id}, which the transcript does not have (an approval lost)`);
	return problems;
}

/**
 * Runs sessions, killing their processes, until `kills` kills; returns where the kills landed
 * and every rule a completed session broke.
 *
 * @example
 * const report = await runCrashTest({ kills: 40, seed: 1 });
 * expect(report.violations).toEqual([]);
 */
export async function runCrashTest(options: CrashRunOptions): Promise<CrashRunReport> {
	const started = Date.now();
	if (!existsSync(join(repoRoot, "dist/index.js"))) throw new Error("the crash test runs the built package: run `npm run build` first");
	const work = join(repoRoot, "test-output", `crash-${options.seed}-${process.pid}`);
	await rm(work, { recursive: true, force: true });
	await mkdir(work, { recursive: true });
	const worker = await buildWorker(work);
	const log = options.log ?? (() => {});
	const report: CrashRunReport = { seed: options.seed, kills: 0, sessions: 0, processes: 0, landed: Object.fromEntries(PLACES.map((place) => [place, 0])), violations: [], seconds: 0 };
	let nextSession = 0;

	const handOverShare = options.handOvers ?? 0.2;
	const runSession = async (index: number): Promise<void> => {
		// Each session has its own choices, whatever the other lane does meanwhile.
		const random = generator(options.seed * 7919 + index);
		const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
		const sessionId = `s${index}`;
		const sideFile = join(work, `${sessionId}.side`);
		const modes = options.modes ?? (["parallel", "sequential", "streaming"] as const);
		const policies = ["always", "snapshots", "never"] as const;
		const base = { root: join(work, "store"), sessionId, sideFile, toolExecution: modes[between(0, modes.length - 1)] ?? "parallel", fsync: policies[between(0, 2)] ?? "always", prompts: between(1, 3), slowDiskMs: random() < 0.5 ? between(1, 20) : undefined, compact: random() < 0.4, lateFollowUp: random() < 0.5 };
		const budget = between(1, 8);
		let kills = 0;
		/** Processes handed over alive, until they exit (the session is checked once none writes). */
		const lingering: Promise<void>[] = [];
		let handedOver: WorkerOutcome | undefined;
		// A session ends only once the processes it handed over alive exited: every process the test starts is gone when it ends.
		const untilLingeringExited = () => Promise.all(lingering).then(() => undefined);
		for (let attempt = 0; ; attempt++) {
			if (attempt > budget + 20) {
				report.violations.push(`${sessionId}: not complete after ${attempt} processes`);
				return untilLingeringExited();
			}
			const killing = kills < budget && report.kills < options.kills;
			const tear = killing && random() < 0.15 ? between(1, 40) : undefined;
			const early = killing && tear === undefined && random() < 0.05 ? between(0, 900) : undefined;
			const handOver = killing && tear === undefined && early === undefined && random() < handOverShare ? { afterReadyMs: between(0, 500), untilItStops: random() < 0.5 } : undefined;
			const afterReady = killing && tear === undefined && early === undefined && handOver === undefined ? between(0, 500) : undefined;
			const args: WorkerArgs = { ...base, seed: between(0, 2 ** 31), tearWrite: tear, personAway: handOver?.untilItStops };
			// A process handed over alive runs on beside this one: killed a while after this one has loaded the session, or until it stops.
			const previous = handedOver;
			// Drawn now: drawn when the process is ready, the session's later choices would depend on timing.
			const killPreviousAfterMs = between(0, 300);
			const killPrevious = previous?.afterNextReady ? () => previous.afterNextReady?.(killPreviousAfterMs) : undefined;
			const outcome = await runWorker(worker, args, afterReady, early, handOver, killPrevious);
			handedOver = outcome.afterNextReady ? outcome : undefined;
			if (outcome.exited) {
				const said = outcome.watch.lines.length;
				const logged = outcome.exited.then(async ({ hung }) => {
					await appendFile(join(work, `${sessionId}.log`), `--- process ${attempt}, after the next one started${hung ? `: still running ${STOPS_WITHIN_MS} ms after that, killed` : ""}\n${outcome.watch.lines.slice(said).join("\n")}\n`);
					if (hung) report.violations.push(`${sessionId}: process ${attempt}, taken over alive, did not stop by itself (its last state: ${outcome.watch.places().join(", ")}); args ${JSON.stringify(args)}`);
				});
				lingering.push(logged);
				report.landed["taken over alive"] = (report.landed["taken over alive"] ?? 0) + 1;
				if (handOver?.untilItStops) report.landed["left to stop by itself"] = (report.landed["left to stop by itself"] ?? 0) + 1;
			}
			report.processes++;
			// What each process said, kept with the session's side file (the folder stays when a rule is broken).
			await appendFile(join(work, `${sessionId}.log`), `--- process ${attempt} ${outcome.killed ? "killed" : `exit ${outcome.code}`} ${JSON.stringify(args)}\n${outcome.watch.lines.join("\n")}\n`);
			if (outcome.hung) {
				report.violations.push(`${sessionId}: a process hung (its last state: ${outcome.watch.places().join(", ")}); args ${JSON.stringify(args)}`);
				return untilLingeringExited();
			}
			if (outcome.killed) {
				kills++;
				report.kills++;
				for (const place of outcome.watch.places()) report.landed[place] = (report.landed[place] ?? 0) + 1;
				if (report.kills % 50 === 0) log(`${report.kills} kills, ${report.sessions} sessions complete`);
				continue;
			}
			// Left to stop by itself: not a kill (nobody kills it), and the next process goes on all the same.
			if (outcome.exited) continue;
			if (outcome.code !== 0 || !outcome.watch.done) {
				report.violations.push(`${sessionId}: a process failed (exit ${outcome.code ?? outcome.signal}): ${outcome.stderr.slice(0, 2000)}; args ${JSON.stringify(args)}`);
				return untilLingeringExited();
			}
			break;
		}
		await untilLingeringExited();
		report.sessions++;
		const loaded = await createFileStore(base.root).load(sessionId);
		const snapshot = loaded?.snapshot;
		if (!snapshot) {
			report.violations.push(`${sessionId}: nothing stored at the end`);
			return;
		}
		const context = snapshot.machine.context;
		if (snapshot.machine.value !== "idle" || context.run) report.violations.push(`${sessionId}: stored in ${JSON.stringify(snapshot.machine.value)} at the end, not idle`);
		if (context.followUpQueue.length + context.steeringQueue.length > 0) report.violations.push(`${sessionId}: messages left in the queues at the end`);
		const side = existsSync(sideFile) ? (await readFile(sideFile, "utf8")).split("\n").filter(Boolean) : [];
		const label = `${sessionId} (${base.toolExecution}, fsync ${base.fsync}${base.compact ? ", compacting" : ""}, ${kills} kills)`;
		let messages: AgentMessage[];
		try {
			messages = expandSummaries(context.messages);
		} catch (error) {
			report.violations.push(`${label}: a compaction summary is not what the summariser wrote: ${String(error)}`);
			return;
		}
		if (base.compact && base.prompts > 1 && !context.messages.some((message) => (message as { role: string }).role === "compactionSummary")) report.violations.push(`${label}: told to compact, yet no summary is stored`);
		report.violations.push(...checkSession(messages, side, base.prompts, label));
	};

	const lane = async () => {
		while (report.kills < options.kills) await runSession(nextSession++);
	};
	await Promise.all(Array.from({ length: options.parallel ?? 2 }, lane));
	report.seconds = Math.round((Date.now() - started) / 1000);
	if (report.violations.length === 0) await rm(work, { recursive: true, force: true });
	else await writeFile(join(work, "violations.txt"), `${report.violations.join("\n")}\n`);
	return report;
}
