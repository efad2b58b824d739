/**
 * A local stand-in for the Anthropic Messages API: a node:http server on 127.0.0.1 that
 * records each request and answers with the next scripted response, byte for byte as the
 * real API streams (named SSE events, JSON data lines, blank-line separators).
 *
 * Responses can be split into arbitrary byte chunks (including through the middle of a
 * multi-byte character), cut short, reset, or left hanging, to exercise every failure path
 * of a real client without a network or a key.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { answeredPreflight, type TestServerOptions } from "./cors.js";

/** One server-sent event: `event: <event>` then `data: <JSON of data>`. */
export interface SseEvent {
	event: string;
	/** Serialized with JSON.stringify unless it is already a string. */
	data: unknown;
}

/** How a streamed response ends after its events. */
export type StreamEnding =
	/** Close the response normally. */
	| "end"
	/** Destroy the socket: the client sees a connection reset mid-body. */
	| "reset"
	/** Keep the connection open and send nothing more, until the client gives up. */
	| "stall";

/** A streamed 200 response. */
export interface SseResponse {
	kind: "sse";
	events: SseEvent[];
	/** Split the body into chunks of this many bytes (default: one chunk per event). */
	chunkBytes?: number;
	/** Pause between chunks, in milliseconds (default 1). */
	chunkDelayMs?: number;
	ending?: StreamEnding;
	headers?: Record<string, string>;
	/**
	 * Stop after this many chunks and send the rest only once `release()` is called: the test
	 * decides when the stream goes on (say, after its steer was accepted), not a timer.
	 */
	holdAfter?: number;
}

/** An HTTP error with a body, as the API sends for 4xx/5xx. */
export interface ErrorResponse {
	kind: "error";
	status: number;
	/** Serialized with JSON.stringify unless it is already a string. */
	body: unknown;
	headers?: Record<string, string>;
}

/**
 * Any answer sent as it is: a status, a content type (none when left out) and a raw body, as a
 * web server, a gateway's login page or a server that ignores `stream: true` would send.
 */
export interface RawResponse {
	kind: "raw";
	status: number;
	/** Sent as is; left out for a bodiless status such as 204. */
	body?: string;
	contentType?: string;
}

/** Drop the connection before sending any response. */
export interface ResetResponse {
	kind: "reset";
}

/** Accept the request and never answer: no status line, no headers, no byte. */
export interface SilentResponse {
	kind: "silent";
}

export type ScriptedResponse = SseResponse | ErrorResponse | RawResponse | ResetResponse | SilentResponse;

/** What the server received. */
export interface RecordedRequest {
	method: string;
	url: string;
	headers: IncomingHttpHeaders;
	/** The parsed JSON body. */
	body: Record<string, any>;
}

export interface AnthropicTestServer {
	/** Base URL to put in `model.baseUrl`, e.g. "http://127.0.0.1:51234". */
	baseUrl: string;
	/** Every request received, in order. */
	requests: RecordedRequest[];
	/** Queues responses, one per future request. */
	respond(...responses: ScriptedResponse[]): void;
	/** Lets every stream held by `holdAfter` (now or later) go on. */
	release(): void;
	/** Forgets recorded requests and unused responses, between tests. */
	reset(): void;
	close(): Promise<void>;
}

function serialize(data: unknown): string {
	return typeof data === "string" ? data : JSON.stringify(data);
}

/**
 * Encodes events exactly as the API does on the wire.
 *
 * @example
 * encodeSse([{ event: "ping", data: { type: "ping" } }]); // 'event: ping\ndata: {"type":"ping"}\n\n'
 */
