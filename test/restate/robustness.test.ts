/**
 * What a session does with what it cannot take, on a real restate-server with a real worker
 * (Node 22) behind the balancer: input the agent refuses (answered at once with a 400, the
 * session left usable, nothing queued), a message in the inbox that cannot be delivered
 * (dropped), a tool result that is not JSON (an error result for the model, not a retry), the
 * inbox shown by `state`, and a tool whose attempt was lost while its worker lives on (its
 * signal aborted). Every wait has a bound: without the fixes these calls never answer, and the
 * test fails instead of hanging.
 */
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { textOf } from "../agent/helpers.js";
import { type Balancer, startBalancer } from "../../scripts/restate/balancer.js";
import { type ExecutionRecord, executionCounts, ingressCall, readExecutions, toolStarted, transcriptProblems } from "../../scripts/restate/checks.js";
import { useLoggedCluster } from "../../scripts/restate/test-cluster.js";
import type { RunResult } from "../../src/restate/session-types.js";
import type { ToolResultMessage } from "../../src/types/messages.js";

const setup = useLoggedCluster("agentchart-restate-robust-", { env: { STREAM_DELAY_MS: "2" } });
/** A balancer started in place of the cluster's (the lost-attempt test), stopped with it. */
let replacement: Balancer | undefined;
// Registered after useLoggedCluster's afterAll, so it runs first (vitest runs them in reverse): the replacement closes before the cluster stops.
afterAll(async () => {
	await replacement?.close();
}, 60_000);
let counter = 0;
const sessionId = (name: string) => `${name}-${Date.now()}-${++counter}`;
/** How long a call that should answer at once may take (a retried call never answers). */
const ANSWER_MS = 15_000;

/** A raw call of a session handler through the ingress (see {@link ingressCall}). */
function rawCall(id: string, handler: string, body: string | undefined, service = "AgentSession"): Promise<{ status: number; message: string }> {
	return ingressCall(setup.cluster.ingressUrl, service, id, handler, body, ANSWER_MS);
}

