/**
 * Every process the Restate tests, demo and bench start is stopped when they end, also when they
 * fail: a script that starts restate-server (or a whole cluster: the server and two workers) and
 * then throws leaves no process behind, no data folder and no bundled worker; the temporary
 * folders restate-server makes for itself stay in its data folder and go with it. A port that
 * another process takes between `freePort` and restate-server's bind (which failed a CI run
 * once) costs a restart on new ports, not the whole wait.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { expect, it, onTestFinished } from "vitest";
import { freePort, startProcess, stopAllProcesses, waitUntil } from "../../scripts/restate/processes.js";
import { type RestateServer, startRestateServer } from "../../scripts/restate/restate-server.js";
import { childPids, isAlive } from "../processes.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TSX = createRequire(import.meta.url).resolve("tsx/cli");

/** Waits (a bounded while) for the kernel to reap what the exit hook killed with SIGKILL. */
async function gone(pids: number[]): Promise<number[]> {
	for (let tries = 0; tries < 50 && pids.some(isAlive); tries++) await new Promise((resolve) => setTimeout(resolve, 100));
	return pids.filter(isAlive);
}

/** The restate-server processes this process started that still run. */
function ourRestateServers(): number[] {
	return childPids().filter((pid) => {
		try {
			return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "restate-server";
		} catch {
			// It ended while we looked.
			return false;
		}
	});
}

/** The data folders of `startRestateServer` (this process's or another's) whose config names `port`. */
function dataFoldersNaming(port: number): string[] {
	return readdirSync(tmpdir())
		.filter((name) => name.startsWith("agentchart-restate-"))
		.filter((name) => {
			try {
				return readFileSync(join(tmpdir(), name, "restate.toml"), "utf8").includes(`127.0.0.1:${port}`);
			} catch {
				// Another test's, made but not written yet, or removed meanwhile.
				return false;
			}
		});
}

/** The temporary folders restate-server makes (`invoker-*`) where the system keeps them. */
function serverTempFolders(): Set<string> {
	return new Set(readdirSync(tmpdir()).filter((name) => name.startsWith("invoker-")));
}

it("stops restate-server when the script that started it fails", { timeout: 120_000 }, async () => {
	const result = spawnSync(process.execPath, [TSX, "test/restate/fixtures/crash-after-start.ts"], { cwd: ROOT, encoding: "utf8", timeout: 100_000 });
	const match = /pid (\d+) ingress (\S+) data (\S+)/.exec(result.stdout);
	expect(match, `${result.stdout}${result.stderr}`).not.toBeNull();
	expect(result.status).not.toBe(0);
	expect(result.stderr).toContain("failing on purpose");
	expect(await gone([Number(match?.[1])])).toEqual([]);
	await expect(fetch(`${match?.[2]}/restate/health`)).rejects.toThrow();
	expect(existsSync(match?.[3] ?? "")).toBe(false);
});

it("keeps restate-server's own temporary folders in its data folder, which goes with it", { timeout: 120_000 }, async () => {
	const before = serverTempFolders();
	const server = await startRestateServer();
	try {
		// The server makes them once its partitions run, a moment after it answers.
		const own = join(server.dataDir, "tmp");
		for (let tries = 0; tries < 200 && readdirSync(own).length === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 100));
		expect(readdirSync(own).some((name) => name.startsWith("invoker-"))).toBe(true);
	} finally {
		await server.stop();
	}
	expect(existsSync(server.dataDir)).toBe(false);
	expect([...serverTempFolders()].filter((name) => !before.has(name))).toEqual([]);
});

it("stops restate-server and the workers, and removes the bundled worker, when the script that started a cluster fails", { timeout: 180_000 }, async () => {
	const result = spawnSync(process.execPath, [TSX, "test/restate/fixtures/crash-after-cluster.ts"], { cwd: ROOT, encoding: "utf8", timeout: 160_000 });
	const match = /pids (\S+) ingress (\S+) data (\S+) script (\S+)/.exec(result.stdout);
	expect(match, `${result.stdout}${result.stderr}`).not.toBeNull();
	expect(result.status).not.toBe(0);
	expect(result.stderr).toContain("failing on purpose");
	const pids = (match?.[1] ?? "").split(",").map(Number);
	expect(pids).toHaveLength(3);
	expect(await gone(pids)).toEqual([]);
	await expect(fetch(`${match?.[2]}/restate/health`)).rejects.toThrow();
	expect(existsSync(match?.[3] ?? "")).toBe(false);
	expect(existsSync(match?.[4] ?? "")).toBe(false);
});

it("gives up waiting for a process as soon as it exits, with what it printed", async () => {
	const started = Date.now();
	const child = startProcess("short-lived", "sh", ["-c", "echo going away; exit 3"]);
	try {
		await expect(waitUntil("something it never does", async () => false, 60_000, child)).rejects.toThrow(/short-lived exited \(3\) while waiting for something it never does[^]*going away/);
		expect(Date.now() - started).toBeLessThan(10_000);
	} finally {
		// Stopping what already ended returns at once, not after the 5 s that stop() gives a process before SIGKILL.
		const stopping = Date.now();
		await child.stop();
		expect(Date.now() - stopping).toBeLessThan(4_000);
	}
});

it("starts restate-server again on new ports when one it was given was taken meanwhile", { timeout: 60_000 }, async () => {
	// Another process's listener on the port freePort gave (here: ours, which never answers).
	const sockets = new Set<Socket>();
	const taken = createServer((socket) => sockets.add(socket));
	await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
	const takenPort = (taken.address() as { port: number }).port;
	let server: RestateServer | undefined;
	// Also when the start hangs past the test's timeout (as it did before the retry), nothing is left running.
	onTestFinished(async () => {
		await server?.stop();
		await stopAllProcesses();
		for (const socket of sockets) socket.destroy();
		await new Promise((resolve) => taken.close(resolve));
	});
	const given: number[] = [];
	// The ports are asked for in the order fabric, admin, ingress: the first attempt's admin port is the taken one.
	const ports = async () => {
		const port = given.length === 1 ? takenPort : await freePort();
		given.push(port);
		return port;
	};
	const started = Date.now();
	server = await startRestateServer({ ports });
	expect(Date.now() - started).toBeLessThan(30_000);
	expect(given).toHaveLength(6);
	expect(given[1]).toBe(takenPort);
	expect(server.adminUrl).toBe(`http://127.0.0.1:${given[4]}`);
	expect(server.ingressUrl).toBe(`http://127.0.0.1:${given[5]}`);
	expect((await fetch(`${server.adminUrl}/health`, { signal: AbortSignal.timeout(5_000) })).ok).toBe(true);
	// The first server is gone (it exited, and was reaped), and so is its data folder, the one whose config names the taken port.
	expect(ourRestateServers()).toEqual([server.process.pid]);
	expect(dataFoldersNaming(takenPort)).toEqual([]);
});
