/**
 * Giving up on connecting: `connectMcpServers({ signal })`. Without it, an application whose user
 * cancelled (a request that went away, Ctrl-C, its own deadline) had to wait out every server's
 * `connectTimeoutMs` (30 s by default) with nothing to stop the attempt, and the servers it
 * started ran until then. An abort ends every connection and every process before the promise
 * rejects, with the signal's reason.
 */
import { createRequire, syncBuiltinESMExports } from "node:module";
import { afterEach, describe, expect, it } from "vitest";
import { connectMcpServers } from "../../src/mcp/index.js";
import { childPids, Cleanup, faultServer, killIfAlive, toolNamed, textOf, waitUntil, withTimeout } from "./helpers.js";

const cleanup = new Cleanup();
afterEach(async () => {
	await cleanup.run();
	killIfAlive(childPids());
});

describe("connectMcpServers with a signal", () => {
	it("an abort while a server does not answer its handshake rejects with the signal's reason at once, its process ended", async () => {
		const controller = new AbortController();
		const attempt = connectMcpServers({ servers: { hung: faultServer({ connectTimeoutMs: 60_000 }, ["--silent"]) }, signal: controller.signal, onProblem: () => undefined });
		const settled = attempt.then(
			() => "connected",
			(error: unknown) => error,
		);
		await waitUntil(() => childPids().length > 0, 10_000, "the server process to start");
		const reason = new Error("the user went away");
		controller.abort(reason);
		expect(await withTimeout(settled, 10_000, "connectMcpServers to give up")).toBe(reason);
		// Ended before the rejection: a caller that gave up may exit next.
		expect(childPids()).toEqual([]);
	});

	it("an aborted signal starts nothing", async () => {
		// No process is started at all, not one started and ended before the rejection (which a
		// look at the children afterwards could not tell apart): count the module's spawn calls
		// (syncBuiltinESMExports carries the replacement to `import { spawn }` bindings).
		const childProcess = createRequire(import.meta.url)("node:child_process") as typeof import("node:child_process");
		const spawnOf = childProcess.spawn;
		let spawned = 0;
		childProcess.spawn = ((...args: Parameters<typeof spawnOf>) => {
			spawned++;
			return spawnOf(...args);
		}) as typeof spawnOf;
		syncBuiltinESMExports();
		try {
			const attempt = connectMcpServers({ servers: { faults: faultServer() }, signal: AbortSignal.abort(new Error("too late")) });
			await expect(attempt).rejects.toThrow("too late");
		} finally {
			childProcess.spawn = spawnOf;
			syncBuiltinESMExports();
		}
		expect(spawned).toBe(0);
		expect(childPids()).toEqual([]);
	});

	it("a signal that aborts once connected changes nothing: close() ends the servers", async () => {
		const controller = new AbortController();
		const mcp = await connectMcpServers({ servers: { faults: faultServer() }, signal: controller.signal });
		cleanup.add(() => mcp.close());
		controller.abort();
		expect(mcp.status()[0]?.state).toBe("ready");
		expect(textOf(await toolNamed(mcp, "faults__echo").execute("c1", { text: "still here" }))).toBe("echo: still here");
	});

	it("refuses a signal that is not an AbortSignal, starting nothing", async () => {
		await expect(connectMcpServers({ servers: { faults: faultServer() }, signal: { aborted: false } as never })).rejects.toThrow(new TypeError("connectMcpServers: signal must be an AbortSignal, got { aborted: false }"));
		expect(childPids()).toEqual([]);
	});
});
