/**
 * The kit's own timers do not outlive the call that set them: a tool of yours that never
 * settles is reported, and what the walk still waits on then does not keep the process alive
 * (it once held it a minute after exploreAgent had resolved).
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TSX = createRequire(import.meta.url).resolve("tsx/cli");

it("a tool that never settles is reported, and the process ends as soon as exploreAgent and fuzzAgent have resolved", () => {
	const result = spawnSync(process.execPath, [TSX, "test/testing/fixtures/hanging-tool.ts"], { cwd: ROOT, encoding: "utf8", timeout: 40_000 });
	const ended = Date.now();
	expect(result.error, result.stderr).toBeUndefined();
	const printed = JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "{}") as { explored: string[]; fuzzed: string[]; resolvedAt: number };
	expect(printed.explored).toContain("settle");
	expect(printed.fuzzed).toContain("settle");
	// Before, a 60 s wait on the tool held the process (here killed at 40 s).
	expect(ended - printed.resolvedAt).toBeLessThan(10_000);
}, 60_000);
