/**
 * A call whose body is over the request size limit of Restate's ingress is refused with 413
 * before the ingress reads the body, and the connection is closed. fetch, still writing the body,
 * mostly fails with `write EPIPE` and never sees the answer: the client reported that as
 * `SessionUnreachableError` ("whether it ran is unknown (send it again with the same
 * idempotencyKey)"), which no retry could ever get past; and a 413 it did read came out as a bare
 * "length limit exceeded". Both are now a `SessionBodyTooLargeError` that gives the body's size
 * and says not to send it again. restate-server runs with its ingress limit lowered to 1 MiB, so
 * that a few MiB show what 40 MiB do at the default limit of 32 MiB.
 */
import { request } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Cluster, startCluster } from "../../scripts/restate/cluster.js";
import { withEnv } from "../../scripts/restate/test-cluster.js";
import { SessionBodyTooLargeError, SessionCallError, SessionUnreachableError, createSessionClient } from "../../src/restate/client.js";

const LIMIT = { RESTATE_INGRESS__REQUEST_SIZE_LIMIT: "1 MiB" };

let cluster: Cluster;

beforeAll(async () => {
	// restate-server reads its settings from RESTATE_* variables too, over its config file.
	cluster = await withEnv(LIMIT, () => startCluster({ workers: 1 }));
}, 120_000);

afterAll(async () => {
	await cluster?.stop();
}, 60_000);

async function rejection(call: () => Promise<unknown>): Promise<unknown> {
	try {
		await call();
	} catch (error) {
		return error;
	}
	return "the call resolved";
}

/**
 * A `fetch` that asks before it sends a body (`expect: 100-continue`): the ingress then answers
 * 413 in place of "continue", and the answer is read, where fetch's own write of the body fails.
 */
const askingFetch: typeof fetch = (input, init) =>
	new Promise((resolve, reject) => {
		const body = typeof init?.body === "string" ? init.body : "";
		const headers = { ...(init?.headers as Record<string, string>), "content-length": String(Buffer.byteLength(body)), expect: "100-continue" };
		const outgoing = request(String(input), { method: init?.method ?? "GET", headers });
		outgoing.on("continue", () => outgoing.end(body));
		outgoing.on("response", (incoming) => {
			let text = "";
			incoming.on("data", (chunk: Buffer) => (text += chunk.toString()));
			incoming.on("end", () => resolve(new Response(text, { status: incoming.statusCode ?? 500 })));
		});
		outgoing.on("error", reject);
		outgoing.flushHeaders();
	});

it("reports a body over the ingress's limit as too large, with its size, whether the 413 was read or the connection closed while the body was sent", { timeout: 120_000 }, async () => {
	const session = createSessionClient({ ingressUrl: cluster.ingressUrl }).session(`oversize-${Date.now()}`);
	const seen: { size: number; name: string; status: unknown; bytes: unknown; message: string }[] = [];
	// 40 MiB twice, with the same key, as the old message advised: the repeat fails alike.
	for (const mib of [1.5, 3, 8, 40, 40]) {
		const error = await rejection(() => session.prompt("z".repeat(mib * 1024 * 1024), { idempotencyKey: `big-${mib}` }));
		seen.push({ size: mib, name: (error as Error).name, status: (error as SessionCallError).status, bytes: (error as { bytes?: unknown }).bytes, message: (error as Error).message });
	}
	// fetch either read the ingress's 413, or (mostly) saw the connection close while it still wrote the body.
	const tooLarge = (mib: number) => {
		const size = `the call's body \\(${mib.toFixed(1)} MiB of JSON\\)`;
		const read = `${size} is over the request size limit of Restate's ingress .*answered 413 \\("length limit exceeded"\\)\\. The call did not run, and sending it again will fail the same way`;
		const likely = mib > 32 ? "over Restate's default limit of 32\\.0 MiB, and sending it again will fail the same way" : "under Restate's default limit of 32\\.0 MiB, so this is the reason only if your limit is lower";
		const closed = `${size} was being sent \\(write EPIPE\\), so the call was not taken\\. Restate's ingress does so when a body is over its request size limit .*${likely}`;
		return new RegExp(`(${read}|${closed}).*send less`, "i");
	};
	expect(seen).toEqual(seen.map(({ size }) => ({ size, name: "SessionBodyTooLargeError", status: 413, bytes: size * 1024 * 1024 + 2, message: expect.stringMatching(tooLarge(size)) })));
	// The ingress's answer itself, read: the same error, saying what the ingress answered.
	const answered = await rejection(() => createSessionClient({ ingressUrl: cluster.ingressUrl, fetch: askingFetch }).session(session.sessionId).prompt("z".repeat(3 * 1024 * 1024)));
	expect(answered).toMatchObject({ name: "SessionBodyTooLargeError", status: 413, bytes: 3 * 1024 * 1024 + 2, answered: true });
	expect((answered as Error).message).toMatch(/the call's body \(3\.0 MiB of JSON\) is over the request size limit of Restate's ingress .*answered 413 \("length limit exceeded"\)\. The call did not run, and sending it again will fail the same way/);
	expect(answered).toBeInstanceOf(SessionBodyTooLargeError);
	// A SessionCallError (not to be retried), never a SessionUnreachableError (to be sent again).
	expect(answered).toBeInstanceOf(SessionCallError);
	expect(answered).not.toBeInstanceOf(SessionUnreachableError);
	// Nothing ran; a call under the limit does.
	expect((await session.state()).messages).toEqual([]);
	expect((await session.prompt(`hello:${"z".repeat(512 * 1024)}`)).status).toBe("idle");
});
