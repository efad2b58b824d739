import { Compile, type Validator } from "typebox/compile";
import type { TLocalizedValidationError } from "typebox/error";
import type { TSchema } from "typebox";
import { Value } from "typebox/value";
import type { AgentToolCall } from "../types/agent.js";
import type { Tool } from "../types/model.js";
import { cloneJson } from "../util/clone-json.js";
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
	// TypeBox's own conversion first (in place, for schemas built with `typebox`), then the
	// JSON Schema coercion every schema gets: the two steps pi 0.73.1 takes, in its order.
	Value.Convert(schema, raw);
	const args = coerceWithSchema(raw, schema, checkSubSchema);
	if (validator.Check(args)) return args;
	const issues = validator.Errors(args);
	const lines = issues.map((issue) => `  - ${issuePath(issue)}: ${issue.message}`).join("\n") || "  - root: does not match the schema";
	throw new Error(
		`Validation failed for tool "${toolCall.name}":\n${lines}\n\nReceived arguments:\n${JSON.stringify(toolCall.arguments, null, 2)}`,
	);
}
