/**
 * `npm run durable:demo`: an agent session on Restate survives a worker killed in the middle of
 * a tool call.
 *
 * Starts restate-server (127.0.0.1, data in a temporary folder) and two workers behind a
 * balancer registered as the deployment, sends a prompt whose tool takes four seconds, kills the
 * worker running the tool with SIGKILL while it runs, and waits for the session to complete on
 * the other worker. The tool is not replay-safe, so the surviving worker does not run it again:
 * the model is told the call was interrupted. Prints a timeline, then the verdict; exits 0 only
 * when the run completed, the tool ran exactly once and the transcript is valid.
 */
import { rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSessionClient } from "../src/restate/client.js";
import type { RunResult, SessionState } from "../src/restate/session-types.js";
import { executionCounts, readExecutions, transcriptProblems } from "./restate/checks.js";
import { startCluster, workerNodeVersion } from "./restate/cluster.js";

const TOOL_MS = 4000;
const started = Date.now();
const at = () => `${String(Date.now() - started).padStart(6)} ms`;
const say = (line: string) => console.log(`${at()}  ${line}`);

/** `promise`, or a failure naming `what` after `ms`: every wait of the demo has a bound. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
	let timer: ReturnType<typeof setTimeout> | undefined;
	const late = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Error(`timed out after ${ms / 1000} s waiting for ${what}`)), ms);
	});
	return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const dir = await mkdtemp(join(tmpdir(), "agentchart-demo-"));
const execLog = join(dir, "executions.log");
// However the demo ends (a cluster that does not start, too), its folder goes.
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
let ok = false;
const workersNode = await workerNodeVersion();
say(`starting restate-server and two workers (Node ${workersNode}) behind a balancer`);
let toolStartedOn!: (worker: string) => void;
const toolStarted = new Promise<string>((resolve) => (toolStartedOn = resolve));
const cluster = await startCluster({
	workers: 2,
	env: { EXEC_LOG: execLog },
	onEvent: ({ worker, event }) => {
		switch (event.type) {
			case "agent_start":
				say(`${worker}: run started`);
				break;
			case "message_end":
				if (event.message.role === "assistant") say(`${worker}: model replied (${event.message.content.map((block) => block.type).join(", ")})`);
				if (event.message.role === "toolResult") say(`${worker}: tool result for ${event.message.toolCallId}: ${event.message.content.map((block) => (block.type === "text" ? block.text : "")).join("").slice(0, 110)}`);
				break;
			case "tool_execution_start":
				say(`${worker}: tool ${event.toolName} (${event.toolCallId}) started`);
				toolStartedOn(worker);
				break;
			case "agent_end":
				say(`${worker}: run ended`);
				break;
		}
	},
});
try {
	say(`restate-server at ${cluster.ingressUrl}; workers ${cluster.workers.map((worker) => `${worker.name} :${worker.port}`).join(", ")}; registered ${cluster.balancer.url}`);
	const client = createSessionClient({ ingressUrl: cluster.ingressUrl });
	const session = client.session(`demo-${Date.now()}`);
	const sent = await session.send.prompt(`slow-tool:${TOOL_MS}`);
	say(`prompt sent to session ${session.sessionId} (invocation ${sent.invocationId}); the tool takes ${TOOL_MS / 1000} s`);
	const victim = await within(toolStarted, 60_000, "the tool to start");
	await new Promise((resolve) => setTimeout(resolve, 1000));
	const index = cluster.workers.findIndex((worker) => worker.name === victim);
	say(`SIGKILL ${victim} (pid ${cluster.workers[index]?.process?.pid}) while its tool runs`);
	await cluster.kill(index);
	const result = await within(client.result<RunResult>(sent), 120_000, "the session to complete");
	say(`session ${result.status}${result.errorMessage ? ` (${result.errorMessage})` : ""}`);
	const state: SessionState = await session.state();
	const executions = await readExecutions(execLog);
	const runs = executionCounts(executions).get(`${session.sessionId} work t0_0`) ?? 0;
	const problems = transcriptProblems(state.messages);
	const completedOn = cluster.events.filter((envelope) => envelope.sessionId === session.sessionId && envelope.event.type === "agent_end").map((envelope) => envelope.worker);
	say(`transcript: ${state.messages.length} messages, ${problems.length === 0 ? "valid" : `INVALID: ${problems.join("; ")}`}; completed on ${completedOn.join(", ") || "?"}`);
	ok = result.status === "idle" && runs === 1 && problems.length === 0 && completedOn.length > 0 && !completedOn.includes(victim);
	const verdict = `durable demo: ${result.status === "idle" ? "completed" : "did not complete"} after worker kill; tool ran ${runs} time${runs === 1 ? "" : "s"}; transcript ${problems.length === 0 ? "valid" : "invalid"}`;
	console.log(ok ? verdict : `${verdict}; FAILED${completedOn.includes(victim) ? " (the run ended on the killed worker)" : ""}`);
} catch (error) {
	console.error("durable demo failed:", error);
} finally {
	await cluster.stop();
	await rm(dir, { recursive: true, force: true });
}
process.exit(ok ? 0 : 1);
