import { toolSchemaIssues } from "../tools/tool-schema.js";
import { agentToolName, cleanedPrefix } from "./names.js";
import { createMcpAgentTool, type McpAgentTool, type McpToolCaller } from "./tool-adapter.js";
import type { McpProblem, McpToolInfo } from "./types.js";

/** One server's part of the catalog. */
export interface CatalogSource {
	caller: McpToolCaller;
	/** Put before each tool name (see `toolPrefix`). */
	prefix: string;
	includeTools?: readonly string[] | undefined;
	excludeTools?: readonly string[] | undefined;
	timeoutMs?: number | undefined;
	/** The tools as the server last listed them. */
	tools: readonly McpToolInfo[];
}

/** The tools offered to the agent, and why the others were left out. */
export interface CatalogResult {
	tools: McpAgentTool[];
	problems: McpProblem[];
	/** How many tools each server has in `tools`, by server name. */
	offered: Map<string, number>;
}

interface CachedTool {
	fingerprint: string;
	tool: McpAgentTool | undefined;
	issues: string[];
}

/** Whether `source`'s filters let a tool through (`includeTools`, `excludeTools`). */
function selected(source: CatalogSource, info: McpToolInfo): boolean {
	return (source.includeTools === undefined || source.includeTools.includes(info.name)) && !(source.excludeTools ?? []).includes(info.name);
}

/**
 * For each agent-facing name of `source`, the server's tool that has it. Names are computed from
 * each tool alone, so two of one server's tools share one only when a tool is literally named
 * like another's hashed name (`report_v2_7ad315ff`) or two hashes match. Then the tool whose name
 * needed no change keeps it, else the one whose MCP name sorts first: never the listing order,
 * which a server may change from one listing to the next.
 */
function nameHolders(source: CatalogSource): Map<string, string> {
	const holders = new Map<string, string>();
	for (const info of source.tools) {
		if (!selected(source, info) || info.taskSupport === "required") continue;
		const name = agentToolName(source.prefix, info.name);
		const holder = holders.get(name);
		if (holder === undefined || precedes(source.prefix, name, info.name, holder)) holders.set(name, info.name);
	}
	return holders;
}

/** Whether `candidate` rather than `holder` keeps `name` (see `nameHolders`). */
function precedes(prefix: string, name: string, candidate: string, holder: string): boolean {
	const asIs = (mcpName: string) => `${cleanedPrefix(prefix)}${mcpName}` === name;
	if (asIs(candidate) !== asIs(holder)) return asIs(candidate);
	return candidate < holder;
}

/**
 * Why `mcpName`'s agent-facing `name` is not its to take, and whose it is (`keptFrom` undefined:
 * the same server's); undefined when it is free. What to change depends on why: a listing with a
 * name twice, or a tool named like another's hashed name, is the server's doing; two prefixes
 * that clean to the same text, or names that meet at "__", are the configuration's.
 */
function whyTaken(
	mcpName: string,
	name: string,
	holders: ReadonlyMap<string, string>,
	listedBefore: boolean,
	owner: { server: string; prefix: string } | undefined,
	prefix: string,
): { why: string; keptFrom?: string } | undefined {
	const holder = holders.get(name);
	if (holder !== undefined && holder !== mcpName) {
		return { why: `the server's tool "${holder}" has it (the tool named so as it is keeps it, else the one whose name sorts first, whatever order the server lists them in)` };
	}
	if (listedBefore) return { why: "the server lists a tool of that name more than once; the first is kept" };
	if (owner === undefined) return undefined;
	const sharedPrefix = cleanedPrefix(prefix);
	const why =
		cleanedPrefix(owner.prefix) !== sharedPrefix
			? `its prefix "${owner.prefix}" and tool name make the same name (give one of the servers a different toolPrefix)`
			: sharedPrefix === ""
				? `neither server's tools are prefixed (toolPrefix false or "": give one of them a toolPrefix)`
				: `both servers' tools are prefixed "${sharedPrefix}" (give one of them a toolPrefix of its own)`;
	return { why: `a tool of server "${owner.server}" has it: ${why}`, keptFrom: owner.server };
}

/**
 * Builds the agent's tool list from every server's listing, in `servers` order: filters,
 * leaves out tools it cannot offer (a broken schema, a task-only tool, a name already
 * taken) with a problem naming the server and tool, and names the rest.
 *
 * It keeps the tool objects it built: a tool that is listed again unchanged (after a
 * reconnect or a `list_changed` that touched other tools) is the same object, so a tool list
 * compares equal, and its schema is not checked twice.
 *
 * @example
 * const catalog = new McpToolCatalog();
 * const { tools, problems } = catalog.build([{ caller: connection, prefix: "everything__", tools: connection.tools }]);
 */
export class McpToolCatalog {
	private cache = new Map<string, CachedTool>();

	build(sources: readonly CatalogSource[]): CatalogResult {
		const tools: McpAgentTool[] = [];
		const problems: McpProblem[] = [];
		const offered = new Map<string, number>();
		const owners = new Map<string, { server: string; prefix: string }>();
		const nextCache = new Map<string, CachedTool>();
		for (const source of sources) {
			const server = source.caller.server;
			offered.set(server, 0);
			const holders = nameHolders(source);
			const named = new Set<string>();
			for (const info of source.tools) {
				if (!selected(source, info)) continue;
				if (info.taskSupport === "required") {
					problems.push({
						kind: "task-required",
						server,
						tool: info.name,
						message: `MCP server "${server}": tool "${info.name}" left out: it runs only as an MCP task, which agentchart/mcp does not support`,
					});
					continue;
				}
				const name = agentToolName(source.prefix, info.name);
				const key = `${server}\u0000${info.name}\u0000${name}`;
				const cached = this.entryFor(key, source, info, name);
				nextCache.set(key, cached);
				if (!cached.tool) {
					problems.push({
						kind: "invalid-schema",
						server,
						tool: info.name,
						issues: cached.issues,
						message: `MCP server "${server}": tool "${info.name}" left out: its input schema is invalid:\n${cached.issues.map((issue) => `  - ${issue}`).join("\n")}`,
					});
					continue;
				}
				const taken = whyTaken(info.name, name, holders, named.has(name), owners.get(name), source.prefix);
				if (taken) {
					problems.push({
						kind: "name-collision",
						server,
						tool: info.name,
						name,
						keptFrom: taken.keptFrom ?? server,
						message: `MCP server "${server}": tool "${info.name}" left out: the name "${name}" is already taken: ${taken.why}`,
					});
					continue;
				}
				named.add(name);
				owners.set(name, { server, prefix: source.prefix });
				offered.set(server, (offered.get(server) ?? 0) + 1);
				tools.push(cached.tool);
			}
		}
		this.cache = nextCache;
		return { tools, problems, offered };
	}

	private entryFor(key: string, source: CatalogSource, info: McpToolInfo, name: string): CachedTool {
		const fingerprint = JSON.stringify([info, source.timeoutMs ?? 0]);
		const cached = this.cache.get(key);
		if (cached && cached.fingerprint === fingerprint) return cached;
		const issues = toolSchemaIssues(info.inputSchema);
		const tool = issues.length === 0 ? createMcpAgentTool(source.caller, info, name, source.timeoutMs) : undefined;
		return { fingerprint, tool, issues };
	}
}
