/**
 * A newcomer finds every option in the guides: each option of the user-facing option types,
 * and each public member of `Agent`, is named (in backticks) by the guide of its concern. The
 * names are read from the source's declarations, so an option added without a line in its
 * guide fails here.
 */
import { readdir, readFile } from "node:fs/promises";
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

/** The properties an interface declares itself that have no doc comment of their own. */
async function undocumentedProperties(path: string, name: string): Promise<string[]> {
	const file = await sourceFile(path);
	const found = file.statements.find((statement): statement is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(statement) && statement.name.text === name);
	if (!found) throw new Error(`no interface ${name} in ${path}`);
	return found.members.filter((member) => ts.isPropertySignature(member) && ts.getJSDocCommentsAndTags(member).length === 0).flatMap((member) => nameOf(member) ?? []);
}

/** The `type` of every member of a union type alias of events. */
async function eventTypes(path: string, name: string): Promise<string[]> {
	const file = await sourceFile(path);
	const found = file.statements.find((statement): statement is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(statement) && statement.name.text === name);
	if (!found) throw new Error(`no type ${name} in ${path}`);
	const types: string[] = [];
	const visit = (node: ts.Node): void => {
		if (ts.isPropertySignature(node) && nameOf(node) === "type" && node.type && ts.isLiteralTypeNode(node.type) && ts.isStringLiteral(node.type.literal)) types.push(node.type.literal.text);
		ts.forEachChild(node, visit);
	};
	visit(found.type);
	return types;
}

/** The string literals of a union type alias (`"a" | "b"`). */
async function unionLiterals(path: string, name: string): Promise<string[]> {
	const file = await sourceFile(path);
	const found = file.statements.find((statement): statement is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(statement) && statement.name.text === name);
	if (!found || !ts.isUnionTypeNode(found.type)) throw new Error(`no union type ${name} in ${path}`);
	return found.type.types.flatMap((member) => (ts.isLiteralTypeNode(member) && ts.isStringLiteral(member.literal) ? [member.literal.text] : []));
}

/** The guide's inline code spans (`...`), outside its fenced blocks. */
function codeSpans(markdown: string): string[] {
	const prose = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
	return [...prose.matchAll(/`([^`\n]+)`/g)].map((match) => match[1] as string);
}

async function unnamedIn(guide: string, names: string[]): Promise<string[]> {
	const spans = codeSpans(await readFile(new URL(guide, root), "utf8"));
	// Inside one code span: `name`, `name(...)`, `name: ...`, `Agent.name(...)`, `{ name, ... }`. (A
	// search of the whole text from one backtick to another took the prose between two spans for a
	// span: an option named only in prose passed.)
	return names.filter((name) => !spans.some((span) => new RegExp(`\\b${name}\\b`).test(span)));
}

describe("the guides name every option", () => {
	it("docs/agent.md: every AgentOptions option and every public Agent member", async () => {
		const options = await interfaceProperties("src/agent.ts", "AgentOptions");
		const members = await publicMembers("src/agent.ts", "Agent");
		expect(options.length).toBeGreaterThan(20);
		expect(members).toEqual(expect.arrayContaining(["prompt", "subscribe", "load", "approve"]));
		expect(await unnamedIn("docs/agent.md", [...options, ...members])).toEqual([]);
	});

	it("the API reference: every AgentOptions and AgentLoopConfig option has its own doc comment (docs/agent.md promises it)", async () => {
		expect(await undocumentedProperties("src/agent.ts", "AgentOptions")).toEqual([]);
		expect(await undocumentedProperties("src/loop/agent-loop.ts", "AgentLoopConfig")).toEqual([]);
	});

	it("docs/machine.md: every command the bare machine accepts", async () => {
		const commands = await eventTypes("src/machines/types.ts", "AgentMachineCommand");
		expect(commands).toEqual(expect.arrayContaining(["prompt", "abort", "approve"]));
		const text = await readFile(new URL("docs/machine.md", root), "utf8");
		const listed = text.slice(text.indexOf("**Events it accepts**"), text.indexOf("**Events it emits**"));
		expect(commands.filter((command) => !listed.includes(`\`${command}`))).toEqual([]);
	});

	it("docs/reply.md: every option of subscribeReplies", async () => {
		const options = await interfaceProperties("src/reply/subscribe-replies-options.ts", "SubscribeRepliesParams");
		expect(options).toEqual(expect.arrayContaining(["onBlockReply", "blockReplyChunking", "verbose"]));
		expect(await unnamedIn("docs/reply.md", options)).toEqual([]);
	});

	it("docs/test-your-agent.md: every option of exploreAgent, fuzzAgent and createFaultyModel", async () => {
		const options = [
			...(await interfaceProperties("src/testing/explore.ts", "ExploreOptions")),
			...(await interfaceProperties("src/testing/fuzz.ts", "FuzzOptions")),
			...(await interfaceProperties("src/providers/scripted.ts", "ScriptedModelOptions")),
			...(await interfaceProperties("src/testing/faulty-model.ts", "FaultyModelOptions")),
		];
		// agentchart's own walk of its chart, not for users (see their JSDoc).
		const internal = ["config", "strict"];
		expect(options).toEqual(expect.arrayContaining(["calls", "restores", "runs", "faults"]));
		expect(await unnamedIn("docs/test-your-agent.md", options.filter((option) => !internal.includes(option)))).toEqual([]);
	});

	it("docs/restate.md: every option of createAgentSessions, createSessionClient and createEventHub", async () => {
		const options = [
			...(await interfaceProperties("src/restate/session-object.ts", "AgentSessionsOptions")),
			...(await interfaceProperties("src/restate/client.ts", "SessionClientOptions")),
			...(await interfaceProperties("src/restate/event-hub.ts", "EventHubOptions")),
		];
		expect(options).toEqual(expect.arrayContaining(["agent", "ingressUrl", "maxBufferedBytes"]));
		expect(await unnamedIn("docs/restate.md", options)).toEqual([]);
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

	// Found by a read of the guide (2026-12-06): its table left "model-conformance" out, and the type
	// declared a rule ("state") that no checker reported.
	it("docs/test-your-agent.md: every rule a violation can name, each one reported by the kit", async () => {
		const rules = await unionLiterals("src/testing/violations.ts", "AgentRule");
		expect(rules).toEqual(expect.arrayContaining(["run-nesting", "tool-answered", "custom"]));
		const text = await readFile(new URL("docs/test-your-agent.md", root), "utf8");
		const table = text.slice(text.indexOf("The rules (`AgentRule`):"), text.indexOf("Options worth knowing"));
		expect(rules.filter((rule) => !new RegExp(`^\\|[^|\\n]*\`${rule}\``, "m").test(table))).toEqual([]);
		// A rule is reported where a checker names it: as a literal in the kit's source outside the type.
		const files = (await readdir(new URL("src/testing/", root), { recursive: true })).filter((path) => path.endsWith(".ts") && path !== "violations.ts");
		const source = (await Promise.all(files.map((path) => readFile(new URL(`src/testing/${path}`, root), "utf8")))).join("\n");
		expect(rules.filter((rule) => !source.includes(`"${rule}"`))).toEqual([]);
	});
});
