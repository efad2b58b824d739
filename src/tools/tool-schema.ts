import type { TSchema } from "typebox";
import { validatorFor } from "./validate-arguments.js";

/**
 * Tool definitions are checked when a run starts (`prompt()`, `continue()`), not when the model
 * first calls them: a broken schema found at call time reaches the model as a confusing tool
 * error (and, for some providers, fails the whole request), while found before the run it is a
 * programming error with the tool's name on it. They are not checked on assignment
 * (`agent.state.tools = ...`), because pi accepts any list there and pi apps store tool stubs
 * (`{ name, description }`) that never run.
 */

const JSON_TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);
const SCHEMA_KEYWORDS = ["additionalProperties", "additionalItems", "unevaluatedProperties", "unevaluatedItems", "not", "if", "then", "else", "contains", "propertyNames"];
const SCHEMA_MAP_KEYWORDS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const SCHEMA_LIST_KEYWORDS = ["allOf", "anyOf", "oneOf", "prefixItems"];
const COUNT_KEYWORDS = ["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains"];
const NUMBER_KEYWORDS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"];

type JsonObject = Record<string, unknown>;

/** Schemas already found valid: tool lists are often reassigned whole, with the same tools. */
const validSchemas = new WeakSet<object>();

function isObject(value: unknown): value is JsonObject {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function join(path: string, key: string | number): string {
	return path === "" ? String(key) : `${path}.${key}`;
}

/** Follows a local `$ref` ("#/$defs/node") through the root schema. */
function resolvesLocally(root: JsonObject, ref: string): boolean {
	if (ref === "#") return true;
	if (!ref.startsWith("#/")) return false;
	let node: unknown = root;
	for (const raw of ref.slice(2).split("/")) {
		const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
		if (!isObject(node) && !Array.isArray(node)) return false;
		node = (node as JsonObject)[key];
		if (node === undefined) return false;
	}
	return true;
}

function checkType(type: unknown, path: string, issues: string[]): void {
	const types = Array.isArray(type) ? type : [type];
	if (types.length === 0) issues.push(`${join(path, "type")}: must not be an empty list`);
	for (const entry of types) {
		if (typeof entry !== "string" || !JSON_TYPES.has(entry)) {
			issues.push(`${join(path, "type")}: ${JSON.stringify(entry)} is not a JSON Schema type`);
		}
	}
}

function checkKeywordValues(schema: JsonObject, path: string, issues: string[]): void {
	if ("required" in schema) {
		const required = schema["required"];
		if (!Array.isArray(required) || required.some((name) => typeof name !== "string")) {
			issues.push(`${join(path, "required")}: must be a list of property names`);
		}
	}
	if ("enum" in schema && !Array.isArray(schema["enum"])) issues.push(`${join(path, "enum")}: must be a list`);
	for (const keyword of COUNT_KEYWORDS) {
		const value = schema[keyword];
		if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 0)) {
			issues.push(`${join(path, keyword)}: must be a non-negative integer`);
		}
	}
	for (const keyword of NUMBER_KEYWORDS) {
		const value = schema[keyword];
		if (value !== undefined && typeof value !== "number" && typeof value !== "boolean") issues.push(`${join(path, keyword)}: must be a number`);
	}
	const multipleOf = schema["multipleOf"];
	if (multipleOf !== undefined && !(typeof multipleOf === "number" && multipleOf > 0)) {
		issues.push(`${join(path, "multipleOf")}: must be a number above 0`);
	}
	const pattern = schema["pattern"];
	if (pattern !== undefined) {
		try {
			if (typeof pattern !== "string") throw new Error("not a string");
			new RegExp(pattern, "u");
		} catch {
			issues.push(`${join(path, "pattern")}: ${JSON.stringify(pattern)} is not a valid regular expression`);
		}
	}
}

