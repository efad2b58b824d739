/**
 * Every process the Restate tests, demo and bench start is stopped when they end, also when they
 * fail: a script that starts restate-server (or a whole cluster: the server and two workers) and
 * then throws leaves no process behind, no data folder and no bundled worker; the temporary
 * folders restate-server makes for itself stay in its data folder and go with it.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { expect, it } from "vitest";
import { startRestateServer } from "../../scripts/restate/restate-server.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TSX = createRequire(import.meta.url).resolve("tsx/cli");

/** Whether `pid` runs (a zombie waiting to be reaped by a container's init does not). */
function alive(pid: number): boolean {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
	} catch {
		return false;
	}
}

/** Waits (a bounded while) for the kernel to reap what the exit hook killed with SIGKILL. */
async function gone(pids: number[]): Promise<number[]> {
	for (let tries = 0; tries < 50 && pids.some(alive); tries++) await new Promise((resolve) => setTimeout(resolve, 100));
	return pids.filter(alive);
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
