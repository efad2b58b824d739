import { validateToolArguments as piValidate } from "@mariozechner/pi-ai";
import fc from "fast-check";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { coerceWithSchema } from "../../src/tools/coerce.js";
import { assertValidTools, toolSchemaIssues } from "../../src/tools/tool-schema.js";
import { validateToolArguments } from "../../src/tools/validate-arguments.js";
import type { AgentTool, AgentToolCall } from "../../src/types/agent.js";
import type { ToolParameters } from "../../src/types/model.js";

function toolWith(parameters: ToolParameters, name = "t"): AgentTool {
	return { name, label: name, description: name, parameters, execute: async () => ({ content: [], details: {} }) };
}

function call(args: Record<string, unknown>, name = "t"): AgentToolCall {
	return { type: "toolCall", id: "c1", name, arguments: args };
}

/** Ours and pi-ai 0.73.1's validator on the same input: the value, or the error text. */
function both(parameters: ToolParameters, args: Record<string, unknown>): { ours: unknown; pi: unknown } {
	const run = (validate: () => unknown) => {
		try {
			return { value: validate() };
		} catch (error) {
			return { error: (error as Error).message };
		}
	};
	const tool = toolWith(parameters);
	return {
		ours: run(() => validateToolArguments(tool, call(args))),
		pi: run(() => piValidate(tool as Parameters<typeof piValidate>[0], call(args) as Parameters<typeof piValidate>[1])),
	};
}

describe("tool argument validation", () => {
	const cases: [string, ToolParameters, Record<string, unknown>][] = [
		["a typebox schema with a numeric string", Type.Object({ n: Type.Number() }), { n: "42" }],
		["a typebox schema with a wrong type", Type.Object({ n: Type.Number() }), { n: "abc" }],
		["a nested integer", Type.Object({ nested: Type.Object({ n: Type.Integer() }) }), { nested: { n: "1.5" } }],
		["plain JSON Schema with booleans", { type: "object", properties: { on: { type: "boolean" } } }, { on: "true" }],
		["plain JSON Schema with a union type", { type: "object", properties: { v: { type: ["number", "string"] } } }, { v: "7" }],
		["an anyOf union", { type: "object", properties: { v: { anyOf: [{ type: "integer" }, { type: "boolean" }] } } }, { v: "false" }],
		["an array of numbers", { type: "object", properties: { xs: { type: "array", items: { type: "number" } } } }, { xs: ["1", "2", "x"] }],
		["additional properties", { type: "object", properties: {}, additionalProperties: { type: "number" } }, { a: "3", b: "4" }],
		["null to string", { type: "object", properties: { s: { type: "string" } } }, { s: null }],
		["a literal union", Type.Object({ e: Type.Union([Type.Literal("a"), Type.Literal("b")]) }), { e: "c" }],
		["a format", { type: "object", properties: { when: { type: "string", format: "date-time" } } }, { when: "yesterday" }],
	];
	for (const [name, schema, args] of cases) {
		it(`matches pi-ai 0.73.1 for ${name}`, () => {
			const { ours, pi } = both(schema, args);
			expect(ours).toEqual(pi);
		});
	}

	it("reports missing properties at the object that lacks them, listing every one (pi-ai names the first missing one as the path)", () => {
		const schema = Type.Object({ n: Type.Number(), unit: Type.String(), at: Type.Object({ x: Type.Number(), y: Type.Number() }) });
		const { ours, pi } = both(schema, { at: { x: 1 } });
		expect((ours as { error: string }).error).toBe(
			'Validation failed for tool "t":\n  - root: must have required properties n, unit\n  - at: must have required properties y\n\nReceived arguments:\n{\n  "at": {\n    "x": 1\n  }\n}',
		);
		// pi-ai 0.73.1's wording, which this deliberately differs from (see docs/from-pi.md).
		expect((pi as { error: string }).error).toContain("  - n: must have required properties n, unit");
		// Apart from the paths of missing properties, the message is pi-ai's.
		const other = both(Type.Object({ a: Type.String(), b: Type.Integer() }), { a: "x", b: "1.5" });
		expect(other.ours).toEqual(other.pi);
	});

	it("words a typebox schema and a plain JSON Schema the same way", () => {
		const typebox = both(Type.Object({ n: Type.Number() }), { n: "x" }).ours as { error: string };
		const plain = both({ type: "object", properties: { n: { type: "number" } } }, { n: "x" }).ours as { error: string };
		expect(typebox.error).toContain("  - n: must be number");
		expect(plain.error).toBe(typebox.error);
	});

	it("coerces primitives exactly as pi-ai does (property)", () => {
		const types = fc.constantFrom("number", "integer", "boolean", "string", "null");
		const schema = fc.oneof(
			types.map((type) => ({ type })),
			fc.uniqueArray(types, { minLength: 2, maxLength: 3 }).map((type) => ({ type })),
			fc.uniqueArray(types, { minLength: 2, maxLength: 3 }).map((list) => ({ anyOf: list.map((type) => ({ type })) })),
		);
		const value = fc.oneof(
			fc.constantFrom("", "0", "1", "true", "false", " 2 ", "1.5", "-3", "abc", null, 0, 1, 2.5, true, false),
			fc.integer(),
			fc.string({ maxLength: 4 }),
		);
		fc.assert(
			fc.property(schema, value, (property, input) => {
				const { ours, pi } = both({ type: "object", properties: { v: property } }, { v: input });
				expect(ours).toEqual(pi);
			}),
			{ numRuns: 500 },
		);
	});
});

