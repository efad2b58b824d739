import type { SimpleStreamOptions, ThinkingLevel } from "../types/model.js";

/**
 * Chat Completions' `tool_choice`: let the model decide (`"auto"`), forbid tools (`"none"`),
 * require one (`"required"`), or name the function it must call. Written out here, not taken
 * from the `openai` package, which is an optional dependency our types must not need.
 *
 * @example
 * const toolChoice: OpenAIToolChoice = { type: "function", function: { name: "search" } }; // this tool, this turn
 * const stream = streamOpenAICompletions(model, context, { toolChoice });
 */
export type OpenAIToolChoice = "auto" | "none" | "required" | { type: "function"; function: { name: string } };

/**
 * Options of {@link streamOpenAICompletions}: pi-ai's stream options plus two of its
 * OpenAI-only ones.
 *
 * @example
 * const options: OpenAICompletionsOptions = { toolChoice: "required", reasoningEffort: "low" };
 */
export interface OpenAICompletionsOptions extends SimpleStreamOptions {
	/** Forces or forbids tool use (`"auto"`, `"none"`, `"required"` or a named function). */
	toolChoice?: OpenAIToolChoice | undefined;
	/** pi-ai's name for `reasoning` in its provider-level options; `reasoning` wins when both are set. */
	reasoningEffort?: ThinkingLevel | undefined;
}