function checkSchema(root: JsonObject, schema: unknown, path: string, issues: string[]): void {
	if (typeof schema === "boolean") return;
	if (!isObject(schema)) {
		issues.push(`${path || "root"}: a schema must be an object or a boolean, got ${JSON.stringify(schema) ?? typeof schema}`);
		return;
	}
	if ("type" in schema) checkType(schema["type"], path, issues);
	checkKeywordValues(schema, path, issues);
	const ref = schema["$ref"];
	if (ref !== undefined && (typeof ref !== "string" || (ref.startsWith("#") && !resolvesLocally(root, ref)))) {
		issues.push(`${join(path, "$ref")}: ${JSON.stringify(ref)} does not resolve`);
	}
	for (const keyword of SCHEMA_KEYWORDS) {
		if (keyword in schema) checkSchema(root, schema[keyword], join(path, keyword), issues);
	}
	for (const keyword of SCHEMA_MAP_KEYWORDS) {
		if (!(keyword in schema)) continue;
		const map = schema[keyword];
		if (!isObject(map)) {
			issues.push(`${join(path, keyword)}: must be an object of schemas`);
			continue;
		}
		for (const [name, child] of Object.entries(map)) checkSchema(root, child, join(join(path, keyword), name), issues);
	}
	for (const keyword of SCHEMA_LIST_KEYWORDS) {
		if (!(keyword in schema)) continue;
		const list = schema[keyword];
		if (!Array.isArray(list) || list.length === 0) {
			issues.push(`${join(path, keyword)}: must be a non-empty list of schemas`);
			continue;
		}
		list.forEach((child, index) => checkSchema(root, child, join(join(path, keyword), index), issues));
	}
	if ("items" in schema) {
		const items = schema["items"];
		if (Array.isArray(items)) items.forEach((child, index) => checkSchema(root, child, join(join(path, "items"), index), issues));
		else checkSchema(root, items, join(path, "items"), issues);
	}
}

/**
 * What is wrong with a tool's parameter schema, one line per problem (empty when it is fine).
 * The root must be an object schema, since providers send tool inputs as JSON objects.
 *
 * @example
 * toolSchemaIssues({ type: "object", properties: { n: { type: "nubmer" } } });
 * // ['properties.n.type: "nubmer" is not a JSON Schema type']
 */
export function toolSchemaIssues(schema: unknown): string[] {
	if (!isObject(schema)) return [`root: the parameters must be a JSON Schema object, got ${schema === null ? "null" : Array.isArray(schema) ? "an array" : typeof schema}`];
	const issues: string[] = [];
	const type = schema["type"];
	if (type !== undefined && type !== "object") issues.push(`type: the root schema must have type "object", got ${JSON.stringify(type)}`);
	checkSchema(schema, schema, "", issues);
	if (issues.length > 0) return issues;
	try {
		validatorFor(schema as TSchema);
	} catch (error) {
		issues.push(`root: the schema does not compile (${error instanceof Error ? error.message : String(error)})`);
	}
	return issues;
}

/** The part of a tool that is checked when it is given to an agent. */
interface ToolShape {
	name?: unknown;
	parameters?: unknown;
	execute?: unknown;
}

/**
 * Checks a list of tools as a run starts with it: every tool has a name, an `execute`
 * function and a valid parameter schema, and no two tools share a name. Throws a `TypeError`
 * at the first tool that is wrong, naming it and what is wrong (every problem of its schema);
 * `prompt()` and `continue()` reject with it.
 *
 * @example
 * assertValidTools([add, add]); // TypeError: Tools: two tools are named "add" (tools[0] and tools[1]); tool names must be unique
 */
export function assertValidTools(tools: unknown): void {
	if (!Array.isArray(tools)) throw new TypeError(`Tools: expected an array of tools, got ${tools === null ? "null" : typeof tools}`);
	const seen = new Map<string, number>();
	tools.forEach((tool: unknown, index) => {
		if (!isObject(tool)) throw new TypeError(`Tools: tools[${index}] is not a tool object (got ${tool === null ? "null" : typeof tool})`);
		const { name, parameters, execute } = tool as ToolShape;
		if (typeof name !== "string" || name === "") throw new TypeError(`Tools: tools[${index}] has no name (a non-empty string)`);
		const earlier = seen.get(name);
		if (earlier !== undefined) throw new TypeError(`Tools: two tools are named "${name}" (tools[${earlier}] and tools[${index}]); tool names must be unique`);
		seen.set(name, index);
		if (typeof execute !== "function") throw new TypeError(`Tool "${name}": execute must be a function`);
		if (isObject(parameters) && validSchemas.has(parameters)) return;
		const issues = toolSchemaIssues(parameters);
		if (issues.length === 0 && isObject(parameters)) validSchemas.add(parameters);
		if (issues.length > 0) throw new TypeError(`Tool "${name}": invalid parameters schema:\n${issues.map((issue) => `  - ${issue}`).join("\n")}`);
	});
}
