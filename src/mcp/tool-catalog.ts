import { toolSchemaIssues } from "../tools/tool-schema.js";
import { agentToolName, hashedAgentToolName } from "./names.js";
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

/** The agent-facing names that more than one offered tool of `source` cleans to. */
function clashingNames(source: CatalogSource): Set<string> {
	const seen = new Set<string>();
	const clash = new Set<string>();
	for (const info of source.tools) {
		if (!selected(source, info) || info.taskSupport === "required") continue;
		const name = agentToolName(source.prefix, info.name);
		if (seen.has(name)) clash.add(name);
		seen.add(name);
	}
	return clash;
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
			const clash = clashingNames(source);
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
				let name = agentToolName(source.prefix, info.name);
				// Tools of this server whose names differ only in characters the model APIs refuse: no
				// toolPrefix tells them apart. The one named so already keeps the name, the others get
				// hashed names, whatever order the server lists them in (a name must not move from one
				// tool to another when the listing is reordered).
				if (clash.has(name) && `${source.prefix}${info.name}` !== name) name = hashedAgentToolName(source.prefix, info.name);
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
				const owner = owners.get(name);
				if (owner !== undefined) {
					const keptFrom = owner.server;
					// What to change depends on why: a listing with a name twice is the server's; two
					// prefixes that clean to the same text, or names that meet at "__", are the configuration's.
					const why =
						keptFrom === server
							? `the server lists a tool of that name more than once; the first is kept`
							: agentToolName(owner.prefix, "") === agentToolName(source.prefix, "")
								? `a tool of server "${keptFrom}" has it: both servers' tools are prefixed "${agentToolName(source.prefix, "")}" (give one of them a toolPrefix of its own)`
								: `a tool of server "${keptFrom}" has it: its prefix "${owner.prefix}" and tool name make the same name (give one of the servers a different toolPrefix)`;
					problems.push({
						kind: "name-collision",
						server,
						tool: info.name,
						name,
						keptFrom,
						message: `MCP server "${server}": tool "${info.name}" left out: the name "${name}" is already taken: ${why}`,
					});
					continue;
				}
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