/** A schema as the property below builds it, as TypeBox or as plain JSON Schema. */
type Shape =
	| { kind: "number" | "integer" | "string" | "boolean" | "null" }
	| { kind: "literal"; value: string | number | boolean }
	| { kind: "types"; types: ("number" | "integer" | "string" | "boolean" | "null")[] }
	| { kind: "union"; members: Shape[] }
	| { kind: "object"; properties: Record<string, { shape: Shape; optional: boolean }>; extra: Shape | undefined }
	| { kind: "array"; items: Shape };

function schemaOf(shape: Shape, typebox: boolean): ToolParameters {
	switch (shape.kind) {
		case "number":
			return typebox ? Type.Number() : { type: "number" };
		case "integer":
			return typebox ? Type.Integer() : { type: "integer" };
		case "string":
			return typebox ? Type.String() : { type: "string" };
		case "boolean":
			return typebox ? Type.Boolean() : { type: "boolean" };
		case "null":
			return typebox ? Type.Null() : { type: "null" };
		case "literal":
			return typebox ? Type.Literal(shape.value) : { const: shape.value };
		case "types":
			return { type: shape.types };
		case "union":
			return typebox ? Type.Union(shape.members.map((member) => schemaOf(member, true))) : { anyOf: shape.members.map((member) => schemaOf(member, false)) };
		case "array":
			return typebox ? Type.Array(schemaOf(shape.items, true)) : { type: "array", items: schemaOf(shape.items, false) };
		case "object": {
			const entries = Object.entries(shape.properties);
			if (typebox) {
				const properties = Object.fromEntries(entries.map(([name, { shape: member, optional }]) => [name, optional ? Type.Optional(schemaOf(member, true)) : schemaOf(member, true)]));
				return Type.Object(properties, shape.extra ? { additionalProperties: schemaOf(shape.extra, true) } : {});
			}
			return {
				type: "object",
				properties: Object.fromEntries(entries.map(([name, { shape: member }]) => [name, schemaOf(member, false)])),
				required: entries.filter(([, { optional }]) => !optional).map(([name]) => name),
				...(shape.extra ? { additionalProperties: schemaOf(shape.extra, false) } : {}),
			};
		}
	}
}

