/**
 * The proxy's wire protocol: what one `data:` line of the server's event stream carries, and
 * how a line is read and checked.
 *
 * A proxy server relays a provider's {@link AssistantMessageEvent}s without their `partial`
 * message, which would otherwise resend the whole reply with every token. Everything else of
 * the event travels, plus what the client cannot infer: a tool call's id and name at
 * `toolcall_start`, a block's signature at its end, the usage at the end of the reply.
 */
import type { StopReason, Usage } from "../types/content.js";
import { excerpt } from "./http-error-text.js";

/**
 * One event of the proxy protocol, as the server sends it: an `AssistantMessageEvent` with its
 * `partial` message stripped. The same shape as pi-agent-core 0.73.1's.
 *
 * @example
 * const line = `data: ${JSON.stringify({ type: "text_delta", contentIndex: 0, delta: "Hel" } satisfies ProxyAssistantMessageEvent)}\n\n`;
 */
export type ProxyAssistantMessageEvent =
	| { type: "start" }
	| { type: "text_start"; contentIndex: number }
	| { type: "text_delta"; contentIndex: number; delta: string }
	| { type: "text_end"; contentIndex: number; contentSignature?: string | undefined }
	| { type: "thinking_start"; contentIndex: number }
	| { type: "thinking_delta"; contentIndex: number; delta: string }
	/**
	 * `redacted` (agentchart's, beside pi's fields; pi's client ignores it): the block is
	 * redacted reasoning, its opaque payload in `contentSignature`, sent back as such.
	 */
	| { type: "thinking_end"; contentIndex: number; contentSignature?: string | undefined; redacted?: boolean | undefined }
	| { type: "toolcall_start"; contentIndex: number; id: string; toolName: string }
	/** `delta` is a raw fragment of the arguments' JSON text. */
	| { type: "toolcall_delta"; contentIndex: number; delta: string }
	| { type: "toolcall_end"; contentIndex: number }
	| { type: "done"; reason: Extract<StopReason, "stop" | "length" | "toolUse">; usage: Usage }
	| { type: "error"; reason: Extract<StopReason, "aborted" | "error">; errorMessage?: string | undefined; usage: Usage };

/**
 * A failure of the proxy stream itself (not of the model behind it), whose message is
 * already meant for people.
 *
 * @example
 * throw new ProxyStreamError("Malformed event 3 in the proxy stream: not valid JSON (...)");
 */
export class ProxyStreamError extends Error {
	override name = "ProxyStreamError";
}

type ProxyEventType = ProxyAssistantMessageEvent["type"];

const doneReasons: readonly string[] = ["stop", "length", "toolUse"] satisfies StopReason[];
const errorReasons: readonly string[] = ["aborted", "error"] satisfies StopReason[];

/** The fields each event type needs beyond `type`, checked before the event is applied. */
const requiredFields: Record<ProxyEventType, readonly ("contentIndex" | "delta" | "id" | "toolName")[]> = {
	start: [],
	text_start: ["contentIndex"],
	text_delta: ["contentIndex", "delta"],
	text_end: ["contentIndex"],
	thinking_start: ["contentIndex"],
	thinking_delta: ["contentIndex", "delta"],
	thinking_end: ["contentIndex"],
	toolcall_start: ["contentIndex", "id", "toolName"],
	toolcall_delta: ["contentIndex", "delta"],
	toolcall_end: ["contentIndex"],
	done: [],
	error: [],
};

function isKnownType(type: string): type is ProxyEventType {
	return Object.hasOwn(requiredFields, type);
}

function malformed(eventNumber: number, detail: string): ProxyStreamError {
	return new ProxyStreamError(`Malformed event ${eventNumber} in the proxy stream: ${detail}`);
}

function fieldProblem(record: Record<string, unknown>, field: string): string | undefined {
	const value = record[field];
	if (field === "contentIndex") {
		return Number.isInteger(value) && (value as number) >= 0 ? undefined : "a non-negative integer";
	}
	// A tool call without an id or a name cannot be answered or run, and sent back as "" it makes
	// the API refuse every later request of the session.
	if (field === "id" || field === "toolName") return typeof value === "string" && value !== "" ? undefined : "a non-empty string";
	return typeof value === "string" ? undefined : "a string";
}

/**
 * Reads the payload of one `data:` line. Returns `undefined` for an event type this client
 * does not know (a newer server may send more), and throws a {@link ProxyStreamError} that
 * names the event's number for anything that is not a well-formed event.
 *
 * @example
 * parseProxyEvent('{"type":"text_delta","contentIndex":0,"delta":"Hi"}', 2); // { type: "text_delta", ... }
 * parseProxyEvent('{"type":"text_delta"', 2); // throws "Malformed event 2 in the proxy stream: not valid JSON (...)"
 */
export function parseProxyEvent(data: string, eventNumber: number): ProxyAssistantMessageEvent | undefined {
	let value: unknown;
	try {
		value = JSON.parse(data);
	} catch (error) {
		const reason = error instanceof Error ? error.message : String(error);
		throw malformed(eventNumber, `not valid JSON (${reason}): ${excerpt(data, 120)}`);
	}
	if (value === null || typeof value !== "object" || Array.isArray(value)) {
		throw malformed(eventNumber, `expected an object with a "type", got ${excerpt(data, 120)}`);
	}
	const record = value as Record<string, unknown>;
	const type = record["type"];
	if (typeof type !== "string") throw malformed(eventNumber, `no "type" field: ${excerpt(data, 120)}`);
	if (!isKnownType(type)) return undefined;
	for (const field of requiredFields[type]) {
		const problem = fieldProblem(record, field);
		if (problem) throw malformed(eventNumber, `${type} needs "${field}" to be ${problem}: ${excerpt(data, 120)}`);
	}
	const reason = record["reason"];
	if (type === "done" && !(typeof reason === "string" && doneReasons.includes(reason))) {
		throw malformed(eventNumber, `done needs "reason" to be one of ${doneReasons.join(", ")}: ${excerpt(data, 120)}`);
	}
	// A failure is a failure whatever the server called it: keep its message rather than
	// replacing it with a complaint about the reason field.
	if (type === "error" && !(typeof reason === "string" && errorReasons.includes(reason))) record["reason"] = "error";
	return record as ProxyAssistantMessageEvent;
}
