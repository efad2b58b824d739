/**
 * A newcomer finds every option in the guides: each option of the user-facing option types,
 * and each public member of `Agent`, is named (in backticks) by the guide of its concern. The
 * names are read from the source's declarations, so an option added without a line in its
 * guide fails here.
 */
import { readFile } from "node:fs/promises";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url);

async function sourceFile(path: string): Promise<ts.SourceFile> {
	return ts.createSourceFile(path, await readFile(new URL(path, root), "utf8"), ts.ScriptTarget.Latest, true);
}

function nameOf(member: ts.ClassElement | ts.TypeElement): string | undefined {
	return member.name && (ts.isIdentifier(member.name) || ts.isStringLiteral(member.name)) ? member.name.text : undefined;
}

/** The properties an interface declares itself (not what it inherits). */
async function interfaceProperties(path: string, name: string): Promise<string[]> {
	const file = await sourceFile(path);
	const found = file.statements.find((statement): statement is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(statement) && statement.name.text === name);
	if (!found) throw new Error(`no interface ${name} in ${path}`);
	return found.members.filter(ts.isPropertySignature).flatMap((member) => nameOf(member) ?? []);
}

/** A class's public members: fields, methods and accessors, static ones included. */
async function publicMembers(path: string, name: string): Promise<string[]> {
	const file = await sourceFile(path);
	const found = file.statements.find((statement): statement is ts.ClassDeclaration => ts.isClassDeclaration(statement) && statement.name?.text === name);
	if (!found) throw new Error(`no class ${name} in ${path}`);
	const hidden = (member: ts.ClassElement) =>
		ts.isConstructorDeclaration(member) ||
		ts.isClassStaticBlockDeclaration(member) ||
		(member.name !== undefined && ts.isPrivateIdentifier(member.name)) ||
		(ts.canHaveModifiers(member) && (ts.getModifiers(member) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.PrivateKeyword || modifier.kind === ts.SyntaxKind.ProtectedKeyword));
	return [...new Set(found.members.filter((member) => !hidden(member)).flatMap((member) => nameOf(member) ?? []))];
}

async function unnamedIn(guide: string, names: string[]): Promise<string[]> {
	const text = await readFile(new URL(guide, root), "utf8");
	// In a code span: `name`, `name(...)`, `name: ...`, `Agent.name(...)`, `{ name, ... }`.
	return names.filter((name) => !new RegExp(`\`[^\`\\n]*\\b${name}\\b[^\`\\n]*\``).test(text));
}

describe("the guides name every option", () => {
	it("docs/agent.md: every AgentOptions option and every public Agent member", async () => {
		const options = await interfaceProperties("src/agent.ts", "AgentOptions");
		const members = await publicMembers("src/agent.ts", "Agent");
		expect(options.length).toBeGreaterThan(20);
		expect(members).toEqual(expect.arrayContaining(["prompt", "subscribe", "load", "approve"]));
		expect(await unnamedIn("docs/agent.md", [...options, ...members])).toEqual([]);
	});

	it("docs/openai-compatible.md: every option of createOpenAICompatibleModel", async () => {
		const options = await interfaceProperties("src/providers/openai-models.ts", "OpenAICompatibleModelOptions");
		expect(options).toEqual(expect.arrayContaining(["baseUrl", "id"]));
		expect(await unnamedIn("docs/openai-compatible.md", options)).toEqual([]);
	});

	it("docs/mcp.md: every option of connectMcpServers and of a server", async () => {
		const options = [
			...(await interfaceProperties("src/mcp/servers.ts", "ConnectMcpServersOptions")),
			...(await interfaceProperties("src/mcp/types.ts", "McpServerOptions")),
			...(await interfaceProperties("src/mcp/types.ts", "McpStdioServerConfig")),
			...(await interfaceProperties("src/mcp/types.ts", "McpHttpServerConfig")),
			...(await interfaceProperties("src/mcp/types.ts", "McpReconnectOptions")),
		];
		expect(options).toEqual(expect.arrayContaining(["servers", "command", "url"]));
		expect(await unnamedIn("docs/mcp.md", options)).toEqual([]);
	});
});