/** Values for a shape: mostly ones that validate as they are, some a model would send to be coerced, some wrong. */
function valueFor(shape: Shape): fc.Arbitrary<unknown> {
	const loose = fc.constantFrom<unknown>("1", "42", "1.5", "true", "false", "", "x", null, 0, 1, 2.5, true, false);
	const valid = ((): fc.Arbitrary<unknown> => {
		switch (shape.kind) {
			case "number":
				return fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));
			case "integer":
				return fc.integer();
			case "string":
				return fc.string({ maxLength: 4 });
			case "boolean":
				return fc.boolean();
			case "null":
				return fc.constant(null);
			case "literal":
				return fc.constant(shape.value);
			case "types":
				return fc.oneof(...shape.types.map((kind) => valueFor({ kind })));
			case "union":
				return fc.oneof(...shape.members.map(valueFor));
			case "array":
				return fc.array(valueFor(shape.items), { maxLength: 3 });
			case "object": {
				const named = fc.record(
					Object.fromEntries(Object.entries(shape.properties).map(([name, { shape: member }]) => [name, valueFor(member)])),
					{ requiredKeys: Object.entries(shape.properties).filter(([, { optional }]) => !optional).map(([name]) => name) },
				);
				if (!shape.extra) return named;
				return fc.tuple(named, fc.dictionary(fc.constantFrom("x", "y"), valueFor(shape.extra), { maxKeys: 2 })).map(([own, extra]) => ({ ...extra, ...own }));
			}
		}
	})();
	return fc.oneof({ weight: 6, arbitrary: valid }, { weight: 1, arbitrary: loose });
}

describe("arguments that validate as sent", () => {
	const primitive = fc.constantFrom<Shape>({ kind: "number" }, { kind: "integer" }, { kind: "string" }, { kind: "boolean" }, { kind: "null" });
	const { shape } = fc.letrec<{ shape: Shape; object: Shape }>((tie) => ({
		shape: fc.oneof(
			{ depthSize: "small", withCrossShrink: true },
			primitive,
			fc.constantFrom<string | number | boolean>("a", 1, true).map((value): Shape => ({ kind: "literal", value })),
			fc.uniqueArray(fc.constantFrom("number" as const, "integer" as const, "string" as const, "boolean" as const, "null" as const), { minLength: 2, maxLength: 3 }).map((types): Shape => ({ kind: "types", types })),
			fc.array(tie("shape"), { minLength: 2, maxLength: 3 }).map((members): Shape => ({ kind: "union", members })),
			tie("shape").map((items): Shape => ({ kind: "array", items })),
			tie("object"),
		),
		object: fc
			.tuple(fc.dictionary(fc.constantFrom("a", "b", "c"), fc.record({ shape: tie("shape"), optional: fc.boolean() }), { maxKeys: 3 }), fc.option(tie("shape"), { nil: undefined }))
			.map(([properties, extra]): Shape => ({ kind: "object", properties, extra })),
	}));
	const parameters = shape.filter((root) => root.kind === "object");

	it("come out of validation as pi-ai 0.73.1's validator gives them, whatever the schema (property)", () => {
		// Validation skips conversion for arguments that already validate against a schema without
		// unions (it would change nothing): pi's validator always converts, so this finds an argument
		// that conversion would have changed although it validated.
		fc.assert(
			fc.property(
				parameters.chain((root) => fc.tuple(fc.constant(root), fc.boolean(), valueFor(root))),
				([root, typebox, args]) => {
					fc.pre(typeof args === "object" && args !== null && !Array.isArray(args));
					const { ours, pi } = both(schemaOf(root, typebox), JSON.parse(JSON.stringify(args)) as Record<string, unknown>);
					// A missing property's path is worded apart from pi on purpose (see above).
					const missingAt = /^ {2}- \S+: must have required properties/gm;
					const worded = (outcome: unknown) => {
						const { error } = outcome as { error?: string };
						return error === undefined ? outcome : { error: error.replace(missingAt, "  - (path): must have required properties") };
					};
					expect(worded(ours)).toEqual(worded(pi));
				},
			),
			{ numRuns: 1_000 },
		);
	});

	it("come out equal to what was sent, and apart from it (the tool may change its arguments)", () => {
		const tool = toolWith(Type.Object({ path: Type.String(), lines: Type.Array(Type.Integer()) }));
		const sent = call({ path: "a.txt", lines: [1, 2] });
		const args = validateToolArguments(tool, sent) as { lines: number[] };
		expect(args).toEqual({ path: "a.txt", lines: [1, 2] });
		args.lines.push(3);
		expect(sent.arguments).toEqual({ path: "a.txt", lines: [1, 2] });
	});

	it("are still converted where the schema has a union: its first member that matches once coerced wins, as in pi-ai", () => {
		const schema: ToolParameters = { type: "object", properties: { v: { anyOf: [{ type: "number" }, { type: "string" }] } } };
		expect(both(schema, { v: "42" })).toEqual({ ours: { value: { v: 42 } }, pi: { value: { v: 42 } } });
	});
});

