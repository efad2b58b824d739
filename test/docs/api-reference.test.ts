/**
 * The API reference (`npm run docs`, TypeDoc) covers the package as users import it: every
 * entry of package.json `exports` is an entry point, and every export of every entry point is
 * documented and has an `@example` (functions, classes, constants, interfaces and type aliases).
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { type ExportDocs, NEEDS_EXAMPLE, exportDocs } from "../../scripts/api-coverage.js";

const root = new URL("../../", import.meta.url);

describe("the API reference", () => {
	let exports: ExportDocs[];

	it("reads every entry point package.json exports, and nothing else", async () => {
		const manifest = JSON.parse(await readFile(new URL("package.json", root), "utf8")) as { exports: Record<string, string | { import: string }> };
		const typedoc = JSON.parse(await readFile(new URL("typedoc.json", root), "utf8")) as { entryPoints: string[] };
		const fromExports = Object.entries(manifest.exports)
			.filter(([subpath]) => subpath !== "./package.json")
			.map(([, target]) => (typeof target === "string" ? target : target.import).replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts"));
		expect([...typedoc.entryPoints].sort()).toEqual(fromExports.sort());
	});

	it("documents every public export, and gives every function, class, constant, interface and type alias an @example", async () => {
		exports = await exportDocs();
		expect(exports.length).toBeGreaterThan(200);
		expect(new Set(exports.map((entry) => entry.module))).toEqual(new Set(["agentchart", "agentchart/reply", "agentchart/mcp", "agentchart/inspect", "agentchart/machine", "agentchart/restate", "agentchart/restate/client", "agentchart/testing"]));
		const describe = (entry: ExportDocs) => `${entry.module}: ${entry.name} (${entry.kind}, ${entry.file})`;
		expect(exports.filter((entry) => !entry.documented).map(describe)).toEqual([]);
		expect(exports.filter((entry) => NEEDS_EXAMPLE.test(entry.kind) && !entry.hasExample).map(describe)).toEqual([]);
	}, 180_000);
});
