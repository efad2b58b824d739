/**
 * The replies the abstract model's `stream.done` carries, made from a configuration's sample
 * tool calls, and what a restore or a compaction produces in the model.
 */
import { planCompaction } from "../../compaction/cut-point.js";
import type { AgentToolCall } from "../../types/agent.js";
import type { AgentMessage, AssistantMessage } from "../../types/messages.js";
import type { ModelConfig } from "./config.js";
import { assistantMessage, callsOf, MISSING_TOOL, type ReplyKind, replyError, replyStop } from "./fixtures.js";

/** The id of a tool call of the abstract model: attempt and position, so a path names calls stably. */
export function abstractCallId(attempt: number, index: number): string {
	return `a${attempt}_${index + 1}`;
}

/** An abstract tool call: sample `sample` of the configuration (-1: a tool the agent does not have). */
export function abstractCall(config: ModelConfig, attempt: number, index: number, sample: number): AgentToolCall {
	const chosen = config.samples[sample];
	if (sample < 0 || !chosen) return { type: "toolCall", id: abstractCallId(attempt, index), name: MISSING_TOOL, arguments: {} };
	return { type: "toolCall", id: abstractCallId(attempt, index), name: chosen.name, arguments: { ...chosen.arguments } };
}

/** The sample a tool call was made from (-1: none of them). */
export function sampleOf(config: ModelConfig, call: AgentToolCall): number {
	const args = JSON.stringify(call.arguments ?? {});
	return config.samples.findIndex((sample) => sample.name === call.name && JSON.stringify(sample.arguments) === args);
}

/** An abstract reply: its kind, and the samples its calls are made from. */
export function abstractReply(config: ModelConfig, kind: ReplyKind, attempt: number, samples: readonly number[]): AssistantMessage {
	const calls = samples.map((sample, index) => abstractCall(config, attempt, index, sample));
	const content: AssistantMessage["content"] = kind === "text" || kind === "error" || kind === "overflow" ? [{ type: "text", text: "hi" }] : [];
	const model = config.input.model;
	return assistantMessage({ api: model?.api ?? "scripted", provider: model?.provider ?? "scripted", id: model?.id ?? "scripted-1" }, [...content, ...calls], replyStop(kind), replyError(kind));
}

/** The next sample a streamed or completed reply may call after `previous`. */
function nextSample(config: ModelConfig, previous: number): number {
	return config.samples.length > 1 ? (previous + 1) % config.samples.length : 0;
}

/**
 * The tool calls a streaming reply may close next, given those it closed: any sample first, then
 * the one after it (two at most, to keep the space finite).
 */
export function streamableSamples(config: ModelConfig, streamed: readonly number[]): number[] {
	if (streamed.length >= 2) return [];
	if (streamed.length === 0) return config.samples.map((_, index) => index);
	return [nextSample(config, streamed[0] as number)];
}

/**
 * The replies a `stream.done` may carry after these streamed calls: text (nothing streamed), one
 * call of each sample or two calls, a call cut off by the output limit, a missing tool (with a
 * hook, whose states treat it apart), an error, an overflow.
 */
export function replyOptions(config: ModelConfig, streamed: readonly number[], aborted: boolean): { kind: ReplyKind; samples: number[] }[] {
	if (aborted) return [{ kind: "aborted", samples: [...streamed] }];
	const options: { kind: ReplyKind; samples: number[] }[] = [];
	const first = streamed[0];
	if (streamed.length === 0) {
		options.push({ kind: "text", samples: [] });
		config.samples.forEach((_, index) => options.push({ kind: "tools", samples: [index] }));
		if (config.samples.length > 0) options.push({ kind: "tools", samples: [0, nextSample(config, 0)] });
		if (config.samples.length > 0) options.push({ kind: "length", samples: [0] });
		if (config.hook) options.push({ kind: "missing", samples: [-1] });
		options.push({ kind: "overflow", samples: [] });
	} else if (streamed.length === 1 && first !== undefined) {
		options.push({ kind: "tools", samples: [first] }, { kind: "tools", samples: [first, nextSample(config, first)] }, { kind: "length", samples: [first] });
	} else {
		options.push({ kind: "tools", samples: [...streamed] });
	}
	options.push({ kind: "error", samples: [...streamed] });
	return options;
}

/** The samples of an abstract reply's calls. */
export function samplesOf(config: ModelConfig, message: AgentMessage | undefined): number[] {
	return callsOf(message).map((call) => sampleOf(config, call));
}

/** What the real compaction produces with the walk's summariser (undefined when nothing can be compacted). */
export function compactionOutput(config: ModelConfig, messages: AgentMessage[]) {
	const plan = planCompaction(messages, config.keepRecentTokens);
	if (!plan) return undefined;
	const summary = { role: "compactionSummary", summary: config.summary, tokensBefore: 0, messagesDropped: plan.dropped, messagesKept: plan.kept.length, timestamp: 0 } as unknown as AgentMessage;
	return {
		messages: [summary, ...plan.kept],
		result: { summary: config.summary, tokensBefore: 0, tokensAfter: 0, messagesDropped: plan.dropped, messagesKept: plan.kept.length, splitTurn: plan.turnPrefix.length > 0 },
	};
}
