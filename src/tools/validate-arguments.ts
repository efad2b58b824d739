import { Compile, type Validator } from "typebox/compile";
import type { TLocalizedValidationError } from "typebox/error";
import type { TSchema } from "typebox";
import { Value } from "typebox/value";
import type { AgentToolCall } from "../types/agent.js";
import type { Tool } from "../types/model.js";
import { cloneJson } from "../util/clone-json.js";
import { ownValue } from "../util/own-keys.js";
import { coerceWithSchema } from "./coerce.js";

/**
 * One validator per schema object, compiled on first use: tool lists are usually built once
 * and reused, and compiling is far dearer than checking.
 */
const validators = new WeakMap<object, Validator>();

/**
 * The compiled validator of a schema (cached per schema object). Throws when the schema does
 * not compile.
 *
 * @example
 * validatorFor(tool.parameters).Check({ n: 1 }); // true or false
 */
export function validatorFor(schema: TSchema): Validator {
	let validator = validators.get(schema);
	if (!validator) {
		validator = Compile(schema);
		validators.set(schema, validator);
	}
	return validator;
}

/** The TypeBox kinds whose conversion returns a value that already validates as it is. */
const KINDS_KEEPING_VALID = new Set(["Object", "Array", "String", "Number", "Integer", "Boolean", "Null", "Literal", "Any", "Unknown"]);

/** Keywords that make coercion choose or combine sub-schemas, or refer elsewhere. */
const COMBINING_KEYWORDS = ["anyOf", "oneOf", "allOf", "not", "if", "$ref", "$defs", "definitions", "prefixItems", "patternProperties"];

const keepsValid = new WeakMap<object, boolean>();

/**
 * Whether conversion and coercion leave arguments that already validate against `schema` as
 * they are: true for a schema of objects, arrays and primitives without unions or references.
 * Two exceptions always go the whole way, as pi 0.73.1 does: a union (coercion takes its first
 * member that the coerced value matches, so `"42"` for `anyOf: [number, string]` becomes `42`
 * although it is a valid string), and a TypeBox object with a schema for additional properties.
 */
function keepsValidArguments(schema: unknown): boolean {
	if (typeof schema !== "object" || schema === null) return true;
	const known = keepsValid.get(schema);
	if (known !== undefined) return known;
	// A schema that contains itself is taken the whole way (provisional answer while walking it).
	keepsValid.set(schema, false);
	const keeps = nodeKeepsValid(schema as Record<string, unknown>);
	keepsValid.set(schema, keeps);
	return keeps;
}

/** {@link keepsValidArguments} for one node of a schema, its sub-schemas walked through that. */
function nodeKeepsValid(node: Record<string, unknown>): boolean {
	const kind = ownValue(node, "~kind");
	if (kind !== undefined && !(typeof kind === "string" && KINDS_KEEPING_VALID.has(kind))) return false;
	if (COMBINING_KEYWORDS.some((keyword) => Object.hasOwn(node, keyword))) return false;
	const { items, properties, additionalProperties } = node;
	if (Array.isArray(items)) return false;
	// TypeBox converts every property of an object of its own by the schema of additional
	// properties too once it has two (typebox 1.4: a valid `null` becomes 0 for an integer one).
	if (kind === "Object" && typeof additionalProperties === "object") return false;
	if (typeof properties === "object" && properties !== null && !Object.values(properties).every(keepsValidArguments)) return false;
	return keepsValidArguments(items) && keepsValidArguments(additionalProperties);
}

const checkSubSchema = (schema: object, value: unknown): boolean => {
	try {
		return validatorFor(schema).Check(value);
	} catch {
		return false;
	}
};

/**
 * Where an issue is, as a dotted path ("root" for the arguments object itself). A missing
 * property is reported at the object that lacks it, with every missing name in the message
 * (`root: must have required properties n, unit`). pi-ai 0.73.1 puts it at the first missing
 * name (`n: must have required properties n, unit`), which reads as if `n` were there and wrong.
 */
function issuePath(issue: TLocalizedValidationError): string {
	return issue.instancePath.replace(/^\//, "").replace(/\//g, ".") || "root";
}

/**
 * Validates a tool call's arguments against the tool's JSON Schema and returns them coerced
 * (`"42"` becomes `42` for a number field, as pi 0.73.1 does). Every schema (built with
 * `typebox`, `@sinclair/typebox`, or written by hand) goes through the same validator, so
 * the messages read the same: `must be number`. Throws an error listing every failing path
 * and the arguments received.
 *
 * @example
 * const args = validateToolArguments(tool, { type: "toolCall", id: "1", name: "num", arguments: { n: "42" } });
 * // args.n === 42
 */
export function validateToolArguments(tool: Tool, toolCall: AgentToolCall): unknown {
	const schema = tool.parameters;
	const validator = validatorFor(schema);
	const raw = cloneJson(toolCall.arguments ?? {});
	// What models send mostly validates as sent: then the two steps below change nothing.
	if (keepsValidArguments(schema) && validator.Check(raw)) return raw;
	// TypeBox's own conversion first (in place, for schemas built with `typebox`), then the
	// JSON Schema coercion every schema gets: the two steps pi 0.73.1 takes, in its order.
	Value.Convert(schema, raw);
	const args = coerceWithSchema(raw, schema, checkSubSchema);
	if (validator.Check(args)) return args;
	const issues = validator.Errors(args);
	const lines = issues.map((issue) => `  - ${issuePath(issue)}: ${issue.message}`).join("\n") || "  - root: does not match the schema";
	throw new Error(
		`Validation failed for tool "${toolCall.name}":\n${lines}\n\nReceived arguments:\n${quoted(toolCall.arguments)}`,
	);
}

/**
 * The arguments as the error quotes them: JSON, as pi quotes them. Arguments a caller hands in
 * (`approve(id, { arguments })`) may hold what JSON refuses; the error about them must still be the
 * validation's, not JSON's.
 */
function quoted(args: unknown): string {
	try {
		return JSON.stringify(args, (_key, value: unknown) => (typeof value === "bigint" ? `${value}n` : value), 2);
	} catch (error) {
		return `(not JSON: ${error instanceof Error ? error.message : String(error)})`;
	}
}
