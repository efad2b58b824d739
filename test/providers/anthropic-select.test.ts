import { describe, expect, it } from "vitest";
import { selectDemoModel } from "../../src/demo/anthropic-select.js";

describe("selectDemoModel", () => {
	it("uses the scripted model without a key", () => {
		expect(selectDemoModel(["--model", "claude-opus-4-7"], {})).toEqual({ kind: "scripted" });
		expect(selectDemoModel([], { ANTHROPIC_API_KEY: "  " })).toEqual({ kind: "scripted" });
	});

	it("uses Claude Haiku 4.5 by default when a key is set", () => {
		const choice = selectDemoModel([], { ANTHROPIC_API_KEY: "sk-ant-x" });
		expect(choice.kind === "anthropic" && [choice.model.id, choice.apiKey]).toEqual(["claude-haiku-4-5", "sk-ant-x"]);
	});

	it("takes the model from --model <id> or --model=<id>", () => {
		const env = { ANTHROPIC_API_KEY: "k" };
		const spaced = selectDemoModel(["--model", "claude-sonnet-4-6"], env);
		const joined = selectDemoModel(["--model=claude-opus-4-7"], env);
		expect(spaced.kind === "anthropic" && spaced.model.id).toBe("claude-sonnet-4-6");
		expect(joined.kind === "anthropic" && joined.model.id).toBe("claude-opus-4-7");
	});

	it("rejects an unknown model with the list of known ones", () => {
		expect(() => selectDemoModel(["--model", "gpt-5"], { ANTHROPIC_API_KEY: "k" })).toThrow(/Known models: .*claude-haiku-4-5/);
	});
});
