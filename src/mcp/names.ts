import { createHash } from "node:crypto";

/**
 * Agent-facing tool names. Model APIs accept tool names of 1 to 64 characters from
 * `[A-Za-z0-9_-]` (Anthropic and OpenAI alike), while MCP names may be up to 128 characters
 * and contain dots or slashes; and two servers may both offer a `search`. So each name gets
 * its server's prefix, other characters become `_`, and a name still too long is cut and
 * given a short hash of the full name, so that it stays unique and stable across runs.
 */

/**
 * Longest tool name the model APIs accept.
 *
 * @example
 * agentToolName("x__", "y".repeat(100)).length === MAX_TOOL_NAME_LENGTH; // true
 */
export const MAX_TOOL_NAME_LENGTH = 64;

const INVALID_CHARACTERS = /[^A-Za-z0-9_-]/g;

/**
 * The prefix of a server's tools: the configured one, or `<server>__` by default.
 *
 * @example
 * toolPrefixFor("github", undefined); // "github__"
 * toolPrefixFor("github", "gh_");     // "gh_"
 * toolPrefixFor("github", false);     // ""
 */
export function toolPrefixFor(server: string, configured: string | false | undefined): string {
	if (configured === false) return "";
	return configured ?? `${server}__`;
}

/**
 * The name the model sees for a server's tool.
 *
 * @example
 * agentToolName("everything__", "get-sum");      // "everything__get-sum"
 * agentToolName("fs__", "files/read.v2");         // "fs__files_read_v2"
 */
export function agentToolName(prefix: string, mcpName: string): string {
	const cleaned = `${prefix}${mcpName}`.replace(INVALID_CHARACTERS, "_") || "_";
	return cleaned.length <= MAX_TOOL_NAME_LENGTH ? cleaned : hashedAgentToolName(prefix, mcpName);
}

/**
 * The name with an 8-character hash of the full name at its end (cut to fit): for a name too
 * long, and for a tool whose cleaned name another tool of the same server already has
 * (`a.b` and `a_b`), which no `toolPrefix` could tell apart. Stable from run to run.
 *
 * @example
 * hashedAgentToolName("fs__", "a.b"); // "fs__a_b_" followed by 8 hex digits
 */
export function hashedAgentToolName(prefix: string, mcpName: string): string {
	const full = `${prefix}${mcpName}`;
	const cleaned = full.replace(INVALID_CHARACTERS, "_") || "_";
	const hash = createHash("sha256").update(full).digest("hex").slice(0, 8);
	return `${cleaned.slice(0, MAX_TOOL_NAME_LENGTH - hash.length - 1)}_${hash}`;
}
