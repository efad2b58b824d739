/**
 * `npm run durable:demo` as a user runs it: its own restate-server and two workers, the worker
 * running a tool killed with SIGKILL; it must print its verdict line and exit 0, and leave no
 * process behind. The child has a time limit: a hung demo is killed (its exit hook then stops the
 * processes it started) and the test fails.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TSX = createRequire(import.meta.url).resolve("tsx/cli");

function runDemo(timeoutMs: number, env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, [TSX, "scripts/durable-demo.ts"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
		let output = "";
		child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
		child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
		const timer = setTimeout(() => child.kill("SIGTERM"), timeoutMs);
		child.once("error", reject);
		child.once("exit", (code) => {
			clearTimeout(timer);
			resolve({ code, output });
		});
	});
}

it("npm run durable:demo: the session completes after its worker is killed, the tool ran once, the transcript is valid", { timeout: 240_000 }, async () => {
	const { code, output } = await runDemo(200_000);
	const lines = output.trim().split("\n");
	expect(lines.at(-1), output).toBe("durable demo: completed after worker kill; tool ran 1 time; transcript valid");
	expect(output).toMatch(/SIGKILL worker-\d \(pid \d+\) while its tool runs/);
	expect(output).toContain('was interrupted by a restart and not run again');
	expect(code).toBe(0);
});

it("npm run durable:demo exits 1, and says FAILED, when its verdict does not hold (the tool made replay-safe runs twice)", { timeout: 240_000 }, async () => {
	const { code, output } = await runDemo(200_000, { WORK_REPLAY_SAFE: "1" });
	expect(output.trim().split("\n").at(-1), output).toBe("durable demo: completed after worker kill; tool ran 2 times; transcript valid; FAILED");
	expect(code).toBe(1);
});
