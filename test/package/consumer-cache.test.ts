/**
 * The consumer projects cached in the system's temp folder (one whole install per build) do not
 * pile up: those of other builds go once nobody used them for an hour.
 */
import { existsSync } from "node:fs";
import { mkdir, rm, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { CACHE, UNUSED_PROJECT_MS, consumerProject } from "./consumer-project.js";

it("removes the cached projects of other builds nobody used for an hour, and keeps the rest", { timeout: 300_000 }, async () => {
	const unused = join(CACHE, "test-build-unused");
	const recent = join(CACHE, "test-build-recent");
	const crashed = join(CACHE, "test-build-crashed.staging");
	try {
		for (const dir of [unused, recent]) {
			await mkdir(dir, { recursive: true });
			await writeFile(join(dir, ".ready"), "test");
		}
		await mkdir(crashed, { recursive: true });
		const past = new Date(Date.now() - UNUSED_PROJECT_MS - 60_000);
		await utimes(join(unused, ".ready"), past, past);
		await utimes(crashed, past, past);
		const project = await consumerProject();
		expect(existsSync(unused)).toBe(false);
		expect(existsSync(crashed)).toBe(false);
		expect(existsSync(recent)).toBe(true);
		expect(existsSync(join(project.dir, "node_modules", "agentchart", "package.json"))).toBe(true);
	} finally {
		for (const dir of [unused, recent, crashed]) await rm(dir, { recursive: true, force: true });
	}
});
