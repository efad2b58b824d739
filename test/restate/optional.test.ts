/**
 * Restate stays an optional integration: `agentchart` and `agentchart/restate/client` never load
 * `@restatedev/restate-sdk` (only `agentchart/restate` does), and the SDK is an optional peer.
 */
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The packages a module loads at run time, following its relative imports (type-only imports load nothing). */
async function packagesLoadedBy(entry: string): Promise<Set<string>> {
	const packages = new Set<string>();
	const seen = new Set<string>();
	const visit = async (file: string): Promise<void> => {
		if (seen.has(file)) return;
		seen.add(file);
		const source = await readFile(file, "utf8");
		const specifiers = [...source.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^;"']*?\sfrom\s+)?["']([^"']+)["']/gm), ...source.matchAll(/import\(\s*["']([^"']+)["']\s*\)/g)].map((match) => match[1] as string);
		for (const specifier of specifiers) {
			if (specifier.startsWith(".")) await visit(join(dirname(file), specifier.replace(/\.js$/, ".ts")));
			else packages.add(specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : (specifier.split("/")[0] as string));
		}
	};
	await visit(join(ROOT, entry));
	return packages;
}

describe("the Restate integration is optional", () => {
	it("is loaded only by agentchart/restate", async () => {
		const core = await packagesLoadedBy("src/index.ts");
		expect(core).toContain("xstate");
		expect(core).not.toContain("@restatedev/restate-sdk");
		expect(await packagesLoadedBy("src/restate/client.ts")).toEqual(new Set());
		expect(await packagesLoadedBy("src/restate/index.ts")).toContain("@restatedev/restate-sdk");
	});

	it("is loaded by the two entries alone, so that each makes the objects with the SDK build of its kind (see src/restate/sdk.ts)", async () => {
		// A value imported from the SDK anywhere else would be the ES module build's, which a CommonJS worker's SDK does not recognise.
		expect(await packagesLoadedBy("src/restate/api.ts")).not.toContain("@restatedev/restate-sdk");
		expect(await packagesLoadedBy("src/restate/session-object.ts")).not.toContain("@restatedev/restate-sdk");
		const cjs = await readFile(join(ROOT, "src/restate/index.cts"), "utf8");
		expect(cjs).toMatch(/^import restate = require\("@restatedev\/restate-sdk"\);$/m);
	});

	it("declares the SDK an optional peer dependency", async () => {
		const manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string>; peerDependencies: Record<string, string>; peerDependenciesMeta: Record<string, { optional?: boolean }> };
		expect(manifest.dependencies["@restatedev/restate-sdk"]).toBeUndefined();
		expect(manifest.peerDependencies["@restatedev/restate-sdk"]).toBeDefined();
		expect(manifest.peerDependenciesMeta["@restatedev/restate-sdk"]?.optional).toBe(true);
	});
});
