/**
 * A model that writes a large file through a tool streams its arguments in thousands of
 * small fragments, or (some OpenAI-compatible servers) sends them whole, in one event that
 * arrives in hundreds of network chunks. Reading the whole JSON text again on every fragment made that quadratic:
 * a 100 KB call took 13 s of CPU and blocked the event loop for a second at a time. These
 * tests stream 256 KB of arguments, in the 8-byte fragments models send, through real local
 * servers: the arguments are read again a few hundred times (not once per fragment, some 32,000
 * times), the preview keeps up, and the final arguments are exact. And an event of several MB
 * split into hundreds of chunks is scanned for line ends about once, not once per chunk. The
 * work is counted, not timed (timings belong to the bench).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { streamAnthropic } from "../../src/providers/anthropic.js";
import { getModel } from "../../src/providers/models.js";
import { streamOpenAICompletions } from "../../src/providers/openai-completions.js";
import { createOpenAICompatibleModel } from "../../src/providers/openai-models.js";
import { StreamingArguments } from "../../src/providers/partial-json.js";
import type { AssistantMessage } from "../../src/types/messages.js";
import type { Context } from "../../src/types/model.js";
import type { AssistantMessageEventStream } from "../../src/providers/event-stream.js";
import { readServerSentEvents } from "../../src/providers/openai-sse.js";
import * as anthropic from "./anthropic-server.js";
import * as openai from "./openai-server.js";

const context: Context = { messages: [{ role: "user", content: "Write the file.", timestamp: 1 }] };
const content = "a line of text with é and 🙂 in it\n".repeat(7_000);
const json = JSON.stringify({ path: "notes.txt", content });
const fragments: string[] = [];
for (let i = 0; i < json.length; i += 8) fragments.push(json.slice(i, i + 8));

/**
 * Readings of the arguments at most for one call: every fragment of the first 2 KB (256 of 8
 * bytes), then one each time the text grew by an eighth (about 45 more up to 256 KB).
 */
const maxReadings = 400;

/** Reads a stream to its end, checking on every delta that the preview keeps up with the text. */
async function readToolCall(stream: AssistantMessageEventStream): Promise<{ result: AssistantMessage; previews: number }> {
	let streamed = 0;
	let previews = 0;
	let last: unknown;
	for await (const event of stream) {
		if (event.type !== "toolcall_delta") continue;
		streamed += event.delta.length;
		const call = event.partial.content[event.contentIndex];
		if (call?.type !== "toolCall") throw new Error("the delta is not for a tool call");
		if (call.arguments !== last) previews++;
		last = call.arguments;
		const shown = typeof call.arguments["content"] === "string" ? call.arguments["content"].length : 0;
		// The preview may lag the text, but never by more than a fifth of it (plus the path's few bytes).
		expect(shown).toBeGreaterThanOrEqual(streamed * 0.8 - 64);
	}
	return { result: await stream.result(), previews };
}