describe("coercion reads the arguments' own keys only", () => {
	// Names every object has: `key in args` finds them on Object.prototype.
	const INHERITED = ["constructor", "toString", "valueOf", "hasOwnProperty", "isPrototypeOf", "__proto__"];

	it("leaves out an optional `constructor` the model left out (pi-ai adds the inherited function and refuses the call)", () => {
		const schema = Type.Object({ path: Type.String(), constructor: Type.Optional(Type.String()) });
		const { ours, pi } = both(schema, { path: "a.txt" });
		expect(ours).toEqual({ value: { path: "a.txt" } });
		expect((pi as { error: string }).error).toContain("  - constructor: must be string");
	});

	it("coerces an argument named `constructor` by additionalProperties", () => {
		const schema: ToolParameters = { type: "object", properties: {}, additionalProperties: { type: "number" } };
		const args = JSON.parse('{"constructor": "5", "n": "6"}') as Record<string, unknown>;
		expect(both(schema, args).ours).toEqual({ value: { constructor: 5, n: 6 } });
	});

	it("adds no key the arguments lack and drops none, whatever the properties are named (property)", () => {
		const names = fc.constantFrom("a", "b", ...INHERITED);
		const types = fc.constantFrom("number", "string", "boolean");
		const schema = fc.record({
			properties: fc.dictionary(names, types.map((type) => ({ type }))),
			additionalProperties: fc.option(types.map((type) => ({ type })), { nil: undefined }),
		});
		// Parsed as a model's arguments are: "__proto__" is then an own key.
		const args = fc.dictionary(names, fc.constantFrom("1", "true", "x", 2, null)).map((value) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>);
		fc.assert(
			fc.property(schema, args, ({ properties, additionalProperties }, input) => {
				const before = Object.keys(input).sort();
				const node = { type: "object", properties: JSON.parse(JSON.stringify(properties)) as object, ...(additionalProperties ? { additionalProperties } : {}) };
				const coerced = coerceWithSchema(input, node, () => true) as Record<string, unknown>;
				expect(Object.keys(coerced).sort()).toEqual(before);
				expect(Object.getPrototypeOf(coerced)).toBe(Object.prototype);
			}),
			{ numRuns: 300 },
		);
	});
});

