/**
 * A local stand-in for a proxy server in front of the LLM providers: a node:http server on
 * 127.0.0.1 that records each `POST /api/stream` and answers with the next scripted response,
 * byte for byte as pi's proxy protocol streams (`data: <event JSON>` lines with the `partial`
 * stripped, blank-line separators).
 *
 * Responses can be split into arbitrary byte chunks (including through a multi-byte
 * character), written with other line endings, cut short, reset, left hanging before or after
 * the headers, or answered with an error status and any body, so every path of a client runs
 * without a network or a provider.
 */
// @ts-nocheck

import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { ProxyAssistantMessageEvent } from "../../src/providers/proxy.js";
import type { Usage } from "../../src/types/content.js";

/** One line of the stream: an event (sent as `data: <JSON>`), or text written exactly as given. */
export type ProxyFrame = ProxyAssistantMessageEvent | { raw: string };

/** How a streamed response ends after its frames. */
export type StreamEnding =
	/** Close the body normally. */
	| "end"
	/** Destroy the socket: the client sees the connection drop mid-body. */
	| "reset"
	/** Keep the connection open and send nothing more, until the client gives up. */
	| "stall";

/** A streamed 200 response. */
export interface StreamResponse {
	kind: "stream";
	frames: ProxyFrame[];
	/** Split the body into chunks of this many bytes (default: one chunk per frame). */
	chunkBytes?: number;
	/** Pause between chunks, in milliseconds (default 1). */
	chunkDelayMs?: number;
	/** Default "end". */
	ending?: StreamEnding;
	/** What ends a line (default "\n"). */
	newline?: "\n" | "\r\n" | "\r";
	/** Leave out the blank line after each event (default false). */
	noBlankLines?: boolean;
	/** Default "text/event-stream". */
	contentType?: string;
}

/** An answer with a complete body: JSON unless `body` is a string (then sent as is). */
export interface PlainResponse {
	kind: "plain";
	status: number;
	body: unknown;
	/** Default: application/json for objects, text/plain for strings. */
	contentType?: string;
}

/** Drop the connection before sending any response. */
export interface ResetResponse {
	kind: "reset";
}

/** Accept the request and never send the headers. */
export interface HangResponse {
	kind: "hang";
}

export type ScriptedResponse = StreamResponse | PlainResponse | ResetResponse | HangResponse;

/** What the server received. */
export interface RecordedRequest {
	method: string;
	url: string;
	headers: IncomingHttpHeaders;
	/** The body exactly as received. */
	rawBody: string;
	/** The body parsed as JSON. */
	body: Record<string, unknown>;
	/** Set once the connection of this request closed (the client hung up, or the answer ended). */
	closed: boolean;
	/** Set once the socket that carried this request closed: a kept-alive connection stays open after the answer. */
	connectionClosed: boolean;
}

export interface ProxyTestServer {
	/** The `proxyUrl` to give the client, e.g. "http://127.0.0.1:51234". */
	url: string;
	/** Every request received, in order. */
	requests: RecordedRequest[];
	/** Queues responses, one per future request. */
	respond(...responses: ScriptedResponse[]): void;
	/** Forgets recorded requests and unused responses, between tests. */
	reset(): void;
	close(): Promise<void>;
}

/**
 * Encodes frames as a proxy server writes them.
 *
 * @example
 * encodeFrames([{ type: "start" }]); // 'data: {"type":"start"}\n\n'
 */