describe("a tool call with 256 KB of arguments in 8-byte fragments", () => {
	let anthropicServer: anthropic.AnthropicTestServer;
	let openaiServer: openai.OpenAITestServer;
	beforeAll(async () => {
		anthropicServer = await anthropic.startAnthropicServer();
		openaiServer = await openai.startOpenAIServer();
	});
	afterAll(async () => {
		await anthropicServer?.close();
		await openaiServer?.close();
	});

	it("streams from Anthropic reading the arguments a few hundred times, with the exact arguments at the end", async () => {
		anthropicServer.respond({
			kind: "sse",
			chunkBytes: 64 * 1024,
			chunkDelayMs: 0,
			events: [
				anthropic.messageStart("msg_big"),
				...anthropic.toolUseBlock(0, "toolu_big", "write", fragments),
				anthropic.messageDelta("tool_use"),
				anthropic.messageStop(),
			],
		});
		const model = { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: anthropicServer.baseUrl };
		const { result, previews } = await readToolCall(streamAnthropic(model, context, { apiKey: "test-key", maxRetries: 0 }));
		expect(result.stopReason).toBe("toolUse");
		expect(result.content[0]).toMatchObject({ type: "toolCall", id: "toolu_big", arguments: { path: "notes.txt", content } });
		expect(previews).toBeGreaterThan(50);
		expect(previews).toBeLessThanOrEqual(maxReadings);
	}, 30_000);

	it("streams from an OpenAI-compatible server reading the arguments a few hundred times, with the exact arguments at the end", async () => {
		openaiServer.respond({
			kind: "sse",
			chunkBytes: 64 * 1024,
			chunkDelayMs: 0,
			frames: [openai.roleChunk(), ...openai.toolCallChunks(0, "call_big", "write", fragments), openai.finishChunk("tool_calls")],
		});
		const model = createOpenAICompatibleModel({ baseUrl: openaiServer.baseUrl, id: "test-model" });
		const { result, previews } = await readToolCall(streamOpenAICompletions(model, context, { maxRetries: 0 }));
		expect(result.stopReason).toBe("toolUse");
		expect(result.content[0]).toMatchObject({ type: "toolCall", id: "call_big", arguments: { path: "notes.txt", content } });
		expect(previews).toBeGreaterThan(50);
		expect(previews).toBeLessThanOrEqual(maxReadings);
	}, 30_000);

	it("reads a 4 MB event sent in one piece (arguments sent whole) through an OpenAI-compatible server", async () => {
		const big = "x".repeat(4 * 1024 * 1024);
		openaiServer.respond({
			kind: "sse",
			// Written in 16 KB pieces: the client reads the one event in hundreds of chunks.
			chunkBytes: 16 * 1024,
			chunkDelayMs: 0,
			frames: [
				openai.roleChunk(),
				openai.toolCallChunk({ index: 0, id: "call_whole", name: "write", arguments: JSON.stringify({ path: "big.txt", content: big }) }),
				openai.finishChunk("tool_calls"),
			],
		});
		const model = createOpenAICompatibleModel({ baseUrl: openaiServer.baseUrl, id: "test-model" });
		const result = await streamOpenAICompletions(model, context, { maxRetries: 0 }).result();
		expect(result.stopReason).toBe("toolUse");
		const call = result.content[0];
		expect(call?.type === "toolCall" && call.arguments["content"] === big).toBe(true);
	}, 30_000);
});

describe("StreamingArguments", () => {
	it("reads small arguments again on every fragment, as they grow", () => {
		const args = new StreamingArguments();
		expect(args.append('{"path":"src/ma')).toEqual({ path: "src/ma" });
		expect(args.append('in.ts","n":4')).toEqual({ path: "src/main.ts", n: 4 });
		expect(args.append("2}")).toEqual({ path: "src/main.ts", n: 42 });
		expect(args.final()).toEqual({ path: "src/main.ts", n: 42 });
	});

	it("gives the exact final arguments even when the last reading lags, having read them a few hundred times", () => {
		const args = new StreamingArguments();
		let readings = 0;
		let last: unknown;
		for (const fragment of fragments) {
			const reading = args.append(fragment);
			if (reading !== last) readings++;
			last = reading;
		}
		expect(fragments.length).toBeGreaterThan(30_000);
		expect(readings).toBeLessThanOrEqual(maxReadings);
		expect(args.json).toBe(json);
		expect(args.final()).toEqual({ path: "notes.txt", content });
	});

	it("replaces the text when a server sends the arguments complete", () => {
		const args = new StreamingArguments();
		args.append('{"a":');
		expect(args.replace('{"b":2}')).toEqual({ b: 2 });
		expect(args.final()).toEqual({ b: 2 });
	});
});

describe("readServerSentEvents", () => {
	/** A body of `text` in chunks of `size` bytes. */
	const bodyOf = (text: string, size: number): ReadableStream<Uint8Array> => {
		const bytes = new TextEncoder().encode(text);
		let offset = 0;
		return new ReadableStream({
			pull(controller) {
				if (offset >= bytes.length) return controller.close();
				controller.enqueue(bytes.subarray(offset, offset + size));
				offset += size;
			},
		});
	};

	it("scans a long event for line ends about once, however many chunks it comes in", async () => {
		const data = "y".repeat(4 * 1024 * 1024);
		const text = `data: {"a":1}\r\n\r\ndata: ${data}\n\ndata: [DONE]\n\n`;
		const counters = { scanned: 0 };
		const events: string[] = [];
		for await (const event of readServerSentEvents(bodyOf(text, 16 * 1024), { idleTimeoutMs: 10_000, counters })) events.push(event.data);
		expect(events).toEqual(['{"a":1}', data, "[DONE]"]);
		// Scanning the pending event again at each of its 256 chunks scanned about 500 MB.
		expect(counters.scanned).toBeLessThanOrEqual(2 * text.length);
	});

	it("still finds a \\r\\n split across two chunks", async () => {
		const counters = { scanned: 0 };
		const events: string[] = [];
		for await (const event of readServerSentEvents(bodyOf("data: one\r\n\r\ndata: two\r\n\r\n", 10), { idleTimeoutMs: 10_000, counters })) events.push(event.data);
		expect(events).toEqual(["one", "two"]);
	});
});
