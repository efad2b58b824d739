import fc from "fast-check";
import { describe, expect, it } from "vitest";
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
		let deep: unknown = "leaf";
		for (let i = 0; i < 200; i++) deep = { next: deep };
		expect(cloneJson(deep)).toStrictEqual(structuredClone(deep));
	});
});
