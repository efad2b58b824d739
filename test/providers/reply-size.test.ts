/**
 * The bound on the whole body of a streamed reply: bodies up to it pass unchanged, whichever
 * chunks they come in; a longer one errors the stream; 0 lifts the bound.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_REPLY_BYTES, limitReply, ReplyTooLargeError } from "../../src/providers/reply-size.js";

const bytes = (text: string) => new TextEncoder().encode(text);

async function readAll(chunks: string[], maxReplyBytes?: number, meter = { bytes: 0 }): Promise<string> {
	const source = new ReadableStream<Uint8Array>({
		start(controller) {
			for (const chunk of chunks) controller.enqueue(bytes(chunk));
			controller.close();
		},
	});
	const reader = limitReply(source, { maxReplyBytes, meter }).getReader();
	let text = "";
	for (let result = await reader.read(); !result.done; result = await reader.read()) text += new TextDecoder().decode(result.value);
	return text;
}

describe("limitReply", () => {
	it("passes a body of exactly the bound, in many chunks, and counts its bytes", async () => {
		const meter = { bytes: 0 };
		expect(await readAll(["data: a\n\n", "data: b\n\n"], 18, meter)).toBe("data: a\n\ndata: b\n\n");
		expect(meter.bytes).toBe(18);
	});

	it("errors the stream one byte past the bound, saying which option sets it", async () => {
		await expect(readAll(["data: a\n\n", "data: bc\n\n"], 18)).rejects.toBeInstanceOf(ReplyTooLargeError);
		expect(new ReplyTooLargeError(2 * 1024 * 1024).message).toBe("The server's reply passed 2 MB (maxReplyBytes) without ending; the request was cancelled");
	});

	it("has no bound at 0, and 256 MB by default", async () => {
		expect(await readAll(["data: a\n\n".repeat(100)], 0)).toHaveLength(900);
		expect(DEFAULT_MAX_REPLY_BYTES).toBe(256 * 1024 * 1024);
	});
});
