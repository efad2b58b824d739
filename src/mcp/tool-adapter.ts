import type { AgentTool, AgentToolResult, AgentToolUpdateCallback } from "../types/agent.js";
import type { ToolParameters } from "../types/model.js";
import { mapCallToolResult, resultText, type McpCallResult } from "./content.js";
import type { McpCallOptions, McpProgress } from "./call-options.js";
import type { McpToolAnnotations, McpToolDetails, McpToolInfo, McpToolResultDetails } from "./types.js";
import { isRecord } from "../util/json-values.js";
import { ownValue } from "../util/own-keys.js";

/** What an MCP tool needs from its server's connection. */
export interface McpToolCaller {
	readonly server: string;
	callTool(tool: string, args: Readonly<Record<string, unknown>>, options?: McpCallOptions): Promise<McpCallResult>;
}

/**
 * An `AgentTool` backed by an MCP server's tool, with the server's `annotations`. Like any
 * tool it is not replay-safe and needs no approval unless the application says so: copy it with
 * `replay` or `needsApproval` set (see docs/mcp.md, "Durable runs and approvals").
 *
 * @example
 * const tools = mcp.tools().map((tool: McpAgentTool) => (tool.annotations.readOnlyHint === true ? { ...tool, replay: "safe" as const } : tool));
 */
export interface McpAgentTool extends AgentTool<ToolParameters, McpToolDetails> {
	/**
	 * The tool's annotations as the server listed them, the keys MCP defines with values of
	 * their type (others are left out; an empty object when it listed none), frozen: the server's
	 * hints, which agentchart itself does not act on.
	 */
	readonly annotations: Readonly<McpToolAnnotations>;
}

const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;

/** The annotations of a listed tool, keeping only values of the types MCP gives them. */
function readAnnotations(listed: McpToolInfo["annotations"]): Readonly<McpToolAnnotations> {
	const annotations: { -readonly [K in keyof McpToolAnnotations]: McpToolAnnotations[K] } = {};
	if (listed) {
		const title = ownValue(listed, "title");
		if (typeof title === "string") annotations.title = title;
		for (const hint of HINTS) {
			const value = ownValue(listed, hint);
			if (typeof value === "boolean") annotations[hint] = value;
		}
	}
	return Object.freeze(annotations);
}

/**
 * Thrown by an MCP tool whose result has `isError: true`, so the agent records an error
 * result. Its message is the result's text (what the model sees); the mapped result stays
 * available to code that calls the tool itself.
 *
 * @example
 * try { await tool.execute("id", {}); } catch (error) {
 *   if (error instanceof McpToolError) console.log(error.result.details.server);
 * }
 */
export class McpToolError extends Error {
	override readonly name = "McpToolError";
	constructor(
		message: string,
		/** The result as mapped, with `details`. */
		readonly result: AgentToolResult<McpToolResultDetails>,
	) {
		super(message);
	}
}

function progressText(progress: McpProgress): string {
	if (progress.message) return progress.message;
	return progress.total !== undefined ? `Progress: ${progress.progress}/${progress.total}` : `Progress: ${progress.progress}`;
}

function relayProgress(
	caller: McpToolCaller,
	tool: string,
	onUpdate: AgentToolUpdateCallback<McpToolDetails> | undefined,
): ((progress: McpProgress) => void) | undefined {
	if (!onUpdate) return undefined;
	return (progress) => {
		const details: McpToolDetails = { kind: "progress", server: caller.server, tool, progress: progress.progress };
		if (progress.total !== undefined) details.total = progress.total;
		if (progress.message !== undefined) details.message = progress.message;
		onUpdate({ content: [{ type: "text", text: progressText(progress) }], details });
	};
}

/**
 * The `AgentTool` for one MCP tool, under the agent-facing `name`. Its `execute` passes the
 * run's abort signal on (aborting cancels the MCP request), relays progress notifications
 * to `onUpdate`, maps the result's content, and throws for a result flagged `isError` (the
 * agent's way to record an error result).
 *
 * @example
 * const tool = createMcpAgentTool(connection, info, "everything__echo", undefined);
 * const result = await tool.execute("call-1", { message: "hi" });
 */
export function createMcpAgentTool(caller: McpToolCaller, info: McpToolInfo, name: string, timeoutMs: number | undefined): McpAgentTool {
	const title = info.title ?? (typeof info.annotations?.["title"] === "string" ? info.annotations["title"] : undefined);
	const tool: McpAgentTool = {
		name,
		annotations: readAnnotations(info.annotations),
		label: title ?? info.name,
		description: info.description ?? title ?? "",
		// An MCP input schema is a JSON Schema object, the form agentchart checks and validates.
		parameters: info.inputSchema as ToolParameters,
		async execute(_toolCallId, params, signal, onUpdate) {
			const onProgress = relayProgress(caller, info.name, onUpdate);
			const raw = await caller.callTool(info.name, isRecord(params) ? params : {}, {
				signal,
				timeoutMs,
				onProgress,
			});
			const { result, isError } = mapCallToolResult(raw, caller.server, info.name);
			if (isError) {
				throw new McpToolError(resultText(result) || `MCP tool "${info.name}" of server "${caller.server}" failed`, result);
			}
			return result;
		},
	};
	// 0 too: it is the agent's "no limit" for this tool, where leaving it out would mean the agent's default.
	if (timeoutMs !== undefined) tool.timeoutMs = timeoutMs;
	return tool;
}
