import { createHash } from "node:crypto";

/**
 * Agent-facing tool names. Model APIs accept tool names of 1 to 64 characters from
 * `[A-Za-z0-9_-]` (Anthropic and OpenAI alike), while MCP names may be up to 128 characters
 * and contain dots or slashes; and two servers may both offer a `search`. So each name gets
 * its server's prefix, and a tool name that does not fit as it is (other characters, or too
 * long) is cleaned, cut and always given a short hash of the full name.
 *
 * The name is a function of the prefix and the tool's own name alone, never of the rest of the
 * listing: a stored call (waiting for approval, or replayed after a restart) must reach the tool
 * the model called, whatever the server added since. Hashing only when two names clash would
 * let a tool added later (`report_v2`) take the name another (`report.v2`) had until then.
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
 * The name the model sees for a server's tool: the prefix (other characters replaced by `_`)
 * and the tool's own name when that name is made of `[A-Za-z0-9_-]` only and the whole fits
 * in 64 characters; otherwise the cleaned name cut to fit an 8-character hash of the full name
 * (`hashedAgentToolName`). It depends on nothing else, so it is the same whatever else the
 * server lists, from run to run.
 *
 * @example
 * agentToolName("everything__", "get-sum");      // "everything__get-sum"
 * agentToolName("fs__", "files/read.v2");         // "fs__files_read_v2_" followed by 8 hex digits
 * agentToolName("fs.1__", "read");                // "fs_1__read": the prefix is cleaned, not hashed
 */
export function agentToolName(prefix: string, mcpName: string): string {
	const name = `${cleanedPrefix(prefix)}${mcpName}`;
	if (fitsAsIs(mcpName) && name.length > 0 && name.length <= MAX_TOOL_NAME_LENGTH) return name;
	return hashedAgentToolName(prefix, mcpName);
}

/**
 * The prefix as it appears in tool names: characters the model APIs refuse become `_`. Only
 * the tool's own name decides on a hash: a server key with a dot (`docs.v2`) would otherwise
 * give every one of its tools a hash.
 *
 * @example
 * cleanedPrefix("docs.v2__"); // "docs_v2__"
 */
export function cleanedPrefix(prefix: string): string {
	return prefix.replace(INVALID_CHARACTERS, "_");
}

function fitsAsIs(mcpName: string): boolean {
	return !/[^A-Za-z0-9_-]/.test(mcpName);
}

/**
 * The name with an 8-character hash of the full name (prefix and tool name as they are) at its
 * end, the cleaned name cut to fit: the name of every tool whose own name had to be changed to
 * fit the model APIs' rules. Stable from run to run.
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
