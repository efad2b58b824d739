/**
 * A table written as an object literal (`const EMOJI = { read: "📖" }`) and read with a name from
 * outside (a tool's name, a model id, a command-line flag, a snapshot's child) also answers for
 * the names every object inherits: `EMOJI["constructor"]` is Object's constructor, and
 * `"toString" in FLAGS` is true. That put a function where a model, an emoji or a child's logic
 * was expected (getModel, reply summaries, the demo's flags, a restored child). This walks the
 * source with TypeScript's checker and names every read of such a table by a key typed as any
 * string that is not guarded by `Object.hasOwn` on the same table, and every `in` on one (a read
 * through `ownValue`, src/util/own-keys.ts, is no element access and passes).
 * Keys typed as a union of literals are the type system's to keep in range and are left alone.
 */
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");

/** The object literal a module-level `const` is initialised with (through `as`, `satisfies` and parentheses), if any. */
function tableLiteral(declaration: ts.Declaration): ts.ObjectLiteralExpression | undefined {
	if (!ts.isVariableDeclaration(declaration) || !declaration.initializer) return undefined;
	const list = declaration.parent;
	if (!ts.isVariableDeclarationList(list) || (list.flags & ts.NodeFlags.Const) === 0) return undefined;
	if (!ts.isVariableStatement(list.parent) || !ts.isSourceFile(list.parent.parent)) return undefined;
	let value: ts.Expression = declaration.initializer;
	while (ts.isAsExpression(value) || ts.isSatisfiesExpression(value) || ts.isParenthesizedExpression(value)) value = value.expression;
	return ts.isObjectLiteralExpression(value) ? value : undefined;
}

/** Whether a key of this type may be any text (not only the literals a union names). */
function anyText(type: ts.Type): boolean {
	if (type.flags & (ts.TypeFlags.String | ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return true;
	return type.isUnion() && type.types.some(anyText);
}

/** Whether the statement or expression around `node` asks `Object.hasOwn(<table>, ...)` first. */
function guarded(node: ts.Node, table: string): boolean {
	const guard = new RegExp(`Object\\.hasOwn\\(${table},`);
	for (let at: ts.Node | undefined = node.parent; at && !ts.isSourceFile(at); at = at.parent) {
		if (ts.isConditionalExpression(at) || ts.isIfStatement(at) || ts.isBinaryExpression(at) || ts.isReturnStatement(at) || ts.isVariableStatement(at)) {
			if (guard.test(at.getText())) return true;
		}
		if (ts.isFunctionLike(at)) return false;
	}
	return false;
}

/** Every unguarded read of a table by any text, and every `in` on a table, in the package's source. */
function unguardedLookups(): string[] {
	// The project's settings, for every file under src/ (the demo too, which the build leaves out).
	const parsed = ts.getParsedCommandLineOfConfigFile(join(ROOT, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
	if (!parsed) throw new Error("tsconfig.json could not be read");
	const program = ts.createProgram(parsed.fileNames.filter((name) => name.startsWith(join(ROOT, "src"))), parsed.options);
	const checker = program.getTypeChecker();
	const found: string[] = [];
	for (const file of program.getSourceFiles()) {
		if (file.isDeclarationFile || !file.fileName.startsWith(join(ROOT, "src"))) continue;
		const where = (node: ts.Node) => `${relative(ROOT, file.fileName)}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
		const tableNamed = (expression: ts.Expression): string | undefined => {
			if (!ts.isIdentifier(expression)) return undefined;
			const declaration = checker.getSymbolAtLocation(expression)?.valueDeclaration;
			return declaration && tableLiteral(declaration) ? expression.text : undefined;
		};
		const visit = (node: ts.Node): void => {
			if (ts.isElementAccessExpression(node)) {
				const table = tableNamed(node.expression);
				if (table && anyText(checker.getTypeAtLocation(node.argumentExpression)) && !guarded(node, table)) found.push(`${where(node)} ${node.getText()}`);
			} else if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.InKeyword && tableNamed(node.right)) {
				found.push(`${where(node)} ${node.getText()}`);
			}
			ts.forEachChild(node, visit);
		};
		visit(file);
	}
	return found;
}

describe("tables read by names from outside", () => {
	it("are read by own key (Object.hasOwn) or by a key typed as a union of their names", () => {
		expect(unguardedLookups()).toEqual([]);
	}, 120_000);
});
