/**
 * Argument coercion driven by a JSON Schema: models often send `"42"` for a number or `"true"`
 * for a boolean. The rules are pi 0.73.1's, so a tool receives the same values on both
 * engines: a primitive is converted only when it does not already match one of the declared
 * types, and a union member is taken only if the coerced value then validates against it.
 */

/** A JSON Schema node as coercion reads it (any other keyword is ignored here). */
interface SchemaNode {
	type?: unknown;
	properties?: unknown;
	additionalProperties?: unknown;
	items?: unknown;
	allOf?: unknown;
	anyOf?: unknown;
	oneOf?: unknown;
}

type JsonObject = Record<string, unknown>;

function isRecord(value: unknown): value is JsonObject {
	return typeof value === "object" && value !== null;
}

function isPlainObject(value: unknown): value is JsonObject {
	return isRecord(value) && !Array.isArray(value);
}

function declaredTypes(schema: SchemaNode): string[] {
	if (typeof schema.type === "string") return [schema.type];
	if (Array.isArray(schema.type)) return schema.type.filter((type): type is string => typeof type === "string");
	return [];
}

function hasType(value: unknown, type: string): boolean {
	switch (type) {
		case "number":
			return typeof value === "number";
		case "integer":
			return typeof value === "number" && Number.isInteger(value);
		case "boolean":
			return typeof value === "boolean";
		case "string":
			return typeof value === "string";
		case "null":
			return value === null;
		case "array":
			return Array.isArray(value);
		case "object":
			return isPlainObject(value);
		default:
			return false;
	}
}

function toNumber(value: unknown, integer: boolean): unknown {
	if (value === null) return 0;
	if (typeof value === "boolean") return value ? 1 : 0;
	if (typeof value === "string" && value.trim() !== "") {
		const parsed = Number(value);
		if (integer ? Number.isInteger(parsed) : Number.isFinite(parsed)) return parsed;
	}
	return value;
}

function toBoolean(value: unknown): unknown {
	if (value === null) return false;
	if (value === "true" || value === 1) return true;
	if (value === "false" || value === 0) return false;
	return value;
}

function toPrimitive(value: unknown, type: string): unknown {
	switch (type) {
		case "number":
			return toNumber(value, false);
		case "integer":
			return toNumber(value, true);
		case "boolean":
			return toBoolean(value);
		case "string":
			if (value === null) return "";
			return typeof value === "number" || typeof value === "boolean" ? String(value) : value;
		case "null":
			return value === "" || value === 0 || value === false ? null : value;
		default:
			return value;
	}
}

/** Checks a value against a sub-schema (to pick a union member); undefined when it cannot. */
export type SubSchemaCheck = (schema: object, value: unknown) => boolean;

function coerceUnion(value: unknown, members: unknown[], check: SubSchemaCheck): unknown {
	for (const member of members) {
		if (!isRecord(member)) continue;
		const candidate = coerceWithSchema(structuredClone(value), member, check);
		if (check(member, candidate)) return candidate;
	}
	return value;
}

/**
 * Coerces the properties the arguments have, by their own keys only: `in` would also find what
 * every object inherits, so a tool declaring an optional `constructor` or `toString` got it added
 * (the inherited function, which then failed validation) when the model left it out, as pi 0.73.1
 * does; and an argument of that name went unchecked against `additionalProperties`.
 */
function coerceObject(value: JsonObject, schema: SchemaNode, check: SubSchemaCheck): void {
	const properties = isRecord(schema.properties) ? schema.properties : {};
	for (const [key, propertySchema] of Object.entries(properties)) {
		if (Object.hasOwn(value, key) && isRecord(propertySchema)) value[key] = coerceWithSchema(value[key], propertySchema, check);
	}
	const extra = schema.additionalProperties;
	if (!isRecord(extra)) return;
	for (const key of Object.keys(value)) {
		if (!Object.hasOwn(properties, key)) value[key] = coerceWithSchema(value[key], extra, check);
	}
}

function coerceArray(value: unknown[], schema: SchemaNode, check: SubSchemaCheck): void {
	const items = schema.items;
	for (let index = 0; index < value.length; index++) {
		const itemSchema = Array.isArray(items) ? items[index] : items;
		if (isRecord(itemSchema)) value[index] = coerceWithSchema(value[index], itemSchema, check);
	}
}

/**
 * Coerces `value` towards `schema`, mutating containers in place and returning the result
 * (a primitive may be replaced). `check` validates a candidate against a union member.
 *
 * @example
 * coerceWithSchema({ n: "42" }, { type: "object", properties: { n: { type: "number" } } }, check); // { n: 42 }
 */
export function coerceWithSchema(value: unknown, schema: SchemaNode, check: SubSchemaCheck): unknown {
	let next = value;
	if (Array.isArray(schema.allOf)) {
		for (const part of schema.allOf) if (isRecord(part)) next = coerceWithSchema(next, part, check);
	}
	if (Array.isArray(schema.anyOf)) next = coerceUnion(next, schema.anyOf, check);
	if (Array.isArray(schema.oneOf)) next = coerceUnion(next, schema.oneOf, check);
	const types = declaredTypes(schema);
	const alreadyMatches = types.length > 1 && types.some((type) => hasType(next, type));
	if (!alreadyMatches) {
		for (const type of types) {
			const candidate = toPrimitive(next, type);
			if (candidate !== next) {
				next = candidate;
				break;
			}
		}
	}
	if (types.includes("object") && isPlainObject(next)) coerceObject(next, schema, check);
	if (types.includes("array") && Array.isArray(next)) coerceArray(next, schema, check);
	return next;
}
