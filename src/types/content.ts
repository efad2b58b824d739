/**
 * Content blocks and usage: the building blocks of every message.
 *
 * The shapes are identical to `@mariozechner/pi-ai` 0.73.1 so that messages produced by a
 * pi-ai provider (or persisted by a pi application) can be used here unchanged.
 */

/**
 * Plain text, in a user message, an assistant reply or a tool result.
 *
 * @example
 * const block: TextContent = { type: "text", text: "Hello" };
 */
export interface TextContent {
	type: "text";
	/** The text itself. */
	text: string;
	/** Opaque provider signature of this text block (some providers need it sent back verbatim). */
	textSignature?: string;
}

/**
 * Model reasoning ("extended thinking"). Never shown to end users by default.
 *
 * @example
 * const reasoning = reply.content.filter((block): block is ThinkingContent => block.type === "thinking").map((block) => block.thinking);
 */
export interface ThinkingContent {
	type: "thinking";
	/** The reasoning text. For redacted blocks a placeholder such as "[Reasoning redacted]". */
	thinking: string;
	/**
	 * Provider signature that must be sent back with the block on the next request
	 * (Anthropic `signature`). For redacted thinking it carries the opaque encrypted payload.
	 */
	thinkingSignature?: string;
	/** True when the provider redacted the reasoning; `thinkingSignature` then holds its opaque data. */
	redacted?: boolean;
}

/**
 * An inline image, base64 encoded.
 *
 * @example
 * await agent.prompt("What is in this picture?", [{ type: "image", data: pngBase64, mimeType: "image/png" }]);
 */
export interface ImageContent {
	type: "image";
	/** Base64 data without a `data:` prefix. */
	data: string;
	/** MIME type such as `image/png`. */
	mimeType: string;
}

/**
 * A tool call made by the model, part of an assistant message.
 *
 * @example
 * const calls = reply.content.filter((block): block is ToolCall => block.type === "toolCall").map((call) => call.name);
 */
export interface ToolCall {
	type: "toolCall";
	/** Provider-assigned id that the matching tool result refers to. */
	id: string;
	/** Name of the tool to call. */
	name: string;
	/**
	 * Arguments as parsed from the model's JSON. They are whatever the model produced: the
	 * tool's schema is applied only when the call is validated before execution.
	 */
	arguments: Record<string, any>;
	/** Opaque provider signature attached to the call (Gemini). */
	thoughtSignature?: string;
}

/**
 * Token counts and their cost for one assistant message.
 *
 * @example
 * const { input, output, cost } = reply.usage;
 * console.log(`${input} in, ${output} out, $${cost.total.toFixed(4)}`);
 */
export interface Usage {
	/** Uncached input tokens. */
	input: number;
	/** Output tokens, including reasoning. */
	output: number;
	/** Input tokens read from the prompt cache. */
	cacheRead: number;
	/** Input tokens written to the prompt cache. */
	cacheWrite: number;
	/** input + output + cacheRead + cacheWrite. */
	totalTokens: number;
	/** Cost in US dollars, computed from the model's per-million prices. */
	cost: {
		input: number;
		output: number;
		cacheRead: number;
		cacheWrite: number;
		total: number;
	};
}

/**
 * Why an assistant message ended.
 * - `stop`: the model finished its answer.
 * - `length`: the output token limit cut it off.
 * - `toolUse`: the model wants tools to run.
 * - `error`: the request or the stream failed (`errorMessage` says why).
 * - `aborted`: the caller aborted it.
 *
 * @example
 * if (reply.stopReason === "length") console.warn("cut off by the output token limit");
 */
export type StopReason = "stop" | "length" | "toolUse" | "error" | "aborted";

/**
 * A usage figure as a server sent it, if it is one (a finite number, 0 or more), else
 * `fallback`: a broken server's string would turn sums into strings ("12" + ...), a negative
 * count would lower what a run thinks it used, a missing one would make totals NaN.
 *
 * @example
 * usageCount("12", 0); // 0
 * usageCount(-5, 40);  // 40
 * usageCount(7);       // 7
 */
export function usageCount(value: unknown, fallback = 0): number {
	return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : fallback;
}

/**
 * A zeroed {@link Usage}, for messages that never reached a model.
 *
 * @example
 * const usage = emptyUsage(); // usage.totalTokens === 0
 */
export function emptyUsage(): Usage {
	return {
		input: 0,
		output: 0,
		cacheRead: 0,
		cacheWrite: 0,
		totalTokens: 0,
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
	};
}
