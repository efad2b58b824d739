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
