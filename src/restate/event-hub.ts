/**
 * A small hub for sessions' live events: workers POST them (`createHttpEventSink`), listeners
 * read them as Server-Sent Events, per session or all of them. A session moves between workers
 * (a retry after a crash lands wherever the load balancer sends it), so listeners connect to
 * the hub rather than to a worker. It keeps nothing: a listener gets what arrives while it is
 * connected (a late one reads the transcript from the session's `state`). Mount its handler in
 * an existing HTTP server, or let it listen on a port of its own.
 *
 * A listener that stops reading (a frozen tab, a paused consumer) would make the hub buffer
 * every frame for it, without bound, until the hub runs out of memory and every session's
 * listeners lose their events. So a listener whose unsent frames pass `maxBufferedBytes` is
 * disconnected (and its buffer freed): it reconnects, and reads what it missed from `state`.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import { unknownKeys } from "../agent-input.js";
import type { SessionEventEnvelope, SessionEventSink } from "./session-events.js";

/**
 * A running event hub.
 *
 * @example
 * const hub: EventHub = createEventHub();
 * const url = await hub.listen(9900); // workers publish to it with createHttpEventSink(url)
 * await hub.close();
 */
export interface EventHub extends SessionEventSink {
	/** Handles `POST /publish` and `GET /events[?session=id]`; answers false for other requests (mount it in your server). */
	handle(request: IncomingMessage, response: ServerResponse): boolean;
	/** Starts listening on `host:port` (port 0: any free one); resolves with the hub's URL. */
	listen(port?: number, host?: string): Promise<string>;
	/** Ends every listener's stream and stops listening. */
	close(): Promise<void>;
}

interface Listener {
	readonly session: string | undefined;
	readonly response: ServerResponse;
}

/**
 * Options of {@link createEventHub}.
 *
 * @example
 * const options: EventHubOptions = { onEvent: (envelope) => console.log(envelope.sessionId, envelope.event.type), maxBufferedBytes: 4 << 20 };
 * const hub = createEventHub(options);
 */
export interface EventHubOptions {
	/** Sees every event the hub receives (a log, a test). */
	onEvent?: ((envelope: SessionEventEnvelope) => void) | undefined;
	/**
	 * A listener with more than this many bytes of frames not yet sent to it (it stopped reading)
	 * is disconnected (default 8 MiB).
	 */
	maxBufferedBytes?: number | undefined;
}

/** Every option of {@link EventHubOptions} (the type makes the list whole). */
const HUB_OPTIONS = Object.keys({ onEvent: true, maxBufferedBytes: true } satisfies Record<keyof EventHubOptions, true>);

/** Options the hub could not work with, or one it does not take (ignored, a misspelt `onEvents` would see nothing). */
function checkHubOptions(options: EventHubOptions): void {
	const problem = (why: string) => new TypeError(`agentchart/restate: createEventHub(options): ${why}`);
	if (typeof options !== "object" || options === null) throw problem(`options must be an object, got ${String(options)}`);
	const unknown = unknownKeys(options, HUB_OPTIONS);
	if (unknown !== undefined) throw problem(`no option ${unknown} (its options: ${HUB_OPTIONS.join(", ")})`);
	if (options.onEvent !== undefined && typeof options.onEvent !== "function") throw problem(`onEvent must be a function, got ${typeof options.onEvent}`);
	const bytes = options.maxBufferedBytes;
	if (bytes !== undefined && !(typeof bytes === "number" && Number.isFinite(bytes) && bytes >= 1)) throw problem(`maxBufferedBytes must be a number of bytes, at least 1, got ${String(bytes)}`);
}

/**
 * A new event hub (see the module comment); `options.onEvent` sees every event it receives (a
 * log, a test); `options.maxBufferedBytes` bounds what it holds for a listener that stopped reading.
 *
 * @example
 * const hub = createEventHub();
 * const url = await hub.listen(9900);
 * // workers: createAgentSessions({ ..., events: createHttpEventSink(url) })
 * // listeners: for await (const envelope of watchSession(url, "s1")) console.log(envelope.event.type);
 */
export function createEventHub(options: EventHubOptions = {}): EventHub {
	checkHubOptions(options);
	const listeners = new Set<Listener>();
	const maxBuffered = options.maxBufferedBytes ?? 8 * 1024 * 1024;
	let server: Server | undefined;

	const publish = (envelope: SessionEventEnvelope): void => {
		options.onEvent?.(envelope);
		let frame: string | undefined;
		for (const listener of listeners) {
			if (listener.session !== undefined && listener.session !== envelope.sessionId) continue;
			if (listener.response.writableLength > maxBuffered) {
				// Destroyed, not ended: an end would wait behind the frames it does not read.
				listeners.delete(listener);
				listener.response.destroy();
				continue;
			}
			frame ??= `data: ${JSON.stringify(envelope)}\n\n`;
			listener.response.write(frame);
		}
	};

	const handle = (request: IncomingMessage, response: ServerResponse): boolean => {
		const url = new URL(request.url ?? "/", "http://hub");
		if (request.method === "POST" && url.pathname === "/publish") {
			const chunks: Buffer[] = [];
			request.on("data", (chunk: Buffer) => chunks.push(chunk));
			request.on("end", () => {
				for (const line of Buffer.concat(chunks).toString("utf8").split("\n")) {
					if (line.trim() === "") continue;
					try {
						publish(JSON.parse(line) as SessionEventEnvelope);
					} catch {
						// A torn line is dropped: events are best effort.
					}
				}
				response.writeHead(204).end();
			});
			return true;
		}
		if (request.method === "GET" && url.pathname === "/events") {
			response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
			// A comment line first, so the client sees the stream open before any event.
			response.write(": connected\n\n");
			const listener: Listener = { session: url.searchParams.get("session") ?? undefined, response };
			listeners.add(listener);
			request.on("close", () => listeners.delete(listener));
			return true;
		}
		return false;
	};

	return {
		publish,
		handle,
		listen(port = 0, host = "127.0.0.1") {
			return new Promise((resolve, reject) => {
				const created = createServer((request, response) => {
					if (!handle(request, response)) response.writeHead(404).end();
				});
				server = created;
				created.once("error", reject);
				created.listen(port, host, () => {
					const address = created.address();
					resolve(`http://${host}:${typeof address === "object" && address ? address.port : port}`);
				});
			});
		},
		async close() {
			for (const listener of listeners) listener.response.end();
			listeners.clear();
			const running = server;
			if (running) await new Promise<void>((resolve) => running.close(() => resolve()));
		},
	};
}
