/**
 * The published declarations, as a user's editor reads them (`dist/`, built by `npm test` before
 * this runs): every type a public declaration names can be named by the user too, and every
 * export has its example.
 *
 * Before this test, 40 types that public declarations used were exported from no entry: a
 * `ToolCallEntry` had a `status` of type `ToolCallStatus` and an `approval` of type
 * `ApprovalWait`, `summarizeWithModel` took `ModelSummarizerOptions`, `exploreAgent`'s options a
 * `ModelConfig`, and `AgentMachineActor` was typed through the private interpreter's logic. A user
 * could hold such values but not write their types (`Parameters<...>` was the only way).
 */
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const dist = join(root, "dist");

/** Every declaration file `package.json`'s `exports` name (both module systems). */
function entryDeclarations(): string[] {
	const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, unknown> };
	const files = new Set<string>();
	const collect = (value: unknown): void => {
		if (typeof value !== "object" || value === null) return;
		for (const [condition, target] of Object.entries(value)) {
			if (condition === "types" && typeof target === "string") files.add(join(root, target));
			else collect(target);
		}
	};
	collect(manifest.exports);
	return [...files];
}

interface Surface {
	/** `name (file)` of each type a public declaration names but no entry exports, with who names it. */
	unexported: Map<string, Set<string>>;
	/** Exported names without an `@example` in their JSDoc. */
	withoutExample: string[];
	exportedCount: number;
}

/**
 * The public surface of `entries`: the types named by the declarations the `walked` entries
 * export (all of them by default), checked against what any of `entries` exports.
 */
function publicSurface(entries: string[], walked: readonly string[] = entries): Surface {
	const program = ts.createProgram(entries, { strict: true, skipLibCheck: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext });
	const checker = program.getTypeChecker();
	const ours = (node: ts.Node) => node.getSourceFile().fileName.startsWith(`${dist}/`);
	const exported = new Set<ts.Declaration>();
	const pending: ts.Symbol[] = [];
	const withoutExample = new Set<string>();
	for (const entry of entries) {
		const source = program.getSourceFile(entry);
		const module = source && checker.getSymbolAtLocation(source);
		if (!module) throw new Error(`${relative(root, entry)} did not load`);
		for (const alias of checker.getExportsOfModule(module)) {
			const symbol = alias.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(alias) : alias;
			const declarations = (symbol.declarations ?? []).filter(ours);
			if (declarations.length === 0) continue; // re-exported from a dependency (pi-ai's, XState's)
			for (const declaration of declarations) exported.add(declaration);
			if (walked.includes(entry)) pending.push(symbol);
			if (!symbol.getJsDocTags(checker).some((tag) => tag.name === "example")) withoutExample.add(`${alias.name} (${relative(dist, declarations[0]!.getSourceFile().fileName)})`);
		}
	}
	const unexported = new Map<string, Set<string>>();
	const visited = new Set<ts.Symbol>();
	const visit = (node: ts.Node, from: string): void => {
		const name = ts.isTypeReferenceNode(node)
			? node.typeName
			: ts.isExpressionWithTypeArguments(node)
				? node.expression
				: ts.isTypeQueryNode(node)
					? node.exprName
					: ts.isImportTypeNode(node)
						? node.qualifier
						: undefined;
		if (name) {
			const found = checker.getSymbolAtLocation(name);
			const symbol = found && found.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(found) : found;
			const declarations = (symbol?.declarations ?? []).filter(ours);
			if (symbol && declarations.length > 0 && !(symbol.flags & ts.SymbolFlags.TypeParameter)) {
				if (!declarations.some((declaration) => exported.has(declaration))) {
					const key = `${symbol.name} (${relative(dist, declarations[0]!.getSourceFile().fileName)})`;
					const users = unexported.get(key) ?? new Set<string>();
					unexported.set(key, users.add(from));
				}
				if (!visited.has(symbol)) pending.push(symbol);
			}
		}
		ts.forEachChild(node, (child) => visit(child, from));
	};
	for (let symbol = pending.pop(); symbol; symbol = pending.pop()) {
		if (visited.has(symbol)) continue;
		visited.add(symbol);
		for (const declaration of (symbol.declarations ?? []).filter(ours)) visit(declaration, symbol.name);
	}
	return { unexported, withoutExample: [...withoutExample].sort(), exportedCount: exported.size };
}

describe("the published declarations", () => {
	if (!existsSync(join(dist, "index.d.ts"))) throw new Error("dist/ is missing: run `npm run build` first (`npm test` does)");
	const surface = publicSurface(entryDeclarations());

	it("name only types that an entry exports", () => {
		expect(surface.exportedCount).toBeGreaterThan(400);
		const listed = [...surface.unexported].map(([type, users]) => `${type}, named by ${[...users].sort().join(", ")}`).sort();
		expect(listed).toEqual([]);
	});

	it("give every export an example", () => {
		expect(surface.withoutExample).toEqual([]);
	});

	it("of agentchart/restate/client name only types it or the main entry exports", () => {
		// A client installs no Restate package, and agentchart/restate's declarations import it:
		// its types were nameable only from there (TS2307 without skipLibCheck, TS2742 in a
		// library's emitted declarations).
		const client = join(dist, "restate", "client.d.ts");
		const own = publicSurface([join(dist, "index.d.ts"), client], [client]);
		expect(own.exportedCount).toBeGreaterThan(10);
		expect([...own.unexported].map(([type, users]) => `${type}, named by ${[...users].sort().join(", ")}`).sort()).toEqual([]);
	});
});
