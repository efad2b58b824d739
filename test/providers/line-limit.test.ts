/**
 * The bound on one line of an event stream: lines up to it pass unchanged, whichever chunks
 * they come in; a longer one errors the stream.
 */
import { describe, expect, it } from "vitest";
import { limitLineLength, StreamLineTooLongError } from "../../src/providers/line-limit.js";

const bytes = (text: string) => new TextEncoder().encode(text);

async function readAll(chunks: string[], maxBytes: number): Promise<string> {
	const source = new ReadableStream<Uint8Array>({
		start(controller) {
			for (const chunk of chunks) controller.enqueue(bytes(chunk));
			controller.close();
		},
	});
	const reader = limitLineLength(source, maxBytes).getReader();
	let text = "";
	for (let result = await reader.read(); !result.done; result = await reader.read()) text += new TextDecoder().decode(result.value);
	return text;
}

describe("limitLineLength", () => {
	it("passes lines of exactly the bound, split across chunks, with \\n, \\r\\n and \\r ends", async () => {
		const chunks = ["data: ab", "cd\nefgh", "ij\r\n", "0123456789\r", "x"];
		expect(await readAll(chunks, 10)).toBe(chunks.join(""));
	});

	it("errors the stream for a line one byte over the bound, split across chunks", async () => {
		await expect(readAll(["data: ab", "cde\nok\n"], 10)).rejects.toBeInstanceOf(StreamLineTooLongError);
	});

	it("errors the stream for an endless line without waiting for its end", async () => {
		await expect(readAll(["ok\n", "a".repeat(6), "a".repeat(6)], 10)).rejects.toThrow("without a line end");
	});
});
