// @ts-nocheck
import { describe, expect, it } from "vitest";
import { selectDemoModel } from "../../src/demo/anthropic-select.js";
import { DemoUsageError, parseDemoArgs } from "../../src/demo/cli-args.js";

describe("selectDemoModel", () => {
	it("uses the scripted model without a key and without --model", () => {
		expect(selectDemoModel({}, {})).toEqual({ kind: "scripted" });
		expect(selectDemoModel({}, { ANTHROPIC_API_KEY: "  " })).toEqual({ kind: "scripted" });
		expect(selectDemoModel({ provider: "scripted" }, { ANTHROPIC_API_KEY: "k" })).toEqual({ kind: "scripted" });
	});

	it("says the key is missing when a model or Anthropic is asked for without one", () => {
		expect(() => selectDemoModel({ model: "claude-opus-4-7" }, {})).toThrow(/ANTHROPIC_API_KEY is not set: --model claude-opus-4-7 needs it/);
		expect(() => selectDemoModel({ provider: "anthropic" }, {})).toThrow(DemoUsageError);
	});

	it("uses Claude Haiku 4.5 by default when a key is set", () => {
		const choice = selectDemoModel({}, { ANTHROPIC_API_KEY: "sk-ant-x" });
		expect(choice.kind === "anthropic" && [choice.model.id, choice.apiKey]).toEqual(["claude-haiku-4-5", "sk-ant-x"]);
	});

	it("takes the model from --model <id> or --model=<id>", () => {
		const env = { ANTHROPIC_API_KEY: "k" };
		const spaced = selectDemoModel(parseDemoArgs(["--model", "claude-sonnet-4-6"]), env);
		const joined = selectDemoModel(parseDemoArgs(["--model=claude-opus-4-7"]), env);
		expect(spaced.kind === "anthropic" && spaced.model.id).toBe("claude-sonnet-4-6");
		expect(joined.kind === "anthropic" && joined.model.id).toBe("claude-opus-4-7");
	});

	it("rejects an unknown model with the list of known ones", () => {
		expect(() => selectDemoModel({ model: "gpt-5" }, { ANTHROPIC_API_KEY: "k" })).toThrow(/Known models: .*claude-haiku-4-5/);
	});
});

describe("parseDemoArgs", () => {
	it("reads every flag, spaced or with =", () => {
		expect(parseDemoArgs(["--provider=openai-compatible", "--base-url", "http://127.0.0.1:11434/v1", "--model", "qwen3:8b", "--api-key=x", "--prompt", "hi", "--inspect"])).toEqual({
			help: false,
			inspect: true,
			provider: "openai-compatible",
			baseUrl: "http://127.0.0.1:11434/v1",
			model: "qwen3:8b",
			apiKey: "x",
			prompt: "hi",
		});
		expect(parseDemoArgs(["-h"]).help).toBe(true);
	});

	it.each([
		[["--bogus"], "Unknown option: --bogus"],
		[["--model"], "--model needs a value"],
		[["--model", "--inspect"], "--model needs a value"],
		[["--provider", "gemini"], 'Unknown provider "gemini": use scripted, anthropic, openai-compatible'],
	])("rejects %j", (argv, message) => {
		expect(() => parseDemoArgs(argv)).toThrow(message);
	});
});
