/**
 * What the tests of a manual compaction interrupted by a crash or a restart share: a transcript
 * long enough to compact, a summariser that never answers, the compaction events as a listener
 * sees them, and a child process killed with SIGKILL while it compacts.
 */
import { spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import type { CompactionSettings } from "../../src/compaction/settings.js";
import type { AgentEvent } from "../../src/types/agent.js";
import { assistant, user } from "../agent/helpers.js";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Polls `check` every 2 ms, `polls` times at most; throws if it never held. */
export async function until(check: () => boolean, polls = 1000): Promise<void> {
	for (let i = 0; i < polls && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 2));
	if (!check()) throw new Error("timed out");
}

/** `text` made long enough (400 characters more) that a compaction keeping one token summarises it. */
export const long = (text: string) => `${text} ${"x".repeat(400)}`;

/** Two exchanges of long messages. */
export const transcript = () => [user(long("first question")), assistant(long("first answer")), user(long("second question")), assistant(long("second answer"))];

/** A compaction that starts and never ends (the process "crashes" while it runs): whether it started, and with what instructions. */
export function hangingCompaction(): { settings: CompactionSettings; started: () => boolean; instructions: () => string | undefined } {
	let started = false;
	let instructions: string | undefined;
	return {
		settings: { enabled: true, keepRecentTokens: 1, summarize: (request) => ((started = true), (instructions = request.instructions), new Promise<string>(() => {})) },
		started: () => started,
		instructions: () => instructions,
	};
}

/** The compaction events, as a listener that shows a spinner between them sees them. */
export function compactionEvents(events: readonly AgentEvent[]): string[] {
	return events.flatMap((event) => {
		if (event.type === "auto_compaction_start") return [`start:${event.reason}`];
		if (event.type === "auto_compaction_end") return [`end:${event.reason}:${event.result ? "compacted" : (event.errorMessage ?? "aborted")}`];
		return [];
	});
}

/**
 * Runs a child process with a file store on `root`: an agent of session "s" (two long user
 * messages; its model answers once) whose summariser never answers and, once it is asked, runs
 * `whenAsked` (code with `agent` in scope, awaited) and prints "compacting". `script` is code
 * run after the agent is made (it prompts, compacts). The child is killed with SIGKILL once it
 * printed, and also when the test fails.
 *
 * @example
 * await killedWhileCompacting(root, "await agent.saved();", 'await agent.prompt("go"); void agent.compact();');
 */
export async function killedWhileCompacting(root: string, whenAsked: string, script: string): Promise<void> {
	const child = spawn(
		process.execPath,
		[
			"--import",
			"tsx",
			"--input-type=module",
			"-e",
			`
			import { Agent, createFileStore, createScriptedModel } from "./src/index.ts";
			const scripted = createScriptedModel([{ content: "an answer ${"y".repeat(400)}" }]);
			const long = (text) => ({ role: "user", content: [{ type: "text", text: text + " ${"x".repeat(400)}" }], timestamp: Date.now() });
			const agent = new Agent({ store: createFileStore(process.argv[1]), sessionId: "s", initialState: { model: scripted.model, messages: [long("first"), long("second")] }, streamFn: scripted.streamFn,
				compaction: { enabled: true, keepRecentTokens: 1, summarize: () => { setTimeout(async () => { ${whenAsked} console.log("compacting"); }, 0); return new Promise(() => {}); } } });
			${script}
			setInterval(() => {}, 1000);
			`,
			root,
		],
		{ cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] },
	);
	try {
		let output = "";
		child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
		child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
		await until(() => output.includes("compacting") || child.exitCode !== null, 10_000);
		expect(output).toContain("compacting");
	} finally {
		const exited = new Promise((resolve) => child.once("exit", resolve));
		if (child.exitCode === null) child.kill("SIGKILL");
		await exited;
	}
}
