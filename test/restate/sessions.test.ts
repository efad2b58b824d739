/**
 * Agent sessions on a real restate-server with two real workers (Node 22 processes) behind a
 * balancer: workers killed with SIGKILL in the middle of a tool call, of a model stream, and
 * after asking for approval; abort, steering, state while a run goes on. One cluster for the
 * file; a killed worker is started again before the next test.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { executionCounts, readExecutions, toolStarted, transcriptProblems } from "../../scripts/restate/checks.js";
import { useLoggedCluster } from "../../scripts/restate/test-cluster.js";
import { type SessionClient, SessionCallError, watchSession } from "../../src/restate/client.js";
import type { AgentSessionHandlers } from "../../src/restate/session-object.js";
import type { SessionEventEnvelope } from "../../src/restate/session-events.js";
import type { RunResult } from "../../src/restate/session-types.js";
import { textOf } from "../agent/helpers.js";

const setup = useLoggedCluster("agentchart-restate-test-", { env: { STREAM_DELAY_MS: "2" } });
let counter = 0;
const sessionId = (name: string) => `${name}-${Date.now()}-${++counter}`;

/** Resolves with the first event (from now on) that `match` accepts. */
function nextEvent(match: (envelope: SessionEventEnvelope) => boolean, timeoutMs = 60_000): Promise<SessionEventEnvelope> {
	const from = setup.cluster.events.length;
	return new Promise((resolve, reject) => {
		const deadline = Date.now() + timeoutMs;
		const poll = () => {
			const found = setup.cluster.events.slice(from).find(match);
			if (found) return resolve(found);
			if (Date.now() > deadline) return reject(new Error("no such event arrived"));
			setTimeout(poll, 10);
		};
		poll();
	});
}

async function killWorkerNamed(name: string): Promise<void> {
	await setup.cluster.kill(setup.cluster.workers.findIndex((worker) => worker.name === name));
}

/** Rows of a query of Restate's admin SQL API (its `sys_invocation`, `sys_journal`, ... tables). */
async function adminQuery<Row>(query: string): Promise<Row[]> {
	const response = await fetch(`${setup.cluster.server.adminUrl}/query`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify({ query }) });
	if (!response.ok) throw new Error(`admin query failed: ${response.status} ${await response.text()}`);
	return ((await response.json()) as { rows: Row[] }).rows;
}

// A test that killed a worker leaves the next one two workers.
beforeEach(async () => {
	await Promise.all(setup.cluster.workers.map((_, index) => setup.cluster.start(index)));
}, 60_000);

