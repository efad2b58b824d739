/**
 * `unwritableJson` says whether a store's `JSON.stringify` would throw on a value (a tool result,
 * a reply, a command's input), without writing it: it must agree with `JSON.stringify` exactly,
 * or a value it let through would again fail every save of a stored session after it.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { unwritableJson } from "../../src/util/json-writable.js";

function stringifyThrows(value: unknown): boolean {
	try {
		JSON.stringify(value);
		return false;
	} catch {
		return true;
	}
}

describe("unwritableJson", () => {
	afterEach(() => {
		delete (BigInt.prototype as { toJSON?: unknown }).toJSON;
	});

	it("names where a BigInt or a cycle is, with the path JSON would take", () => {
		expect(unwritableJson({ details: { total: 10n } }, "result")).toBe("result.details.total is a BigInt");
		expect(unwritableJson({ rows: [{ id: 1 }, { id: 2n }] }, "result")).toBe("result.rows[1].id is a BigInt");
		expect(unwritableJson({ "odd key": 1n }, "x")).toBe('x["odd key"] is a BigInt');
		const loop: { next?: unknown } = {};
		loop.next = { back: loop };
		expect(unwritableJson({ loop }, "message")).toBe("message.loop.next.back is a cycle (it contains itself)");
		expect(unwritableJson(3n, "value")).toBe("value is a BigInt");
		expect(unwritableJson([Object(3n)], "value")).toBe("value[0] is a BigInt");
		expect(unwritableJson({ big: new BigInt64Array([1n]) }, "value")).toBe("value.big[0] is a BigInt");
	});

	it("lets through what JSON writes, lossily or not, and a value seen twice that is no cycle", () => {
		const shared = { a: 1 };
		expect(unwritableJson({ at: new Date(0), map: new Map([[1, 2]]), fn: () => 1, nan: Number.NaN, missing: undefined, left: shared, right: [shared, shared] }, "result")).toBeUndefined();
	});

	it("reads only what JSON writes of an object, in its order: own enumerable keys, not inherited or hidden ones", () => {
		const inherited = Object.create({ total: 1n }) as Record<string, unknown>;
		inherited["own"] = 1;
		expect(unwritableJson(inherited, "v")).toBeUndefined();
		expect(unwritableJson(Object.defineProperty({}, "hidden", { enumerable: false, value: 1n }), "v")).toBeUndefined();
		expect(unwritableJson({ [Symbol("s")]: 1n }, "v")).toBeUndefined();
		// Integer keys come first, as JSON writes them: the first BigInt JSON meets is named.
		expect(unwritableJson({ b: 1n, 2: 2n }, "v")).toBe("v[2] is a BigInt");
		expect(unwritableJson(Object.assign(Object.create(null) as object, { a: { b: 1n } }), "v")).toBe("v.a.b is a BigInt");
	});

	it("follows toJSON as JSON does: a BigInt with a toJSON on its prototype is writable, a toJSON that throws is not", () => {
		expect(unwritableJson({ toJSON: () => ({ total: 1n }) }, "v")).toBe("v.total is a BigInt");
		expect(unwritableJson({ total: 1n, toJSON: () => "fine" }, "v")).toBeUndefined();
		expect(unwritableJson({ bad: { toJSON: () => { throw new Error("nope"); } } }, "v")).toBe("v could not be read for JSON: nope");
		const getter = Object.defineProperty({}, "field", { enumerable: true, get: () => { throw new Error("no access"); } });
		expect(unwritableJson(getter, "v")).toBe("v could not be read for JSON: no access");
		(BigInt.prototype as { toJSON?: unknown }).toJSON = function (this: bigint) { return this.toString(); };
		expect(unwritableJson({ total: 10n }, "v")).toBeUndefined();
	});

	it("agrees with JSON.stringify on any value", () => {
		const value = fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withBoxedValues: true, withNullPrototype: true, withObjectString: true });
		fc.assert(
			fc.property(value, fc.boolean(), fc.boolean(), (generated, makeCycle, inherit) => {
				let subject: unknown = generated;
				// What an object inherits JSON does not write: the generated value as a prototype.
				if (inherit && typeof generated === "object" && generated !== null) subject = Object.assign(Object.create(generated) as object, { own: 1 });
				if (makeCycle && typeof generated === "object" && generated !== null && !(generated instanceof Map) && !(generated instanceof Set)) {
					const host = { inner: subject, self: undefined as unknown };
					host.self = host;
					subject = host;
				}
				expect(unwritableJson(subject, "v") !== undefined).toBe(stringifyThrows(subject));
			}),
			{ numRuns: 2000 },
		);
	});
});
