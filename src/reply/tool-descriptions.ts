/**
 * What the reply layer says about tool calls: a one-line meta ("~/notes.md", "npm test"), a
 * summary line for verbose channels ("📖 Read: `~/notes.md`"), the text output of a result,
 * and whether a result is a failure.
 */
import type { ReplyPayload } from "./types.js";
import { environmentVariable } from "../util/host.js";
import { ownValue } from "../util/own-keys.js";

/**
 * Arguments as a record, or an empty one when the model sent something else.
 *
 * @example
 * argsRecord({ path: "/a" }); // { path: "/a" }
 * argsRecord("oops");         // {}
 */
export function argsRecord(args: unknown): Record<string, unknown> {
	return typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
}

function stringArg(args: Record<string, unknown>, keys: readonly string[]): string | undefined {
	for (const key of keys) {
		const value = args[key];
		if (typeof value === "string" && value.trim() !== "") return value.trim();
	}
	return undefined;
}

/** Argument names that carry a file path, in the order they are looked up. */
export const PATH_KEYS = ["file_path", "path", "file", "filePath", "jsonlPath"] as const;
const META_KEYS = [...PATH_KEYS, "command", "cmd", "url", "targetUrl", "query", "pattern", "to", "target"] as const;

function shortenHome(value: string): string {
	const home = environmentVariable("HOME");
	return home && home.length > 1 && value.startsWith(`${home}/`) ? `~${value.slice(home.length)}` : value;
}

/**
 * A short description of what a tool call touches.
 *
 * @example
 * inferToolMeta("read", { file_path: "/tmp/a.txt" });      // "/tmp/a.txt"
 * inferToolMeta("exec", { command: "ls", pty: true });      // "ls"
 */
export function inferToolMeta(_toolName: string, args: unknown): string | undefined {
	const value = stringArg(argsRecord(args), META_KEYS);
	return value === undefined ? undefined : shortenHome(value);
}

const EMOJI: Record<string, string> = {
	read: "📖",
	write: "✍️",
	edit: "📝",
	apply_patch: "🩹",
	exec: "🛠️",
	bash: "🛠️",
	browser: "🌐",
	canvas: "🖼️",
	web_search: "🔎",
	web_fetch: "🌍",
	message: "✉️",
	sessions_send: "✉️",
};

function toolLabel(toolName: string): string {
	return toolName
		.split(/[_\-\s]+/)
		.filter((part) => part !== "")
		.map((part) => part[0]?.toUpperCase() + part.slice(1))
		.join(" ");
}

/**
 * A multi-line argument (a heredoc, a script) on one line. Kept as it was, a line of it could
 * start with a fence marker and open a code block that swallows the rest of the chat; inside a
 * Markdown code span a line break shows as a space anyway.
 */
function oneLine(value: string): string {
	return value.replace(/[ \t]*\r?\n[ \t]*/g, " ");
}

/**
 * An inline code span that holds `value` whole: its delimiter is longer than any backtick run
 * in it, so a backtick inside neither ends the span early nor leaves one open.
 */