export function encodeSse(events: SseEvent[]): string {
	return events.map((e) => `event: ${e.event}\ndata: ${serialize(e.data)}\n\n`).join("");
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function writeSse(res: ServerResponse, socket: Socket, response: SseResponse, released: Promise<void>): Promise<void> {
	res.writeHead(200, {
		"content-type": "text/event-stream; charset=utf-8",
		"cache-control": "no-cache",
		"request-id": "req_test",
		...response.headers,
	});
	res.flushHeaders();
	const chunks: Buffer[] = [];
	if (response.chunkBytes) {
		const bytes = Buffer.from(encodeSse(response.events), "utf8");
		for (let i = 0; i < bytes.length; i += response.chunkBytes) chunks.push(bytes.subarray(i, i + response.chunkBytes));
	} else {
		for (const event of response.events) chunks.push(Buffer.from(encodeSse([event]), "utf8"));
	}
	for (const [index, chunk] of chunks.entries()) {
		if (index === response.holdAfter) await released;
		if (socket.destroyed) return;
		res.write(chunk);
		await sleep(response.chunkDelayMs ?? 1);
	}
	switch (response.ending ?? "end") {
		case "end":
			res.end();
			break;
		case "reset":
			socket.destroy();
			break;
		case "stall":
			break; // the client's abort (or close()) ends it
	}
}

/**
 * Starts a server on 127.0.0.1 with an OS-assigned port.
 *
 * @example
 * const server = await startAnthropicServer();
 * server.respond({ kind: "sse", events: textReply("Hello") });
 * const model = { ...getModel("anthropic", "claude-haiku-4-5"), baseUrl: server.baseUrl };
 */
export async function startAnthropicServer(options: TestServerOptions = {}): Promise<AnthropicTestServer> {
	const queue: ScriptedResponse[] = [];
	const requests: RecordedRequest[] = [];
	const sockets = new Set<Socket>();
	let release = () => {};
	const released = new Promise<void>((resolve) => {
		release = resolve;
	});

	const server = createServer((req, res) => {
		if (options.cors && answeredPreflight(req, res)) return;
		const parts: Buffer[] = [];
		req.on("data", (part: Buffer) => parts.push(part));
		req.on("end", () => {
			const raw = Buffer.concat(parts).toString("utf8");
			requests.push({
				method: req.method ?? "",
				url: req.url ?? "",
				headers: req.headers,
				body: raw ? (JSON.parse(raw) as Record<string, any>) : {},
			});
			const response = queue.shift() ?? {
				kind: "error",
				status: 500,
				body: { type: "error", error: { type: "api_error", message: "No scripted response left" } },
			};
			switch (response.kind) {
				case "reset":
					req.socket.destroy();
					return;
				case "silent":
					return; // the client gives up (or close() ends it)
				case "error":
					res.writeHead(response.status, {
						"content-type": "application/json",
						"request-id": "req_test",
						...response.headers,
					});
					res.end(serialize(response.body));
					return;
				case "raw":
					res.writeHead(response.status, response.contentType === undefined ? {} : { "content-type": response.contentType });
					res.end(response.body);
					return;
				case "sse":
					void writeSse(res, req.socket, response, released);
			}
		});
	});
	server.on("connection", (socket) => {
		sockets.add(socket);
		socket.on("close", () => sockets.delete(socket));
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const { port } = server.address() as AddressInfo;

	return {
		baseUrl: `http://127.0.0.1:${port}`,
		requests,
		respond: (...responses) => queue.push(...responses),
		release,
		reset: () => {
			queue.length = 0;
			requests.length = 0;
		},
		close: async () => {
			for (const socket of sockets) socket.destroy();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}

// ---------------------------------------------------------------------------------------
// Event builders, shaped like the API's own stream.

interface UsageFields {
	input_tokens?: number;
	output_tokens?: number;
	cache_read_input_tokens?: number;
	cache_creation_input_tokens?: number;
}

/**
 * `message_start` with the given id and usage.
 *
 * @example
 * messageStart("msg_1", { input_tokens: 10, cache_read_input_tokens: 100 });
 */
export function messageStart(id: string, usage: UsageFields = {}, model = "claude-haiku-4-5"): SseEvent {
	return {
		event: "message_start",
		data: {
			type: "message_start",
			message: {
				id,
				type: "message",
				role: "assistant",
				model,
				content: [],
				stop_reason: null,
				stop_sequence: null,
				usage: {
					input_tokens: usage.input_tokens ?? 10,
					output_tokens: usage.output_tokens ?? 1,
					cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
					cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
				},
			},
		},
	};
}

/**
 * The keep-alive event the API sends between others.
 *
 * @example
 * server.respond({ kind: "sse", events: [messageStart("m"), ping(), ...textBlock(0, ["hi"])] });
 */
export function ping(): SseEvent {
	return { event: "ping", data: { type: "ping" } };
}

/**
 * `content_block_start` for a raw content block.
 *
 * @example
 * blockStart(0, { type: "text", text: "" });
 */
export function blockStart(index: number, contentBlock: Record<string, unknown>): SseEvent {
	return { event: "content_block_start", data: { type: "content_block_start", index, content_block: contentBlock } };
}

/**
 * `content_block_delta` with a raw delta.
 *
 * @example
 * blockDelta(0, { type: "text_delta", text: "Hel" });
 */
export function blockDelta(index: number, delta: Record<string, unknown>): SseEvent {
	return { event: "content_block_delta", data: { type: "content_block_delta", index, delta } };
}

/**
 * `content_block_stop`.
 *
 * @example
 * blockStop(0);
 */
export function blockStop(index: number): SseEvent {
	return { event: "content_block_stop", data: { type: "content_block_stop", index } };
}

/**
 * A text block streamed in the given pieces.
 *
 * @example
 * textBlock(0, ["Hel", "lo"]);
 */
export function textBlock(index: number, pieces: string[]): SseEvent[] {
	return [
		blockStart(index, { type: "text", text: "" }),
		...pieces.map((text) => blockDelta(index, { type: "text_delta", text })),
		blockStop(index),
	];
}

/**
 * A thinking block: its text in pieces, then its signature (as the API sends it).
 *
 * @example
 * thinkingBlock(0, ["Let me ", "think"], "sig123");
 */
export function thinkingBlock(index: number, pieces: string[], signature: string): SseEvent[] {
	return [
		blockStart(index, { type: "thinking", thinking: "", signature: "" }),
		...pieces.map((thinking) => blockDelta(index, { type: "thinking_delta", thinking })),
		blockDelta(index, { type: "signature_delta", signature }),
		blockStop(index),
	];
}

/**
 * A redacted thinking block: opaque data, no deltas.
 *
 * @example
 * redactedThinkingBlock(0, "OPAQUE==");
 */
export function redactedThinkingBlock(index: number, data: string): SseEvent[] {
	return [blockStart(index, { type: "redacted_thinking", data }), blockStop(index)];
}

/**
 * A tool_use block whose JSON input arrives in the given fragments.
 *
 * @example
 * toolUseBlock(1, "toolu_1", "read", ['{"pa', 'th":"a.txt"}']);
 */
export function toolUseBlock(index: number, id: string, name: string, fragments: string[]): SseEvent[] {
	return [
		blockStart(index, { type: "tool_use", id, name, input: {} }),
		...fragments.map((partial_json) => blockDelta(index, { type: "input_json_delta", partial_json })),
		blockStop(index),
	];
}

/**
 * `message_delta` with the stop reason and cumulative usage.
 *
 * @example
 * messageDelta("tool_use", { output_tokens: 30 });
 */
export function messageDelta(stopReason: string, usage: UsageFields = { output_tokens: 20 }): SseEvent {
	return {
		event: "message_delta",
		data: { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage },
	};
}

/**
 * `message_stop`: without it a client must treat the stream as truncated.
 *
 * @example
 * messageStop();
 */
export function messageStop(): SseEvent {
	return { event: "message_stop", data: { type: "message_stop" } };
}

/**
 * A mid-stream `error` event, as the API sends when it fails after the 200.
 *
 * @example
 * streamError("overloaded_error", "Overloaded");
 */
export function streamError(type: string, message: string): SseEvent {
	return { event: "error", data: { type: "error", error: { type, message } } };
}

/**
 * The body of an HTTP error response.
 *
 * @example
 * server.respond({ kind: "error", status: 529, body: errorBody("overloaded_error", "Overloaded") });
 */
export function errorBody(type: string, message: string): Record<string, unknown> {
	return { type: "error", error: { type, message }, request_id: "req_test" };
}

/**
 * A complete plain-text reply.
 *
 * @example
 * server.respond({ kind: "sse", events: textReply("Hello") });
 */
export function textReply(text: string, id = "msg_text"): SseEvent[] {
	return [messageStart(id), ping(), ...textBlock(0, [text]), messageDelta("end_turn"), messageStop()];
}
