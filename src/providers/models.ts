/**
 * A small catalogue of Claude models and the cost arithmetic that goes with it.
 *
 * Facts come from Anthropic's model overview and pricing pages (platform.claude.com/docs,
 * "models/<family>/overview" and "about-claude/pricing"), cross-checked with pi-ai 0.73.1's
 * generated registry. Prices are US dollars per million tokens; `cacheWrite` is the default
 * 5-minute cache write price (1.25x input), `cacheRead` a cache hit (0.1x input).
 */
import type { Usage } from "../types/content.js";
import type { Model } from "../types/model.js";
import { ownValue } from "../util/own-keys.js";

/**
 * Anthropic-specific switches kept in `Model.compat`.
 *
 * - `thinking`: "budget" sends `thinking: {type: "enabled", budget_tokens}`; "adaptive" sends
 *   `thinking: {type: "adaptive"}` plus `output_config.effort` (Claude 4.6 and later, where the
 *   budget form is deprecated or, for Opus 4.7, rejected with a 400).
 * - `xhighEffort`: the effort value sent for reasoning "xhigh" on adaptive models.
 */
export interface AnthropicCompat {
	thinking?: "budget" | "adaptive" | undefined;
	xhighEffort?: "high" | "xhigh" | "max" | undefined;
}

/**
 * Reads the Anthropic switches of a model, with defaults for models outside the catalogue.
 *
 * @example
 * anthropicCompat(getModel("anthropic", "claude-opus-4-7")).thinking; // "adaptive"
 */
export function anthropicCompat(model: Model): { [Key in keyof AnthropicCompat]-?: NonNullable<AnthropicCompat[Key]> } {
	const compat = (model.compat ?? {}) as AnthropicCompat;
	// A model that is not from this catalogue (pi-ai's own entries, a dated or custom id) is read
	// by its id, as pi-ai reads it: Opus and Sonnet 4.6 and later think adaptively (Opus 4.7
	// refuses the budget form with a 400), and their xhigh is pi-ai's `thinkingLevelMap`'s, or
	// the most each takes.
	const id = model.id;
	const mapped = model.thinkingLevelMap?.xhigh;
	return {
		thinking: compat.thinking ?? (ADAPTIVE_THINKING.test(id) ? "adaptive" : "budget"),
		xhighEffort: compat.xhighEffort ?? (isEffort(mapped) ? mapped : /opus-4[-.]7/.test(id) ? "xhigh" : /opus-4[-.]6/.test(id) ? "max" : "high"),
	};
}

/** Claude model ids that take adaptive thinking, with or without a date or a provider's prefix. */
const ADAPTIVE_THINKING = /(?:opus|sonnet)-4[-.][6-9]/;

function isEffort(value: unknown): value is "high" | "xhigh" | "max" {
	return value === "high" || value === "xhigh" || value === "max";
}

const ANTHROPIC_BASE_URL = "https://api.anthropic.com";

interface CatalogueEntry {
	id: string;
	name: string;
	contextWindow: number;
	maxTokens: number;
	cost: Model["cost"];
	compat?: AnthropicCompat | undefined;
}

function claude(entry: CatalogueEntry): Model<"anthropic-messages"> {
	return {
		id: entry.id,
		name: entry.name,
		api: "anthropic-messages",
		provider: "anthropic",
		baseUrl: ANTHROPIC_BASE_URL,
		reasoning: true,
		input: ["text", "image"],
		cost: entry.cost,
		contextWindow: entry.contextWindow,
		maxTokens: entry.maxTokens,
		...(entry.compat ? { compat: { ...entry.compat } } : {}),
	};
}

const opusPrices = { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 };
const sonnetPrices = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const haikuPrices = { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 };

/**
 * The Claude models this package knows, keyed by API id (aliases, not dated snapshots).
 * Every model accepts text and images and supports reasoning.
 *
 * @example
 * anthropicModels["claude-haiku-4-5"]?.contextWindow; // 200000
 */
