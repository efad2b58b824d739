/**
 * The parts of `@modelcontextprotocol/sdk` that `agentchart/mcp` uses, loaded when the first
 * connection opens rather than when `agentchart/mcp` is imported: the SDK is an optional peer
 * dependency, so importing the subpath (for its types, `mapCallToolResult`, or the connection
 * chart in a diagram) must work without it, and connecting without it must say what to install.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { ErrorCode, McpError, ProgressNotificationSchema, ResultSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { loadOptionalPeer } from "../util/optional-peer.js";

/** What agentchart/mcp takes from the SDK. */
export interface McpSdk {
	Client: typeof Client;
	StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
	StreamableHTTPError: typeof StreamableHTTPError;
	StdioClientTransport: typeof StdioClientTransport;
	getDefaultEnvironment: typeof getDefaultEnvironment;
	deserializeMessage: typeof deserializeMessage;
	serializeMessage: typeof serializeMessage;
	ErrorCode: typeof ErrorCode;
	McpError: typeof McpError;
	ProgressNotificationSchema: typeof ProgressNotificationSchema;
	ToolListChangedNotificationSchema: typeof ToolListChangedNotificationSchema;
	/** Any result: what `tools/list` and `tools/call` are read with, defensively, instead of their strict schemas. */
	ResultSchema: typeof ResultSchema;
}

// Checked after the load: an SDK of another major version may have moved or dropped one.
const MCP_SDK_EXPORTS: readonly (keyof McpSdk)[] = [
	"Client",
	"StreamableHTTPClientTransport",
	"StreamableHTTPError",
	"StdioClientTransport",
	"getDefaultEnvironment",
	"deserializeMessage",
	"serializeMessage",
	"ErrorCode",
	"McpError",
	"ProgressNotificationSchema",
	"ToolListChangedNotificationSchema",
	"ResultSchema",
];

let loading: Promise<McpSdk> | undefined;

/**
 * The SDK, imported once. A failed load is not kept, so installing the package fixes the next
 * connection; without the package it rejects with a message that names `agentchart/mcp`, the
 * package and the command that installs it (Node's error is the `cause`).
 *
 * @example
 * const sdk = await loadMcpSdk();
 * const client = new sdk.Client({ name: "app", version: "1.0.0" });
 */
export function loadMcpSdk(): Promise<McpSdk> {
	loading ??= loadOptionalPeer({ feature: "agentchart/mcp (connectMcpServers)", peer: "@modelcontextprotocol/sdk" }, async () => {
		const [client, stdioClient, http, stdio, types] = await Promise.all([
			import("@modelcontextprotocol/sdk/client/index.js"),
			import("@modelcontextprotocol/sdk/client/stdio.js"),
			import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
			import("@modelcontextprotocol/sdk/shared/stdio.js"),
			import("@modelcontextprotocol/sdk/types.js"),
		]);
		return {
			Client: client.Client,
			StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
			StreamableHTTPError: http.StreamableHTTPError,
			StdioClientTransport: stdioClient.StdioClientTransport,
			getDefaultEnvironment: stdioClient.getDefaultEnvironment,
			deserializeMessage: stdio.deserializeMessage,
			serializeMessage: stdio.serializeMessage,
			ErrorCode: types.ErrorCode,
			McpError: types.McpError,
			ProgressNotificationSchema: types.ProgressNotificationSchema,
			ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
			ResultSchema: types.ResultSchema,
		};
	}, MCP_SDK_EXPORTS).catch((error: unknown) => {
		loading = undefined;
		throw error;
	});
	return loading;
}
