/**
 * While a reply streams, nothing may read the text streamed so far: V8 builds a growing string by
 * concatenation as a chain of pieces, and the first read of it (a character, a slice, a trim, a
 * split) copies all of it into one piece. Done on every delta, that makes a reply's cost grow
 * with the square of its length; a 40,000-delta reply took 8 s with a partial reply per delta,
 * and 22 s with its reasoning streamed, against a tenth of a second for the same deltas read once.
 *
 * Timing would be the direct check, and timing belongs in the bench (section 7 reports it). This is
 * the deterministic one: every string method and `RegExp.prototype.exec` is watched while the
 * deltas flow, and none may be called on a string longer than any delta could make it, whatever
 * the options, the kind of block, or the path (the reply layer alone, behind a whole `Agent`, or
 * from a local server's wire through the real OpenAI-compatible and Anthropic clients).
 */
import { afterEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import { streamAnthropic } from "../../src/providers/anthropic.js";
import { getModel } from "../../src/providers/models.js";
import { streamOpenAICompletions } from "../../src/providers/openai-completions.js";
import { createOpenAICompatibleModel } from "../../src/providers/openai-models.js";
import { createScriptedModel } from "../../src/providers/scripted.js";
import { createAssistantMessageEventStream } from "../../src/providers/event-stream.js";
import { subscribeReplies } from "../../src/reply/subscribe-replies.js";
import type { SubscribeRepliesParams } from "../../src/reply/subscribe-replies-options.js";
import type { ReasoningUpdate, ReplyPayload } from "../../src/reply/types.js";
import type { AgentEvent, ThinkingContent, TextContent } from "../../src/types/index.js";
import * as anthropicServer from "../providers/anthropic-server.js";
import * as openaiServer from "../providers/openai-server.js";
import { assistantMessage, FakeAgent } from "./helpers.js";

const DELTAS = 3_000;
/** Longer than any delta and anything the layer keeps per line or block, far shorter than the reply (about 15,000 characters). */
const LONG = 4_096;

const STRING_METHODS = ["at", "charAt", "charCodeAt", "codePointAt", "concat", "endsWith", "includes", "indexOf", "lastIndexOf", "localeCompare", "match", "matchAll", "normalize", "padEnd", "padStart", "repeat", "replace", "replaceAll", "search", "slice", "split", "startsWith", "substring", "toLowerCase", "toUpperCase", "trim", "trimEnd", "trimStart"] as const;

type StringMethod = (this: unknown, ...args: unknown[]) => unknown;
const stringPrototype = String.prototype as unknown as Record<(typeof STRING_METHODS)[number], StringMethod>;
const originals = new Map(STRING_METHODS.map((name) => [name, stringPrototype[name]] as const));
const originalExec = RegExp.prototype.exec;

/**
 * Counts, per method, the calls on a string longer than {@link LONG} while `watching.on` holds.
 * `ours`: only calls from agentchart's own modules count, by where they come from (a test server
 * in this process encodes its whole reply once; an SDK's code is not ours to hold to this).
 */
function watchLongReads(ours = false): { on: boolean; seen: Record<string, number> } {
	const watching = { on: false, seen: {} as Record<string, number> };
	const note = (name: string, text: unknown) => {
		if (!watching.on || typeof text !== "string" || text.length <= LONG) return;
		let key = name;
		if (ours) {
			// Off while the stack is read: its own string calls are not the code under test.
			watching.on = false;
			const caller = new Error().stack?.split("\n").find((line) => line.includes("/src/") && !line.includes("node_modules"));
			watching.on = true;
			if (!caller) return;
			key = `${name} ${caller.trim()}`;
		}
		watching.seen[key] = (watching.seen[key] ?? 0) + 1;
	};
	for (const [name, original] of originals) {
		stringPrototype[name] = function (this: unknown, ...args: unknown[]) {
			note(name, this);
			return original.apply(this, args);
		};
	}
	RegExp.prototype.exec = function (this: RegExp, text: string) {
		note("RegExp.exec", text);
		return originalExec.call(this, text);
	};
	return watching;
}

afterEach(() => {
	for (const [name, original] of originals) stringPrototype[name] = original;
	RegExp.prototype.exec = originalExec;
});

/** One-word deltas, a paragraph every twelve; "tagged" wraps all but the last hundred in `<think>`; "emoji" cuts every emoji in two. */
function delta(index: number, kind: Kind): string {
	if (kind === "emoji") return index % 2 === 0 ? "\ud83d" : "\ude00 ";
	const word = index % 12 === 11 ? "word.\n\n" : "word ";
	if (kind === "tagged" && index === 0) return `<think>${word}`;
	if (kind === "tagged" && index === DELTAS - 100) return `</think>${word}`;
	if (kind === "final" && index === 0) return `<final>${word}`;
	if (kind === "final" && index === DELTAS - 1) return `${word}</final>`;
	return word;
}

type Kind = "text" | "thinking" | "tagged" | "emoji" | "final";

/**
 * Each way the layer can be asked to work, and what it must deliver for the reply (so that a
 * layer that did nothing, and so read nothing, fails): partial replies, blocks, and the smallest
 * share of the reply's visible text the blocks carry (cuts drop the whitespace they fall on).
 */
const REPLY_OPTIONS: { name: string; kind: Kind; options: SubscribeRepliesParams; partials: number; blocks: number | "some"; blockText?: number }[] = [
	{ name: "a partial reply per delta", kind: "text", options: { onPartialReply: () => {} }, partials: DELTAS, blocks: 0 },
	// A delta that ends in half an emoji waits for the next: one partial per whole emoji.
	{ name: "a partial reply per delta, every emoji split between two deltas", kind: "emoji", options: { onPartialReply: () => {} }, partials: DELTAS / 2, blocks: 0 },
	{ name: "block chunking 800/1200 and partial replies", kind: "text", options: { onPartialReply: () => {}, onBlockReply: () => {}, blockReplyChunking: { minChars: 800, maxChars: 1200 } }, partials: DELTAS, blocks: "some", blockText: 0.99 },
	{ name: "blocks at message_end", kind: "text", options: { onBlockReply: () => {}, blockReplyBreak: "message_end" }, partials: 0, blocks: 1, blockText: 0.99 },
	{ name: "blocks at text_end", kind: "text", options: { onBlockReply: () => {}, blockReplyBreak: "text_end" }, partials: 0, blocks: 1, blockText: 0.99 },
	{ name: "enforceFinalTag", kind: "final", options: { onPartialReply: () => {}, enforceFinalTag: true }, partials: DELTAS, blocks: 0 },
	// No text block: no partial reply.
	{ name: "streamed reasoning of a thinking block", kind: "thinking", options: { reasoningMode: "stream", onReasoningStream: () => {}, onPartialReply: () => {} }, partials: 0, blocks: 0 },
	// Visible text only after </think>, 100 deltas before the end.
	{ name: "streamed reasoning in <think> tags", kind: "tagged", options: { reasoningMode: "stream", onReasoningStream: () => {}, onPartialReply: () => {} }, partials: 100, blocks: 0 },
	// The "Reasoning:" block and the answer's.
	{ name: "reasoning in <think> tags, sent at the end", kind: "tagged", options: { reasoningMode: "on", onBlockReply: () => {} }, partials: 0, blocks: 2 },
];

describe("a long reply's deltas read nothing of the text before them", () => {
	for (const { name, kind, options, partials, blocks, blockText } of REPLY_OPTIONS) {
		it(`the reply layer, ${name}`, async () => {
			const agent = new FakeAgent();
			const updates: string[] = []; // kept, not read: reading them would be a read the watch sees
			// Counted, not read: what the layer delivered while the watch was on (kept out of its sight).
			const delivered = { partials: 0, blocks: 0, blockChars: 0 };
			const replies = subscribeReplies(agent, {
				...options,
				...(options.onReasoningStream ? { onReasoningStream: (update: ReasoningUpdate) => void updates.push(update.text) } : {}),
				...(options.onPartialReply ? { onPartialReply: () => void delivered.partials++ } : {}),
				...(options.onBlockReply ? { onBlockReply: (payload: ReplyPayload) => void ((delivered.blocks++), (delivered.blockChars += payload.text?.length ?? 0)) } : {}),
				onCallbackError: (error) => {
					throw error;
				},
			});
			agent.messageStart();
			if (kind !== "thinking") agent.textStart();
			let thinking = "";
			const watching = watchLongReads();
			watching.on = true;
			for (let index = 0; index < DELTAS; index++) {
				const piece = delta(index, kind);
				if (kind === "thinking") {
					thinking += piece;
					agent.thinkingDelta(piece);
				} else agent.delta(piece);
			}
			watching.on = false;
			if (kind === "thinking") agent.thinkingEnd(thinking);
			else agent.textEnd();
			agent.messageEnd();
			replies.unsubscribe();
			expect(watching.seen).toEqual({});
			// The watch was on while the layer worked: a streamed reasoning update was made per word.
			if (options.onReasoningStream) expect(updates.length).toBeGreaterThan(DELTAS / 2);
			expect(delivered.partials).toBe(partials);
			if (blocks === "some") expect(delivered.blocks).toBeGreaterThan(1);
			else expect(delivered.blocks).toBe(blocks);
			if (blockText !== undefined) {
				let visible = 0;
				for (let index = 0; index < DELTAS; index++) visible += delta(index, kind).length;
				expect(delivered.blockChars).toBeGreaterThanOrEqual(Math.floor(visible * blockText));
			}
		});
	}

	for (const kind of ["text", "thinking"] as const) {
		it(`a whole Agent with a listener and the reply layer, a ${kind} block`, async () => {
			const { model } = createScriptedModel([]);
			const watching = watchLongReads();
			const streamFn = () => {
				const stream = createAssistantMessageEventStream();
				const block: TextContent | ThinkingContent = kind === "thinking" ? { type: "thinking", thinking: "" } : { type: "text", text: "" };
				const output = assistantMessage([block], { api: model.api, provider: model.provider, model: model.id });
				void (async () => {
					stream.push({ type: "start", partial: output });
					stream.push(block.type === "thinking" ? { type: "thinking_start", contentIndex: 0, partial: output } : { type: "text_start", contentIndex: 0, partial: output });
					for (let index = 0; index < DELTAS; index++) {
						const piece = delta(index, kind);
						if (block.type === "thinking") {
							block.thinking += piece;
							stream.push({ type: "thinking_delta", contentIndex: 0, delta: piece, partial: output });
						} else {
							block.text += piece;
							stream.push({ type: "text_delta", contentIndex: 0, delta: piece, partial: output });
						}
						if (index % 100 === 0) await Promise.resolve();
					}
					stream.push(block.type === "thinking" ? { type: "thinking_end", contentIndex: 0, content: block.thinking, partial: output } : { type: "text_end", contentIndex: 0, content: block.text, partial: output });
					stream.push({ type: "done", reason: "stop", message: output });
				})();
				return stream;
			};
			const agent = new Agent({ initialState: { model }, streamFn });
			const events: AgentEvent["type"][] = [];
			// Registered before the reply layer, so the watch ends before anything hears a block's end.
			agent.subscribe((event) => {
				events.push(event.type);
				if (event.type === "message_update" && /_end$/.test(event.assistantMessageEvent.type)) watching.on = false;
			});
			let replied = 0;
			subscribeReplies(agent, { reasoningMode: "stream", onReasoningStream: () => void replied++, onPartialReply: () => void replied++ });
			const run = agent.prompt("go");
			watching.on = true;
			await run;
			watching.on = false;
			expect(watching.seen).toEqual({});
			expect(events.filter((type) => type === "message_update").length).toBeGreaterThan(DELTAS);
			expect(replied).toBeGreaterThan(DELTAS / 2);
		});
	}

	/** Reasoning, then text, each of {@link DELTAS} deltas, from a provider's wire through its real client, the Agent and the reply layer. */
	async function providerReply(agent: Agent): Promise<void> {
		const watching = watchLongReads(true);
		// Registered before the reply layer: each event is watched while it is a delta, and so is
		// the provider's reading of the stream between them; a block's or message's end is read once.
		agent.subscribe((event) => {
			watching.on = event.type === "message_update" && /_delta$/.test(event.assistantMessageEvent.type);
		});
		let replied = 0;
		subscribeReplies(agent, { reasoningMode: "stream", onReasoningStream: () => void replied++, onPartialReply: () => void replied++ });
		await agent.prompt("go");
		watching.on = false;
		expect(agent.state.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
		expect(watching.seen).toEqual({});
		expect(replied).toBeGreaterThan(DELTAS / 2);
	}
	// Fewer than elsewhere (the test server paces its frames by the event loop), still well past 4 KiB of text.
	const words = Array.from({ length: DELTAS / 2 }, (_, index) => delta(index, "text"));

	it("an OpenAI-compatible server's reasoning_content and text, through streamOpenAICompletions", async () => {
		const server = await openaiServer.startOpenAIServer();
		try {
			server.respond({ kind: "sse", chunkDelayMs: 0, frames: [openaiServer.roleChunk("long"), ...openaiServer.reasoningChunks(words), ...openaiServer.textChunks(words, "long"), openaiServer.finishChunk("stop")] });
			const model = createOpenAICompatibleModel({ baseUrl: server.baseUrl, id: "qwen3:8b" });
			await providerReply(new Agent({ initialState: { model }, streamFn: streamOpenAICompletions, getApiKey: () => "test-key" }));
		} finally {
			await server.close();
		}
	});

	it("an Anthropic server's thinking and text blocks, through streamAnthropic and its SDK", async () => {
		const server = await anthropicServer.startAnthropicServer();
		try {
			server.respond({ kind: "sse", chunkDelayMs: 0, events: [anthropicServer.messageStart("msg_long"), ...anthropicServer.thinkingBlock(0, words, "sig"), ...anthropicServer.textBlock(1, words), anthropicServer.messageDelta("end_turn"), anthropicServer.messageStop()] });
			const model = { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: server.baseUrl };
			await providerReply(new Agent({ initialState: { model }, streamFn: streamAnthropic, getApiKey: () => "test-key" }));
		} finally {
			await server.close();
		}
	});
});