export function encodeFrames(frames: ProxyFrame[], newline: "\n" | "\r\n" | "\r" = "\n", blankLines = true): string {
	return frames
		.map((frame) => ("raw" in frame ? frame.raw : `data: ${JSON.stringify(frame)}${newline}${blankLines ? newline : ""}`))
		.join("");
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function writeStream(res: ServerResponse, socket: Socket, response: StreamResponse): Promise<void> {
	res.writeHead(200, { "content-type": response.contentType ?? "text/event-stream", "cache-control": "no-cache" });
	res.flushHeaders();
	const chunks: Buffer[] = [];
	if (response.chunkBytes) {
		const bytes = Buffer.from(encodeFrames(response.frames, response.newline, !response.noBlankLines), "utf8");
		for (let i = 0; i < bytes.length; i += response.chunkBytes) chunks.push(bytes.subarray(i, i + response.chunkBytes));
	} else {
		for (const frame of response.frames) chunks.push(Buffer.from(encodeFrames([frame], response.newline, !response.noBlankLines), "utf8"));
	}
	for (const chunk of chunks) {
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
			break;
	}
}

/**
 * Starts a server on 127.0.0.1 with an OS-assigned port, serving `POST /api/stream`.
 *
 * @example
 * const server = await startProxyServer();
 * server.respond({ kind: "stream", frames: textReply("Hello") });
 * const stream = streamProxy(model, context, { proxyUrl: server.url, authToken: "t" });
 */
export async function startProxyServer(): Promise<ProxyTestServer> {
	const queue: ScriptedResponse[] = [];
	const requests: RecordedRequest[] = [];
	const sockets = new Set<Socket>();

	const server = createServer((req, res) => {
		const parts: Buffer[] = [];
		req.on("data", (part: Buffer) => parts.push(part));
		req.on("end", () => {
			const rawBody = Buffer.concat(parts).toString("utf8");
			const recorded: RecordedRequest = {
				method: req.method ?? "",
				url: req.url ?? "",
				headers: req.headers,
				rawBody,
				body: rawBody ? (JSON.parse(rawBody) as Record<string, unknown>) : {},
				closed: false,
				connectionClosed: req.socket.destroyed,
			};
			requests.push(recorded);
			res.on("close", () => {
				recorded.closed = true;
			});
			req.socket.once("close", () => {
				recorded.connectionClosed = true;
			});
			const response: ScriptedResponse = queue.shift() ?? { kind: "plain", status: 500, body: { error: "No scripted response left" } };
			switch (response.kind) {
				case "reset":
					req.socket.destroy();
					return;
				case "hang":
					return;
				case "plain": {
					const text = typeof response.body === "string";
					res.writeHead(response.status, { "content-type": response.contentType ?? (text ? "text/plain" : "application/json") });
					res.end(text ? (response.body as string) : JSON.stringify(response.body));
					return;
				}
				case "stream":
					void writeStream(res, req.socket, response);
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
		url: `http://127.0.0.1:${port}`,
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
// Event builders, shaped like what a pi proxy server relays from a provider.

/**
 * Usage as a provider reports it, with a cost.
 *
 * @example
 * usage(100, 20); // { input: 100, output: 20, totalTokens: 120, cost: {...} }
 */
export function usage(input: number, output: number): Usage {
	return {
		input,
		output,
		cacheRead: 0,
		cacheWrite: 0,
		totalTokens: input + output,
		cost: { input: input * 1e-6, output: output * 5e-6, cacheRead: 0, cacheWrite: 0, total: input * 1e-6 + output * 5e-6 },
	};
}

/**
 * A text block at `contentIndex`, streamed in the given pieces.
 *
 * @example
 * textBlock(0, ["Hel", "lo"]);
 */
export function textBlock(contentIndex: number, pieces: string[], contentSignature?: string): ProxyFrame[] {
	return [
		{ type: "text_start", contentIndex },
		...pieces.map((delta): ProxyFrame => ({ type: "text_delta", contentIndex, delta })),
		{ type: "text_end", contentIndex, ...(contentSignature !== undefined ? { contentSignature } : {}) },
	];
}

/**
 * A thinking block at `contentIndex`, streamed in the given pieces.
 *
 * @example
 * thinkingBlock(0, ["Let me ", "think"], "sig_1");
 */
export function thinkingBlock(contentIndex: number, pieces: string[], contentSignature?: string): ProxyFrame[] {
	return [
		{ type: "thinking_start", contentIndex },
		...pieces.map((delta): ProxyFrame => ({ type: "thinking_delta", contentIndex, delta })),
		{ type: "thinking_end", contentIndex, ...(contentSignature !== undefined ? { contentSignature } : {}) },
	];
}

/**
 * A tool call at `contentIndex`, its arguments' JSON streamed in the given fragments.
 *
 * @example
 * toolCallBlock(1, "call_1", "read", ['{"pa', 'th":"a.txt"}']);
 */
export function toolCallBlock(contentIndex: number, id: string, toolName: string, fragments: string[]): ProxyFrame[] {
	return [
		{ type: "toolcall_start", contentIndex, id, toolName },
		...fragments.map((delta): ProxyFrame => ({ type: "toolcall_delta", contentIndex, delta })),
		{ type: "toolcall_end", contentIndex },
	];
}

/**
 * A complete text reply.
 *
 * @example
 * server.respond({ kind: "stream", frames: textReply("Hello") });
 */
export function textReply(text: string): ProxyFrame[] {
	return [{ type: "start" }, ...textBlock(0, [text]), { type: "done", reason: "stop", usage: usage(10, 5) }];
}
