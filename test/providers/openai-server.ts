/**
 * A local stand-in for an OpenAI-compatible Chat Completions server: a node:http server on
 * 127.0.0.1 that records each request and answers with the next scripted response, byte for
 * byte as such servers stream (`data: <JSON>` lines, blank-line separators, `data: [DONE]`).
 *
 * Responses can be split into arbitrary byte chunks (including through the middle of a
 * multi-byte character), cut short, reset, left hanging before or after the headers, or
 * answered with an error status and any body, to exercise every failure path of a real
 * client without a network or a key.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { answeredPreflight, type TestServerOptions } from "./cors.js";

/** One SSE frame: a data payload (JSON unless already a string), an optional event name, or a comment. */
export type SseFrame = { data: unknown; event?: string } | { comment: string };

/** How a streamed response ends after its frames. */
export type StreamEnding =
	/** Send `data: [DONE]`, then close. */
	| "done"
	/** Close without `[DONE]`. */
	| "end"
	/** Destroy the socket: the client sees a connection reset mid-body. */
	| "reset"
	/** Keep the connection open and send nothing more, until the client gives up. */
	| "stall";

/** A streamed 200 response. */
export interface SseResponse {
	kind: "sse";
	frames: SseFrame[];
	/** Split the body into chunks of this many bytes (default: one chunk per frame). */
	chunkBytes?: number;
	/** Pause between chunks, in milliseconds (default 1). */
	chunkDelayMs?: number;
	/** Default "done". */
	ending?: StreamEnding;
	/** Line ending used in the body (default "\n"). */
	newline?: "\n" | "\r\n";
	headers?: Record<string, string>;
}

/** An HTTP error with a body: JSON unless `body` is a string (then sent as is). */
export interface ErrorResponse {
	kind: "error";
	status: number;
	body: unknown;
	headers?: Record<string, string>;
}

/** A 200 response with a complete body, for servers that ignore `stream: true`. */
export interface PlainResponse {
	kind: "plain";
	contentType: string;
	body: unknown;
}

/** Drop the connection before sending any response. */
export interface ResetResponse {
	kind: "reset";
}

/** Accept the request and never send the headers. */
export interface HangResponse {
	kind: "hang";
}

export type ScriptedResponse = SseResponse | PlainResponse | ErrorResponse | ResetResponse | HangResponse;

/** What the server received. */
export interface RecordedRequest {
	method: string;
	url: string;
	headers: IncomingHttpHeaders;
	/** The parsed JSON body. */
	body: Record<string, unknown>;
}

export interface OpenAITestServer {
	/** Base URL to put in `model.baseUrl`, e.g. "http://127.0.0.1:51234/v1". */
	baseUrl: string;
	/** Every request received, in order. */
	requests: RecordedRequest[];
	/** Queues responses, one per future request. */
	respond(...responses: ScriptedResponse[]): void;
	/** Forgets recorded requests and unused responses, between tests. */
	reset(): void;
	close(): Promise<void>;
}

function serialize(data: unknown): string {
	return typeof data === "string" ? data : JSON.stringify(data);
}

/**
 * Encodes frames as such servers put them on the wire.
 *
 * @example
 * encodeSse([{ data: { id: "c1" } }]); // 'data: {"id":"c1"}\n\n'
 */
