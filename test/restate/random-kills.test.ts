/**
 * 100 sessions over two workers while workers are killed with SIGKILL at random moments (and
 * started again): every session completes, no tool without `replay: "safe"` runs twice (the
 * workers log every execution to a side file), every transcript is valid for a provider.
 *
 * The kill times come from a seeded generator: RESTATE_KILL_SEED repeats a run, RESTATE_SESSIONS
 * changes the count (default 100).
 */
import { expect, it } from "vitest";
import { executionCounts, readExecutions, transcriptProblems } from "../../scripts/restate/checks.js";
import { useLoggedCluster } from "../../scripts/restate/test-cluster.js";
import type { RunResult } from "../../src/restate/session-types.js";
import type { AgentMessage } from "../../src/types/messages.js";
import { seededRandom as random } from "../../src/util/seeded-random.js";

const SESSIONS = Number(process.env["RESTATE_SESSIONS"] ?? 100);
const SEED = Number(process.env["RESTATE_KILL_SEED"] ?? 36);

const setup = useLoggedCluster("agentchart-restate-kills-", { env: { STREAM_DELAY_MS: "3" } });

it(`${SESSIONS} sessions over two workers with random kills: all complete, no unsafe tool ran twice, every transcript valid (seed ${SEED})`, { timeout: 600_000 }, async () => {
	const { cluster, client, execLog } = setup;
	const ids = Array.from({ length: SESSIONS }, (_, index) => `random-${SEED}-${index}`);
	const started = Date.now();
	// Sessions start in waves of 10, 1.5 s apart, so that kills land on every phase of their runs.
	const results = Promise.all(
		ids.map(async (id, index) => {
			await new Promise((resolve) => setTimeout(resolve, Math.floor(index / 10) * 1500));
			return client.result<RunResult>(await client.session(id).send.prompt(`mixed:${SEED * 1000 + index}`));
		}),
	);

	// The killer: while sessions run, every 0.15-0.5 s a random worker dies (while the other is up)
	// and is started again 0.1-0.3 s later, in the background.
	const rand = random(SEED);
	let done = false;
	let kills = 0;
	const restarts: Promise<void>[] = [];
	const up = cluster.workers.map(() => true);
	void results.finally(() => (done = true));
	const killer = (async () => {
		while (!done) {
			await new Promise((resolve) => setTimeout(resolve, 150 + rand() * 350));
			const index = Math.floor(rand() * cluster.workers.length);
			if (done || !up.every(Boolean)) continue;
			up[index] = false;
			await cluster.kill(index);
			kills++;
			const back = 100 + rand() * 200;
			restarts.push(
				new Promise((resolve) => setTimeout(resolve, back))
					.then(() => cluster.start(index))
					.then(() => {
						up[index] = true;
					}),
			);
		}
		await Promise.all(restarts);
	})();
	const finished = await results;
	await killer;
	const seconds = (Date.now() - started) / 1000;

	expect(finished.map((result) => result.status)).toEqual(ids.map(() => "idle"));
	const records = await readExecutions(execLog);
	const unsafeTwice = [...executionCounts(records.filter((record) => record.toolName === "work"))].filter(([, count]) => count > 1);
	expect(unsafeTwice).toEqual([]);
	const invalid: string[] = [];
	for (const id of ids) {
		const state = await client.session(id).state();
		const problems = transcriptProblems(state.messages);
		if (problems.length > 0 || state.messages.at(-1)?.role !== "assistant") invalid.push(`${id}: ${problems.join("; ") || "does not end with a reply"}`);
	}
	expect(invalid).toEqual([]);
	const executions = records.filter((record) => record.phase === "start" && record.toolName !== "model").length;
	// Sessions whose run went on under a second attempt (a worker died under them).
	const attempts = new Map<string, Set<string>>();
	for (const envelope of cluster.events) {
		const key = `${envelope.sessionId} ${envelope.invocationId}`;
		attempts.set(key, (attempts.get(key) ?? new Set()).add(envelope.attempt));
	}
	const moved = new Set([...attempts].filter(([, set]) => set.size > 1).map(([key]) => key.split(" ")[0])).size;
	console.log(`restate random kills: ${SESSIONS} sessions, ${kills} kills, ${moved} sessions resumed after a kill, ${executions} tool executions, ${seconds.toFixed(1)} s (seed ${SEED})`);
	expect(kills).toBeGreaterThan(0);
	// A kill landed on a run at least once (a worker is rarely idle here): the test tested something.
	expect(moved).toBeGreaterThan(0);
	// And at least once on a `work` call that was running: started on a worker that never logged
	// its end. Such a call ran once (checked above) and cannot run again, so the model got it as
	// interrupted; its session still finished with a valid transcript.
	const ended = new Set(records.filter((record) => record.phase === "end").map((record) => `${record.sessionId} ${record.toolCallId} ${record.worker}`));
	const cutShort = records.filter((record) => record.toolName === "work" && record.phase === "start" && !ended.has(`${record.sessionId} ${record.toolCallId} ${record.worker}`));
	console.log(`restate random kills: ${cutShort.length} work calls killed while running`);
	expect(cutShort.length).toBeGreaterThan(0);
	for (const record of cutShort) {
		const { messages } = await client.session(record.sessionId).state();
		const answers = messages.filter((message) => message.role === "toolResult" && message.toolCallId === record.toolCallId);
		expect(answers, `${record.sessionId} ${record.toolCallId}`).toHaveLength(1);
		const answer = answers[0] as Extract<AgentMessage, { role: "toolResult" }>;
		expect(answer.isError, `${record.sessionId} ${record.toolCallId}`).toBe(true);
		expect(JSON.stringify(answer.content)).toContain("interrupted");
	}
});
