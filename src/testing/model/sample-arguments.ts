/**
 * Arguments for a tool call the walk's model makes, made from the tool's JSON schema when you
 * give none: the required properties, each the simplest value of its type (a string "x", the
 * number at its minimum, the first of an enum, a constant, an empty array), so that the call
 * passes validation and your tool runs.
 */

type Schema = {
	type?: string | string[];
	properties?: Record<string, Schema>;
	required?: string[];
	enum?: unknown[];
	const?: unknown;
	anyOf?: Schema[];
	oneOf?: Schema[];
	allOf?: Schema[];
	default?: unknown;
	minimum?: number;
	minLength?: number;
	minItems?: number;
	items?: Schema;
	format?: string;
};

/**
 * The simplest value a schema accepts (undefined when it cannot tell).
 *
 * @example
 * sampleValue({ type: "object", properties: { id: { type: "string" } }, required: ["id"] }); // { id: "x" }
 */
export function sampleValue(schema: Schema | undefined, depth = 0): unknown {
	if (!schema || depth > 8) return undefined;
	if (schema.const !== undefined) return schema.const;
	if (schema.default !== undefined) return schema.default;
	if (schema.enum && schema.enum.length > 0) return schema.enum[0];
	const choice = schema.anyOf?.[0] ?? schema.oneOf?.[0];
	if (choice) return sampleValue(choice, depth + 1);
	if (schema.allOf?.length) return Object.assign({}, ...schema.allOf.map((part) => sampleValue(part, depth + 1) ?? {}));
	const type = Array.isArray(schema.type) ? schema.type.find((each) => each !== "null") : schema.type;
	switch (type ?? (schema.properties ? "object" : undefined)) {
		case "object": {
			const value: Record<string, unknown> = {};
			for (const name of schema.required ?? []) value[name] = sampleValue(schema.properties?.[name], depth + 1) ?? "x";
			return value;
		}
		case "string":
			if (schema.format === "date-time") return "2025-01-01T00:00:00Z";
			if (schema.format === "email") return "someone@example.com";
			if (schema.format === "uri") return "https://example.com";
			return "x".repeat(Math.max(1, schema.minLength ?? 1));
		case "number":
		case "integer":
			return schema.minimum ?? 1;
		case "boolean":
			return true;
		case "array":
			return Array.from({ length: schema.minItems ?? 0 }, () => sampleValue(schema.items, depth + 1));
		case "null":
			return null;
		default:
			return undefined;
	}
}

/**
 * Arguments for a call of a tool with these parameters.
 *
 * @example
 * sampleArguments(Type.Object({ id: Type.String() })); // { id: "x" }
 */
export function sampleArguments(parameters: unknown): Record<string, unknown> {
	const value = sampleValue(parameters as Schema);
	return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