function codeSpan(value: string): string {
	let longestRun = 0;
	for (const run of value.matchAll(/`+/g)) longestRun = Math.max(longestRun, run[0].length);
	const delimiter = "`".repeat(longestRun + 1);
	// CommonMark strips one space at each end of a span: needed when the value starts or ends with a backtick.
	const padding = value.startsWith("`") || value.endsWith("`") ? " " : "";
	return `${delimiter}${padding}${value}${padding}${delimiter}`;
}

/**
 * The summary line of a tool call for verbose channels: always one line, whatever the arguments.
 *
 * @example
 * formatToolSummary("exec", { command: "claude", pty: true }); // "🛠️ Exec: `claude` · pty"
 * formatToolSummary("read", { path: "/tmp/a" }, "plain");      // "📖 Read: /tmp/a"
 * formatToolSummary("exec", { command: "cat <<EOF\n```\nEOF" }); // "🛠️ Exec: ````cat <<EOF ``` EOF````"
 */
export function formatToolSummary(toolName: string, args: unknown, format: "markdown" | "plain" = "markdown"): string {
	const emoji = ownValue(EMOJI, toolName) ?? "🧩";
	const meta = inferToolMeta(toolName, args);
	const record = argsRecord(args);
	// Flags stay outside the code span: they describe how it ran, not what.
	const flags = ["pty", "elevated"].filter((flag) => record[flag] === true);
	const shownMeta = meta === undefined ? "" : format === "markdown" ? codeSpan(oneLine(meta)) : oneLine(meta);
	const parts = [shownMeta, ...flags].filter((part) => part !== "");
	return parts.length > 0 ? `${emoji} ${toolLabel(toolName)}: ${parts.join(" · ")}` : `${emoji} ${toolLabel(toolName)}`;
}

/**
 * The text blocks of a tool result (`{ content: [{ type: "text", text }] }`), joined by newlines.
 *
 * @example
 * extractToolResultText({ content: [{ type: "text", text: "a" }, { type: "image" }] }); // "a"
 */
export function extractToolResultText(result: unknown): string {
	if (typeof result === "string") return result;
	const content = argsRecord(result)["content"];
	if (!Array.isArray(content)) return "";
	return content
		.map((block) => {
			const record = argsRecord(block);
			const text = record["text"];
			return record["type"] === "text" && typeof text === "string" ? text : "";
		})
		.filter((text) => text !== "")
		.join("\n");
}

/**
 * The verbose output message of a tool result: its summary line, then the output in a code block.
 *
 * @example
 * formatToolOutput("exec", { command: "ls" }, { content: [{ type: "text", text: "a\nb" }] });
 * // { text: "🛠️ Exec: `ls`\n```txt\na\nb\n```" }
 */
export function formatToolOutput(
	toolName: string,
	args: unknown,
	result: unknown,
	format: "markdown" | "plain" = "markdown",
): ReplyPayload {
	const output = extractToolResultText(result).trim() || "(no output)";
	const summary = formatToolSummary(toolName, args, format);
	// Longer than any backtick run in the output: a line of the output cannot close it early and
	// leave the real closing line opening a fence that swallows the rest of the chat.
	let longestRun = 0;
	for (const run of output.matchAll(/`+/g)) longestRun = Math.max(longestRun, run[0].length);
	const fence = "`".repeat(Math.max(3, longestRun + 1));
	const body = format === "markdown" ? `${fence}txt\n${output}\n${fence}` : output;
	return { text: `${summary}\n${body}` };
}

const FAILED_STATUSES = new Set(["error", "failed", "failure", "timeout", "timed_out", "denied", "rejected"]);

/**
 * The error message of a failed tool result, or `undefined` when it succeeded. A result counts
 * as failed when the event says so or when its `details.status` is an error status.
 *
 * @example
 * extractToolError({ details: { status: "timeout" } }, false); // "timeout"
 * extractToolError({ details: { status: "ok" } }, false);      // undefined
 */
export function extractToolError(result: unknown, isError: boolean): string | undefined {
	const details = argsRecord(argsRecord(result)["details"]);
	const rawStatus = details["status"];
	const status = typeof rawStatus === "string" ? rawStatus.toLowerCase() : undefined;
	const failedStatus = status !== undefined && FAILED_STATUSES.has(status);
	if (!isError && !failedStatus) return undefined;
	const error = details["error"];
	if (typeof error === "string" && error !== "") return error;
	const text = extractToolResultText(result).trim();
	if (text !== "") return text;
	return status ?? "error";
}

/**
 * True when a failed result says it timed out.
 *
 * @example
 * isToolTimeout({ details: { timedOut: true } }); // true
 */
export function isToolTimeout(result: unknown): boolean {
	const details = argsRecord(argsRecord(result)["details"]);
	const status = details["status"];
	return details["timedOut"] === true || status === "timeout" || status === "timed_out";
}
