/**
 * `agentchart/mcp`: MCP servers as agent tools.
 *
 * Connects to servers over stdio (a child process) or Streamable HTTP with the official
 * `@modelcontextprotocol/sdk`, an optional peer dependency that is loaded only when this
 * subpath is imported. Each connection is a small statechart (connecting, ready,
 * reconnecting with backoff, failed, closing, closed); each listed tool becomes an
 * `AgentTool` whose schema is checked like any other tool's.
 *
 * @example
 * import { Agent } from "agentchart";
 * import { connectMcpServers } from "agentchart/mcp";
 *
 * const mcp = await connectMcpServers({ servers: { everything: { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] } } });
 * const agent = new Agent({ initialState: { tools: mcp.tools() } });
 * await agent.prompt("Echo hello with the everything__echo tool");
 * await mcp.close();
 */
import type { StateMachineLike } from "../types/actor-shapes.js";
import { mcpConnectionMachine } from "./connection-machine.js";

export { connectMcpServers, type ConnectMcpServersOptions, type McpServers } from "./servers.js";
export type { McpConnectionActor, McpConnectionSnapshot, McpConnectionStateValue } from "./connection.js";
export { McpToolError, type McpAgentTool } from "./tool-adapter.js";
export { mapCallToolResult, type McpCallResult, type MappedMcpResult } from "./content.js";
export { agentToolName, toolPrefixFor, MAX_TOOL_NAME_LENGTH } from "./names.js";
export type {
	McpClientInfo,
	McpConnectionState,
	McpHttpServerConfig,
	McpProblem,
	McpReconnectOptions,
	McpResourceReference,
	McpServerConfig,
	McpServerOptions,
	McpServerStatus,
	McpStdioServerConfig,
	McpToolAnnotations,
	McpToolDetails,
	McpToolInfo,
	McpToolProgressDetails,
	McpToolResultDetails,
} from "./types.js";

/**
 * The connection statechart's definition, typed by its shape only (XState's own types are
 * kept out of these declarations), for diagrams and the visualizer.
 *
 * @example
 * import { toMermaid } from "agentchart/inspect";
 * import { mcpConnectionChart } from "agentchart/mcp";
 * console.log(toMermaid(mcpConnectionChart));
 */
export const mcpConnectionChart: StateMachineLike = mcpConnectionMachine;
