/**
 * Which public exports have no documentation: every entry point of package.json `exports`,
 * read by TypeDoc as `npm run docs` reads it (typedoc.json), and each top-level export checked
 * for a doc comment (a function's or a class's own, or its first signature's) and for an
 * `@example`.
 *
 * `npx tsx scripts/api-coverage.ts` prints them; test/docs/api-reference.test.ts fails on them.
 */
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Application, type DeclarationReflection, type ProjectReflection, ReflectionKind, TSConfigReader, TypeDocReader } from "typedoc";

const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * The kinds of export that must have an `@example` (TypeDoc's names): every kind the entry
 * points export, since a user meets a type (builds a value of it, receives one, narrows one) as
 * much as a function.
 */
export const NEEDS_EXAMPLE = /Function|Class|Variable|Interface|Type Alias/;

/** One public export, where it comes from, and what its documentation lacks. */
export interface ExportDocs {
	/** The import it is exported from (`agentchart`, `agentchart/reply`, ...). */
	module: string;
	name: string;
	kind: string;
	/** The source file that declares it. */
	file: string;
	documented: boolean;
	hasExample: boolean;
}

function commentsOf(reflection: DeclarationReflection) {
	const own = reflection.comment;
	const signature = reflection.signatures?.find((candidate) => candidate.comment)?.comment;
	const accessor = reflection.getSignature?.comment;
	return [own, signature, accessor].filter((comment) => comment !== undefined);
}

/** Reads the public API with TypeDoc, as `npm run docs` does. */
export async function readApi(): Promise<ProjectReflection> {
	const app = await Application.bootstrapWithPlugins({ options: `${root}typedoc.json`, logLevel: "Error" }, [new TypeDocReader(), new TSConfigReader()]);
	const project = await app.convert();
	if (!project) throw new Error("TypeDoc could not read the project (see the errors above)");
	return project;
}

/**
 * Every top-level export of every entry point, with what its documentation has.
 *
 * @example
 * const missing = (await exportDocs()).filter((entry) => !entry.documented);
 */
export async function exportDocs(): Promise<ExportDocs[]> {
	const project = await readApi();
	const modules: (DeclarationReflection | ProjectReflection)[] = project.children?.every((child) => child.kindOf(ReflectionKind.Module)) ? project.children : [project];
	const entries: ExportDocs[] = [];
	for (const module of modules) {
		// The absolute path, made relative to the repository: TypeDoc's own fileName is relative
		// to the files' common folder, which is above the repository when node_modules is a link
		// to another checkout's (a git worktree).
		const source = "sources" in module ? module.sources?.[0] : undefined;
		const entry = source ? relative(root, source.fullFileName) : module.name;
		const subpath = entry.replace(/^src\//, "").replace(/(\/index)?\.ts$/, "");
		const importName = subpath === "index" || subpath === "" ? "agentchart" : `agentchart/${subpath}`;
		for (const child of module.children ?? []) {
			// An entry point that re-exports what another one declares holds a reference to it:
			// the declaration's documentation is the reference's.
			const reflection = child.isReference() ? (child.getTargetReflectionDeep() as DeclarationReflection) : child;
			const comments = commentsOf(reflection);
			const declared = reflection.sources?.[0];
			const file = declared ? relative(root, declared.fullFileName) : "";
			entries.push({
				module: importName,
				name: child.name,
				kind: ReflectionKind.singularString(reflection.kind),
				file,
				documented: comments.some((comment) => comment.summary.some((part) => part.text.trim() !== "")),
				hasExample: comments.some((comment) => comment.blockTags.some((tag) => tag.tag === "@example")),
			});
		}
	}
	return entries;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
	const entries = await exportDocs();
	const undocumented = entries.filter((entry) => !entry.documented);
	const withoutExample = entries.filter((entry) => entry.documented && !entry.hasExample && NEEDS_EXAMPLE.test(entry.kind));
	console.log(`${entries.length} exports; ${undocumented.length} undocumented; ${withoutExample.length} without @example`);
	for (const entry of undocumented) console.log(`undocumented  ${entry.module}: ${entry.name} (${entry.kind}, ${entry.file})`);
	for (const entry of withoutExample) console.log(`no @example   ${entry.module}: ${entry.name} (${entry.kind}, ${entry.file})`);
}