describe("tool definitions are checked when a run starts", () => {
	it("names the tool and the path of a broken schema when prompt() is called", async () => {
		const broken = toolWith({ type: "object", properties: { n: { type: "nubmer" } } } as ToolParameters, "calc");
		const scripted = createScriptedModel([{ content: "never asked" }]);
		const agent = new Agent({ initialState: { model: scripted.model, tools: [broken] }, streamFn: scripted.streamFn });
		await expect(agent.prompt("hi")).rejects.toThrow(/Tool "calc": invalid parameters schema:\n {2}- properties\.n\.type: "nubmer" is not a JSON Schema type/);
		expect(scripted.calls).toHaveLength(0);
		expect(agent.state.messages).toEqual([]);
	});

	it("refuses two tools with the same name at prompt() and continue(), given in the constructor or in state.tools", async () => {
		const a = toolWith(Type.Object({}), "read");
		const duplicate = 'Tools: two tools are named "read" (tools[0] and tools[1])';
		await expect(new Agent({ initialState: { tools: [a, a] } }).prompt("hi")).rejects.toThrow(duplicate);
		const agent = new Agent({ initialState: { messages: [{ role: "user", content: "hi", timestamp: 0 }] } });
		agent.state.tools = [a, toolWith(Type.Object({}), "read")];
		await expect(agent.continue()).rejects.toThrow(duplicate);
		expect(agent.state.isStreaming).toBe(false);
	});

	it("accepts on assignment what pi accepts (tool stubs without execute or parameters), as pi does", () => {
		const stubs = [{ name: "test", description: "test tool" }] as unknown as AgentTool[];
		const agent = new Agent({ initialState: { tools: stubs } });
		agent.state.tools = stubs;
		expect(agent.state.tools).toEqual(stubs);
		expect(() => {
			agent.state.tools = null as unknown as AgentTool[];
		}).toThrow(TypeError);
	});

	it("fails a run with tool stubs at prompt(), naming the tool, before the model is asked", async () => {
		const scripted = createScriptedModel([{ content: "never asked" }]);
		const agent = new Agent({ initialState: { model: scripted.model }, streamFn: scripted.streamFn });
		agent.state.tools = [{ name: "test", description: "test tool" }] as unknown as AgentTool[];
		await expect(agent.prompt("hi")).rejects.toThrow('Tool "test": execute must be a function');
		expect(scripted.calls).toHaveLength(0);
		agent.state.tools = [];
		await agent.prompt("hi");
		expect(scripted.calls).toHaveLength(1);
	});

	it.each([
		["a root that is not an object schema", { type: "string" }, /root schema must have type "object"/],
		["an unresolvable $ref", { type: "object", properties: { a: { $ref: "#/$defs/missing" } } }, /properties\.a\.\$ref: "#\/\$defs\/missing" does not resolve/],
		["a required list that is not a list", { type: "object", required: "a" }, /required: must be a list of property names/],
		["an invalid pattern", { type: "object", properties: { a: { type: "string", pattern: "(" } } }, /properties\.a\.pattern/],
		["an empty anyOf", { type: "object", properties: { a: { anyOf: [] } } }, /properties\.a\.anyOf: must be a non-empty list/],
		["a negative minLength", { type: "object", properties: { a: { type: "string", minLength: -1 } } }, /minLength: must be a non-negative integer/],
	])("rejects %s", (_name, schema, message) => {
		expect(() => assertValidTools([toolWith(schema as ToolParameters)])).toThrow(message);
	});

	it("rejects a tool without execute or name", () => {
		expect(() => assertValidTools([{ name: "x", parameters: Type.Object({}) }])).toThrow('Tool "x": execute must be a function');
		expect(() => assertValidTools([{ parameters: Type.Object({}), execute: () => undefined }])).toThrow("tools[0] has no name");
	});

	it("accepts typebox, recursive and plain schemas", () => {
		const recursive = {
			type: "object",
			$defs: { node: { type: "object", properties: { next: { $ref: "#/$defs/node" } } } },
			properties: { root: { $ref: "#/$defs/node" } },
		};
		expect(toolSchemaIssues(Type.Object({ a: Type.Optional(Type.Array(Type.String())) }))).toEqual([]);
		expect(toolSchemaIssues(recursive)).toEqual([]);
		expect(toolSchemaIssues({ type: "object" })).toEqual([]);
	});
});
