import { Kind, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import type { AgentToolCall } from "../types/agent.js";
import type { Tool, ToolParameters } from "../types/model.js";

/** One failing location in a tool call's arguments. */
interface ArgumentIssue {
	path: string;
	message: string;
}

// Plain JSON Schema (including TypeBox 1.x schemas, which carry no @sinclair Kind symbol) is
// validated by Ajv; one instance with type coercion, mirroring TypeBox's Value.Convert.
const ajv = new Ajv({ allErrors: true, coerceTypes: true, strict: false, useDefaults: false });
const ajvCache = new WeakMap<object, ValidateFunction>();

function isTypeBoxSchema(schema: ToolParameters): schema is TSchema {
	return typeof schema === "object" && schema !== null && Kind in schema;
}

function formatPath(path: string): string {
	if (path === "" || path === "/") return "root";
	return path.replace(/^\//, "").replace(/\//g, ".");
}

function checkWithTypeBox(schema: TSchema, args: unknown): { value: unknown; issues: ArgumentIssue[] } {
	const converted = Value.Convert(schema, args);
	if (Value.Check(schema, converted)) return { value: converted, issues: [] };
	const issues: ArgumentIssue[] = [];
	for (const error of Value.Errors(schema, converted)) {
		issues.push({ path: formatPath(error.path), message: error.message });
	}
	return { value: converted, issues };
}

function ajvIssue(error: ErrorObject): ArgumentIssue {
	let path = error.instancePath;
	if (error.keyword === "required" && typeof error.params.missingProperty === "string") {
		path = `${path}/${error.params.missingProperty}`;
	}
	return { path: formatPath(path), message: error.message ?? error.keyword };
}

function checkWithAjv(schema: object, args: unknown): { value: unknown; issues: ArgumentIssue[] } {
	let validate = ajvCache.get(schema);
	if (!validate) {
		validate = ajv.compile(schema);
		ajvCache.set(schema, validate);
	}
	// Ajv coerces in place, and it can only coerce properties of a container.
	const holder = { value: args };
	const wrapped = validate(holder.value);
	if (wrapped) return { value: holder.value, issues: [] };
	return { value: holder.value, issues: (validate.errors ?? []).map(ajvIssue) };
}

/**
 * Validates a tool call's arguments against the tool's schema and returns the converted
 * arguments (`"42"` becomes `42` for a number field). Throws an error that lists every failing
 * path and the arguments received.
 *
 * TypeBox schemas are checked with TypeBox's `Value` (after `Value.Convert`); plain JSON
 * Schema with Ajv (with type coercion).
 *
 * @example
 * const args = validateToolArguments(tool, { type: "toolCall", id: "1", name: "num", arguments: { n: "42" } });
 * // args.n === 42
 */
export function validateToolArguments(tool: Tool, toolCall: AgentToolCall): unknown {
	const args = structuredClone(toolCall.arguments ?? {});
	const schema = tool.parameters;
	const { value, issues } = isTypeBoxSchema(schema) ? checkWithTypeBox(schema, args) : checkWithAjv(schema, args);
	if (issues.length === 0) return value;
	const lines = issues.map((issue) => `  - ${issue.path}: ${issue.message}`).join("\n");
	throw new Error(
		`Validation failed for tool "${toolCall.name}":\n${lines}\n\nReceived arguments:\n${JSON.stringify(toolCall.arguments, null, 2)}`,
	);
}
