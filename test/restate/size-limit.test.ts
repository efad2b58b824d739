/**
 * What one call may add to a session against restate-server's message size limit (each journal
 * entry must fit it): the messages a call added are journaled once, in the stored snapshot, not
 * again beside it, so a call may add up to the limit, not half of it (docs/restate.md, Limits).
 * restate-server runs with the limit lowered to 4 MiB so that the test moves a few MiB, not 32.
 * And a tool result over the worker's `maxStepBytes` (3 MiB here) is answered with an error the
 * model reads instead of being journaled: over the server's limit, the call would be retried
 * for ever and the session would take no further call.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Cluster, startCluster } from "../../scripts/restate/cluster.js";
import { createSessionClient } from "../../src/restate/client.js";

const LIMIT = {
	// restate-server reads its settings from RESTATE_* variables too, over its config file.
	RESTATE_WORKER__INVOKER__MESSAGE_SIZE_LIMIT: "4 MiB",
	RESTATE_WORKER__INVOKER__MESSAGE_SIZE_WARNING: "1 MiB",
};

let cluster: Cluster;
const saved = Object.fromEntries(Object.keys(LIMIT).map((name) => [name, process.env[name]]));

beforeAll(async () => {
	Object.assign(process.env, LIMIT);
	try {
		cluster = await startCluster({ workers: 1, env: { MAX_STEP_BYTES: String(3 * 1024 * 1024) } });
	} finally {
		for (const [name, value] of Object.entries(saved)) {
			if (value === undefined) delete process.env[name];
			else process.env[name] = value;
		}
	}
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
