/**
 * Every process the Restate tests, demo and bench start is stopped when they end, also when they
 * fail: a script that starts restate-server and then throws leaves no server behind, and
 * no data folder.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

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

it("stops restate-server when the script that started it fails", { timeout: 120_000 }, async () => {
	const result = spawnSync(process.execPath, [TSX, "test/restate/fixtures/crash-after-start.ts"], { cwd: ROOT, encoding: "utf8", timeout: 100_000 });
	const match = /pid (\d+) ingress (\S+) data (\S+)/.exec(result.stdout);
	expect(match, `${result.stdout}${result.stderr}`).not.toBeNull();
	expect(result.status).not.toBe(0);
	expect(result.stderr).toContain("failing on purpose");
	const pid = Number(match?.[1]);
	// The exit hook sends SIGKILL to the server's process group; give the kernel a moment to reap it.
	for (let tries = 0; tries < 50 && alive(pid); tries++) await new Promise((resolve) => setTimeout(resolve, 100));
	expect(alive(pid)).toBe(false);
	await expect(fetch(`${match?.[2]}/restate/health`)).rejects.toThrow();
	expect(existsSync(match?.[3] ?? "")).toBe(false);
});
