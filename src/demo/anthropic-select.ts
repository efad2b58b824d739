/**
 * Chooses the demo's model: a real Claude model when an Anthropic key is available, the
 * scripted model otherwise, so `npm start` works with and without a key.
 */
import { getModel } from "../providers/models.js";
import type { Model } from "../types/model.js";

/** The cheapest current model: a demo should not cost much. */
export const defaultDemoModelId = "claude-haiku-4-5";

/** What the demo should run on. */
export type DemoModelChoice = { kind: "anthropic"; model: Model; apiKey: string } | { kind: "scripted" };

function modelFlag(argv: readonly string[]): string | undefined {
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (arg === "--model") return argv[i + 1];
		if (arg?.startsWith("--model=")) return arg.slice("--model=".length);
	}
	return undefined;
}

/**
 * Picks Anthropic when `ANTHROPIC_API_KEY` is set (model from `--model <id>` or
 * `--model=<id>`, default {@link defaultDemoModelId}), the scripted model otherwise.
 * Throws for an unknown `--model`, listing the known ids.
 *
 * @example
 * selectDemoModel(process.argv.slice(2), process.env);
 * // { kind: "anthropic", model: { id: "claude-haiku-4-5", ... }, apiKey: "sk-ant-..." } or { kind: "scripted" }
 */
export function selectDemoModel(
	argv: readonly string[],
	env: Readonly<Record<string, string | undefined>>,
): DemoModelChoice {
	const apiKey = env["ANTHROPIC_API_KEY"]?.trim();
	if (!apiKey) return { kind: "scripted" };
	return { kind: "anthropic", model: getModel("anthropic", modelFlag(argv) ?? defaultDemoModelId), apiKey };
}