export const anthropicModels: Readonly<Record<string, Model<"anthropic-messages">>> = Object.freeze({
	"claude-opus-4-7": claude({
		id: "claude-opus-4-7",
		name: "Claude Opus 4.7",
		contextWindow: 1_000_000,
		maxTokens: 128_000,
		cost: opusPrices,
		compat: { thinking: "adaptive", xhighEffort: "xhigh" },
	}),
	"claude-opus-4-6": claude({
		id: "claude-opus-4-6",
		name: "Claude Opus 4.6",
		contextWindow: 1_000_000,
		maxTokens: 128_000,
		cost: opusPrices,
		compat: { thinking: "adaptive", xhighEffort: "max" },
	}),
	"claude-sonnet-4-6": claude({
		id: "claude-sonnet-4-6",
		name: "Claude Sonnet 4.6",
		contextWindow: 1_000_000,
		maxTokens: 128_000,
		cost: sonnetPrices,
		compat: { thinking: "adaptive" },
	}),
	"claude-opus-4-5": claude({
		id: "claude-opus-4-5",
		name: "Claude Opus 4.5",
		contextWindow: 200_000,
		maxTokens: 64_000,
		cost: opusPrices,
	}),
	// Deprecated by Anthropic (end of life 2026-11-30); the SDK prints a warning on every call.
	"claude-sonnet-4-5": claude({
		id: "claude-sonnet-4-5",
		name: "Claude Sonnet 4.5",
		contextWindow: 200_000,
		maxTokens: 64_000,
		cost: sonnetPrices,
	}),
	"claude-haiku-4-5": claude({
		id: "claude-haiku-4-5",
		name: "Claude Haiku 4.5",
		contextWindow: 200_000,
		maxTokens: 64_000,
		cost: haikuPrices,
	}),
});

const catalogues: Readonly<Record<string, Readonly<Record<string, Model>>>> = {
	anthropic: anthropicModels,
};

/**
 * Looks a model up by provider and id. Throws for an unknown provider or id, naming the
 * known ones, so a typo on the command line explains itself.
 *
 * @example
 * const model = getModel("anthropic", "claude-sonnet-4-6");
 * getModel("anthropic", "claude-9"); // throws: Unknown anthropic model "claude-9". Known models: ...
 */
export function getModel(provider: string, id: string): Model {
	const catalogue = ownValue(catalogues, provider);
	if (!catalogue) {
		throw new Error(`Unknown provider "${provider}". Known providers: ${Object.keys(catalogues).join(", ")}`);
	}
	const model = ownValue(catalogue, id);
	if (!model) {
		throw new Error(`Unknown ${provider} model "${id}". Known models: ${Object.keys(catalogue).join(", ")}`);
	}
	return model;
}

/**
 * All catalogued models of a provider (empty for an unknown provider).
 *
 * @example
 * getModels("anthropic").map((m) => m.id); // ["claude-opus-4-7", ...]
 */
export function getModels(provider: string): Model[] {
	return Object.values(ownValue(catalogues, provider) ?? {});
}

/**
 * Fills `usage.cost` from the model's per-million prices and returns it. Mutates `usage`,
 * as pi-ai's `calculateCost` does, so a live partial message stays current.
 *
 * @example
 * const usage = emptyUsage();
 * usage.input = 1_000_000;
 * calculateCost(getModel("anthropic", "claude-haiku-4-5"), usage).total; // 1
 */
export function calculateCost(model: Pick<Model, "cost">, usage: Usage): Usage["cost"] {
	const perToken = (pricePerMillion: number, tokens: number) => (pricePerMillion / 1_000_000) * tokens;
	usage.cost.input = perToken(model.cost.input, usage.input);
	usage.cost.output = perToken(model.cost.output, usage.output);
	usage.cost.cacheRead = perToken(model.cost.cacheRead, usage.cacheRead);
	usage.cost.cacheWrite = perToken(model.cost.cacheWrite, usage.cacheWrite);
	usage.cost.total = usage.cost.input + usage.cost.output + usage.cost.cacheRead + usage.cost.cacheWrite;
	return usage.cost;
}
