/**
 * Replay for package users, as the README shows it: `startVisualizerServer({ replay: await
 * readRecording(file) })` from the installed package (the repository's `npm run visualize --
 * --replay` is not there for them).
 */
import { spawnSync } from "node:child_process";
import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { consumerProject } from "./consumer-project.js";

describe("the packed package's replay API", () => {
	it("records a run with attachVisualizer and serves it back with startVisualizerServer({ replay })", async () => {
		const project = await consumerProject();
		await copyFile(new URL("./fixtures/replay.mjs", import.meta.url), join(project.dir, "replay.mjs"));
		const scratch = await mkdtemp(join(tmpdir(), "agentchart-replay-"));
		try {
			const result = spawnSync(process.execPath, ["replay.mjs", join(scratch, "run.ndjson")], { cwd: project.dir, encoding: "utf8", timeout: 60_000 });
			expect(result.stderr).toBe("");
			expect(JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "{}")).toEqual({ records: true, served: true, mode: "replay", page: 200 });
		} finally {
			await rm(scratch, { recursive: true, force: true });
		}
	}, 300_000);
});
