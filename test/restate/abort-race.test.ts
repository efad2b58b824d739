/**
 * A call sent once `abort` has answered runs as usual (docs/restate.md, Limits): the abort's mark,
 * which settles it behind the calls received before it, must be in the session's queue before the
 * abort answers. It was sent one way and reached the queue some milliseconds later, so a prompt
 * sent on the abort's answer could get there first: on an idle session or behind a run the abort
 * cancelled, the prompt was aborted at its start ("Request was aborted", an aborted reply left in
 * the transcript); on a run waiting for approval (which the mark aborts) it was refused with 409.
 * Each case runs 30 times, ten sessions at a time: with the mark sent one way, 4 to 8 of the 30
 * prompts behind a cancelled run were aborted on each of five runs of this test (and 0 to 3 of
 * each of the other cases).
 */
import { expect, it } from "vitest";
import { toolStarted, transcriptProblems } from "../../scripts/restate/checks.js";
import { useLoggedCluster } from "../../scripts/restate/test-cluster.js";
import { SessionCallError } from "../../src/restate/client.js";
import type { RunResult } from "../../src/restate/session-types.js";
import { textOf } from "../agent/helpers.js";

const setup = useLoggedCluster("agentchart-abort-race-", { env: { STREAM_DELAY_MS: "2" } });

const ROUNDS = 30;
const AT_ONCE = 10;

/** What went wrong in each round of `round` (an empty list when nothing did), ten rounds at a time. */
async function problemsOf(name: string, round: (sessionId: string) => Promise<string | undefined>): Promise<string[]> {
	const problems: string[] = [];
	for (let first = 0; first < ROUNDS; first += AT_ONCE) {
		const batch = Array.from({ length: Math.min(AT_ONCE, ROUNDS - first) }, (_, index) => `${name}-${Date.now()}-${first + index}`);
		for (const problem of await Promise.all(batch.map(round))) if (problem !== undefined) problems.push(problem);
	}
	return problems;
}

/** Why the prompt sent after the abort did not run as usual, or undefined when it did. */
async function promptAfterAbort(sessionId: string, expectedReply: string): Promise<string | undefined> {
	let result: RunResult;
	try {
		result = await setup.client.session(sessionId).prompt("hello", { signal: AbortSignal.timeout(60_000) });
	} catch (error) {
		if (error instanceof SessionCallError) return `${sessionId}: refused with ${error.status}: ${error.message}`;
		throw error;
	}
	if (result.aborted || result.errorMessage !== undefined) return `${sessionId}: aborted (${String(result.errorMessage)})`;
	const reply = textOf(result.newMessages.at(-1));
	if (reply !== expectedReply) return `${sessionId}: replied ${JSON.stringify(reply)}`;
	const problems = transcriptProblems((await setup.client.session(sessionId).state()).messages);
	return problems.length > 0 ? `${sessionId}: ${problems.join("; ")}` : undefined;
}

it("runs a prompt sent once the abort answered: on an idle session, behind a cancelled run, and after aborting a run waiting for approval", { timeout: 180_000 }, async () => {
	const idle = await problemsOf("idle", async (sessionId) => {
		expect(await setup.client.session(sessionId).abort()).toEqual({ cancelled: null, waiting: false });
		return promptAfterAbort(sessionId, "Hello from hello.");
	});
	const running = await problemsOf("running", async (sessionId) => {
		const session = setup.client.session(sessionId);
		const sent = await session.send.prompt("slow-tool:20000");
		await toolStarted(setup.execLog, sessionId, "work");
		expect((await session.abort()).cancelled).toBe(sent.invocationId);
		const problem = await promptAfterAbort(sessionId, "Done after the slow tool.");
		expect((await setup.client.result<RunResult>(sent)).aborted).toBe(true);
		return problem;
	});
	const waiting = await problemsOf("waiting", async (sessionId) => {
		const session = setup.client.session(sessionId);
		expect((await session.prompt("approval")).status).toBe("awaiting-approval");
		expect(await session.abort()).toEqual({ cancelled: null, waiting: true });
		const problem = await promptAfterAbort(sessionId, "Deployed.");
		const answered = (await session.state()).messages.find((message) => message.role === "toolResult" && message.toolCallId === "t0_0");
		return problem ?? (textOf(answered) === "Tool call was aborted before it ran" ? undefined : `${sessionId}: the waiting call was answered ${JSON.stringify(textOf(answered))}`);
	});
	expect({ idle, running, waiting }).toEqual({ idle: [], running: [], waiting: [] });
});
