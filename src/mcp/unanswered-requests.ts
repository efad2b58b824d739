/**
 * Requests a Streamable HTTP server accepted and then never answers. The server answers a
 * request on the response to its POST: a JSON body, or an event stream that carries the answer.
 * A stream that ends without it (a proxy that closes idle streams, a server that crashed between
 * accepting and answering) and gave no event ids to resume from, or a `202 Accepted` with no body
 * (which the protocol allows for notifications only), leaves the SDK waiting for an answer that
 * cannot come: the call hung until the agent's tool timeout, or for ever with `toolTimeoutMs: 0`.
 * A fetch wrapped by {@link answerWatchingFetch} tells who asked which requests went unanswered.
 */

import { excerpt } from "../providers/http-error-text.js";

/** The fetch the SDK's transport takes. */
type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

type RequestId = string | number;

/** The ids of the JSON-RPC requests (not notifications, not responses) in a POST's body. */
function requestIds(init: RequestInit | undefined): RequestId[] {
	if (init?.method !== "POST" || typeof init.body !== "string") return [];
	let parsed: unknown;
	try {
		parsed = JSON.parse(init.body);
	} catch {
		return [];
	}
	const messages: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
	const ids: RequestId[] = [];
	for (const message of messages) {
		if (message === null || typeof message !== "object" || !("method" in message) || !("id" in message)) continue;
		const id = (message as { id: unknown }).id;
		if (typeof id === "string" || typeof id === "number") ids.push(id);
	}
	return ids;
}

/** The ids a message answers (a response, or a batch of them); undefined when it is not JSON. */
function answeredIds(data: string): RequestId[] | undefined {
	let parsed: unknown;
	try {
		parsed = JSON.parse(data);
	} catch {
		return undefined;
	}
	const messages: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
	return messages.flatMap((message) => {
		if (message === null || typeof message !== "object" || "method" in message || !("id" in message)) return [];
		if (!("result" in message) && !("error" in message)) return [];
		const id = (message as { id: unknown }).id;
		return typeof id === "string" || typeof id === "number" ? [id] : [];
	});
}

/**
 * Reads an event stream as it passes: which of `pending` it answers, and whether it gave an
 * event id (then the SDK resumes it from there, and the answer may still come).
 */
class AnswerScanner {
	resumable = false;
	/** The first event whose data is not JSON (the SDK drops it), to say so if no answer came. */
	unreadable: string | undefined;
	#line = "";
	#data: string[] = [];
	readonly #decoder = new TextDecoder();

	constructor(readonly pending: Set<RequestId>) {}

	push(chunk: Uint8Array | undefined): void {
		const text = chunk === undefined ? this.#decoder.decode() : this.#decoder.decode(chunk, { stream: true });
		const lines = (this.#line + text).split(/\r\n|\r|\n/);
		this.#line = lines.pop() ?? "";
		for (const line of lines) this.#read(line);
		if (chunk === undefined) {
			if (this.#line !== "") this.#read(this.#line);
			this.#read("");
		}
	}

	#read(line: string): void {
		if (line === "") {
			if (this.#data.length > 0) {
				const data = this.#data.join("\n");
				const ids = answeredIds(data);
				if (ids === undefined) this.unreadable ??= data;
				else for (const id of ids) this.pending.delete(id);
			}
			this.#data = [];
			return;
		}
		const colon = line.indexOf(":");
		const field = colon === -1 ? line : line.slice(0, colon);
		const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
		if (field === "data") this.#data.push(value);
		else if (field === "id" && value !== "") this.resumable = true;
	}
}

/**
 * Wraps `base` so that `onUnanswered(id, why)` is called for each request of a POST that the
 * server accepted and will not answer there: a `202 Accepted`, or an event stream that ended
 * without the answer and without an event id to resume it from. The response is passed on
 * unchanged (the stream as it comes).
 *
 * @example
 * new StreamableHTTPClientTransport(url, { fetch: answerWatchingFetch((id, why) => failRequest(id, why)) });
 */
export function answerWatchingFetch(onUnanswered: (id: RequestId, why: string) => void, base: Fetch = fetch): Fetch {
	return async (input, init) => {
		const response = await base(input, init);
		const ids = requestIds(init);
		if (ids.length === 0 || !response.ok) return response;
		if (response.status === 202) {
			for (const id of ids) onUnanswered(id, "accepted the request (202) without answering it");
			return response;
		}
		const type = (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
		if (type !== "text/event-stream" || !response.body) return response;
		const scanner = new AnswerScanner(new Set(ids));
		const body = response.body.pipeThrough(
			new TransformStream<Uint8Array, Uint8Array>({
				transform(chunk, controller) {
					controller.enqueue(chunk);
					scanner.push(chunk);
				},
				flush() {
					scanner.push(undefined);
					if (scanner.resumable) return;
					const why = scanner.unreadable === undefined ? "ended its response without answering it" : `ended its response without a readable answer (an event's data is not JSON: ${excerpt(scanner.unreadable, 200)})`;
					for (const id of scanner.pending) onUnanswered(id, why);
				},
			}),
		);
		return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
	};
}
