/**
 * What one call may add to a session against restate-server's message size limit (each journal
 * entry must fit it): the messages a call added are journaled once, in the stored snapshot, not
 * again beside it, so a call may add up to the limit, not half of it (docs/restate.md, Limits).
 * restate-server runs with the limit lowered to 4 MiB so that the test moves a few MiB, not 32.
 * And a tool result over the worker's `maxStepBytes` (3 MiB here) is answered with an error the
 * model reads instead of being journaled: over the server's limit, the call would be retried
 * for ever and the session would take no further call. Nor may the session as a whole pass the
 * limit (it would hang, `state` too): the worker keeps it under its `maxSessionBytes` (3 MiB here).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Cluster, startCluster } from "../../scripts/restate/cluster.js";
import { withEnv } from "../../scripts/restate/test-cluster.js";
import { createSessionClient } from "../../src/restate/client.js";
import type { RunResult } from "../../src/restate/session-types.js";

const LIMIT = {
	// restate-server reads its settings from RESTATE_* variables too, over its config file.
	RESTATE_WORKER__INVOKER__MESSAGE_SIZE_LIMIT: "4 MiB",
	RESTATE_WORKER__INVOKER__MESSAGE_SIZE_WARNING: "1 MiB",
};

let cluster: Cluster;

beforeAll(async () => {
	cluster = await withEnv(LIMIT, () => startCluster({ workers: 1, env: { MAX_STEP_BYTES: String(3 * 1024 * 1024), MAX_SESSION_BYTES: String(3 * 1024 * 1024) } }));
}, 120_000);

afterAll(async () => {
	await cluster?.stop();
}, 60_000);

it("stores a call that adds more than half the message size limit (its new messages are journaled once)", { timeout: 120_000 }, async () => {
	const session = createSessionClient({ ingressUrl: cluster.ingressUrl }).session(`size-${Date.now()}`);
	// A 2.5 MiB tool result: each entry holds it once (under 4 MiB); twice, the store step would not fit.
	const result = await session.prompt("dump:2560", { signal: AbortSignal.timeout(60_000) });
	expect(result.status).toBe("idle");
	expect(result.newMessages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
	const toolResult = result.newMessages[2] as { content: { type: string; text?: string }[] };
	expect(toolResult.content[0]?.text?.length).toBe(2560 * 1024);
	const state = await session.state();
	expect(state.status).toBe("idle");
	expect(state.messages.length).toBe(4);
});

it("answers a tool result over maxStepBytes with an error the model reads, and the session goes on", { timeout: 120_000 }, async () => {
	const session = createSessionClient({ ingressUrl: cluster.ingressUrl }).session(`too-large-${Date.now()}`);
	// 5 MiB: over the worker's 3 MiB cap and over the server's 4 MiB limit (journaled, it would be retried for ever).
	const result = await session.prompt("dump:5120", { signal: AbortSignal.timeout(30_000) });
	expect(result.status).toBe("idle");
	expect(result.newMessages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
	const toolResult = result.newMessages[2] as { isError: boolean; content: { type: string; text?: string }[] };
	expect(toolResult.isError).toBe(true);
	expect(toolResult.content[0]?.text).toBe('Tool "dump" ran, but its result could not be stored: its JSON is 5.0 MiB, over the 3.0 MiB a step may journal (maxStepBytes). What the tool did has taken effect; its result is lost.');
	const next = await session.prompt("hello", { signal: AbortSignal.timeout(30_000) });
	expect(next.status).toBe("idle");
	expect((await session.state()).messages.length).toBe(6);
});

it("keeps a session under maxSessionBytes: a result that does not fit is answered as an error, an input that does not fit is refused (413), and the session goes on", { timeout: 180_000 }, async () => {
	const session = createSessionClient({ ingressUrl: cluster.ingressUrl }).session(`full-${Date.now()}`);
	// Each call adds a 1 MiB tool result: unchecked, the fifth would take the session over the
	// server's 4 MiB, and that call (and every later one, state too) would never answer.
	const results: RunResult[] = [];
	for (let call = 0; call < 5; call++) results.push(await session.prompt("dump-each:1024", { signal: AbortSignal.timeout(60_000) }));
	const toolResults = results.map((result) => result.newMessages.find((message) => message.role === "toolResult") as { isError: boolean; content: { text?: string }[] });
	expect(toolResults.map((result) => result.isError)).toEqual([false, false, true, true, true]);
	expect(toolResults[2]?.content[0]?.text).toMatch(/^Tool "dump" ran, but its result could not be stored: its JSON is 1\.0 MiB, over the \d+ KiB the session has left of its 3\.0 MiB \(maxSessionBytes\)\./);
	expect(results.map((result) => result.status)).toEqual(["idle", "idle", "idle", "idle", "idle"]);
	const stored = new TextEncoder().encode(JSON.stringify(await session.snapshot())).length;
	expect(stored).toBeLessThanOrEqual(3 * 1024 * 1024);
	// An input that would take it over is refused at once, with the sizes; nothing is stored.
	const big = "x".repeat(1024 * 1024);
	await expect(session.prompt(big, { signal: AbortSignal.timeout(30_000) })).rejects.toMatchObject({ status: 413, message: expect.stringContaining("prompt refused: the session holds") });
	await expect(session.steer(big, { signal: AbortSignal.timeout(30_000) })).rejects.toMatchObject({ status: 413, message: expect.stringContaining("(maxSessionBytes)") });
	const state = await session.state({ signal: AbortSignal.timeout(30_000) });
	expect(state.status).toBe("idle");
	expect(state.messages.length).toBe(5 * 4);
	expect(state.steeringQueue).toEqual([]);
	const next = await session.prompt("hello", { signal: AbortSignal.timeout(30_000) });
	expect(next.status).toBe("idle");
});

it("counts the messages waiting in the inbox against maxSessionBytes: steers that each fit are refused (413) once together they would not", { timeout: 180_000 }, async () => {
	const session = createSessionClient({ ingressUrl: cluster.ingressUrl }).session(`inbox-full-${Date.now()}`);
	// The run takes its mail at its turn's end, after the 5 s tool: the steers wait in the inbox
	// meanwhile. Checked one by one against the stored session only, all three were queued and
	// took the session over its 3 MiB (more of them, over the server's limit: it hung).
	const run = session.prompt("slow-tool:5000", { signal: AbortSignal.timeout(90_000) });
	await expect.poll(async () => (await session.state({ signal: AbortSignal.timeout(30_000) })).status, { timeout: 30_000 }).toBe("running");
	const big = (index: number) => `${index}${"s".repeat(1024 * 1024)}`;
	const steered: (number | "queued")[] = [];
	for (let index = 0; index < 3; index++) {
		steered.push(
			await session.steer(big(index), { signal: AbortSignal.timeout(30_000) }).then(
				() => "queued" as const,
				(error: { status: number }) => error.status,
			),
		);
	}
	expect(steered).toEqual(["queued", "queued", 413]);
	expect((await run).status).toBe("idle");
	await expect.poll(async () => (await session.state({ signal: AbortSignal.timeout(30_000) })).status, { timeout: 60_000 }).toBe("idle");
	const stored = new TextEncoder().encode(JSON.stringify(await session.snapshot({ signal: AbortSignal.timeout(30_000) }))).length;
	expect(stored).toBeLessThanOrEqual(3 * 1024 * 1024);
	const texts = (await session.state({ signal: AbortSignal.timeout(30_000) })).messages.map((message) => (message.role === "user" && Array.isArray(message.content) ? (message.content[0] as { text?: string }).text?.slice(0, 1) : undefined));
	expect(texts.filter((text) => text === "0" || text === "1")).toEqual(["0", "1"]);
});

it("refuses a reject whose reason would take the session over maxSessionBytes (413), and the call still waits for a decision that fits", { timeout: 120_000 }, async () => {
	// Before, the reason was counted nowhere: a 20 MiB reason was stored as the call's result,
	// the session went far over its cap (and the server's limit), and took no further prompt.
	const session = createSessionClient({ ingressUrl: cluster.ingressUrl }).session(`reject-size-${Date.now()}`);
	const waiting = await session.prompt("approval", { signal: AbortSignal.timeout(30_000) });
	expect(waiting.status).toBe("awaiting-approval");
	await expect(session.reject("t0_0", "r".repeat(4 * 1024 * 1024), { signal: AbortSignal.timeout(30_000) })).rejects.toMatchObject({
		status: 413,
		message: expect.stringContaining("reject refused: the session holds"),
	});
	expect((await session.state({ signal: AbortSignal.timeout(30_000) })).pendingApprovals.map((call) => call.toolCallId)).toEqual(["t0_0"]);
	const done = await session.reject("t0_0", "not today", { signal: AbortSignal.timeout(30_000) });
	expect(done.status).toBe("idle");
});
