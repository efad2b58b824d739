import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";

/**
 * A maker of temporary directories for the test file that calls it (at its top level): each one
 * is removed after the test that made it, also when that test fails.
 *
 * @example
 * const tempDir = useTempDirs("agentchart-store-");
 * it("writes", async () => { const store = createFileStore(await tempDir()); });
 */
export function useTempDirs(prefix: string): () => Promise<string> {
	const made: string[] = [];
	afterEach(async () => {
		for (const folder of made.splice(0)) await rm(folder, { recursive: true, force: true });
	});
	return async () => {
		const folder = await mkdtemp(join(tmpdir(), prefix));
		made.push(folder);
		return folder;
	};
}
