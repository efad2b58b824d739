import { describe, expect, it } from "vitest";
import { anthropicModels, calculateCost, getModel, getModels } from "../../src/providers/models.js";
import { emptyUsage } from "../../src/types/content.js";

describe("model catalogue", () => {
	it("finds current Claude models by id", () => {
		const haiku = getModel("anthropic", "claude-haiku-4-5");
		expect(haiku).toMatchObject({
			id: "claude-haiku-4-5",
			api: "anthropic-messages",
			provider: "anthropic",
			baseUrl: "https://api.anthropic.com",
			reasoning: true,
			input: ["text", "image"],
			contextWindow: 200_000,
			maxTokens: 64_000,
			cost: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
		});
		expect(getModel("anthropic", "claude-opus-4-7")).toMatchObject({ contextWindow: 1_000_000, maxTokens: 128_000 });
		expect(getModel("anthropic", "claude-sonnet-4-6").cost).toEqual({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 });
	});

	it("lists the 4.5, 4.6 and 4.7 families", () => {
		expect(getModels("anthropic").map((m) => m.id).sort()).toEqual([
			"claude-haiku-4-5",
			"claude-opus-4-5",
			"claude-opus-4-6",
			"claude-opus-4-7",
			"claude-sonnet-4-5",
			"claude-sonnet-4-6",
		]);
		expect(getModels("nobody")).toEqual([]);
	});

	it("prices cache reads at a tenth and 5-minute cache writes at 1.25x the input price", () => {
		for (const model of Object.values(anthropicModels)) {
			expect(model.cost.cacheRead).toBeCloseTo(model.cost.input * 0.1, 10);
			expect(model.cost.cacheWrite).toBeCloseTo(model.cost.input * 1.25, 10);
		}
	});

	it("explains an unknown id by listing the known ones", () => {
		expect(() => getModel("anthropic", "claude-9")).toThrow(
			/Unknown anthropic model "claude-9"\. Known models: .*claude-haiku-4-5/,
		);
		expect(() => getModel("acme", "x")).toThrow('Unknown provider "acme". Known providers: anthropic');
	});

	it("explains a name every object has as unknown (it found Object's own functions and returned one as the model)", () => {
		for (const name of ["constructor", "toString", "__proto__"]) {
			expect(() => getModel("anthropic", name)).toThrow(`Unknown anthropic model "${name}". Known models: `);
			expect(() => getModel(name, "claude-haiku-4-5")).toThrow(`Unknown provider "${name}". Known providers: anthropic`);
		}
	});
});

describe("calculateCost", () => {
	it("prices each kind of token per million and totals them", () => {
		const usage = { ...emptyUsage(), input: 1_000_000, output: 200_000, cacheRead: 500_000, cacheWrite: 100_000 };
		const cost = calculateCost(getModel("anthropic", "claude-sonnet-4-6"), usage);
		expect(cost.input).toBeCloseTo(3, 10);
		expect(cost.output).toBeCloseTo(3, 10);
		expect(cost.cacheRead).toBeCloseTo(0.15, 10);
		expect(cost.cacheWrite).toBeCloseTo(0.375, 10);
		expect(cost.total).toBeCloseTo(6.525, 10);
		expect(usage.cost).toBe(cost);
	});
});
