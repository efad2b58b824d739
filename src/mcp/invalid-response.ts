/**
 * A server's answer that is not a valid JSON-RPC 2.0 response. The SDK checks every message
 * against its schema and drops one that fails (stdio) or throws its schema errors (Streamable
 * HTTP): the request it answers then waits for ever, since agentchart turns the SDK's own time
 * limit off, or fails with a page of schema issues as its message. Both become an error for
 * that request, saying what is wrong in one line.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { excerpt } from "../providers/http-error-text.js";

/** JSON-RPC's "internal error": the answer exists but cannot be used. */
const INVALID_ANSWER_CODE = -32603;

function kindOf(value: unknown): string {
	if (value === null) return "null";
	if (Array.isArray(value)) return "an array";
	return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** What is wrong with a message that answers a request (has an id, no method), or undefined when nothing visible is. */
function problemOf(message: Record<string, unknown>): string | undefined {
	if (message["jsonrpc"] !== "2.0") return `its "jsonrpc" is ${message["jsonrpc"] === undefined ? "missing" : JSON.stringify(message["jsonrpc"])}, not "2.0"`;
	const hasResult = "result" in message;
	const hasError = "error" in message;
	if (hasResult === hasError) return hasResult ? "it has both a result and an error" : "it has neither a result nor an error";
	if (hasResult) {
		const result = message["result"];
		return typeof result === "object" && result !== null && !Array.isArray(result) ? undefined : `its result is ${kindOf(result)}, not an object`;
	}
	const error = message["error"];
	if (typeof error !== "object" || error === null || Array.isArray(error)) return `its error is ${kindOf(error)}, not an object`;
	const { code, message: text } = error as Record<string, unknown>;
	if (!Number.isInteger(code)) return `its error's code is ${code === undefined ? "missing" : JSON.stringify(code)}, not an integer`;
	if (typeof text !== "string") return `its error's message is ${text === undefined ? "missing" : kindOf(text)}, not a string`;
	return undefined;
}

/**
 * The error response to deliver in place of a line the SDK refused, when the line answers a
 * request (a JSON object with a string or number `id` and no `method`); undefined for anything
 * else (a log line on stdout, a malformed notification), which is reported and skipped as before.
 *
 * @example
 * invalidAnswerFor('{"jsonrpc":"2.0","id":3,"result":"done"}');
 * // { jsonrpc: "2.0", id: 3, error: { code: -32603, message: "the server's answer is not a valid JSON-RPC 2.0 response: its result is a string, not an object: {...}" } }
 */
export function invalidAnswerFor(line: string): JSONRPCMessage | undefined {
	let parsed: unknown;
	try {
		parsed = JSON.parse(line);
	} catch {
		return unreadableAnswerFor(line);
	}
	if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
	const message = parsed as Record<string, unknown>;
	const id = message["id"];
	if ((typeof id !== "string" && typeof id !== "number") || "method" in message) return undefined;
	const problem = problemOf(message) ?? "the SDK refused it";
	return { jsonrpc: "2.0", id, error: { code: INVALID_ANSWER_CODE, message: `the server's answer is not a valid JSON-RPC 2.0 response: ${problem}: ${excerpt(line, 200)}` } };
}

/**
 * A JSON-RPC answer's id as the line states it, read without parsing: an `"id"` member of the
 * top-level object, before anything nested (a result holds ids of its own, and failing the
 * request one of those names would fail another call), a number or a string without escapes.
 */
const STATED_ID = /^\s*\{[^{}[\]]*?"id"\s*:\s*(-?\d+|"[^"\\]*")\s*[,}]/;

/**
 * For a line that is not JSON but reads as an answer (it names `"jsonrpc"` and an id, and no
 * `"method"`): the error response for that id. A server that writes its answer cut short or
 * malformed would otherwise leave the request waiting; a log line on stdout names no JSON-RPC id.
 */
function unreadableAnswerFor(line: string): JSONRPCMessage | undefined {
	if (!line.includes('"jsonrpc"') || line.includes('"method"')) return undefined;
	const stated = STATED_ID.exec(line)?.[1];
	if (stated === undefined) return undefined;
	const id: string | number = stated.startsWith('"') ? stated.slice(1, -1) : Number(stated);
	return { jsonrpc: "2.0", id, error: { code: INVALID_ANSWER_CODE, message: `the server's answer is not JSON: ${excerpt(line, 200)}` } };
}

/** A schema error as the SDK throws it (Zod's): a list of issues, each with a path and a message. */
interface SchemaIssues {
	issues: ReadonlyArray<{ path?: ReadonlyArray<PropertyKey>; message?: string }>;
}

function isSchemaError(error: unknown): error is Error & SchemaIssues {
	return error instanceof Error && Array.isArray((error as Partial<SchemaIssues>).issues);
}

/**
 * A schema error the SDK threw for a server's answer, made one line (the first issue, where it
 * is); any other error as it is.
 *
 * @example
 * throw readableSchemaError(error); // "the server's answer is not a valid JSON-RPC 2.0 response: Invalid input (at result)"
 */
export function readableSchemaError(error: unknown): unknown {
	if (!isSchemaError(error)) return error;
	const first = error.issues[0];
	const where = first?.path && first.path.length > 0 ? ` (at ${first.path.map(String).join(".")})` : "";
	const more = error.issues.length > 1 ? `, and ${error.issues.length - 1} more` : "";
	return new Error(`the server's answer is not a valid JSON-RPC 2.0 response: ${first?.message ?? "the SDK refused it"}${where}${more}`);
}
