/**
 * Every `@example` of the public API compiles, under the project's strict options, against the
 * source: what a user copies from the API reference must be code. Reading the JSDoc against the
 * code (2026-12-06) found eight that did not: a restore given `tools` where the option is
 * `initialState.tools` (the restore then threw for the missing tool), an argument no entry
 * exports, a spread of `unknown`, a comparison with a role that cannot occur, `...` for the rest
 * of an object.
 *
 * An example is a fragment: the names it uses without defining them are made for it. A name an
 * entry point exports is imported from there (so `Agent.restore(snapshot, { tools })` is checked
 * against the real options); `agent` is an `Agent`; any other is `any`, as the example's own
 * variable. Examples that use pi-ai are compiled as pi code is (without
 * `exactOptionalPropertyTypes`, see docs/from-pi.md).
 */
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

/** The package's entry points (package.json `exports`) and their sources. */
const ENTRIES: Record<string, string> = {
	agentchart: "src/index.ts",
	"agentchart/inspect": "src/inspect/index.ts",
	"agentchart/reply": "src/reply/index.ts",
	"agentchart/mcp": "src/mcp/index.ts",
	"agentchart/testing": "src/testing/index.ts",
	"agentchart/machine": "src/machine.ts",
	"agentchart/restate": "src/restate/index.ts",
	"agentchart/restate/client": "src/restate/client.ts",
};

/** Exported names that examples also use as variables of their own (`text`, the scripted model's helper). */
const NOT_IMPORTED = new Set(["text"]);

interface Example {
	where: string;
	code: string;
}

const config = ts.parseJsonConfigFileContent(ts.readConfigFile(join(root, "tsconfig.json"), ts.sys.readFile).config, ts.sys, root);
const strictOptions: ts.CompilerOptions = {
	...config.options,
	// A fragment's parameters and variables are often left to the reader.
	noUnusedLocals: false,
	noUnusedParameters: false,
	noImplicitAny: false,
	noEmit: true,
	// Without the DOM's globals (`prompt`, `event`, `history`), an example's own names are not taken for them.
	lib: ["lib.es2023.d.ts"],
	paths: { ...config.options.paths, "agentchart/restate/client": ["./src/restate/client.ts"] },
};

function publicExamples(): { examples: Example[]; exported: Map<string, string> } {
	const program = ts.createProgram(
		Object.values(ENTRIES).map((file) => join(root, file)),
		strictOptions,
	);
	const checker = program.getTypeChecker();
	const examples = new Map<string, Example>();
	const exported = new Map<string, string>();
	const collect = (declaration: ts.Node) => {
		const file = declaration.getSourceFile();
		for (const tag of ts.getJSDocTags(declaration)) {
			if (tag.tagName.text !== "example") continue;
			const where = `${file.fileName.slice(root.length + 1)}:${file.getLineAndCharacterOfPosition(tag.getStart()).line + 1}`;
			examples.set(where, { where, code: typeof tag.comment === "string" ? tag.comment : (ts.getTextOfJSDocComment(tag.comment) ?? "") });
		}
	};
	for (const [entry, file] of Object.entries(ENTRIES)) {
		const source = program.getSourceFile(join(root, file));
		const module = source && checker.getSymbolAtLocation(source);
		if (!module) throw new Error(`no module for ${file}`);
		for (const symbol of checker.getExportsOfModule(module)) {
			if (!exported.has(symbol.name)) exported.set(symbol.name, entry);
			const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
			for (const declaration of target.declarations ?? []) {
				if (declaration.getSourceFile().isDeclarationFile) continue;
				collect(declaration);
				if (ts.isClassDeclaration(declaration) || ts.isInterfaceDeclaration(declaration)) for (const member of declaration.members) collect(member);
			}
		}
	}
	return { examples: [...examples.values()], exported };
}

/** What an example is given: imports from the entry points, and names of its own. */
interface Givens {
	imports: Map<string, Set<string>>;
	values: Set<string>;
	types: Set<string>;
}