describe("agent sessions on Restate", { timeout: 120_000 }, () => {
	it("offers clients the session's eight handlers as Restate registered them, and the typed client a method for each", async () => {
		const response = await fetch(`${setup.cluster.server.adminUrl}/services/AgentSession`);
		const { handlers } = (await response.json()) as { handlers: { name: string; ty: string; public: boolean }[] };
		const offered = Object.fromEntries(handlers.filter((handler) => handler.public).map((handler) => [handler.name, handler.ty]));
		const kinds: Record<keyof AgentSessionHandlers, "Exclusive" | "Shared"> = {
			prompt: "Exclusive",
			approve: "Exclusive",
			reject: "Exclusive",
			steer: "Shared",
			followUp: "Shared",
			abort: "Shared",
			snapshot: "Shared",
			state: "Shared",
		};
		expect(offered).toEqual(kinds);
		// The typed client has every handler (a compile error otherwise), each a function.
		const missing: Exclude<keyof AgentSessionHandlers, keyof ReturnType<SessionClient["session"]>> extends never ? true : false = true;
		expect(missing).toBe(true);
		const handle = setup.client.session("any") as unknown as Record<string, unknown>;
		expect(Object.keys(kinds).filter((name) => typeof handle[name] !== "function")).toEqual([]);
	});

	it("completes on the other worker when the worker running a tool is killed, without running the tool again", async () => {
		const session = setup.client.session(sessionId("kill-tool"));
		const started = nextEvent(({ sessionId: id, event }) => id === session.sessionId && event.type === "tool_execution_start");
		const sent = await session.send.prompt("slow-tool:2500");
		const { worker } = await started;
		await new Promise((resolve) => setTimeout(resolve, 500));
		await killWorkerNamed(worker);
		const result = await setup.client.result<RunResult>(sent);
		const state = await session.state();
		expect(result.status).toBe("idle");
		expect(transcriptProblems(state.messages)).toEqual([]);
		const counts = executionCounts(await readExecutions(setup.execLog));
		expect(counts.get(`${session.sessionId} work t0_0`)).toBe(1);
		// The first model request had finished: the other worker took its reply from the journal.
		expect([counts.get(`${session.sessionId} model turn0`), counts.get(`${session.sessionId} model turn1`)]).toEqual([1, 1]);
		const toolResult = state.messages.find((message) => message.role === "toolResult");
		expect(textOf(toolResult)).toContain("interrupted by a restart and not run again");
		expect(textOf(state.messages.at(-1))).toBe("Done after the slow tool.");
		const ended = setup.cluster.events.filter((envelope) => envelope.sessionId === session.sessionId && envelope.event.type === "agent_end");
		expect(ended.map((envelope) => envelope.worker)).not.toContain(worker);
	});

	it("runs a replay-safe tool again on the other worker when its worker is killed", async () => {
		const session = setup.client.session(sessionId("kill-safe"));
		const started = nextEvent(({ sessionId: id, event }) => id === session.sessionId && event.type === "tool_execution_start");
		const sent = await session.send.prompt("slow-read:2000");
		const { worker } = await started;
		await new Promise((resolve) => setTimeout(resolve, 300));
		await killWorkerNamed(worker);
		const result = await setup.client.result<RunResult>(sent);
		const state = await session.state();
		expect(result.status).toBe("idle");
		expect(transcriptProblems(state.messages)).toEqual([]);
		expect(textOf(state.messages.find((message) => message.role === "toolResult"))).toBe("value of config is 42");
		const runs = (await readExecutions(setup.execLog)).filter((record) => record.sessionId === session.sessionId && record.toolName === "read_value" && record.phase === "start");
		expect(runs.length).toBe(2);
		expect(new Set(runs.map((record) => record.worker)).size).toBe(2);
	});

	it("makes a model request again when the worker streaming it is killed", async () => {
		const session = setup.client.session(sessionId("kill-stream"));
		const streaming = nextEvent(({ sessionId: id, event }) => id === session.sessionId && event.type === "message_update");
		const sent = await session.send.prompt("slow-stream:800:15");
		const first = await streaming;
		await new Promise((resolve) => setTimeout(resolve, 300));
		await killWorkerNamed(first.worker);
		const result = await setup.client.result<RunResult>(sent);
		const state = await session.state();
		expect(result.status).toBe("idle");
		expect(transcriptProblems(state.messages)).toEqual([]);
		expect(state.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
		expect(textOf(state.messages[1])).toBe("x".repeat(800));
		// The request that was cut off was made again, once.
		expect(executionCounts(await readExecutions(setup.execLog)).get(`${session.sessionId} model turn0`)).toBe(2);
		const updates = setup.cluster.events.filter((envelope) => envelope.sessionId === session.sessionId && envelope.event.type === "message_update");
		// The deltas of the cut-off attempt came from the killed worker; the reply streamed again elsewhere, under a new attempt.
		expect(new Set(updates.map((envelope) => envelope.attempt)).size).toBe(2);
		expect(updates.at(-1)?.worker).not.toBe(first.worker);
	});

	it("sends token deltas to listeners on the side channel and journals the model request as one step", async () => {
		const session = setup.client.session(sessionId("deltas"));
		const sent = await session.send.prompt("slow-stream:800:1");
		const result = await setup.client.result<RunResult>(sent);
		expect(result.status).toBe("idle");
		const deltas = setup.cluster.events.filter((envelope) => envelope.sessionId === session.sessionId && envelope.event.type === "message_update");
		expect(deltas.length).toBeGreaterThanOrEqual(200);
		// The invocation's journal (Restate keeps it after completion): one step for the request, whatever it streamed.
		const journal = await adminQuery<{ entry_type: string; name: string }>(`SELECT entry_type, name FROM sys_journal WHERE id = '${sent.invocationId}' ORDER BY index`);
		expect(journal.filter((entry) => entry.entry_type === "Command: Run").map((entry) => entry.name)).toEqual(["model 1", "store"]);
		expect(journal.length).toBeLessThan(20);
	});

	it("takes an approval after the worker that asked for it was killed, and runs the call once", async () => {
		const session = setup.client.session(sessionId("approval"));
		const asked = nextEvent(({ sessionId: id, event }) => id === session.sessionId && event.type === "approval_requested");
		const waiting = await session.prompt("approval");
		expect(waiting.status).toBe("awaiting-approval");
		expect(waiting.pendingApprovals.map((call) => call.toolName)).toEqual(["deploy"]);
		// The sibling that needs no approval ran before the session stopped to wait.
		expect(executionCounts(await readExecutions(setup.execLog)).get(`${session.sessionId} read_value t0_1`)).toBe(1);
		const { worker } = await asked;
		await killWorkerNamed(worker);
		expect((await session.state()).status).toBe("awaiting-approval");
		await expect(session.approve("no-such-call")).rejects.toMatchObject({ status: 409 });
		// Arguments the tool's schema refuses: refused too, and the session still waits.
		await expect(session.approve("t0_0", { arguments: { nope: true } })).rejects.toBeInstanceOf(SessionCallError);
		expect((await session.state()).status).toBe("awaiting-approval");
		// By its callKey, as docs/restate.md shows (the id works too: the reject test below uses it).
		const done = await session.approve(waiting.pendingApprovals[0]?.callKey ?? "");
		expect(done.status).toBe("idle");
		const state = await session.state();
		expect(transcriptProblems(state.messages)).toEqual([]);
		expect(textOf(state.messages.at(-1))).toBe("Deployed.");
		const counts = executionCounts(await readExecutions(setup.execLog));
		expect(counts.get(`${session.sessionId} deploy t0_0`)).toBe(1);
		expect(counts.get(`${session.sessionId} read_value t0_1`)).toBe(1);
	});

	it("holds no invocation, so no worker, while it waits for approval; an abort then ends the run without running the call", async () => {
		const session = setup.client.session(sessionId("approval-idle"));
		const waiting = await session.prompt("approval");
		expect(waiting.status).toBe("awaiting-approval");
		// Restate's own view (its admin SQL API): every invocation of the session has completed.
		const rows = await adminQuery<{ target: string; status: string }>(`SELECT target, status FROM sys_invocation WHERE target_service_name = 'AgentSession' AND target_service_key = '${session.sessionId}'`);
		expect(rows).toEqual([{ target: `AgentSession/${session.sessionId}/prompt`, status: "completed" }]);
		// Both workers die while the person thinks: nothing is lost (they come back for the abort).
		await Promise.all(setup.cluster.workers.map((_, index) => setup.cluster.kill(index)));
		await Promise.all(setup.cluster.workers.map((_, index) => setup.cluster.start(index)));
		expect((await session.state()).pendingApprovals.map((call) => call.toolCallId)).toEqual(["t0_0"]);
		const aborted = await session.abort();
		expect(aborted).toEqual({ cancelled: null, waiting: true });
		let state = await session.state();
		for (let tries = 0; tries < 200 && state.status !== "idle"; tries++) {
			await new Promise((resolve) => setTimeout(resolve, 50));
			state = await session.state();
		}
		expect(state.status).toBe("idle");
		expect(transcriptProblems(state.messages)).toEqual([]);
		expect(textOf(state.messages.find((message) => message.role === "toolResult" && message.toolCallId === "t0_0"))).toBe("Tool call was aborted before it ran");
		expect(executionCounts(await readExecutions(setup.execLog)).get(`${session.sessionId} deploy t0_0`)).toBeUndefined();
		await expect(session.approve("t0_0")).rejects.toMatchObject({ status: 409 });
	});

	it("shows a waiting call whose tool a deploy changed with the validation error, and runs it only with arguments that fit", async () => {
		const session = setup.client.session(sessionId("approval-deploy"));
		const waiting = await session.prompt("approval");
		expect(waiting.pendingApprovals).toEqual([{ toolCallId: "t0_0", callKey: "t0_0#1", toolName: "deploy", args: { target: "prod" } }]);
		// New worker code: deploy now also requires a region, which the waiting call lacks.
		await writeFile(join(setup.dir, `deploy-v2-${session.sessionId}`), "");
		const [shown] = (await session.state()).pendingApprovals;
		expect(shown?.argsProblem).toContain("region");
		await expect(session.approve("t0_0")).rejects.toMatchObject({ status: 409, message: expect.stringContaining("cannot be approved as it is") });
		expect((await session.state()).status).toBe("awaiting-approval");
		const done = await session.approve("t0_0", { arguments: { target: "prod", region: "eu" } });
		expect(done.status).toBe("idle");
		const state = await session.state();
		expect(transcriptProblems(state.messages)).toEqual([]);
		expect(textOf(state.messages.find((message) => message.role === "toolResult" && message.toolCallId === "t0_0"))).toBe("deployed to prod in eu");
		expect(executionCounts(await readExecutions(setup.execLog)).get(`${session.sessionId} deploy t0_0`)).toBe(1);
	});

	it("rejects a waiting call: it never runs", async () => {
		const session = setup.client.session(sessionId("reject"));
		await session.prompt("approval");
		const done = await session.reject("t0_0", "not today");
		expect(done.status).toBe("idle");
		const state = await session.state();
		expect(transcriptProblems(state.messages)).toEqual([]);
		expect(textOf(state.messages.find((message) => message.role === "toolResult" && message.toolCallId === "t0_0"))).toContain("not today");
		expect(executionCounts(await readExecutions(setup.execLog)).get(`${session.sessionId} deploy t0_0`)).toBeUndefined();
	});

	it("aborts a running tool call (the cancellation reaches the step) and ends the run", async () => {
		const session = setup.client.session(sessionId("abort"));
		const sent = await session.send.prompt("slow-tool:8000");
		await toolStarted(setup.execLog, session.sessionId, "work");
		const aborted = await session.abort();
		expect(aborted.cancelled).toBe(sent.invocationId);
		const result = await setup.client.result<RunResult>(sent);
		expect(result.aborted).toBe(true);
		expect(result.status).toBe("idle");
		const state = await session.state();
		expect(transcriptProblems(state.messages)).toEqual([]);
		expect(textOf(state.messages.find((message) => message.role === "toolResult"))).toBe("worked 8000 ms (aborted)");
		// No model call after the abort.
		expect(state.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult"]);
	});

	it("aborts a prompt sent right behind it: the run ends aborted with a valid transcript, and its tool never completes", async () => {
		const session = setup.client.session(sessionId("abort-behind"));
		const sent = await session.send.prompt("slow-tool:8000");
		// Sent at once: the prompt may not have reached a worker yet, or only just.
		const aborted = await session.abort();
		expect(aborted.waiting).toBe(false);
		const result = await setup.client.result<RunResult>(sent);
		expect(result.aborted).toBe(true);
		expect(result.status).toBe("idle");
		const state = await session.state();
		expect(transcriptProblems(state.messages)).toEqual([]);
		expect(state.messages.map((message) => textOf(message))).not.toContain("Done after the slow tool.");
		const works = (await readExecutions(setup.execLog)).filter((record) => record.sessionId === session.sessionId && record.toolName === "work");
		expect(works.filter((record) => record.phase === "end" && record.aborted !== true)).toEqual([]);
	});

	it("aborts a prompt waiting behind another exclusive call before it runs, and runs the prompt sent after the abort", async () => {
		const session = setup.client.session(sessionId("abort-queued"));
		const first = await session.send.prompt("slow-tool:8000");
		await toolStarted(setup.execLog, session.sessionId, "work");
		// Queued behind the first run: no worker has it yet.
		const second = await session.send.prompt("slow-tool:100");
		const aborted = await session.abort();
		expect(aborted).toEqual({ cancelled: first.invocationId, waiting: false });
		const firstResult = await setup.client.result<RunResult>(first);
		const secondResult = await setup.client.result<RunResult>(second);
		expect(firstResult.aborted).toBe(true);
		expect(secondResult.aborted).toBe(true);
		expect(secondResult.status).toBe("idle");
		// The second run ended at its start: its prompt, and the model's reply that never was.
		expect(secondResult.newMessages.map((message) => message.role)).toEqual(["user", "assistant"]);
		expect((secondResult.newMessages[1] as { stopReason?: string }).stopReason).toBe("aborted");
		const counts = executionCounts(await readExecutions(setup.execLog));
		expect(counts.get(`${session.sessionId} model turn0`)).toBe(1);
		expect(counts.get(`${session.sessionId} model turn1`)).toBeUndefined();
		expect(counts.get(`${session.sessionId} work t1_0`)).toBeUndefined();
		// A prompt sent after the abort answered runs as usual.
		const third = await session.prompt("hello");
		expect(third.aborted).toBe(false);
		expect(textOf(third.newMessages.at(-1))).toBe("Done after the slow tool.");
		const state = await session.state();
		expect(state.status).toBe("idle");
		expect(transcriptProblems(state.messages)).toEqual([]);
		expect(state.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "user", "assistant", "user", "assistant"]);
	});

	it("delivers a steering message to the run going on at its next turn, and shows finished turns in state meanwhile", async () => {
		const session = setup.client.session(sessionId("steer"));
		const started = nextEvent(({ sessionId: id, event }) => id === session.sessionId && event.type === "tool_execution_start");
		const sent = await session.send.prompt("slow-tool:1500");
		await started;
		await session.steer("Also mention the weather.");
		const during = await session.state();
		expect(during.status).toBe("running");
		const result = await setup.client.result<RunResult>(sent);
		expect(result.status).toBe("idle");
		const state = await session.state();
		expect(transcriptProblems(state.messages)).toEqual([]);
		expect(state.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "user", "assistant"]);
		expect(textOf(state.messages[3])).toBe("Also mention the weather.");
	});

	it("keeps a steering message that arrived before the worker running the turn was killed", async () => {
		const session = setup.client.session(sessionId("steer-kill"));
		const started = nextEvent(({ sessionId: id, event }) => id === session.sessionId && event.type === "tool_execution_start");
		const sent = await session.send.prompt("slow-tool:2500");
		const { worker } = await started;
		await session.steer("Also mention the weather.");
		await new Promise((resolve) => setTimeout(resolve, 300));
		await killWorkerNamed(worker);
		const result = await setup.client.result<RunResult>(sent);
		expect(result.status).toBe("idle");
		const state = await session.state();
		expect(transcriptProblems(state.messages)).toEqual([]);
		expect(state.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "user", "assistant"]);
		expect(textOf(state.messages[3])).toBe("Also mention the weather.");
		expect(executionCounts(await readExecutions(setup.execLog)).get(`${session.sessionId} work t0_0`)).toBe(1);
	});

	it("gives a listener that connects late the events from then on, and what came before from state", async () => {
		const session = setup.client.session(sessionId("late"));
		const started = nextEvent(({ sessionId: id, event }) => id === session.sessionId && event.type === "tool_execution_start");
		const sent = await session.send.prompt("slow-tool:1500");
		await started;
		const controller = new AbortController();
		const seen: SessionEventEnvelope[] = [];
		const watching = (async () => {
			for await (const envelope of watchSession(setup.cluster.hubUrl, session.sessionId, controller.signal)) {
				seen.push(envelope);
				if (envelope.event.type === "agent_end") return;
			}
		})();
		const during = await session.state();
		expect(during.status).toBe("running");
		const result = await setup.client.result<RunResult>(sent);
		expect(result.status).toBe("idle");
		// Every wait has a bound: the stream ends at agent_end, or the abort ends it.
		const bound = setTimeout(() => controller.abort(), 15_000);
		await watching;
		clearTimeout(bound);
		controller.abort();
		const types = seen.map((envelope) => envelope.event.type);
		expect(types).not.toContain("agent_start");
		expect(types).not.toContain("tool_execution_start");
		expect(types).toContain("tool_execution_end");
		expect(types.filter((type) => type === "message_update").length).toBeGreaterThan(0);
		expect(types.at(-1)).toBe("agent_end");
		const state = await session.state();
		expect(state.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
		expect(transcriptProblems(state.messages)).toEqual([]);
	});

	it("starts a run with a follow-up sent while the session is idle", async () => {
		const session = setup.client.session(sessionId("follow-up"));
		await session.prompt("hello");
		await session.followUp("again");
		let state = await session.state();
		for (let tries = 0; tries < 100 && state.messages.length < 4; tries++) {
			await new Promise((resolve) => setTimeout(resolve, 50));
			state = await session.state();
		}
		expect(state.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
		expect(textOf(state.messages[2])).toBe("again");
		// The stored snapshot is the agent's own format: Agent.restore reads it.
		const snapshot = await session.snapshot();
		expect(snapshot?.machine.context.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
	});

	it("answers follow-ups sent together to an idle session one at a time, each in a turn of its own (the session's follow-up mode)", async () => {
		const session = setup.client.session(sessionId("follow-ups"));
		await session.prompt("hello");
		// Sent at once, they reach the idle session's delivery together.
		await Promise.all(["first", "second", "third"].map((text) => session.followUp(text)));
		let state = await session.state();
		for (let tries = 0; tries < 200 && (state.status !== "idle" || state.messages.length < 8); tries++) {
			await new Promise((resolve) => setTimeout(resolve, 50));
			state = await session.state();
		}
		// One message a turn: each follow-up has its own reply (one prompt of all three had one).
		expect(state.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant"]);
		expect(state.messages.filter((message) => message.role === "user").map(textOf).sort()).toEqual(["first", "hello", "second", "third"]);
	});
});
