/**
 * `agentchart/restate` as a user installs it: the packed tarball (`npm run build`, then `npm pack`)
 * installed into a throwaway project, its workers importing `agentchart` and `agentchart/restate`
 * from there on Node 22+, its client `agentchart/restate/client` from there too. The demo's
 * scenario runs on it: the worker running a tool is killed, the session completes on the other.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { executionCounts, readExecutions, toolStarted, transcriptProblems } from "../../scripts/restate/checks.js";
import { type Cluster, startCluster } from "../../scripts/restate/cluster.js";
import type * as ClientModule from "../../src/restate/client.js";
import type { RunResult } from "../../src/restate/session-types.js";
import { consumerProject } from "../package/consumer-project.js";

let cluster: Cluster;
let packedClient: typeof ClientModule;
let dir: string;
let execLog: string;

beforeAll(async () => {
	const project = await consumerProject();
	packedClient = (await import(pathToFileURL(join(project.dir, "node_modules/agentchart/dist/restate/client.js")).href)) as typeof ClientModule;
	dir = await mkdtemp(join(tmpdir(), "agentchart-restate-packed-"));
	execLog = join(dir, "executions.log");
	await writeFile(execLog, "");
	cluster = await startCluster({ workers: 2, packed: project.dir, env: { EXEC_LOG: execLog, STREAM_DELAY_MS: "2" } });
}, 240_000);

afterAll(async () => {
	await cluster?.stop();
	await rm(dir, { recursive: true, force: true });
}, 60_000);

it("the packed package: a session completes on the other worker when the worker running its tool is killed, the tool ran once", { timeout: 120_000 }, async () => {
	const client = packedClient.createSessionClient({ ingressUrl: cluster.ingressUrl });
	const session = client.session(`packed-${Date.now()}`);
	const sent = await session.send.prompt("slow-tool:2500");
	// Killed once the tool runs, not at tool_execution_start (see toolStarted).
	const started = await toolStarted(execLog, session.sessionId, "work");
	await cluster.kill(cluster.workers.findIndex((worker) => worker.name === started));
	const result = await client.result<RunResult>(sent);
	expect(result.status).toBe("idle");
	const state = await session.state();
	expect(transcriptProblems(state.messages)).toEqual([]);
	expect(state.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
	expect(executionCounts(await readExecutions(execLog)).get(`${session.sessionId} work t0_0`)).toBe(1);
	const ended = cluster.events.filter((envelope) => envelope.sessionId === session.sessionId && envelope.event.type === "agent_end");
	expect(ended.map((envelope) => envelope.worker)).not.toContain(started);
	expect((await session.snapshot())?.machine.context.messages).toHaveLength(4);
});