describe("agent sessions on Restate, with what they cannot take", { timeout: 120_000 }, () => {
	it("answers input the agent refuses at once with a 400 naming the handler, queues none of it, and takes the next call", async () => {
		const idle = setup.client.session(sessionId("bad-input"));
		const waiting = setup.client.session(sessionId("bad-decision"));
		expect((await waiting.prompt("approval")).status).toBe("awaiting-approval");
		const cases: [string, string, string | undefined][] = [
			[idle.sessionId, "prompt", undefined],
			[idle.sessionId, "prompt", "null"],
			[idle.sessionId, "prompt", "123"],
			[idle.sessionId, "prompt", "{}"],
			[idle.sessionId, "prompt", '[{"role":"user","content":5}]'],
			[waiting.sessionId, "approve", undefined],
			[waiting.sessionId, "approve", "null"],
			[waiting.sessionId, "approve", '"t0_0"'],
			[waiting.sessionId, "reject", "null"],
			[waiting.sessionId, "reject", '{"toolCallId":"t0_0","reason":7}'],
			[waiting.sessionId, "approve", '{"toolCallId":"t0_0","args":{"ms":1}}'],
			[waiting.sessionId, "reject", '{"toolCallId":"t0_0","reson":"no"}'],
			[idle.sessionId, "steer", "{}"],
			[idle.sessionId, "steer", "123"],
			[idle.sessionId, "followUp", "null"],
			[idle.sessionId, "followUp", undefined],
			[waiting.sessionId, "steer", '{"role":"user"}'],
		];
		for (const [id, handler, body] of cases) {
			const answer = await rawCall(id, handler, body);
			expect({ handler, body, status: answer.status }).toEqual({ handler, body, status: 400 });
			expect(answer.message).toContain(`${handler} refused its input`);
		}
		const bare = await rawCall(waiting.sessionId, "approve", '"t0_0"');
		expect(bare.message).toContain('send { "toolCallId": "t0_0" }');
		// The typed client's callers get the same (a SessionCallError with the status).
		await expect(idle.prompt(undefined as unknown as string, { signal: AbortSignal.timeout(ANSWER_MS) })).rejects.toMatchObject({ status: 400 });

		// Nothing was queued, nothing retries: both sessions take their next call at once.
		const signal = AbortSignal.timeout(ANSWER_MS);
		expect((await idle.state()).steeringQueue).toEqual([]);
		const done = await idle.prompt("hello", { signal });
		expect(done.status).toBe("idle");
		const decided = await waiting.approve("t0_0", { signal });
		expect(decided.status).toBe("idle");
		for (const session of [idle, waiting]) {
			const state = await session.state();
			expect(transcriptProblems(state.messages)).toEqual([]);
			expect(state.messages.filter((message) => message.role === "user").length).toBe(1);
		}
		const rows = await adminQuery<{ target: string; status: string }>(`SELECT target, status FROM sys_invocation WHERE target_service_key IN ('${idle.sessionId}', '${waiting.sessionId}') AND status <> 'completed'`);
		expect(rows).toEqual([]);
	});

	it("answers a call whose agent options cannot be made with a terminal 500 naming agent(), and leaves nothing for an abort to cancel", async () => {
		// Without the fix the throwing lookup was retried for an hour: no answer, every later call of the session (an abort's run included) behind it.
		const throwing = setup.client.session(sessionId("options-throw"));
		const refusing = setup.client.session(sessionId("options-timeout"));
		const thrown = await rawCall(throwing.sessionId, "prompt", JSON.stringify("hello"));
		expect(thrown.status).toBe(500);
		expect(thrown.message).toContain(`the worker's agent("${throwing.sessionId}") threw: the user database is unreachable`);
		const refused = await rawCall(refusing.sessionId, "prompt", JSON.stringify("hello"));
		expect(refused.status).toBe(500);
		expect(refused.message).toContain("approvalTimeoutMs is not supported on Restate");
		// An abort finds nothing running: the refused prompts never became the session's current call.
		for (const session of [throwing, refusing]) expect(await session.abort({ signal: AbortSignal.timeout(ANSWER_MS) })).toMatchObject({ cancelled: null });
		// Nothing left running or retrying (the abort's own mark settles right after it answers).
		const unfinished = () => adminQuery<{ target: string; status: string }>(`SELECT target, status FROM sys_invocation WHERE target_service_key IN ('${throwing.sessionId}', '${refusing.sessionId}') AND status <> 'completed'`);
		let rows = await unfinished();
		for (let tries = 0; tries < 50 && rows.length > 0; tries++) {
			await new Promise((resolve) => setTimeout(resolve, 100));
			rows = await unfinished();
		}
		expect(rows).toEqual([]);
	});

	it("drops a message in the inbox that the agent cannot take, delivers the others, and takes the next call", async () => {
		const session = setup.client.session(sessionId("bad-inbox"));
		// Left in the inbox by a call between objects (steer checks what it queues): each push asks for a delivery.
		for (const item of [{ mode: "steer", message: 123 }, { mode: "sideways", message: { role: "user", content: "x", timestamp: 0 } }, { mode: "followUp", message: { role: "user", content: "queued right", timestamp: 0 } }]) {
			const pushed = await rawCall(session.sessionId, "push", JSON.stringify(item), "TestInboxBackdoor");
			expect(pushed.status).toBe(200);
		}
		const done = await session.prompt("hello", { signal: AbortSignal.timeout(ANSWER_MS) });
		expect(done.status).toBe("idle");
		const state = await session.state();
		expect(transcriptProblems(state.messages)).toEqual([]);
		expect(state.messages.filter((message) => message.role === "user").map(textOf)).toEqual(["queued right", "hello"]);
	});

	it("answers a call whose result is not JSON with an error the model reads, once, not as interrupted by a restart", async () => {
		const session = setup.client.session(sessionId("bigint"));
		const result = await session.prompt("bigint", { signal: AbortSignal.timeout(ANSWER_MS) });
		expect(result.status).toBe("idle");
		const toolResult = result.newMessages.find((message): message is ToolResultMessage => message.role === "toolResult");
		expect(toolResult?.isError).toBe(true);
		expect(textOf(toolResult)).toContain('Tool "count_rows" ran, but its result could not be stored: it is not JSON-serializable');
		expect(textOf(toolResult)).not.toContain("interrupted");
		expect(textOf(result.newMessages.at(-1))).toBe("Counted.");
		expect(executionCounts(await readExecutions(setup.execLog)).get(`${session.sessionId} count_rows t0_0`)).toBe(1);
	});

	it("does not run a replay-safe tool whose result is not JSON again and again", async () => {
		const session = setup.client.session(sessionId("bigint-safe"));
		const result = await session.prompt("bigint:safe", { signal: AbortSignal.timeout(ANSWER_MS) });
		expect(result.status).toBe("idle");
		const toolResult = result.newMessages.find((message) => message.role === "toolResult");
		expect(textOf(toolResult)).toContain("not JSON-serializable");
		expect(executionCounts(await readExecutions(setup.execLog)).get(`${session.sessionId} count_rows_safe t0_0`)).toBe(1);
	});

	it("ends the turn as a failed model request when the model's reply is not JSON, without making the request again and again", async () => {
		const session = setup.client.session(sessionId("bad-reply"));
		const result = await session.prompt("bad-reply", { signal: AbortSignal.timeout(ANSWER_MS) });
		expect(result.status).toBe("idle");
		expect(result.errorMessage).toContain("The model's reply could not be stored: it is not JSON-serializable");
		const reply = result.newMessages.at(-1) as { role: string; stopReason?: string } | undefined;
		expect([reply?.role, reply?.stopReason]).toEqual(["assistant", "error"]);
		expect(executionCounts(await readExecutions(setup.execLog)).get(`${session.sessionId} model turn0`)).toBe(1);
	});

	it("shows in state the messages steered and queued while a run goes on, until the run takes them", async () => {
		const session = setup.client.session(sessionId("queues"));
		const sent = await session.send.prompt("slow-tool:2000");
		await toolStarted(setup.execLog, session.sessionId, "work");
		await session.steer("Also mention the weather.");
		await session.followUp("Then summarize.");
		const during = await session.state();
		expect(during.status).toBe("running");
		expect(during.steeringQueue.map(textOf)).toEqual(["Also mention the weather."]);
		expect(during.followUpQueue.map(textOf)).toEqual(["Then summarize."]);
		const result = await setup.client.result<RunResult>(sent, { signal: AbortSignal.timeout(60_000) });
		expect(result.status).toBe("idle");
		const after = await session.state();
		expect([after.steeringQueue, after.followUpQueue]).toEqual([[], []]);
		expect(after.messages.filter((message) => message.role === "user").map(textOf)).toEqual(["slow-tool:2000", "Also mention the weather.", "Then summarize."]);
	});

	it("shows a steered and a queued message at every moment of the run, in a queue or in the transcript, after the run took them too", async () => {
		// Before, once a turn's end took them from the inbox they were nowhere until the turn that used them ended (the follow-up until the run's end).
		const session = setup.client.session(sessionId("queues-taken"));
		const sent = await session.send.prompt("slow-turns:3:700");
		await toolStarted(setup.execLog, session.sessionId, "work");
		await session.steer("Also mention the weather.");
		await session.followUp("Then summarize.");
		let ended = false;
		const result = setup.client.result<RunResult>(sent, { signal: AbortSignal.timeout(60_000) }).finally(() => (ended = true));
		let polls = 0;
		while (!ended) {
			const state = await session.state();
			const shown = (text: string) => [...state.steeringQueue, ...state.followUpQueue, ...state.messages].filter((message) => message.role === "user" && textOf(message) === text).length;
			expect({ polls, steered: shown("Also mention the weather."), queued: shown("Then summarize.") }).toEqual({ polls, steered: 1, queued: 1 });
			polls += 1;
			await new Promise((resolve) => setTimeout(resolve, 10));
		}
		expect((await result).status).toBe("idle");
		expect(polls).toBeGreaterThan(10);
	});

	it("shows a message steered to an idle session at every moment of the run it starts", async () => {
		// Before, the delivery took it from the inbox, and until the run's first turn was checkpointed
		// (or the run ended) `state` had it in no queue and no transcript (a probe: 27 to 37 of 45 polls).
		// A new session: the worker's model reads its scenario from the first user message.
		const session = setup.client.session(sessionId("steer-idle-shown"));
		const text = "slow-turns:2:600";
		expect(await session.steer(text)).toEqual({ queued: true });
		const deadline = Date.now() + 60_000;
		let polls = 0;
		let done = false;
		while (!done && Date.now() < deadline) {
			const state = await session.state();
			const shown = [...state.steeringQueue, ...state.followUpQueue, ...state.messages].filter((message) => message.role === "user" && textOf(message) === text).length;
			expect({ polls, shown }).toEqual({ polls, shown: 1 });
			done = state.status === "idle" && state.messages.some((message) => message.role === "assistant" && textOf(message) === "Done with the slow turns.");
			polls += 1;
			await new Promise((resolve) => setTimeout(resolve, 10));
		}
		expect(done).toBe(true);
		expect(polls).toBeGreaterThan(10);
	});

	it("aborts a run waiting for approval when the abort comes right after a steer (the delivery does not make it another run)", async () => {
		const sessions = [0, 1, 2].map(() => setup.client.session(sessionId("abort-after-steer")));
		for (const session of sessions) expect((await session.prompt("approval")).status).toBe("awaiting-approval");
		for (const session of sessions) {
			await session.steer("Also check staging.");
			// The steer's delivery may still be going on (a loaded machine): the abort cancels it
			// then, and the mark behind it aborts the waiting run all the same. Either way, below.
			const aborted = await session.abort();
			expect(aborted.waiting).toBe(aborted.cancelled === null);
		}
		for (const session of sessions) {
			let state = await session.state();
			for (let tries = 0; tries < 100 && state.status !== "idle"; tries++) {
				await new Promise((resolve) => setTimeout(resolve, 100));
				state = await session.state();
			}
			expect(state.status).toBe("idle");
			expect(transcriptProblems(state.messages)).toEqual([]);
			expect(textOf(state.messages.find((message) => message.role === "toolResult" && message.toolCallId === "t0_0"))).toBe("Tool call was aborted before it ran");
			expect(executionCounts(await readExecutions(setup.execLog)).get(`${session.sessionId} deploy t0_0`)).toBeUndefined();
		}
	});

	it("keeps a steered and a queued message while the worker cannot make the session's agent, shows them queued, and delivers them once it can", async () => {
		// Before, the delivery took them from the inbox, was refused (agent() threw) and they were gone for good.
		const session = setup.client.session(sessionId("options-fail-steer"));
		expect((await session.prompt("hello")).status).toBe("idle");
		// A delivery first, so that the inbox's hand-overs are numbered past the first (a review: a
		// refused delivery cleared the hand-over, the next was numbered 1 again, below what the
		// session had recorded, and its message was shown nowhere until its run stored its end).
		expect(await session.followUp("Warm up.")).toEqual({ queued: true });
		for (let tries = 0; tries < 300 && (await session.state()).messages.filter((message) => message.role === "user").length < 2; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
		const marker = join(setup.dir, `options-fail-${session.sessionId}`);
		await writeFile(marker, "");
		expect(await session.steer("Keep me.")).toEqual({ queued: true });
		expect(await session.followUp("Keep me too.")).toEqual({ queued: true });
		// The delivery each sent is refused meanwhile; the messages wait in the inbox.
		await new Promise((resolve) => setTimeout(resolve, 1500));
		const waiting = await session.state();
		expect([waiting.status, waiting.steeringQueue.map(textOf), waiting.followUpQueue.map(textOf)]).toEqual(["idle", ["Keep me."], ["Keep me too."]]);
		await rm(marker);
		let state = await session.state();
		for (let tries = 0; tries < 3000 && (state.status !== "idle" || state.messages.filter((message) => message.role === "user").length < 4); tries++) {
			// Shown once at every moment: in a queue, or in the transcript.
			const shown = (text: string) => [...state.steeringQueue, ...state.followUpQueue, ...state.messages].filter((message) => message.role === "user" && textOf(message) === text).length;
			expect({ tries, kept: shown("Keep me."), keptToo: shown("Keep me too.") }).toEqual({ tries, kept: 1, keptToo: 1 });
			await new Promise((resolve) => setTimeout(resolve, 10));
			state = await session.state();
		}
		expect(state.messages.filter((message) => message.role === "user").map(textOf)).toEqual(["hello", "Warm up.", "Keep me.", "Keep me too."]);
		expect([state.steeringQueue, state.followUpQueue]).toEqual([[], []]);
		expect(transcriptProblems(state.messages)).toEqual([]);
	});

	it("schedules one delivery again however many messages are steered while the worker cannot make the agent", async () => {
		// Before, each steer's refused delivery started a chain of its own, each scheduling the next for as long as the worker failed.
		const session = setup.client.session(sessionId("options-fail-chains"));
		expect((await session.prompt("hello")).status).toBe("idle");
		const marker = join(setup.dir, `options-fail-${session.sessionId}`);
		await writeFile(marker, "");
		for (const text of ["one", "two", "three", "four", "five"]) {
			expect(await session.steer(text)).toEqual({ queued: true });
			await new Promise((resolve) => setTimeout(resolve, 150));
		}
		const scheduled = async () =>
			(await adminQuery<{ n: number }>(`SELECT count(*) AS n FROM sys_invocation WHERE target_service_key = '${session.sessionId}' AND target_handler_name = 'deliver' AND status <> 'completed'`)).reduce((sum, row) => sum + Number(row.n), 0);
		for (let sample = 0; sample < 4; sample++) {
			await new Promise((resolve) => setTimeout(resolve, 700));
			expect(await scheduled()).toBeLessThanOrEqual(1);
		}
		expect((await session.state()).steeringQueue.map(textOf)).toEqual(["one", "two", "three", "four", "five"]);
		await rm(marker);
		let state = await session.state();
		for (let tries = 0; tries < 400 && (state.status !== "idle" || state.messages.filter((message) => message.role === "user").length < 6); tries++) {
			await new Promise((resolve) => setTimeout(resolve, 100));
			state = await session.state();
		}
		expect(state.messages.filter((message) => message.role === "user").map(textOf)).toEqual(["hello", "one", "two", "three", "four", "five"]);
		expect(transcriptProblems(state.messages)).toEqual([]);
	});

	it("goes on without a tool a deploy removed: a call of it that waits can be rejected or aborted, not approved, and the session takes prompts again", async () => {
		// Before, every command of such a session was refused (the stored session names a tool the worker lacks): stuck for good.
		const rejecting = setup.client.session(sessionId("tool-gone-reject"));
		const aborting = setup.client.session(sessionId("tool-gone-abort"));
		const idle = setup.client.session(sessionId("tool-gone-idle"));
		for (const session of [rejecting, aborting]) expect((await session.prompt("approval")).status).toBe("awaiting-approval");
		expect((await idle.prompt("approval")).status).toBe("awaiting-approval");
		expect((await idle.approve("t0_0")).status).toBe("idle");
		for (const session of [rejecting, aborting, idle]) await writeFile(join(setup.dir, `no-deploy-${session.sessionId}`), "");

		const [shown] = (await rejecting.state()).pendingApprovals;
		expect(shown?.argsProblem).toContain(`tool "deploy" is not among the worker's tools any more`);
		await expect(rejecting.approve("t0_0")).rejects.toMatchObject({ status: 409, message: expect.stringContaining(`tool call "t0_0#1" cannot be approved: tool "deploy" is not among the worker's tools`) });
		const rejected = await rejecting.reject("t0_0", "the tool is gone");
		expect(rejected.status).toBe("idle");
		const after = await rejecting.state();
		expect(transcriptProblems(after.messages)).toEqual([]);
		expect(textOf(after.messages.find((message) => message.role === "toolResult" && message.toolCallId === "t0_0"))).toContain("the tool is gone");

		await aborting.abort();
		let state = await aborting.state();
		for (let tries = 0; tries < 100 && state.status !== "idle"; tries++) {
			await new Promise((resolve) => setTimeout(resolve, 100));
			state = await aborting.state();
		}
		expect(state.status).toBe("idle");
		expect(transcriptProblems(state.messages)).toEqual([]);

		expect((await idle.prompt("hello")).status).toBe("idle");
		const runs = executionCounts(await readExecutions(setup.execLog));
		expect([runs.get(`${rejecting.sessionId} deploy t0_0`), runs.get(`${aborting.sessionId} deploy t0_0`), runs.get(`${idle.sessionId} deploy t0_0`)]).toEqual([undefined, undefined, 1]);
	});

	it("shows in state the calls that still wait while an approved call of the same reply runs", async () => {
		// Before, `state` listed no waiting call while any run went on, though the second deploy still waited.
		const session = setup.client.session(sessionId("still-waiting"));
		const waiting = await session.prompt("approval-two:3000");
		expect(waiting.pendingApprovals.map((call) => call.callKey)).toEqual(["t0_0#1", "t0_1#1"]);
		const sent = await session.send.approve("t0_0#1");
		await toolStarted(setup.execLog, session.sessionId, "deploy");
		const during = await session.state();
		expect([during.status, during.pendingApprovals.map((call) => call.callKey)]).toEqual(["running", ["t0_1#1"]]);
		const stopped = await setup.client.result<RunResult>(sent, { signal: AbortSignal.timeout(60_000) });
		expect([stopped.status, stopped.pendingApprovals.map((call) => call.callKey)]).toEqual(["awaiting-approval", ["t0_1#1"]]);
		expect((await session.reject("t0_1#1")).status).toBe("idle");
	});

	// Last: it replaces the cluster's balancer.
	it("aborts the signal of a tool whose attempt was lost while its worker lives on (the call is answered as interrupted elsewhere)", async () => {
		const session = setup.client.session(sessionId("lost-attempt"));
		const sent = await session.send.prompt("slow-tool:6000");
		await toolStarted(setup.execLog, session.sessionId, "work");
		// The connection to the worker drops (restate-server restarting, a network cut): the
		// balancer goes, and comes back on the same address for Restate's retry.
		const port = Number(new URL(setup.cluster.balancer.url).port);
		await setup.cluster.balancer.close();
		replacement = await startBalancer(port, () => setup.cluster.workers.map((worker) => worker.url));
		const result = await setup.client.result<RunResult>(sent, { signal: AbortSignal.timeout(60_000) });
		expect(result.status).toBe("idle");
		expect(textOf(result.newMessages.find((message) => message.role === "toolResult"))).toContain("interrupted by a restart");
		// The tool logs its end as it returns (a moment after its signal was aborted, at the drop).
		let work: (ExecutionRecord & { aborted?: boolean })[] = [];
		for (let tries = 0; tries < 30 && work.length < 2; tries++) {
			if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 100));
			work = (await readExecutions(setup.execLog)).filter((record) => record.sessionId === session.sessionId && record.toolName === "work");
		}
		expect(work.map((record) => record.phase)).toEqual(["start", "end"]);
		const [start, end] = work as [ExecutionRecord, ExecutionRecord & { aborted?: boolean }];
		// Told to stop when its attempt ended, well before its 6 s were up.
		expect(end.aborted).toBe(true);
		expect(end.at - start.at).toBeLessThan(4000);
	});
});

/** Rows of a query of Restate's admin SQL API. */
async function adminQuery<Row>(query: string): Promise<Row[]> {
	const response = await fetch(`${setup.cluster.server.adminUrl}/query`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify({ query }) });
	if (!response.ok) throw new Error(`admin query failed: ${response.status} ${await response.text()}`);
	return ((await response.json()) as { rows: Row[] }).rows;
}
