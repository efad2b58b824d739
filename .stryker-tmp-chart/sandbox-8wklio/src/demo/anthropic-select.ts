/**
 * Chooses the demo's model: a real Claude model when an Anthropic key is available, the
 * scripted model otherwise, so `npm start` works with and without a key.
 */
// @ts-nocheck

import { getModel } from "../providers/models.js";
import type { Model } from "../types/model.js";
import { type DemoArgs, DemoUsageError } from "./cli-args.js";

/** The cheapest current model: a demo should not cost much. */
export const defaultDemoModelId = "claude-haiku-4-5";

/** What the demo should run on (the OpenAI-compatible choice is made in openai-select.ts). */
export type DemoModelChoice = { kind: "anthropic"; model: Model; apiKey: string } | { kind: "scripted" };

/**
 * Picks Anthropic when `ANTHROPIC_API_KEY` is set (model from `--model`, default
 * {@link defaultDemoModelId}), the scripted model otherwise. Asking for Anthropic or for a
 * model without a key is an error that says the key is missing, not a silent scripted run.
 * Throws for an unknown `--model`, listing the known ids.
 *
 * @example
 * selectDemoModel(parseDemoArgs(process.argv.slice(2)), process.env);
 * // { kind: "anthropic", model: { id: "claude-haiku-4-5", ... }, apiKey: "sk-ant-..." } or { kind: "scripted" }
 */
export function selectDemoModel(args: Pick<DemoArgs, "provider" | "model">, env: Readonly<Record<string, string | undefined>>): DemoModelChoice {
	if (args.provider === "scripted") {
		if (args.model !== undefined) throw new DemoUsageError("--model does not apply to the scripted model");
		return { kind: "scripted" };
	}
	const apiKey = env["ANTHROPIC_API_KEY"]?.trim();
	if (!apiKey) {
		if (args.provider === "anthropic" || args.model !== undefined) {
			throw new DemoUsageError(
				`ANTHROPIC_API_KEY is not set: ${args.model !== undefined ? `--model ${args.model}` : "--provider anthropic"} needs it (without a key, leave out --model to run the scripted model)`,
			);
		}
		return { kind: "scripted" };
	}
	return { kind: "anthropic", model: getModel("anthropic", args.model ?? defaultDemoModelId), apiKey };
}
