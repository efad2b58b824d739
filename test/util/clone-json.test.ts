import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { cloneJson } from "../../src/util/clone-json.js";

/** Every object and array reachable from a value (to check a copy shares none of them). */
function containers(value: unknown, into = new Set<object>()): Set<object> {
	if (typeof value === "object" && value !== null && !into.has(value)) {
		into.add(value);
		for (const item of Object.values(value)) containers(item, into);
	}
	return into;
}

describe("cloneJson: structuredClone's copy of tool arguments, without its serializer", () => {
	afterEach(() => {
		vi.restoreAllMocks();
	});

	it("copies plain data itself, never calling structuredClone (the point of it)", () => {
		const sparse: unknown[] = [1];
		sparse[2] = [{ deep: [true, null, "s", 1.5, undefined, 2n] }];
		let nested: unknown = { leaf: 1 };
		for (let i = 0; i < 60; i++) nested = [nested];
		const values = [{ path: "a.txt", lines: [1, 2], nested: { ok: true } }, sparse, nested, Object.create(null), "text", 0, null];
		const expected = values.map((value) => structuredClone(value));
		const spy = vi.spyOn(globalThis, "structuredClone");
		values.forEach((value, index) => expect(cloneJson(value)).toStrictEqual(expected[index]));
		fc.assert(fc.property(fc.jsonValue(), (value) => void cloneJson(value)), { numRuns: 100 });
		expect(spy).not.toHaveBeenCalled();
		cloneJson({ when: new Date(0) });
		expect(spy).toHaveBeenCalledTimes(1);
	});

	it("copies any JSON value as structuredClone does, sharing no object or array", () => {
		fc.assert(
			fc.property(fc.jsonValue(), (value) => {
				const copy = cloneJson(value);
				expect(copy).toStrictEqual(structuredClone(value));
				const original = containers(value);
				for (const inner of containers(copy)) expect(original.has(inner)).toBe(false);
			}),
			{ numRuns: 300 },
		);
	});

	it("keeps a parsed \"__proto__\" key an own property, as structuredClone does (assigning it would set the copy's prototype)", () => {
		const parsed: unknown = JSON.parse('{"a": {"__proto__": {"polluted": true}, "b": 1}}');
		const copy = cloneJson(parsed) as { a: Record<string, unknown> };
		expect(copy).toStrictEqual(structuredClone(parsed));
		expect(Object.keys(copy.a)).toEqual(["__proto__", "b"]);
		expect(Object.getPrototypeOf(copy.a)).toBe(Object.prototype);
		expect(copy.a["polluted"]).toBeUndefined();
	});

	it("keeps holes, undefined and null-prototype objects as structuredClone does", () => {
		const sparse: unknown[] = [1];
		sparse[3] = 4;
		const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 });
		for (const value of [sparse, { a: undefined }, bare, [undefined, null], 10n]) {
			expect(cloneJson(value)).toStrictEqual(structuredClone(value));
		}
		expect(1 in (cloneJson(sparse) as unknown[])).toBe(false);
	});

	it("leaves what is not plain data to structuredClone: its copies, and its errors", () => {
		const date = new Date(0);
		const copied = cloneJson({ when: date, map: new Map([["k", 1]]), bytes: new Uint8Array([1]) });
		expect(copied.when).toBeInstanceOf(Date);
		expect(copied.when).not.toBe(date);
		expect(copied.map.get("k")).toBe(1);
		expect(copied.bytes).toEqual(new Uint8Array([1]));
		const tagged = Object.assign([1, 2], { extra: "kept" });
		expect((cloneJson(tagged) as unknown as { extra: string }).extra).toBe("kept");
		const cycle: Record<string, unknown> = { a: 1 };
		cycle["self"] = cycle;
		const copy = cloneJson(cycle);
		expect(copy["self"]).toBe(copy);
		expect(() => cloneJson({ run: () => 1 })).toThrow(/could not be cloned/);
		expect(() => cloneJson(() => 1)).toThrow(/could not be cloned/);
		expect(() => cloneJson(Symbol("s"))).toThrow(/could not be cloned/);
		expect(() => cloneJson({ tag: Symbol("s") })).toThrow(/could not be cloned/);
		let deep: unknown = "leaf";
		for (let i = 0; i < 200; i++) deep = { next: deep };
		expect(cloneJson(deep)).toStrictEqual(structuredClone(deep));
	});
});