function moduleOf(example: Example, givens: Givens): string {
	const lines = example.code.split("\n");
	const isImport = (line: string) => /^\s*import\s/.test(line);
	const imports = [...givens.imports].map(([entry, names]) => `import { ${[...names].join(", ")} } from "${entry}";`);
	const declarations = [...[...givens.values].map((name) => (name === "agent" ? "declare let agent: Agent;" : `declare let ${name}: any;`)), ...[...givens.types].map((name) => `type ${name} = any;`)];
	return [...lines.filter(isImport), ...imports, ...declarations, "export {};", ...lines.filter((line) => !isImport(line))].join("\n");
}

/** Compiles the examples, giving each the names it lacks, until nothing more is lacking; the diagnostics left, per example. */
function compile(examples: Example[], exported: Map<string, string>, options: ts.CompilerOptions): Map<Example, string[]> {
	const givens = examples.map((): Givens => ({ imports: new Map(), values: new Set(), types: new Set() }));
	const path = (index: number) => join(root, `test/docs/__example-${index}.ts`);
	let left = new Map<Example, string[]>();
	for (let pass = 0; pass < 6; pass++) {
		const files = new Map(examples.map((example, index) => [path(index), moduleOf(example, givens[index] as Givens)]));
		const host = ts.createCompilerHost(options);
		const readFile = host.readFile.bind(host);
		const fileExists = host.fileExists.bind(host);
		const getSourceFile = host.getSourceFile.bind(host);
		host.readFile = (file) => files.get(file) ?? readFile(file);
		host.fileExists = (file) => files.has(file) || fileExists(file);
		host.getSourceFile = (file, language, ...rest) => {
			const text = files.get(file);
			return text === undefined ? getSourceFile(file, language, ...rest) : ts.createSourceFile(file, text, language, true);
		};
		const program = ts.createProgram([...files.keys()], options, host);
		let gave = false;
		left = new Map();
		examples.forEach((example, index) => {
			const source = program.getSourceFile(path(index)) as ts.SourceFile;
			const given = givens[index] as Givens;
			const problems: string[] = [];
			for (const diagnostic of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
				const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, " ");
				const lacking = /Cannot find name '([^']+)'/.exec(message)?.[1] ?? /No value exists in scope for the shorthand property '([^']+)'/.exec(message)?.[1];
				const asType = /'([^']+)' refers to a value, but is being used as a type/.exec(message)?.[1];
				if (lacking !== undefined && !given.values.has(lacking)) {
					const entry = NOT_IMPORTED.has(lacking) ? undefined : exported.get(lacking);
					if (entry) (given.imports.get(entry) ?? given.imports.set(entry, new Set()).get(entry))?.add(lacking);
					else given.values.add(lacking);
					if (lacking === "agent") (given.imports.get("agentchart") ?? given.imports.set("agentchart", new Set()).get("agentchart"))?.add("Agent");
					gave = true;
				} else if (asType !== undefined && given.values.delete(asType)) {
					given.types.add(asType);
					gave = true;
				} else {
					const line = diagnostic.start === undefined ? 0 : source.getLineAndCharacterOfPosition(diagnostic.start).line + 1;
					problems.push(`TS${diagnostic.code}: ${message} (line ${line} of ${JSON.stringify(moduleOf(example, given).split("\n")[line - 1] ?? "")})`);
				}
			}
			if (problems.length > 0) left.set(example, problems);
		});
		if (!gave) break;
	}
	return left;
}

describe("the API reference's examples", () => {
	it("compile against the source, as a user would paste them", () => {
		const { examples, exported } = publicExamples();
		expect(examples.length).toBeGreaterThan(400);
		const piStyle = (example: Example) => /from "@mariozechner\/pi-ai"/.test(example.code);
		const left = [
			...compile(examples.filter((example) => !piStyle(example)), exported, strictOptions),
			...compile(examples.filter(piStyle), exported, { ...strictOptions, exactOptionalPropertyTypes: false }),
		].map(([example, problems]) => `${example.where}\n  ${problems.join("\n  ")}`);
		expect(left).toEqual([]);
	}, 180_000);
});