export function encodeSse(frames: SseFrame[], newline: "\n" | "\r\n" = "\n"): string {
	return frames
		.map((frame) => {
			if ("comment" in frame) return `: ${frame.comment}${newline}${newline}`;
			const event = frame.event ? `event: ${frame.event}${newline}` : "";
			return `${event}data: ${serialize(frame.data)}${newline}${newline}`;
		})
		.join("");
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function writeSse(res: ServerResponse, socket: Socket, response: SseResponse): Promise<void> {
	res.writeHead(200, {
		"content-type": "text/event-stream; charset=utf-8",
		"cache-control": "no-cache",
		"x-request-id": "req_test",
		...response.headers,
	});
	res.flushHeaders();
	const ending = response.ending ?? "done";
	const frames = ending === "done" ? [...response.frames, { data: "[DONE]" }] : response.frames;
	const chunks: Buffer[] = [];
	if (response.chunkBytes) {
		const bytes = Buffer.from(encodeSse(frames, response.newline), "utf8");
		for (let i = 0; i < bytes.length; i += response.chunkBytes) chunks.push(bytes.subarray(i, i + response.chunkBytes));
	} else {
		for (const frame of frames) chunks.push(Buffer.from(encodeSse([frame], response.newline), "utf8"));
	}
	for (const chunk of chunks) {
		if (socket.destroyed) return;
		res.write(chunk);
		await sleep(response.chunkDelayMs ?? 1);
	}
	switch (ending) {
		case "done":
		case "end":
			res.end();
			break;
		case "reset":
			socket.destroy();
			break;
		case "stall":
			break; // the client's abort or timeout (or close()) ends it
	}
}

/**
 * Starts a server on 127.0.0.1 with an OS-assigned port, serving `/v1/chat/completions`.
 *
 * @example
 * const server = await startOpenAIServer();
 * server.respond({ kind: "sse", frames: textReply("Hello") });
 * const model = createOpenAICompatibleModel({ baseUrl: server.baseUrl, id: "test-model" });
 */
export async function startOpenAIServer(options: TestServerOptions = {}): Promise<OpenAITestServer> {
	const queue: ScriptedResponse[] = [];
	const requests: RecordedRequest[] = [];
	const sockets = new Set<Socket>();

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
				body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {},
			});
			const response = queue.shift() ?? {
				kind: "error",
				status: 500,
				body: { error: { message: "No scripted response left", type: "server_error" } },
			};
			switch (response.kind) {
				case "reset":
					req.socket.destroy();
					return;
				case "hang":
					return;
				case "plain":
					res.writeHead(200, { "content-type": response.contentType });
					res.end(serialize(response.body));
					return;
				case "error": {
					const text = typeof response.body === "string";
					res.writeHead(response.status, {
						"content-type": text ? "text/plain" : "application/json",
						"x-request-id": "req_test",
						...response.headers,
					});
					res.end(serialize(response.body));
					return;
				}
				case "sse":
					void writeSse(res, req.socket, response);
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
		baseUrl: `http://127.0.0.1:${port}/v1`,
		requests,
		respond: (...responses) => queue.push(...responses),
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
// Chunk builders, shaped like the servers' own streams.

/** The model name the builders put in chunks. */
export const testModelId = "test-model";

interface ChunkFields {
	id?: string;
	model?: string;
	delta?: Record<string, unknown>;
	finishReason?: string | null;
	usage?: Record<string, unknown> | null;
	/** Send `choices: []` (the usage chunk after the last choice). */
	noChoices?: boolean;
}

/**
 * One `chat.completion.chunk`.
 *
 * @example
 * chunk({ delta: { content: "Hel" } });
 */
export function chunk(fields: ChunkFields = {}): SseFrame {
	return {
		data: {
			id: fields.id ?? "chatcmpl-test",
			object: "chat.completion.chunk",
			created: 1_700_000_000,
			model: fields.model ?? testModelId,
			system_fingerprint: "fp_test",
			choices: fields.noChoices
				? []
				: [{ index: 0, delta: fields.delta ?? {}, logprobs: null, finish_reason: fields.finishReason ?? null }],
			...(fields.usage !== undefined ? { usage: fields.usage } : {}),
		},
	};
}

/**
 * The first chunk of a reply: the role, no content.
 *
 * @example
 * roleChunk("chatcmpl-1");
 */
export function roleChunk(id = "chatcmpl-test"): SseFrame {
	return chunk({ id, delta: { role: "assistant", content: "" } });
}

/**
 * Content deltas, one chunk per piece.
 *
 * @example
 * textChunks(["Hel", "lo"]);
 */
export function textChunks(pieces: string[], id?: string): SseFrame[] {
	return pieces.map((content) => chunk({ ...(id ? { id } : {}), delta: { content } }));
}

/**
 * Reasoning deltas in the given field (`reasoning_content` by default, as llama.cpp and DeepSeek).
 *
 * @example
 * reasoningChunks(["Let me ", "think"], "reasoning");
 */
export function reasoningChunks(pieces: string[], field = "reasoning_content"): SseFrame[] {
	return pieces.map((text) => chunk({ delta: { content: null, [field]: text } }));
}

/** A raw tool-call delta, for quirks: any of index, id, name and arguments may be left out. */
export interface ToolCallDelta {
	index?: number;
	id?: string;
	name?: string;
	arguments?: unknown;
}

/**
 * One chunk carrying tool-call deltas, exactly as given.
 *
 * @example
 * toolCallChunk({ index: 0, id: "call_1", name: "read", arguments: "" });
 */
export function toolCallChunk(...deltas: ToolCallDelta[]): SseFrame {
	return chunk({
		delta: {
			tool_calls: deltas.map((d) => ({
				...(d.index !== undefined ? { index: d.index } : {}),
				...(d.id !== undefined ? { id: d.id, type: "function" } : {}),
				function: {
					...(d.name !== undefined ? { name: d.name } : {}),
					...(d.arguments !== undefined ? { arguments: d.arguments } : {}),
				},
			})),
		},
	});
}

/**
 * A tool call as OpenAI streams it: id and name with empty arguments, then the argument
 * fragments, each in its own chunk.
 *
 * @example
 * toolCallChunks(0, "call_1", "read", ['{"pa', 'th":"a.txt"}']);
 */
export function toolCallChunks(index: number, id: string, name: string, fragments: string[]): SseFrame[] {
	return [
		toolCallChunk({ index, id, name, arguments: "" }),
		...fragments.map((fragment) => toolCallChunk({ index, arguments: fragment })),
	];
}

/**
 * The chunk with the finish reason (and an empty delta).
 *
 * @example
 * finishChunk("tool_calls");
 */
export function finishChunk(reason: string): SseFrame {
	return chunk({ delta: {}, finishReason: reason });
}

/** Token counts in the API's shape. */
export interface UsageFields {
	prompt_tokens: number;
	completion_tokens: number;
	cached_tokens?: number;
	reasoning_tokens?: number;
}

/**
 * The usage chunk sent last when `stream_options.include_usage` is set: no choices.
 *
 * @example
 * usageChunk({ prompt_tokens: 100, completion_tokens: 20, cached_tokens: 60 });
 */
export function usageChunk(usage: UsageFields): SseFrame {
	return chunk({
		noChoices: true,
		usage: {
			prompt_tokens: usage.prompt_tokens,
			completion_tokens: usage.completion_tokens,
			total_tokens: usage.prompt_tokens + usage.completion_tokens,
			prompt_tokens_details: { cached_tokens: usage.cached_tokens ?? 0, audio_tokens: 0 },
			completion_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 },
		},
	});
}

/**
 * An OpenAI-style error body.
 *
 * @example
 * server.respond({ kind: "error", status: 401, body: errorBody("Incorrect API key provided", "invalid_request_error", "invalid_api_key") });
 */
export function errorBody(message: string, type?: string, code?: string): Record<string, unknown> {
	return { error: { message, type: type ?? null, param: null, code: code ?? null } };
}

/**
 * A complete plain-text reply with usage.
 *
 * @example
 * server.respond({ kind: "sse", frames: textReply("Hello") });
 */
export function textReply(text: string, id = "chatcmpl-text"): SseFrame[] {
	return [
		roleChunk(id),
		...textChunks([text], id),
		chunk({ id, delta: {}, finishReason: "stop" }),
		usageChunk({ prompt_tokens: 10, completion_tokens: 5 }),
	];
}
