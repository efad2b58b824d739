/**
 * A worker written as CommonJS (what TypeScript compiled to CommonJS makes), on the packed
 * package: its `require("agentchart/restate")` and its `require("@restatedev/restate-sdk")` must
 * reach one build of the SDK. The SDK marks a handler's options (shared, private to the ingress,
 * explicit cancellation) and recognises a terminal error by classes and symbols of its own build;
 * objects made with its ES module build and served by its CommonJS build lose all of that without
 * an error: every handler becomes exclusive (`state` and `abort` wait behind a running prompt), the
 * inbox opens to the ingress, and a refusal is retried for ever instead of answered with a 400.
 * The same checks run on an ES module worker, the way the other tests run theirs.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ingressCall, toolStarted } from "../../scripts/restate/checks.js";
import { type Cluster, startCluster } from "../../scripts/restate/cluster.js";
import { createSessionClient } from "../../src/restate/client.js";
import type { RunResult } from "../../src/restate/session-types.js";
import { consumerProject } from "../package/consumer-project.js";

/** How long a call that should answer at once may take (a retried or queued call answers later or never). */
const ANSWER_MS = 10_000;

it("required, agentchart/restate exports what it exports imported", async () => {
	const project = await consumerProject();
	const required = createRequire(join(project.dir, "package.json"))("agentchart/restate") as Record<string, unknown>;
	const imported = (await import(pathToFileURL(join(project.dir, "node_modules/agentchart/dist/restate/index.js")).href)) as Record<string, unknown>;
	expect(Object.keys(required).filter((key) => key !== "__esModule").sort()).toEqual(Object.keys(imported).sort());
	expect(typeof required["createAgentSessions"]).toBe("function");
	// One engine: the two entries share every module but the SDK binding.
	expect(required["SessionCallError"]).toBe(imported["SessionCallError"]);
}, 240_000);

describe.each(["cjs", "esm"] as const)("a %s worker on the packed package", { timeout: 120_000 }, (format) => {
	let cluster: Cluster;
	let dir: string;
	let execLog: string;

	beforeAll(async () => {
		const project = await consumerProject();
		dir = await mkdtemp(join(tmpdir(), `agentchart-restate-${format}-`));
		execLog = join(dir, "executions.log");
		await writeFile(execLog, "");
		cluster = await startCluster({ workers: 1, packed: project.dir, format, env: { EXEC_LOG: execLog, STREAM_DELAY_MS: "2" } });
	}, 240_000);

	afterAll(async () => {
		await cluster?.stop();
		await rm(dir, { recursive: true, force: true });
	}, 60_000);

	it("answers a refused input with a 400 at once (a terminal error, not retried)", async () => {
		const answer = await ingressCall(cluster.ingressUrl, "AgentSession", `bad-${format}-${Date.now()}`, "prompt", "null", ANSWER_MS);
		expect(answer.status).toBe(400);
		expect(answer.message).toContain("prompt refused its input");
	});

	it("reads the state while a prompt runs (a shared handler), and aborts the run", async () => {
		const client = createSessionClient({ ingressUrl: cluster.ingressUrl });
		const session = client.session(`shared-${format}-${Date.now()}`);
		const sent = await session.send.prompt("slow-tool:20000");
		await toolStarted(execLog, session.sessionId, "work");
		const signal = AbortSignal.timeout(ANSWER_MS);
		expect((await session.state({ signal })).status).toBe("running");
		expect((await session.abort({ signal })).cancelled).toBe(sent.invocationId);
		// Cancelled explicitly (the handler's option): the run ends as aborted, its tool's signal fired.
		const result = await client.result<RunResult>(sent, { signal: AbortSignal.timeout(ANSWER_MS) });
		expect({ aborted: result.aborted, status: result.status }).toEqual({ aborted: true, status: "idle" });
	});

	it("keeps the inbox private to the ingress", async () => {
		const answer = await ingressCall(cluster.ingressUrl, "AgentSessionInbox", `private-${format}-${Date.now()}`, "take", undefined, ANSWER_MS);
		// Refused as private, not as unknown (a misspelt service or handler answers 404).
		expect(answer.status).toBe(400);
		expect(answer.message).toContain("the invoked service is not public");
	});
});
