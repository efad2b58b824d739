/**
 * A run waiting for a person writes nothing, so before, an agent whose session another process
 * loaded learned of it only at its next write: its wait went on, `prompt()` never settled, and
 * `pendingApprovals` listed calls it could no longer answer (the other process asks and decides).
 * Now the agent asks the store to watch the session while a run waits (`watchTakeover`; the file
 * store looks at its `writer` file once a second), and the wait ends as on `abort()` once another
 * process opened the session.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createFileStore } from "../../src/durable/file-store.js";
import { SessionTakenOverError } from "../../src/durable/store.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { makeTool, ok } from "../agent/helpers.js";
import { useTempDirs } from "../temp-dirs.js";

const tempDir = useTempDirs("agentchart-takeover-watch-");
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const APPROVER = fileURLToPath(new URL("takeover/approver.ts", import.meta.url));
const TAKEN_OVER_ELSEWHERE = /session "s" was opened by an agent of another process/;
/** Longer than a few of the file store's looks (one a second), shorter than the test's timeout. */
const SETTLES_WITHIN_MS = 8_000;

/** `promise`'s outcome, or "still waiting" after `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | "still waiting"> {
	let timer: ReturnType<typeof setTimeout> | undefined;
	const late = new Promise<"still waiting">((resolve) => {
		timer = setTimeout(() => resolve("still waiting"), ms);
	});
	try {
		return await Promise.race([promise, late]);
	} finally {
		clearTimeout(timer);
	}
}

/** A deploy tool that needs approval and counts its runs in `root/deploys`. */
function deployTool(root: string) {
	return makeTool(
		"deploy",
		async () => {
			const { appendFileSync } = await import("node:fs");
			appendFileSync(join(root, "deploys"), `${process.pid}\n`);
			return ok("deployed");
		},
		{ needsApproval: true },
	);
}

function deploys(root: string): string[] {
	return existsSync(join(root, "deploys")) ? readFileSync(join(root, "deploys"), "utf8").trim().split("\n") : [];
}

/** An agent of session "s" on a file store at `root` whose run waits for approval of one deploy call. */
async function waitingAgent(root: string) {
	const scripted = createScriptedModel([{ content: [{ type: "toolCall", name: "deploy", arguments: {}, id: "d1" }] }, { content: "done here" }]);
	const agent = await Agent.load({ store: createFileStore(root, { fsync: "never" }), sessionId: "s", initialState: { model: scripted.model, tools: [deployTool(root)] }, streamFn: scripted.streamFn });
	const asked = new Promise<void>((resolve) => {
		agent.subscribe((event) => {
			if (event.type === "approval_requested") resolve();
		});
	});
	const run = agent.prompt("deploy it");
	await asked;
	await agent.saved();
	return { agent, run };
}

/** Runs test/durable/takeover/approver.ts on `root` and returns what it printed. */
function approveInAnotherProcess(root: string): Promise<{ waiting: string[]; roles: string[]; last: { content: { type: string; text?: string }[] } }> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, ["--import", "tsx", APPROVER, root], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
		let out = "";
		let err = "";
		child.stdout.on("data", (chunk: Buffer) => (out += chunk));
		child.stderr.on("data", (chunk: Buffer) => (err += chunk));
		const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
		child.on("close", (code) => {
			clearTimeout(timer);
			if (code === 0) resolve(JSON.parse(out.trim().split("\n").at(-1) as string));
			else reject(new Error(`approver exited with ${code}: ${err}`));
		});
	});
}

describe("a run waiting for approval, when another process loads its session", () => {
	it("ends its wait as on abort() once another process loaded the session and approved: that process runs the call, once", async () => {
		const root = await tempDir();
		const { agent, run } = await waitingAgent(root);
		expect(agent.pendingApprovals.map((call) => call.toolCallId)).toEqual(["d1"]);
		const other = await approveInAnotherProcess(root);
		expect(other.waiting).toEqual(["d1"]);
		expect(other.roles).toEqual(["user", "assistant", "toolResult", "assistant"]);
		expect(other.last.content[0]?.text).toBe("done");
		// Before: still waiting, for ever.
		expect(await within(run, SETTLES_WITHIN_MS)).toBeUndefined();
		expect(agent.pendingApprovals).toEqual([]);
		expect(agent.storeProblems.some((problem) => TAKEN_OVER_ELSEWHERE.test(problem))).toBe(true);
		expect(() => agent.approve("d1")).toThrow(SessionTakenOverError);
		// Run by the other process only: this one's abort decided nothing the store kept.
		expect(deploys(root)).toHaveLength(1);
		expect(deploys(root)[0]).not.toBe(String(process.pid));
		agent.dispose();
	}, 60_000);

	it("a run restored waiting (Agent.load) ends its wait too when another store opens the session after it", async () => {
		const root = await tempDir();
		// Its process gone as far as the session goes: the load below, in this process, supersedes it.
		const first = await waitingAgent(root);
		const scripted = createScriptedModel([{ content: "done" }]);
		const agent = await Agent.load({ store: createFileStore(root, { fsync: "never" }), sessionId: "s", initialState: { model: scripted.model, tools: [deployTool(root)] }, streamFn: scripted.streamFn });
		expect(agent.pendingApprovals.map((call) => call.toolCallId)).toEqual(["d1"]);
		const idle = agent.waitForIdle();
		// Every write of the load landed: from here the run writes nothing until somebody answers.
		await agent.saved();
		expect(await within(first.run, SETTLES_WITHIN_MS)).toBeUndefined();
		// What another process's Agent.load does first: its store opens the session (no agent of this process is told).
		await createFileStore(root, { fsync: "never" }).open("s");
		expect(await within(idle, SETTLES_WITHIN_MS)).toBeUndefined();
		expect(agent.pendingApprovals).toEqual([]);
		expect(agent.storeProblems.some((problem) => TAKEN_OVER_ELSEWHERE.test(problem))).toBe(true);
		expect(deploys(root)).toEqual([]);
		agent.dispose();
	}, 60_000);
});

describe("the file store's watchTakeover", () => {
	it("calls back once another store opened the session (also before the watch began), never after stop, and not for a session it did not open", async () => {
		const root = await tempDir();
		const store = createFileStore(root, { fsync: "never" });
		await store.open("s");
		const seen: string[] = [];
		const stop = store.watchTakeover("s", (error) => seen.push(error.message));
		expect(seen).toEqual([]);
		await createFileStore(root, { fsync: "never" }).open("s");
		await expect.poll(() => seen.length, { timeout: SETTLES_WITHIN_MS, interval: 100 }).toBe(1);
		expect(seen[0]).toMatch(TAKEN_OVER_ELSEWHERE);
		stop();

		// Opened elsewhere before the watch: told at once.
		const late: string[] = [];
		store.watchTakeover("s", (error) => late.push(error.message))();
		expect(late).toHaveLength(1);

		// Stopped before the opening: never told.
		const fresh = createFileStore(root, { fsync: "never" });
		await fresh.open("t");
		const never: string[] = [];
		fresh.watchTakeover("t", (error) => never.push(error.message))();
		await createFileStore(root, { fsync: "never" }).open("t");
		await new Promise((resolve) => setTimeout(resolve, 2_500));
		expect(never).toEqual([]);

		// Not opened by this store: nothing to watch.
		const reader = createFileStore(root, { fsync: "never" });
		const nothing: string[] = [];
		reader.watchTakeover("t", (error) => nothing.push(error.message))();
		expect(nothing).toEqual([]);
	}, 60_000);
});
